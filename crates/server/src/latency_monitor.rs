//! The latency monitor, as Redis's (`latency-monitor-threshold`; LATENCY LATEST, HISTORY,
//! RESET, GRAPH and DOCTOR read it): with a threshold set (milliseconds; 0, the default, is off), every
//! monitored event that took at least that long is recorded in its event's series: the
//! last 160 seconds in which it happened (one sample per second, the second's worst),
//! and its worst ever.
//!
//! Events recorded: `command` and `fast-command` (a command's run time, by its FAST
//! flag), `expire-cycle` (an event loop's active expiry tick), `aof-write` (a write of
//! the append-only log, by the writer thread or an event loop), `aof-fsync-always` (a
//! durable commit under `appendfsync always`: the writer's fdatasync or a loop's
//! direct write and fdatasync). Redis's events about fork, eviction and its child process have no
//! counterpart here. Samples are rare by design (over a threshold), so one lock guards
//! all series; the common path is one relaxed load of the threshold.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Samples kept per event (Redis's LATENCY_TS_LEN).
pub const SAMPLES: usize = 160;

#[derive(Clone, Copy, Default)]
struct Sample {
    /// Unix seconds; 0 for an unused slot.
    time: i64,
    latency_ms: u64,
}

struct Series {
    samples: [Sample; SAMPLES],
    /// The slot the next new second goes to.
    next: usize,
    max_ms: u64,
}

impl Series {
    fn new() -> Series {
        Series { samples: [Sample::default(); SAMPLES], next: 0, max_ms: 0 }
    }

    fn latest(&self) -> Sample {
        self.samples[(self.next + SAMPLES - 1) % SAMPLES]
    }

    /// The samples kept, oldest first.
    fn in_order(&self) -> impl Iterator<Item = Sample> + '_ {
        (0..SAMPLES).map(|i| self.samples[(self.next + i) % SAMPLES]).filter(|s| s.time != 0)
    }
}

/// The series of the event named exactly `event` (HISTORY and GRAPH match names as
/// Redis does, case and all).
fn series_named<'a>(events: &'a BTreeMap<&'static str, Series>, event: &[u8]) -> Option<(&'static str, &'a Series)> {
    events.iter().find(|(name, _)| name.as_bytes() == event).map(|(&name, s)| (name, s))
}

/// The latest sample of one event (LATENCY LATEST's row).
pub struct Latest {
    pub event: &'static str,
    pub time: i64,
    pub latency_ms: u64,
    pub max_ms: u64,
}

#[derive(Default)]
pub struct LatencyMonitor {
    /// `latency-monitor-threshold` in milliseconds; 0: off.
    threshold_ms: AtomicU64,
    events: Mutex<BTreeMap<&'static str, Series>>,
}

impl LatencyMonitor {
    pub fn set_threshold_ms(&self, ms: u64) {
        self.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// Records `took` for `event` if the monitor is on and it reached the threshold.
    #[inline]
    pub fn observe(&self, event: &'static str, took: Duration) {
        let threshold = self.threshold_ms.load(Ordering::Relaxed);
        if threshold == 0 {
            return;
        }
        let ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
        if ms >= threshold {
            self.add(event, ms, unix_seconds());
        }
    }

    /// The start of something to time for [`observe_since`](Self::observe_since): None
    /// (no clock read) while the monitor is off.
    #[inline]
    pub fn start(&self) -> Option<Instant> {
        (self.threshold_ms.load(Ordering::Relaxed) != 0).then(Instant::now)
    }

    /// Records the time since `started` (from [`start`](Self::start)) for `event`.
    #[inline]
    pub fn observe_since(&self, event: &'static str, started: Option<Instant>) {
        if let Some(started) = started {
            self.observe(event, started.elapsed());
        }
    }

    /// [`observe`](Self::observe) for a time in microseconds.
    #[inline]
    pub fn observe_us(&self, event: &'static str, us: u64) {
        if self.threshold_ms.load(Ordering::Relaxed) != 0 {
            self.observe(event, Duration::from_micros(us));
        }
    }

    /// Adds a sample at `now` (Unix seconds): a new second takes the next slot, a
    /// second already sampled keeps the worst of the two.
    fn add(&self, event: &'static str, ms: u64, now: i64) {
        let mut events = self.events.lock();
        let series = events.entry(event).or_insert_with(Series::new);
        series.max_ms = series.max_ms.max(ms);
        let prev = (series.next + SAMPLES - 1) % SAMPLES;
        if series.samples[prev].time == now {
            series.samples[prev].latency_ms = series.samples[prev].latency_ms.max(ms);
            return;
        }
        series.samples[series.next] = Sample { time: now, latency_ms: ms };
        series.next = (series.next + 1) % SAMPLES;
    }

    /// Every event's latest sample and worst ever.
    pub fn latest(&self) -> Vec<Latest> {
        self.events
            .lock()
            .iter()
            .map(|(&event, s)| {
                let last = s.latest();
                Latest { event, time: last.time, latency_ms: last.latency_ms, max_ms: s.max_ms }
            })
            .collect()
    }

    /// An event's samples, oldest first, as (Unix seconds, milliseconds).
    pub fn history(&self, event: &[u8]) -> Vec<(i64, u64)> {
        let events = self.events.lock();
        series_named(&events, event)
            .map(|(_, series)| series.in_order().map(|s| (s.time, s.latency_ms)).collect())
            .unwrap_or_default()
    }

    /// Drops the named events' series (all of them when `events` is empty; names match
    /// case-insensitively, as Redis's RESET compares them, while HISTORY's lookup is
    /// exact); returns how many existed.
    pub fn reset(&self, events: &[&[u8]]) -> usize {
        let mut all = self.events.lock();
        if events.is_empty() {
            let n = all.len();
            all.clear();
            return n;
        }
        let mut n = 0;
        for name in events {
            let found = all.keys().find(|k| k.as_bytes().eq_ignore_ascii_case(name)).copied();
            if let Some(k) = found {
                all.remove(k);
                n += 1;
            }
        }
        n
    }
}

/// Columns of LATENCY GRAPH's chart, and its rows above the labels.
const GRAPH_COLUMNS: usize = 80;
const GRAPH_ROWS: usize = 4;
/// A column's top character by the third of a row its value reaches; filled rows
/// below it are '|'.
const GRAPH_TOPS: [u8; 3] = [b'_', b'o', b'#'];

impl LatencyMonitor {
    /// LATENCY GRAPH's text for `event` at `now` (Unix seconds), as Redis 7.0 draws it:
    /// a title with the high and low of the samples kept and the worst ever, a rule,
    /// then the samples oldest first, one column each, scaled from the lowest (bottom)
    /// to the highest (top) over four rows of three steps, each labelled vertically
    /// with how long ago it was (`12s`, `3m`, `5h`, `2d`), 80 columns to a block. None
    /// when the event has no samples.
    pub fn graph(&self, event: &[u8], now: i64) -> Option<String> {
        let events = self.events.lock();
        let (name, series) = series_named(&events, event)?;
        let samples: Vec<Sample> = series.in_order().collect();
        let high = samples.iter().map(|s| s.latency_ms).max()?;
        let low = samples.iter().map(|s| s.latency_ms).min()?;
        let mut out = format!("{name} - high {high} ms, low {low} ms (all time high {} ms)\n", series.max_ms);
        out.push_str(&"-".repeat(GRAPH_COLUMNS));
        out.push('\n');
        let range = (high - low).max(1) as f64;
        let steps = GRAPH_TOPS.len() * GRAPH_ROWS;
        let columns: Vec<(usize, String)> = samples
            .iter()
            .map(|s| {
                // Whole steps of the range, as Redis rounds them (down, then clamped).
                let step = (((s.latency_ms - low) as f64 * steps as f64) / range) as usize;
                (step.min(steps - 1), ago(now - s.time))
            })
            .collect();
        for (block, chunk) in columns.chunks(GRAPH_COLUMNS).enumerate() {
            if block > 0 {
                out.push('\n');
            }
            for row in 0..GRAPH_ROWS {
                let floor = (GRAPH_ROWS - row - 1) * GRAPH_TOPS.len();
                let line: String = chunk
                    .iter()
                    .map(|&(step, _)| match step.checked_sub(floor) {
                        Some(i) if i < GRAPH_TOPS.len() => GRAPH_TOPS[i] as char,
                        Some(_) => '|',
                        None => ' ',
                    })
                    .collect();
                out.push_str(&line);
                out.push('\n');
            }
            // A blank line, then the labels downwards, one character per line.
            out.push_str(&" ".repeat(chunk.len()));
            out.push('\n');
            let longest = chunk.iter().map(|(_, label)| label.len()).max().unwrap_or(0);
            for i in 0..longest {
                let line: String = chunk
                    .iter()
                    .map(|(_, label)| label.as_bytes().get(i).map_or(' ', |&b| b as char))
                    .collect();
                out.push_str(&line);
                out.push('\n');
            }
        }
        Some(out)
    }
}

impl LatencyMonitor {
    /// LATENCY DOCTOR's report at `now` (Unix seconds). Its opening lines, and each
    /// event's statistics line (samples kept, their mean and mean absolute deviation in
    /// whole milliseconds, seconds between spikes since the oldest, the worst ever), are
    /// Redis 7.0's; the advice that follows is Basalt's own, for its events and its
    /// design (Redis's speaks of fork, transparent huge pages and its child process).
    /// `slowlog_us`: `slowlog-log-slower-than`.
    pub fn doctor(&self, now: i64, slowlog_us: i64) -> String {
        let events = self.events.lock();
        if events.is_empty() {
            return if self.threshold_ms.load(Ordering::Relaxed) == 0 {
                "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".to_string()
            } else {
                "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n".to_string()
            };
        }
        let mut out = String::from(
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n",
        );
        for (n, (name, series)) in events.iter().enumerate() {
            let samples: Vec<Sample> = series.in_order().collect();
            let count = samples.len().max(1) as u64;
            let avg = samples.iter().map(|s| s.latency_ms).sum::<u64>() / count;
            let mad = samples.iter().map(|s| s.latency_ms.abs_diff(avg)).sum::<u64>() / count;
            let oldest = samples.iter().map(|s| s.time).min().unwrap_or(now);
            let period = (now - oldest).max(1) as f64 / count as f64;
            out.push_str(&format!(
                "{}. {name}: {} latency spikes (average {avg}ms, mean deviation {mad}ms, period {period:.2} sec). Worst all time event {}ms.\n",
                n + 1,
                samples.len(),
                series.max_ms
            ));
        }
        out.push_str("\nI have a few advices for you:\n\n");
        let has = |event: &str| events.contains_key(event);
        if has("command") || has("fast-command") {
            if slowlog_us < 0 {
                out.push_str("- The slow log is off (slowlog-log-slower-than is negative): turn it on to learn which commands are slow.\n");
            } else {
                out.push_str(&format!("- SLOWLOG GET lists the commands that ran over {slowlog_us} microseconds (slowlog-log-slower-than), with their arguments.\n"));
            }
            out.push_str("- Commands over whole large collections (KEYS, SMEMBERS, HGETALL, LRANGE or ZRANGE of a large key, SORT, DEL of a large key) take time in proportion to their size and hold that key's shard meanwhile: prefer the SCAN family, ranges and smaller keys.\n");
        }
        if has("fast-command") {
            out.push_str("- A command flagged fast (constant or logarithmic time) was slow: the server was probably starved of CPU (other processes, a busy host, swapping). Check the host's load and the steal time.\n");
        }
        if has("expire-cycle") {
            out.push_str("- The active expiry cycle was slow: many keys expiring in the same moment, or large keys expiring (each is freed as it goes). Spread expiry times with some jitter.\n");
        }
        if has("aof-write") || has("aof-fsync-always") {
            out.push_str("- The disk is slow for the append-only log. Basalt's event loops never wait for it, but every acknowledgement of a write does under appendfsync always (and a write's own reads wait for it): check the device (iostat -x), give the log a disk of its own, or accept appendfsync everysec.\n");
        }
        out
    }
}

/// How long ago, as LATENCY GRAPH labels a sample.
fn ago(seconds: i64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

pub fn unix_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_per_second_the_worst_and_the_worst_ever() {
        let m = LatencyMonitor::default();
        m.add("command", 5, 100);
        m.add("command", 9, 100);
        m.add("command", 7, 100);
        m.add("command", 3, 101);
        assert_eq!(m.history(b"command"), vec![(100, 9), (101, 3)]);
        let latest = m.latest();
        assert_eq!(latest.len(), 1);
        assert_eq!((latest[0].event, latest[0].time, latest[0].latency_ms, latest[0].max_ms), ("command", 101, 3, 9));
    }

    #[test]
    fn the_series_keeps_the_last_160_seconds() {
        let m = LatencyMonitor::default();
        for t in 1..=200 {
            m.add("expire-cycle", t as u64, t);
        }
        let h = m.history(b"expire-cycle");
        assert_eq!(h.len(), SAMPLES);
        assert_eq!(h.first(), Some(&(41, 41)));
        assert_eq!(h.last(), Some(&(200, 200)));
        assert_eq!(m.latest()[0].max_ms, 200);
    }

    #[test]
    fn graph_draws_redis_7_0s_chart() {
        let m = LatencyMonitor::default();
        assert_eq!(m.graph(b"command", 100), None);
        // Redis 7.0.15 drew exactly this for a 200 ms spike 2 s ago and a 300 ms one
        // just now.
        m.add("command", 200, 98);
        m.add("command", 300, 100);
        let want = format!(
            "command - high 300 ms, low 200 ms (all time high 300 ms)\n{}\n #\n |\n |\n_|\n  \n20\nss\n",
            "-".repeat(80)
        );
        assert_eq!(m.graph(b"command", 100).as_deref(), Some(want.as_str()));
        // One sample: the range is taken as 1 ms, the column sits at the bottom.
        let one = LatencyMonitor::default();
        one.add("aof-write", 120, 1000);
        let got = one.graph(b"aof-write", 1000 + 3 * 3600).unwrap();
        assert!(got.ends_with("\n \n \n \n_\n \n3\nh\n"), "{got:?}");
        // More than 80 samples: blocks of 80 columns, a blank line between them.
        let many = LatencyMonitor::default();
        for t in 1..=100 {
            many.add("expire-cycle", t as u64, t);
        }
        let got = many.graph(b"expire-cycle", 100).unwrap();
        let blocks: Vec<&str> = got.split("\n\n").collect();
        assert_eq!(blocks.len(), 2, "{got}");
        assert!(blocks[1].lines().next().unwrap().len() == 20, "{got}");
    }

    #[test]
    fn doctor_reports_each_event_as_redis_does() {
        let m = LatencyMonitor::default();
        assert!(m.doctor(100, 10_000).starts_with("I'm sorry, Dave, I can't do that."));
        m.set_threshold_ms(100);
        assert!(m.doctor(100, 10_000).starts_with("Dave, no latency spike was observed"));
        // Redis 7.0.15's statistics line for spikes of 200 and 300 ms two seconds apart.
        m.add("command", 200, 98);
        m.add("command", 300, 100);
        let report = m.doctor(100, 10_000);
        assert!(report.starts_with(
            "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
             1. command: 2 latency spikes (average 250ms, mean deviation 50ms, period 1.00 sec). Worst all time event 300ms.\n\n\
             I have a few advices for you:\n\n- SLOWLOG GET"
        ), "{report}");
        m.add("aof-write", 150, 100);
        let report = m.doctor(100, -1);
        assert!(report.contains("\n1. aof-write: 1 latency spikes (average 150ms, mean deviation 0ms, period 1.00 sec). Worst all time event 150ms.\n2. command:"), "{report}");
        assert!(report.contains("- The slow log is off") && report.contains("- The disk is slow"), "{report}");
    }

    #[test]
    fn off_below_threshold_and_reset() {
        let m = LatencyMonitor::default();
        m.observe("command", Duration::from_secs(5));
        assert!(m.latest().is_empty(), "threshold 0 is off");
        m.set_threshold_ms(10);
        m.observe("command", Duration::from_millis(9));
        assert!(m.latest().is_empty());
        m.observe("command", Duration::from_millis(10));
        m.observe_us("aof-write", 25_000);
        assert_eq!(m.latest().len(), 2);
        assert_eq!(m.reset(&[b"aof-write", b"nope"]), 1);
        assert_eq!(m.reset(&[]), 1);
        assert!(m.latest().is_empty());
    }
}
