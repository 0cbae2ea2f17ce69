//! `client-output-buffer-limit`: when a client's pending output is too large, the
//! client is disconnected, as Redis 7.0 does (`checkClientOutputBufferLimits`).
//!
//! Owns the limits' run-time copies (read by the loops without the config lock) and
//! the verdict for one client; the connection (`conn.rs`) keeps the soft limit's clock
//! and asks after each command it runs and each message it is handed (`net::apply_mail`).
//!
//! Redis's rules, checked against 7.0.15:
//! - A client's class is `pubsub` while it is subscribed to any channel or pattern
//!   (RESP2 or RESP3), otherwise `normal`; a MONITOR client is `normal` too; a
//!   replica's is `replica`. The replica class is enforced where the replication
//!   stream is delivered (`replication::master::flush`, the only output a replica
//!   gets after its snapshot), not here: its default limits are set, and checking
//!   them here would cost every client the check.
//! - Pending output is everything produced and not yet handed to the kernel (Basalt
//!   counts what its engine has in flight as well, and held replies).
//! - Hard limit: pending output at or over it disconnects at once.
//! - Soft limit: the first time pending output is at or over it, the time (whole
//!   seconds) is noted; a later check more than `soft_seconds` after that disconnects;
//!   a check below it forgets the time. Output added is checked at once; each loop's
//!   tick also disconnects a client over its soft limit for too long that got
//!   nothing more (Redis 7.0.15 does so from its timer).
//! - A disconnected client gets none of its pending output (the socket is shut down),
//!   and no further command of its pipeline runs.
//! - 0 means no limit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::config::OutputLimit;

/// The classes the limits tell apart (indexes into `Config::client_output_buffer_limit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Normal,
    PubSub,
    Replica,
}

impl Class {
    /// The class of a client with `subscriptions` channels and patterns.
    pub fn of(subscriptions: usize) -> Class {
        Class::of_client(false, subscriptions)
    }

    /// The class of a client, a replica or one with `subscriptions` channels and
    /// patterns.
    pub fn of_client(replica: bool, subscriptions: usize) -> Class {
        if replica {
            Class::Replica
        } else if subscriptions > 0 {
            Class::PubSub
        } else {
            Class::Normal
        }
    }

    /// The class's name in Redis's log line.
    pub fn name(self) -> &'static str {
        match self {
            Class::Normal => "normal",
            Class::PubSub => "pubsub",
            Class::Replica => "slave",
        }
    }

    fn config_index(self) -> usize {
        match self {
            Class::Normal => 0,
            Class::PubSub => 2,
            Class::Replica => 1,
        }
    }
}

/// Run-time copies of the normal and pubsub limits, set from the config at start and on
/// CONFIG SET (`Shared::config_changed`).
#[derive(Default)]
pub struct Limits {
    /// hard, soft, soft seconds; normal then pubsub.
    words: [AtomicU64; 6],
    /// Any of the hard and soft limits is set (the request path's one load).
    any: AtomicBool,
}

impl Limits {
    pub fn new(config: &[OutputLimit; 3]) -> Limits {
        let limits = Limits::default();
        limits.set(config);
        limits
    }

    pub fn set(&self, config: &[OutputLimit; 3]) {
        for (i, class) in [Class::Normal, Class::PubSub].into_iter().enumerate() {
            let l = &config[class.config_index()];
            self.words[3 * i].store(l.hard, Ordering::Relaxed);
            self.words[3 * i + 1].store(l.soft, Ordering::Relaxed);
            self.words[3 * i + 2].store(l.soft_seconds, Ordering::Relaxed);
        }
        let any = (0..2).any(|i| self.words[3 * i].load(Ordering::Relaxed) > 0 || self.words[3 * i + 1].load(Ordering::Relaxed) > 0);
        self.any.store(any, Ordering::Relaxed);
    }

    /// Whether any limit of either class is set.
    #[inline]
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Relaxed)
    }

    /// The limits in force now, read once per batch of commands.
    pub fn snapshot(&self) -> Snapshot {
        let read = |i: usize| OutputLimit {
            hard: self.words[3 * i].load(Ordering::Relaxed),
            soft: self.words[3 * i + 1].load(Ordering::Relaxed),
            soft_seconds: self.words[3 * i + 2].load(Ordering::Relaxed),
        };
        Snapshot { normal: read(0), pubsub: read(1) }
    }
}

/// The limits of both classes at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    normal: OutputLimit,
    pubsub: OutputLimit,
}

impl Snapshot {
    fn of(&self, class: Class) -> &OutputLimit {
        const ENFORCED_ELSEWHERE: OutputLimit = OutputLimit { hard: 0, soft: 0, soft_seconds: 0 };
        match class {
            Class::Normal => &self.normal,
            Class::PubSub => &self.pubsub,
            Class::Replica => &ENFORCED_ELSEWHERE,
        }
    }

    /// Whether a client with `subscriptions` channels and patterns may be over a
    /// limit: the request path's test after each command, before the class is worked
    /// out (under the default `normal 0 0 0`, false for every client not subscribed).
    #[inline]
    pub fn may_limit(&self, subscriptions: usize) -> bool {
        subscriptions > 0 || self.normal.hard > 0 || self.normal.soft > 0
    }

    /// True when `class` has any limit (the common case, normal clients under the
    /// default `normal 0 0 0`, skips the check).
    pub fn limits(&self, class: Class) -> bool {
        let l = self.of(class);
        l.hard > 0 || l.soft > 0
    }

    /// Whether a client of `class` with `pending` bytes of output must be disconnected
    /// now (`now_s`: Unix seconds). `soft_since` is the client's soft-limit clock
    /// (Unix seconds when it went over, 0 when under), updated here.
    pub fn over(&self, class: Class, pending: usize, soft_since: &mut i64, now_s: i64) -> bool {
        let l = self.of(class);
        let pending = pending as u64;
        if l.hard > 0 && pending >= l.hard {
            return true;
        }
        if l.soft == 0 || pending < l.soft {
            *soft_since = 0;
            return false;
        }
        if *soft_since == 0 {
            *soft_since = now_s.max(1);
            return false;
        }
        self.soft_overdue(class, pending as usize, *soft_since, now_s)
    }

    /// Whether a client over its soft limit since `soft_since` (Unix seconds, 0: not
    /// over) with `pending` bytes still over it has been so for too long: checked by
    /// each loop's tick, since Redis's timer disconnects such a client even when
    /// nothing more is added to its output.
    pub fn soft_overdue(&self, class: Class, pending: usize, soft_since: i64, now_s: i64) -> bool {
        let l = self.of(class);
        // Redis compares whole seconds: over only once more than soft_seconds passed.
        soft_since != 0
            && l.soft > 0
            && pending as u64 >= l.soft
            && now_s - soft_since > l.soft_seconds.min(i64::MAX as u64) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(normal: (u64, u64, u64), pubsub: (u64, u64, u64)) -> Snapshot {
        let l = |(hard, soft, soft_seconds)| OutputLimit { hard, soft, soft_seconds };
        Limits::new(&[l(normal), l((0, 0, 0)), l(pubsub)]).snapshot()
    }

    #[test]
    fn classes_follow_subscriptions() {
        assert_eq!(Class::of(0), Class::Normal);
        assert_eq!(Class::of(3), Class::PubSub);
        let s = snapshot((0, 0, 0), (100, 0, 0));
        assert!(!s.limits(Class::Normal));
        assert!(s.limits(Class::PubSub));
        let l = |hard| OutputLimit { hard, soft: 0, soft_seconds: 0 };
        assert!(Limits::new(&[l(0), l(0), l(1)]).any());
        assert!(!Limits::new(&[l(0), l(5), l(0)]).any(), "the replica class is not enforced");
    }

    #[test]
    fn hard_limit_is_at_or_over() {
        let s = snapshot((100, 0, 0), (0, 0, 0));
        let mut since = 0;
        assert!(!s.over(Class::Normal, 99, &mut since, 1000));
        assert!(s.over(Class::Normal, 100, &mut since, 1000));
        assert!(!s.over(Class::PubSub, 1 << 30, &mut since, 1000));
    }

    #[test]
    fn soft_limit_needs_more_than_its_seconds() {
        let s = snapshot((0, 0, 0), (0, 50, 2));
        let mut since = 0;
        assert!(!s.over(Class::PubSub, 60, &mut since, 1000));
        assert_eq!(since, 1000);
        assert!(!s.over(Class::PubSub, 60, &mut since, 1002));
        assert!(s.over(Class::PubSub, 60, &mut since, 1003));
        // Dropping below forgets the clock.
        let mut since = 1000;
        assert!(!s.over(Class::PubSub, 10, &mut since, 1005));
        assert_eq!(since, 0);
        assert!(!s.over(Class::PubSub, 60, &mut since, 1006));
        // The tick's check: never without a clock, nor once the output fell below.
        assert!(!s.soft_overdue(Class::PubSub, 60, 0, 2000));
        assert!(!s.soft_overdue(Class::PubSub, 60, 1006, 1008));
        assert!(s.soft_overdue(Class::PubSub, 60, 1006, 1009));
        assert!(!s.soft_overdue(Class::PubSub, 49, 1006, 1009));
    }

    #[test]
    fn soft_limit_of_zero_seconds_cuts_off_a_second_later() {
        let s = snapshot((0, 50, 0), (0, 0, 0));
        let mut since = 0;
        assert!(!s.over(Class::Normal, 60, &mut since, 7));
        assert!(!s.over(Class::Normal, 60, &mut since, 7));
        assert!(s.over(Class::Normal, 60, &mut since, 8));
    }
}
