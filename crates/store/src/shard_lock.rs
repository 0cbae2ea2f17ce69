//! Shard locks, and lock coalescing across the commands of one pipelined batch.
//!
//! Every shard lock is taken through [`acquire`] and held by a [`ShardGuard`]. Without
//! coalescing a guard is an ordinary mutex guard. Inside a [`Coalescing`] scope (the
//! server opens one while it runs one connection's batch of commands) the lock of the
//! last guard dropped is *kept*: the thread goes on holding it without a guard, and the
//! next [`acquire`] of the same shard adopts it instead of locking again. A pipeline of
//! sixteen commands on one hot key then takes and hands over that key's lock once, not
//! sixteen times: with two event loops on one key, each handover moved the lock's and
//! the data's cache lines between cores, and often parked and woke a thread
//! (redis-benchmark's `ZADD -P 16` on one key cost 1.56x Redis's CPU with two loops).
//!
//! Rules that keep this free of deadlock (see also `db.rs`, "Locking rules"):
//! - At most one lock is kept, and [`acquire`] of any *other* shard releases it before
//!   locking: a thread never waits for a shard while it keeps one.
//! - Code that takes a lock which is held elsewhere while shards are locked (the
//!   server's loop gates, blocked-client registry and log ordering stripes) calls
//!   [`release_kept`] first; the server releases it before every command that is not a
//!   plain data command.
//! - The scope releases what it keeps when it ends, and a kept lock is handed back
//!   fairly after [`MAX_KEPT_USES`] adoptions so that a long pipeline cannot starve
//!   another loop waiting for the same shard.
//!
//! The mutex's guard is leaked (`ManuallyDrop`) while the lock is kept and recreated
//! with `make_guard_unchecked` on adoption: parking_lot's documented raw-lock API, used
//! here because a guard cannot outlive the borrow that a thread-local would need.

use std::cell::Cell;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr;

use parking_lot::{Mutex, MutexGuard};

use crate::shard::Shard;

/// Adoptions of a kept lock before it is handed back fairly (then locked again).
pub const MAX_KEPT_USES: u32 = 64;

thread_local! {
    /// The keyspace of the open coalescing scope on this thread (its address: a scope
    /// is one keyspace's, `Keyspace::coalescing`), or null.
    static SCOPE: Cell<*const ()> = const { Cell::new(ptr::null()) };
    /// The shard lock this thread keeps without a guard, or null. Only ever a shard of
    /// SCOPE's keyspace, which outlives the scope.
    static KEPT: Cell<*const Mutex<Shard>> = const { Cell::new(ptr::null()) };
    /// Adoptions of the kept lock since it was last taken.
    static USES: Cell<u32> = const { Cell::new(0) };
}

/// A locked shard.
///
/// Two words (the mutex is the guard's own), so that [`acquire`] returns it in
/// registers: a third field made it a struct returned through memory, and every caller
/// copied it with a 16-byte load of the callee's two 8-byte stores, a failed store
/// forward that stalled each lock (about a quarter of the RPUSH handler's samples under
/// `-P 16`).
pub struct ShardGuard<'a> {
    guard: ManuallyDrop<MutexGuard<'a, Shard>>,
    /// The address of the shard's keyspace (see `SCOPE`).
    keyspace: *const (),
}

impl Deref for ShardGuard<'_> {
    type Target = Shard;
    fn deref(&self) -> &Shard {
        &self.guard
    }
}

impl DerefMut for ShardGuard<'_> {
    fn deref_mut(&mut self) -> &mut Shard {
        &mut self.guard
    }
}

impl Drop for ShardGuard<'_> {
    fn drop(&mut self) {
        if ptr::eq(SCOPE.get(), self.keyspace) && KEPT.get().is_null() {
            // Keep the lock: the guard is not dropped, so the mutex stays locked.
            KEPT.set(MutexGuard::mutex(&self.guard));
        } else {
            // SAFETY: the guard is dropped exactly once, here.
            unsafe { ManuallyDrop::drop(&mut self.guard) }
        }
    }
}

/// Locks `mutex`, a shard of the keyspace at address `keyspace`, adopting the lock if
/// this thread keeps it and releasing a different kept lock first.
pub(crate) fn acquire(keyspace: *const (), mutex: &Mutex<Shard>) -> ShardGuard<'_> {
    let kept = KEPT.replace(ptr::null());
    if ptr::eq(kept, mutex) {
        let uses = USES.get() + 1;
        if uses <= MAX_KEPT_USES {
            USES.set(uses);
            // SAFETY: this thread holds the lock (it was kept, its guard leaked).
            let guard = unsafe { mutex.make_guard_unchecked() };
            return ShardGuard { guard: ManuallyDrop::new(guard), keyspace };
        }
        // SAFETY: as above; handed to a waiter if there is one, then taken again.
        unsafe { mutex.force_unlock_fair() };
    } else if !kept.is_null() {
        // SAFETY: a kept lock belongs to the open scope's keyspace, which is alive, and
        // is held by this thread.
        unsafe { (*kept).force_unlock() };
    }
    USES.set(0);
    ShardGuard { guard: ManuallyDrop::new(mutex.lock()), keyspace }
}

/// Releases the shard lock this thread keeps, if any. Cheap when there is none.
pub fn release_kept() {
    let kept = KEPT.replace(ptr::null());
    if !kept.is_null() {
        // SAFETY: see `acquire`.
        unsafe { (*kept).force_unlock() };
    }
}

/// A scope in which this thread keeps its last shard lock between guards (see the
/// module header), opened on one keyspace by `Keyspace::coalescing`. Ending it
/// releases what is kept. Scopes do not nest.
pub struct Coalescing<'a> {
    /// The keyspace's borrow: it outlives the scope, and the lock kept in it.
    _keyspace: std::marker::PhantomData<&'a ()>,
    /// Not Send: the kept lock belongs to this thread.
    _thread: std::marker::PhantomData<*const ()>,
}

impl Coalescing<'_> {
    /// Opens the scope of the keyspace at address `keyspace`, borrowed for `'a` by the
    /// caller (`Keyspace::coalescing`).
    pub(crate) fn begin<'a>(keyspace: *const ()) -> Coalescing<'a> {
        release_kept();
        debug_assert!(SCOPE.get().is_null(), "coalescing scopes do not nest");
        SCOPE.set(keyspace);
        Coalescing { _keyspace: std::marker::PhantomData, _thread: std::marker::PhantomData }
    }
}

impl Drop for Coalescing<'_> {
    fn drop(&mut self) {
        SCOPE.set(ptr::null());
        release_kept();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::db::Keyspace;
    use crate::entry::{Entry, Payload};
    use std::sync::Arc;

    fn is_locked(ks: &Keyspace, shard: usize) -> bool {
        ks.raw_shard(0, shard).is_locked()
    }

    #[test]
    fn without_a_scope_guards_unlock() {
        let ks = Keyspace::new(1, 4, Clock::manual(0));
        drop(ks.lock(0, 1));
        assert!(!is_locked(&ks, 1));
    }

    #[test]
    fn a_scope_keeps_the_last_lock_and_adopts_it() {
        let ks = Keyspace::new(1, 4, Clock::manual(0));
        {
            let _c = ks.coalescing();
            {
                let mut s = ks.lock(0, 1);
                s.insert(ks.hash(b"k"), Entry::new(b"k", Payload::Str(b"v"), None, 0));
            }
            assert!(is_locked(&ks, 1), "kept after the guard");
            {
                let mut s = ks.lock(0, 1);
                assert!(s.get(ks.hash(b"k"), b"k", 0).is_some(), "adopted, same data");
            }
            assert!(is_locked(&ks, 1));
            // Another shard: the kept one is released before it is locked.
            drop(ks.lock(0, 2));
            assert!(!is_locked(&ks, 1));
            assert!(is_locked(&ks, 2));
            release_kept();
            assert!(!is_locked(&ks, 2));
            drop(ks.lock(0, 3));
            assert!(is_locked(&ks, 3));
        }
        assert!(!is_locked(&ks, 3), "the scope's end releases");
    }

    #[test]
    fn multi_shard_locks_release_the_kept_one_and_keep_one() {
        let ks = Keyspace::new(1, 4, Clock::manual(0));
        let _c = ks.coalescing();
        drop(ks.lock(0, 3));
        {
            let _all = ks.lock_dbs(&[0]);
            for s in 0..4 {
                assert!(is_locked(&ks, s));
            }
        }
        let locked = (0..4).filter(|&s| is_locked(&ks, s)).count();
        assert_eq!(locked, 1, "one lock kept after a multi-shard guard");
    }

    #[test]
    fn another_keyspace_is_never_kept() {
        let a = Keyspace::new(1, 2, Clock::manual(0));
        let b = Keyspace::new(1, 2, Clock::manual(0));
        let _c = a.coalescing();
        drop(b.lock(0, 0));
        assert!(!b.raw_shard(0, 0).is_locked());
    }

    #[test]
    fn a_waiting_thread_gets_the_lock_after_the_adoption_limit() {
        let ks = Arc::new(Keyspace::new(1, 1, Clock::manual(0)));
        let _c = ks.coalescing();
        drop(ks.lock(0, 0));
        let other = {
            let ks = ks.clone();
            std::thread::spawn(move || {
                let mut s = ks.lock(0, 0);
                s.insert(ks.hash(b"other"), Entry::new(b"other", Payload::Str(b"v"), None, 0));
            })
        };
        // The other thread now waits; adopting past the limit hands the lock over.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut seen = false;
        for _ in 0..(MAX_KEPT_USES * 4) {
            let mut s = ks.lock(0, 0);
            seen = s.get(ks.hash(b"other"), b"other", 0).is_some();
            if seen {
                break;
            }
        }
        assert!(seen, "the waiting thread got the lock");
        other.join().expect("other thread");
    }
}
