//! Counters that one thread writes and others read (per-loop statistics).

use std::sync::atomic::{AtomicU64, Ordering};

/// Adds to a counter that only the calling thread writes.
#[inline]
pub fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}
