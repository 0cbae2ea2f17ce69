//! Blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP;
//! the registry's serve and timeout passes, which also serve stream reads
//! (`stream_serve.rs`) and WAIT.
//!
//! A command that finds no data registers its client as a waiter on each of its keys
//! (FIFO per key) and answers nothing; its connection stops executing further input.
//! After every successful write (and after a whole EXEC), the writer serves waiters
//! itself: the write marks the keys it names as ready ([`signal_ready`]; every queue
//! for a write to keys it does not name, [`signal_all`]), and for each ready key that
//! now holds data the pass runs the first waiter's pop, in the writer's thread and in
//! FIFO order, and posts the reply to the waiter's event loop, which unblocks the
//! connection and resumes its input. Serving on the writer's side means the element
//! cannot be taken by anyone else in between, and clients are served in the order they
//! blocked, as in Redis. Only ready keys are looked at (Redis's ready keys): with
//! thousands of clients blocked on other keys, trying every queue after each write made
//! writes 200 times slower (docs/benchmarks.md).
//!
//! Lost wake-ups are impossible because a waiter checks for data and registers under the
//! registry lock, and writers serve under the same lock after their write. Timeouts are
//! checked on each event loop's tick (`hz`), so they are precise to about 100 ms. The tick
//! also runs the serve pass over every queue ([`serve_all`], only while someone is
//! blocked), so a waiter whose wake-up went missing (a change no write named: a reload,
//! a replica's load) is still served within a tick. (Loaded test runs once saw a blocked
//! BLMOVE get no reply within 5 s, and twice a fresh server with two blocked pops stop
//! answering: a deadlock of two loops with the log on, a blocking command's read of its
//! keys' ordering stripes while it kept a shard lock against another loop's serve pass;
//! fixed in `Aof::settled`.)
//! Lock order: registry, then shards.

use std::sync::atomic::Ordering;

use resp::{encode, Proto};
use store::events::class;
use store::types::list::{End, List};
use store::types::zset::ZSet;

use super::args::{self, is};
use super::collections::{self as coll};
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use super::key_flags as kf;
use crate::shared::{Mail, Shared};
use crate::state::waiters::{Op, Registry, Waiter};

/// The non-blocking command that has the effect of a served pop (for the log).
fn effect(op: &Op, key: &[u8], popped: usize) -> Vec<Vec<u8>> {
    let word = |s: &str| s.as_bytes().to_vec();
    let side = |e: End| word(if e == End::Head { "LEFT" } else { "RIGHT" });
    match op {
        Op::Pop { end, count, .. } => {
            let mut v = vec![word(if *end == End::Head { "LPOP" } else { "RPOP" }), key.to_vec()];
            if count.is_some() {
                v.push(popped.to_string().into_bytes());
            }
            v
        }
        Op::Move { src, dst, from, to } => vec![word("LMOVE"), src.clone(), dst.clone(), side(*from), side(*to)],
        Op::ZPop { max, count, .. } => {
            let mut v = vec![word(if *max { "ZPOPMAX" } else { "ZPOPMIN" }), key.to_vec()];
            if count.is_some() {
                v.push(popped.to_string().into_bytes());
            }
            v
        }
        Op::Wait { .. } | Op::Pause | Op::Read(_) => Vec::new(),
    }
}

/// Tries the pop now: Ok(Some((reply, need, elements popped))) when served, Ok(None)
/// when no key has data. With the log on, the pop holds its keys' ordering stripes and logs its effect
/// as the plain pop it amounts to; `need` is the offset its reply must wait for. Its
/// keyspace events are published here, unless it runs inside EXEC (`in_exec`), which
/// publishes its queue's once the whole transaction is logged.
fn try_serve(shared: &Shared, client: u64, db: usize, now_ms: i64, proto: Proto, op: &Op, log: bool, in_exec: bool) -> Result<Option<(Vec<u8>, u64, usize)>, CommandError> {
    if matches!(op, Op::Wait { .. } | Op::Pause) {
        return Ok(None);
    }
    if let Op::Read(read) = op {
        return super::stream_serve::try_serve(shared, client, db, now_ms, proto, read, log, in_exec);
    }
    let ks = &shared.keyspace;
    let propagating = log && crate::propagate::active(shared);
    let stripes = &shared.stripes;
    let mut ordered = propagating.then(|| match op {
        Op::Move { src, dst, .. } => stripes.order_keys(ks, [src, dst]),
        Op::Pop { keys, .. } | Op::ZPop { keys, .. } => stripes.order_keys(ks, keys.iter()),
        // (WAIT, pauses and stream reads returned above; nothing to order.)
        Op::Wait { .. } | Op::Pause | Op::Read(_) => stripes.order_keys(ks, std::iter::empty::<&[u8]>()),
    });
    let at_once = (!log || shared.aof.is_none()).then_some((shared, client));
    let served = pop_now(ks, db, now_ms, proto, op, at_once)?;
    let end = match &served {
        Some((_, key, popped)) if propagating => crate::propagate::effect(shared, db, now_ms, &effect(op, key, *popped), ordered.as_ref()),
        _ => None,
    };
    // Its keyspace events, before the stripes go (see `notify.rs`).
    if !in_exec {
        crate::notify::flush(shared, end.unwrap_or(0), client);
    }
    let need = ordered.as_mut().map_or(0, |o| o.finish(end));
    drop(ordered);
    Ok(served.map(|(reply, _, popped)| (reply, need, popped)))
}

/// A served pop: (reply, key popped from, elements popped).
type Served = (Vec<u8>, Vec<u8>, usize);

/// The pop itself.
/// Pops for a waiter now; its events are published under the key's lock when
/// `at_once` (no log), see `notify::publish_under_lock`.
fn pop_now(
    ks: &store::Keyspace,
    db: usize,
    now_ms: i64,
    proto: Proto,
    op: &Op,
    at_once: Option<(&crate::shared::Shared, u64)>,
) -> Result<Option<Served>, CommandError> {
    let mut out = Vec::new();
    match op {
        Op::Wait { .. } | Op::Pause | Op::Read(_) => Ok(None),
        Op::Pop { keys, end, count } => {
            for key in keys {
                let (h, mut shard) = ks.lock_key(db, key);
                let Some(mut list) = coll::get::<List>(&mut shard, h, key, now_ms)? else { continue };
                let n = count.unwrap_or(1).min(list.len());
                let items: Vec<Box<[u8]>> = (0..n).filter_map(|_| list.pop(*end)).collect();
                drop(list);
                coll::queue_pop(ks.events(), db, &mut shard, h, key, now_ms, (class::LIST, super::lists::pop_event(*end)));
                crate::notify::publish_under_lock(at_once);
                encode::array_len(&mut out, 2);
                encode::bulk(&mut out, key);
                if count.is_some() {
                    encode::array_len(&mut out, items.len());
                }
                for item in &items {
                    encode::bulk(&mut out, item);
                }
                return Ok(Some((out, key.clone(), items.len())));
            }
            Ok(None)
        }
        Op::Move { src, dst, from, to } => {
            let Some(item) = super::lists::move_element(ks, db, now_ms, (src, dst), (*from, *to), at_once)? else {
                return Ok(None);
            };
            encode::bulk(&mut out, &item);
            Ok(Some((out, src.clone(), 1)))
        }
        Op::ZPop { keys, max, count } => {
            for key in keys {
                let (h, mut shard) = ks.lock_key(db, key);
                let Some(mut z) = coll::get::<ZSet>(&mut shard, h, key, now_ms)? else { continue };
                let mut items = Vec::new();
                for _ in 0..count.unwrap_or(1) {
                    let len = z.len();
                    let Some((s, m)) = (len > 0).then(|| z.at(if *max { len - 1 } else { 0 })).flatten().map(|(s, m)| (s, m.to_vec())) else { break };
                    z.remove(&m);
                    items.push((s, m));
                }
                drop(z);
                coll::queue_pop(ks.events(), db, &mut shard, h, key, now_ms, (class::ZSET, super::sorted_sets::pop_event(*max)));
                crate::notify::publish_under_lock(at_once);
                match count {
                    None => {
                        let (s, m) = &items[0];
                        encode::array_len(&mut out, 3);
                        encode::bulk(&mut out, key);
                        encode::bulk(&mut out, m);
                        encode::double(&mut out, *s, proto);
                    }
                    Some(_) => {
                        encode::array_len(&mut out, 2);
                        encode::bulk(&mut out, key);
                        encode::array_len(&mut out, items.len());
                        for (s, m) in &items {
                            encode::array_len(&mut out, 2);
                            encode::bulk(&mut out, m);
                            encode::double(&mut out, *s, proto);
                        }
                    }
                }
                return Ok(Some((out, key.clone(), items.len())));
            }
            Ok(None)
        }
    }
}

/// The waiters' registry. Its lock is held while shards are locked (a waiter is served
/// under it), so this thread first gives back a shard lock it keeps from lock
/// coalescing (store's `shard_lock.rs`): it must not wait for the registry holding one.
fn registry(shared: &Shared) -> parking_lot::MutexGuard<'_, Registry> {
    store::release_kept();
    shared.blocked.lock()
}

/// Runs a blocking command: serve now, answer as on timeout inside a transaction, or
/// register the client as a waiter.
pub(super) fn block(ctx: &mut Ctx<'_>, op: Op, timeout_ms: Option<i64>, null_in_multi: fn(&mut Vec<u8>, Proto)) -> Result<(), CommandError> {
    let shared = ctx.shared;
    let db = ctx.client.db;
    let proto = ctx.client.proto;
    // Propagated by try_serve, never by the dispatcher.
    ctx.propagate_nothing();
    let mut reg = registry(shared);
    if let Some((reply, need, popped)) = try_serve(shared, ctx.client.info.id, db, ctx.now_ms, proto, &op, !ctx.client.loading, ctx.client.in_exec)? {
        drop(reg);
        ctx.out.extend_from_slice(&reply);
        ctx.client.need = ctx.client.need.max(need);
        ctx.client.changes = Some(popped as u64);
        if shared.repl.feeding() {
            // The pop is this client's write (its record waits in this loop's part of
            // the stream): WAIT takes its offset once that part is published.
            ctx.client.repl_woff = super::client::WOFF_UNPUBLISHED;
        }
        return Ok(());
    }
    // A pop that did not happen (yet) changed nothing: its serve counts, as Redis's.
    let pops = matches!(op, Op::Pop { .. } | Op::Move { .. } | Op::ZPop { .. });
    ctx.client.changed_nothing |= pops;
    if ctx.client.in_exec {
        null_in_multi(ctx.out, proto);
        return Ok(());
    }
    let id = ctx.client.info.id;
    for key in op.keys() {
        reg.enqueue(db, key, id);
    }
    let deadline_ms = timeout_ms.map(|t| ctx.now_ms.saturating_add(t));
    reg.waiters.insert(id, Waiter { owner: ctx.client.info.owner.load(Ordering::Relaxed), db, proto, op, deadline_ms });
    shared.blocked_count.fetch_add(1, Ordering::SeqCst);
    ctx.client.blocked = true;
    Ok(())
}

/// Serves waiters whose keys now hold data (after a write or an EXEC). Returns the
/// elements popped, which the caller counts as changes (`rdb_changes_since_last_save`).
#[inline]
#[must_use]
pub fn serve(shared: &Shared, now_ms: i64) -> u64 {
    // Every successful write calls this; inline so that the common case (no client
    // blocked anywhere) is one load, not a call.
    if shared.blocked_count.load(Ordering::SeqCst) != 0 {
        serve_waiters(shared, now_ms, false)
    } else {
        0
    }
}

/// [`serve`] for every queue, whether a write named its key or not: the loops' tick
/// (the safety net for a change no write named, a load's or a reload's).
pub fn serve_all(shared: &Shared, now_ms: i64) -> u64 {
    if shared.blocked_count.load(Ordering::SeqCst) != 0 {
        serve_waiters(shared, now_ms, true)
    } else {
        0
    }
}

/// A write changed `keys` of database `db`: the clients waiting on them are served at
/// the next pass ([`serve`]), as Redis's signalKeyAsReady. With thousands of clients
/// blocked on other keys, a write costs a lookup per key it names, not a try per queue
/// (a pass over every queue made each SET 200 times slower with 2,000 BLPOPs waiting).
pub fn signal_ready<'a>(shared: &Shared, db: usize, keys: impl IntoIterator<Item = &'a [u8]>) {
    if shared.blocked_count.load(Ordering::SeqCst) == 0 {
        return;
    }
    // Only keys that may have waiters take the lock (most writes: none).
    let keys: smallvec::SmallVec<[&[u8]; 4]> = keys.into_iter().filter(|k| shared.waited.may_have(db, k)).collect();
    if keys.is_empty() {
        return;
    }
    let mut reg = registry(shared);
    for key in keys {
        reg.mark_ready(db, key);
    }
}

/// A write changed keys it does not name (FLUSHALL, SWAPDB, MOVE, COPY ... DB): the
/// next pass looks at every queue.
pub fn signal_all(shared: &Shared) {
    if shared.blocked_count.load(Ordering::SeqCst) != 0 {
        registry(shared).ready_all = true;
    }
}

/// How many times a pass goes round the keys its own serves made ready (a served
/// BLMOVE fills its destination, whose waiters may be served in turn); what is left
/// waits for the next pass.
const SERVE_ROUNDS: usize = 16;

fn serve_waiters(shared: &Shared, now_ms: i64, all: bool) -> u64 {
    let mut popped_in_all = 0;
    let mut reg = registry(shared);
    let mut keys: Vec<(usize, Vec<u8>)> = if all || std::mem::take(&mut reg.ready_all) {
        reg.ready.clear();
        reg.queues.keys().cloned().collect()
    } else {
        std::mem::take(&mut reg.ready)
    };
    for _ in 0..SERVE_ROUNDS {
        if keys.is_empty() {
            break;
        }
        popped_in_all += serve_queues(shared, &mut reg, now_ms, keys);
        keys = std::mem::take(&mut reg.ready);
    }
    reg.ready.extend(keys);
    popped_in_all
}

/// One round of a serve pass over the queues of `keys`.
fn serve_queues(shared: &Shared, reg: &mut Registry, now_ms: i64, keys: Vec<(usize, Vec<u8>)>) -> u64 {
    let mut popped_in_all = 0;
    for qk in keys {
        // Waiters in the order they blocked. A pop served takes the data, so the first
        // that finds none stops the queue; stream reads each wait for their own ID.
        let queue: Vec<u64> = reg.queues.get(&qk).map(|q| q.iter().copied().collect()).unwrap_or_default();
        for id in queue {
            let Some(w) = reg.waiters.get(&id) else { continue };
            // Redis 7.0 counts the pops of BLMPOP, BZPOPMIN/MAX and BZMPOP served
            // later as changes, not those of BLPOP, BRPOP, BLMOVE and BRPOPLPUSH.
            let counted = !matches!(w.op, Op::Pop { count: None, .. } | Op::Move { .. } | Op::Read(_));
            // A read changes no key for WATCH (a group read's delivery neither, as Redis
            // signals no key for it).
            let reads_only = matches!(&w.op, Op::Read(_));
            match try_serve(shared, id, w.db, now_ms, w.proto, &w.op, true, false) {
                Ok(Some((reply, need, popped))) => {
                    if counted {
                        popped_in_all += popped as u64;
                    }
                    if let Some(w) = reg.remove(id) {
                        // The served pop changed its keys: WATCH sees it, as Redis's
                        // signalModifiedKey (BLMOVE's destination included).
                        if !reads_only {
                            for key in w.op.keys() {
                                shared.touch(w.db, key);
                            }
                        }
                        if let Op::Move { dst, .. } = &w.op {
                            shared.touch(w.db, dst);
                            // Its destination got an element: its own waiters next.
                            reg.mark_ready(w.db, dst);
                        }
                        shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
                        // The pop is the served client's write: its WAIT must count the
                        // replicas that have it. Its record waits in this loop's part of
                        // the stream; published now, the stream's offset covers it.
                        let repl_woff = if shared.repl.feeding() && !reads_only {
                            shared.repl.publish_mine();
                            shared.repl.offset_now()
                        } else {
                            0
                        };
                        shared.post_mail(w.owner, Mail { repl_woff, ..Mail::unblocking(id, bytes::Bytes::from(reply)).after_log(need) });
                    }
                }
                Ok(None) if matches!(w.op, Op::Read(_)) => continue,
                // A key of another type than the waiter's does not wake it (Redis
                // serves a waiter only from a key of its type).
                Ok(None) => break,
                Err(_) if !error_ends_wait(shared, w, now_ms) => break,
                Err(e) => {
                    // A BLMOVE / BRPOPLPUSH whose destination now holds another type:
                    // as Redis, the waiter gets the error and is unblocked, the
                    // element stays in the source for the next waiter (it was left
                    // waiting forever, issue 26). A group read whose key or group
                    // went gets its error too.
                    if let Some(w) = reg.remove(id) {
                        shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
                        let mut reply = Vec::new();
                        super::write_error(&mut reply, &e.to_string());
                        shared.post_mail(w.owner, Mail::unblocking(id, bytes::Bytes::from(reply)));
                    }
                }
            }
        }
    }
    popped_in_all
}

/// Whether a waiter's failed serve ends its wait with the error: a group read (its key
/// or group went), or a BLMOVE / BRPOPLPUSH whose source holds a list (so the
/// destination's type refused the move).
fn error_ends_wait(shared: &Shared, w: &Waiter, now_ms: i64) -> bool {
    if matches!(&w.op, Op::Read(r) if r.group.is_some()) {
        return true;
    }
    let Op::Move { src, .. } = &w.op else { return false };
    let (h, mut shard) = shared.keyspace.lock_key(w.db, src);
    matches!(coll::check::<List>(&mut shard, h, src, now_ms), Ok(true))
}

/// Times out this loop's waiters whose deadline passed: each gets its null reply.
pub fn expire(shared: &Shared, owner: usize, now_ms: i64) {
    if shared.blocked_count.load(Ordering::SeqCst) == 0 {
        return;
    }
    let mut reg = registry(shared);
    let due: Vec<u64> = reg
        .waiters
        .iter()
        .filter(|(_, w)| w.owner == owner && w.deadline_ms.is_some_and(|d| d <= now_ms))
        .map(|(id, _)| *id)
        .collect();
    for id in due {
        if let Some(w) = reg.remove(id) {
            shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
            shared.post_mail(owner, Mail::unblocking(id, bytes::Bytes::from(timeout_reply(shared, &w))));
        }
    }
}

/// What a waiter gets when its time is up: a null (pops), or the replicas that
/// acknowledged (WAIT).
fn timeout_reply(shared: &Shared, w: &Waiter) -> Vec<u8> {
    let mut out = Vec::new();
    match w.op {
        Op::Wait { offset, .. } => encode::integer(&mut out, shared.repl.acked(offset).1 as i64),
        _ => encode::null_array(&mut out, w.proto),
    }
    out
}

/// CLIENT UNBLOCK: ends client `id`'s wait now, with its timeout reply or, when
/// `error`, Redis's UNBLOCKED error. False when that client is not blocked (a command
/// postponed by CLIENT PAUSE waits for the pause's end).
pub fn unblock(shared: &Shared, id: u64, error: bool) -> bool {
    if shared.blocked_count.load(Ordering::SeqCst) == 0 {
        return false;
    }
    let mut reg = registry(shared);
    if reg.waiters.get(&id).is_none_or(|w| matches!(w.op, Op::Pause)) {
        return false;
    }
    let Some(w) = reg.remove(id) else { return false };
    drop(reg);
    shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
    let reply = if error { b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n".to_vec() } else { timeout_reply(shared, &w) };
    shared.post_mail(w.owner, Mail::unblocking(id, bytes::Bytes::from(reply)));
    true
}

/// Postpones the client's current command until CLIENT PAUSE ends (`pause.rs`): the
/// client is blocked without a reply, and its command stays in its input. False, with
/// nothing done, when the pause ended meanwhile (checked under the registry lock, which
/// [`resume_postponed`] takes after the pause is lifted, so no client is left behind).
pub fn postpone(ctx: &mut Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> bool {
    let shared = ctx.shared;
    let mut reg = registry(shared);
    if !super::pause::postpones(ctx, spec, args) {
        return false;
    }
    let id = ctx.client.info.id;
    let owner = ctx.client.info.owner.load(Ordering::Relaxed);
    reg.waiters.insert(id, Waiter { owner, db: ctx.client.db, proto: ctx.client.proto, op: Op::Pause, deadline_ms: None });
    reg.postponed.push_back(id);
    shared.blocked_count.fetch_add(1, Ordering::SeqCst);
    ctx.client.blocked = true;
    ctx.client.postponed = true;
    true
}

/// Wakes every postponed client, in the order they were postponed: each runs its
/// command again (`net::apply_mail`).
pub fn resume_postponed(shared: &Shared) {
    if shared.blocked_count.load(Ordering::SeqCst) == 0 {
        return;
    }
    let mut reg = registry(shared);
    while let Some(id) = reg.postponed.pop_front() {
        if let Some(w) = reg.waiters.remove(&id) {
            shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
            shared.post_mail(w.owner, Mail::unblocking(id, bytes::Bytes::new()));
        }
    }
}

/// Forgets a client's wait (disconnect, CLIENT KILL).
pub fn forget(shared: &Shared, client_id: u64) {
    if shared.blocked_count.load(Ordering::SeqCst) == 0 {
        return;
    }
    if registry(shared).remove(client_id).is_some() {
        shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Parses a timeout in seconds (0 = forever) into milliseconds.
fn timeout(arg: &[u8]) -> Result<Option<i64>, CommandError> {
    let t = store::types::string::parse_f64(arg).ok_or(CommandError::msg("ERR timeout is not a float or out of range"))?;
    if t < 0.0 || !t.is_finite() {
        return Err(CommandError::msg("ERR timeout is negative"));
    }
    let ms = (t * 1000.0).ceil();
    Ok((ms > 0.0).then_some(ms.min(i64::MAX as f64 / 2.0) as i64))
}


/// WAIT numreplicas timeout — how many online replicas acknowledged the replication
/// stream up to this client's last write, as Redis: at once when that is `numreplicas`
/// or more (or inside EXEC); else the replicas are asked for an acknowledgement
/// (`REPLCONF GETACK *` in the stream) and the client waits until enough arrive
/// (`serve_waits`) or `timeout` milliseconds pass (0: no limit), then gets the count.
fn wait(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let replicas = super::args::int(a[1])?;
    let t = super::args::int(a[2]).map_err(|_| CommandError::msg("ERR timeout is not an integer or out of range"))?;
    if t < 0 {
        return Err(CommandError::msg("ERR timeout is negative"));
    }
    if ctx.shared.replica.is_replica() {
        return Err(CommandError::msg("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."));
    }
    if ctx.client.repl_woff == super::client::WOFF_UNPUBLISHED {
        // The client's last write may wait in this loop's part of the stream.
        ctx.shared.repl.publish_mine();
        ctx.client.repl_woff = ctx.shared.repl.offset_now();
    }
    let offset = ctx.client.repl_woff;
    let acked = ctx.shared.repl.acked(offset).1;
    if acked as i64 >= replicas || ctx.client.in_exec {
        encode::integer(ctx.out, acked as i64);
        return Ok(());
    }
    let wanted = usize::try_from(replicas).unwrap_or(usize::MAX);
    block(ctx, Op::Wait { offset, replicas: wanted }, (t > 0).then_some(t), |out, _| encode::integer(out, 0))?;
    crate::replication::master::request_acks(ctx.shared);
    // An acknowledgement that arrived between the count and the registration.
    serve_waits(ctx.shared);
    Ok(())
}

/// Serves WAITs that enough replicas acknowledged (after each REPLCONF ACK).
pub fn serve_waits(shared: &Shared) {
    if shared.blocked_count.load(Ordering::SeqCst) == 0 {
        return;
    }
    let mut reg = registry(shared);
    let ready: Vec<(u64, usize, usize)> = reg
        .waiters
        .iter()
        .filter_map(|(id, w)| match w.op {
            Op::Wait { offset, replicas } => {
                let acked = shared.repl.acked(offset).1;
                (acked >= replicas).then_some((*id, w.owner, acked))
            }
            _ => None,
        })
        .collect();
    for (id, owner, acked) in ready {
        if reg.remove(id).is_some() {
            shared.blocked_count.fetch_sub(1, Ordering::SeqCst);
            let mut out = Vec::new();
            encode::integer(&mut out, acked as i64);
            shared.post_mail(owner, Mail::unblocking(id, bytes::Bytes::from(out)));
        }
    }
}

fn keys_of(a: &[&[u8]]) -> Vec<Vec<u8>> {
    a.iter().map(|k| k.to_vec()).collect()
}

/// BLPOP key [key ...] timeout — [key, element] or nil after the timeout.
fn blpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = timeout(a[a.len() - 1])?;
    block(ctx, Op::Pop { keys: keys_of(&a[1..a.len() - 1]), end: End::Head, count: None }, t, encode::null_array)
}

/// BRPOP key [key ...] timeout — [key, element] or nil after the timeout.
fn brpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = timeout(a[a.len() - 1])?;
    block(ctx, Op::Pop { keys: keys_of(&a[1..a.len() - 1]), end: End::Tail, count: None }, t, encode::null_array)
}

/// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout — the element or nil.
fn blmove(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (from, to) = (args::list_end(a[3])?, args::list_end(a[4])?);
    let t = timeout(a[5])?;
    block(ctx, Op::Move { src: a[1].to_vec(), dst: a[2].to_vec(), from, to }, t, encode::null)
}

/// BRPOPLPUSH source destination timeout — the element or nil.
fn brpoplpush(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = timeout(a[3])?;
    block(ctx, Op::Move { src: a[1].to_vec(), dst: a[2].to_vec(), from: End::Tail, to: End::Head }, t, encode::null)
}

/// Parses `timeout numkeys key ... WHERE [COUNT n]` of BLMPOP/BZMPOP.
fn mpop_args<'a>(a: &[&'a [u8]], which: &[&str; 2]) -> Result<(Option<i64>, Vec<Vec<u8>>, bool, usize), CommandError> {
    let t = timeout(a[1])?;
    let (keys, i) = super::sets::numkeys(&a[1..], CommandError::Syntax)?;
    let Some(w) = a.get(i + 1) else { return Err(CommandError::Syntax) };
    let first = if is(w, which[0]) {
        true
    } else if is(w, which[1]) {
        false
    } else {
        return Err(CommandError::Syntax);
    };
    let count = args::mpop_count(&a[i + 2..])?;
    Ok((t, keys_of(keys), first, count))
}

/// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]
fn blmpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (t, keys, left, count) = mpop_args(a, &["left", "right"])?;
    let end = if left { End::Head } else { End::Tail };
    block(ctx, Op::Pop { keys, end, count: Some(count) }, t, encode::null_array)
}

/// BZPOPMIN key [key ...] timeout — [key, member, score] or nil.
fn bzpopmin(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = timeout(a[a.len() - 1])?;
    block(ctx, Op::ZPop { keys: keys_of(&a[1..a.len() - 1]), max: false, count: None }, t, encode::null_array)
}

/// BZPOPMAX key [key ...] timeout — [key, member, score] or nil.
fn bzpopmax(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = timeout(a[a.len() - 1])?;
    block(ctx, Op::ZPop { keys: keys_of(&a[1..a.len() - 1]), max: true, count: None }, t, encode::null_array)
}

/// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]
fn bzmpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (t, keys, min, count) = mpop_args(a, &["min", "max"])?;
    block(ctx, Op::ZPop { keys, max: !min, count: Some(count) }, t, encode::null_array)
}

const LIST: &[&str] = &["list", "blocking"];
const ZSET: &[&str] = &["sortedset", "blocking"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("blpop", -3, WRITE | NOSCRIPT | BLOCKING, (1, -2, 1), LIST, "list", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blpop).since("2.0.0").args(ARGS_BLPOP).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -2, key_step: 1, limit: 0 } }]),
    spec("brpop", -3, WRITE | NOSCRIPT | BLOCKING, (1, -2, 1), LIST, "list", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", brpop).since("2.0.0").args(ARGS_BRPOP).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -2, key_step: 1, limit: 0 } }]),
    spec("blmove", 6, WRITE | DENYOOM | NOSCRIPT | BLOCKING, (1, 2, 1), LIST, "list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", blmove).since("6.2.0").args(ARGS_BLMOVE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("brpoplpush", 4, WRITE | DENYOOM | NOSCRIPT | BLOCKING, (1, 2, 1), LIST, "list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", brpoplpush).since("2.2.0").args(ARGS_BRPOPLPUSH).complexity("O(1)").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("blmpop", -5, WRITE | BLOCKING | WATCH_CHANGED_ONLY, (0, 0, 0), LIST, "list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", blmpop).since("7.0.0").args(ARGS_BLMPOP).complexity("O(N+M)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 2),
    spec("bzpopmin", -3, WRITE | NOSCRIPT | FAST | BLOCKING, (1, -2, 1), ZSET, "sorted-set", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", bzpopmin).since("5.0.0").args(ARGS_BZPOPMIN).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -2, key_step: 1, limit: 0 } }]),
    spec("bzpopmax", -3, WRITE | NOSCRIPT | FAST | BLOCKING, (1, -2, 1), ZSET, "sorted-set", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise. Deletes the sorted set if the last element was popped.", bzpopmax).since("5.0.0").args(ARGS_BZPOPMAX).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -2, key_step: 1, limit: 0 } }]),
    spec("wait", 3, NOSCRIPT, (0, 0, 0), &["connection"], "generic", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", wait).since("3.0.0").args(ARGS_WAIT).complexity("O(1)").tips(&["request_policy:all_shards", "response_policy:agg_min"]),
    spec("bzmpop", -5, WRITE | BLOCKING | WATCH_CHANGED_ONLY, (0, 0, 0), ZSET, "sorted-set", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", bzmpop).since("7.0.0").args(ARGS_BZMPOP).complexity("O(K) or O(M*log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 2),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_BLPOP: &[Arg] = &[arg("key", Key).key_spec(0).multiple(), arg("timeout", Double)];
    pub const ARGS_BRPOP: &[Arg] = &[arg("key", Key).key_spec(0).multiple(), arg("timeout", Double)];
    pub const ARGS_BLMOVE: &[Arg] = &[arg("source", Key).key_spec(0), arg("destination", Key).key_spec(1), arg("wherefrom", OneOf).args(&[arg("left", PureToken).token("LEFT"), arg("right", PureToken).token("RIGHT")]), arg("whereto", OneOf).args(&[arg("left", PureToken).token("LEFT"), arg("right", PureToken).token("RIGHT")]), arg("timeout", Double)];
    pub const ARGS_BRPOPLPUSH: &[Arg] = &[arg("source", Key).key_spec(0), arg("destination", Key).key_spec(1), arg("timeout", Double)];
    pub const ARGS_BLMPOP: &[Arg] = &[arg("timeout", Double), arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("where", OneOf).args(&[arg("left", PureToken).token("LEFT"), arg("right", PureToken).token("RIGHT")]), arg("count", Integer).token("COUNT").optional()];
    pub const ARGS_BZPOPMIN: &[Arg] = &[arg("key", Key).key_spec(0).multiple(), arg("timeout", Double)];
    pub const ARGS_BZPOPMAX: &[Arg] = &[arg("key", Key).key_spec(0).multiple(), arg("timeout", Double)];
    pub const ARGS_WAIT: &[Arg] = &[arg("numreplicas", Integer), arg("timeout", Integer)];
    pub const ARGS_BZMPOP: &[Arg] = &[arg("timeout", Double), arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("where", OneOf).args(&[arg("min", PureToken).token("MIN"), arg("max", PureToken).token("MAX")]), arg("count", Integer).token("COUNT").optional()];
}
use docs_args::*;
