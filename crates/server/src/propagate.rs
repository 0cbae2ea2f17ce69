//! Propagation: the one way a change reaches the append-only log and the replicas.
//!
//! As Redis propagates a call's effect once, after the call (`propagateNow`,
//! `alsoPropagate`, `preventCommandPropagation`), every record passes through here:
//!
//! - **A call.** Its handler states what the call means ([`Propagation`], set with
//!   `Ctx::propagate_as` / `Ctx::propagate_nothing`; by default the command as sent);
//!   the dispatcher's propagate phase hands it to [`call`].
//! - **A blocked pop served later** (by another client's write) is propagated as the
//!   plain pop it amounts to, with [`effect`].
//! - **A key removed by expiry or eviction** is propagated as `DEL`, with [`removal`].
//! - **EXEC** brackets its queue's records with MULTI and EXEC
//!   ([`begin_transaction`], [`end_transaction`]); a queue that wrote nothing writes
//!   neither.
//!
//! Every record is appended to both sinks while its write holds its keys' ordering
//! stripes (`crate::order`), so the records of writes to a common key are in the order
//! they ran, in the log and in the replication stream alike. (An event loop's records
//! go to its own part of the stream first, published after each connection's batch; a
//! record whose stripe was last written by a record still in another loop's part has
//! that part published first: `feed_replicas`.) Stripes are taken, and
//! records made, only while a sink consumes them ([`active`]): the log is on, or a
//! replica asked for the stream (`replication::stream`, switched on under every loop's
//! gate).

use crate::order::Ordered;
use crate::shared::Shared;

/// One command of a propagated effect, as its arguments.
pub type Record = Vec<Vec<u8>>;

/// What a call means to the log, as its handler states it.
#[derive(Debug, Default)]
pub enum Propagation {
    /// The command as the client sent it.
    #[default]
    AsSent,
    /// These commands instead (Redis's rewritten command vector or `alsoPropagate`):
    /// relative times made absolute, a random pop as what it popped.
    Effect(Vec<Record>),
    /// Nothing: the call changed nothing, or propagated itself (a blocking pop).
    Nothing,
}

/// Which sinks a call's records go to: both, but for the master's stream applied on a
/// replica (its link passes the stream's own bytes on: not to the replicas) and a
/// script's commands after `redis.set_repl` (its flags).
#[derive(Clone, Copy, Debug)]
pub struct Sinks {
    pub log: bool,
    pub replicas: bool,
}

/// A record from its words (`record(&[b"PEXPIREAT", key, ms.as_bytes()])`).
pub fn record(words: &[&[u8]]) -> Record {
    words.iter().map(|w| w.to_vec()).collect()
}

/// Whether anything consumes records: the log is on or replicas are fed. Read once per
/// write, under the loop's gate (the replication stream switches on only under every
/// gate, so a write sees one answer from its ordering to its propagation).
#[inline]
pub fn active(shared: &Shared) -> bool {
    shared.aof.is_some() || shared.repl.feeding()
}

/// Propagates a successful call in database `db` at `now_ms`: returns the log offset of
/// the end of its last record, None when nothing was logged. `request`: the bytes the
/// client sent, when they are exactly the encoding of `args` (as nearly every client
/// sends a command; the parser tells): they stand for the command's record in the
/// replication stream, not encoded again. `to`: the sinks ([`Sinks`]); for the master's
/// stream applied on a replica, not the replicas (its link passes the stream's own bytes
/// on; decided by the client, not by the role, which a promotion may change while the
/// link applies one).
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn call(shared: &Shared, db: usize, now_ms: i64, args: &[&[u8]], what: Propagation, ordered: &Ordered<'_>, request: Option<&[u8]>, to: Sinks) -> Option<u64> {
    let to_replicas = to.replicas;
    let log = shared.aof.as_ref().filter(|_| to.log);
    // The log first: the stream's record carries the log offset it may not leave
    // before (see `feed_replicas`).
    match what {
        Propagation::AsSent => {
            debug_assert!(request.is_none_or(|r| resp::encode::is_command_encoding(r, args)));
            let end = log.map(|aof| aof.append_one(db, now_ms, args));
            let log_end = end.unwrap_or(0);
            match request {
                _ if !to_replicas => {}
                Some(bytes) => feed_replicas_with(
                    shared,
                    Some(ordered),
                    || shared.repl.feed_buffered_encoded(db, bytes, log_end),
                    || shared.repl.feed_encoded(db, bytes, log_end),
                ),
                None => feed_replicas(shared, db, &[args], Some(ordered), log_end),
            }
            end
        }
        Propagation::Effect(records) if records.is_empty() => None,
        Propagation::Effect(records) => {
            let recs: Vec<&[Vec<u8>]> = records.iter().map(Vec::as_slice).collect();
            let end = log.map(|aof| aof.append(db, now_ms, &recs));
            if to_replicas {
                feed_replicas(shared, db, &recs, Some(ordered), end.unwrap_or(0));
            }
            end
        }
        Propagation::Nothing => None,
    }
}

/// Hands records to the replication stream, on a master only: a replica's stream is
/// its master's, byte for byte (`replication::replica` passes it on), so a client's
/// write to a replica with `replica-read-only no` stays local, as in Redis (its
/// `replicationFeedSlaves` returns on a replica); fed, it would move the replica's
/// offset off its master's and break the next partial resync.
///
/// Records go to the loop's part of the stream (after the client's earlier ones); a
/// write holding its stripes (`ordered`) first has the parts holding the last records
/// of its stripes published, and marks the stripes with its own. Off the event loops
/// (or inside EXEC) they go to the stream itself.
///
/// `log_end`: the end of the records in this server's log (0: not logged). They leave
/// for the replicas once the log holds them, as Redis sends its stream only after its
/// `appendfsync` write (and fsync): a replica never serves a write its master could
/// come back without.
#[inline]
fn feed_replicas<A: AsRef<[u8]>>(shared: &Shared, db: usize, records: &[&[A]], ordered: Option<&Ordered<'_>>, log_end: u64) {
    feed_replicas_with(shared, ordered, || shared.repl.feed_buffered(db, records, log_end), || shared.repl.feed(db, records, log_end));
}

/// [`feed_replicas`], the records put by `buffered` (to the loop's part: its writer mark,
/// or None) or else by `direct` (to the stream itself).
#[inline]
fn feed_replicas_with(shared: &Shared, ordered: Option<&Ordered<'_>>, buffered: impl FnOnce() -> Option<u64>, direct: impl FnOnce()) {
    if !shared.repl.feeding() || shared.replica.is_replica() {
        return;
    }
    if let Some(o) = ordered {
        for mark in o.writers() {
            shared.repl.ensure_published(mark);
        }
    }
    match buffered() {
        Some(mark) => {
            if let Some(o) = ordered {
                o.mark_writer(mark);
            }
        }
        None => direct(),
    }
}

/// PUBLISH: replicas get the message too (their subscribers hear it), the log not; in
/// the stream after the client's earlier writes, as Redis's single thread orders them.
pub fn message(shared: &Shared, db: usize, args: &[&[u8]]) {
    feed_replicas(shared, db, &[args], None, 0);
}

/// Propagates the effect of a blocked command served later (LPOP, LMOVE, ZPOPMIN ...);
/// returns the end of its record in the log.
pub fn effect(shared: &Shared, db: usize, now_ms: i64, record: &[Vec<u8>], ordered: Option<&Ordered<'_>>) -> Option<u64> {
    let end = shared.aof.as_ref().map(|aof| aof.append_one(db, now_ms, record));
    feed_replicas(shared, db, &[record], ordered, end.unwrap_or(0));
    end
}

/// The store's expiry hook (`store::events::ExpireHook`): called under the key's shard
/// lock before an expired key is removed or a key is evicted (maxmemory). Propagates
/// `DEL key`, as Redis propagates an expiry, and says yes; or says no (the key stays,
/// read as absent, until later) while another thread's write to a key of the same
/// stripe is between its change and its record, since a DEL propagated now could land
/// before that write's record. Appended under the shard lock, the DEL comes before the
/// record of any later write to the key, which needs that lock first.
pub fn removal(shared: &Shared, db: usize, key: &[u8], now_ms: i64, why: store::events::Removal) -> bool {
    if shared.replica.is_replica() {
        // A replica's stream is its master's, byte for byte: the master's DEL comes,
        // and until then an expired key stays, read as absent (as Redis's replica keeps
        // it). Removed here, a key the master still holds (the replica's clock ahead of
        // its master's, or the stream behind: a PERSIST or EXPIRE on its way) would be
        // gone for good. A key it evicts (`replica-ignore-maxmemory no`, its own
        // choice, as Redis's) goes, and only its log records it: its replicas get its
        // master's stream, not its own removals.
        if why != store::events::Removal::Evicted {
            return false;
        }
        let Some(aof) = shared.aof.as_ref() else { return true };
        if !shared.stripes.expiry_may_propagate(&shared.keyspace, key) {
            return false;
        }
        aof.append_one(db, now_ms, &[&b"DEL"[..], key]);
        return true;
    }
    if !active(shared) {
        return true;
    }
    // The log being replayed into the live keyspace (DEBUG LOADAOF / RELOAD): keys that
    // expire meanwhile are not logged again.
    if shared.aof.as_ref().is_some_and(|aof| aof.replaying.load(std::sync::atomic::Ordering::Acquire)) {
        return true;
    }
    if !shared.stripes.expiry_may_propagate(&shared.keyspace, key) {
        return false;
    }
    let del: [&[u8]; 2] = [b"DEL", key];
    // After the key's last record, if it waits in a loop's part of the stream.
    shared.repl.ensure_published(shared.stripes.writer_of_key(&shared.keyspace, key));
    let end = shared.aof.as_ref().map_or(0, |aof| aof.append_one(db, now_ms, &del));
    shared.repl.feed(db, &[&del[..]], end);
    true
}

/// An EXEC begins (every loop's gate held): its records are bracketed by MULTI/EXEC.
pub fn begin_transaction(shared: &Shared) {
    shared.stripes.begin_exec();
    shared.repl.begin_exec();
    if let Some(aof) = shared.aof.as_ref() {
        aof.begin_exec();
    }
}

/// The EXEC ended: the log offset of its closing EXEC record, None when it logged
/// nothing.
pub fn end_transaction(shared: &Shared) -> Option<u64> {
    // The log's EXEC first: the stream's may not leave before it (a transaction the
    // log holds without its EXEC is not replayed).
    let end = shared.aof.as_ref().and_then(|aof| aof.end_exec());
    shared.repl.end_exec(end.unwrap_or(0));
    shared.stripes.end_exec(end);
    end
}
