//! Point-in-time capture at entry grain: what BGSAVE and the log rewrite's base snapshot
//! take without fork (DESIGN.md section 4, Dragonfly's scheme).
//!
//! A capture begins under every event loop's gate, so that no command runs: each shard
//! flips its *parity* and gets a [`ShardCapture`]. From then on an entry whose mark
//! (a bit in its flags, see `entry.rs`) differs from its shard's parity is *pending*: the
//! capture does not have it yet, and its value is still the one it had when the capture
//! began. Two things take pending entries, both under the shard's lock:
//!
//! - the shard itself, just before anything changes or removes a pending entry (a write,
//!   an overwrite, a deletion, lazy or active expiry, FLUSHDB, SWAPDB): the entry is
//!   encoded as it is into the capture's *before-images* and marked;
//! - the walk ([`crate::Shard::capture_step`]), a few bucket positions at a time,
//!   encoding the pending entries it meets and marking them (the server's event loops
//!   walk the shards, see its `walk.rs`).
//!
//! Entries created during the capture are marked at birth (they did not exist at the
//! point in time). When the walk of a shard ends, its before-images are appended to the
//! walk's output and the shard's capture is over; every entry then carries the parity,
//! which is the invariant between captures. An abandoned capture marks the rest without
//! encoding it ([`crate::Shard::capture_abandon`]).
//!
//! Cost: with no capture running, one branch per change. During a capture, a command
//! that changes a pending entry encodes that one entry (not its shard). Extra memory:
//! the before-images of entries changed ahead of the walk (at worst the data set in RDB
//! form), plus the walk's output until it is written.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::entry::Entry;

/// After this many restarts of a shard's walk (its table moved entries each time), the
/// rest of the shard is taken in one lock hold, so that a walk always ends.
pub(crate) const MAX_RESTARTS: u32 = 8;

/// What every shard of one capture shares.
#[derive(Debug)]
pub struct CaptureSpec {
    /// The point in time: entries expired at this instant are not captured.
    pub at_ms: i64,
    /// LZF for long strings (`rdbcompression`).
    pub compress: bool,
    /// Bytes of before-images held by all shards (INFO's current_cow_size).
    pending_bytes: AtomicUsize,
}

impl CaptureSpec {
    pub fn new(at_ms: i64, compress: bool) -> Arc<CaptureSpec> {
        Arc::new(CaptureSpec {
            at_ms,
            compress,
            pending_bytes: AtomicUsize::new(0),
        })
    }

    pub fn pending_bytes(&self) -> usize {
        self.pending_bytes.load(Ordering::Relaxed)
    }

    /// Encodes a pending entry into `out` if it was live at the point in time.
    pub(crate) fn encode(&self, e: &Entry, out: &mut Vec<u8>) {
        if !e.is_expired(self.at_ms) {
            crate::rdb::encode_entry(e, self.compress, out);
        }
    }
}

/// One shard's part of a running capture.
#[derive(Debug)]
pub(crate) struct ShardCapture {
    pub spec: Arc<CaptureSpec>,
    /// Encoded entries that were changed or removed before the walk reached them.
    before: Vec<u8>,
    /// Next bucket position of the walk, valid while the shard's epoch is `walk_epoch`.
    pub walk_at: usize,
    pub walk_epoch: u32,
    pub restarts: u32,
}

impl ShardCapture {
    pub fn new(spec: Arc<CaptureSpec>, epoch: u32) -> ShardCapture {
        ShardCapture {
            spec,
            before: Vec::new(),
            walk_at: 0,
            walk_epoch: epoch,
            restarts: 0,
        }
    }

    /// Keeps a pending entry's current (point-in-time) state before it changes.
    pub fn keep_before_image(&mut self, e: &Entry) {
        let len = self.before.len();
        self.spec.encode(e, &mut self.before);
        self.spec
            .pending_bytes
            .fetch_add(self.before.len() - len, Ordering::Relaxed);
    }

    /// Ends this shard's capture: its before-images go to `out`.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.before);
        self.spec
            .pending_bytes
            .fetch_sub(self.before.len(), Ordering::Relaxed);
        self.before = Vec::new();
    }
}

impl Drop for ShardCapture {
    fn drop(&mut self) {
        // An abandoned capture: its before-images are freed with it.
        self.spec
            .pending_bytes
            .fetch_sub(self.before.len(), Ordering::Relaxed);
        self.before.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use crate::clock::Clock;
    use crate::db::Keyspace;
    use crate::entry::{Entry, Payload, ValueRef};
    use crate::rdb::{load, Limits, RdbWriter};

    /// (db, key) -> (value, expiry): the model of what a capture must contain.
    type Model = BTreeMap<(usize, Vec<u8>), (Vec<u8>, Option<i64>)>;

    const DBS: usize = 2;
    const SHARDS: usize = 4;

    fn string_of(e: &Entry) -> Vec<u8> {
        match e.value() {
            ValueRef::Str(s) => s.to_vec(),
            ValueRef::Obj(_) => panic!("only strings in this test"),
        }
    }

    /// Everything live at `at_ms`, read straight from the tables.
    fn state(ks: &Keyspace, at_ms: i64) -> Model {
        let mut m = Model::new();
        for db in 0..DBS {
            for s in 0..SHARDS {
                ks.lock(db, s).for_each_live(at_ms, |e| {
                    m.insert((db, e.key().to_vec()), (string_of(e), e.expire_at_ms()));
                });
            }
        }
        m
    }

    /// Runs the walk (the server's loops' part), with `between` called between steps of
    /// every shard, and decodes what it produced.
    fn capture(ks: &Keyspace, mut between: impl FnMut(&Keyspace)) -> Model {
        let mut file = RdbWriter::new(Vec::new(), &[], false, true).unwrap();
        for db in 0..DBS {
            file.select_db(db, 0, 0).unwrap();
            for s in 0..SHARDS {
                let mut out = Vec::new();
                loop {
                    let done = ks.lock(db, s).capture_step(64, &mut out);
                    if done {
                        break;
                    }
                    between(ks);
                }
                file.raw(&out).unwrap();
            }
        }
        ks.end_capture();
        let bytes = file.finish().unwrap();
        let mut m = Model::new();
        load(&bytes[..], &Limits::redis_defaults(), |db, e| {
            let prev = m.insert((db, e.key().to_vec()), (string_of(&e), e.expire_at_ms()));
            assert!(
                prev.is_none(),
                "key {:?} captured twice",
                String::from_utf8_lossy(e.key())
            );
            Ok(())
        })
        .unwrap();
        m
    }

    fn key(rng: &mut fastrand::Rng) -> Vec<u8> {
        format!("k{}", rng.u32(0..3000)).into_bytes()
    }

    /// One random change through the shard API that commands use.
    fn mutate(ks: &Keyspace, rng: &mut fastrand::Rng, now: i64) {
        let db = rng.usize(0..DBS);
        let k = key(rng);
        let (h, mut s) = ks.lock_key(db, &k);
        match rng.u8(0..10) {
            0 => s.set_string(h, &k, format!("new{}", rng.u32(..)).as_bytes(), None, now, 0),
            // Same-size overwrite in place (keeps the mark).
            1 => s.set_string(h, &k, b"v", Some(now + 1_000_000), now, 0),
            2 => {
                s.remove(h, &k, now);
            }
            3 => {
                s.set_expire(h, &k, Some(now + rng.i64(-5..50)), now);
            }
            4 => {
                if let Some(e) = s.get(h, &k, now) {
                    if let Some(v) = e.string_mut() {
                        v.extend_from_slice(b"+appended");
                    }
                }
            }
            5 => {
                if let Some(e) = s.get(h, &k, now) {
                    e.set_int(rng.i64(..));
                }
            }
            6 => {
                // RENAME to another key of the same database.
                let to = key(rng);
                if let Some(e) = s.remove(h, &k, now) {
                    drop(s);
                    let (h2, mut s2) = ks.lock_key(db, &to);
                    s2.insert(h2, e.with_key(&to));
                }
            }
            7 => {
                s.read(h, &k, now, Some(crate::clock::Touch::Lru(9)));
            }
            8 => {
                s.insert(h, Entry::new(&k, Payload::Str(b"inserted"), None, 0));
            }
            _ => {
                drop(s);
                match rng.u8(0..40) {
                    0 => ks.swap_dbs(0, 1),
                    1 => drop(ks.flush_db(rng.usize(0..DBS))),
                    _ => {
                        let _ = ks.lock(db, rng.usize(0..SHARDS)).expire_step(now, 16);
                    }
                }
            }
        }
    }

    fn populate(ks: &Keyspace, rng: &mut fastrand::Rng, n: usize) {
        for i in 0..n {
            let db = i % DBS;
            let k = key(rng);
            let expire = (rng.u8(0..4) == 0).then(|| rng.i64(90..300));
            let (h, mut s) = ks.lock_key(db, &k);
            s.insert(
                h,
                Entry::new(&k, Payload::Str(format!("value{i}").as_bytes()), expire, 0),
            );
        }
    }

    #[test]
    fn a_capture_is_the_state_at_its_start_whatever_changes_during_it() {
        for seed in 0..40 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let ks = Keyspace::new(DBS, SHARDS, Clock::manual(100));
            populate(&ks, &mut rng, 2500);
            // Several captures in a row (one abandoned), so that the parity flips.
            for round in 0..3 {
                let at_ms = 100 + round * 10;
                let expected = state(&ks, at_ms);
                assert!(ks.begin_capture(at_ms, rng.bool()));
                if round == 1 {
                    for _ in 0..200 {
                        mutate(&ks, &mut rng, at_ms);
                    }
                    ks.end_capture();
                    continue;
                }
                let mut now = at_ms;
                let got = capture(&ks, |ks| {
                    for _ in 0..rng.usize(0..20) {
                        now += 1;
                        mutate(ks, &mut rng, now);
                    }
                });
                assert_eq!(got.len(), expected.len(), "seed {seed} round {round}");
                assert!(
                    got == expected,
                    "seed {seed} round {round}: capture differs from the state at its start"
                );
            }
        }
    }

    #[test]
    fn reads_take_no_copy_and_changes_take_one_per_entry() {
        let ks = Keyspace::new(1, 1, Clock::manual(0));
        let (h, mut s) = ks.lock_key(0, b"k");
        s.insert(h, Entry::new(b"k", Payload::Str(b"value"), None, 0));
        drop(s);
        assert!(ks.begin_capture(0, false));
        let (h, mut s) = ks.lock_key(0, b"k");
        assert!(s.read(h, b"k", 0, Some(crate::clock::Touch::Lru(5))).is_some());
        assert_eq!(ks.capture_pending_bytes(), 0, "a read kept a before-image");
        s.set_string(h, b"k", b"other", None, 0, 0);
        let once = ks.capture_pending_bytes();
        assert!(once > 0, "a change kept no before-image");
        s.set_string(h, b"k", b"third", None, 0, 0);
        assert_eq!(ks.capture_pending_bytes(), once, "a second change copied again");
        drop(s);
        ks.end_capture();
        assert_eq!(ks.capture_pending_bytes(), 0);
    }

    #[test]
    fn a_walk_ends_while_its_shard_keeps_growing() {
        let ks = Keyspace::new(1, 1, Clock::manual(0));
        let mut rng = fastrand::Rng::with_seed(7);
        for i in 0..100 {
            let k = format!("base{i}");
            let (h, mut s) = ks.lock_key(0, k.as_bytes());
            s.insert(h, Entry::new(k.as_bytes(), Payload::Str(b"v"), None, 0));
        }
        assert!(ks.begin_capture(0, false));
        let mut out = Vec::new();
        let mut added = 0;
        let mut steps = 0;
        // Every step is followed by enough inserts to resize the table again and again.
        while !ks.lock(0, 0).capture_step(4, &mut out) {
            for _ in 0..rng.usize(50..200) {
                let k = format!("new{added}");
                added += 1;
                let (h, mut s) = ks.lock_key(0, k.as_bytes());
                s.insert(h, Entry::new(k.as_bytes(), Payload::Str(b"v"), None, 0));
            }
            steps += 1;
            assert!(steps < 100_000, "the walk did not end");
        }
        ks.end_capture();
        let mut file = RdbWriter::new(Vec::new(), &[], false, true).unwrap();
        file.select_db(0, 0, 0).unwrap();
        file.raw(&out).unwrap();
        let bytes = file.finish().unwrap();
        let info = load(&bytes[..], &Limits::redis_defaults(), |_, e| {
            assert!(e.key().starts_with(b"base"));
            Ok(())
        })
        .unwrap();
        assert_eq!(info.keys, 100);
    }
}
