//! The walk of a running capture (BGSAVE, the log rewrite's RDB base), done by the event
//! loops themselves, as Dragonfly's shard threads serialize their own shards.
//!
//! Why the loops and not the snapshot thread: a snapshot thread that walks shards holds
//! one shard lock or another most of the time, and on a machine with fewer cores than
//! busy threads it is regularly preempted while holding one; an event loop that needs
//! that shard then sleeps until the scheduler runs the snapshot thread again
//! (milliseconds). Walked by its own loop, a shard is never locked by a thread that can
//! be descheduled mid-step by this work, and the cost of a save shows up as a bounded
//! slice per loop iteration instead of as lock waits. The slice adapts to load: a loop
//! that just served requests walks for half the time they took (between [`SLICE_MIN`]
//! and [`SLICE_MAX`]), so the walk takes at most about a third of a busy loop and
//! queueing delay stays small; a loop with nothing to serve walks for [`SLICE_IDLE`]
//! between two looks at its sockets.
//!
//! Who walks what: the shards of the databases that held keys when the capture began are
//! numbered in file order (database, then shard); loop `w` walks the positions whose
//! shard index is `w` modulo the number of loops (the same split as active expiry), in
//! increasing order, a few bucket positions per lock hold (`store::Shard::capture_step`).
//! A finished shard's bytes are handed to the snapshot thread, which writes positions in
//! order ([`Walk::next_shard`]) and does all the disk I/O. Memory: a loop starts a new
//! shard only while less than [`AHEAD_BYTES`] of finished shards wait for the writer, or
//! when its shard is the very next one the writer needs (so the walk never deadlocks: the
//! owner of the writer's next position always has it as its own next position).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLock};

/// Walk time per iteration of a loop that served requests in it: bounds.
pub const SLICE_MIN: Duration = Duration::from_micros(5);
pub const SLICE_MAX: Duration = Duration::from_micros(20);
/// Longest a loop with walking left waits for I/O before it walks again, after an
/// iteration that served requests (any completion wakes it at once; an idle loop does
/// not nap). A loop that never sleeps during a save loses the scheduler's wake-up
/// preference to the clients' threads on a machine with no idle core, and its requests
/// then wait behind them; napping keeps it a sleeper.
const BUSY_NAP: Duration = Duration::from_micros(50);

/// Walk time per iteration of a loop that had nothing to serve.
pub const SLICE_IDLE: Duration = Duration::from_micros(50);

/// Bucket positions per shard lock hold.
const STEP: usize = 64;

/// Finished shards waiting for the writer beyond which loops stop starting new ones
/// (small in unit tests, so that they reach it with a small keyspace).
const AHEAD_BYTES: usize = if cfg!(test) { 64 << 10 } else { 32 << 20 };

/// The running walk, shared by the loops and the snapshot thread.
#[derive(Default)]
pub struct Walk {
    /// A capture's walk is running (loops read this once per iteration).
    active: AtomicBool,
    /// Changes at every capture, so that a loop drops what it held of an older one.
    generation: AtomicU64,
    state: Mutex<WalkState>,
    /// Signalled when a shard is finished (the writer waits for its next one).
    finished: Condvar,
}

#[derive(Default)]
struct WalkState {
    /// Databases captured, in file order.
    dbs: Vec<usize>,
    shards_per_db: usize,
    loops: usize,
    /// Finished shards not yet taken by the writer, by position.
    ready: BTreeMap<usize, Vec<u8>>,
    ready_bytes: usize,
    /// The next position the writer takes.
    next_write: usize,
}

impl WalkState {
    fn total(&self) -> usize {
        self.dbs.len() * self.shards_per_db
    }

    fn owner(&self, position: usize) -> usize {
        (position % self.shards_per_db) % self.loops
    }
}

/// What a loop's slice of the walk left to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// No walk, or this loop's part is done: sleep as usual.
    Idle,
    /// More to walk now: poll for I/O without sleeping, then walk again.
    Busy,
    /// Waiting for the writer to take finished shards: sleep briefly.
    Throttled,
}

/// How long a loop may sleep waiting for I/O, given what its last slice left and the
/// time until its next tick. `nap`: the loop served requests last time and its engine
/// can wait for microseconds (epoll's timeouts are whole milliseconds: it polls).
pub fn wait(progress: Progress, until_tick: Duration, nap: bool) -> Duration {
    match progress {
        Progress::Idle => until_tick,
        Progress::Busy if nap => until_tick.min(BUSY_NAP),
        Progress::Busy => Duration::ZERO,
        Progress::Throttled => until_tick.min(Duration::from_millis(1)),
    }
}

/// One event loop's part of the running walk.
#[derive(Default)]
pub struct LoopWalk {
    generation: u64,
    /// The position this loop walks next, or is walking when `current` is set.
    next: usize,
    /// (database, shard) of the position being walked.
    current: Option<(usize, usize)>,
    /// This loop's part of the walk is done (it need not ask the shared state again).
    done: bool,
    out: Vec<u8>,
}

impl Walk {
    /// Starts the walk of a capture that has just begun in the keyspace (the caller holds
    /// every loop's gate): `dbs` are the databases to write, in order.
    pub fn begin(&self, dbs: Vec<usize>, shards_per_db: usize, loops: usize) {
        let mut st = self.state.lock();
        *st = WalkState {
            dbs,
            shards_per_db,
            loops: loops.max(1),
            ..WalkState::default()
        };
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.active.store(true, Ordering::Release);
    }

    /// True while a capture's walk runs (one relaxed load: the loops ask every iteration).
    pub fn running(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Ends the walk (written out or abandoned); loops drop what they hold of it.
    pub fn end(&self) {
        self.active.store(false, Ordering::Release);
        let mut st = self.state.lock();
        st.ready.clear();
        st.ready_bytes = 0;
    }

    /// Wakes the writer if it waits for a shard (it then asks its `give_up` again).
    pub fn wake_writer(&self) {
        let _st = self.state.lock();
        self.finished.notify_all();
    }

    /// For the writer: the next shard in file order, as (database, bytes), waiting for
    /// its loop to finish it; None when every shard was taken. Err when `give_up` says
    /// so while waiting (shutdown).
    pub fn next_shard(
        &self,
        give_up: impl Fn() -> bool,
    ) -> Result<Option<(usize, Vec<u8>)>, String> {
        let mut st = self.state.lock();
        let p = st.next_write;
        if p >= st.total() {
            return Ok(None);
        }
        loop {
            if let Some(bytes) = st.ready.remove(&p) {
                st.ready_bytes -= bytes.len();
                st.next_write += 1;
                let db = st.dbs[p / st.shards_per_db];
                return Ok(Some((db, bytes)));
            }
            if give_up() {
                return Err("the server is shutting down".to_string());
            }
            self.finished.wait_for(&mut st, Duration::from_millis(100));
        }
    }
}

/// Walks for a slice on behalf of loop `owner`, which spent `served` on requests in this
/// iteration (zero when it had none), under that loop's `gate`.
pub fn step(walk: &Walk, keyspace: &store::Keyspace, gate: &RwLock<()>, owner: usize, lw: &mut LoopWalk, served: Duration) -> Progress {
    if !walk.active.load(Ordering::Acquire) {
        if lw.current.is_some() || lw.out.capacity() > 0 {
            *lw = LoopWalk {
                generation: lw.generation,
                ..LoopWalk::default()
            };
        }
        return Progress::Idle;
    }
    // Under the loop's gate: a capture begins only with every gate held, so none ends
    // and begins again in the middle of this slice (which would mix two captures' bytes).
    let _gate = gate.read();
    let generation = walk.generation.load(Ordering::Acquire);
    if lw.generation != generation {
        // A new capture: start from this loop's first position.
        *lw = LoopWalk {
            generation,
            next: owner,
            ..LoopWalk::default()
        };
    }
    if lw.done {
        return Progress::Idle;
    }
    let slice = if served.is_zero() {
        SLICE_IDLE
    } else {
        (served / 2).clamp(SLICE_MIN, SLICE_MAX)
    };
    let deadline = Instant::now() + slice;
    loop {
        let (db, shard) = match lw.current {
            Some(at) => at,
            None => {
                let st = walk.state.lock();
                while lw.next < st.total() && st.owner(lw.next) != owner {
                    lw.next += 1;
                }
                if lw.next >= st.total() {
                    lw.done = true;
                    return Progress::Idle;
                }
                if st.ready_bytes >= AHEAD_BYTES && lw.next != st.next_write {
                    return Progress::Throttled;
                }
                let at = (
                    st.dbs[lw.next / st.shards_per_db],
                    lw.next % st.shards_per_db,
                );
                lw.current = Some(at);
                at
            }
        };
        if keyspace
            .lock(db, shard)
            .capture_step(STEP, &mut lw.out)
        {
            let mut st = walk.state.lock();
            // Not if the capture was abandoned meanwhile (its bytes are of no use).
            if walk.active.load(Ordering::Acquire) {
                st.ready_bytes += lw.out.len();
                st.ready.insert(lw.next, std::mem::take(&mut lw.out));
                walk.finished.notify_all();
            }
            lw.out.clear();
            lw.current = None;
            lw.next += 1;
        }
        if Instant::now() >= deadline {
            return Progress::Busy;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::testing::Harness;
    use std::collections::BTreeMap;
    use store::{Entry, Payload};

    fn value(i: usize) -> Vec<u8> {
        // Not compressible, so that the encoded size is known to be large.
        let mut rng = fastrand::Rng::with_seed(i as u64);
        (0..100).map(|_| rng.alphanumeric() as u8).collect()
    }

    /// Two loops walk a capture while the writer lags behind: they stop at the byte bound
    /// (except for the writer's next shard), go on when it takes shards, and the file is
    /// exactly the keyspace at the start, in database order, although keys change meanwhile.
    #[test]
    fn loops_walk_in_order_within_the_bound_and_the_file_is_the_start() {
        let h = Harness::new();
        let shared = &h.shared;
        let ks = &shared.keyspace;
        let mut expected = BTreeMap::new();
        for (db, n) in [(0usize, 3000usize), (3, 200)] {
            for i in 0..n {
                let key = format!("k{db}:{i}");
                let (hash, mut shard) = ks.lock_key(db, key.as_bytes());
                shard.insert(
                    hash,
                    Entry::new(key.as_bytes(), Payload::Str(&value(i)), None, 0),
                );
                expected.insert((db, key.into_bytes()), value(i));
            }
        }
        assert!(ks.begin_capture(ks.now_ms(), false));
        shared.walk.begin(vec![0, 3], ks.shards_per_db(), 2);
        let mut loops = [LoopWalk::default(), LoopWalk::default()];
        // Without the writer, both loops soon stop: the bound holds them.
        let mut idle_rounds = 0;
        while idle_rounds < 3 {
            let progress: Vec<Progress> = (0..2)
                .map(|w| step(&shared.walk, ks, shared.gate(w), w, &mut loops[w], Duration::ZERO))
                .collect();
            assert!(
                progress.iter().all(|p| *p != Progress::Idle),
                "a loop finished without the writer"
            );
            idle_rounds = if progress.iter().all(|p| *p == Progress::Throttled) {
                idle_rounds + 1
            } else {
                0
            };
        }
        {
            let st = shared.walk.state.lock();
            assert!(
                st.ready_bytes >= AHEAD_BYTES,
                "throttled below the bound: {}",
                st.ready_bytes
            );
            assert!(
                st.ready.contains_key(&0),
                "the writer's next shard is not ready"
            );
        }
        // Writes after the start must not reach the file.
        for i in (0..3000).step_by(7) {
            let key = format!("k0:{i}");
            let (hash, mut shard) = ks.lock_key(0, key.as_bytes());
            shard.set_string(hash, key.as_bytes(), b"changed", None, 0, 0);
        }
        // The writer takes shards in order while the loops go on.
        let mut file = store::rdb::RdbWriter::new(Vec::new(), &[], false, true).unwrap();
        let mut last_db = None;
        loop {
            for (w, lw) in loops.iter_mut().enumerate() {
                step(&shared.walk, ks, shared.gate(w), w, lw, Duration::ZERO);
            }
            let next = {
                let st = shared.walk.state.lock();
                (st.next_write >= st.total() || st.ready.contains_key(&st.next_write)).then_some(())
            };
            if next.is_none() {
                continue;
            }
            match shared.walk.next_shard(|| false).unwrap() {
                Some((db, bytes)) => {
                    assert!(last_db.is_none_or(|d| d <= db), "databases out of order");
                    if last_db != Some(db) {
                        file.select_db(db, 0, 0).unwrap();
                        last_db = Some(db);
                    }
                    file.raw(&bytes).unwrap();
                }
                None => break,
            }
        }
        shared.walk.end();
        ks.end_capture();
        let bytes = file.finish().unwrap();
        let mut got = BTreeMap::new();
        store::rdb::load(
            &bytes[..],
            &store::rdb::Limits::redis_defaults(),
            |db, e| {
                let v = match e.value() {
                    store::ValueRef::Str(s) => s.to_vec(),
                    store::ValueRef::Obj(_) => panic!("a string was written"),
                };
                assert!(
                    got.insert((db, e.key().to_vec()), v).is_none(),
                    "a key written twice"
                );
                Ok(())
            },
        )
        .unwrap();
        assert!(
            got == expected,
            "the file is not the keyspace at the start ({} keys, {} expected)",
            got.len(),
            expected.len()
        );
    }
}
