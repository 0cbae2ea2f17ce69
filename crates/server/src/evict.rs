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
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use crate::config::Config;
use crate::shared::{bump, Shared, ThreadStats};

/// Redis's reply to a `denyoom` command it cannot make room for.
pub const OOM_ERROR: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Candidates kept between picks (Redis's EVPOOL_SIZE).
const POOL_SIZE: usize = 16;

/// `maxmemory-policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    NoEviction,
    AllkeysLru,
    VolatileLru,
    AllkeysLfu,
    VolatileLfu,
    AllkeysRandom,
    VolatileRandom,
    VolatileTtl,
}

impl Policy {
    pub fn parse(name: &str) -> Policy {
        match name {
            "allkeys-lru" => Policy::AllkeysLru,
            "volatile-lru" => Policy::VolatileLru,
            "allkeys-lfu" => Policy::AllkeysLfu,
            "volatile-lfu" => Policy::VolatileLfu,
            "allkeys-random" => Policy::AllkeysRandom,
            "volatile-random" => Policy::VolatileRandom,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }

    fn volatile(self) -> bool {
        matches!(self, Policy::VolatileLru | Policy::VolatileLfu | Policy::VolatileRandom | Policy::VolatileTtl)
    }

    pub fn lfu(self) -> bool {
        matches!(self, Policy::AllkeysLfu | Policy::VolatileLfu)
    }

    fn random(self) -> bool {
        matches!(self, Policy::AllkeysRandom | Policy::VolatileRandom)
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Policy {
        [
            Policy::NoEviction,
            Policy::AllkeysLru,
            Policy::VolatileLru,
            Policy::AllkeysLfu,
            Policy::VolatileLfu,
            Policy::AllkeysRandom,
            Policy::VolatileRandom,
            Policy::VolatileTtl,
        ]
        .get(c as usize)
        .copied()
        .unwrap_or(Policy::NoEviction)
    }
}

/// The limit, the settings eviction reads per command, and the memory estimate.
pub struct Memory {
    /// `maxmemory` in bytes (0: no limit).
    max: AtomicU64,
    policy: AtomicU8,
    /// The policy is an LFU one (read on every access: one load).
    lfu: AtomicBool,
    samples: AtomicU32,
    tenacity: AtomicU32,
    lfu_log_factor: AtomicU32,
    lfu_decay_time: AtomicU32,
    /// jemalloc's allocated bytes at the last reading.
    used: AtomicU64,
    /// The estimated change since that reading.
    since: AtomicI64,
    /// When it was read (microseconds since `epoch`).
    read_at_us: AtomicU64,
    /// A reading is under way (others use the estimate meanwhile).
    reading: AtomicBool,
    /// Allocated bytes once the server was ready (MEMORY STATS `startup.allocated`).
    startup: AtomicU64,
    epoch: Instant,
}

impl Default for Memory {
    fn default() -> Memory {
        Memory {
            max: AtomicU64::new(0),
            policy: AtomicU8::new(Policy::NoEviction.code()),
            lfu: AtomicBool::new(false),
            samples: AtomicU32::new(5),
            tenacity: AtomicU32::new(10),
            lfu_log_factor: AtomicU32::new(10),
            lfu_decay_time: AtomicU32::new(1),
            used: AtomicU64::new(0),
            since: AtomicI64::new(0),
            read_at_us: AtomicU64::new(0),
            reading: AtomicBool::new(false),
            startup: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }
}

impl Memory {
    /// Takes the settings of `c` (at start and after CONFIG SET).
    pub fn configure(&self, c: &Config) {
        self.max.store(c.maxmemory, Ordering::Relaxed);
        let policy = Policy::parse(&c.maxmemory_policy);
        self.policy.store(policy.code(), Ordering::Relaxed);
        self.lfu.store(policy.lfu(), Ordering::Relaxed);
        self.samples.store(c.maxmemory_samples.clamp(1, 64), Ordering::Relaxed);
        self.tenacity.store(c.maxmemory_eviction_tenacity, Ordering::Relaxed);
        self.lfu_log_factor.store(c.lfu_log_factor, Ordering::Relaxed);
        self.lfu_decay_time.store(c.lfu_decay_time, Ordering::Relaxed);
        // A new limit is judged on a fresh reading.
        self.read_at_us.store(0, Ordering::Relaxed);
    }

    /// Records the allocated bytes of the server ready to serve (before any data).
    pub fn set_startup_allocated(&self, bytes: u64) {
        self.startup.store(bytes, Ordering::Relaxed);
    }

    pub fn startup_allocated(&self) -> u64 {
        self.startup.load(Ordering::Relaxed)
    }

    /// Whether a limit is set (one load: the per-command cost without one).
    #[inline]
    pub fn limited(&self) -> bool {
        self.max.load(Ordering::Relaxed) != 0
    }

    pub fn policy(&self) -> Policy {
        Policy::from_code(self.policy.load(Ordering::Relaxed))
    }

    /// What an access writes into an entry's access field now: the LRU clock, or under
    /// an LFU policy the counter's increment (`r` draws it in [0, 1), only then).
    #[inline]
    pub fn touch(&self, now_ms: i64, r: impl FnOnce() -> f64) -> store::clock::Touch {
        if self.lfu.load(Ordering::Relaxed) {
            store::clock::Touch::Lfu {
                minutes: store::clock::lfu_minutes(now_ms),
                log_factor: self.lfu_log_factor.load(Ordering::Relaxed),
                decay_minutes: self.lfu_decay_time.load(Ordering::Relaxed),
                r: r(),
            }
        } else {
            store::clock::Touch::Lru(store::clock::lru_clock(now_ms))
        }
    }

    /// The access field of a key created now: the LRU clock, or an LFU counter at
    /// its initial value.
    #[inline]
    pub fn new_access(&self, now_ms: i64) -> u32 {
        if self.lfu.load(Ordering::Relaxed) {
            store::clock::lfu_pack(store::clock::lfu_minutes(now_ms), store::clock::LFU_INIT_VAL)
        } else {
            store::clock::lru_clock(now_ms)
        }
    }

    /// An LFU access field's counter now, after its decay (OBJECT FREQ).
    pub fn frequency(&self, field: u32, now_ms: i64) -> u8 {
        store::clock::lfu_decayed(field, store::clock::lfu_minutes(now_ms), self.lfu_decay_time.load(Ordering::Relaxed))
    }

    /// A write of `bytes` argument bytes ran: the estimate grows by that much.
    #[inline]
    pub fn note_write(&self, bytes: usize) {
        self.since.fetch_add(bytes as i64, Ordering::Relaxed);
    }

    /// Bytes in use over the limit (zero or less: under it), reading jemalloc when the
    /// estimate says over and the last reading is older than a millisecond.
    fn over(&self) -> i64 {
        let max = self.max.load(Ordering::Relaxed) as i64;
        let estimate = self.used.load(Ordering::Relaxed) as i64 + self.since.load(Ordering::Relaxed);
        let now_us = self.epoch.elapsed().as_micros() as u64;
        let read_at = self.read_at_us.load(Ordering::Relaxed);
        let age_us = now_us.saturating_sub(read_at);
        // Under the limit by the estimate: trusted for 100 ms while well under (memory
        // that grows other than by writes' arguments, a reply buffer, a rehash, is seen
        // by then), for a millisecond within 10% of the limit.
        let trusted_us = if estimate <= max - max / 10 { 100_000 } else { 1000 };
        if estimate <= max && read_at != 0 && age_us < trusted_us {
            return estimate - max;
        }
        if (read_at == 0 || age_us >= 1000)
            && self.reading.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
        {
            let used = crate::info::allocated_bytes();
            self.used.store(used, Ordering::Relaxed);
            self.since.store(0, Ordering::Relaxed);
            self.read_at_us.store(now_us.max(1), Ordering::Relaxed);
            self.reading.store(false, Ordering::Release);
            return used as i64 - max;
        }
        estimate - max
    }

    /// How long one command may spend evicting (Redis's evictionTimeLimitUs): 50 us per
    /// tenacity step up to 10 (500 us at the default), then growing 15% a step, and no
    /// limit at 100.
    fn time_limit_us(&self) -> Option<u64> {
        let t = self.tenacity.load(Ordering::Relaxed);
        if t <= 10 {
            return Some(50 * u64::from(t));
        }
        if t < 100 {
            return Some((500.0 * 1.15f64.powi(t as i32 - 10)) as u64);
        }
        None
    }
}

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
pub fn make_room(shared: &Shared, stats: &ThreadStats, now_ms: i64, rng: &mut fastrand::Rng) -> Result<(), ()> {
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
