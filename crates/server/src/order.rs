//! Ordering stripes: the order in which writes reach the propagation sinks (the
//! append-only log and the replication stream) agrees with the order they ran in.
//!
//! Every write command runs while holding the *ordering stripes* of its keys (a stripe
//! is a small lock chosen by the key's hash; several are taken in ascending order, all
//! of them for keyless writes such as FLUSHALL). Its records are appended to every sink
//! before the stripes are released, so two writes that touch a common key are
//! propagated in the order they ran, without a global lock around execution. Stripes
//! are taken only while something consumes the records (`crate::propagate::active`).
//!
//! Each stripe also remembers the log offset of the last write to its keys, so that a
//! read waits only for writes to the keys it read (`crate::aof`): a reader that finds a
//! stripe held waits for it, which waits for that write's record. Without the log
//! those offsets stay 0.
//!
//! A stripe is one word: the offset while free; while held, a mark, a waiters bit and
//! the holder thread's token (so that a thread knows its own write's stripes, for
//! [`Stripes::expiry_may_propagate`]). Taking one is one compare-and-swap, letting it go
//! one swap; a stripe and its writer mark (below) take 16 bytes, four to a cache line.
//! (Each stripe was a mutex and an offset on a line of its own, 64 KiB in all: with a
//! replica attached, the stripe of a random key was a cache miss per write, and its
//! three atomic operations about 12% of a master's CPU under pipelined SETs.) A waiter
//! spins briefly, then parks (`parking_lot_core`, the parking lot of the mutexes used
//! everywhere else).
//!
//! Each stripe also holds the *writer mark* of the last write to its keys whose record
//! waits in an event loop's own part of the replication stream
//! (`replication::stream`, published after each connection's batch): the next write to
//! the stripe's keys has that part published first, so that its record follows.
//!
//! Lock order: stripes come before shard locks. A thread that keeps a shard lock
//! between commands (lock coalescing, store's `shard_lock.rs`) first tries its stripes
//! without waiting, and gives the kept lock back before it waits for one.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;
use smallvec::SmallVec;

/// Ordering stripes. A power of two; more stripes mean fewer false waits for reads
/// while the disk is slow, at the cost of a longer scan for keyless reads.
const STRIPES: usize = 1024;

/// A held stripe's mark. Offsets (log positions) stay far below it.
const HELD: u64 = 1 << 63;
/// A held stripe's bit: some thread parked waiting for it.
const WAITERS: u64 = 1 << 62;
/// A held stripe's holder: its thread's token.
const TOKEN: u64 = WAITERS - 1;

/// How often a waiter looks again before it parks.
const SPINS: u32 = 64;

/// One stripe: its word (above) and its writer mark, on one 16-byte slot (both are
/// touched by the same write).
#[repr(C, align(16))]
struct Stripe {
    word: AtomicU64,
    writer: AtomicU64,
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
            stripes: (0..STRIPES).map(|_| Stripe { word: AtomicU64::new(0), writer: AtomicU64::new(0) }).collect(),
            in_exec: AtomicBool::new(false),
            exec_stripes: Mutex::new(Vec::new()),
        }
    }
}

/// This thread's token, marking the stripes it holds (1 and up; given on first use).
fn token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static MINE: Cell<u64> = const { Cell::new(0) };
    }
    MINE.with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed) & TOKEN);
        }
        t.get()
    })
}

impl Stripes {
    fn stripe_of(&self, key: &[u8], ks: &store::Keyspace) -> usize {
        // Bits of the key hash that neither the shard index (40..) nor the table's
        // buckets (low bits) use for the same purpose; any fixed choice is correct.
        ((ks.hash(key) >> 24) as usize) & (STRIPES - 1)
    }

    /// Takes the stripes of `keys` (ascending, deduplicated).
    pub fn order_keys<'a, K: AsRef<[u8]>>(&'a self, ks: &store::Keyspace, keys: impl IntoIterator<Item = K>) -> Ordered<'a> {
        let mut idx: SmallVec<[u16; 8]> = keys.into_iter().map(|k| self.stripe_of(k.as_ref(), ks) as u16).collect();
        idx.sort_unstable();
        idx.dedup();
        self.order(&idx)
    }

    /// Takes the stripe of one key (the common write).
    #[inline]
    pub fn order_key(&self, ks: &store::Keyspace, key: &[u8]) -> Ordered<'_> {
        let i = self.stripe_of(key, ks) as u16;
        Ordered { stripes: self, first: (i, self.take(i, HELD | token())), rest: SmallVec::new() }
    }

    /// Takes every stripe (FLUSHALL, FLUSHDB, SWAPDB and other keyless writes).
    pub fn order_all(&self) -> Ordered<'_> {
        let idx: Vec<u16> = (0..STRIPES as u16).collect();
        self.order(&idx)
    }

    /// Takes stripes `idx` (ascending): without waiting while they are free; a thread
    /// that must wait first gives back the shard lock it may keep (see the header).
    fn order(&self, idx: &[u16]) -> Ordered<'_> {
        let me = HELD | token();
        let mut ordered = Ordered { stripes: self, first: (NONE, 0), rest: SmallVec::new() };
        for (n, &i) in idx.iter().enumerate() {
            let held = (i, self.take(i, me));
            if n == 0 {
                ordered.first = held;
            } else {
                ordered.rest.push(held);
            }
        }
        ordered
    }

    /// Takes stripe `i` for holder `me`; returns the offset it held.
    #[inline]
    fn take(&self, i: u16, me: u64) -> u64 {
        let word = &self.stripes[i as usize].word;
        let v = word.load(Ordering::Relaxed);
        match word.compare_exchange(v & !HELD, me, Ordering::Acquire, Ordering::Relaxed) {
            Ok(prev) => prev,
            Err(_) => {
                store::release_kept();
                self.acquire(word, me)
            }
        }
    }

    /// Waits for `word` to be free and takes it; returns the offset it held.
    fn acquire(&self, word: &AtomicU64, me: u64) -> u64 {
        let mut spins = 0;
        let mut v = word.load(Ordering::Relaxed);
        loop {
            if v & HELD == 0 {
                match word.compare_exchange_weak(v, me, Ordering::Acquire, Ordering::Relaxed) {
                    Ok(_) => return v,
                    Err(now) => {
                        v = now;
                        continue;
                    }
                }
            }
            if spins < SPINS {
                spins += 1;
                std::hint::spin_loop();
                v = word.load(Ordering::Relaxed);
                continue;
            }
            if v & WAITERS == 0 {
                if let Err(now) = word.compare_exchange_weak(v, v | WAITERS, Ordering::Relaxed, Ordering::Relaxed) {
                    v = now;
                    continue;
                }
            }
            let key = word as *const AtomicU64 as usize;
            // SAFETY: the key is the address of a word that lives as long as the
            // stripes; the validation runs under the parking lot's queue lock, and the
            // releaser wakes that queue after clearing the mark (`release`), so no
            // wake-up is lost.
            unsafe {
                parking_lot_core::park(
                    key,
                    || word.load(Ordering::Relaxed) & (HELD | WAITERS) == HELD | WAITERS,
                    || {},
                    |_, _| {},
                    parking_lot_core::DEFAULT_PARK_TOKEN,
                    None,
                );
            }
            spins = 0;
            v = word.load(Ordering::Relaxed);
        }
    }

    /// Lets stripe `i` go, holding `offset`.
    #[inline]
    fn release(&self, i: usize, offset: u64) {
        let word = &self.stripes[i].word;
        if word.swap(offset, Ordering::Release) & WAITERS != 0 {
            // SAFETY: as in `acquire`.
            unsafe {
                parking_lot_core::unpark_all(word as *const AtomicU64 as usize, parking_lot_core::DEFAULT_UNPARK_TOKEN);
            }
        }
    }

    /// Whether the removal of expired or evicted `key` may be propagated now: not while
    /// another thread's write to a key of the same stripe is between its change and its
    /// record, since a DEL propagated now could land before that write's record. (The
    /// calling thread's own write holds the stripe, and its record follows.)
    pub fn expiry_may_propagate(&self, ks: &store::Keyspace, key: &[u8]) -> bool {
        let v = self.stripes[self.stripe_of(key, ks)].word.load(Ordering::Acquire);
        v & HELD == 0 || v & TOKEN == token()
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
        let word = &self.stripes[i].word;
        let v = word.load(Ordering::Acquire);
        if v & HELD == 0 {
            return v;
        }
        // A write is between its change and its record: it holds the stripe until the
        // record is appended, so taking the stripe waits for exactly that (and the
        // offset found then is settled: a stripe is written only by its holder).
        // Stripes come before shards, so this thread first gives back the shard lock
        // it may keep from the command that just ran (lock coalescing): that write may
        // be waiting for exactly that shard, and the two loops would wait for each
        // other.
        store::release_kept();
        let offset = self.acquire(word, HELD | token());
        self.release(i, offset);
        offset
    }

    /// The writer mark of `key`'s stripe (0: none).
    pub fn writer_of_key(&self, ks: &store::Keyspace, key: &[u8]) -> u64 {
        self.stripes[self.stripe_of(key, ks)].writer.load(Ordering::Acquire)
    }

    /// An EXEC is being propagated (every loop's gate is held).
    pub fn begin_exec(&self) {
        self.in_exec.store(true, Ordering::Release);
    }

    /// The EXEC ended: the stripes it wrote point at its EXEC record (`end`), if the
    /// log has one. (No write runs meanwhile: every loop's gate is held.)
    pub fn end_exec(&self, end: Option<u64>) {
        self.in_exec.store(false, Ordering::Release);
        let stripes = std::mem::take(&mut *self.exec_stripes.lock());
        if let Some(end) = end {
            for i in stripes {
                self.stripes[i as usize].word.store(end, Ordering::Release);
            }
        }
    }
}

/// Stripes held by a write while it runs, with what each held before; `finish` records
/// where its record ended, and dropping the guard releases them.
///
/// The first stripe has a field of its own and the others a list, which a one-key write
/// (nearly every write) leaves empty: with every stripe in one list, a pipelined SET
/// with a replica attached counted about 30 instructions more (callgrind, 2,698 against
/// 2,670), the list's bookkeeping and its copies.
pub struct Ordered<'a> {
    stripes: &'a Stripes,
    /// The first stripe held (`NONE`: none) and the offset it is let go with: what it
    /// held, until `finish`.
    first: (u16, u64),
    /// The other stripes held, ascending, likewise.
    rest: SmallVec<[(u16, u64); 3]>,
}

/// No stripe (an `Ordered` that holds none: a keyless blocking wait).
const NONE: u16 = u16::MAX;

impl Ordered<'_> {
    /// Each stripe held and its offset (the first, then the others).
    #[inline]
    fn held_mut(&mut self) -> impl Iterator<Item = &mut (u16, u64)> {
        let first = (self.first.0 != NONE).then_some(&mut self.first);
        first.into_iter().chain(self.rest.iter_mut())
    }

    #[inline]
    fn held(&self) -> impl Iterator<Item = u16> + '_ {
        let first = (self.first.0 != NONE).then_some(self.first.0);
        first.into_iter().chain(self.rest.iter().map(|&(i, _)| i))
    }

    /// The writer marks of the stripes held (0: none).
    #[inline]
    pub fn writers(&self) -> impl Iterator<Item = u64> + '_ {
        self.held().map(|i| self.stripes.stripes[i as usize].writer.load(Ordering::Acquire))
    }

    /// Marks the stripes held as last written by the record `mark` names. (Only their
    /// holder writes a mark.)
    #[inline]
    pub fn mark_writer(&self, mark: u64) {
        for i in self.held() {
            self.stripes.stripes[i as usize].writer.store(mark, Ordering::Release);
        }
    }

    /// Settles the stripes: each will point at `end` (the write's record in the log)
    /// or, when nothing was logged, back at what it held before. Returns the offset a
    /// reply of this command must wait for. The caller then drops the guard, which lets
    /// the stripes go. (In place, not by value: the dispatcher keeps the guard in place,
    /// since moving it costs a copy per write.)
    #[inline]
    pub fn finish(&mut self, end: Option<u64>) -> u64 {
        if end.is_some() && self.stripes.in_exec.load(Ordering::Acquire) {
            self.stripes.exec_stripes.lock().extend(self.held());
        }
        let mut need = 0;
        for (_, prev) in self.held_mut() {
            *prev = end.unwrap_or(*prev);
            need = need.max(*prev);
        }
        need
    }
}

impl Drop for Ordered<'_> {
    #[inline]
    fn drop(&mut self) {
        // (A write that unwinds before `finish` puts back what its stripes held.)
        if self.first.0 != NONE {
            self.stripes.release(self.first.0 as usize, self.first.1);
        }
        for &(i, offset) in &self.rest {
            self.stripes.release(i as usize, offset);
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
