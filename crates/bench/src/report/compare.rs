//! The compare table: per metric, the median of each side over the rounds, the min-max spread,
//! and the ratio of medians b/a.

use std::fmt::Write;

/// One round's figures for one server.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Figures {
    /// Requests per second.
    pub rps: f64,
    /// Average latency, ms.
    pub avg: f64,
    /// p50, ms.
    pub p50: f64,
    /// p99, ms.
    pub p99: f64,
    /// p99.9, ms.
    pub p999: f64,
}

/// Median of a non-empty slice (mean of the middle two for even lengths); 0 for empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => s[n / 2],
        _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The table for rounds of `a` and `b` (same length).
pub fn table(a_name: &str, b_name: &str, a: &[Figures], b: &[Figures]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} rounds, alternating a and b (a = {a_name}, b = {b_name})", a.len());
    let _ = writeln!(
        o,
        "{:<10} {:>12} {:>25} {:>12} {:>25} {:>8}",
        "metric", "a median", "a min-max", "b median", "b min-max", "b/a"
    );
    let metrics: [(&str, fn(&Figures) -> f64, usize); 5] = [
        ("rps", |f| f.rps, 1),
        ("avg ms", |f| f.avg, 3),
        ("p50 ms", |f| f.p50, 3),
        ("p99 ms", |f| f.p99, 3),
        ("p99.9 ms", |f| f.p999, 3),
    ];
    for (name, get, prec) in metrics {
        let av: Vec<f64> = a.iter().map(get).collect();
        let bv: Vec<f64> = b.iter().map(get).collect();
        let (am, bm) = (median(&av), median(&bv));
        let span = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("{lo:.prec$}-{hi:.prec$}")
        };
        let ratio = if am > 0.0 { format!("{:.3}", bm / am) } else { "n/a".into() };
        let _ = writeln!(o, "{name:<10} {am:>12.prec$} {:>25} {bm:>12.prec$} {:>25} {ratio:>8}", span(&av), span(&bv));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn golden_table() {
        let f = |rps| Figures { rps, avg: 0.5, p50: 0.4, p99: 1.0, p999: 2.0 };
        let t = table("x:1", "y:2", &[f(100.0), f(120.0), f(110.0)], &[f(200.0), f(220.0), f(210.0)]);
        let want = "3 rounds, alternating a and b (a = x:1, b = y:2)
metric         a median                 a min-max     b median                 b min-max      b/a
rps               110.0               100.0-120.0        210.0               200.0-220.0    1.909
avg ms            0.500               0.500-0.500        0.500               0.500-0.500    1.000
p50 ms            0.400               0.400-0.400        0.400               0.400-0.400    1.000
p99 ms            1.000               1.000-1.000        1.000               1.000-1.000    1.000
p99.9 ms          2.000               2.000-2.000        2.000               2.000-2.000    1.000
";
        assert_eq!(t, want, "\n{t}");
    }
}
