//! `--report FILE.html` (issue 25): a self-contained page a person reads. No script and
//! no network: the charts are inline SVG drawn here. It holds the run's configuration,
//! the server's version and persistence settings, the latency percentile spectrum of
//! each command kind (HdrHistogram's style: the percentile on a log scale of 1/(1-p),
//! the latency on a log scale), the per-second throughput and p50/p99/p99.9 timeline,
//! and the client's own CPU use and time waiting for a CPU per thread.
//!
//! memtier, ycsb and redis-benchmark modes write one (`render`; redis-benchmark mode's
//! has each test's spectrum and no timeline), compare its own side by side
//! (`render_compare`).

use std::fmt::Write;

use hdrhistogram::Histogram;

use crate::stats::{cpu::ThreadCpu, Second};

/// What a page shows.
pub struct Page<'a> {
    /// The heading, e.g. `basalt-bench memtier against 127.0.0.1:6379`.
    pub title: String,
    /// The run's configuration, as name and value.
    pub config: Vec<(String, String)>,
    /// The server's description (name and version, persistence), when it could be read.
    pub server: Vec<(String, String)>,
    /// Latency histograms (us) by command kind, e.g. ("SET", hist).
    pub kinds: Vec<(String, &'a Histogram<u64>)>,
    /// The per-second timeline of all kinds together.
    pub seconds: &'a [Second],
    /// The client's threads.
    pub cpu: &'a [ThreadCpu],
    /// Latencies count from the intended send time (open loop).
    pub open_loop: bool,
}

/// The percentiles the spectrum plots: 1 - 10^(-k/10) for k = 0..=50 (0% to 99.999%).
pub const SPECTRUM_STEPS: usize = 51;

const W: f64 = 720.0;
const H: f64 = 260.0;
const PAD: f64 = 48.0;
/// The left margin: room for the tick labels and the rotated axis label.
const LEFT: f64 = 84.0;
const COLORS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A polyline of `points` (already in pixels).
fn polyline(points: &[(f64, f64)], color: &str, name: &str) -> String {
    let mut p = String::new();
    for (x, y) in points {
        let _ = write!(p, "{x:.1},{y:.1} ");
    }
    format!(
        "<polyline class=\"series\" data-name=\"{}\" data-points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
        esc(name),
        points.len(),
        p.trim_end()
    )
}

/// An SVG chart: axes, labels, and one polyline per series of (x, y) in data units,
/// mapped linearly (the caller takes logarithms where it wants a log scale).
fn chart(id: &str, title: &str, x_label: &str, y_label: &str, series: &[(String, Vec<(f64, f64)>)], x_ticks: &[(f64, String)], y_ticks: &[(f64, String)]) -> String {
    // The ranges cover every point and every tick.
    let xs = series.iter().flat_map(|s| s.1.iter().map(|p| p.0)).chain(x_ticks.iter().map(|t| t.0));
    let ys = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).chain(y_ticks.iter().map(|t| t.0)).filter(|y| y.is_finite());
    let (mut x0, mut x1) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (mut y0, mut y1) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if x0 > x1 {
        (x0, x1) = (0.0, 1.0);
    } else if x0 == x1 {
        x1 = x0 + 1.0;
    }
    if y0 > y1 {
        (y0, y1) = (0.0, 1.0);
    } else if y0 == y1 {
        y1 = y0 + 1.0;
    }
    let px = |x: f64| LEFT + (x - x0) / (x1 - x0) * (W - LEFT - PAD);
    let py = |y: f64| H - PAD + -(y - y0) / (y1 - y0) * (H - 2.0 * PAD);
    let mut s = format!(
        "<svg id=\"{id}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\">\n<text x=\"{}\" y=\"16\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n",
        W / 2.0,
        esc(title)
    );
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/><line x1=\"{LEFT}\" y1=\"{PAD}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"#444\"/>",
        H - PAD,
        W - PAD,
        H - PAD,
        H - PAD
    );
    for (x, label) in x_ticks {
        let _ = writeln!(s, "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>", px(*x), H - PAD + 16.0, esc(label));
    }
    for (y, label) in y_ticks {
        let _ = writeln!(s, "<text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>", LEFT - 4.0, py(*y) + 4.0, esc(label));
        let _ = writeln!(s, "<line x1=\"{LEFT}\" y1=\"{0:.1}\" x2=\"{1}\" y2=\"{0:.1}\" stroke=\"#ddd\"/>", py(*y), W - PAD);
    }
    let _ = writeln!(s, "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>", W / 2.0, H - 8.0, esc(x_label));
    let _ = writeln!(s, "<text x=\"12\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">{}</text>", H / 2.0, H / 2.0, esc(y_label));
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mapped: Vec<(f64, f64)> = pts.iter().filter(|p| p.1.is_finite()).map(|&(x, y)| (px(x), py(y))).collect();
        s.push_str(&polyline(&mapped, color, name));
        let _ = writeln!(s, "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{color}\">{}</text>", W - PAD - 90.0, PAD + 14.0 * i as f64, esc(name));
    }
    s.push_str("</svg>\n");
    s
}

/// Latency (us) to the log10 of milliseconds, with a floor of 1 us.
fn log_ms(us: u64) -> f64 {
    (us.max(1) as f64 / 1000.0).log10()
}

fn latency_ticks(max_us: u64) -> Vec<(f64, String)> {
    let mut t = Vec::new();
    let mut ms = 0.001;
    while ms <= (max_us.max(1) as f64 / 1000.0) * 10.0 && t.len() < 9 {
        t.push((ms.log10(), if ms < 1.0 { format!("{ms} ms") } else { format!("{ms:.0} ms") }));
        ms *= 10.0;
    }
    t
}

fn spectrum(kinds: &[(String, &Histogram<u64>)]) -> String {
    let mut series = Vec::new();
    let mut max_us = 1;
    for (name, h) in kinds {
        if h.is_empty() {
            continue;
        }
        max_us = max_us.max(h.max());
        let pts = (0..SPECTRUM_STEPS)
            .map(|k| {
                let q = 1.0 - 10f64.powf(-(k as f64) / 10.0);
                (k as f64 / 10.0, log_ms(h.value_at_quantile(q)))
            })
            .collect();
        series.push((name.clone(), pts));
    }
    let x_ticks: Vec<(f64, String)> = ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]
        .iter()
        .enumerate()
        .map(|(i, l)| (i as f64, (*l).to_string()))
        .collect();
    chart("spectrum", "Latency by percentile", "percentile", "latency (log)", &series, &x_ticks, &latency_ticks(max_us))
}

fn timeline(seconds: &[Second]) -> (String, String) {
    let tput: Vec<(f64, f64)> = seconds.iter().enumerate().map(|(i, s)| (i as f64 + 1.0, s.count as f64)).collect();
    let max_ops = tput.iter().map(|p| p.1).fold(0.0, f64::max);
    // A round step (1, 2 or 5 times a power of ten) giving about four grid lines.
    let raw = (max_ops / 4.0).max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw);
    let y_ticks: Vec<(f64, String)> = (0..=4).map(|i| (i as f64 * step, format!("{:.0}", i as f64 * step))).take_while(|t| t.0 <= max_ops + step).collect();
    let n = seconds.len().max(1);
    let x_ticks: Vec<(f64, String)> = (1..=n).step_by(n.div_ceil(10)).map(|s| (s as f64, format!("{s}s"))).collect();
    let a = chart("throughput", "Throughput per second", "second", "requests", &[("requests/s".into(), tput)], &x_ticks, &y_ticks);
    let mut lat = Vec::new();
    let mut max_us = 1;
    for (name, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
        let pts = seconds
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let v = if s.hist.is_empty() { f64::NAN } else { log_ms(s.hist.value_at_quantile(q)) };
                max_us = max_us.max(s.hist.max());
                (i as f64 + 1.0, v)
            })
            .collect();
        lat.push((name.to_string(), pts));
    }
    let b = chart("latency-timeline", "Latency per second", "second", "latency (log)", &lat, &x_ticks, &latency_ticks(max_us));
    (a, b)
}

fn table(rows: &[(String, String)]) -> String {
    let mut s = String::from("<table>\n");
    for (k, v) in rows {
        let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    s.push_str("</table>\n");
    s
}

/// The page's head and heading.
fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}</title>\n<style>body{{font-family:sans-serif;margin:24px;max-width:800px}}table{{border-collapse:collapse;margin:8px 0 16px}}th,td{{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}}svg{{display:block;margin:12px 0}}</style></head><body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    )
}

/// One test of a comparison: its title, each metric's summary, and the latency
/// histograms of all its rounds on a and on b.
pub struct CompareTest<'a> {
    pub title: String,
    pub summary: Vec<crate::report::compare::MetricSummary>,
    pub a: &'a Histogram<u64>,
    pub b: &'a Histogram<u64>,
}

/// The page of `compare`: both servers, then per test the medians side by side with
/// the ratio b/a and its 90% interval, and both servers' latency spectra in one chart.
pub fn render_compare(title: &str, servers: &[(String, String)], rounds: usize, tests: &[CompareTest<'_>]) -> String {
    let mut s = head(title);
    s.push_str("<h2>Servers</h2>\n");
    s.push_str(&table(servers));
    let _ = writeln!(s, "<p>{rounds} rounds asked, alternating a and b.</p>");
    for t in tests {
        let _ = writeln!(s, "<h2>{}</h2>", esc(&t.title));
        s.push_str("<table>\n<tr><th>metric</th><th>a median</th><th>a min-max</th><th>b median</th><th>b min-max</th><th>b/a</th><th>90% interval of b/a</th></tr>\n");
        for m in &t.summary {
            let p = m.precision;
            let ratio = m.b_over_a.map_or("n/a".into(), |r| format!("{r:.3}"));
            let ci = m.ci90.map_or("n/a (under 5 rounds)".into(), |(lo, hi)| format!("{lo:.3}-{hi:.3}"));
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{:.p$}</td><td>{:.p$}-{:.p$}</td><td>{:.p$}</td><td>{:.p$}-{:.p$}</td><td>{ratio}</td><td>{ci}</td></tr>",
                esc(m.metric),
                m.a_median,
                m.a_min,
                m.a_max,
                m.b_median,
                m.b_min,
                m.b_max
            );
        }
        s.push_str("</table>\n");
        s.push_str(&spectrum(&[("a".to_string(), t.a), ("b".to_string(), t.b)]));
    }
    s.push_str("</body></html>\n");
    s
}

/// The whole page.
pub fn render(p: &Page<'_>) -> String {
    let mut s = head(&p.title);
    s.push_str("<h2>Server</h2>\n");
    if p.server.is_empty() {
        s.push_str("<p>Its INFO and CONFIG could not be read.</p>\n");
    } else {
        s.push_str(&table(&p.server));
    }
    s.push_str("<h2>Configuration</h2>\n");
    s.push_str(&table(&p.config));
    s.push_str("<h2>Latency</h2>\n");
    if p.open_loop {
        s.push_str("<p>Open loop: latencies count from each request's intended send time.</p>\n");
    }
    s.push_str(&spectrum(&p.kinds));
    // redis-benchmark mode keeps no timeline or thread figures per test.
    if !p.seconds.is_empty() {
        let (a, b) = timeline(p.seconds);
        s.push_str("<h2>Timeline</h2>\n");
        s.push_str(&a);
        s.push_str(&b);
    }
    if p.cpu.is_empty() {
        s.push_str("</body></html>\n");
        return s;
    }
    s.push_str("<h2>Client threads</h2>\n<table>\n<tr><th>thread</th><th>CPU s</th><th>waiting for a CPU s</th><th>wall s</th><th>busy</th></tr>\n");
    for (i, c) in p.cpu.iter().enumerate() {
        let _ = writeln!(
            s,
            "<tr><td>{i}</td><td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td>{:.0}%</td></tr>",
            c.cpu_s,
            c.wait_s,
            c.wall_s,
            c.busy() * 100.0
        );
    }
    s.push_str("</table>\n</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(html: &str) -> Vec<(String, usize)> {
        html.match_indices("data-name=\"")
            .map(|(i, _)| {
                let rest = &html[i + 11..];
                let name = rest[..rest.find('"').expect("quote")].to_string();
                let n = rest["data-points=\"".len() + rest.find("data-points=\"").expect("points")..]
                    .split('"')
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("count");
                (name, n)
            })
            .collect()
    }

    #[test]
    fn the_page_draws_every_kind_and_second() {
        let mut set = crate::stats::new_histogram(3);
        let mut get = crate::stats::new_histogram(3);
        for us in [50u64, 80, 120, 400, 2000] {
            set.record(us).expect("record");
            get.record(us * 2).expect("record");
        }
        let mut seconds = vec![Second::new(), Second::new(), Second::new()];
        for (i, s) in seconds.iter_mut().enumerate() {
            s.count = 1000 * (i as u64 + 1);
            s.hist.record(100 * (i as u64 + 1)).expect("record");
        }
        let cpu = [ThreadCpu { cpu_s: 1.0, wait_s: 0.5, wall_s: 3.0 }];
        let html = render(&Page {
            title: "basalt-bench memtier against <x>".into(),
            config: vec![("--threads".into(), "1".into())],
            server: vec![("server".into(), "Redis 7.0.15".into())],
            kinds: vec![("SET".into(), &set), ("GET".into(), &get)],
            seconds: &seconds,
            cpu: &cpu,
            open_loop: false,
        });
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert!(html.contains("against &lt;x&gt;"), "text is escaped");
        assert!(!html.contains("<script"), "no script");
        let namespaces = html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
        assert_eq!(html.matches("http").count(), namespaces, "no address but the SVG namespace");
        assert_eq!(html.matches("<svg").count(), 3);
        let p = points(&html);
        assert_eq!(p, vec![
            ("SET".to_string(), SPECTRUM_STEPS),
            ("GET".to_string(), SPECTRUM_STEPS),
            ("requests/s".to_string(), 3),
            ("p50".to_string(), 3),
            ("p99".to_string(), 3),
            ("p99.9".to_string(), 3),
        ]);
        assert!(html.contains("<td>33%</td>") || html.contains("<td>50%</td>"), "busy share: {html}");
    }
}
