//! compare mode (not built yet).

/// Runs compare mode.
pub fn main(_args: &[String]) -> anyhow::Result<i32> {
    eprintln!("compare: not built yet");
    Ok(1)
}
