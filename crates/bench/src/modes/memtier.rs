//! memtier mode (not built yet).

/// Runs memtier mode.
pub fn main(_args: &[String]) -> anyhow::Result<i32> {
    eprintln!("memtier: not built yet");
    Ok(1)
}
