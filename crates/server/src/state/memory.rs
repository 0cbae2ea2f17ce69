//! The memory limit's state (`maxmemory` and the settings eviction reads per command)
//! and the estimate of memory in use. Eviction itself is `evict.rs`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::time::Instant;

use crate::config::Config;

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

    pub(crate) fn volatile(self) -> bool {
        matches!(self, Policy::VolatileLru | Policy::VolatileLfu | Policy::VolatileRandom | Policy::VolatileTtl)
    }

    pub fn lfu(self) -> bool {
        matches!(self, Policy::AllkeysLfu | Policy::VolatileLfu)
    }

    pub(crate) fn random(self) -> bool {
        matches!(self, Policy::AllkeysRandom | Policy::VolatileRandom)
    }

    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    pub(crate) fn from_code(c: u8) -> Policy {
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
    pub(crate) samples: AtomicU32,
    tenacity: AtomicU32,
    lfu_log_factor: AtomicU32,
    lfu_decay_time: AtomicU32,
    /// jemalloc's allocated bytes at the last reading.
    used: AtomicU64,
    /// The estimated change since that reading.
    pub(crate) since: AtomicI64,
    /// When it was read (microseconds since `epoch`).
    read_at_us: AtomicU64,
    /// A reading is under way (others use the estimate meanwhile).
    reading: AtomicBool,
    /// Allocated bytes once the server was ready (MEMORY STATS `startup.allocated`).
    startup: AtomicU64,
    epoch: Instant,
    /// `replica-ignore-maxmemory` (yes by default): a replica evicts nothing.
    replica_ignores: AtomicBool,
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
            replica_ignores: AtomicBool::new(true),
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
        let ignores = c.recorded.get("replica-ignore-maxmemory").is_none_or(|v| v != "no");
        self.replica_ignores.store(ignores, Ordering::Relaxed);
        // A new limit is judged on a fresh reading.
        self.read_at_us.store(0, Ordering::Relaxed);
    }

    /// `replica-ignore-maxmemory`: whether a replica leaves its memory to its master.
    pub fn replica_ignores(&self) -> bool {
        self.replica_ignores.load(Ordering::Relaxed)
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
    pub(crate) fn over(&self) -> i64 {
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
            let used = crate::allocator::allocated_bytes();
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
    pub(crate) fn time_limit_us(&self) -> Option<u64> {
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
