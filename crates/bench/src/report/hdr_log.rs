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

/// Writes the log of a run that started at `start_ms` (ms since the epoch).
pub fn write(path: &std::path::Path, start_ms: u128, kinds: &[(String, &Histogram<u64>)], seconds: &[Second]) -> Result<(), String> {
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
        for (i, s) in seconds.iter().enumerate() {
            log.write_histogram(&s.hist, Duration::from_secs(i as u64), Duration::from_secs(1), None)
                .map_err(|e| err(&e))?;
        }
        let run = Duration::from_secs(seconds.len().max(1) as u64);
        for (name, h) in kinds {
            let text = tag_text(name);
            log.write_histogram(*h, Duration::ZERO, run, Tag::new(&text)).map_err(|e| err(&e))?;
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
