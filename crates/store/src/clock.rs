//! The time source of the keyspace: the system clock in production, a clock that tests
//! move by hand. Expiry, TTL and the LRU clock all read time through here and nowhere else.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of Unix time in milliseconds.
#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// The system's wall clock.
    #[default]
    System,
    /// A clock that only moves when told to (tests).
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// A manual clock starting at `start_ms`.
    pub fn manual(start_ms: i64) -> Clock {
        Clock::Manual(Arc::new(AtomicI64::new(start_ms)))
    }

    /// Now, in Unix milliseconds.
    pub fn now_ms(&self) -> i64 {
        match self {
            Clock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or(0),
            Clock::Manual(t) => t.load(Ordering::Relaxed),
        }
    }

    /// Moves a manual clock forward by `ms`; no effect on the system clock.
    pub fn advance_ms(&self, ms: i64) {
        if let Clock::Manual(t) = self {
            t.fetch_add(ms, Ordering::Relaxed);
        }
    }
}

/// Tenths of a second per LRU clock unit. Redis's clock counts seconds; a finer one
/// tells apart keys read within the same second, which its eviction (sampled LRU)
/// cannot (measured with scripts/bench-eviction.sh, docs/benchmarks.md). A u32 of
/// tenths wraps after 13 years; idle times are differences, taken wrapping.
pub const LRU_UNITS_PER_SECOND: u32 = 10;

/// The LRU clock value for a time: tenths of a second, wrapping at 2^32.
#[inline]
pub fn lru_clock(now_ms: i64) -> u32 {
    // Unsigned: a division by a constant then costs a multiply and a shift (the clock
    // is read on every key access); a time before 1970 reads as 0.
    (now_ms.max(0) as u64 / (1000 / LRU_UNITS_PER_SECOND as u64)) as u32
}

/// Whole seconds since the access `lru` recorded (OBJECT IDLETIME).
pub fn lru_idle_seconds(now_ms: i64, lru: u32) -> u32 {
    lru_clock(now_ms).wrapping_sub(lru) / LRU_UNITS_PER_SECOND
}

/// A new key's access frequency counter under an LFU policy (Redis's LFU_INIT_VAL):
/// not 0, so that a key just written is not the first one evicted.
pub const LFU_INIT_VAL: u8 = 5;

/// Minutes of `now_ms`, in the 24 bits an entry's access field keeps them in.
pub fn lfu_minutes(now_ms: i64) -> u32 {
    ((now_ms / 60_000) as u32) & 0x00ff_ffff
}

/// An entry's access field under an LFU policy, as Redis keeps it in its 24-bit `lru`:
/// the minute of the last decrement in the high bits, the logarithmic counter in the
/// low 8.
pub fn lfu_pack(minutes: u32, counter: u8) -> u32 {
    (minutes & 0x00ff_ffff) << 8 | u32::from(counter)
}

/// The counter of an LFU access field after its decay: one step per `decay_minutes`
/// elapsed since its minute (`lfu-decay-time`; 0: no decay), as Redis's LFUDecrAndReturn.
pub fn lfu_decayed(field: u32, now_minutes: u32, decay_minutes: u32) -> u8 {
    let counter = (field & 0xff) as u8;
    let then = field >> 8;
    // The minute counter wraps at 2^24, as Redis's LFUTimeElapsed.
    let elapsed = now_minutes.wrapping_sub(then) & 0x00ff_ffff;
    let periods = elapsed.checked_div(decay_minutes).unwrap_or(0);
    counter.saturating_sub(periods.min(255) as u8)
}

/// One access's logarithmic increment (Redis's LFULogIncr): the counter grows with
/// probability 1 / ((counter - LFU_INIT_VAL) * log_factor + 1); `r` in [0, 1).
pub fn lfu_log_incr(counter: u8, log_factor: u32, r: f64) -> u8 {
    if counter == 255 {
        return 255;
    }
    let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
    let p = 1.0 / (base * f64::from(log_factor) + 1.0);
    if r < p {
        counter + 1
    } else {
        counter
    }
}

/// What an access writes into an entry's access field: the LRU clock, or under an LFU
/// policy the decayed counter, incremented, at this minute.
#[derive(Clone, Copy, Debug)]
pub enum Touch {
    Lru(u32),
    Lfu { minutes: u32, log_factor: u32, decay_minutes: u32, r: f64 },
}

impl Touch {
    /// The access field after this access, given the one before.
    pub fn apply(self, old: u32) -> u32 {
        match self {
            Touch::Lru(lru) => lru,
            Touch::Lfu { minutes, log_factor, decay_minutes, r } => {
                let counter = lfu_decayed(old, minutes, decay_minutes);
                lfu_pack(minutes, lfu_log_incr(counter, log_factor, r))
            }
        }
    }
}

#[cfg(test)]
mod lfu_tests {
    use super::*;

    #[test]
    fn lfu_counter_grows_logarithmically_and_decays_per_period() {
        let f = lfu_pack(100, LFU_INIT_VAL);
        assert_eq!(lfu_decayed(f, 100, 1), LFU_INIT_VAL);
        assert_eq!(lfu_decayed(f, 103, 1), LFU_INIT_VAL - 3);
        assert_eq!(lfu_decayed(f, 103, 0), LFU_INIT_VAL);
        assert_eq!(lfu_decayed(f, 100 + 1000, 1), 0);
        // At the initial value every access counts; far above it, few do.
        assert_eq!(lfu_log_incr(LFU_INIT_VAL, 10, 0.99), LFU_INIT_VAL + 1);
        assert_eq!(lfu_log_incr(100, 10, 0.01), 100);
        assert_eq!(lfu_log_incr(255, 10, 0.0), 255);
        // A million accesses with factor 10 bring the counter near Redis's table (~255).
        let mut rng = fastrand::Rng::with_seed(7);
        let mut c = LFU_INIT_VAL;
        for _ in 0..1_000_000 {
            c = lfu_log_incr(c, 10, rng.f64());
        }
        assert!(c >= 200, "{c}");
        let t = Touch::Lfu { minutes: 7, log_factor: 10, decay_minutes: 1, r: 0.0 };
        assert_eq!(t.apply(lfu_pack(7, 9)), lfu_pack(7, 10));
    }
}
