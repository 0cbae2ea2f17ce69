//! The compare table: per metric, the median of each side over the rounds, the min-max spread,
//! the ratio of medians b/a, and a 90% interval of the median of the rounds' own b/a
//! ratios (distribution-free, from order statistics: `median_interval`), so that a ratio
//! can be told from the machine's noise.

use std::fmt::Write;

/// One round's figures for one server.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
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

/// A distribution-free confidence interval of the median: the k-th smallest and k-th
/// largest of `values`, with the largest k for which the chance that the true median
/// lies outside (two binomial tails at p = 1/2) stays under 1 - `confidence`. None with
/// too few values (under 5 at 90%). The same rule as scripts/bench/driver.py's.
pub fn median_interval(values: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let mut s: Vec<f64> = values.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    let mut best = None;
    let mut tail = 0.0;
    // C(n, k - 1) / 2^n, computed as a running product to stay in range.
    let mut comb = 1.0f64;
    for k in 1..=n / 2 {
        if k > 1 {
            comb = comb * (n - (k - 2)) as f64 / (k - 1) as f64;
        }
        tail += comb / 2f64.powi(n as i32);
        if 1.0 - 2.0 * tail < confidence {
            break;
        }
        best = Some(k);
    }
    best.map(|k| (s[k - 1], s[n - k]))
}

/// One metric over the rounds: each side's median, min and max, the ratio of medians
/// b/a, and the 90% interval of the median of the rounds' own b/a ratios.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricSummary {
    /// `rps`, `avg ms`, `p50 ms`, `p99 ms` or `p99.9 ms`.
    pub metric: &'static str,
    /// Decimals the table prints.
    #[serde(skip)]
    pub precision: usize,
    pub a_median: f64,
    pub a_min: f64,
    pub a_max: f64,
    pub b_median: f64,
    pub b_min: f64,
    pub b_max: f64,
    /// None when a's median is 0.
    pub b_over_a: Option<f64>,
    /// None under 5 rounds.
    pub ci90: Option<(f64, f64)>,
}

/// A metric: its name, how a round's figures give it, the decimals the table prints.
type Metric = (&'static str, fn(&Figures) -> f64, usize);

/// The summaries of every metric for rounds of `a` and `b` (same length).
pub fn summarize(a: &[Figures], b: &[Figures]) -> Vec<MetricSummary> {
    let metrics: [Metric; 5] = [
        ("rps", |f| f.rps, 1),
        ("avg ms", |f| f.avg, 3),
        ("p50 ms", |f| f.p50, 3),
        ("p99 ms", |f| f.p99, 3),
        ("p99.9 ms", |f| f.p999, 3),
    ];
    let lo = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    metrics
        .into_iter()
        .map(|(metric, get, precision)| {
            let av: Vec<f64> = a.iter().map(get).collect();
            let bv: Vec<f64> = b.iter().map(get).collect();
            let (am, bm) = (median(&av), median(&bv));
            // The rounds' own ratios (a round runs a and b back to back).
            let rounds: Vec<f64> = av.iter().zip(&bv).filter(|(x, _)| **x > 0.0).map(|(x, y)| y / x).collect();
            MetricSummary {
                metric,
                precision,
                a_median: am,
                a_min: lo(&av),
                a_max: hi(&av),
                b_median: bm,
                b_min: lo(&bv),
                b_max: hi(&bv),
                b_over_a: (am > 0.0).then(|| bm / am),
                ci90: median_interval(&rounds, 0.90),
            }
        })
        .collect()
}

/// The table for rounds of `a` and `b` (same length).
pub fn table(a_name: &str, b_name: &str, a: &[Figures], b: &[Figures]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} rounds, alternating a and b (a = {a_name}, b = {b_name})", a.len());
    let _ = writeln!(
        o,
        "{:<10} {:>12} {:>25} {:>12} {:>25} {:>8} {:>15}",
        "metric", "a median", "a min-max", "b median", "b min-max", "b/a", "90% CI"
    );
    for m in summarize(a, b) {
        let prec = m.precision;
        let ratio = m.b_over_a.map_or("n/a".into(), |r| format!("{r:.3}"));
        let ci = m.ci90.map_or("n/a".into(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"));
        let a_span = format!("{:.prec$}-{:.prec$}", m.a_min, m.a_max);
        let b_span = format!("{:.prec$}-{:.prec$}", m.b_min, m.b_max);
        let _ = writeln!(
            o,
            "{:<10} {:>12.prec$} {a_span:>25} {:>12.prec$} {b_span:>25} {ratio:>8} {ci:>15}",
            m.metric, m.a_median, m.b_median
        );
    }
    o
}

/// The CSV header of `--csv`.
pub const CSV_HEADER: &str = "test,metric,a_median,a_min,a_max,b_median,b_min,b_max,b_over_a,ci90_low,ci90_high";

/// CSV rows of one test (no header); empty fields where a value does not exist.
pub fn csv(test: &str, a: &[Figures], b: &[Figures]) -> String {
    let mut o = String::new();
    let quoted = format!("\"{}\"", test.replace('"', "\"\""));
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x:.6}"));
    for m in summarize(a, b) {
        let _ = writeln!(
            o,
            "{quoted},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{},{},{}",
            m.metric,
            m.a_median,
            m.a_min,
            m.a_max,
            m.b_median,
            m.b_min,
            m.b_max,
            opt(m.b_over_a),
            opt(m.ci90.map(|c| c.0)),
            opt(m.ci90.map(|c| c.1))
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_interval_takes_the_widest_k_that_keeps_the_confidence() {
        // Under 5 values there is no 90% interval; with 5, the extremes (coverage
        // 1 - 2/32 = 0.9375); with 10, the 2nd and 9th (0.979; the 3rd and 8th give 0.891).
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0], 0.9), None);
        assert_eq!(median_interval(&[5.0, 1.0, 3.0, 2.0, 4.0], 0.9), Some((1.0, 5.0)));
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_interval(&ten, 0.9), Some((2.0, 9.0)));
    }

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
        // Three rounds: too few for a 90% interval.
        let want = "3 rounds, alternating a and b (a = x:1, b = y:2)
metric         a median                 a min-max     b median                 b min-max      b/a          90% CI
rps               110.0               100.0-120.0        210.0               200.0-220.0    1.909             n/a
avg ms            0.500               0.500-0.500        0.500               0.500-0.500    1.000             n/a
p50 ms            0.400               0.400-0.400        0.400               0.400-0.400    1.000             n/a
p99 ms            1.000               1.000-1.000        1.000               1.000-1.000    1.000             n/a
p99.9 ms          2.000               2.000-2.000        2.000               2.000-2.000    1.000             n/a
";
        assert_eq!(t, want, "\n{t}");
        // Five rounds: the extremes of the rounds' ratios.
        let a: Vec<Figures> = [100.0, 100.0, 100.0, 100.0, 100.0].iter().map(|&r| f(r)).collect();
        let b: Vec<Figures> = [190.0, 200.0, 210.0, 180.0, 220.0].iter().map(|&r| f(r)).collect();
        let t = table("x:1", "y:2", &a, &b);
        assert!(t.lines().nth(2).is_some_and(|l| l.ends_with("2.000     1.800-2.200")), "\n{t}");
    }
}
