//! `--hdr-log FILE` (issue 25): the latencies as HdrHistogram's interval log (`.hlog`:
//! V2 compressed histograms, one per line, as HdrHistogram's HistogramLogProcessor and
//! HistogramLogAnalyzer read them), written with the hdrhistogram crate. Values are
//! microseconds. The log holds one interval per second of the run (every kind together,
//! untagged) and one interval per command kind covering the whole run, tagged with the
//! kind's name.

use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use crate::stats::Second;

/// A tag as the log allows it (no comma or white space).
fn tag_text(name: &str) -> String {
    name.chars().map(|c| if c == ',' || c.is_whitespace() { '_' } else { c }).collect()
}

/// One interval of the log: `hist` over `length` from `offset` after the run's start,
/// tagged (a kind, a test) or not (a second of the run).
pub struct Interval<'a> {
    pub tag: Option<String>,
    pub offset: Duration,
    pub length: Duration,
    pub hist: &'a Histogram<u64>,
}

/// Writes the log of a run that started at `start_ms` (ms since the epoch): one
/// untagged interval per second (`seconds`), then one interval per kind over the whole
/// run, tagged with its name.
pub fn write(path: &std::path::Path, start_ms: u128, kinds: &[(String, &Histogram<u64>)], seconds: &[Second]) -> Result<(), String> {
    let run = Duration::from_secs(seconds.len().max(1) as u64);
    let per_second = seconds.iter().enumerate().map(|(i, s)| Interval {
        tag: None,
        offset: Duration::from_secs(i as u64),
        length: Duration::from_secs(1),
        hist: &s.hist,
    });
    let per_kind = kinds.iter().map(|(name, h)| Interval { tag: Some(name.clone()), offset: Duration::ZERO, length: run, hist: h });
    write_intervals(path, start_ms, &per_second.chain(per_kind).collect::<Vec<_>>())
}

/// Writes the intervals, in the order given, as the log of a run that started at
/// `start_ms` (ms since the epoch).
pub fn write_intervals(path: &std::path::Path, start_ms: u128, intervals: &[Interval<'_>]) -> Result<(), String> {
    let start = UNIX_EPOCH + Duration::from_millis(u64::try_from(start_ms).unwrap_or(0));
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let err = |e: &dyn std::fmt::Debug| format!("Could not write the HdrHistogram log {}: {e:?}", path.display());
    {
        let mut log = IntervalLogWriterBuilder::new()
            .add_comment("basalt-bench latencies, microseconds")
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut out, &mut serializer)
            .map_err(|e| err(&e))?;
        for i in intervals {
            let text = i.tag.as_deref().map(tag_text);
            let tag = text.as_deref().and_then(Tag::new);
            log.write_histogram(i.hist, i.offset, i.length, tag).map_err(|e| err(&e))?;
        }
    }
    std::fs::write(path, out).map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;

    #[test]
    fn the_log_reads_back_with_every_second_and_kind() {
        let mut set = crate::stats::new_histogram(3);
        set.record_n(100, 30).expect("record");
        let mut seconds = vec![Second::new(), Second::new()];
        seconds[0].hist.record_n(100, 10).expect("record");
        seconds[1].hist.record_n(200, 20).expect("record");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("run.hlog");
        write(&path, 1_700_000_000_000, &[("LRANGE 0 9".into(), &set)], &seconds).expect("write");
        let bytes = std::fs::read(&path).expect("read");
        let mut d = Deserializer::new();
        let mut got = Vec::new();
        for entry in IntervalLogIterator::new(&bytes) {
            if let Ok(LogEntry::Interval(ilh)) = entry {
                let raw = crate::report::base64_decode(ilh.encoded_histogram());
                let h: Histogram<u64> = d.deserialize(&mut raw.as_slice()).expect("histogram");
                got.push((ilh.tag().map(|t| t.as_str().to_string()), ilh.start_timestamp().as_secs(), h.len()));
            }
        }
        assert_eq!(got, vec![(None, 0, 10), (None, 1, 20), (Some("LRANGE_0_9".into()), 0, 30)]);
    }
}
