//! Per-command latency histograms (Redis 7's `latency-tracking`): every command's run
//! time in nanoseconds, counted per event loop, reported by INFO latencystats
//! (`latency_percentiles_usec_<cmd>:p50=...`) and LATENCY HISTOGRAM.
//!
//! Why not the `hdrhistogram` crate: its histogram cannot be read while its owner
//! records into it, and these are read by INFO from any loop while every loop records
//! a value per command. This is hdr's layout at Redis's precision (2 significant
//! digits: 128 linear buckets per power of two, exact below 256 ns, so every bucket
//! and reported value is the one Redis's hdr histogram has), kept in single-writer
//! atomics like the loop's other counters: recording is a bucket index and a plain load
//! and store, reading sums the loops' buckets. A command's buckets are allocated the
//! first time a loop runs it (31 KiB each).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::counters::bump;

/// Linear buckets per power of two (and the exact buckets below it).
const SUB: u64 = 128;
const SUB_BITS: u32 = 7;
/// Values below 2^(MAX_EXP + 1) ns (about 137 s) have their own bucket; longer ones
/// count in the last.
const MAX_EXP: u32 = 36;
const BUCKETS: usize = (SUB + (MAX_EXP as u64 + 1 - SUB_BITS as u64) * SUB) as usize;

#[inline]
fn index(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let exp = 63 - ns.leading_zeros();
    if exp > MAX_EXP {
        return BUCKETS - 1;
    }
    // The top SUB_BITS + 1 bits (SUB..2 * SUB) after the buckets of smaller exponents.
    (u64::from(exp - SUB_BITS) * SUB + (ns >> (exp - SUB_BITS))) as usize
}

/// The largest value that lands in bucket `i` (hdr's "highest equivalent value").
fn highest(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let exp = (i - SUB) / SUB + u64::from(SUB_BITS);
    let sub = (i - SUB) % SUB;
    let width = 1u64 << (exp - u64::from(SUB_BITS));
    (SUB + sub) * width + width - 1
}

/// One command's histogram in one loop.
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Counts one run of `ns` nanoseconds. Only the owning loop calls this.
    #[inline]
    fn record(&self, ns: u64) {
        bump(&self.buckets[index(ns)], 1);
    }
}

/// A loop's histograms, one slot per command of the table.
pub struct LoopLatencies {
    commands: Box<[OnceLock<Histogram>]>,
}

impl LoopLatencies {
    pub fn new(commands: usize) -> LoopLatencies {
        LoopLatencies {
            commands: (0..commands).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Counts one run of command `idx`. Only the owning loop calls this.
    #[inline]
    pub fn record(&self, idx: usize, ns: u64) {
        match self.commands[idx].get() {
            Some(h) => h.record(ns),
            None => self.first_record(idx, ns),
        }
    }

    /// The first run of a command on this loop allocates its histogram.
    #[cold]
    #[inline(never)]
    fn first_record(&self, idx: usize, ns: u64) {
        self.commands[idx].get_or_init(Histogram::new).record(ns);
    }

    /// Zeroes every count (CONFIG RESETSTAT); racy against the owner like the other
    /// counters' reset.
    pub fn reset(&self) {
        for h in self.commands.iter().filter_map(OnceLock::get) {
            for b in h.buckets.iter() {
                b.store(0, Ordering::Relaxed);
            }
        }
    }
}

/// A command's histogram summed over the loops, for reporting.
pub struct Merged {
    counts: Vec<u64>,
    total: u64,
}

impl Merged {
    /// Command `idx`'s counts over `loops`; None when no loop ran it since start or the
    /// last reset.
    pub fn of<'a>(
        loops: impl IntoIterator<Item = &'a LoopLatencies>,
        idx: usize,
    ) -> Option<Merged> {
        let mut counts = vec![0u64; BUCKETS];
        let mut seen = false;
        for l in loops {
            if let Some(h) = l.commands[idx].get() {
                seen = true;
                for (c, b) in counts.iter_mut().zip(h.buckets.iter()) {
                    *c += b.load(Ordering::Relaxed);
                }
            }
        }
        let total = counts.iter().sum();
        (seen && total > 0).then_some(Merged { counts, total })
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The value at a percentile, in nanoseconds, as hdr_value_at_percentile computes it:
    /// the highest value of the bucket where the count reaches the percentile's rank.
    pub fn percentile(&self, p: f64) -> u64 {
        let p = p.min(100.0);
        let rank = ((p / 100.0 * self.total as f64) + 0.5) as u64;
        let rank = rank.max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return highest(i);
            }
        }
        0
    }

    /// LATENCY HISTOGRAM's cumulative distribution: (bucket limit in microseconds,
    /// runs at or below it) at 1, 2, 4 ... microseconds (hdr's logarithmic iteration
    /// from 1,024 ns, doubling), only where the count grew, until every run is counted.
    pub fn cdf(&self) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut limit_ns = 1024u64;
        let mut cumulative = 0u64;
        let mut i = 0;
        let mut previous = 0;
        while cumulative < self.total {
            while i < BUCKETS && highest(i) < limit_ns {
                cumulative += self.counts[i];
                i += 1;
            }
            // The bucket holding the limit counts as at or below it (hdr iterates to the
            // limit's highest equivalent value).
            if i < BUCKETS && index(limit_ns) == i {
                cumulative += self.counts[i];
                i += 1;
            }
            if cumulative > previous {
                out.push((highest(index(limit_ns)) / 1000, cumulative));
            }
            previous = cumulative;
            if i >= BUCKETS {
                break;
            }
            limit_ns = limit_ns.saturating_mul(2);
        }
        out
    }
}

/// `50 99 99.9` as Redis prints a percentile list (`%f` with trailing zeros cut).
pub fn format_percentile(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0');
    s.trim_end_matches('.').to_string()
}

/// Parses `latency-tracking-info-percentiles`: numbers from 0 to 100 separated by
/// spaces (none is allowed). The error texts are Redis's.
pub fn parse_percentiles(v: &str) -> Result<Vec<f64>, &'static str> {
    v.split_whitespace()
        .map(|w| {
            let p: f64 = w
                .parse()
                .map_err(|_| "Invalid latency-tracking-info-percentiles parameters")?;
            if !(0.0..=100.0).contains(&p) {
                return Err(
                    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
                );
            }
            Ok(p)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_within_one_128th() {
        for ns in [
            0u64,
            1,
            63,
            64,
            65,
            127,
            128,
            1000,
            1023,
            1024,
            123_456,
            10_000_000_007,
            u64::MAX,
        ] {
            let i = index(ns);
            assert!(i < BUCKETS, "{ns}");
            if ns < 1 << (MAX_EXP + 1) {
                let hi = highest(i);
                assert!(
                    hi >= ns && hi - ns <= ns / 128,
                    "{ns}: bucket {i} ends at {hi}"
                );
                assert!(i == 0 || highest(i - 1) < ns, "{ns}");
            }
        }
        for i in 0..BUCKETS - 1 {
            assert_eq!(index(highest(i)), i);
            assert_eq!(index(highest(i) + 1), i + 1);
        }
    }

    #[test]
    fn percentiles_and_cdf() {
        let l = LoopLatencies::new(1);
        for ns in 1..=1000u64 {
            l.record(0, ns * 1000);
        }
        let m = Merged::of([&l], 0).expect("recorded");
        assert_eq!(m.total(), 1000);
        let p50 = m.percentile(50.0);
        assert!((500_000..=504_000).contains(&p50), "{p50}");
        // hdr's highest equivalent values at 2 significant digits.
        assert_eq!(highest(index(1024)), 1031);
        assert_eq!(highest(index(1_048_576)), 1_056_767);
        assert!(m.percentile(100.0) >= 1_000_000);
        assert_eq!(m.percentile(0.0), highest(index(1000)));
        let cdf = m.cdf();
        assert_eq!(cdf.first(), Some(&(1, 1)));
        assert_eq!(cdf.last().map(|c| c.1), Some(1000));
        assert!(
            cdf.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1),
            "{cdf:?}"
        );
        l.reset();
        assert!(Merged::of([&l], 0).is_none());
        assert_eq!(format_percentile(99.9), "99.9");
        assert_eq!(format_percentile(50.0), "50");
        assert_eq!(parse_percentiles("50 99 99.9"), Ok(vec![50.0, 99.0, 99.9]));
        assert_eq!(parse_percentiles(""), Ok(vec![]));
        assert!(parse_percentiles("101").is_err() && parse_percentiles("abc").is_err());
    }
}
