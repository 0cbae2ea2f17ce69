//! The keyspace: numbered databases, each split into shards behind their own locks.
//!
//! A key's shard is chosen from bits of its hash that the hash table itself does not use
//! for bucket positions, so one hash serves both. Every database has the same number of
//! shards and shares one hasher, so a key lives in the same shard index in every
//! database: MOVE and COPY between databases hash once, and SWAPDB swaps shard contents
//! pairwise.
//!
//! Locking rules (no global lock on the request path): a command locks only the shards of
//! its keys; several shards are always locked in ascending (database, shard) order, which
//! makes deadlock impossible; no lock is held across I/O. [`LockedShards`] enforces the
//! order. Every shard lock goes through `shard_lock::acquire`, which may keep one lock
//! across the commands of a batch (lock coalescing, see `shard_lock.rs`) but never
//! while it waits for another.
//!
//! Point-in-time capture (BGSAVE without fork): [`Keyspace::begin_capture`] starts one
//! in every shard, `Shard::capture_step` walks a shard (the server's event loops call
//! it, see its `walk.rs`), [`Keyspace::end_capture`] ends it; the scheme (entry grain: a
//! write keeps the old state of the one entry it changes) is in `capture.rs`.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::capture::CaptureSpec;
use crate::clock::Clock;
use crate::events::Flags;
use crate::shard::{KeyHasher, Shard, ShardStats};
use crate::shard_lock::{acquire, Coalescing, ShardGuard};

/// A database: shards behind mutexes.
pub struct Db {
    shards: Box<[Mutex<Shard>]>,
}

/// All databases plus the clock and hasher they share.
pub struct Keyspace {
    dbs: Box<[Db]>,
    hasher: KeyHasher,
    shard_mask: u64,
    clock: Clock,
    capture: Capture,
    /// The event classes reported (`crate::events`), shared by every shard.
    events: Arc<Flags>,
}

/// The running point-in-time capture, if any (see the module header).
struct Capture {
    active: AtomicBool,
    spec: Mutex<Option<Arc<CaptureSpec>>>,
}

impl Keyspace {
    /// `databases` databases of `shards` shards each (`shards` rounded up to a power of
    /// two, at least 1).
    pub fn new(databases: usize, shards: usize, clock: Clock) -> Keyspace {
        let shards = shards.max(1).next_power_of_two();
        let hasher = KeyHasher::default();
        let events = Arc::new(Flags::default());
        let dbs: Box<[Db]> = (0..databases.max(1))
            .map(|db| Db {
                shards: (0..shards)
                    .map(|_| Mutex::new(Shard::in_db(hasher, db, events.clone())))
                    .collect(),
            })
            .collect();
        let capture = Capture {
            active: AtomicBool::new(false),
            spec: Mutex::new(None),
        };
        Keyspace {
            dbs,
            hasher,
            shard_mask: shards as u64 - 1,
            clock,
            capture,
            events,
        }
    }

    /// The keyspace event classes reported (`notify-keyspace-events`, as flag bits of
    /// `crate::events::class`).
    pub fn events(&self) -> &Flags {
        &self.events
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Now, by the keyspace's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    pub fn databases(&self) -> usize {
        self.dbs.len()
    }

    pub fn shards_per_db(&self) -> usize {
        self.shard_mask as usize + 1
    }

    /// The hash of a key, used both to pick the shard and inside the shard's table.
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The shard index for a hash. Bits 40.. are used because the table's bucket index
    /// comes from the low bits and its control tag from the top 7.
    pub fn shard_index(&self, hash: u64) -> usize {
        ((hash >> 40) & self.shard_mask) as usize
    }

    /// While `held`, expired keys are hidden from every lookup but not removed, and the
    /// active expiry cycle does nothing (the server's CLIENT PAUSE: Redis keeps the
    /// keyspace still while clients are paused). Locks every shard in turn.
    pub fn hold_expiry(&self, held: bool) {
        for db in 0..self.dbs.len() {
            for shard in 0..self.shards_per_db() {
                self.lock(db, shard).hold_expiry(held);
            }
        }
    }

    /// This keyspace's address, which names it to `shard_lock.rs` (its coalescing scope
    /// and the guards of its shards).
    #[inline]
    fn scope(&self) -> *const () {
        (self as *const Keyspace).cast()
    }

    /// Opens this thread's lock-coalescing scope on this keyspace (`shard_lock.rs`): the
    /// server opens one while it runs one connection's batch of commands.
    pub fn coalescing(&self) -> Coalescing<'_> {
        Coalescing::begin(self.scope())
    }

    /// Locks one shard of one database (see `shard_lock.rs` for lock coalescing).
    pub fn lock(&self, db: usize, shard: usize) -> ShardGuard<'_> {
        acquire(self.scope(), &self.dbs[db].shards[shard])
    }

    /// The mutex of a shard, for tests of the locking itself.
    #[cfg(test)]
    pub(crate) fn raw_shard(&self, db: usize, shard: usize) -> &Mutex<Shard> {
        &self.dbs[db].shards[shard]
    }

    /// Starts a point-in-time capture of every shard as of now (`at_ms` decides which
    /// keys are live; `compress` is `rdbcompression`). The caller must make sure no
    /// command changes the keyspace while this runs (the server holds every event
    /// loop's gate), and must end the capture with [`end_capture`](Self::end_capture).
    /// Returns false if one is running.
    pub fn begin_capture(&self, at_ms: i64, compress: bool) -> bool {
        if self.capture.active.swap(true, Ordering::AcqRel) {
            return false;
        }
        let spec = CaptureSpec::new(at_ms, compress);
        *self.capture.spec.lock() = Some(spec.clone());
        for db in self.dbs.iter() {
            for s in db.shards.iter() {
                acquire(self.scope(), s).capture_begin(spec.clone());
            }
        }
        true
    }

    /// Bytes held as before-images of entries changed ahead of the walk
    /// (INFO's current_cow_size).
    pub fn capture_pending_bytes(&self) -> usize {
        self.capture
            .spec
            .lock()
            .as_ref()
            .map_or(0, |s| s.pending_bytes())
    }

    /// Ends the capture (completed or abandoned) and frees what it still held.
    pub fn end_capture(&self) {
        if !self.capture.active.load(Ordering::Acquire) {
            return;
        }
        for db in self.dbs.iter() {
            for s in db.shards.iter() {
                acquire(self.scope(), s).capture_abandon();
            }
        }
        *self.capture.spec.lock() = None;
        self.capture.active.store(false, Ordering::Release);
    }

    /// Hashes `key` and locks its shard in `db`. Returns the hash with the guard.
    pub fn lock_key(&self, db: usize, key: &[u8]) -> (u64, ShardGuard<'_>) {
        let hash = self.hash(key);
        (hash, self.lock(db, self.shard_index(hash)))
    }

    /// Locks the shards of all `keys` in `db`, in ascending order.
    pub fn lock_keys<'a, K: AsRef<[u8]>>(
        &self,
        db: usize,
        keys: impl IntoIterator<Item = K>,
    ) -> LockedShards<'_> {
        let mut wanted: Vec<(usize, usize)> = keys
            .into_iter()
            .map(|k| (db, self.shard_index(self.hash(k.as_ref()))))
            .collect();
        self.lock_set(&mut wanted)
    }

    /// Locks an explicit set of (database, shard) pairs in ascending order, deduplicated.
    pub fn lock_set(&self, wanted: &mut Vec<(usize, usize)>) -> LockedShards<'_> {
        wanted.sort_unstable();
        wanted.dedup();
        let guards = wanted
            .iter()
            .map(|&(db, s)| ((db, s), self.lock(db, s)))
            .collect();
        LockedShards {
            keyspace: self,
            guards,
        }
    }

    /// Locks every shard of the given databases, in ascending order.
    pub fn lock_dbs(&self, dbs: &[usize]) -> LockedShards<'_> {
        let mut wanted: Vec<(usize, usize)> = dbs
            .iter()
            .flat_map(|&db| (0..self.shards_per_db()).map(move |s| (db, s)))
            .collect();
        self.lock_set(&mut wanted)
    }

    /// Keys with an expiry in one shard (the active expiry cycle asks this of every
    /// shard on every tick).
    pub fn shard_volatile(&self, db: usize, shard: usize) -> usize {
        self.lock(db, shard).volatile()
    }

    /// Number of keys in `db` (expired ones not yet removed included, as Redis).
    pub fn dbsize(&self, db: usize) -> usize {
        self.dbs[db].shards.iter().map(|s| acquire(self.scope(), s).len()).sum()
    }

    /// Bytes of `db`'s hash tables (MEMORY STATS): each bucket's 6-byte slot and its
    /// control byte.
    pub fn db_table_bytes(&self, db: usize) -> usize {
        self.dbs[db].shards.iter().map(|s| acquire(self.scope(), s).table_bytes()).sum()
    }

    /// (keys, keys with an expiry) of `db`, for INFO keyspace.
    pub fn db_counts(&self, db: usize) -> (usize, usize) {
        self.dbs[db].shards.iter().fold((0, 0), |(k, v), s| {
            let s = acquire(self.scope(), s);
            (k + s.len(), v + s.volatile())
        })
    }

    /// Sums the counters of every shard.
    pub fn stats(&self) -> ShardStats {
        let mut total = ShardStats::default();
        for db in self.dbs.iter() {
            for s in db.shards.iter() {
                total.expired_keys += acquire(self.scope(), s).stats.expired_keys;
            }
        }
        total
    }

    /// Removes every key of `db`. Returns the removed tables so that the caller decides
    /// where to free them (inline for SYNC, another thread for ASYNC).
    pub fn flush_db(&self, db: usize) -> Vec<hashbrown::raw::RawTable<crate::entry::Entry>> {
        // A running capture keeps what is flushed (`Shard::take_all`).
        (0..self.shards_per_db())
            .map(|s| self.lock(db, s).take_all())
            .collect()
    }

    /// An empty keyspace of the same shape (databases, shards, hasher, clock, event
    /// classes, capture parity), whose contents can be exchanged with this one's
    /// ([`exchange`](Self::exchange)): a replica under `repl-diskless-load swapdb` loads
    /// its master's snapshot into one while this one goes on serving.
    pub fn empty_like(&self) -> Keyspace {
        let dbs: Box<[Db]> = (0..self.databases())
            .map(|db| Db {
                shards: (0..self.shards_per_db())
                    .map(|s| {
                        let mut shard = Shard::in_db(self.hasher, db, self.events.clone());
                        shard.set_parity(acquire(self.scope(), &self.dbs[db].shards[s]).parity());
                        Mutex::new(shard)
                    })
                    .collect(),
            })
            .collect();
        Keyspace {
            dbs,
            hasher: self.hasher,
            shard_mask: self.shard_mask,
            clock: self.clock.clone(),
            capture: Capture { active: AtomicBool::new(false), spec: Mutex::new(None) },
            events: self.events.clone(),
        }
    }

    /// Exchanges the contents of every database with `other`'s, made by
    /// [`empty_like`](Self::empty_like), atomically with respect to every command (all
    /// of this keyspace's shards are locked meanwhile): `other` is left with what this
    /// one held. A running capture keeps what it has not taken yet, as for SWAPDB.
    ///
    /// # Panics
    /// If `other` has another shape (a caller bug).
    pub fn exchange(&self, other: &mut Keyspace) {
        assert!(
            other.databases() == self.databases() && other.shard_mask == self.shard_mask,
            "exchange needs a keyspace made by empty_like"
        );
        let all: Vec<usize> = (0..self.databases()).collect();
        let mut locked = self.lock_dbs(&all);
        for (db, theirs) in other.dbs.iter_mut().enumerate() {
            for (s, shard) in theirs.shards.iter_mut().enumerate() {
                locked.get_mut((db, s)).swap_contents(shard.get_mut());
            }
        }
    }

    /// Swaps the contents of two databases atomically with respect to every command.
    pub fn swap_dbs(&self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let mut locked = self.lock_dbs(&[a, b]);
        for s in 0..self.shards_per_db() {
            let (x, y) = locked.pair_mut((a, s), (b, s));
            x.swap_contents(y);
        }
    }
}

/// A set of locked shards, locked in ascending (database, shard) order.
pub struct LockedShards<'a> {
    keyspace: &'a Keyspace,
    guards: Vec<((usize, usize), ShardGuard<'a>)>,
}

impl LockedShards<'_> {
    /// The locked shard holding `key` in `db`, with the key's hash.
    ///
    /// # Panics
    /// If that shard was not locked: a bug in the caller, which must lock every key it
    /// touches.
    pub fn shard_for(&mut self, db: usize, key: &[u8]) -> (u64, &mut Shard) {
        let hash = self.keyspace.hash(key);
        let idx = self.keyspace.shard_index(hash);
        (hash, self.get_mut((db, idx)))
    }

    /// A locked shard by (database, shard).
    ///
    /// # Panics
    /// If it was not locked (a caller bug).
    pub fn get_mut(&mut self, id: (usize, usize)) -> &mut Shard {
        let pos = self.guards.binary_search_by(|(k, _)| k.cmp(&id));
        match pos {
            Ok(i) => &mut self.guards[i].1,
            Err(_) => panic!("shard {id:?} used without being locked"),
        }
    }

    /// Two distinct locked shards at once.
    fn pair_mut(&mut self, a: (usize, usize), b: (usize, usize)) -> (&mut Shard, &mut Shard) {
        let ia = self
            .guards
            .binary_search_by(|(k, _)| k.cmp(&a))
            .unwrap_or_else(|_| panic!("{a:?} not locked"));
        let ib = self
            .guards
            .binary_search_by(|(k, _)| k.cmp(&b))
            .unwrap_or_else(|_| panic!("{b:?} not locked"));
        assert_ne!(ia, ib, "pair_mut needs two distinct shards");
        if ia < ib {
            let (lo, hi) = self.guards.split_at_mut(ib);
            (&mut lo[ia].1, &mut hi[0].1)
        } else {
            let (lo, hi) = self.guards.split_at_mut(ia);
            (&mut hi[0].1, &mut lo[ib].1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Entry, Payload};

    #[test]
    fn keys_spread_over_shards_and_swapdb_swaps() {
        let ks = Keyspace::new(2, 8, Clock::manual(0));
        for i in 0..1000 {
            let key = format!("key:{i}");
            let (h, mut s) = ks.lock_key(0, key.as_bytes());
            s.insert(h, Entry::new(key.as_bytes(), Payload::Str(b"v"), None, 0));
        }
        assert_eq!(ks.dbsize(0), 1000);
        let used = (0..8).filter(|&s| !ks.lock(0, s).is_empty()).count();
        assert_eq!(used, 8, "every shard gets keys");
        ks.swap_dbs(0, 1);
        assert_eq!(ks.dbsize(0), 0);
        assert_eq!(ks.dbsize(1), 1000);
        let (h, mut s) = ks.lock_key(1, b"key:7");
        assert!(s.get(h, b"key:7", 0).is_some());
    }

    #[test]
    fn a_keyspace_loaded_aside_is_exchanged_whole() {
        let live = Keyspace::new(2, 8, Clock::manual(0));
        let put = |ks: &Keyspace, db: usize, key: &str, expire: Option<i64>| {
            let (h, mut s) = ks.lock_key(db, key.as_bytes());
            s.insert(h, Entry::new(key.as_bytes(), Payload::Str(b"v"), expire, 0));
        };
        // A whole capture of both databases: what it encoded.
        let capture = |ks: &Keyspace| {
            assert!(ks.begin_capture(0, false));
            let mut out = Vec::new();
            for s in 0..8 {
                while !ks.lock(0, s).capture_step(1000, &mut out) {}
                while !ks.lock(1, s).capture_step(1000, &mut out) {}
            }
            ks.end_capture();
            out
        };
        for i in 0..100 {
            put(&live, 0, &format!("old:{i}"), None);
        }
        // Made before a capture ran on the live keyspace, which moved its shards'
        // parity: the exchange must re-mark what it brings in.
        let mut aside = live.empty_like();
        capture(&live);
        for i in 0..50 {
            put(&aside, 1, &format!("new:{i}"), Some(1_000_000));
        }
        live.exchange(&mut aside);
        assert_eq!((live.dbsize(0), live.dbsize(1)), (0, 50));
        assert_eq!((aside.dbsize(0), aside.dbsize(1)), (100, 0));
        assert_eq!(live.db_counts(1), (50, 50), "the keys with a TTL moved with their table");
        let (h, mut s) = live.lock_key(1, b"new:7");
        assert!(s.get(h, b"new:7", 0).is_some(), "found with the shared hasher");
        drop(s);
        // A capture after the exchange takes every entry that came in.
        let captured = capture(&live);
        let found = (0..50).filter(|i| {
            let key = format!("new:{i}");
            captured.windows(key.len()).any(|w| w == key.as_bytes())
        });
        assert_eq!(found.count(), 50, "no entry came in marked as captured");
    }

    #[test]
    fn a_capture_running_across_an_exchange_keeps_its_point_in_time() {
        let live = Keyspace::new(1, 8, Clock::manual(0));
        let put = |ks: &Keyspace, key: &str| {
            let (h, mut s) = ks.lock_key(0, key.as_bytes());
            s.insert(h, Entry::new(key.as_bytes(), Payload::Str(b"v"), None, 0));
        };
        for i in 0..200 {
            put(&live, &format!("old:{i}"));
        }
        let mut aside = live.empty_like();
        for i in 0..100 {
            put(&aside, &format!("new:{i}"));
        }
        // A save begins and walks part of the keyspace; then the exchange; then the
        // walk ends.
        assert!(live.begin_capture(0, false));
        let mut out = Vec::new();
        for s in 0..3 {
            while !live.lock(0, s).capture_step(1000, &mut out) {}
        }
        live.exchange(&mut aside);
        for s in 3..8 {
            while !live.lock(0, s).capture_step(1000, &mut out) {}
        }
        live.end_capture();
        let count = |out: &[u8], prefix: &str, n: usize| {
            (0..n).filter(|i| {
                let key = format!("{prefix}:{i}");
                out.windows(key.len()).any(|w| w == key.as_bytes())
            }).count()
        };
        assert_eq!(count(&out, "old", 200), 200, "the save holds the data set of its start");
        assert_eq!(count(&out, "new", 100), 0, "and nothing that came in after");
        assert_eq!(live.dbsize(0), 100);
        // The next save takes the data set served.
        assert!(live.begin_capture(0, false));
        let mut next = Vec::new();
        for s in 0..8 {
            while !live.lock(0, s).capture_step(1000, &mut next) {}
        }
        live.end_capture();
        assert_eq!((count(&next, "new", 100), count(&next, "old", 200)), (100, 0));
    }

    #[test]
    fn lock_keys_dedups_and_orders() {
        let ks = Keyspace::new(1, 4, Clock::manual(0));
        let mut locked = ks.lock_keys(0, [&b"a"[..], b"b", b"a", b"c"]);
        let (_, s) = locked.shard_for(0, b"a");
        assert!(s.is_empty());
        assert!(locked.guards.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
