//! Ordering stripes: the order in which writes reach the propagation sinks (the
//! append-only log and the replication stream) agrees with the order they ran in.
//!
//! Every write command runs while holding the *ordering stripes* of its keys (a stripe
//! is a small mutex chosen by the key's hash; several are taken in ascending order, all
//! of them for keyless writes such as FLUSHALL). Its records are appended to every sink
//! before the stripes are released, so two writes that touch a common key are
//! propagated in the order they ran, without a global lock around execution. Stripes
//! are taken before any shard lock and never while one is held. Stripes are taken only
//! while something consumes the records (`crate::propagate::active`).
//!
//! Each stripe also remembers the log offset of the last write to its keys, so that a
//! read waits only for writes to the keys it read (`crate::aof`): a write in flight
//! marks its stripes `PENDING` before it changes anything; a reader that sees the mark
//! takes the stripe's lock, which waits for that write's record. Without the log those
//! offsets stay 0.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Mutex, MutexGuard};
use smallvec::SmallVec;

/// Ordering stripes. A power of two; more stripes mean fewer false waits for reads
/// while the disk is slow, at the cost of a longer scan for keyless reads.
const STRIPES: usize = 1024;

/// The mark of a stripe whose write is in flight (its record not yet appended).
const PENDING: u64 = u64::MAX;

/// One ordering stripe, on its own cache line (every write on any loop touches one).
#[repr(align(64))]
struct Stripe {
    lock: Mutex<()>,
    /// Log offset of the end of the last record of a write to this stripe's keys, or
    /// PENDING while such a write runs.
    last_write: AtomicU64,
}

/// The stripes, and the ones an EXEC being propagated has written.
pub struct Stripes {
    stripes: Box<[Stripe]>,
    /// An EXEC is being propagated (every loop's gate held).
    in_exec: AtomicBool,
    /// Stripes written inside that EXEC: they point at its EXEC record once it ends
    /// (replay drops a transaction without EXEC).
    exec_stripes: Mutex<Vec<u16>>,
}

impl Default for Stripes {
    fn default() -> Self {
        Stripes {
            stripes: (0..STRIPES)
                .map(|_| Stripe {
                    lock: Mutex::new(()),
                    last_write: AtomicU64::new(0),
                })
                .collect(),
            in_exec: AtomicBool::new(false),
            exec_stripes: Mutex::new(Vec::new()),
        }
    }
}

impl Stripes {
    fn stripe_of(&self, key: &[u8], ks: &store::Keyspace) -> usize {
        // Bits of the key hash that neither the shard index (40..) nor the table's
        // buckets (low bits) use for the same purpose; any fixed choice is correct.
        ((ks.hash(key) >> 24) as usize) & (STRIPES - 1)
    }

    /// Takes the stripes of `keys` (ascending, deduplicated) and marks them PENDING.
    pub fn order_keys<'a, K: AsRef<[u8]>>(&'a self, ks: &store::Keyspace, keys: impl IntoIterator<Item = K>) -> Ordered<'a> {
        let mut idx: SmallVec<[u16; 8]> = keys.into_iter().map(|k| self.stripe_of(k.as_ref(), ks) as u16).collect();
        idx.sort_unstable();
        idx.dedup();
        self.order(idx)
    }

    /// Takes every stripe (FLUSHALL, FLUSHDB, SWAPDB and other keyless writes).
    pub fn order_all(&self) -> Ordered<'_> {
        self.order((0..STRIPES as u16).collect())
    }

    fn order(&self, idx: SmallVec<[u16; 8]>) -> Ordered<'_> {
        // Stripes are taken before shard locks, so never while keeping one (lock
        // coalescing, store's `shard_lock.rs`; the dispatcher does not coalesce while
        // stripes are taken, this is the rule's second line).
        store::release_kept();
        let mut guards = SmallVec::with_capacity(idx.len());
        let mut prev = SmallVec::with_capacity(idx.len());
        for &i in &idx {
            let s = &self.stripes[i as usize];
            guards.push(s.lock.lock());
            prev.push(s.last_write.swap(PENDING, Ordering::AcqRel));
        }
        // A thread orders one write at a time (a stripe is a mutex it cannot take twice).
        OWN_STRIPES.with(|own| {
            let mut own = own.borrow_mut();
            own.clear();
            own.extend_from_slice(&idx);
        });
        Ordered {
            stripes: self,
            idx,
            prev,
            _guards: guards,
        }
    }

    /// Whether the removal of expired or evicted `key` may be propagated now: not while
    /// another thread's write to a key of the same stripe is between its change and its
    /// record, since a DEL propagated now could land before that write's record. (The
    /// calling thread's own write holds the stripe, and its record follows.)
    pub fn expiry_may_propagate(&self, ks: &store::Keyspace, key: &[u8]) -> bool {
        let i = self.stripe_of(key, ks) as u16;
        self.stripes[i as usize].last_write.load(Ordering::Acquire) != PENDING
            || OWN_STRIPES.with(|own| own.borrow().binary_search(&i).is_ok())
    }

    /// The offset a reply must wait for after reading `keys`: the newest write to any
    /// of their stripes, waiting out a write still in flight on one of them.
    pub fn need_for_keys<K: AsRef<[u8]>>(&self, ks: &store::Keyspace, keys: impl IntoIterator<Item = K>) -> u64 {
        keys.into_iter().map(|k| self.settled(self.stripe_of(k.as_ref(), ks))).max().unwrap_or(0)
    }

    /// The offset a reply must wait for after reading the whole keyspace (DBSIZE,
    /// KEYS, SCAN, INFO ...): every stripe's newest write.
    pub fn need_for_all(&self) -> u64 {
        (0..STRIPES).map(|i| self.settled(i)).max().unwrap_or(0)
    }

    fn settled(&self, i: usize) -> u64 {
        let s = &self.stripes[i];
        let v = s.last_write.load(Ordering::Acquire);
        if v != PENDING {
            return v;
        }
        // A write is between its change and its record: its lock is held until the
        // record is appended, so waiting for the lock waits for exactly that. Stripes
        // come before shards, so this thread first gives back the shard lock it may
        // keep from the command that just ran (lock coalescing): that write may be
        // waiting for exactly that shard, and the two loops would wait for each other.
        store::release_kept();
        // Read while holding the lock: a writer marks the stripe PENDING only while it
        // holds it, so under the lock the value is settled. (Read after letting go, it
        // could already be the next writer's PENDING, u64::MAX: a reply held for that
        // offset would never leave. Seen as a client waiting forever for 38 KB of
        // replies in the concurrent log-replay test.)
        let _held = s.lock.lock();
        s.last_write.load(Ordering::Acquire)
    }

    /// An EXEC is being propagated (every loop's gate is held).
    pub fn begin_exec(&self) {
        self.in_exec.store(true, Ordering::Release);
    }

    /// The EXEC ended: the stripes it wrote point at its EXEC record (`end`), if the
    /// log has one.
    pub fn end_exec(&self, end: Option<u64>) {
        self.in_exec.store(false, Ordering::Release);
        let stripes = std::mem::take(&mut *self.exec_stripes.lock());
        if let Some(end) = end {
            for i in stripes {
                self.stripes[i as usize].last_write.store(end, Ordering::Release);
            }
        }
    }
}

thread_local! {
    /// The stripes the write running on this thread holds (sorted), for
    /// [`Stripes::expiry_may_propagate`]; empty between writes.
    static OWN_STRIPES: std::cell::RefCell<Vec<u16>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Stripes held by a write while it runs; `finish` records where its record ended, and
/// dropping the guard releases them.
pub struct Ordered<'a> {
    stripes: &'a Stripes,
    idx: SmallVec<[u16; 8]>,
    prev: SmallVec<[u64; 8]>,
    _guards: SmallVec<[MutexGuard<'a, ()>; 8]>,
}

impl Ordered<'_> {
    /// Settles the stripes: each now points at `end` (the write's record in the log) or,
    /// when nothing was logged, back at what it held before. Returns the offset a reply
    /// of this command must wait for. The caller then drops the guard, which lets the
    /// stripes go. (In place, not by value: the dispatcher keeps the guard in place,
    /// since moving it costs a copy of its 200-odd bytes per write.)
    pub fn finish(&mut self, end: Option<u64>) -> u64 {
        if end.is_some() && self.stripes.in_exec.load(Ordering::Acquire) {
            self.stripes.exec_stripes.lock().extend_from_slice(&self.idx);
        }
        let mut need = 0;
        for (&i, &p) in self.idx.iter().zip(&self.prev) {
            let v = end.unwrap_or(p);
            need = need.max(v);
            self.stripes.stripes[i as usize].last_write.store(v, Ordering::Release);
        }
        need
    }
}

impl Drop for Ordered<'_> {
    fn drop(&mut self) {
        OWN_STRIPES.with(|own| own.borrow_mut().clear());
        // A write that unwinds before `finish` must not leave its stripes PENDING
        // forever: put back what they held.
        for (&i, &p) in self.idx.iter().zip(&self.prev) {
            let s = &self.stripes.stripes[i as usize];
            if s.last_write.load(Ordering::Relaxed) == PENDING {
                s.last_write.store(p, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripes_remember_the_last_write_and_make_readers_wait_for_one_in_flight() {
        let ks = store::Keyspace::new(1, 4, store::Clock::manual(0));
        let stripes = std::sync::Arc::new(Stripes::default());
        assert_eq!(stripes.need_for_keys(&ks, ["k"]), 0);
        let mut o = stripes.order_keys(&ks, ["k", "k"]);
        assert_eq!(o.finish(Some(40)), 40);
        drop(o);
        assert_eq!(stripes.need_for_keys(&ks, ["k"]), 40);
        assert_eq!(stripes.need_for_all(), 40);
        // A write that logs nothing leaves the stripe as it was.
        assert_eq!(stripes.order_keys(&ks, ["k"]).finish(None), 40);
        assert_eq!(stripes.need_for_keys(&ks, ["k"]), 40);

        // A reader that finds a write in flight waits for its record.
        let ks = std::sync::Arc::new(ks);
        let mut o = stripes.order_keys(&ks, ["k"]);
        assert!(stripes.expiry_may_propagate(&ks, b"k"), "the thread's own write");
        let (s2, ks2) = (stripes.clone(), ks.clone());
        let may = std::thread::spawn(move || s2.expiry_may_propagate(&ks2, b"k")).join().expect("expiry");
        assert!(!may, "another thread's write in flight");
        let (s2, ks2) = (stripes.clone(), ks.clone());
        let reader = std::thread::spawn(move || s2.need_for_keys(&ks2, ["k"]));
        std::thread::sleep(std::time::Duration::from_millis(50));
        o.finish(Some(90));
        drop(o);
        let need = reader.join().expect("reader");
        assert_eq!(need, 90);
    }

    #[test]
    fn an_exec_points_its_stripes_at_its_exec_record() {
        let ks = store::Keyspace::new(1, 4, store::Clock::manual(0));
        let stripes = Stripes::default();
        stripes.begin_exec();
        stripes.order_keys(&ks, ["a"]).finish(Some(10));
        stripes.end_exec(Some(25));
        assert_eq!(stripes.need_for_keys(&ks, ["a"]), 25);
    }
}
