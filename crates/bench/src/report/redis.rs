//! redis-benchmark 7.0's output, line for line: the full report (header block, "Latency by
//! percentile distribution", "Cumulative distribution of latencies", "Summary"), the `-q` line,
//! the `--csv` lines, and the live progress line.

use super::Report;
use crate::stats::{self, ms_f32};
use hdrhistogram::Histogram;
use std::fmt::Write;

/// One finished redis-benchmark test.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// Title (`SET`, `LRANGE_100 (first 100 elements)`, or the custom command).
    pub title: String,
    /// Successful replies.
    pub completed: u64,
    /// Seconds from start to the last reply.
    pub elapsed_s: f64,
    /// `-c`.
    pub clients: usize,
    /// `-d` (or the custom command's encoded size).
    pub payload: usize,
    /// `-k`.
    pub keepalive: bool,
    /// Server `save` setting (None when CONFIG GET failed).
    pub save: Option<String>,
    /// Server `appendonly` setting.
    pub appendonly: Option<String>,
    /// `--threads` when given.
    pub threads: Option<usize>,
    /// Latencies, µs.
    pub hist: Histogram<u64>,
    /// Its per-second timeline, and each load thread's CPU (for `--report`).
    pub timeline: Vec<crate::stats::Second>,
    pub cpu: Vec<crate::stats::cpu::ThreadCpu>,
}

impl TestResult {
    /// Requests per second.
    pub fn rps(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.completed as f64 / self.elapsed_s
        } else {
            0.0
        }
    }
    /// avg, min, p50, p95, p99, max in ms, computed as redis-benchmark does.
    pub fn summary(&self) -> [f64; 6] {
        let h = &self.hist;
        [
            stats::mean(h) / 1000.0,
            ms_f32(h.min()),
            ms_f32(stats::value_at_percentile(h, 50.0)),
            ms_f32(stats::value_at_percentile(h, 95.0)),
            ms_f32(stats::value_at_percentile(h, 99.0)),
            ms_f32(h.max()),
        ]
    }
}

/// Which redis-benchmark format.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Style {
    /// Full report.
    Full,
    /// `-q`.
    Quiet,
    /// `--csv`.
    Csv,
}

/// redis-benchmark output in one of its styles.
pub struct RedisReport {
    /// Style.
    pub style: Style,
    /// Width of the last progress line (for the clearing sequence).
    pub last_printed: usize,
}

impl RedisReport {
    /// A report in `style`.
    pub fn new(style: Style) -> Self {
        RedisReport { style, last_printed: 0 }
    }
}

/// The live progress line (ends in `\r`, no newline).
pub fn progress_line(title: &str, rps: f64, overall_rps: f64, avg_ms: f64, overall_avg_ms: f64) -> String {
    format!(
        "{title}: rps={} (overall: {}) avg_msec={} (overall: {})\r",
        c_float(rps, 1),
        c_float(overall_rps, 1),
        c_float(avg_ms, 3),
        c_float(overall_avg_ms, 3)
    )
}

/// `%.Nf` as C prints it, including `nan`, `-nan` and `inf`.
pub fn c_float(v: f64, prec: usize) -> String {
    if v.is_nan() {
        "-nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{v:.prec$}")
    }
}

fn dist_line(out: &mut String, l: &stats::DistLine) {
    let _ = writeln!(
        out,
        "{:.3}% <= {:.3} milliseconds (cumulative count {})",
        l.percent,
        ms_f32(l.value_us),
        l.cumulative
    );
}

impl Report<TestResult> for RedisReport {
    fn begin(&mut self) -> String {
        match self.style {
            Style::Csv => "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n".into(),
            _ => String::new(),
        }
    }

    fn test(&mut self, r: &TestResult) -> String {
        let mut o = String::new();
        let [avg, min, p50, p95, p99, max] = r.summary();
        match self.style {
            Style::Csv => {
                let _ = writeln!(
                    o,
                    "\"{}\",\"{:.2}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\"",
                    r.title,
                    r.rps(),
                    avg,
                    min,
                    p50,
                    p95,
                    p99,
                    max
                );
            }
            Style::Quiet => {
                o.push_str(&clear(self.last_printed));
                let _ = writeln!(o, "{}: {:.2} requests per second, p50={:.3} msec", r.title, r.rps(), p50);
            }
            Style::Full => {
                o.push_str(&clear(self.last_printed));
                let _ = writeln!(o, "====== {} ======", r.title);
                let _ = writeln!(o, "  {} requests completed in {:.2} seconds", r.completed, r.elapsed_s);
                let _ = writeln!(o, "  {} parallel clients", r.clients);
                let _ = writeln!(o, "  {} bytes payload", r.payload);
                let _ = writeln!(o, "  keep alive: {}", u8::from(r.keepalive));
                if let Some(s) = &r.save {
                    let _ = writeln!(o, "  host configuration \"save\": {s}");
                }
                if let Some(a) = &r.appendonly {
                    let _ = writeln!(o, "  host configuration \"appendonly\": {a}");
                }
                match r.threads {
                    Some(t) => {
                        let _ = writeln!(o, "  multi-thread: yes\n  threads: {t}");
                    }
                    None => o.push_str("  multi-thread: no\n"),
                }
                o.push_str("\nLatency by percentile distribution:\n");
                for l in stats::percentile_lines(&r.hist) {
                    dist_line(&mut o, &l);
                }
                o.push_str("\nCumulative distribution of latencies:\n");
                for l in stats::cumulative_lines(&r.hist) {
                    dist_line(&mut o, &l);
                }
                o.push_str("\nSummary:\n");
                let _ = writeln!(o, "  throughput summary: {:.2} requests per second", r.rps());
                o.push_str("  latency summary (msec):\n");
                let _ = writeln!(o, "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "avg", "min", "p50", "p95", "p99", "max");
                let _ = writeln!(o, "    {avg:>9.3} {min:>9.3} {p50:>9.3} {p95:>9.3} {p99:>9.3} {max:>9.3}");
            }
        }
        self.last_printed = 0;
        o
    }

    fn end(&mut self) -> String {
        match self.style {
            Style::Csv => String::new(),
            _ => "\n".into(),
        }
    }
}

/// The sequence redis-benchmark prints to wipe its progress line: spaces then `\r`.
fn clear(width: usize) -> String {
    format!("{:>w$}\r", " ", w = width.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(samples: &[u64]) -> TestResult {
        let mut h = stats::new_histogram(3);
        for &s in samples {
            stats::record(&mut h, s, 1);
        }
        TestResult {
            title: "GET".into(),
            completed: samples.len() as u64,
            elapsed_s: 0.5,
            clients: 50,
            payload: 3,
            keepalive: true,
            save: Some(String::new()),
            appendonly: Some("no".into()),
            threads: None,
            hist: h,
            timeline: Vec::new(),
            cpu: Vec::new(),
        }
    }

    #[test]
    fn golden_quiet() {
        let mut r = RedisReport::new(Style::Quiet);
        let s = r.test(&result(&[200, 200, 300, 400]));
        assert_eq!(s, " \rGET: 8.00 requests per second, p50=0.207 msec\n");
        assert_eq!(r.end(), "\n");
    }

    #[test]
    fn golden_csv() {
        let mut r = RedisReport::new(Style::Csv);
        let mut s = r.begin();
        s += &r.test(&result(&[200, 200, 300, 400]));
        assert_eq!(
            s,
            "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n\"GET\",\"8.00\",\"0.278\",\"0.200\",\"0.207\",\"0.407\",\"0.407\",\"0.407\"\n"
        );
        assert_eq!(r.end(), "");
    }

    #[test]
    fn golden_full() {
        let mut r = RedisReport::new(Style::Full);
        let s = r.test(&result(&[79, 200, 200, 2050]));
        let want = " \r====== GET ======
  4 requests completed in 0.50 seconds
  50 parallel clients
  3 bytes payload
  keep alive: 1
  host configuration \"save\": 
  host configuration \"appendonly\": no
  multi-thread: no

Latency by percentile distribution:
0.000% <= 0.079 milliseconds (cumulative count 1)
50.000% <= 0.207 milliseconds (cumulative count 3)
87.500% <= 2.055 milliseconds (cumulative count 4)
100.000% <= 2.055 milliseconds (cumulative count 4)

Cumulative distribution of latencies:
25.000% <= 0.103 milliseconds (cumulative count 1)
75.000% <= 0.207 milliseconds (cumulative count 3)
100.000% <= 2.103 milliseconds (cumulative count 4)

Summary:
  throughput summary: 8.00 requests per second
  latency summary (msec):
          avg       min       p50       p95       p99       max
        0.634     0.072     0.207     2.055     2.055     2.055
";
        assert_eq!(s, want, "\n{s}");
    }

    #[test]
    fn progress_nan_like_c() {
        assert_eq!(
            progress_line("SET", 0.0, 0.0, f64::NAN, f64::NAN),
            "SET: rps=0.0 (overall: 0.0) avg_msec=-nan (overall: -nan)\r"
        );
    }
}
