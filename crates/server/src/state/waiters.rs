//! The waiters' registry: clients blocked in a command (BLPOP, BLMOVE, BZPOPMIN, XREAD,
//! WAIT ...) or postponed by CLIENT PAUSE, by key and by client. Serving and timing them out
//! is `command/blocking.rs`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};

use hashbrown::HashMap;
use resp::Proto;
use store::types::list::End;
use store::types::stream::StreamId;

/// What a blocked client waits to do.
#[derive(Clone, Debug)]
pub enum Op {
    /// BLPOP/BRPOP (`count` None) and BLMPOP (`count` Some).
    Pop { keys: Vec<Vec<u8>>, end: End, count: Option<usize> },
    /// BLMOVE/BRPOPLPUSH.
    Move { src: Vec<u8>, dst: Vec<u8>, from: End, to: End },
    /// BZPOPMIN/BZPOPMAX (`count` None) and BZMPOP (`count` Some).
    ZPop { keys: Vec<Vec<u8>>, max: bool, count: Option<usize> },
    /// WAIT for `replicas` replicas to acknowledge the replication stream up to
    /// `offset`: served when their acknowledgements arrive (`blocking::serve_waits`),
    /// or timed out with the number that did.
    Wait { offset: u64, replicas: usize },
    /// XREAD / XREADGROUP ... BLOCK (`command/streams.rs` blocks it, `stream_serve.rs`
    /// serves it).
    Read(Box<ReadOp>),
    /// A command postponed by CLIENT PAUSE (`command/pause.rs`): not served, resumed when the
    /// pause ends, and then run again from the client's input.
    Pause,
}

impl Op {
    pub(crate) fn keys(&self) -> Vec<&[u8]> {
        match self {
            Op::Pop { keys, .. } | Op::ZPop { keys, .. } => keys.iter().map(Vec::as_slice).collect(),
            Op::Move { src, .. } => vec![src.as_slice()],
            Op::Read(r) => r.keys.iter().map(Vec::as_slice).collect(),
            Op::Wait { .. } | Op::Pause => Vec::new(),
        }
    }
}

/// A blocked stream read: the entries of `keys[k]` after `after[k]` (StreamId::MAX
/// for a group read's `>`), at most `count`.
#[derive(Clone, Debug)]
pub struct ReadOp {
    pub keys: Vec<Vec<u8>>,
    pub after: Vec<StreamId>,
    pub count: usize,
    pub group: Option<GroupRead>,
}

/// XREADGROUP's group, consumer and NOACK.
#[derive(Clone, Debug)]
pub struct GroupRead {
    pub group: Vec<u8>,
    pub consumer: Vec<u8>,
    pub noack: bool,
}

/// A blocked client.
pub struct Waiter {
    pub(crate) owner: usize,
    pub(crate) db: usize,
    pub(crate) proto: Proto,
    pub(crate) op: Op,
    pub(crate) deadline_ms: Option<i64>,
}

/// Which keys have waiters, roughly, readable without the registry's lock: per bucket of
/// (database, key) hashes, how many keys of the bucket have a queue. A write to a key
/// whose bucket counts none has no waiter, and takes no lock to learn it (with 2,000
/// clients blocked on other keys, the lock and the lookup cost writes 12%).
pub struct WaitedKeys {
    buckets: Box<[AtomicU32]>,
}

const WAITED_BUCKETS: usize = 4096;

impl Default for WaitedKeys {
    fn default() -> WaitedKeys {
        WaitedKeys { buckets: (0..WAITED_BUCKETS).map(|_| AtomicU32::new(0)).collect() }
    }
}

impl WaitedKeys {
    fn bucket(db: usize, key: &[u8]) -> usize {
        use std::hash::{BuildHasher, Hasher};
        let mut h = foldhash::fast::FixedState::with_seed(0x5ba1_7b10_c4ed).build_hasher();
        h.write_usize(db);
        h.write(key);
        (h.finish() as usize) % WAITED_BUCKETS
    }

    /// Whether `key` of `db` may have waiters (false: it has none).
    #[inline]
    pub fn may_have(&self, db: usize, key: &[u8]) -> bool {
        self.buckets[Self::bucket(db, key)].load(Ordering::Acquire) != 0
    }

    fn add(&self, db: usize, key: &[u8]) {
        self.buckets[Self::bucket(db, key)].fetch_add(1, Ordering::AcqRel);
    }

    fn remove(&self, db: usize, key: &[u8]) {
        self.buckets[Self::bucket(db, key)].fetch_sub(1, Ordering::AcqRel);
    }
}

/// Waiters by key and by client.
#[derive(Default)]
pub struct Registry {
    pub(crate) queues: HashMap<(usize, Vec<u8>), VecDeque<u64>>,
    /// The keys of `queues`, counted for readers without the lock (`Shared::waited`).
    pub waited: std::sync::Arc<WaitedKeys>,
    pub(crate) waiters: HashMap<u64, Waiter>,
    /// Clients postponed by CLIENT PAUSE, in the order they were.
    pub(crate) postponed: VecDeque<u64>,
    /// Queues whose key a write changed since the last serve pass (Redis's ready
    /// keys): the pass looks at these only, not at every queue.
    pub(crate) ready: Vec<(usize, Vec<u8>)>,
    /// A write that changed keys it does not name (FLUSHALL, SWAPDB, MOVE ...): the next
    /// pass looks at every queue.
    pub(crate) ready_all: bool,
}

impl Registry {
    /// Puts client `id` last in the queue of `key` of `db`.
    pub(crate) fn enqueue(&mut self, db: usize, key: &[u8], id: u64) {
        let qk = (db, key.to_vec());
        match self.queues.get_mut(&qk) {
            Some(q) => q.push_back(id),
            None => {
                self.waited.add(db, key);
                self.queues.insert(qk, VecDeque::from([id]));
            }
        }
    }

    /// Marks the queue of `key` of `db`, if there is one, ready for the next serve pass.
    pub(crate) fn mark_ready(&mut self, db: usize, key: &[u8]) {
        let qk = (db, key.to_vec());
        if self.queues.contains_key(&qk) && !self.ready.contains(&qk) {
            self.ready.push(qk);
        }
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<Waiter> {
        let w = self.waiters.remove(&id)?;
        if matches!(w.op, Op::Pause) {
            self.postponed.retain(|x| *x != id);
        }
        for key in w.op.keys() {
            let qk = (w.db, key.to_vec());
            if let Some(q) = self.queues.get_mut(&qk) {
                q.retain(|x| *x != id);
                if q.is_empty() {
                    self.queues.remove(&qk);
                    self.waited.remove(qk.0, &qk.1);
                }
            }
        }
        Some(w)
    }
}
