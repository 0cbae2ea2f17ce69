//! Measurement: per-thread HDR histograms merged at the end, percentile and distribution
//! iterators that reproduce the lines redis-benchmark prints, a per-second timeline, error counts
//! by type, and the tool's own CPU use per thread.

pub mod cpu;

use hdrhistogram::Histogram;

/// Highest latency kept, in microseconds (60 s). redis-benchmark clamps at 3 s; we do not.
pub const MAX_LATENCY_US: u64 = 60_000_000;
/// Lowest discernible latency in microseconds (as redis-benchmark: 10 µs, so 8 µs buckets).
pub const MIN_LATENCY_US: u64 = 10;

/// A new latency histogram in microseconds with `sigfig` significant figures (1..=5).
pub fn new_histogram(sigfig: u8) -> Histogram<u64> {
    match Histogram::new_with_bounds(MIN_LATENCY_US, MAX_LATENCY_US, sigfig.clamp(1, 5)) {
        Ok(h) => h,
        // The bounds are constants and sigfig is clamped: this cannot fail.
        Err(_) => Histogram::new(3).unwrap_or_else(|_| unreachable!()),
    }
}

/// Records `us` (clamped to the histogram's range) `n` times.
pub fn record(h: &mut Histogram<u64>, us: u64, n: u64) {
    let v = us.min(MAX_LATENCY_US);
    // Cannot fail after clamping; ignore rather than panic in the hot path.
    let _ = h.record_n(v, n);
}

/// Non-empty buckets of `h` as (bucket start, highest equivalent value, count), ascending.
fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64, u64)> {
    h.iter_recorded()
        .map(|v| {
            let hi = v.value_iterated_to();
            (h.lowest_equivalent(hi), hi, v.count_at_value())
        })
        .collect()
}

/// Value at `percentile` (0..=100) with the rounding rule of the C HdrHistogram
/// (`hdr_value_at_percentile`): the rank is `round(p/100 * total)` (at least 1), and the answer is
/// the highest value equivalent to the bucket that reaches that rank (lowest for p = 0).
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    let total = h.len();
    if total == 0 {
        return 0;
    }
    let p = percentile.min(100.0);
    let rank = (((p / 100.0) * total as f64) + 0.5) as u64;
    let rank = rank.max(1);
    let mut cum = 0;
    for (lo, hi, c) in buckets(h) {
        cum += c;
        if cum >= rank {
            return if percentile == 0.0 { lo } else { hi };
        }
    }
    h.max()
}

/// Mean in microseconds, with each bucket weighted at its median equivalent value (as C hdr).
pub fn mean(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let mut total: u128 = 0;
    for v in h.iter_recorded() {
        total += v.count_at_value() as u128 * h.median_equivalent(v.value_iterated_to()) as u128;
    }
    total as f64 / h.len() as f64
}

/// One line of a distribution: percentile (0..100), value in µs, cumulative count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DistLine {
    /// Percentile printed at the start of the line.
    pub percent: f64,
    /// Highest value equivalent to the bucket, in microseconds.
    pub value_us: u64,
    /// Number of samples at or below `value_us`.
    pub cumulative: u64,
}

/// The "Latency by percentile distribution" lines: a percentile iterator with one tick per
/// half-distance (0, 50, 75, 87.5, ...), printed when the cumulative count changed or reached the
/// total, and a final 100% line.
pub fn percentile_lines(h: &Histogram<u64>) -> Vec<DistLine> {
    let total = h.len();
    let b = buckets(h);
    let mut out = Vec::new();
    let mut prev: Option<u64> = None;
    let mut emit = |l: DistLine, out: &mut Vec<DistLine>| {
        if prev != Some(l.cumulative) || l.cumulative == total {
            out.push(l);
        }
        prev = Some(l.cumulative);
    };
    let mut to = 0.0f64;
    let mut cum = 0u64;
    let mut last_value = 0u64;
    'outer: for &(_, hi, c) in &b {
        cum += c;
        last_value = hi;
        // Several ticks may fall in one bucket: report each (only changes get printed).
        while to <= 100.0 * cum as f64 / total as f64 {
            emit(DistLine { percent: to, value_us: hi, cumulative: cum }, &mut out);
            let exp = ((100.0 / (100.0 - to)).ln() / 2f64.ln()) as i64 + 1;
            to += 100.0 / 2f64.powi(exp as i32);
            if cum >= total {
                break 'outer;
            }
        }
    }
    emit(DistLine { percent: 100.0, value_us: last_value, cumulative: cum }, &mut out);
    out
}

/// The "Cumulative distribution of latencies" lines: 100 µs steps up to 2 ms, then 1 ms steps,
/// each line giving the share of samples at or below the bucket that holds the step, printed when
/// that share grew, until every sample is counted.
pub fn cumulative_lines(h: &Histogram<u64>) -> Vec<DistLine> {
    let total = h.len();
    let b = buckets(h);
    let mut out = Vec::new();
    if total == 0 {
        return out;
    }
    let mut level = 100u64;
    let mut step = 100u64;
    let mut idx = 0usize;
    let mut cum = 0u64;
    let mut last = 0u64;
    loop {
        let lo = h.lowest_equivalent(level);
        while idx < b.len() && b[idx].0 <= lo {
            cum += b[idx].2;
            idx += 1;
        }
        if cum > last {
            out.push(DistLine {
                percent: cum as f64 * 100.0 / total as f64,
                value_us: h.highest_equivalent(level),
                cumulative: cum,
            });
            last = cum;
        }
        if cum >= total {
            break;
        }
        // As redis-benchmark: the step changes after the level that reached 2 ms, so the next
        // level is still +100 µs (2.0, 2.1, 3.1, 4.1 ms ...).
        let prev = level;
        level += step;
        if prev >= 2000 {
            step = 1000;
        }
    }
    out
}

/// Milliseconds as redis-benchmark computes them (`int64 / 1000.0f`, single precision).
pub fn ms_f32(us: u64) -> f64 {
    (us as f32 / 1000.0f32) as f64
}

/// Counts of error replies by type (the first word of the message, e.g. `WRONGTYPE`).
#[derive(Clone, Debug, Default)]
pub struct ErrorCounts {
    /// (type, count), in order of first appearance.
    pub by_type: Vec<(String, u64)>,
}

impl ErrorCounts {
    /// Counts one error reply whose message (without the leading `-`) is `msg`.
    pub fn add(&mut self, msg: &[u8]) {
        let word_end = msg.iter().position(|&c| c == b' ' || c == b'\r').unwrap_or(msg.len());
        let word = &msg[..word_end];
        if let Some(e) = self.by_type.iter_mut().find(|(t, _)| t.as_bytes() == word) {
            e.1 += 1;
        } else {
            self.by_type.push((String::from_utf8_lossy(word).into_owned(), 1));
        }
    }
    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &ErrorCounts) {
        for (t, n) in &other.by_type {
            if let Some(e) = self.by_type.iter_mut().find(|(x, _)| x == t) {
                e.1 += n;
            } else {
                self.by_type.push((t.clone(), *n));
            }
        }
    }
    /// Total number of error replies.
    pub fn total(&self) -> u64 {
        self.by_type.iter().map(|(_, n)| n).sum()
    }
    /// `ERR: 3, WRONGTYPE: 1`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.by_type.iter().map(|(t, n)| format!("{t}: {n}")).collect();
        parts.join(", ")
    }
}

/// One second of the timeline of one thread (merged across threads at the end).
#[derive(Clone, Debug)]
pub struct Second {
    /// Successful replies.
    pub count: u64,
    /// Error replies.
    pub errors: u64,
    /// Bytes received.
    pub bytes_rx: u64,
    /// Bytes sent.
    pub bytes_tx: u64,
    /// Sum of the latencies of the successful replies, µs.
    pub sum_us: u64,
    /// Latency of the successful replies (2 significant figures).
    pub hist: Histogram<u64>,
    /// Open loop only: service time (from the actual send) of the successful replies,
    /// µs, and its sum; created on the second's first such reply.
    pub service: Option<Histogram<u64>>,
    pub service_sum_us: u64,
}

impl Second {
    /// An empty second.
    pub fn new() -> Self {
        Second {
            count: 0,
            errors: 0,
            bytes_rx: 0,
            bytes_tx: 0,
            sum_us: 0,
            hist: new_histogram(2),
            service: None,
            service_sum_us: 0,
        }
    }
    /// Records one service time (open loop).
    pub fn record_service(&mut self, us: u64) {
        record(self.service.get_or_insert_with(|| new_histogram(2)), us, 1);
        self.service_sum_us += us;
    }
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Second) {
        self.count += other.count;
        self.errors += other.errors;
        self.bytes_rx += other.bytes_rx;
        self.bytes_tx += other.bytes_tx;
        self.sum_us += other.sum_us;
        let _ = self.hist.add(&other.hist);
        if let Some(h) = &other.service {
            let _ = self.service.get_or_insert_with(|| new_histogram(2)).add(h);
        }
        self.service_sum_us += other.service_sum_us;
    }
}

impl Default for Second {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-kind (command type) measurements: e.g. Sets and Gets in memtier mode.
#[derive(Clone, Debug)]
pub struct KindStats {
    /// Latency of successful replies, µs (from the intended send time in open loop).
    pub hist: Histogram<u64>,
    /// Service time (from the actual send), only filled in open-loop mode.
    pub service: Histogram<u64>,
    /// Sum of latencies in µs (for an exact average).
    pub sum_us: u128,
    /// GET hits (non-null replies) and misses (null replies).
    pub hits: u64,
    /// Null replies.
    pub misses: u64,
    /// Error replies.
    pub errors: u64,
    /// Bytes sent / received for this kind.
    pub bytes_tx: u64,
    /// Bytes received for this kind.
    pub bytes_rx: u64,
}

impl KindStats {
    /// Empty stats with `sigfig` significant figures.
    pub fn new(sigfig: u8) -> Self {
        KindStats {
            hist: new_histogram(sigfig),
            service: new_histogram(sigfig),
            sum_us: 0,
            hits: 0,
            misses: 0,
            errors: 0,
            bytes_tx: 0,
            bytes_rx: 0,
        }
    }
    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &KindStats) {
        let _ = self.hist.add(&o.hist);
        let _ = self.service.add(&o.service);
        self.sum_us += o.sum_us;
        self.hits += o.hits;
        self.misses += o.misses;
        self.errors += o.errors;
        self.bytes_tx += o.bytes_tx;
        self.bytes_rx += o.bytes_rx;
    }
}

/// Everything one thread measured in one run; merged with [`RunStats::merge`].
#[derive(Clone, Debug)]
pub struct RunStats {
    /// Per command kind (index = kind of the workload).
    pub kinds: Vec<KindStats>,
    /// Error replies by type.
    pub errors: ErrorCounts,
    /// Per-second timeline.
    pub timeline: Vec<Second>,
    /// Per-second timeline of each kind (index = kind).
    pub kind_timeline: Vec<Vec<Second>>,
    /// CPU seconds used by each thread (user + system) and the wall seconds it ran.
    pub cpu: Vec<cpu::ThreadCpu>,
}

impl RunStats {
    /// Empty stats for `kinds` command kinds.
    pub fn new(kinds: usize, sigfig: u8) -> Self {
        RunStats {
            kinds: (0..kinds.max(1)).map(|_| KindStats::new(sigfig)).collect(),
            errors: ErrorCounts::default(),
            timeline: Vec::new(),
            kind_timeline: (0..kinds.max(1)).map(|_| Vec::new()).collect(),
            cpu: Vec::new(),
        }
    }
    /// Adds `o` into `self`.
    pub fn merge(&mut self, o: &RunStats) {
        for (a, b) in self.kinds.iter_mut().zip(&o.kinds) {
            a.merge(b);
        }
        self.errors.merge(&o.errors);
        if self.timeline.len() < o.timeline.len() {
            self.timeline.resize_with(o.timeline.len(), Second::new);
        }
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            a.merge(b);
        }
        for (ta, tb) in self.kind_timeline.iter_mut().zip(&o.kind_timeline) {
            if ta.len() < tb.len() {
                ta.resize_with(tb.len(), Second::new);
            }
            for (a, b) in ta.iter_mut().zip(tb) {
                a.merge(b);
            }
        }
        self.cpu.extend_from_slice(&o.cpu);
    }
    /// All kinds merged into one.
    pub fn total(&self, sigfig: u8) -> KindStats {
        let mut t = KindStats::new(sigfig);
        for k in &self.kinds {
            t.merge(k);
        }
        t
    }
    /// Second index -> mutable second (grows the timeline; one allocation per second at most).
    pub fn second(&mut self, idx: usize) -> &mut Second {
        while self.timeline.len() <= idx {
            self.timeline.push(Second::new());
        }
        &mut self.timeline[idx]
    }
    /// Second `idx` of kind `kind` (grows that kind's timeline).
    pub fn kind_second(&mut self, kind: usize, idx: usize) -> &mut Second {
        let t = &mut self.kind_timeline[kind];
        while t.len() <= idx {
            t.push(Second::new());
        }
        &mut t[idx]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(samples: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram(3);
        for &s in samples {
            record(&mut h, s, 1);
        }
        h
    }

    #[test]
    fn percentiles_of_known_samples() {
        let samples: Vec<u64> = (1..=1000).map(|i| i * 10).collect(); // 10 µs .. 10 ms
        let h = hist(&samples);
        // 3 significant figures: values are exact within 0.1%.
        let p50 = value_at_percentile(&h, 50.0);
        assert!((4995..=5010).contains(&p50), "{p50}");
        let p99 = value_at_percentile(&h, 99.0);
        assert!((9890..=9910).contains(&p99), "{p99}");
        assert_eq!(value_at_percentile(&h, 100.0), h.highest_equivalent(10_000));
        assert_eq!(value_at_percentile(&h, 0.0), h.lowest_equivalent(10));
        let m = mean(&h);
        assert!((m - 5005.0).abs() < 10.0, "{m}");
    }

    #[test]
    fn percentile_lines_follow_half_distance_ticks() {
        let h = hist(&(0..1000).map(|i| 100 + i).collect::<Vec<_>>());
        let lines = percentile_lines(&h);
        let pcts: Vec<f64> = lines.iter().map(|l| l.percent).collect();
        assert_eq!(&pcts[..5], &[0.0, 50.0, 75.0, 87.5, 93.75]);
        let last = lines[lines.len() - 1];
        assert_eq!(last.percent, 100.0);
        assert_eq!(last.cumulative, 1000);
        assert_eq!(lines[0].cumulative, h.count_at(100));
    }

    #[test]
    fn single_sample_prints_two_lines() {
        let h = hist(&[79]);
        let lines = percentile_lines(&h);
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0].percent, lines[0].value_us, lines[0].cumulative), (0.0, 79, 1));
        assert_eq!((lines[1].percent, lines[1].cumulative), (100.0, 1));
    }

    #[test]
    fn cumulative_lines_step_100us_then_1ms() {
        let h = hist(&[50, 150, 1950, 2050, 5000]);
        let lines = cumulative_lines(&h);
        let vals: Vec<u64> = lines.iter().map(|l| l.value_us).collect();
        assert_eq!(vals, vec![103, 207, 2007, 2103, 5103]);
        assert_eq!(lines.last().map(|l| l.cumulative), Some(5));
        assert_eq!(lines[0].percent, 20.0);
    }

    #[test]
    fn errors_by_first_word() {
        let mut e = ErrorCounts::default();
        e.add(b"ERR unknown command");
        e.add(b"WRONGTYPE Operation against a key");
        e.add(b"ERR again");
        assert_eq!(e.summary(), "ERR: 2, WRONGTYPE: 1");
        assert_eq!(e.total(), 3);
    }

    #[test]
    fn ms_like_redis() {
        assert_eq!(format!("{:.3}", ms_f32(5911)), "5.911");
        assert_eq!(format!("{:.3}", ms_f32(79)), "0.079");
    }
}
