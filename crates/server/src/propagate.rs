//! Propagation: the one way a change reaches the append-only log (and, with replication,
//! issue 24, the replicas).
//!
//! As Redis propagates a call's effect once, after the call (`propagateNow`,
//! `alsoPropagate`, `preventCommandPropagation`), every record passes through here:
//!
//! - **A call.** Its handler states what the call means ([`Propagation`], set with
//!   `Ctx::propagate_as` / `Ctx::propagate_nothing`; by default the command as sent);
//!   the dispatcher's propagate phase hands it to [`call`].
//! - **A blocked pop served later** (by another client's write) is propagated as the
//!   plain pop it amounts to, with [`effect`].
//! - **A key removed by expiry or eviction** is propagated as `DEL`, with [`expiry`].
//! - **EXEC** brackets its queue's records with MULTI and EXEC
//!   ([`begin_transaction`], [`end_transaction`]); a queue that wrote nothing writes
//!   neither.
//!
//! Every record is appended while its write holds its keys' ordering stripes (`aof`),
//! so the records of writes to a common key are in the order they ran. The log is the
//! only sink today. The replication stream must carry the same records in the same
//! order; it joins at these functions (the log's append is where the order is fixed),
//! not by a second path beside them.

use crate::aof::Aof;

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

/// A record from its words (`record(&[b"PEXPIREAT", key, ms.as_bytes()])`).
pub fn record(words: &[&[u8]]) -> Record {
    words.iter().map(|w| w.to_vec()).collect()
}

/// Propagates a successful call in database `db` at `now_ms`: returns the log offset of
/// the end of its last record, None when nothing was propagated.
#[inline]
pub fn call(aof: &Aof, db: usize, now_ms: i64, args: &[&[u8]], what: Propagation) -> Option<u64> {
    match what {
        Propagation::AsSent => Some(aof.append_one(db, now_ms, args)),
        Propagation::Effect(records) if records.is_empty() => None,
        Propagation::Effect(records) => {
            let recs: Vec<&[Vec<u8>]> = records.iter().map(Vec::as_slice).collect();
            Some(aof.append(db, now_ms, &recs))
        }
        Propagation::Nothing => None,
    }
}

/// Propagates the effect of a blocked command served later (LPOP, LMOVE, ZPOPMIN ...);
/// returns the end of its record.
pub fn effect(aof: &Aof, db: usize, now_ms: i64, record: &[Vec<u8>]) -> u64 {
    aof.append_one(db, now_ms, record)
}

/// Propagates the removal of an expired or evicted key as `DEL key`. False when it must
/// wait: another thread's write to the key's stripe is in flight (the store defers the
/// removal, see `Aof::log_expiry`).
pub fn expiry(aof: &Aof, ks: &store::Keyspace, db: usize, key: &[u8], now_ms: i64) -> bool {
    aof.log_expiry(ks, db, key, now_ms)
}

/// An EXEC begins (every loop's gate held): its records are bracketed by MULTI/EXEC.
pub fn begin_transaction(aof: &Aof) {
    aof.begin_exec();
}

/// The EXEC ended: the offset of its closing EXEC record, None when it propagated
/// nothing.
pub fn end_transaction(aof: &Aof) -> Option<u64> {
    aof.end_exec()
}
