//! FAILOVER: a master hands its role to one of its replicas without losing a write, as
//! Redis 6.2+ does it (Redis 7.0 is the specification, byte for byte in its replies).
//!
//! 1. **waiting-for-sync.** The master holds writes (clients that send one wait, as
//!    under CLIENT PAUSE WRITE, and CLIENT UNPAUSE does not lift it; expired keys stay
//!    until the end, and no PING enters the stream, so the stream's offset stands
//!    still) until the target replica (`TO host port`, else any online one) has
//!    acknowledged the whole stream. One `REPLCONF GETACK *` at the start asks the
//!    replicas for that acknowledgement at once, and the loop that reads it moves the
//!    failover on after its batch ([`after_acks`]): the writes are held for about a
//!    round trip. (Redis 7.0 feeds no GETACK and waits for a replica's ACK of every
//!    second: its writes are held for up to a second.) With `TIMEOUT`, a replica that
//!    has not caught up by then aborts the failover, unless `FORCE`.
//! 2. **failover-in-progress.** The master becomes a replica of the target
//!    (`replica::follow`) and sends `PSYNC <replid> <offset> FAILOVER`: the
//!    target, still following this master's history, promotes itself and answers
//!    `+CONTINUE` (`command::replication`'s PSYNC). Either PSYNC answer that starts a
//!    sync ends the failover (writes are let go, and now refused as from a replica);
//!    a refusal makes this server a master again, with a new history.
//!
//! This module starts a failover ([`begin`]) and moves it on after an acknowledgement
//! ([`after_acks`]) and at loop 0's tick ([`progress`], from `master::cron`, for the
//! timeout); its state is `state::failover`; its end, and
//! `FAILOVER ABORT`, are the link's business (`replica::abort_failover`: one in
//! progress makes this server a master again).

use crate::shared::Shared;
use crate::state::failover::{Plan, IN_PROGRESS, WAIT_FOR_SYNC};

/// Why a FAILOVER command cannot start: its error reply, as Redis 7.0 words it.
pub type Refusal = &'static str;

/// FAILOVER [TO host port] [TIMEOUT ms] [FORCE], its arguments checked: starts waiting
/// for the sync, or says why not (in Redis's order of checks).
pub fn begin(shared: &Shared, to: Option<(String, u16)>, timeout_ms: i64, force: bool, now_ms: i64) -> Result<(), Refusal> {
    let f = &shared.failover;
    let mut plan = f.plan();
    if f.active() {
        return Err("ERR FAILOVER already in progress.");
    }
    if shared.replica.is_replica() {
        return Err("ERR FAILOVER is not valid when server is a replica.");
    }
    let replicas = shared.repl.info().replicas;
    if replicas.is_empty() {
        return Err("ERR FAILOVER requires connected replicas.");
    }
    if force && (timeout_ms == 0 || to.is_none()) {
        return Err("ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
    }
    if let Some((host, port)) = &to {
        let found = replicas.iter().find(|(ip, p, ..)| ip.eq_ignore_ascii_case(host) && p == port);
        match found {
            None => return Err("ERR FAILOVER target HOST and PORT is not a replica."),
            Some((_, _, state, ..)) if *state != super::stream::ReplicaState::Online => {
                return Err("ERR FAILOVER target replica is not online.")
            }
            Some(_) => crate::log::notice(&format!("FAILOVER requested to {host}:{port}.")),
        }
    } else {
        crate::log::notice("FAILOVER requested to any replica.");
    }
    // Under every loop's gate (FAILOVER's flags): nothing is fed between the two reads.
    // The GETACK goes out with the loop's flush after this batch, as any record.
    let before = shared.repl.offset();
    shared.repl.feed_keyless(&[b"REPLCONF", b"GETACK", b"*"]);
    let getack = Some((before, shared.repl.offset()));
    *plan = Plan { target: to, end_ms: if timeout_ms > 0 { now_ms.saturating_add(timeout_ms) } else { 0 }, force, getack };
    shared.pause.hold_for_failover(&shared.keyspace, true);
    f.set_state(WAIT_FOR_SYNC);
    Ok(())
}

/// After an event loop's batch (no gate held): a failover waiting for its sync moves
/// on if a replica acknowledged meanwhile (`REPLCONF ACK`), as Redis looks at it
/// before each sleep. One load when no acknowledgement arrived.
#[inline]
pub fn after_acks(shared: &Shared) {
    if shared.failover.take_ack() {
        progress(shared, shared.keyspace.now_ms());
    }
}

/// Moves a failover on (loop 0's tick, which holds no gate): hands over once the
/// target has the whole stream, or gives up (or forces) at the timeout.
///
/// The hand-over happens under every loop's gate, the sync checked again there: a
/// write that passed the pause check just before FAILOVER began runs under its loop's
/// gate, and its record must reach the target before the roles change (else the old
/// master, become a replica, would hold an acknowledged write the new master lacks).
/// Gates come before the plan's lock (FAILOVER itself takes the plan's lock holding no
/// gate).
pub fn progress(shared: &Shared, now_ms: i64) {
    let f = &shared.failover;
    if f.state() != WAIT_FOR_SYNC || decide(shared, now_ms).is_none() {
        return;
    }
    // (A shard lock this thread may keep goes first: a loop holding its gate may wait
    // for it.)
    store::release_kept();
    let _gates = shared.all_gates(false);
    let Some(step) = decide(shared, now_ms) else { return };
    let mut plan = f.plan();
    match step {
        Step::Abort => {
            drop(plan);
            super::replica::abort_failover(shared, "Replica never caught up before timeout");
        }
        Step::Force(host, port) => {
            crate::log::notice(&format!("FAILOVER to {host}:{port} time out exceeded, failing over."));
            drop(plan);
            hand_over(shared, &host, port);
        }
        Step::Synced(host, port) => {
            plan.target = Some((host.clone(), port));
            drop(plan);
            crate::log::notice(&format!("Failover target {host}:{port} is synced, failing over."));
            hand_over(shared, &host, port);
        }
    }
}

/// What a failover waiting for its sync does next.
enum Step {
    Abort,
    Force(String, u16),
    Synced(String, u16),
}

/// The next step of a failover waiting for its sync, if any now.
fn decide(shared: &Shared, now_ms: i64) -> Option<Step> {
    let f = &shared.failover;
    let plan: Plan = f.plan().clone();
    if f.state() != WAIT_FOR_SYNC {
        return None;
    }
    if plan.end_ms != 0 && now_ms >= plan.end_ms {
        return Some(match (plan.force, plan.target) {
            (true, Some((host, port))) => Step::Force(host, port),
            _ => Step::Abort,
        });
    }
    let info = shared.repl.info();
    // The whole stream: all of it, or all but the GETACK fed at the start (answered
    // with the offset before it) while nothing came after that.
    let has_all = |ack: u64| ack == info.offset || plan.getack.is_some_and(|(before, after)| info.offset == after && ack >= before);
    let (ip, port, ..) = info.replicas.iter().find(|(ip, port, state, ack, _)| {
        *state == super::stream::ReplicaState::Online
            && has_all(*ack)
            && plan.target.as_ref().is_none_or(|(h, p)| h.eq_ignore_ascii_case(ip) && p == port)
    })?;
    let (host, port) = plan.target.unwrap_or((ip.clone(), *port));
    Some(Step::Synced(host, port))
}

/// Becomes a replica of the target, asking it to take over (failover-in-progress).
fn hand_over(shared: &Shared, host: &str, port: u16) {
    let Some(me) = shared.me.get().and_then(std::sync::Weak::upgrade) else { return };
    shared.failover.set_state(IN_PROGRESS);
    shared.config.write().replicaof = Some((host.to_string(), port));
    super::replica::follow(&me, host, port);
}
