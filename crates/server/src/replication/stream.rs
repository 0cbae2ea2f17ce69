//! The replication stream, the master's side: the bytes every replica receives after
//! its snapshot, their offsets, the backlog a broken link resumes from, and the
//! replicas themselves (plain data; `master.rs` delivers and syncs).
//!
//! The stream is Redis's: each propagated record as a RESP command (`crate::propagate`
//! feeds it the same records as the append-only log, in the same order for writes that
//! share a key), a `SELECT` whenever the database changes (and once after each full
//! sync starts, since a new replica knows none), EXEC's records between MULTI and EXEC,
//! and a `PING` every `repl-ping-replica-period` seconds. The offset counts the bytes of
//! the stream since this server's replication ID was made, as Redis's
//! `master_repl_offset`, so that a replica's acknowledged offset means the same here and
//! in Redis.
//!
//! An event loop's records first go to its own part of the stream (`feed_buffered`,
//! under a lock no other loop takes but to publish it), which it publishes after each
//! connection's batch (`publish_mine`): the stream's lock is then taken once per
//! pipeline, not once per write. (With two loops feeding it per write, that lock's
//! cache line moving between cores was 6-8% of a master's CPU under pipelined SETs.)
//! Order per key is kept by the ordering stripes' writer marks (`crate::order`): a
//! write whose key's last record waits in another loop's part publishes that part
//! first (`ensure_published`). Whatever must see the whole stream up to now (a snapshot
//! for a replica, a partial resync, a new history, WAIT) publishes every part first.
//!
//! Records are fed only once a replica has asked for the stream (`start_feeding`, under
//! every loop's gate, so that no write runs half before it): a server without replicas
//! keeps no backlog and pays one atomic load per write, as Redis keeps none.
//! The stream is written once: each record into the chunk being filled (a
//! `bytes::BytesMut` block), which is sealed after each batch of the event loops
//! (`master::flush`), or once it is large, and then shared, not copied, by the backlog
//! and by each replica's outbox (`bytes::Bytes`, reference counted). A replica's outbox
//! holds the chunks fed since its snapshot's point in time, gathered while its snapshot
//! is made and sent; they are posted to its connection after each batch.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;

use super::backlog::Backlog;

/// Redis's smallest backlog (`CONFIG_REPL_BACKLOG_MIN_SIZE`).
pub const BACKLOG_MIN: u64 = 16 * 1024;

/// The blocks the stream is written into, and the size at which the chunk being
/// filled is sealed even before the next delivery (a master without replicas, whose
/// stream only feeds the backlog, delivers nothing).
const BLOCK: usize = 64 * 1024;

/// Where a replica stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaState {
    /// Asked for a full sync; waits for the next snapshot to begin (Redis's
    /// `wait_bgsave_start`).
    WaitSnapshot,
    /// Its snapshot is being made and sent; its outbox gathers the stream
    /// (`wait_bgsave_end`, `send_bulk`).
    Transfer,
    /// Receives the stream as it is fed.
    Online,
}

impl ReplicaState {
    /// INFO's `state=` word.
    pub fn name(self) -> &'static str {
        match self {
            ReplicaState::WaitSnapshot => "wait_bgsave",
            ReplicaState::Transfer => "send_bulk",
            ReplicaState::Online => "online",
        }
    }
}

/// One replica, by its client.
#[derive(Debug)]
pub struct Replica {
    pub client_id: u64,
    /// The event loop that owns its connection (replicas never move).
    pub owner: usize,
    /// Its address as it connected, and the port it said it listens on (REPLCONF).
    pub ip: String,
    pub listening_port: u16,
    pub state: ReplicaState,
    /// It asked with PSYNC (and is told `+FULLRESYNC`), not SYNC.
    pub psync: bool,
    /// It reads a disk-less snapshot (REPLCONF capa eof).
    pub eof: bool,
    /// Its disk-less snapshot was sent: it goes online at its first acknowledgement,
    /// as Redis's (`repl_start_cmd_stream_on_ack`): a replica finds the end of such a
    /// snapshot by its last 40 bytes, so nothing may follow them until it has read them.
    pub online_on_ack: bool,
    /// It acknowledged while its disk-less snapshot was still being sent, as far as this
    /// side knew: the snapshot thread had written the last bytes, the replica read and
    /// loaded them and acknowledged, before the thread marked the transfer sent. That
    /// acknowledgement is its first (a replica acknowledges only once loaded): it goes
    /// online as soon as the transfer is marked sent, not at its next one a second later
    /// (a second in which it got none of the stream, and so acknowledged no write: a
    /// Sentinel promoting it then would lose what only the other replicas had).
    pub acked_in_transfer: bool,
    /// Chunks of the stream not yet posted to it, and their bytes.
    pub outbox: Vec<Bytes>,
    pub outbox_len: usize,
    /// The offset its stream starts at (its snapshot's point in time).
    pub start_offset: u64,
    /// The offset it acknowledged last (REPLCONF ACK), and when (unix ms; set when it
    /// goes online, so that a replica that never acknowledges times out too).
    pub ack_offset: u64,
    pub ack_ms: i64,
    /// Unix seconds since which its pending output is over the soft limit (0: not).
    pub soft_since: i64,
}

impl Replica {
    /// A replica that asked for a full sync and waits for its snapshot.
    fn waiting(client_id: u64, owner: usize, ip: String, listening_port: u16, psync: bool, eof: bool) -> Replica {
        Replica {
            client_id,
            owner,
            ip,
            listening_port,
            state: ReplicaState::WaitSnapshot,
            psync,
            eof,
            online_on_ack: false,
            acked_in_transfer: false,
            outbox: Vec::new(),
            outbox_len: 0,
            start_offset: 0,
            ack_offset: 0,
            ack_ms: 0,
            soft_since: 0,
        }
    }
}

/// What a replica that asks for a partial resync gets.
pub enum Resync {
    /// `+CONTINUE`: the backlog holds everything after its offset: these bytes.
    Continue(Vec<u8>),
    /// It needs a full sync (why, for the log).
    Full(&'static str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Multi {
    None,
    /// EXEC started; no record yet.
    Open,
    /// MULTI fed; EXEC must close it.
    Fed,
}

struct Inner {
    replid: String,
    /// The history before `replid` (a promoted replica's old master's ID) and the offset
    /// up to which the two agree, for PSYNC2 (None: no such history).
    replid2: Option<(String, u64)>,
    /// The offset the stream is at: bytes fed since `replid` began.
    offset: u64,
    /// The database of the last record (usize::MAX: none, feed a SELECT).
    db: usize,
    /// The stream is a master's, fed byte for byte (`feed_raw`, a replica's): no SELECT
    /// is added; `db` follows the master's SELECTs.
    proxy: bool,
    multi: Multi,
    /// The bytes fed since the last chunk was sealed, ending at `offset`.
    filling: BytesMut,
    /// The last `repl-backlog-size` bytes of the stream before `filling`.
    backlog: Backlog,
    replicas: Vec<Replica>,
    /// Some replica is online (the stream fed makes a delivery due).
    any_online: bool,
    /// The end, in this server's log, of the last logged record fed (the greatest):
    /// what is delivered may not leave before the log holds it (`deliver`).
    log_end: u64,
}

impl Inner {
    /// Seals the chunk being filled: the backlog and every replica past its snapshot's
    /// start get it. Called before the replicas or the backlog are looked at or
    /// changed, so that a chunk never holds bytes from before a replica's start.
    fn seal(&mut self) {
        if self.filling.is_empty() {
            return;
        }
        let chunk = self.filling.split().freeze();
        for r in self.replicas.iter_mut().filter(|r| r.state != ReplicaState::WaitSnapshot) {
            r.outbox_len += chunk.len();
            r.outbox.push(chunk.clone());
        }
        self.backlog.push(chunk);
    }

    fn recount_online(&mut self) {
        self.any_online = self.replicas.iter().any(|r| r.state == ReplicaState::Online);
    }

    /// Bytes of history held: the backlog's and the chunk being filled.
    fn history(&self) -> u64 {
        (self.backlog.len() + self.filling.len()).min(self.backlog.capacity()) as u64
    }
}

/// A value on a cache line of its own: `feeding` is read by every write on every loop,
/// `dirty` by every loop after each batch, the stream's lock is taken by every write; on
/// one line, each lock taken moved the others' reads between cores (a profile of
/// pipelined SETs with a replica showed the flag's load as a cache miss).
#[repr(align(64))]
struct Line<T>(T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The stream's lock, and its offset readable without it (a writer's WAIT offset),
/// written by the lock's holder: on one line, as they are written together.
struct Core {
    inner: Mutex<Inner>,
    offset_now: AtomicU64,
}

/// An event loop's part of the stream: records not yet published, with the database
/// of each run of them, and how many were ever pushed.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// (where in `bytes` a run of records of one database starts, that database)
    runs: Vec<(usize, usize)>,
    pushed: u64,
    /// The greatest log end of the records in `bytes` (see `Inner::log_end`).
    log_end: u64,
}

/// A loop's part and how many of its records are published (written by whoever holds
/// `pending` as it publishes).
#[repr(align(64))]
#[derive(Default)]
struct LoopPart {
    pending: Mutex<Pending>,
    published: AtomicU64,
}

/// A writer mark (`crate::order`): the loop (plus one) above this many bits, the
/// record's number in that loop's part below: up to 2047 loops (`threads` is at most
/// 1024) and 2^53 records per loop, 28 years of 10 million writes a second.
const MARK_LOOP_SHIFT: u32 = 53;

thread_local! {
    /// The event loop this thread runs (usize::MAX: none).
    static LOOP: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
}

/// Tells the stream that this thread runs event loop `index` (its records go to that
/// loop's part).
pub fn this_thread_runs_loop(index: usize) {
    LOOP.with(|l| l.set(index));
}

/// The master's replication state.
pub struct Stream {
    /// Records are fed (a replica asked for the stream since the start).
    feeding: Line<AtomicBool>,
    /// Some online replica has bytes in its outbox.
    dirty: Line<AtomicBool>,
    /// Held while a delivery takes and posts outboxes (`deliver`).
    delivery: Mutex<()>,
    /// When the last PING was fed (unix ms; `master::cron`).
    pub last_ping_ms: AtomicI64,
    /// Since when the stream has had no replica (unix ms, 0: it has some), for
    /// `repl-backlog-ttl`.
    pub alone_since_ms: AtomicI64,
    /// `min-replicas-to-write` and `min-replicas-max-lag` (seconds), and how many
    /// replicas are good by that lag (counted on each ACK and each tick): writes are
    /// refused while fewer (the request path's one load while the rule is off).
    min_good: Line<AtomicU64>,
    max_lag_s: AtomicU64,
    good: AtomicU64,
    core: Line<Core>,
    /// Each event loop's part of the stream.
    parts: Box<[LoopPart]>,
    /// An EXEC is being fed (its records go to the stream itself, between MULTI and
    /// EXEC).
    exec_open: AtomicBool,
}

impl Stream {
    pub fn new(replid: String, backlog_size: u64, loops: usize) -> Stream {
        Stream {
            feeding: Line(AtomicBool::new(false)),
            dirty: Line(AtomicBool::new(false)),
            delivery: Mutex::new(()),
            last_ping_ms: AtomicI64::new(0),
            alone_since_ms: AtomicI64::new(0),
            min_good: Line(AtomicU64::new(0)),
            max_lag_s: AtomicU64::new(10),
            good: AtomicU64::new(0),
            core: Line(Core { inner: Mutex::new(Inner {
                replid,
                replid2: None,
                offset: 0,
                db: usize::MAX,
                multi: Multi::None,
                proxy: false,
                filling: BytesMut::new(),
                backlog: Backlog::new(backlog_size.max(BACKLOG_MIN) as usize),
                replicas: Vec::new(),
                any_online: false,
                log_end: 0,
            }), offset_now: AtomicU64::new(0) }),
            parts: (0..loops).map(|_| LoopPart::default()).collect(),
            exec_open: AtomicBool::new(false),
        }
    }

    /// Whether records are fed (one load per write).
    #[inline]
    pub fn feeding(&self) -> bool {
        self.feeding.load(Ordering::Acquire)
    }

    /// From now on records are fed. The caller holds every loop's gate, so that no write
    /// has taken its ordering decision before and propagates after.
    pub fn start_feeding(&self) {
        self.feeding.store(true, Ordering::Release);
    }

    /// The replication ID and the offset the stream is at.
    pub fn position(&self) -> (String, u64) {
        let g = self.core.inner.lock();
        (g.replid.clone(), g.offset)
    }

    /// The offset the stream is at.
    pub fn offset(&self) -> u64 {
        self.core.inner.lock().offset
    }

    /// The offset the stream is at, without the lock (at least that of every record
    /// this thread fed).
    #[inline]
    pub fn offset_now(&self) -> u64 {
        self.core.offset_now.load(Ordering::Acquire)
    }

    /// Feeds records (each a command's arguments) for database `db`; `log_end`: their
    /// end in this server's log (0: not logged).
    pub fn feed<A: AsRef<[u8]>>(&self, db: usize, records: &[&[A]], log_end: u64) {
        if !self.feeding() {
            return;
        }
        // Encoded before the lock is taken: every loop's writes wait for that lock.
        SCRATCH.with(|scratch| {
            let mut body = scratch.borrow_mut();
            body.clear();
            for rec in records {
                put_command(&mut body, rec);
            }
            self.feed_encoded(db, &body, log_end);
        });
    }

    /// Feeds records already encoded (`body`) for database `db`.
    pub fn feed_encoded(&self, db: usize, body: &[u8], log_end: u64) {
        if !self.feeding() {
            return;
        }
        let mut g = self.core.inner.lock();
        let g = &mut *g;
        g.log_end = g.log_end.max(log_end);
        if g.multi == Multi::Open {
            g.multi = Multi::Fed;
            let mut head = Vec::new();
            put_command(&mut head, &[&b"MULTI"[..]]);
            self.append(g, &head);
        }
        self.select(g, db);
        self.append(g, body);
    }

    /// Puts records (of a write holding its ordering stripes, which have no record
    /// waiting in another loop's part: see `crate::propagate`) in this thread's loop's
    /// part of the stream. Returns the writer mark of the last one, or None when they
    /// must be fed to the stream itself ([`feed`](Self::feed)): not on an event loop, or
    /// inside EXEC.
    pub fn feed_buffered<A: AsRef<[u8]>>(&self, db: usize, records: &[&[A]], log_end: u64) -> Option<u64> {
        self.buffer(db, log_end, |out| {
            for rec in records {
                put_command(out, rec);
            }
        })
    }

    /// [`feed_buffered`](Self::feed_buffered) of records already encoded.
    pub fn feed_buffered_encoded(&self, db: usize, body: &[u8], log_end: u64) -> Option<u64> {
        self.buffer(db, log_end, |out| out.extend_from_slice(body))
    }

    fn buffer(&self, db: usize, log_end: u64, put: impl FnOnce(&mut Vec<u8>)) -> Option<u64> {
        let l = LOOP.with(std::cell::Cell::get);
        let part = self.parts.get(l)?;
        if self.exec_open.load(Ordering::Relaxed) {
            return None;
        }
        let mut p = part.pending.lock();
        if p.runs.last().map(|&(_, d)| d) != Some(db) {
            let at = p.bytes.len();
            p.runs.push((at, db));
        }
        put(&mut p.bytes);
        p.log_end = p.log_end.max(log_end);
        p.pushed += 1;
        let mark = ((l as u64 + 1) << MARK_LOOP_SHIFT) | p.pushed;
        let large = p.bytes.len() >= BLOCK;
        drop(p);
        if large {
            self.publish_part(l);
        }
        Some(mark)
    }

    /// Publishes the part holding the record `mark` names, unless it is published
    /// already (0: no record).
    #[inline]
    pub fn ensure_published(&self, mark: u64) {
        if mark == 0 {
            return;
        }
        let l = (mark >> MARK_LOOP_SHIFT) as usize - 1;
        let number = mark & ((1 << MARK_LOOP_SHIFT) - 1);
        if self.parts.get(l).is_some_and(|p| p.published.load(Ordering::Acquire) < number) {
            self.publish_part(l);
        }
    }

    /// Publishes this thread's loop's part (after a connection's batch, before WAIT).
    #[inline]
    pub fn publish_mine(&self) {
        if !self.feeding() {
            return;
        }
        let l = LOOP.with(std::cell::Cell::get);
        if l < self.parts.len() {
            self.publish_part(l);
        }
    }

    /// Publishes every loop's part: before the stream's position is taken as a point
    /// in time (a snapshot for a replica, a resync, a new history).
    fn publish_all(&self) {
        for l in 0..self.parts.len() {
            self.publish_part(l);
        }
    }

    fn publish_part(&self, l: usize) {
        let part = &self.parts[l];
        let mut p = part.pending.lock();
        if p.bytes.is_empty() {
            return;
        }
        // A stream switched off meanwhile drops them (`stop_feeding`).
        if self.feeding() {
            let mut g = self.core.inner.lock();
            let g = &mut *g;
            g.log_end = g.log_end.max(p.log_end);
            for (k, &(start, db)) in p.runs.iter().enumerate() {
                let end = p.runs.get(k + 1).map_or(p.bytes.len(), |&(next, _)| next);
                self.select(g, db);
                self.append(g, &p.bytes[start..end]);
            }
        }
        p.bytes.clear();
        p.runs.clear();
        p.log_end = 0;
        // A part that once held a large record does not keep its size.
        if p.bytes.capacity() > 4 * BLOCK {
            p.bytes.shrink_to(BLOCK);
        }
        part.published.store(p.pushed, Ordering::Release);
    }

    /// Feeds a SELECT when the stream's database is not `db`.
    fn select(&self, g: &mut Inner, db: usize) {
        if db != g.db {
            g.db = db;
            let mut head = Vec::new();
            put_command(&mut head, &[&b"SELECT"[..], itoa::Buffer::new().format(db).as_bytes()]);
            self.append(g, &head);
        }
    }

    /// Feeds one command that belongs to no database (the periodic PING): no SELECT.
    pub fn feed_keyless(&self, args: &[&[u8]]) {
        if !self.feeding() {
            return;
        }
        let mut g = self.core.inner.lock();
        let mut buf = Vec::new();
        put_command(&mut buf, args);
        self.append(&mut g, &buf);
    }

    /// An EXEC begins (every loop's gate held): its records are bracketed by MULTI and
    /// EXEC, fed only if it has any.
    pub fn begin_exec(&self) {
        if self.feeding() {
            self.publish_all();
            self.exec_open.store(true, Ordering::Relaxed);
            self.core.inner.lock().multi = Multi::Open;
        }
    }

    /// The EXEC ended; `log_end`: the end of the log's EXEC record (0: none).
    pub fn end_exec(&self, log_end: u64) {
        if !self.feeding() {
            return;
        }
        self.exec_open.store(false, Ordering::Relaxed);
        let mut g = self.core.inner.lock();
        let fed = g.multi == Multi::Fed;
        g.multi = Multi::None;
        if fed {
            g.log_end = g.log_end.max(log_end);
            let mut buf = Vec::new();
            put_command(&mut buf, &[&b"EXEC"[..]]);
            self.append(&mut g, &buf);
        }
    }

    fn append(&self, g: &mut Inner, bytes: &[u8]) {
        g.offset += bytes.len() as u64;
        self.core.offset_now.store(g.offset, Ordering::Release);
        if g.filling.capacity() - g.filling.len() < bytes.len() {
            g.seal();
            g.filling.reserve(BLOCK.max(bytes.len()));
        }
        g.filling.extend_from_slice(bytes);
        if g.filling.len() >= BLOCK {
            g.seal();
        }
        prefetch_ahead(&mut g.filling);
        if g.any_online && !self.dirty.load(Ordering::Relaxed) {
            self.dirty.store(true, Ordering::Release);
        }
    }

    /// A replica asks for a full sync: it waits for the next snapshot to begin. A client
    /// already registered (a second PSYNC) starts over.
    #[allow(clippy::too_many_arguments)]
    pub fn add_for_full_sync(&self, client_id: u64, owner: usize, ip: String, listening_port: u16, psync: bool, eof: bool) {
        let mut g = self.core.inner.lock();
        g.seal();
        g.replicas.retain(|r| r.client_id != client_id);
        g.replicas.push(Replica::waiting(client_id, owner, ip, listening_port, psync, eof));
        g.recount_online();
    }

    /// Whether some replica waits for a snapshot to begin.
    pub fn waits_for_snapshot(&self) -> bool {
        self.core.inner.lock().replicas.iter().any(|r| r.state == ReplicaState::WaitSnapshot)
    }

    /// How many replicas wait for a snapshot to begin (`repl-diskless-sync-max-replicas`).
    pub fn count_waiting_for_snapshot(&self) -> usize {
        self.core.inner.lock().replicas.iter().filter(|r| r.state == ReplicaState::WaitSnapshot).count()
    }

    /// A snapshot begins (every loop's gate held): the replicas waiting for one start
    /// their stream here (of a disk-less one, `eof_only`, those that read that form).
    /// Returns them as (owner, client id, `+FULLRESYNC` line; empty for SYNC, which has
    /// none).
    pub fn snapshot_begins(&self, eof_only: bool) -> Vec<(usize, u64, Vec<u8>)> {
        self.publish_all();
        let mut g = self.core.inner.lock();
        let g = &mut *g;
        g.seal();
        let mut started = Vec::new();
        for r in g.replicas.iter_mut().filter(|r| r.state == ReplicaState::WaitSnapshot && (r.eof || !eof_only)) {
            r.state = ReplicaState::Transfer;
            r.start_offset = g.offset;
            r.ack_offset = g.offset;
            r.outbox.clear();
            r.outbox_len = 0;
            let line = if r.psync { format!("+FULLRESYNC {} {}\r\n", g.replid, g.offset).into_bytes() } else { Vec::new() };
            started.push((r.owner, r.client_id, line));
        }
        if !started.is_empty() && !g.proxy {
            // A new replica knows no database: the next record selects one. (A master's
            // stream passed on cannot change: its database goes in the snapshot,
            // `proxied_db`.)
            g.db = usize::MAX;
        }
        started
    }

    /// The database a master's stream passed on is in (its last SELECT), which a
    /// snapshot for replicas records (`repl-stream-db`): None when this stream adds its
    /// own SELECTs, or has seen none yet.
    pub fn proxied_db(&self) -> Option<usize> {
        let g = self.core.inner.lock();
        (g.proxy && g.db != usize::MAX).then_some(g.db)
    }

    /// The clients whose snapshot transfer the current snapshot serves.
    pub fn in_transfer(&self) -> Vec<u64> {
        let g = self.core.inner.lock();
        g.replicas.iter().filter(|r| r.state == ReplicaState::Transfer).map(|r| r.client_id).collect()
    }

    /// Replica `client_id` has its whole snapshot: it goes online, its outbox next.
    pub fn transfer_done(&self, client_id: u64, now_ms: i64) {
        let mut g = self.core.inner.lock();
        if let Some(r) = g.replicas.iter_mut().find(|r| r.client_id == client_id) {
            r.state = ReplicaState::Online;
            r.ack_ms = now_ms;
        }
        g.recount_online();
        self.dirty.store(true, Ordering::Release);
    }

    /// A replica asks to continue from `offset` (the offset of the next byte it needs)
    /// of `replid`: the bytes from there, if the backlog holds them; it is registered
    /// online then, so that nothing fed after falls between.
    #[allow(clippy::too_many_arguments)]
    pub fn try_continue(&self, replid: &[u8], offset: u64, client_id: u64, owner: usize, ip: String, listening_port: u16, now_ms: i64) -> Resync {
        self.publish_all();
        let mut g = self.core.inner.lock();
        if !self.feeding() {
            return Resync::Full("no backlog");
        }
        // PSYNC2: a replica of this server's old master continues from the history the
        // two share, up to the point where this server was promoted.
        let of_old_history = g.replid2.as_ref().is_some_and(|(id, upto)| replid == id.as_bytes() && offset <= *upto);
        if replid != g.replid.as_bytes() && !of_old_history {
            return Resync::Full("replication ID mismatch");
        }
        g.seal();
        let first = g.offset - g.backlog.len() as u64;
        if offset < first || offset > g.offset {
            return Resync::Full("offset out of the backlog's range");
        }
        let bytes = g.backlog.newest((g.offset - offset) as usize);
        g.replicas.retain(|r| r.client_id != client_id);
        g.replicas.push(Replica {
            state: ReplicaState::Online,
            start_offset: offset,
            ack_offset: offset,
            ack_ms: now_ms,
            ..Replica::waiting(client_id, owner, ip, listening_port, true, true)
        });
        g.recount_online();
        Resync::Continue(bytes)
    }

    /// Replica `client_id` has its whole disk-less snapshot: online at its first ACK
    /// (at once if that came already: true then; the loops' next batch, or loop 0's
    /// next tick, posts its outbox).
    pub fn transfer_sent(&self, client_id: u64, now_ms: i64) -> bool {
        let mut g = self.core.inner.lock();
        let mut online = false;
        if let Some(r) = g.replicas.iter_mut().find(|r| r.client_id == client_id) {
            if std::mem::take(&mut r.acked_in_transfer) {
                r.state = ReplicaState::Online;
                r.ack_ms = now_ms;
                online = true;
            } else {
                r.online_on_ack = true;
            }
        }
        if online {
            g.recount_online();
            self.dirty.store(true, Ordering::Release);
        }
        online
    }

    /// REPLCONF ACK from replica `client_id`; true when it put the replica online (its
    /// first after a disk-less snapshot).
    pub fn ack(&self, client_id: u64, offset: u64, now_ms: i64) -> bool {
        let mut g = self.core.inner.lock();
        let mut online = false;
        if let Some(r) = g.replicas.iter_mut().find(|r| r.client_id == client_id) {
            r.ack_offset = r.ack_offset.max(offset);
            r.ack_ms = now_ms;
            if std::mem::take(&mut r.online_on_ack) {
                r.state = ReplicaState::Online;
                self.dirty.store(true, Ordering::Release);
                online = true;
            } else if r.state == ReplicaState::Transfer && r.eof {
                r.acked_in_transfer = true;
            }
        }
        if online {
            g.recount_online();
        }
        self.count_good(&g, now_ms);
        online
    }

    /// CONFIG: `min-replicas-to-write` and `min-replicas-max-lag`.
    pub fn set_min_replicas(&self, to_write: u64, max_lag_s: u64) {
        self.max_lag_s.store(max_lag_s, Ordering::Relaxed);
        self.min_good.store(to_write, Ordering::Relaxed);
    }

    /// Whether writes are refused now (`-NOREPLICAS`): the rule is on (both settings
    /// non-zero) and fewer replicas acknowledged within the lag.
    #[inline]
    pub fn too_few_good_replicas(&self) -> bool {
        let min = self.min_good.load(Ordering::Relaxed);
        min > 0 && self.max_lag_s.load(Ordering::Relaxed) > 0 && self.good.load(Ordering::Relaxed) < min
    }

    /// Recounts the good replicas (each tick: a lag grows without an ACK).
    pub fn recount_good(&self, now_ms: i64) {
        let g = self.core.inner.lock();
        self.count_good(&g, now_ms);
    }

    fn count_good(&self, g: &Inner, now_ms: i64) {
        let lag_ms = (self.max_lag_s.load(Ordering::Relaxed) as i64).saturating_mul(1000);
        let n = g.replicas.iter().filter(|r| r.state == ReplicaState::Online && now_ms - r.ack_ms <= lag_ms).count();
        self.good.store(n as u64, Ordering::Relaxed);
    }

    /// Replica `client_id` as Redis names it in the log: its IP and the port it listens
    /// on.
    pub fn name(&self, client_id: u64) -> Option<String> {
        let g = self.core.inner.lock();
        g.replicas.iter().find(|r| r.client_id == client_id).map(|r| format!("{}:{}", r.ip, r.listening_port))
    }

    /// The replicas' client ids.
    pub fn replica_ids(&self) -> Vec<u64> {
        self.core.inner.lock().replicas.iter().map(|r| r.client_id).collect()
    }

    /// A replica's full sync: this server's stream is now its master's, from `offset` of
    /// `replid` on (fed with the master's bytes as applied, `feed_raw`), with an empty
    /// backlog. The caller holds every loop's gate (the stream may switch on here).
    pub fn follow(&self, replid: &str, offset: u64, db: Option<usize>) {
        self.publish_all();
        let mut g = self.core.inner.lock();
        g.replid = replid.to_string();
        g.replid2 = None;
        g.offset = offset;
        self.core.offset_now.store(offset, Ordering::Release);
        g.backlog.clear();
        g.filling.clear();
        g.db = db.unwrap_or(usize::MAX);
        g.proxy = true;
        g.multi = Multi::None;
        drop(g);
        self.start_feeding();
    }

    /// A replica's master continued it under a new ID (`+CONTINUE <id>`, after its own
    /// promotion): the old ID stays the second one, up to here.
    pub fn shift_history(&self, replid: &str) {
        let mut g = self.core.inner.lock();
        let old = std::mem::replace(&mut g.replid, replid.to_string());
        g.replid2 = Some((old, g.offset));
    }

    /// Feeds the master's stream as a replica applied it, byte for byte (so that offsets
    /// here are the master's, and a promotion keeps the history for PSYNC2).
    /// `select`: the database the command selects, when it is a SELECT.
    pub fn feed_raw(&self, bytes: &[u8], select: Option<usize>) {
        if !self.feeding() {
            return;
        }
        let mut g = self.core.inner.lock();
        if let Some(db) = select {
            g.db = db;
        }
        self.append(&mut g, bytes);
    }

    /// `repl-backlog-ttl` ran out on a master without replicas: no more records, no
    /// backlog, and, as Redis, a new ID with no second one (no valid past history). A
    /// write that decided to take its stripes before this sees `feeding` false and
    /// feeds nothing: switching off needs no gate.
    pub fn stop_feeding(&self) {
        self.publish_all();
        let mut g = self.core.inner.lock();
        self.feeding.store(false, Ordering::Release);
        g.backlog.clear();
        g.filling.clear();
        g.replid = random_id();
        g.replid2 = None;
        g.db = usize::MAX;
        g.proxy = false;
    }

    /// The data no longer follows any history (a replica's failed load): a new ID and no
    /// second one, so that the next PSYNC gets a full sync.
    pub fn forget_history(&self) {
        self.publish_all();
        let mut g = self.core.inner.lock();
        g.replid = random_id();
        g.replid2 = None;
        g.backlog.clear();
        g.filling.clear();
        g.proxy = false;
        g.db = usize::MAX;
    }

    /// A new history (a replica promoted to master): a new replication ID; the old one
    /// stays the second ID up to the offset reached, so that the old master's other
    /// replicas continue from the backlog (PSYNC2) instead of a full sync.
    pub fn new_history(&self) {
        self.publish_all();
        let mut g = self.core.inner.lock();
        let old = std::mem::replace(&mut g.replid, random_id());
        g.replid2 = Some((old, g.offset));
        // The next record selects its database: a replica continuing knows its old
        // master's last SELECT only.
        g.db = usize::MAX;
        g.proxy = false;
        g.multi = Multi::None;
    }

    /// Whether `client_id` is a replica.
    pub fn is_replica(&self, client_id: u64) -> bool {
        self.core.inner.lock().replicas.iter().any(|r| r.client_id == client_id)
    }

    /// Client `client_id` closed: it is a replica no more.
    pub fn remove(&self, client_id: u64) -> bool {
        let mut g = self.core.inner.lock();
        let before = g.replicas.len();
        g.replicas.retain(|r| r.client_id != client_id);
        g.recount_online();
        g.replicas.len() != before
    }

    /// Hands the online replicas' unsent chunks to `post` (owner, client id, chunk, the
    /// log offset it may not leave before: see `Inner::log_end`); returns at once when
    /// there are none. One delivery at a time: two loops that took two pieces of one
    /// replica's stream could otherwise post them in the wrong order (seen as a
    /// replica's list in another order than the master's). The stream's own lock is not
    /// held while posting, so writers do not wait for the wake-ups.
    pub fn deliver(&self, mut post: impl FnMut(usize, u64, Bytes, u64)) {
        if !self.dirty.load(Ordering::Acquire) {
            return;
        }
        let _one_at_a_time = self.delivery.lock();
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return;
        }
        let (pieces, need): (Vec<(usize, u64, Vec<Bytes>)>, u64) = {
            let mut g = self.core.inner.lock();
            g.seal();
            let pieces = g
                .replicas
                .iter_mut()
                .filter(|r| r.state == ReplicaState::Online && !r.outbox.is_empty())
                .map(|r| {
                    r.outbox_len = 0;
                    (r.owner, r.client_id, std::mem::take(&mut r.outbox))
                })
                .collect();
            (pieces, g.log_end)
        };
        for (owner, client_id, chunks) in pieces {
            for chunk in chunks {
                post(owner, client_id, chunk, need);
            }
        }
    }

    /// The log offset the stream fed so far may not leave before (`Inner::log_end`):
    /// a partial resync's bytes wait for it too.
    pub fn log_end(&self) -> u64 {
        self.core.inner.lock().log_end
    }

    /// Online replicas that acknowledged nothing for more than `timeout_ms`, as (client
    /// id, owner).
    pub fn overdue(&self, now_ms: i64, timeout_ms: i64) -> Vec<(u64, usize)> {
        let g = self.core.inner.lock();
        g.replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Online && now_ms - r.ack_ms > timeout_ms)
            .map(|r| (r.client_id, r.owner))
            .collect()
    }

    /// Each replica's outbox size, as (client id, bytes).
    pub fn outbox_sizes(&self) -> Vec<(u64, u64)> {
        let g = self.core.inner.lock();
        g.replicas.iter().map(|r| (r.client_id, r.outbox_len as u64)).collect()
    }

    /// Whether replica `client_id`, with `pending` bytes of output, is over the replica
    /// class's limit (`client-output-buffer-limit slave`: the hard limit at once, the
    /// soft one for more than its seconds, as `output_limit.rs` judges other clients).
    pub fn over_output_limit(&self, client_id: u64, pending: u64, limit: &crate::config::OutputLimit, now_s: i64) -> bool {
        let mut g = self.core.inner.lock();
        let Some(r) = g.replicas.iter_mut().find(|r| r.client_id == client_id) else { return false };
        if limit.hard > 0 && pending >= limit.hard {
            return true;
        }
        if limit.soft == 0 || pending < limit.soft {
            r.soft_since = 0;
            return false;
        }
        if r.soft_since == 0 {
            r.soft_since = now_s.max(1);
            return false;
        }
        now_s - r.soft_since > limit.soft_seconds.min(i64::MAX as u64) as i64
    }

    /// How many replicas there are, and how many acknowledged `offset` or more.
    pub fn acked(&self, offset: u64) -> (usize, usize) {
        let g = self.core.inner.lock();
        let n = g.replicas.iter().filter(|r| r.state == ReplicaState::Online).count();
        (n, g.replicas.iter().filter(|r| r.state == ReplicaState::Online && r.ack_offset >= offset).count())
    }

    /// CONFIG SET repl-backlog-size: the backlog keeps its newest bytes.
    pub fn set_backlog_size(&self, size: u64) {
        let mut g = self.core.inner.lock();
        g.backlog.resize(size.max(BACKLOG_MIN) as usize);
    }

    /// What INFO replication shows: the replicas as (ip, port, state, ack offset, ack
    /// ms), the ID, the offset, the backlog's size, first byte offset and length.
    pub fn info(&self) -> Info {
        let g = self.core.inner.lock();
        Info {
            replicas: g.replicas.iter().map(|r| (r.ip.clone(), r.listening_port, r.state, r.ack_offset, r.ack_ms)).collect(),
            replid: g.replid.clone(),
            replid2: g.replid2.clone(),
            offset: g.offset,
            backlog_active: self.feeding(),
            backlog_size: g.backlog.capacity() as u64,
            backlog_first_byte: (g.offset - g.history()) + 1,
            backlog_histlen: g.history(),
        }
    }
}

/// INFO replication's figures of the master side.
pub struct Info {
    pub replicas: Vec<(String, u16, ReplicaState, u64, i64)>,
    pub replid: String,
    /// The second ID and the offset up to which it holds.
    pub replid2: Option<(String, u64)>,
    pub offset: u64,
    pub backlog_active: bool,
    pub backlog_size: u64,
    pub backlog_first_byte: u64,
    pub backlog_histlen: u64,
}

/// Asks for the cache lines the next records will be written to. The block is fresh
/// memory: written when a record arrives, each new line was a miss that the stream
/// lock's release then waited for (most of the lock's cost in a profile of pipelined
/// SETs with a replica); fetched now, it arrives while the loop does other work.
#[inline]
fn prefetch_ahead(filling: &mut BytesMut) {
    #[cfg(target_arch = "x86_64")]
    {
        let spare = filling.spare_capacity_mut();
        let ahead = spare.len().min(PREFETCH_AHEAD);
        for at in (0..ahead).step_by(64) {
            // SAFETY: a prefetch is only a hint; the address is within the block.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(spare[at..].as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = filling;
}

/// How far ahead of the stream's end lines are asked for (two records of a few hundred
/// bytes).
const PREFETCH_AHEAD: usize = 512;

/// A replication ID: 40 random hex digits.
fn random_id() -> String {
    (0..40).map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0')).collect()
}

thread_local! {
    /// Where a writer encodes its records before taking the stream's lock.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn put_command<A: AsRef<[u8]>>(buf: &mut Vec<u8>, args: &[A]) {
    resp::encode::array_len(buf, args.len());
    for a in args {
        resp::encode::bulk(buf, a.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a delivery posts, each replica's chunks joined.
    fn take(s: &Stream) -> Vec<(usize, u64, Vec<u8>)> {
        let mut out: Vec<(usize, u64, Vec<u8>)> = Vec::new();
        s.deliver(|o, id, b, _| match out.iter_mut().find(|(_, i, _)| *i == id) {
            Some((_, _, bytes)) => bytes.extend_from_slice(&b),
            None => out.push((o, id, b.to_vec())),
        });
        out
    }

    fn feed(s: &Stream, db: usize, args: &[&str]) {
        let rec: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        s.feed(db, &[&rec[..]], 0);
    }

    #[test]
    fn nothing_is_fed_before_a_replica_asks() {
        let s = Stream::new("a".repeat(40), 1 << 20, 1);
        feed(&s, 0, &["SET", "k", "v"]);
        assert_eq!(s.offset(), 0);
    }

    #[test]
    fn a_replica_gets_the_stream_from_its_snapshot_with_a_select_first() {
        let s = Stream::new("a".repeat(40), 1 << 20, 1);
        s.start_feeding();
        feed(&s, 0, &["SET", "before", "1"]);
        let before = s.offset();
        s.add_for_full_sync(7, 0, "127.0.0.1".into(), 6380, true, true);
        feed(&s, 0, &["SET", "waiting", "1"]);
        let started = s.snapshot_begins(false);
        let line = format!("+FULLRESYNC {} {}\r\n", "a".repeat(40), s.offset());
        assert_eq!(started, vec![(0, 7, line.into_bytes())]);
        assert!(s.offset() > before);
        feed(&s, 0, &["SET", "after", "1"]);
        assert!(take(&s).is_empty(), "not online yet");
        s.transfer_done(7, 0);
        let out = take(&s);
        assert_eq!(out.len(), 1);
        assert_eq!(
            String::from_utf8(out[0].2.clone()).unwrap(),
            "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$5\r\nafter\r\n$1\r\n1\r\n"
        );
    }

    #[test]
    fn a_diskless_replica_goes_online_at_its_first_ack_even_one_before_the_transfer_is_marked_sent() {
        for ack_first in [false, true] {
            let s = Stream::new("e".repeat(40), 1 << 20, 1);
            s.start_feeding();
            s.add_for_full_sync(7, 0, "127.0.0.1".into(), 6380, true, true);
            let started = s.snapshot_begins(true);
            assert_eq!(started.len(), 1);
            let at = s.offset();
            feed(&s, 0, &["SET", "after", "1"]);
            if ack_first {
                // The replica read the snapshot's end, loaded it and acknowledged before
                // the snapshot thread got to mark the transfer sent.
                assert!(!s.ack(7, at, 0));
                assert!(take(&s).is_empty(), "not online before the transfer is marked sent");
                assert!(s.transfer_sent(7, 0));
            } else {
                assert!(!s.transfer_sent(7, 0));
                assert!(take(&s).is_empty(), "not online before its first ack");
                assert!(s.ack(7, at, 0));
            }
            let out = take(&s);
            assert_eq!(out.len(), 1, "ack first: {ack_first}");
            assert!(String::from_utf8_lossy(&out[0].2).contains("after"));
        }
    }

    #[test]
    fn a_partial_resync_gets_what_follows_its_offset_or_a_reason() {
        let s = Stream::new("b".repeat(40), BACKLOG_MIN, 1);
        s.start_feeding();
        feed(&s, 2, &["SET", "k", "v"]);
        let mid = s.offset();
        feed(&s, 2, &["DEL", "k"]);
        match s.try_continue("b".repeat(40).as_bytes(), mid, 9, 0, "x".into(), 1, 0) {
            Resync::Continue(bytes) => assert_eq!(bytes, b"*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"),
            Resync::Full(why) => panic!("{why}"),
        }
        assert!(matches!(s.try_continue(b"other", mid, 9, 0, "x".into(), 1, 0), Resync::Full(_)));
        assert!(matches!(s.try_continue("b".repeat(40).as_bytes(), s.offset() + 1, 9, 0, "x".into(), 1, 0), Resync::Full(_)));
        // Past the backlog's size, the oldest bytes are gone.
        let big = "x".repeat(BACKLOG_MIN as usize);
        feed(&s, 2, &["SET", "k", &big]);
        assert!(matches!(s.try_continue("b".repeat(40).as_bytes(), mid, 9, 0, "x".into(), 1, 0), Resync::Full(_)));
        assert_eq!(s.info().backlog_histlen, BACKLOG_MIN);
    }

    #[test]
    fn a_loops_records_wait_in_its_part_and_a_later_write_elsewhere_publishes_them_first() {
        let s = std::sync::Arc::new(Stream::new("d".repeat(40), 1 << 20, 2));
        s.start_feeding();
        s.add_for_full_sync(1, 0, "x".into(), 1, true, true);
        s.snapshot_begins(false);
        s.transfer_done(1, 0);
        this_thread_runs_loop(0);
        let rec: [&[u8]; 3] = [b"SET", b"k", b"1"];
        let mark = s.feed_buffered(0, &[&rec[..]], 0).expect("a loop's record is buffered");
        assert_eq!(s.offset(), 0, "in loop 0's part, not in the stream yet");
        assert!(take(&s).is_empty());
        // Loop 1 writes the same key: loop 0's part goes first.
        let s1 = s.clone();
        std::thread::spawn(move || {
            this_thread_runs_loop(1);
            s1.ensure_published(mark);
            let rec: [&[u8]; 3] = [b"SET", b"k", b"2"];
            s1.feed_buffered(0, &[&rec[..]], 0).expect("buffered");
            s1.publish_mine();
        })
        .join()
        .expect("loop 1");
        let out = String::from_utf8(take(&s).remove(0).2).unwrap();
        assert_eq!(out, "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n1\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n2\r\n");
        // A record of another database in a part gets its SELECT when published; a
        // snapshot's point in time publishes every part first.
        let rec: [&[u8]; 2] = [b"DEL", b"k"];
        s.feed_buffered(3, &[&rec[..]], 0).expect("buffered");
        let before = s.offset();
        s.add_for_full_sync(2, 0, "y".into(), 2, true, true);
        let started = s.snapshot_begins(false);
        assert!(s.offset() > before, "published before the snapshot's offset was taken");
        assert_eq!(started[0].2, format!("+FULLRESYNC {} {}\r\n", "d".repeat(40), s.offset()).into_bytes());
        let out = String::from_utf8(take(&s).remove(0).2).unwrap();
        assert_eq!(out, "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n");
    }

    #[test]
    fn a_delivery_waits_for_the_log_end_of_every_record_published_in_it() {
        let s = Stream::new("e".repeat(40), 1 << 20, 1);
        s.start_feeding();
        s.add_for_full_sync(1, 0, "x".into(), 1, true, true);
        s.snapshot_begins(false);
        s.transfer_done(1, 0);
        this_thread_runs_loop(0);
        let needs = |s: &Stream| {
            let mut needs = Vec::new();
            s.deliver(|_, _, _, need| needs.push(need));
            needs
        };
        let rec: [&[u8]; 3] = [b"SET", b"k", b"1"];
        s.feed_buffered(0, &[&rec[..]], 500).expect("buffered");
        s.feed_buffered(0, &[&rec[..]], 300).expect("buffered");
        // In the loop's part: neither delivered nor counted yet.
        assert!(needs(&s).is_empty());
        assert_eq!(s.log_end(), 0);
        s.publish_mine();
        assert_eq!(needs(&s), vec![500], "the greatest end of the records published");
        // A record not logged (PUBLISH, PING) never lowers it.
        s.feed(0, &[&rec[..]], 0);
        assert_eq!(needs(&s), vec![500]);
        s.feed(0, &[&rec[..]], 900);
        assert_eq!(needs(&s), vec![900]);
        this_thread_runs_loop(usize::MAX);
    }

    #[test]
    fn an_exec_is_bracketed_only_when_it_fed_something() {
        let s = Stream::new("c".repeat(40), 1 << 20, 1);
        s.start_feeding();
        s.add_for_full_sync(1, 0, "x".into(), 1, true, true);
        s.snapshot_begins(false);
        s.transfer_done(1, 0);
        s.begin_exec();
        s.end_exec(0);
        assert!(take(&s).is_empty());
        s.begin_exec();
        feed(&s, 0, &["INCR", "n"]);
        s.end_exec(0);
        let out = String::from_utf8(take(&s).remove(0).2).unwrap();
        assert!(out.starts_with("*1\r\n$5\r\nMULTI\r\n*2\r\n$6\r\nSELECT"), "{out}");
        assert!(out.ends_with("*1\r\n$4\r\nEXEC\r\n"), "{out}");
    }
}
