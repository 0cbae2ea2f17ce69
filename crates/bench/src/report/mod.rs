//! Output formats behind one trait: redis-benchmark (full report, `-q`, `--csv`), memtier (text
//! table and JSON "Format version" 2), and the compare table.

pub mod compare;
pub mod hdr_log;
pub mod html;
pub mod memtier;
pub mod redis;
pub mod ycsb;

/// A format that turns finished tests into text: a header once, a block per test, a trailer.
pub trait Report<T> {
    /// Printed before the first test.
    fn begin(&mut self) -> String {
        String::new()
    }
    /// Printed for each finished test.
    fn test(&mut self, result: &T) -> String;
    /// Printed after the last test.
    fn end(&mut self) -> String {
        String::new()
    }
}

/// Standard base64 decoding, for tests that read back the histograms the reports encode
/// (the memtier JSON's, the HdrHistogram log's).
#[cfg(test)]
pub fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(val(c)) << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    out
}
