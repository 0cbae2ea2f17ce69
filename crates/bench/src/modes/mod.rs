//! The three ways to run: redis-benchmark mode, memtier mode and compare. Each turns its flags
//! into a validated config, drives the load and prints its report.

pub mod compare;
pub mod memtier;
pub mod redis;

use std::io::IsTerminal;

/// Whether stdout is a terminal (progress lines are drawn only then).
pub fn stdout_is_tty() -> bool {
    std::io::stdout().is_terminal()
}
