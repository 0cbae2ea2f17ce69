//! Freeing large values off the event loops, as Redis's lazyfree does: UNLINK, DEL under
//! `lazyfree-lazy-user-del yes`, and FLUSHDB / FLUSHALL ASYNC hand what they removed to
//! one background thread, so that deleting a collection of millions of elements costs
//! the client a table removal, not the seconds of freeing each element.
//!
//! As in Redis, only values whose freeing takes real work go there: a collection of
//! more than [`THRESHOLD`] elements (Redis's `LAZYFREE_THRESHOLD`, counted in elements
//! here where Redis counts allocations); strings and small collections are freed at
//! once, which is cheaper than the hand-over. INFO memory reports
//! `lazyfree_pending_objects` and `lazyfreed_objects` from the counters here.
//!
//! Owns only the freeing thread and its counters; the callers remove the entries (under
//! their shard locks) and pass them here after the locks are released.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use hashbrown::raw::RawTable;
use store::{Entry, ValueRef};

/// Elements from which a value is freed in the background.
pub const THRESHOLD: usize = 64;

/// What the thread frees; it is only ever dropped there.
#[allow(dead_code)]
enum Garbage {
    Entry(Entry),
    Tables(Vec<RawTable<Entry>>),
}

/// The background freeing thread's queue and counters.
pub struct LazyFree {
    queue: mpsc::Sender<Garbage>,
    pending: Arc<AtomicU64>,
    freed: Arc<AtomicU64>,
}

impl LazyFree {
    /// Starts the freeing thread. If it cannot start, everything is freed inline.
    pub fn start() -> LazyFree {
        let (queue, rx) = mpsc::channel::<Garbage>();
        let pending = Arc::new(AtomicU64::new(0));
        let freed = Arc::new(AtomicU64::new(0));
        let (p, f) = (pending.clone(), freed.clone());
        let started = std::thread::Builder::new()
            .name("lazyfree".into())
            .spawn(move || {
                // Ends when the last sender is gone (the server is exiting).
                for garbage in rx {
                    drop(garbage);
                    p.fetch_sub(1, Ordering::Relaxed);
                    f.fetch_add(1, Ordering::Relaxed);
                }
            });
        if let Err(e) = started {
            crate::log::warning(&format!(
                "lazyfree thread did not start ({e}); values are freed inline"
            ));
        }
        LazyFree {
            queue,
            pending,
            freed,
        }
    }

    /// Frees a removed entry: in the background when it is a collection of more than
    /// [`THRESHOLD`] elements, here otherwise.
    pub fn free_entry(&self, entry: Entry) {
        let large = matches!(entry.value(), ValueRef::Obj(o) if o.len() > THRESHOLD);
        if large {
            self.send(Garbage::Entry(entry));
        }
    }

    /// Frees whole tables (FLUSHDB / FLUSHALL ASYNC) in the background.
    pub fn free_tables(&self, tables: Vec<RawTable<Entry>>) {
        self.send(Garbage::Tables(tables));
    }

    fn send(&self, garbage: Garbage) {
        self.pending.fetch_add(1, Ordering::Relaxed);
        if let Err(mpsc::SendError(garbage)) = self.queue.send(garbage) {
            // No thread to take it: free it here.
            drop(garbage);
            self.pending.fetch_sub(1, Ordering::Relaxed);
            self.freed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Values handed over and not freed yet (INFO `lazyfree_pending_objects`).
    pub fn pending(&self) -> u64 {
        self.pending.load(Ordering::Relaxed)
    }

    /// Values freed in the background so far (INFO `lazyfreed_objects`).
    pub fn freed(&self) -> u64 {
        self.freed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::Payload;

    fn wait_until(f: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !f() {
            assert!(std::time::Instant::now() < deadline, "timed out");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn large_collections_go_to_the_thread_and_small_values_do_not() {
        let lazy = LazyFree::start();
        let mut set = store::types::set::Set::new();
        for i in 0..1000 {
            set.add(format!("m{i}").as_bytes(), 512);
        }
        let big = Entry::new(
            b"big",
            Payload::Object(Box::new(store::Object::Set(set))),
            None,
            0,
        );
        lazy.free_entry(big);
        lazy.free_entry(Entry::new(b"small", Payload::Str(b"value"), None, 0));
        wait_until(|| lazy.freed() == 1);
        assert_eq!(lazy.pending(), 0);
        lazy.free_tables(vec![RawTable::new(), RawTable::new()]);
        wait_until(|| lazy.freed() == 2);
    }
}
