//! Shutting down (SHUTDOWN, SIGTERM, SIGINT) as Redis 7.0 does with replicas attached: a
//! master whose replicas have not acknowledged the whole stream first waits for them,
//! up to `shutdown-timeout` seconds, with writes held (Redis's pause of writes; reads go
//! on) and a `REPLCONF GETACK *` sent so that they answer at once. Then the final save
//! (SHUTDOWN's SAVE or NOSAVE, else the save rules) and the exit. Without the wait, a
//! write acknowledged just before a planned restart could be missing on the replica that
//! Sentinel promotes next.
//!
//! A replica with replicas of its own waits for them likewise, its link holding its
//! master's writes, without a GETACK (its stream is its master's).
//!
//! `SHUTDOWN NOW` (and a SHUTDOWN inside EXEC, which cannot block) skips the wait;
//! `SHUTDOWN ABORT` ends it, the server goes on, and the waiting SHUTDOWN clients get an
//! error; `FORCE` exits even when the final save fails. The waiting state is
//! `state::shutdown`; loop 0's tick moves it on ([`progress`]).

use crate::shared::{Mail, Shared};
use crate::state::shutdown::Pending;

/// What asked for the shutdown.
pub struct Ask {
    /// SAVE (`Some(true)`), NOSAVE (`Some(false)`), or the save rules.
    pub save: Option<bool>,
    /// NOW: no wait for the replicas.
    pub now: bool,
    pub force: bool,
    /// The SHUTDOWN client, as (its loop, its id); None for a signal.
    pub client: Option<(usize, u64)>,
}

/// How a shutdown began.
#[derive(Debug, PartialEq, Eq)]
pub enum Begun {
    /// No replica to wait for: the caller goes on to the exit.
    Now,
    /// It waits for the replicas (the client, if any, is to be blocked).
    Waiting,
}

/// Begins a shutdown. `gates_held`: the caller holds every loop's gate (SHUTDOWN does);
/// otherwise they are taken here (gates come before the waiting state's lock), so that
/// the stream's offsets are read and the GETACK fed with no write in between.
pub fn begin(shared: &Shared, ask: Ask, gates_held: bool, now_ms: i64) -> Begun {
    let timeout_s: i64 = shared.config.read().recorded.get("shutdown-timeout").and_then(|v| v.parse().ok()).unwrap_or(10);
    // Nothing to wait for: no gate taken (a signal during the load at start must stop
    // it at once, and the load holds every gate until its end).
    let idle = ask.now || timeout_s == 0 || shared.repl.info().replicas.is_empty();
    if idle && !shared.shutdown_wait.waiting() {
        return Begun::Now;
    }
    let gates = shared.all_gates(gates_held);
    let mut pending = shared.shutdown_wait.pending.lock();
    if let Some(p) = pending.as_mut() {
        // Already waiting: a later SHUTDOWN waits with it (a signal changes nothing),
        // unless it says NOW.
        if ask.now {
            return Begun::Now;
        }
        p.clients.extend(ask.client);
        return Begun::Waiting;
    }
    if idle {
        return Begun::Now;
    }
    let before = shared.repl.offset();
    if in_sync(shared, (before, before)).0 {
        return Begun::Now;
    }
    // A replica with replicas of its own passes its master's stream on byte for byte: a
    // GETACK of its own would move its offset off its master's. As Redis's, it waits
    // for their acknowledgements of every second instead, its link applying nothing
    // meanwhile (the hold below: `replication::replica`), so that the offset they
    // chase stands still.
    if !shared.replica.is_replica() {
        shared.repl.feed_keyless(&[b"REPLCONF", b"GETACK", b"*"]);
    }
    let after = shared.repl.offset();
    shared.pause.hold_for_shutdown(&shared.keyspace, true);
    *pending = Some(Pending {
        deadline_ms: now_ms.saturating_add(timeout_s.saturating_mul(1000)),
        clients: ask.client.into_iter().collect(),
        save: ask.save,
        force: ask.force,
        getack: (before, after),
    });
    drop(pending);
    drop(gates);
    crate::replication::master::flush(shared);
    crate::log::warning("Waiting for replicas before shutting down.");
    Begun::Waiting
}

/// Whether every replica acknowledged the whole stream (all of it, or all but the
/// GETACK fed at the start, answered with the offset before it, while nothing came
/// after it); and how many did, of how many.
fn in_sync(shared: &Shared, getack: (u64, u64)) -> (bool, usize, usize) {
    let info = shared.repl.info();
    let (before, after) = getack;
    let has_all = |ack: u64| ack == info.offset || (info.offset == after && ack >= before);
    let synced = info.replicas.iter().filter(|r| has_all(r.3)).count();
    (synced == info.replicas.len(), synced, info.replicas.len())
}

/// From loop 0's tick (no gate held): a waiting shutdown goes on to the exit once every
/// replica has the whole stream, or at its deadline (the lagging ones logged).
pub fn progress(shared: &Shared, now_ms: i64) {
    let mut pending = shared.shutdown_wait.pending.lock();
    let Some(p) = pending.as_ref() else { return };
    let (all, synced, total) = in_sync(shared, p.getack);
    if !all && now_ms < p.deadline_ms {
        return;
    }
    let Some(p) = pending.take() else { return };
    drop(pending);
    if !all {
        let info = shared.repl.info();
        for (ip, port, state, ack, _) in &info.replicas {
            if *ack != info.offset {
                crate::log::warning(&format!(
                    "Lagging replica {ip}:{port} reported offset {ack} behind master, lag={}, state={}.",
                    info.offset.saturating_sub(*ack),
                    state.name()
                ));
            }
        }
    }
    crate::log::notice(&format!("{synced} of {total} replicas are in sync when shutting down."));
    finish(shared, p);
}

/// The wait is over: the final save, then the exit; a save that fails without FORCE
/// ends the shutdown instead (its clients get the error).
fn finish(shared: &Shared, p: Pending) {
    let save = command_save(shared, p.save);
    if !exit(shared, save, p.force) {
        end(shared, p);
    }
}

/// The final save, for [`exit`]: SAVE or NOSAVE as asked (SHUTDOWN's options, or
/// `shutdown-on-sigterm`'s), else the save rules decide now.
pub fn command_save(shared: &Shared, asked: Option<bool>) -> bool {
    asked.unwrap_or_else(|| crate::snapshot::has_save_rules(shared))
}

/// Saves if `save` (see [`command_save`]) and asks every loop to stop; the exit makes
/// no save of its own after that. A server loading its data saves nothing (half a data
/// set). False, without `force`, when the save failed or the rewrite after a replica's
/// full sync is still being written ([`crate::aof::rewrite::writing_initial`]): the
/// server goes on.
pub fn exit(shared: &Shared, save: bool, force: bool) -> bool {
    use std::sync::atomic::Ordering::SeqCst;
    shared.exiting.store(true, SeqCst);
    let stopped = exit_now(shared, save, force);
    if !stopped {
        shared.exiting.store(false, SeqCst);
    }
    stopped
}

/// [`exit`]'s body.
fn exit_now(shared: &Shared, save: bool, force: bool) -> bool {
    // (A second SIGINT before this: out at once, without the save. One during the save
    // lets it end, and saves nothing more.)
    let save = save && !shared.replica.is_loading() && !shared.insisted.load(std::sync::atomic::Ordering::SeqCst);
    // As Redis: a restart now would load the data set of before the replica's last full
    // sync, whose rewrite is still being written.
    if crate::aof::rewrite::writing_initial(shared) {
        if !force {
            crate::log::warning("Writing initial AOF, can't exit.");
            return false;
        }
        crate::log::warning("Writing initial AOF. Exit anyway.");
    }
    // Held from the save to the stop (when saving): a loop that takes its gate next
    // sees the stop and runs nothing more (`conn.rs`, EXEC), so no reply acknowledges a
    // write that the save does not hold (the loops went on for the rest of their turn,
    // and a SHUTDOWN SAVE under load lost acknowledged writes).
    let _gates = if save {
        crate::log::notice("Saving the final RDB snapshot before exiting.");
        store::release_kept();
        let gates = shared.all_gates(false);
        if crate::snapshot::save(shared).is_err() && !force {
            crate::log::warning("Error trying to save the DB, can't exit.");
            return false;
        }
        Some(gates)
    } else {
        None
    };
    shared.request_shutdown();
    true
}

/// What `shutdown-on-sigterm` (or `-sigint`) asks of a signal's shutdown.
pub fn on_signal(shared: &Shared, sigint: bool) -> Ask {
    let name = if sigint { "shutdown-on-sigint" } else { "shutdown-on-sigterm" };
    let flags = shared.config.read().recorded.get(name).cloned().unwrap_or_default();
    let has = |w: &str| flags.split(' ').any(|f| f == w);
    Ask {
        save: if has("save") { Some(true) } else if has("nosave") { Some(false) } else { None },
        now: has("now"),
        force: has("force"),
        client: None,
    }
}

/// SHUTDOWN ABORT: ends a waiting shutdown (false when none waits); the server goes
/// on, and each waiting SHUTDOWN client gets Redis's error.
pub fn abort(shared: &Shared) -> bool {
    let Some(p) = shared.shutdown_wait.pending.lock().take() else { return false };
    crate::log::warning("Shutdown manually aborted.");
    end(shared, p);
    true
}

/// Lets the held writes go and answers the waiting SHUTDOWN clients with an error.
fn end(shared: &Shared, p: Pending) {
    shared.pause.hold_for_shutdown(&shared.keyspace, false);
    for (owner, client_id) in p.clients {
        let bytes = bytes::Bytes::from_static(b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
        shared.post_mail(owner, Mail::unblocking(client_id, bytes));
    }
}
