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
