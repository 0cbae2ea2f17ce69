//! Serving blocked stream reads (XREAD ... BLOCK and XREADGROUP ... BLOCK, which
//! `streams.rs` puts on the waiters' registry), for the serve pass of `blocking.rs`.
//!
//! A read that finds nothing waits as `Op::Read`, with the IDs it reads after (`$`
//! made the stream's last ID when it blocked; `>` the group's last ID when served). The
//! serve pass that follows every write serves it once a key has an entry after its ID:
//! a plain read is served to every waiter (nothing is consumed) with what the log
//! already holds (`need`); a group read delivers as XREADGROUP does, and is a write of
//! its own (ordered, propagated as XCLAIM records). A group read whose key went, or
//! changed type, gets `-UNBLOCKED the stream key no longer exists`, one whose group
//! went `-NOGROUP ...`, as in Redis. Unlike Redis, a plain read is not woken by an
//! XADD whose entry was trimmed at once (it has nothing to read): it goes on waiting.

use resp::Proto;
use store::events::class;
use store::types::stream::{Stream, StreamId};

use super::collections as coll;
use super::stream_reply::{reply_range, reply_read};
use super::CommandError;
use crate::shared::Shared;
use crate::state::waiters::{GroupRead, ReadOp};

/// Serves a blocked read now, if it can be: Ok(Some((reply, need, records))).
#[allow(clippy::too_many_arguments)]
pub(crate) fn try_serve(shared: &Shared, client: u64, db: usize, now_ms: i64, proto: Proto, read: &ReadOp, log: bool, in_exec: bool) -> Result<Option<(Vec<u8>, u64, usize)>, CommandError> {
    match &read.group {
        None => Ok(serve_plain(shared, db, now_ms, proto, read, log)),
        Some(g) => serve_group(shared, client, db, now_ms, proto, read, g, log, in_exec),
    }
}

fn serve_plain(shared: &Shared, db: usize, now_ms: i64, proto: Proto, read: &ReadOp, log: bool) -> Option<(Vec<u8>, u64, usize)> {
    let ks = &shared.keyspace;
    let mut served: Vec<(&[u8], Vec<u8>)> = Vec::new();
    {
        let mut locked = ks.lock_keys(db, &read.keys);
        for (k, key) in read.keys.iter().enumerate() {
            let (h, shard) = locked.shard_for(db, key);
            let Ok(Some(s)) = coll::read::<Stream>(shard, h, key, now_ms) else { continue };
            // Nothing was added since it blocked: one comparison, no entry read (the
            // serve pass follows every write while anyone waits).
            if s.last_id <= read.after[k] {
                continue;
            }
            let Some(start) = read.after[k].next() else { continue };
            let mut body = Vec::new();
            if reply_range(&mut body, &s, start, StreamId::MAX, read.count, false) > 0 {
                served.push((key, body));
            }
        }
    }
    if served.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    reply_read(&mut out, proto, &served);
    // What it read may have been written a moment ago: its reply waits until the log
    // holds that.
    let need = if log && shared.aof.is_some() { shared.stripes.need_for_keys(ks, read.keys.iter()) } else { 0 };
    Some((out, need, 0))
}

#[allow(clippy::too_many_arguments)]
fn serve_group(shared: &Shared, client: u64, db: usize, now_ms: i64, proto: Proto, read: &ReadOp, g: &GroupRead, log: bool, in_exec: bool) -> Result<Option<(Vec<u8>, u64, usize)>, CommandError> {
    let ks = &shared.keyspace;
    let propagating = log && crate::propagate::active(shared);
    let mut ordered = propagating.then(|| shared.stripes.order_keys(ks, read.keys.iter()));
    let at_once = (!log || shared.aof.is_none()).then_some((shared, client));
    let mut served: Vec<(&[u8], Vec<u8>)> = Vec::new();
    let mut records = Vec::new();
    {
        let mut locked = ks.lock_keys(db, &read.keys);
        for key in &read.keys {
            let (h, shard) = locked.shard_for(db, key);
            match coll::read::<Stream>(shard, h, key, now_ms) {
                Ok(Some(s)) if s.groups.contains_key(&g.group) => {}
                Ok(Some(_)) => return Err(CommandError::msg("NOGROUP the consumer group this client was blocked on no longer exists")),
                _ => return Err(CommandError::msg("UNBLOCKED the stream key no longer exists")),
            }
        }
        for key in &read.keys {
            let (h, shard) = locked.shard_for(db, key);
            let Some(mut s) = coll::get::<Stream>(shard, h, key, now_ms)? else { continue };
            let last = s.groups.get(&g.group).map(|gr| gr.last_id).unwrap_or_default();
            if s.last_id <= last || !s.has_entries_after(last) {
                continue;
            }
            let mut body = Vec::new();
            let d = super::stream_deliver::deliver_new(&mut s, key, &g.group, &g.consumer, read.count, g.noack, now_ms, &mut body);
            drop(s);
            if d.consumer_created {
                store::events::push(ks.events(), class::STREAM | class::UNSIGNALED, "xgroup-createconsumer", db, key);
                crate::notify::publish_under_lock(at_once);
            }
            records.extend(d.records);
            served.push((key, body));
        }
    }
    if served.is_empty() {
        return Ok(None);
    }
    let mut end = None;
    if propagating {
        for rec in &records {
            end = crate::propagate::effect(shared, db, now_ms, rec, ordered.as_ref()).or(end);
        }
    }
    if !in_exec {
        crate::notify::flush(shared, end.unwrap_or(0), client);
    }
    let need = ordered.as_mut().map_or(0, |o| o.finish(end));
    drop(ordered);
    let mut out = Vec::new();
    reply_read(&mut out, proto, &served);
    Ok(Some((out, need, records.len())))
}
