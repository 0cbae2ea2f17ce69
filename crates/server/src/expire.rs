//! The active expiry cycle: each event loop, on every tick (`hz` per second), walks the
//! shards it is responsible for and removes keys whose time has passed, so that keys
//! nobody reads again still go away. Shards without keys that carry a TTL cost nothing.
//!
//! Like Redis, a shard is walked again within the same tick while more than a quarter of
//! the keys with a TTL it examined had expired, within a time budget per tick.

use std::time::{Duration, Instant};

use crate::shared::Shared;

/// Bucket positions examined per step of one shard.
const STEP_BUCKETS: usize = 256;
/// Time budget per tick and event loop (Redis allows 25% of a tick; this is far less
/// at the default hz 10, and keeps request latency unaffected).
const TICK_BUDGET: Duration = Duration::from_millis(2);

/// Runs one tick of active expiry for the shards owned by event loop `worker` (the
/// latency monitor's `expire-cycle` event).
pub fn active_cycle(shared: &Shared, worker: usize, now_ms: i64) {
    let start = Instant::now();
    expire_shards(shared, worker, now_ms, start);
    shared.latency_monitor.observe("expire-cycle", start.elapsed());
}

fn expire_shards(shared: &Shared, worker: usize, now_ms: i64, start: Instant) {
    let ks = &shared.keyspace;
    let workers = shared.thread_stats.len().max(1);
    for db in 0..ks.databases() {
        for s in (worker..ks.shards_per_db()).step_by(workers) {
            // Checked without `lock`, which would make a running capture encode every
            // shard this cycle passes over.
            if ks.shard_volatile(db, s) == 0 {
                continue;
            }
            let mut shard = ks.lock(db, s);
            if shard.volatile() == 0 {
                continue;
            }
            loop {
                let step = shard.expire_step(now_ms, STEP_BUCKETS);
                if step.sampled == 0 || step.expired * 4 <= step.sampled || start.elapsed() > TICK_BUDGET {
                    break;
                }
            }
            // The `expired` events, while the shard is still locked (`notify.rs`); an
            // expiry reveals nothing the log must hold first.
            crate::notify::flush(shared, 0, 0);
            drop(shard);
            if start.elapsed() > TICK_BUDGET {
                return;
            }
        }
    }
}
