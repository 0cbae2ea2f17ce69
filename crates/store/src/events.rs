//! Keyspace events: what Redis's keyspace notifications report (`notify-keyspace-events`),
//! queued per thread in the order they happen, for the server to publish.
//!
//! Most events come from commands (the server's handlers push them); two come from the
//! store itself, which alone sees them happen: a key that expires when it is looked up
//! or by the active cycle (`expired`), and a key created where none was (`new`, Redis
//! 7's `n` class). One queue holds both kinds, so a subscriber sees them in Redis's
//! order (an `expired`, then the `new` and `set` of the SET that found the key expired).
//!
//! Which classes are wanted is a keyspace's setting ([`Flags`], shared by its shards);
//! with none wanted, a push costs one relaxed load. The queue is per thread because a
//! command runs on one thread from start to end: the server drains it after the events
//! of one command (or one expiry step) are in, and publishes them.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

/// Asked, under the key's shard lock, before an expired key is removed (lazily by a
/// lookup or by the active cycle) or a key is evicted (`Shard::evict`), with its
/// database, name, the time and which of the two: true to remove it now, false to
/// leave it for later (an expired key reads as absent meanwhile; eviction picks
/// another). The server's append-only log answers it, logging the deletion as Redis
/// does (a DEL), in order with the writes to that key; without one every expired key
/// is removed.
pub type ExpireHook = Box<dyn Fn(usize, &[u8], i64, Removal) -> bool + Send + Sync>;

/// Why a key is removed without a command naming it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// Its time passed.
    Expired,
    /// maxmemory's eviction picked it.
    Evicted,
}

/// Event classes, Redis's notification flags (one bit each, as `notify-keyspace-events`
/// names them by letter).
pub mod class {
    /// `g`: DEL, EXPIRE, RENAME and the other type-independent commands.
    pub const GENERIC: u32 = 1 << 2;
    /// `$`
    pub const STRING: u32 = 1 << 3;
    /// `l`
    pub const LIST: u32 = 1 << 4;
    /// `s`
    pub const SET: u32 = 1 << 5;
    /// `h`
    pub const HASH: u32 = 1 << 6;
    /// `z`
    pub const ZSET: u32 = 1 << 7;
    /// `x`: a key removed because its time came.
    pub const EXPIRED: u32 = 1 << 8;
    /// `e`: a key removed by maxmemory's eviction.
    pub const EVICTED: u32 = 1 << 9;
    /// `t`
    pub const STREAM: u32 = 1 << 10;
    /// `m`: a read of a key that is absent.
    pub const KEY_MISS: u32 = 1 << 11;
    /// `d`
    pub const MODULE: u32 = 1 << 12;
    /// `n`: a key created.
    pub const NEW: u32 = 1 << 13;
    /// `K`: publish on `__keyspace@<db>__:<key>` (the message is the event).
    pub const KEYSPACE: u32 = 1 << 0;
    /// `E`: publish on `__keyevent@<db>__:<event>` (the message is the key).
    pub const KEYEVENT: u32 = 1 << 1;
    /// Not a Redis class: FLUSHALL or FLUSHDB ran (client-side caching drops
    /// everything); never published.
    pub const FLUSH: u32 = 1 << 14;
    /// Not a Redis class: the key a read inside EXEC named, for client-side caching to
    /// remember in order with the transaction's changes (with the log, EXEC's events
    /// wait for its end); never published.
    pub const TRACK: u32 = 1 << 15;
    /// Not a Redis class: a change no event names (PFCOUNT caching its count in the
    /// value, Redis's bare signalModifiedKey), for client-side caching; never
    /// published.
    pub const MODIFIED: u32 = 1 << 16;
    /// Not a Redis class: set beside a published class on an event whose command does
    /// not signal the key as modified (Redis notifies without its signalModifiedKey:
    /// XGROUP's subcommands on an existing stream, a consumer created by XREADGROUP or
    /// XCLAIM): published, but not a change for client-side caching.
    pub const UNSIGNALED: u32 = 1 << 17;
    /// `A`: every class but `m` and `n`, as Redis's alias.
    pub const ALL: u32 = GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// The classes a keyspace reports, shared by its shards: those configured for
/// publishing (zero unless at least one of `K` and `E` is set together with a class,
/// since nothing would be published otherwise), and those queued, which while a client
/// tracks keys (client-side caching) are every change to a key.
#[derive(Debug, Default)]
pub struct Flags {
    published: AtomicU32,
    queued: AtomicU32,
    tracking: AtomicBool,
    /// Serializes the two setters (CONFIG SET and tracking turned on or off on another
    /// loop): each reads the other's word to compute `queued`, and without it one could
    /// store a `queued` that misses the other's change for good.
    update: parking_lot::Mutex<()>,
    /// See [`ExpireHook`]; set once, at start.
    expire_hook: OnceLock<HookCell>,
}

/// The installed hook (a closure has no Debug of its own).
struct HookCell(ExpireHook);

impl std::fmt::Debug for HookCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExpireHook")
    }
}

/// Every class that is a change to a key (not `m`, a miss).
pub const CHANGES: u32 = class::ALL | class::NEW | class::FLUSH | class::MODIFIED;

impl Flags {
    /// Sets the configured flags (`class` bits).
    pub fn set(&self, flags: u32) {
        let _update = self.update.lock();
        let publishes = flags & (class::KEYSPACE | class::KEYEVENT) != 0;
        self.published.store(if publishes { flags } else { 0 }, Ordering::Relaxed);
        self.update_queued();
    }

    /// Whether changes are queued for client-side caching whatever is configured.
    pub fn set_tracking(&self, on: bool) {
        let _update = self.update.lock();
        self.tracking.store(on, Ordering::Relaxed);
        self.update_queued();
    }

    fn update_queued(&self) {
        let tracking = if self.tracking.load(Ordering::Relaxed) { CHANGES } else { 0 };
        self.queued.store(self.published.load(Ordering::Relaxed) | tracking, Ordering::Relaxed);
    }

    /// The configured flags, or 0 when nothing is published.
    #[inline]
    pub fn get(&self) -> u32 {
        self.published.load(Ordering::Relaxed)
    }

    /// Whether events of `class` are queued.
    #[inline]
    pub fn wants(&self, class: u32) -> bool {
        self.queued.load(Ordering::Relaxed) & class != 0
    }

    /// Installs the [`ExpireHook`] (once; a second call is ignored).
    pub fn set_expire_hook(&self, hook: ExpireHook) {
        let _ = self.expire_hook.set(HookCell(hook));
    }

    /// Whether the expired key `key` of database `db` may be removed now (the hook's
    /// answer; true without one).
    #[inline]
    pub fn may_expire(&self, db: usize, key: &[u8], now_ms: i64) -> bool {
        self.expire_hook.get().is_none_or(|hook| (hook.0)(db, key, now_ms, Removal::Expired))
    }

    /// Whether `key` of database `db` may be evicted now (the hook's answer; true
    /// without one).
    #[inline]
    pub fn may_evict(&self, db: usize, key: &[u8], now_ms: i64) -> bool {
        self.expire_hook.get().is_none_or(|hook| (hook.0)(db, key, now_ms, Removal::Evicted))
    }
}

/// One event: its class, Redis's name for it, the database and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub class: u32,
    pub name: &'static str,
    pub db: usize,
    pub key: Box<[u8]>,
}

thread_local! {
    static QUEUE: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
    /// Whether QUEUE holds events: a plain flag (no destructor, so reading it costs
    /// a load), checked after every command.
    static PENDING: Cell<bool> = const { Cell::new(false) };
}

/// Queues an event if `flags` wants its class.
#[inline]
pub fn push(flags: &Flags, class: u32, name: &'static str, db: usize, key: &[u8]) {
    if flags.wants(class) {
        push_unchecked(class, name, db, key);
    }
}

#[cold]
fn push_unchecked(class: u32, name: &'static str, db: usize, key: &[u8]) {
    QUEUE.with(|q| q.borrow_mut().push(Event { class, name, db, key: key.into() }));
    PENDING.with(|p| p.set(true));
}

/// Queues a read's key for client-side caching ([`class::TRACK`]), whatever is
/// configured (the caller knows a client tracks).
pub fn push_track(db: usize, key: &[u8]) {
    push_unchecked(class::TRACK, "", db, key);
}

/// Whether this thread has queued events.
#[inline]
pub fn pending() -> bool {
    PENDING.with(Cell::get)
}

/// Takes this thread's queued events, oldest first.
pub fn take() -> Vec<Event> {
    PENDING.with(|p| p.set(false));
    QUEUE.with(|q| std::mem::take(&mut *q.borrow_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wanted_classes_are_queued_in_order() {
        let flags = Flags::default();
        push(&flags, class::GENERIC, "del", 0, b"a");
        assert!(take().is_empty(), "nothing is wanted by default");
        flags.set(class::GENERIC | class::EXPIRED);
        push(&flags, class::GENERIC, "del", 0, b"a");
        assert!(take().is_empty(), "neither K nor E: nothing would be published");
        flags.set(class::KEYEVENT | class::GENERIC | class::EXPIRED);
        push(&flags, class::EXPIRED, "expired", 1, b"k");
        push(&flags, class::STRING, "set", 1, b"k");
        push(&flags, class::GENERIC, "del", 2, b"k");
        assert!(pending());
        let names: Vec<(&str, usize)> = take().iter().map(|e| (e.name, e.db)).collect();
        assert_eq!(names, [("expired", 1), ("del", 2)]);
        assert!(!pending() && take().is_empty());
        // While a client tracks keys every change is queued, whatever is published.
        flags.set(0);
        flags.set_tracking(true);
        push(&flags, class::STRING, "set", 0, b"k");
        push(&flags, class::KEY_MISS, "keymiss", 0, b"k");
        assert_eq!((flags.get(), take().len()), (0, 1));
        flags.set_tracking(false);
        push(&flags, class::STRING, "set", 0, b"k");
        assert!(!pending());
    }
}
