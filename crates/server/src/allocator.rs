//! The allocator's own figures (jemalloc): bytes allocated (INFO `used_memory`, the
//! memory limit's reading), active and resident.

/// jemalloc's active and resident bytes (as of its last stats refresh).
pub fn active_resident() -> (u64, u64) {
    (
        jemalloc_stat(tikv_jemalloc_ctl::stats::active::read),
        jemalloc_stat(tikv_jemalloc_ctl::stats::resident::read),
    )
}

/// Bytes allocated through the allocator (jemalloc's stats.allocated).
pub fn allocated_bytes() -> u64 {
    let _ = tikv_jemalloc_ctl::epoch::advance();
    tikv_jemalloc_ctl::stats::allocated::read().unwrap_or(0) as u64
}

fn jemalloc_stat(read: fn() -> tikv_jemalloc_ctl::Result<usize>) -> u64 {
    read().unwrap_or(0) as u64
}
