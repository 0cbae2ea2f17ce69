//! memtier_benchmark's outputs: the header lines and "ALL STATS" text table (column widths as
//! memtier prints them: Type `%-7s `, rate columns `%12.2f `, latency columns `%15.05f `, "---"
//! where a figure does not apply), the "Request Latency Distribution" lines, and the JSON file
//! ("Format version" 2). Latencies are in milliseconds.

use crate::stats::{self, KindStats, RunStats, Second};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// What a memtier run produced, ready to print.
pub struct MemtierResult {
    /// `--threads`.
    pub threads: usize,
    /// `--clients` (per thread).
    pub clients: usize,
    /// Requests per client, or None with `--test-time`.
    pub requests: Option<u64>,
    /// `--test-time` seconds.
    pub test_time: Option<u64>,
    /// Row names per kind (`Sets`, `Gets`, or `<Cmd>s`).
    pub names: Vec<String>,
    /// Histogram names per kind (`SET`, `GET`, or the command's first word upper-cased).
    pub hist_names: Vec<String>,
    /// Hits/Misses columns apply (SET/GET workload, not `--command`).
    pub hits_misses: bool,
    /// Merged measurements.
    pub stats: RunStats,
    /// Seconds from start to the last reply.
    pub elapsed_s: f64,
    /// Start, ms since the epoch.
    pub start_ms: u128,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// `--print-percentiles`, parsed.
    pub percentiles: Vec<f64>,
    /// HDR significant figures of the totals.
    pub sigfig: u8,
    /// `--rate` (open loop): latencies are then from the intended send time, and the
    /// service time (from the actual send) is reported beside them.
    pub rate: Option<f64>,
}

/// One row of the ALL STATS table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `Sets`, `Gets`, `Waits`, `Totals`...
    pub name: String,
    /// Ops/sec.
    pub ops: f64,
    /// Hits/sec and Misses/sec (None prints "---").
    pub hits_misses: Option<(f64, f64)>,
    /// Average latency and the percentiles, ms (None prints "---" in each latency column).
    pub latency: Option<(f64, Vec<f64>)>,
    /// KB/sec (None prints "---").
    pub kb: Option<f64>,
}

/// `p50`, `p99.9`, `p99.99`: the percentile as given, trailing zeros trimmed.
pub fn pct_label(p: f64) -> String {
    let s = format!("{p:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("p{s}")
}

/// Parses `--print-percentiles` (`50,99,99.9`).
pub fn parse_percentiles(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| (0.0..=100.0).contains(v))
                .ok_or_else(|| format!("Invalid --print-percentiles value \"{p}\""))
        })
        .collect()
}

/// The ALL STATS block (title, `=` rule, header, `-` rule, rows).
pub fn table(title: &str, rows: &[Row], percentiles: &[f64]) -> String {
    let mut header = format!("{:<7} ", "Type");
    for h in ["Ops/sec", "Hits/sec", "Misses/sec"] {
        let _ = write!(header, "{h:>12} ");
    }
    let _ = write!(header, "{:>15} ", "Avg. Latency");
    for &p in percentiles {
        let _ = write!(header, "{:>15} ", format!("{} Latency", pct_label(p)));
    }
    let _ = write!(header, "{:>12} ", "KB/sec");
    let width = header.len();
    let mut s = String::new();
    let _ = writeln!(s, "{title}");
    let _ = writeln!(s, "{}", "=".repeat(width));
    let _ = writeln!(s, "{header}");
    let _ = writeln!(s, "{}", "-".repeat(width));
    for r in rows {
        let _ = write!(s, "{:<7} {:>12.2} ", r.name, r.ops);
        match r.hits_misses {
            Some((h, m)) => {
                let _ = write!(s, "{h:>12.2} {m:>12.2} ");
            }
            None => {
                let _ = write!(s, "{:>12} {:>12} ", "---", "---");
            }
        }
        match &r.latency {
            Some((avg, ps)) => {
                let _ = write!(s, "{avg:>15.5} ");
                for v in ps {
                    let _ = write!(s, "{v:>15.5} ");
                }
            }
            None => {
                for _ in 0..=percentiles.len() {
                    let _ = write!(s, "{:>15} ", "---");
                }
            }
        }
        match r.kb {
            Some(kb) => {
                let _ = write!(s, "{kb:>12.2} ");
            }
            None => {
                let _ = write!(s, "{:>12} ", "---");
            }
        }
        s.push('\n');
    }
    s
}

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn avg_ms(k: &KindStats) -> f64 {
    let n = k.hist.len();
    if n == 0 {
        0.0
    } else {
        k.sum_us as f64 / n as f64 / 1000.0
    }
}

fn row_of(name: &str, k: &KindStats, hm: bool, r: &MemtierResult) -> Row {
    let secs = r.elapsed_s;
    Row {
        name: name.to_string(),
        ops: per_sec(k.hist.len(), secs),
        hits_misses: hm.then(|| (per_sec(k.hits, secs), per_sec(k.misses, secs))),
        latency: Some((
            avg_ms(k),
            r.percentiles.iter().map(|&p| stats::value_at_percentile(&k.hist, p) as f64 / 1000.0).collect(),
        )),
        kb: Some(if secs > 0.0 { (k.bytes_rx + k.bytes_tx) as f64 / 1024.0 / secs } else { 0.0 }),
    }
}

impl MemtierResult {
    /// Merged stats of every kind.
    pub fn totals(&self) -> KindStats {
        self.stats.total(self.sigfig)
    }

    /// The table rows: one per kind (Sets gets "---" hits/misses, as memtier), Waits (always 0
    /// here: WAIT is not generated), Totals.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        for (i, name) in self.names.iter().enumerate() {
            let hm = self.hits_misses && name != "Sets";
            let mut row = row_of(name, &self.stats.kinds[i], hm, self);
            // memtier's SET/GET table shows "---" for the latencies of a kind that ran
            // no request (its --command rows show 0.00000).
            if self.hits_misses && self.stats.kinds[i].hist.is_empty() {
                row.latency = None;
            }
            rows.push(row);
        }
        if self.hits_misses {
            rows.push(Row { name: "Waits".into(), ops: 0.0, hits_misses: None, latency: None, kb: None });
        }
        let mut t = row_of("Totals", &self.totals(), self.hits_misses, self);
        if self.hits_misses {
            // memtier's Totals hits/misses are the GETs'.
            let g = self.names.iter().position(|n| n == "Gets");
            let (h, m) = g.map(|i| (self.stats.kinds[i].hits, self.stats.kinds[i].misses)).unwrap_or((0, 0));
            t.hits_misses = Some((per_sec(h, self.elapsed_s), per_sec(m, self.elapsed_s)));
        }
        rows.push(t);
        rows
    }

    /// `Threads` / `Connections per thread` / `Requests per client` | `Seconds`, two blank lines.
    pub fn header_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<10}Threads", self.threads);
        let _ = writeln!(s, "{:<10}Connections per thread", self.clients);
        match self.requests {
            Some(n) => {
                let _ = writeln!(s, "{n:<10}Requests per client");
            }
            None => {
                let _ = writeln!(s, "{:<10}Seconds", self.test_time.unwrap_or(0));
            }
        }
        s.push_str("\n\n");
        s
    }

    /// One results block: the table under `title` and (unless hidden) the distribution.
    pub fn block_text(&self, title: &str, hide_histogram: bool) -> String {
        let mut s = table(title, &self.rows(), &self.percentiles);
        if !hide_histogram {
            s.push_str("\n\nRequest Latency Distribution\n");
            let _ = writeln!(s, "{:<8} {:>7} {:>15}", "Type", "<= msec", "Percent");
            let _ = writeln!(s, "{}", "-".repeat(72));
            for (i, name) in self.hist_names.iter().enumerate() {
                if i > 0 {
                    s.push_str("---\n");
                }
                for (ms, pct) in distribution(&self.stats.kinds[i].hist) {
                    let _ = writeln!(s, "{name:<6} {ms:>8.3} {pct:>12.3}");
                }
            }
        }
        s
    }

    fn kind_json(&self, k: &KindStats, timeline: Option<&[Second]>, hm: bool) -> Value {
        let secs = self.elapsed_s;
        let n = k.hist.len();
        let avg = avg_ms(k);
        let kb = |b: u64| if secs > 0.0 { b as f64 / 1024.0 / secs } else { 0.0 };
        let mut pct = Map::new();
        for &p in &self.percentiles {
            pct.insert(
                percentile_key(p),
                json!(stats::value_at_percentile(&k.hist, p) as f64 / 1000.0),
            );
        }
        let mut hlog = Map::new();
        hlog.insert("Compressed Histogram".into(), json!(compressed_histogram(&k.hist)));
        pct.insert("Histogram log format".into(), Value::Object(hlog));
        let mut ts = Map::new();
        for (i, sec) in timeline.unwrap_or(&[]).iter().enumerate() {
            ts.insert(i.to_string(), second_json(sec));
        }
        let mut m = Map::new();
        m.insert("Count".into(), json!(n));
        m.insert("Ops/sec".into(), json!(per_sec(n, secs)));
        m.insert("Hits/sec".into(), json!(if hm { per_sec(k.hits, secs) } else { 0.0 }));
        m.insert("Misses/sec".into(), json!(if hm { per_sec(k.misses, secs) } else { 0.0 }));
        m.insert("Connection Errors/sec".into(), json!(0.0));
        m.insert("Connection Errors".into(), json!(0));
        m.insert("Error Replies".into(), json!(k.errors));
        m.insert("Latency".into(), json!(avg));
        m.insert("Average Latency".into(), json!(avg));
        // memtier writes it as an integer of milliseconds (`%lld`).
        m.insert("Accumulated Latency".into(), json!(k.sum_us / 1000));
        m.insert("Min Latency".into(), json!(if n > 0 { k.hist.min() as f64 / 1000.0 } else { 0.0 }));
        m.insert("Max Latency".into(), json!(if n > 0 { k.hist.max() as f64 / 1000.0 } else { 0.0 }));
        m.insert("KB/sec".into(), json!(kb(k.bytes_rx + k.bytes_tx)));
        m.insert("KB/sec RX/TX".into(), json!(kb(k.bytes_rx + k.bytes_tx)));
        m.insert("KB/sec RX".into(), json!(kb(k.bytes_rx)));
        m.insert("KB/sec TX".into(), json!(kb(k.bytes_tx)));
        m.insert("Time-Serie".into(), Value::Object(ts));
        m.insert("Percentile Latencies".into(), Value::Object(pct));
        if self.rate.is_some() {
            // Ours, not memtier's (parsers that do not know it skip it): in an open loop
            // the latencies above count from the intended send time; this is the time
            // from the actual send, so that queueing in the tool or the network shows.
            let svc = &k.service;
            let ms = |v: u64| v as f64 / 1000.0;
            let mut service = Map::new();
            service.insert("Average Latency".into(), json!(if svc.is_empty() { 0.0 } else { svc.mean() / 1000.0 }));
            service.insert("Min Latency".into(), json!(if svc.is_empty() { 0.0 } else { ms(svc.min()) }));
            service.insert("Max Latency".into(), json!(if svc.is_empty() { 0.0 } else { ms(svc.max()) }));
            for &p in &self.percentiles {
                service.insert(percentile_key(p), json!(ms(stats::value_at_percentile(svc, p))));
            }
            m.insert("Service Time".into(), Value::Object(service));
        }
        Value::Object(m)
    }

    /// The "run information" object.
    pub fn run_information(&self) -> Value {
        let mut run = Map::new();
        run.insert("Threads".into(), json!(self.threads));
        run.insert("Connections per thread".into(), json!(self.clients));
        match self.requests {
            Some(n) => run.insert("Requests per client".into(), json!(n)),
            None => run.insert("Seconds".into(), json!(self.test_time.unwrap_or(0))),
        };
        run.insert("Format version".into(), json!(2));
        if let Some(rate) = self.rate {
            run.insert("Open loop rate".into(), json!(rate));
            run.insert("Latency measured from".into(), json!("intended send time"));
        }
        Value::Object(run)
    }

    /// One results block ("ALL STATS", "BEST RUN RESULTS", ...).
    pub fn block_json(&self, hide_histogram: bool) -> Value {
        let finish = self.start_ms + (self.elapsed_s * 1000.0) as u128;
        let mut all = Map::new();
        all.insert(
            "Runtime".into(),
            json!({
                "Start time": self.start_ms as u64,
                "Finish time": finish as u64,
                "Total duration": (self.elapsed_s * 1000.0).round() as u64,
                "Time unit": "MILLISECONDS",
                "Interrupted": if self.interrupted { "true" } else { "false" },
            }),
        );
        for (i, name) in self.names.iter().enumerate() {
            let hm = self.hits_misses && name != "Sets";
            let tl = self.stats.kind_timeline.get(i).map(|v| v.as_slice());
            all.insert(name.clone(), self.kind_json(&self.stats.kinds[i], tl, hm));
        }
        if self.hits_misses {
            let empty = KindStats::new(self.sigfig);
            let mut waits = self.kind_json(&empty, None, false);
            // memtier 2.3 writes a Waits entry for every second, of three counters.
            let seconds: Map<String, Value> = (0..self.stats.timeline.len())
                .map(|i| (i.to_string(), json!({"Bytes RX": 0, "Bytes TX": 0, "Count": 0})))
                .collect();
            waits["Time-Serie"] = Value::Object(seconds);
            all.insert("Waits".into(), waits);
        }
        let mut totals = self.kind_json(&self.totals(), Some(&self.stats.timeline), self.hits_misses);
        if let (true, Some(g)) = (self.hits_misses, self.names.iter().position(|n| n == "Gets")) {
            let k = &self.stats.kinds[g];
            totals["Hits/sec"] = json!(per_sec(k.hits, self.elapsed_s));
            totals["Misses/sec"] = json!(per_sec(k.misses, self.elapsed_s));
        }
        all.insert("Totals".into(), totals);
        if !hide_histogram {
            for (i, name) in self.hist_names.iter().enumerate() {
                let lines: Vec<Value> = distribution(&self.stats.kinds[i].hist)
                    .into_iter()
                    .map(|(ms, pct)| json!({"<=msec": ms, "percent": pct}))
                    .collect();
                all.insert(name.clone(), Value::Array(lines));
            }
        }
        Value::Object(all)
    }
}

/// The JSON document with one object per results block (title, result).
pub fn json_blocks(config: Value, blocks: &[(String, &MemtierResult)], hide_histogram: bool) -> Value {
    let mut doc = Map::new();
    doc.insert("configuration".into(), config);
    if let Some((_, first)) = blocks.first() {
        doc.insert("run information".into(), first.run_information());
    }
    for (title, r) in blocks {
        doc.insert(title.clone(), r.block_json(hide_histogram));
    }
    Value::Object(doc)
}

/// Indexes of the best and worst runs (highest and lowest Totals ops/sec).
pub fn best_worst(runs: &[MemtierResult]) -> (usize, usize) {
    let ops = |r: &MemtierResult| per_sec(r.totals().hist.len(), r.elapsed_s);
    let mut best = 0;
    let mut worst = 0;
    for (i, r) in runs.iter().enumerate() {
        if ops(r) > ops(&runs[best]) {
            best = i;
        }
        if ops(r) < ops(&runs[worst]) {
            worst = i;
        }
    }
    (best, worst)
}

/// Every run merged: histograms and counts added, durations summed, so each rate is the
/// average over the runs weighted by their durations. None for no runs.
pub fn aggregate(runs: &[MemtierResult]) -> Option<MemtierResult> {
    let first = runs.first()?;
    let mut stats = first.stats.clone();
    for r in &runs[1..] {
        stats.merge(&r.stats);
    }
    Some(MemtierResult {
        threads: first.threads,
        clients: first.clients,
        requests: first.requests,
        test_time: first.test_time,
        names: first.names.clone(),
        hist_names: first.hist_names.clone(),
        hits_misses: first.hits_misses,
        stats,
        elapsed_s: runs.iter().map(|r| r.elapsed_s).sum(),
        start_ms: first.start_ms,
        interrupted: runs.iter().any(|r| r.interrupted),
        percentiles: first.percentiles.clone(),
        sigfig: first.sigfig,
        rate: first.rate,
    })
}

/// A key of "Percentile Latencies" as memtier 2.3 writes it: `p%.3f` into an 8-byte
/// buffer through `snprintf(buf, sizeof(buf) - 1, ...)`, which keeps 6 characters, so
/// `p50.000` reads `p50.00` and `p99.900` `p99.90` (cut, not rounded: 99.995 is `p99.99`).
fn percentile_key(p: f64) -> String {
    let mut s = format!("p{p:.3}");
    s.truncate(6);
    s
}

fn second_json(s: &Second) -> Value {
    let n = s.count;
    let ms = |v: u64| v as f64 / 1000.0;
    let mut v = json!({
        "Bytes RX": s.bytes_rx,
        "Bytes TX": s.bytes_tx,
        "Count": n,
        "Average Latency": if n > 0 { s.sum_us as f64 / n as f64 / 1000.0 } else { 0.0 },
        "Accumulated Latency": s.sum_us / 1000,
        "Min Latency": if n > 0 { ms(s.hist.min()) } else { 0.0 },
        "Max Latency": if n > 0 { ms(s.hist.max()) } else { 0.0 },
        "p50.00": ms(stats::value_at_percentile(&s.hist, 50.0)),
        "p99.00": ms(stats::value_at_percentile(&s.hist, 99.0)),
        "p99.90": ms(stats::value_at_percentile(&s.hist, 99.9)),
    });
    if let Some(h) = &s.service {
        // Open loop (ours, beside memtier's keys): the second's service time, from the
        // actual send, where the keys above count from the intended send time.
        let k = h.len();
        v["Service Time"] = json!({
            "Average Latency": if k > 0 { s.service_sum_us as f64 / k as f64 / 1000.0 } else { 0.0 },
            "Max Latency": if k > 0 { ms(h.max()) } else { 0.0 },
            "p50.00": ms(stats::value_at_percentile(h, 50.0)),
            "p99.00": ms(stats::value_at_percentile(h, 99.0)),
            "p99.90": ms(stats::value_at_percentile(h, 99.9)),
        });
    }
    v
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The histogram (µs) in HdrHistogram's V2 compressed encoding, base64 (`HISTF...`), as
/// memtier writes it under "Histogram log format"; empty when encoding fails.
pub fn compressed_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64(&buf),
        Err(_) => String::new(),
    }
}

/// Latency distribution as memtier prints it: a percentile iterator with 10 ticks per
/// half-distance, one (ms, percentile tick) line per tick, ending with the 100% line.
pub fn distribution(h: &hdrhistogram::Histogram<u64>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    if h.is_empty() {
        return out;
    }
    for v in h.iter_quantiles(10) {
        let line = (v.value_iterated_to() as f64 / 1000.0, v.quantile_iterated_to() * 100.0);
        if out.last() != Some(&line) {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_all_stats_table() {
        let rows = vec![
            Row {
                name: "Sets".into(),
                ops: 18181.78,
                hits_misses: None,
                latency: Some((1.00132, vec![0.975, 1.815, 3.999])),
                kb: Some(1400.41),
            },
            Row {
                name: "Gets".into(),
                ops: 181636.28,
                hits_misses: Some((1263.83, 180372.45)),
                latency: Some((0.99929, vec![0.967, 1.799, 3.935])),
                kb: Some(7128.87),
            },
            Row { name: "Waits".into(), ops: 0.0, hits_misses: None, latency: None, kb: None },
            Row {
                name: "Totals".into(),
                ops: 199818.06,
                hits_misses: Some((1263.83, 180372.45)),
                latency: Some((0.99947, vec![0.967, 1.799, 3.951])),
                kb: Some(8529.28),
            },
        ];
        let got = table("ALL STATS", &rows, &[50.0, 99.0, 99.9]);
        let eq = "=".repeat(124);
        let dash = "-".repeat(124);
        let want = format!(
            "ALL STATS\n{eq}\n\
Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec \n\
{dash}\n\
Sets        18181.78          ---          ---         1.00132         0.97500         1.81500         3.99900      1400.41 \n\
Gets       181636.28      1263.83    180372.45         0.99929         0.96700         1.79900         3.93500      7128.87 \n\
Waits           0.00          ---          ---             ---             ---             ---             ---          --- \n\
Totals     199818.06      1263.83    180372.45         0.99947         0.96700         1.79900         3.95100      8529.28 \n"
        );
        assert_eq!(got, want);
    }

    #[test]
    fn base64_and_histogram_round_trip() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        let mut h = stats::new_histogram(3);
        for i in 0..100 {
            stats::record(&mut h, 50 + i * 7, 1);
        }
        let s = compressed_histogram(&h);
        assert!(s.starts_with("HISTF"), "{s}");
        // Decode our base64 back and deserialize: same counts.
        let bytes = crate::report::base64_decode(&s);
        let back: hdrhistogram::Histogram<u64> =
            hdrhistogram::serialization::Deserializer::new().deserialize(&mut bytes.as_slice()).expect("decode");
        assert_eq!(back.len(), 100);
        assert_eq!(back.max(), h.max());
    }

    #[test]
    fn labels() {
        assert_eq!(pct_label(50.0), "p50");
        // memtier 2.3's JSON keys: `p%.3f` cut to 6 characters.
        assert_eq!(percentile_key(50.0), "p50.00");
        assert_eq!(percentile_key(99.9), "p99.90");
        assert_eq!(percentile_key(99.995), "p99.99");
        assert_eq!(pct_label(99.9), "p99.9");
        assert_eq!(pct_label(99.99), "p99.99");
        assert_eq!(parse_percentiles("50,99,99.9"), Ok(vec![50.0, 99.0, 99.9]));
        assert!(parse_percentiles("50,x").is_err());
    }

    #[test]
    fn distribution_ends_at_100() {
        let mut h = stats::new_histogram(3);
        for i in 0..1000 {
            stats::record(&mut h, 100 + i, 1);
        }
        let d = distribution(&h);
        assert_eq!(d.last().map(|l| l.1), Some(100.0));
        assert!(d.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
