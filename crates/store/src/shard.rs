//! One shard of a database: an open-addressing hash table of entries, behind its
//! database's lock for that shard.
//!
//! The shard owns lookup with lazy expiry, insertion and removal, the exact count of keys
//! that have an expiry (so that the active expiry cycle costs nothing where no key has
//! one), the active expiry cursor, sampling for RANDOMKEY, and the bucket-position
//! cursor behind SCAN. It never locks anything itself: callers hold its mutex.
//!
//! SCAN's guarantee (an element present for the whole iteration is returned at least
//! once) comes from walking physical bucket positions together with an `epoch` that
//! changes whenever the table may move entries (a resize, an in-place rehash, a shrink).
//! A cursor carries the epoch it was taken at; a stale epoch restarts the walk of this
//! shard from position 0. That can return an element twice, which Redis allows, but
//! never skips one.
//!
//! A running point-in-time capture (BGSAVE, the log rewrite's base) is served here at
//! entry grain: every method that changes or removes an entry first lets the capture
//! keep the entry's old state if it does not have it yet (`capture.rs` explains the
//! scheme); [`Shard::capture_step`] is the walk (the server's event loops call it).
//!
//! Known limit (to be lifted in issue 3 by a table with Redis's reverse-binary cursor over
//! home buckets): a shard that keeps doubling faster than a SCAN walks it restarts that
//! walk each time, so termination needs the scan to outpace growth of the shard it is in
//! (with COUNT 10 that means fewer than ~10 inserts into one shard per SCAN call).

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::raw::{Bucket, RawTable};

use crate::capture::{CaptureSpec, ShardCapture, MAX_RESTARTS};
use crate::entry::{Entry, Payload};
use crate::events::{self, class, Flags};

thread_local! {
    /// Set on a thread whose commands see every key as live, whatever its expiry: a
    /// replica's link applying its master's stream. The master decides expiry (it sends
    /// DEL before any command that would find a key gone), so its commands must find
    /// the keys it finds, even where the replica's clock, or the stream's lag, already
    /// passed their time (Redis's replica lets its master's client see them the same
    /// way). Read only on the cold path, when a key looked up has expired.
    static EXPIRED_KEYS_LIVE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes keys whose time has passed live (or not) to this thread's lookups: see
/// `EXPIRED_KEYS_LIVE`.
pub fn set_expired_keys_live(on: bool) {
    EXPIRED_KEYS_LIVE.with(|c| c.set(on));
}

fn expired_keys_live() -> bool {
    EXPIRED_KEYS_LIVE.with(|c| c.get())
}

/// The hasher every shard of a keyspace shares, so that a key's hash is computed once
/// and is the same in every database (MOVE, COPY and SWAPDB rely on that).
pub type KeyHasher = foldhash::fast::RandomState;

/// A key [`Shard::sample`] offers to eviction: (key, access field, expiry in ms).
pub type Sampled = (Box<[u8]>, u32, Option<i64>);

/// Counters kept under the shard's lock and summed on demand.
#[derive(Debug, Default, Clone, Copy)]
pub struct ShardStats {
    /// Keys removed because their time had come (lazily or actively).
    pub expired_keys: u64,
}

/// A hash table of entries plus the bookkeeping described in the module header.
pub struct Shard {
    table: RawTable<Entry>,
    hasher: KeyHasher,
    /// Entries that carry an expiry time.
    volatile: usize,
    /// Changes whenever entries may have moved between bucket positions.
    epoch: u32,
    /// Next bucket position for the active expiry cycle.
    expire_cursor: usize,
    pub stats: ShardStats,
    /// Capture parity: while a capture runs, an entry whose mark differs is pending
    /// (not yet captured); between captures every entry's mark equals it.
    parity: bool,
    /// This shard's part of the running capture, if any.
    capture: Option<Box<ShardCapture>>,
    /// Expired entries are hidden but not removed (the server's CLIENT PAUSE, during
    /// which Redis keeps the keyspace still): see [`Keyspace::hold_expiry`].
    ///
    /// [`Keyspace::hold_expiry`]: crate::db::Keyspace::hold_expiry
    expiry_held: bool,
    /// This shard's database (named in the keyspace events it queues).
    db: usize,
    /// The keyspace's wanted event classes: a key expiring or created here is queued
    /// as an event when they include it (`crate::events`).
    events: Arc<Flags>,
}

/// Before a pending entry changes or goes, the running capture keeps its state.
/// (A function of the two fields rather than a method, so that the table can stay
/// borrowed.)
#[inline]
fn keep(capture: &mut Option<Box<ShardCapture>>, parity: bool, e: &mut Entry) {
    if let Some(c) = capture {
        if e.mark() != parity {
            c.keep_before_image(e);
            e.set_mark(parity);
        }
    }
}

/// What a step of the active expiry cycle did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ExpireStep {
    pub sampled: usize,
    pub expired: usize,
}

impl Shard {
    pub fn new(hasher: KeyHasher) -> Shard {
        Shard::in_db(hasher, 0, Arc::default())
    }

    /// A shard of database `db` of a keyspace whose event classes are `events`.
    pub fn in_db(hasher: KeyHasher, db: usize, events: Arc<Flags>) -> Shard {
        Shard {
            table: RawTable::new(),
            hasher,
            volatile: 0,
            epoch: 0,
            expire_cursor: 0,
            stats: ShardStats::default(),
            parity: false,
            capture: None,
            expiry_held: false,
            db,
            events,
        }
    }

    /// Whether the keyspace holds still (CLIENT PAUSE, a FAILOVER holding writes): see
    /// the `expiry_held` field. A read that would change a value in passing (PFCOUNT's
    /// cached count) leaves it alone meanwhile.
    pub fn holds_still(&self) -> bool {
        self.expiry_held
    }

    /// See the `expiry_held` field.
    pub(crate) fn hold_expiry(&mut self, held: bool) {
        self.expiry_held = held;
    }

    /// Number of keys, including expired ones not yet removed (as Redis's DBSIZE).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// Bytes of the hash table itself: a 6-byte slot and a control byte per bucket.
    pub fn table_bytes(&self) -> usize {
        self.table.buckets() * 7
    }

    /// Number of keys with an expiry time.
    pub fn volatile(&self) -> usize {
        self.volatile
    }

    /// Looks a key up for any use, removing it first if it has expired. The caller may
    /// change the entry, so a running capture keeps its old state first.
    pub fn get(&mut self, hash: u64, key: &[u8], now_ms: i64) -> Option<&mut Entry> {
        let bucket = self.find_live(hash, key, now_ms)?;
        // SAFETY: a full bucket of this table; we hold &mut self for the returned lifetime.
        let e = unsafe { bucket.as_mut() };
        keep(&mut self.capture, self.parity, e);
        Some(e)
    }

    /// Looks a key up to read it, removing it first if it has expired, and records the
    /// access time `touch` when given. Unlike [`get`](Self::get) the value cannot
    /// change, so a running capture need not keep a copy.
    pub fn read(
        &mut self,
        hash: u64,
        key: &[u8],
        now_ms: i64,
        touch: Option<crate::clock::Touch>,
    ) -> Option<&Entry> {
        let bucket = self.find_live(hash, key, now_ms)?;
        // SAFETY: a full bucket of this table; we hold &mut self for the returned lifetime.
        let e = unsafe { bucket.as_mut() };
        match touch {
            None => {}
            Some(crate::clock::Touch::Lru(lru)) => e.set_lru(lru),
            Some(lfu) => e.set_lru(lfu.apply(e.lru())),
        }
        Some(e)
    }

    /// Up to `n` entries for maxmemory's eviction to rank (Redis's evictionPoolPopulate,
    /// which takes a few keys from a random place of the table): from a random bucket
    /// on, the next full ones (with a TTL only, when `volatile`), each as (key, access
    /// field, expiry). Visits at most `16 * n` buckets.
    pub fn sample(&self, rng: &mut fastrand::Rng, n: usize, volatile: bool) -> Vec<Sampled> {
        let mut out = Vec::new();
        if self.table.is_empty() || (volatile && self.volatile == 0) {
            return out;
        }
        let buckets = self.table.buckets();
        let mut pos = rng.usize(..buckets);
        for _ in 0..(16 * n).min(buckets) {
            // SAFETY: pos < buckets; the entry is only read.
            unsafe {
                if self.table.is_bucket_full(pos) {
                    let e = self.table.bucket(pos).as_ref();
                    if !volatile || e.expire_at_ms().is_some() {
                        out.push((Box::from(e.key()), e.lru(), e.expire_at_ms()));
                        if out.len() == n {
                            break;
                        }
                    }
                }
            }
            pos = (pos + 1) % buckets;
        }
        out
    }

    /// Removes `key` for maxmemory (Redis's eviction): the entry's bytes freed (as MEMORY
    /// USAGE counts them), or None when it is gone or may not go now (the expiry hook,
    /// which logs its DEL, said no). Pushes the `evicted` event.
    pub fn evict(&mut self, hash: u64, key: &[u8], now_ms: i64) -> Option<usize> {
        self.table.find(hash, |e| e.key() == key)?;
        if !self.events.may_evict(self.db, key, now_ms) {
            return None;
        }
        let mut entry = self.table.remove_entry(hash, |e| e.key() == key)?;
        keep(&mut self.capture, self.parity, &mut entry);
        if entry.expire_at_ms().is_some() {
            self.volatile -= 1;
        }
        self.maybe_shrink();
        events::push(&self.events, class::EVICTED, "evicted", self.db, key);
        Some(entry.heap_size(Some(5)) + 7)
    }

    /// The bucket of a key unless it has expired (then it is removed, after the running
    /// capture kept it).
    fn find_live(&mut self, hash: u64, key: &[u8], now_ms: i64) -> Option<Bucket<Entry>> {
        let bucket = self.table.find(hash, |e| e.key() == key)?;
        // SAFETY: the bucket was just returned by find on this table and nothing has
        // modified the table since.
        let e = unsafe { bucket.as_mut() };
        if e.is_expired(now_ms) {
            if expired_keys_live() {
                return Some(bucket);
            }
            if self.expiry_held || !self.events.may_expire(self.db, e.key(), now_ms) {
                return None;
            }
            keep(&mut self.capture, self.parity, e);
            events::push(&self.events, class::EXPIRED, "expired", self.db, e.key());
            // SAFETY: same bucket, still full; `e` is not used after this.
            unsafe { self.table.erase(bucket) };
            self.volatile -= 1;
            self.stats.expired_keys += 1;
            return None;
        }
        Some(bucket)
    }

    /// Looks a key up without expiring it or touching anything (for OBJECT-style
    /// introspection that must not change state). Expired keys are reported absent.
    pub fn peek(&self, hash: u64, key: &[u8], now_ms: i64) -> Option<&Entry> {
        self.table
            .get(hash, |e| e.key() == key)
            .filter(|e| !e.is_expired(now_ms))
    }

    /// Inserts an entry, replacing and returning any entry with the same key (expired
    /// or not).
    pub fn insert(&mut self, hash: u64, entry: Entry) -> Option<Entry> {
        self.insert_bucket(hash, entry, true).1
    }

    /// [`insert`](Self::insert) of an entry read from a file (RDB load): not a key a
    /// command created, so no `new` event (as Redis's load).
    pub fn insert_loaded(&mut self, hash: u64, entry: Entry) -> Option<Entry> {
        self.insert_bucket(hash, entry, false).1
    }

    /// [`insert`](Self::insert), also giving the bucket the entry went to; a key new to
    /// the table is reported as a `new` event when `report_new`.
    fn insert_bucket(&mut self, hash: u64, mut entry: Entry, report_new: bool) -> (Bucket<Entry>, Option<Entry>) {
        // New to the table: a running capture must not take it.
        entry.set_mark(self.parity);
        if entry.expire_at_ms().is_some() {
            self.volatile += 1;
        }
        if let Some(bucket) = self.table.find(hash, |e| e.key() == entry.key()) {
            // SAFETY: a full bucket of this table, not modified since.
            let slot = unsafe { bucket.as_mut() };
            keep(&mut self.capture, self.parity, slot);
            let old = std::mem::replace(slot, entry);
            if old.expire_at_ms().is_some() {
                self.volatile -= 1;
            }
            return (bucket, Some(old));
        }
        if self.table.capacity() == self.table.len() {
            // The insert below will resize or rehash in place: positions move.
            self.epoch = self.epoch.wrapping_add(1);
        }
        if report_new {
            events::push(&self.events, class::NEW, "new", self.db, entry.key());
        }
        let hasher = self.hasher;
        (self.table.insert(hash, entry, |e| hasher.hash_one(e.key())), None)
    }

    /// The live entry of `key`, or `make()`'s inserted in its place when it is absent
    /// or expired: what creating a collection on its first write needs (`get`, `insert`
    /// and `get` again searched the table three times, and each push to an existing
    /// list twice; now once, and twice to create).
    pub fn get_or_insert_with(
        &mut self,
        hash: u64,
        key: &[u8],
        now_ms: i64,
        make: impl FnOnce() -> Entry,
    ) -> &mut Entry {
        let bucket = match self.find_live(hash, key, now_ms) {
            Some(bucket) => {
                // SAFETY: a full bucket of this table, not modified since.
                keep(&mut self.capture, self.parity, unsafe { bucket.as_mut() });
                bucket
            }
            // Through `insert_bucket`, which replaces an expired entry that stays in the
            // table while expiry is held (CLIENT PAUSE).
            None => self.insert_bucket(hash, make(), true).0,
        };
        // SAFETY: a full bucket of this table; we hold &mut self for the returned lifetime.
        unsafe { bucket.as_mut() }
    }

    /// Sets `key` to a string value with an expiry (SET and friends), rewriting the
    /// existing entry in place when it can, so that an overwrite does not allocate.
    pub fn set_string(
        &mut self,
        hash: u64,
        key: &[u8],
        value: &[u8],
        expire_at_ms: Option<i64>,
        now_ms: i64,
        lru: u32,
    ) {
        if let Some(e) = self.table.get_mut(hash, |e| e.key() == key) {
            keep(&mut self.capture, self.parity, e);
            let had = e.expire_at_ms().is_some();
            if e.is_expired(now_ms) && !expired_keys_live() {
                // Rewritten in place, but to a reader a key that expired and a new one:
                // counted and reported as Redis's lookup then add would (and logged:
                // the writer holds the key, so the hook's answer is yes).
                self.events.may_expire(self.db, key, now_ms);
                self.stats.expired_keys += 1;
                events::push(&self.events, class::EXPIRED, "expired", self.db, key);
                events::push(&self.events, class::NEW, "new", self.db, key);
            }
            if !e.overwrite_string(value, expire_at_ms, lru) {
                *e = Entry::new(key, Payload::Str(value), expire_at_ms, lru);
                e.set_mark(self.parity);
            }
            match (had, expire_at_ms.is_some()) {
                (false, true) => self.volatile += 1,
                (true, false) => self.volatile -= 1,
                _ => {}
            }
            return;
        }
        self.insert(
            hash,
            Entry::new(key, Payload::Str(value), expire_at_ms, lru),
        );
    }

    /// Removes a key and returns its entry if it was present and not expired.
    pub fn remove(&mut self, hash: u64, key: &[u8], now_ms: i64) -> Option<Entry> {
        let mut entry = self.table.remove_entry(hash, |e| e.key() == key)?;
        keep(&mut self.capture, self.parity, &mut entry);
        if entry.expire_at_ms().is_some() {
            self.volatile -= 1;
        }
        self.maybe_shrink();
        if entry.is_expired(now_ms) && !expired_keys_live() {
            // Removed already by the caller's write (which holds the key: the hook logs).
            self.events.may_expire(self.db, key, now_ms);
            self.stats.expired_keys += 1;
            events::push(&self.events, class::EXPIRED, "expired", self.db, key);
            return None;
        }
        Some(entry)
    }

    /// Sets or clears a live key's expiry. Returns false if the key is absent.
    pub fn set_expire(
        &mut self,
        hash: u64,
        key: &[u8],
        expire_at_ms: Option<i64>,
        now_ms: i64,
    ) -> bool {
        let Some(entry) = self.get(hash, key, now_ms) else {
            return false;
        };
        let had = entry.expire_at_ms().is_some();
        entry.set_expire_at_ms(expire_at_ms);
        match (had, expire_at_ms.is_some()) {
            (false, true) => self.volatile += 1,
            (true, false) => self.volatile -= 1,
            _ => {}
        }
        true
    }

    /// Removes every entry and returns the old table, so that the caller can drop it
    /// outside the lock (or on another thread, for FLUSHALL ASYNC).
    pub fn take_all(&mut self) -> RawTable<Entry> {
        self.keep_all();
        self.volatile = 0;
        self.expire_cursor = 0;
        self.epoch = self.epoch.wrapping_add(1);
        std::mem::replace(&mut self.table, RawTable::new())
    }

    /// Swaps contents with another shard (SWAPDB, or a keyspace loaded aside:
    /// `Keyspace::exchange`). Both epochs change.
    pub fn swap_contents(&mut self, other: &mut Shard) {
        // Entries change databases: each capture keeps what it has not got yet first,
        // which leaves every entry of both tables marked with its shard's parity.
        self.keep_all();
        other.keep_all();
        std::mem::swap(&mut self.table, &mut other.table);
        std::mem::swap(&mut self.volatile, &mut other.volatile);
        self.epoch = self.epoch.wrapping_add(1);
        other.epoch = other.epoch.wrapping_add(1);
        self.expire_cursor = 0;
        other.expire_cursor = 0;
        // The shards of one keyspace share the parity; a shard of another keyspace may
        // not (a capture ran here since it was made): the entries take their new
        // shard's, or a later capture would count them as already captured.
        if self.parity != other.parity {
            self.mark_all();
            other.mark_all();
        }
    }

    /// Gives every entry this shard's parity (no capture may be running: see
    /// `swap_contents`, after `keep_all`).
    fn mark_all(&mut self) {
        let parity = self.parity;
        // SAFETY: the iterator does not outlive this block and the table's structure is
        // not modified while it runs (only entries' marks, through their buckets).
        unsafe {
            for bucket in self.table.iter() {
                bucket.as_mut().set_mark(parity);
            }
        }
    }

    /// The capture parity (see the field); a shard made to exchange contents with this
    /// one starts with it (`Keyspace::empty_like`).
    pub(crate) fn parity(&self) -> bool {
        self.parity
    }

    pub(crate) fn set_parity(&mut self, parity: bool) {
        debug_assert!(self.table.is_empty() && self.capture.is_none());
        self.parity = parity;
    }

    /// Calls `f` for every live entry (expired ones are skipped, not removed).
    pub fn for_each_live(&self, now_ms: i64, mut f: impl FnMut(&Entry)) {
        // SAFETY: the iterator does not outlive &self and the table is not modified
        // while it runs.
        unsafe {
            for bucket in self.table.iter() {
                let e = bucket.as_ref();
                if !e.is_expired(now_ms) {
                    f(e);
                }
            }
        }
    }

    /// Removes every expired entry (used by KEYS-like full walks that should not
    /// return them and may as well reclaim them). Returns how many were removed.
    pub fn purge_expired(&mut self, now_ms: i64) -> usize {
        if self.volatile == 0 || self.expiry_held {
            return 0;
        }
        let mut removed = 0;
        // SAFETY: erase of the bucket being visited is allowed by RawIter's contract
        // (hashbrown documents that the current item may be erased during iteration).
        unsafe {
            for bucket in self.table.iter() {
                if bucket.as_ref().is_expired(now_ms) && self.events.may_expire(self.db, bucket.as_ref().key(), now_ms) {
                    keep(&mut self.capture, self.parity, bucket.as_mut());
                    events::push(&self.events, class::EXPIRED, "expired", self.db, bucket.as_ref().key());
                    self.table.erase(bucket);
                    removed += 1;
                }
            }
        }
        self.volatile -= removed;
        self.stats.expired_keys += removed as u64;
        removed
    }

    /// The shard's current epoch, as carried in SCAN cursors.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Number of bucket positions (a power of two, or 0 for an empty table).
    pub fn positions(&self) -> usize {
        self.table.buckets()
    }

    /// Visits live entries from bucket position `from` on, until at least `min_visits`
    /// entries were seen or the table ends. Returns the next position, or None when the
    /// walk of this shard is complete.
    pub fn scan_from(
        &self,
        from: usize,
        min_visits: usize,
        now_ms: i64,
        mut f: impl FnMut(&Entry),
    ) -> Option<usize> {
        let buckets = if self.table.is_empty() {
            0
        } else {
            self.table.buckets()
        };
        let mut pos = from;
        let mut seen = 0;
        while pos < buckets {
            // SAFETY: pos < buckets(), and is_bucket_full is checked before bucket().
            unsafe {
                if self.table.is_bucket_full(pos) {
                    let e = self.table.bucket(pos).as_ref();
                    seen += 1;
                    if !e.is_expired(now_ms) {
                        f(e);
                    }
                }
            }
            pos += 1;
            if seen >= min_visits {
                break;
            }
        }
        (pos < buckets).then_some(pos)
    }

    /// A random live entry, or None when the shard holds none. Expired entries met on the
    /// way are removed (as Redis's RANDOMKEY does).
    pub fn random_live(&mut self, now_ms: i64, rng: &mut fastrand::Rng) -> Option<&Entry> {
        for _ in 0..100 {
            if self.table.is_empty() {
                return None;
            }
            let buckets = self.table.buckets();
            let start = rng.usize(..buckets);
            let mut found = None;
            for i in 0..buckets {
                let pos = (start + i) & (buckets - 1);
                // SAFETY: pos < buckets.
                if unsafe { self.table.is_bucket_full(pos) } {
                    found = Some(pos);
                    break;
                }
            }
            let pos = found?;
            // SAFETY: pos is a full bucket of this table.
            let bucket = unsafe { self.table.bucket(pos) };
            // SAFETY: as above.
            if unsafe { bucket.as_ref() }.is_expired(now_ms) {
                // SAFETY: as above.
                if self.expiry_held || !self.events.may_expire(self.db, unsafe { bucket.as_ref() }.key(), now_ms) {
                    continue;
                }
                // SAFETY: as above.
                keep(&mut self.capture, self.parity, unsafe { bucket.as_mut() });
                // SAFETY: as above.
                events::push(&self.events, class::EXPIRED, "expired", self.db, unsafe { bucket.as_ref() }.key());
                // SAFETY: as above.
                unsafe { self.table.erase(bucket) };
                self.volatile -= 1;
                self.stats.expired_keys += 1;
                continue;
            }
            // SAFETY: as above; the reference lives as long as &self.
            return Some(unsafe { bucket.as_ref() });
        }
        None
    }

    /// One step of the active expiry cycle: examines up to `budget` bucket positions
    /// from where the last step stopped and removes expired entries.
    pub fn expire_step(&mut self, now_ms: i64, budget: usize) -> ExpireStep {
        let mut step = ExpireStep::default();
        if self.volatile == 0 || self.table.is_empty() || self.expiry_held {
            return step;
        }
        let buckets = self.table.buckets();
        let mut pos = self.expire_cursor.min(buckets);
        for _ in 0..budget.min(buckets) {
            if pos >= buckets {
                pos = 0;
            }
            // SAFETY: pos < buckets; the bucket is erased only while full.
            unsafe {
                if self.table.is_bucket_full(pos) {
                    let bucket = self.table.bucket(pos);
                    let e = bucket.as_ref();
                    if e.expire_at_ms().is_some() {
                        step.sampled += 1;
                        if e.is_expired(now_ms) && self.events.may_expire(self.db, e.key(), now_ms) {
                            keep(&mut self.capture, self.parity, bucket.as_mut());
                            events::push(&self.events, class::EXPIRED, "expired", self.db, bucket.as_ref().key());
                            self.table.erase(bucket);
                            self.volatile -= 1;
                            step.expired += 1;
                        }
                    }
                }
            }
            pos += 1;
        }
        self.expire_cursor = pos;
        self.stats.expired_keys += step.expired as u64;
        step
    }

    /// Lets the running capture keep every entry it does not have yet (before the whole
    /// table goes or changes database).
    fn keep_all(&mut self) {
        if self.capture.is_none() {
            return;
        }
        // SAFETY: the iterator does not outlive this block and the table's structure is
        // not modified while it runs (only entries' contents, through their buckets).
        unsafe {
            for bucket in self.table.iter() {
                keep(&mut self.capture, self.parity, bucket.as_mut());
            }
        }
    }

    /// Starts this shard's part of a capture: every entry becomes pending. The caller
    /// makes sure that no command runs until every shard has begun.
    pub fn capture_begin(&mut self, spec: Arc<CaptureSpec>) {
        // Never expected (the keyspace ends every capture), but a leftover part must not
        // leave entries with the wrong mark under the new parity.
        self.capture_abandon();
        self.parity = !self.parity;
        self.capture = Some(Box::new(ShardCapture::new(spec, self.epoch)));
    }

    /// One step of the walk (each event loop walks its own shards): encodes the pending entries among the
    /// next `budget` bucket positions into `out`. Returns true when the shard is done:
    /// its before-images were appended to `out` and its part of the capture is over.
    pub fn capture_step(&mut self, budget: usize, out: &mut Vec<u8>) -> bool {
        let parity = self.parity;
        let epoch = self.epoch;
        let Some(c) = self.capture.as_mut() else {
            return true;
        };
        if c.walk_epoch != epoch {
            // Entries moved: walk again from the start (what is marked is skipped).
            c.walk_epoch = epoch;
            c.walk_at = 0;
            c.restarts += 1;
        }
        let budget = if c.restarts >= MAX_RESTARTS {
            usize::MAX
        } else {
            budget
        };
        let buckets = if self.table.is_empty() {
            0
        } else {
            self.table.buckets()
        };
        let end = c.walk_at.saturating_add(budget).min(buckets);
        for pos in c.walk_at..end {
            // SAFETY: pos < buckets(), and is_bucket_full is checked before bucket(); the
            // entry is only read and re-marked.
            unsafe {
                if self.table.is_bucket_full(pos) {
                    let e = self.table.bucket(pos).as_mut();
                    if e.mark() != parity {
                        c.spec.encode(e, out);
                        e.set_mark(parity);
                    }
                }
            }
        }
        c.walk_at = end;
        if end < buckets {
            return false;
        }
        if let Some(c) = self.capture.take() {
            c.finish(out);
        }
        true
    }

    /// Ends this shard's part of a capture that will not be written: pending entries
    /// are marked without being encoded, and the before-images are freed.
    pub fn capture_abandon(&mut self) {
        if self.capture.take().is_none() {
            return;
        }
        // SAFETY: as in keep_all.
        unsafe {
            for bucket in self.table.iter() {
                bucket.as_mut().set_mark(self.parity);
            }
        }
    }

    /// True while this shard has a part in a running capture.
    pub fn capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// Gives memory back when the table is mostly empty, as Redis shrinks its dicts
    /// below 10% fill.
    fn maybe_shrink(&mut self) {
        let buckets = self.table.buckets();
        if buckets > 64 && self.table.len() * 10 < buckets {
            let hasher = self.hasher;
            self.table
                .shrink_to(self.table.len() * 2, |e| hasher.hash_one(e.key()));
            self.epoch = self.epoch.wrapping_add(1);
            self.expire_cursor = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard() -> (Shard, KeyHasher) {
        let h = KeyHasher::default();
        (Shard::new(h), h)
    }

    fn put(s: &mut Shard, h: &KeyHasher, key: &[u8], exp: Option<i64>) {
        s.insert(h.hash_one(key), Entry::new(key, Payload::Str(b"v"), exp, 0));
    }

    #[test]
    fn lazy_expiry_removes_on_access_and_counts() {
        let (mut s, h) = shard();
        put(&mut s, &h, b"a", Some(100));
        put(&mut s, &h, b"b", None);
        assert_eq!(s.volatile(), 1);
        assert!(s.get(h.hash_one(b"a"), b"a", 99).is_some());
        assert!(s.get(h.hash_one(b"a"), b"a", 100).is_none());
        assert_eq!(s.len(), 1);
        assert_eq!(s.volatile(), 0);
        assert_eq!(s.stats.expired_keys, 1);
    }

    #[test]
    fn held_expiry_hides_expired_keys_without_removing_them() {
        let (mut s, h) = shard();
        put(&mut s, &h, b"a", Some(100));
        put(&mut s, &h, b"b", None);
        s.hold_expiry(true);
        assert!(s.get(h.hash_one(b"a"), b"a", 100).is_none());
        assert!(s.read(h.hash_one(b"a"), b"a", 100, None).is_none());
        assert_eq!(s.purge_expired(100), 0);
        assert_eq!(s.expire_step(100, 64).expired, 0);
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20 {
            assert_eq!(s.random_live(100, &mut rng).map(|e| e.key().to_vec()), Some(b"b".to_vec()));
        }
        assert_eq!((s.len(), s.volatile(), s.stats.expired_keys), (2, 1, 0));
        s.hold_expiry(false);
        assert!(s.get(h.hash_one(b"a"), b"a", 100).is_none());
        assert_eq!((s.len(), s.volatile(), s.stats.expired_keys), (1, 0, 1));
    }

    #[test]
    fn get_or_insert_with_finds_creates_and_replaces_a_held_expired_key() {
        let (mut s, h) = shard();
        let make = |key: &'static [u8]| move || Entry::new(key, Payload::Str(b"new"), None, 0);
        put(&mut s, &h, b"a", None);
        // Present: the entry itself, nothing made.
        let e = s.get_or_insert_with(h.hash_one(b"a"), b"a", 0, || unreachable!("a is present"));
        assert!(e.expire_at_ms().is_none());
        assert_eq!(s.len(), 1);
        // Absent: made and inserted, then found.
        s.get_or_insert_with(h.hash_one(b"b"), b"b", 0, make(b"b"));
        assert_eq!(s.len(), 2);
        assert!(s.get(h.hash_one(b"b"), b"b", 0).is_some());
        // Expired: removed and replaced.
        put(&mut s, &h, b"c", Some(100));
        s.get_or_insert_with(h.hash_one(b"c"), b"c", 100, make(b"c"));
        assert_eq!((s.len(), s.volatile(), s.stats.expired_keys), (3, 0, 1));
        // Expired while expiry is held (CLIENT PAUSE): the old entry stays in the table
        // until then, and is replaced in place, not shadowed by a second entry.
        put(&mut s, &h, b"d", Some(100));
        s.hold_expiry(true);
        s.get_or_insert_with(h.hash_one(b"d"), b"d", 100, make(b"d"));
        assert_eq!((s.len(), s.volatile()), (4, 0));
        s.hold_expiry(false);
        assert!(s.get(h.hash_one(b"d"), b"d", 100).is_some_and(|e| e.expire_at_ms().is_none()));
        assert_eq!(s.len(), 4);
    }

    #[test]
    fn volatile_count_stays_exact() {
        let (mut s, h) = shard();
        put(&mut s, &h, b"a", Some(100));
        put(&mut s, &h, b"a", Some(200)); // replace volatile with volatile
        assert_eq!(s.volatile(), 1);
        put(&mut s, &h, b"a", None);
        assert_eq!(s.volatile(), 0);
        assert!(s.set_expire(h.hash_one(b"a"), b"a", Some(5), 0));
        assert_eq!(s.volatile(), 1);
        assert!(s.set_expire(h.hash_one(b"a"), b"a", None, 0));
        assert_eq!(s.volatile(), 0);
        assert!(!s.set_expire(h.hash_one(b"zz"), b"zz", Some(5), 0));
    }

    #[test]
    fn active_expiry_reclaims_everything_in_bounded_steps() {
        let (mut s, h) = shard();
        for i in 0..1000 {
            let key = format!("k{i}");
            put(
                &mut s,
                &h,
                key.as_bytes(),
                if i % 2 == 0 { Some(10) } else { None },
            );
        }
        let mut expired = 0;
        for _ in 0..1000 {
            expired += s.expire_step(11, 64).expired;
        }
        assert_eq!(expired, 500);
        assert_eq!(s.len(), 500);
        assert_eq!(s.volatile(), 0);
    }

    #[test]
    fn scan_returns_every_stable_key_despite_growth() {
        let (mut s, h) = shard();
        for i in 0..100 {
            put(&mut s, &h, format!("stable{i}").as_bytes(), None);
        }
        let mut seen = std::collections::HashSet::new();
        let mut pos = 0;
        let mut epoch = s.epoch();
        let mut added = 0;
        loop {
            if s.epoch() != epoch {
                pos = 0;
                epoch = s.epoch();
            }
            let next = s.scan_from(pos, 10, 0, |e| {
                seen.insert(e.key().to_vec());
            });
            // Grow the table between calls, slower than the scan walks it.
            for _ in 0..3 {
                put(&mut s, &h, format!("new{added}").as_bytes(), None);
                added += 1;
            }
            match next {
                Some(p) if s.epoch() == epoch => pos = p,
                Some(_) => {}
                None if s.epoch() == epoch => break,
                None => {}
            }
            assert!(added < 100_000, "scan did not terminate");
        }
        for i in 0..100 {
            assert!(
                seen.contains(format!("stable{i}").as_bytes()),
                "missed stable{i}"
            );
        }
    }

    #[test]
    fn random_live_skips_expired() {
        let (mut s, h) = shard();
        put(&mut s, &h, b"dead", Some(1));
        put(&mut s, &h, b"live", None);
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..20 {
            assert_eq!(
                s.random_live(5, &mut rng).map(|e| e.key().to_vec()),
                Some(b"live".to_vec())
            );
        }
    }
}
