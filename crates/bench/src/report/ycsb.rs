//! YCSB's text output (its hdrhistogram measurement type, YCSB 0.17's default): an
//! `[OVERALL]` block, then for each operation measured its count, average, min, max,
//! 95th and 99th percentile latency in microseconds and its return codes, each line
//! `[SERIES], Metric, value` as YCSB's own parsers read them.

use std::time::Duration;

use hdrhistogram::Histogram;

/// The measured series, in the order they are printed.
pub const SERIES: [&str; 6] = ["READ", "READ-MODIFY-WRITE", "UPDATE", "INSERT", "SCAN", "DELETE"];

/// What one run measured.
pub struct YcsbResult {
    /// Wall time of the run, first operation to last.
    pub runtime: Duration,
    /// Top-level operations completed (YCSB's count for the throughput).
    pub operations: u64,
    /// Per series: latency histogram (us), and counts of OK and ERROR returns.
    pub series: Vec<(Histogram<u64>, u64, u64)>,
    /// The client's CPU seconds (every thread).
    pub client_cpu_s: f64,
    /// Top-level operations per second of the run, with their latencies.
    pub timeline: Vec<crate::stats::Second>,
    /// Each client thread's CPU, time waiting for a CPU, and wall time.
    pub cpu: Vec<crate::stats::cpu::ThreadCpu>,
    /// The failure that ended the run early (a closed or stalled connection).
    pub stopped_by: Option<String>,
}

/// A latency histogram of 1 us resolution up to a minute (YCSB reports microseconds;
/// the other modes' histograms start at 10 us, as redis-benchmark's).
pub fn us_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, crate::stats::MAX_LATENCY_US, 3).unwrap_or_else(|_| crate::stats::new_histogram(3))
}

/// The report of one phase.
pub fn text(r: &YcsbResult) -> String {
    let mut out = String::new();
    let ms = r.runtime.as_millis();
    let secs = r.runtime.as_secs_f64();
    out.push_str(&format!("[OVERALL], RunTime(ms), {ms}\n"));
    let tput = if secs > 0.0 { r.operations as f64 / secs } else { 0.0 };
    out.push_str(&format!("[OVERALL], Throughput(ops/sec), {tput}\n"));
    for (name, (h, ok, err)) in SERIES.iter().zip(&r.series) {
        let n = h.len();
        if n == 0 {
            continue;
        }
        out.push_str(&format!("[{name}], Operations, {n}\n"));
        out.push_str(&format!("[{name}], AverageLatency(us), {}\n", h.mean()));
        out.push_str(&format!("[{name}], MinLatency(us), {}\n", h.min()));
        out.push_str(&format!("[{name}], MaxLatency(us), {}\n", h.max()));
        out.push_str(&format!("[{name}], 95thPercentileLatency(us), {}\n", h.value_at_quantile(0.95)));
        out.push_str(&format!("[{name}], 99thPercentileLatency(us), {}\n", h.value_at_quantile(0.99)));
        if *ok > 0 {
            out.push_str(&format!("[{name}], Return=OK, {ok}\n"));
        }
        if *err > 0 {
            out.push_str(&format!("[{name}], Return=ERROR, {err}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_ycsbs() {
        let mut series: Vec<_> = SERIES.iter().map(|_| (us_histogram(), 0, 0)).collect();
        for us in [100, 200, 300] {
            series[0].0.record(us).expect("record");
        }
        series[0].1 = 2;
        series[0].2 = 1;
        let r = YcsbResult {
            runtime: std::time::Duration::from_millis(1500),
            operations: 3,
            series,
            client_cpu_s: 0.0,
            timeline: Vec::new(),
            cpu: Vec::new(),
            stopped_by: None,
        };
        let t = text(&r);
        assert!(t.starts_with("[OVERALL], RunTime(ms), 1500\n[OVERALL], Throughput(ops/sec), 2\n"), "{t}");
        // The histogram keeps about three significant digits: the values come back close.
        assert!(t.contains("[READ], Operations, 3\n[READ], AverageLatency(us), "), "{t}");
        let min: f64 = t.lines().find_map(|l| l.strip_prefix("[READ], MinLatency(us), ")).and_then(|v| v.parse().ok()).expect("min");
        assert!((90.0..=100.0).contains(&min), "{t}");
        for metric in ["MaxLatency(us)", "95thPercentileLatency(us)", "99thPercentileLatency(us)"] {
            assert!(t.contains(&format!("[READ], {metric}, ")), "{metric}: {t}");
        }
        assert!(t.contains("[READ], Return=OK, 2\n[READ], Return=ERROR, 1\n"), "{t}");
        assert!(!t.contains("[UPDATE]"), "series with no operations are left out: {t}");
    }
}
