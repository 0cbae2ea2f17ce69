//! `maxmemory`: the memory limit and the eviction that keeps it, as Redis 7.0's
//! (`evict.c`). Before each command, while the memory in use is over `maxmemory`, keys
//! are removed by `maxmemory-policy` until it is under, or until the time
//! `maxmemory-eviction-tenacity` allows one command has passed; a command that may add
//! memory (`denyoom`) is then refused with `-OOM` (the dispatcher's admit phase).
//!
//! **Memory in use** is jemalloc's allocated bytes (INFO `used_memory`), read at most
//! once a millisecond (a stats refresh costs microseconds and takes jemalloc's lock);
//! in between, an estimate: that reading, plus the argument bytes of the writes run
//! since, minus what eviction freed. So the limit holds within what one millisecond of
//! writes adds, and a command pays nothing but a load while under it.
//!
//! **Picks**, as Redis's approximations: for the LRU, LFU and TTL policies, each pick
//! samples `maxmemory-samples` keys from a random shard of every database (the keys
//! with a TTL only, for the volatile- policies) and keeps the best 16 candidates in a
//! pool of this thread's (the longest idle; the lowest access frequency, decayed per
//! `lfu-decay-time`; the nearest expiry), then evicts the best that still exists; the
//! random policies evict a sampled key at once. An evicted key is logged as DEL (the
//! store's expiry hook, which may defer it while another thread's write to it is in
//! flight), reported as an `evicted` keyspace event, invalidated for client-side
//! caching, and touches WATCH, as Redis.
//!
//! LFU counters live in the entry's access field (`store::clock::Touch`): under an LFU
//! policy a read increments it logarithmically (`lfu-log-factor`), and OBJECT FREQ
//! reads it.
//!
//! Not here: the keys (the store), the log (the store asks the AOF through its hook),
//! the refusal itself (the dispatcher).

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::shared::{bump, Shared, ThreadStats};

/// Redis's reply to a `denyoom` command it cannot make room for.
pub const OOM_ERROR: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Candidates kept between picks (Redis's EVPOOL_SIZE).
const POOL_SIZE: usize = 16;

pub use crate::state::memory::{Memory, Policy};

/// A candidate of the pool: higher `score` is evicted first.
struct Candidate {
    score: u64,
    db: usize,
    key: Box<[u8]>,
}

thread_local! {
    /// This thread's pool of candidates, sorted by score, best last, and the policy
    /// that scored them (a new policy starts an empty pool).
    static POOL: RefCell<Vec<Candidate>> = const { RefCell::new(Vec::new()) };
    static POOL_POLICY: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Makes room before a command (Redis's performEvictions): Ok when memory is under
/// `maxmemory` (or no limit is set), or when the time one command may spend ran out
/// with keys left to evict (Redis's EVICT_RUNNING: the next commands and the loop's
/// tick go on); Err when it is still over with no policy or nothing left to evict
/// (Redis's EVICT_FAIL). Evicted keys are counted in `stats`.
///
/// A replica evicts nothing and refuses nothing under `replica-ignore-maxmemory yes`
/// (Redis's default): its data set is its master's, and a key it evicted on its own
/// would be a key its clients miss and its master still has (with `no` it evicts as a
/// master, propagating nothing, as Redis's). Nor does a server while it loads its data
/// (Redis's isSafeToPerformEvictions): its clients' commands get `-LOADING` then, and
/// the data set is evicted from once it is whole; a replica loading aside (`swapdb`)
/// holds two data sets for a while, the old one about to go.
pub fn make_room(shared: &Shared, stats: &ThreadStats, now_ms: i64, rng: &mut fastrand::Rng) -> Result<(), ()> {
    let admit = shared.replica.admit_bits();
    if admit & (crate::replication::role::LOADING | crate::replication::role::ASYNC_LOADING) != 0
        || (admit & crate::replication::role::REPLICA != 0 && shared.memory.replica_ignores())
    {
        return Ok(());
    }
    let mem = &shared.memory;
    let mut over = mem.over();
    if over <= 0 {
        return Ok(());
    }
    let policy = mem.policy();
    if policy == Policy::NoEviction {
        return Err(());
    }
    let started = Instant::now();
    let limit = mem.time_limit_us();
    let mut evicted_any = false;
    let mut out_of_time = false;
    while over > 0 {
        let Some(freed) = evict_one(shared, policy, now_ms, rng) else { break };
        bump(&stats.evicted_keys, 1);
        evicted_any = true;
        mem.since.fetch_sub(freed as i64, Ordering::Relaxed);
        over -= freed as i64;
        if limit.is_some_and(|l| started.elapsed().as_micros() as u64 >= l) {
            out_of_time = true;
            break;
        }
        if over <= 0 {
            // The estimate says done: check it against jemalloc (when due).
            over = mem.over();
        }
    }
    if evicted_any {
        // The `evicted` events (and the invalidations they bring), as the active
        // expiry cycle publishes its own.
        crate::notify::flush(shared, 0, 0);
    }
    if over > 0 && !out_of_time {
        Err(())
    } else {
        Ok(())
    }
}

/// The event loop's tick: goes on evicting while memory is over the limit, so that
/// eviction that ran out of time before a command finishes without waiting for the
/// next one (Redis's eviction timer).
pub fn tick(shared: &Shared, owner: usize, now_ms: i64) {
    if !shared.memory.limited() {
        return;
    }
    let mut rng = fastrand::Rng::new();
    let _ = make_room(shared, &shared.thread_stats[owner], now_ms, &mut rng);
}

/// Evicts one key by `policy`; the bytes it freed, or None when there is nothing to
/// evict.
fn evict_one(shared: &Shared, policy: Policy, now_ms: i64, rng: &mut fastrand::Rng) -> Option<usize> {
    let ks = &shared.keyspace;
    let samples = shared.memory.samples.load(Ordering::Relaxed) as usize;
    if POOL_POLICY.with(|p| p.replace(policy.code())) != policy.code() {
        POOL.with(|p| p.borrow_mut().clear());
    }
    // Some rounds: candidates may be gone (or deferred) by the time they are picked.
    for _ in 0..8 + POOL_SIZE {
        if policy.random() {
            let (db, key) = random_key(shared, policy.volatile(), rng)?;
            if let Some(freed) = remove(shared, db, &key, now_ms) {
                return Some(freed);
            }
            continue;
        }
        let mut found_any = populate(shared, policy, samples, now_ms, rng);
        if !found_any {
            // The databases were counted before they filled: count again.
            DBS.with(|cache| cache.borrow_mut().0 = None);
            found_any = populate(shared, policy, samples, now_ms, rng);
        }
        let best = POOL.with(|p| p.borrow_mut().pop());
        let Some(best) = best else {
            if !found_any {
                return None;
            }
            continue;
        };
        // Still there (and still with a TTL for the volatile policies)?
        let (h, shard) = ks.lock_key(best.db, &best.key);
        let alive = shard
            .peek(h, &best.key, now_ms)
            .is_some_and(|e| !policy.volatile() || e.expire_at_ms().is_some());
        drop(shard);
        if alive {
            if let Some(freed) = remove(shared, best.db, &best.key, now_ms) {
                return Some(freed);
            }
        }
    }
    None
}

/// Removes an evicted key: WATCH sees it, the store pushes its event and the log its DEL.
fn remove(shared: &Shared, db: usize, key: &[u8], now_ms: i64) -> Option<usize> {
    let (h, mut shard) = shared.keyspace.lock_key(db, key);
    let freed = shard.evict(h, key, now_ms)?;
    drop(shard);
    shared.touch(db, key);
    Some(freed)
}

/// When the databases were last counted, and each one that held keys then (with
/// whether it held keys with a TTL).
type DbsCounted = (Option<Instant>, Vec<(usize, bool)>);

thread_local! {
    /// The databases that held keys (and keys with a TTL) when last counted, and when:
    /// sampling skips the empty ones (counting locks every shard: at most every 100 ms).
    static DBS: RefCell<DbsCounted> = const { RefCell::new((None, Vec::new())) };
}

/// The databases with keys (with keys that have a TTL, when `volatile`).
fn databases_with_keys(shared: &Shared, volatile: bool) -> Vec<usize> {
    DBS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.0.is_none_or(|at| at.elapsed().as_millis() >= 100) {
            let ks = &shared.keyspace;
            cache.1 = (0..ks.databases())
                .filter_map(|db| {
                    let (keys, vol) = ks.db_counts(db);
                    (keys > 0).then_some((db, vol > 0))
                })
                .collect();
            cache.0 = Some(Instant::now());
        }
        cache.1.iter().filter(|(_, vol)| !volatile || *vol).map(|(db, _)| *db).collect()
    })
}

/// Samples every database with keys into the pool; false when no key was found.
fn populate(shared: &Shared, policy: Policy, samples: usize, now_ms: i64, rng: &mut fastrand::Rng) -> bool {
    let mut found = false;
    let now_lru = store::clock::lru_clock(now_ms);
    for db in databases_with_keys(shared, policy.volatile()) {
        let Some(picked) = sample_shard(shared, db, samples, policy.volatile(), rng) else { continue };
        found = true;
        POOL.with(|p| {
            let mut pool = p.borrow_mut();
            for (key, access, expire) in picked {
                let score = match policy {
                    Policy::AllkeysLfu | Policy::VolatileLfu => 255 - u64::from(shared.memory.frequency(access, now_ms)),
                    Policy::VolatileTtl => u64::MAX - expire.unwrap_or(i64::MAX).max(0) as u64,
                    _ => u64::from(now_lru.wrapping_sub(access)),
                };
                if pool.iter().any(|c| c.db == db && c.key == key) {
                    continue;
                }
                if pool.len() == POOL_SIZE && pool.first().is_some_and(|c| c.score >= score) {
                    continue;
                }
                let at = pool.partition_point(|c| c.score < score);
                pool.insert(at, Candidate { score, db, key });
                if pool.len() > POOL_SIZE {
                    pool.remove(0);
                }
            }
        });
    }
    found
}

/// Up to `n` sampled keys of one random non-empty shard of `db` (a few shards tried).
fn sample_shard(
    shared: &Shared,
    db: usize,
    n: usize,
    volatile: bool,
    rng: &mut fastrand::Rng,
) -> Option<Vec<store::shard::Sampled>> {
    let ks = &shared.keyspace;
    for _ in 0..16 {
        let s = rng.usize(..ks.shards_per_db());
        let picked = ks.lock(db, s).sample(rng, n, volatile);
        if !picked.is_empty() {
            return Some(picked);
        }
    }
    None
}

/// A random key (with a TTL when `volatile`) of a random database that has one.
fn random_key(shared: &Shared, volatile: bool, rng: &mut fastrand::Rng) -> Option<(usize, Box<[u8]>)> {
    let mut dbs = databases_with_keys(shared, volatile);
    if dbs.is_empty() {
        DBS.with(|cache| cache.borrow_mut().0 = None);
        dbs = databases_with_keys(shared, volatile);
    }
    if dbs.is_empty() {
        return None;
    }
    let first = rng.usize(..dbs.len());
    for i in 0..dbs.len() {
        let db = dbs[(first + i) % dbs.len()];
        if let Some(mut picked) = sample_shard(shared, db, 1, volatile, rng) {
            return picked.pop().map(|(k, _, _)| (db, k));
        }
    }
    None
}
