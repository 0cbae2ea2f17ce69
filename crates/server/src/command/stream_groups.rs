//! Consumer groups: XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM and XAUTOCLAIM, as
//! Redis 7.0.
//!
//! What the log and the replicas get is Redis's: a delivery of XREADGROUP, XCLAIM or
//! XAUTOCLAIM as an idempotent `XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n
//! FORCE JUSTID LASTID id` per entry (also for a pending entry found deleted, which it
//! drops); XREADGROUP's deliveries then the group's position as `XGROUP SETID ...
//! ENTRIESREAD n`, a NOACK read that record alone (after `XGROUP CREATECONSUMER` for a
//! consumer the read created). Redis 7.0.15 sends the SETID record after NOACK reads
//! only, so that its replicas can lose a group's read counter (`entries-read` nil where
//! the master has a number); Basalt's replicas, Redis's included, keep it. Likewise a
//! consumer created by a history read is propagated (`XGROUP CREATECONSUMER`), where
//! Redis 7.0.15 propagates it only with NOACK.
//! Several records of one call are appended together, not wrapped in MULTI/EXEC as
//! Redis wraps them.

use resp::encode;
use store::events::class;
use store::types::stream::{Consumer, Group, Pending, Stream, StreamId};

use super::args::{self, is};
use super::collections as coll;
use super::flags::*;
use super::key_flags as kf;
use super::keyspace_events::notify;
use super::stream_deliver::{consumer_of, createconsumer_record, deliver_new, setid_record, xclaim_record};
use super::stream_reply::{reply_entry, reply_id, reply_read};
use super::streams::{block_read, changed_nothing, parse_id, parse_interval_id, parse_read, parse_strict_id, STREAMS_KEYS};
use super::{container, spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Movable, Writes};
use crate::propagate::Record;

/// The class of the events of group changes: published as stream events, but not
/// changes for client-side caching (Redis notifies them without signalModifiedKey).
const UNSIGNALED: u32 = class::STREAM | class::UNSIGNALED;

/// Redis's text for a group missing in XPENDING, XCLAIM, XAUTOCLAIM.
fn no_group(key: &[u8], group: &[u8]) -> CommandError {
    CommandError::Owned(format!("NOGROUP No such key '{}' or consumer group '{}'", String::from_utf8_lossy(key), String::from_utf8_lossy(group)))
}

/// Redis's text for a group missing in XGROUP and XINFO CONSUMERS.
pub(super) fn no_such_group(key: &[u8], group: &[u8]) -> CommandError {
    CommandError::Owned(format!("NOGROUP No such consumer group '{}' for key name '{}'", String::from_utf8_lossy(group), String::from_utf8_lossy(key)))
}

/// Replies with the consumer's pending entries after `after` (its history), at most
/// `count`, as Redis's `streamReplyWithRangeFromConsumerPEL`: each one delivered again
/// (time and count updated), a deleted one as its ID and a null.
#[allow(clippy::too_many_arguments)]
fn deliver_history(s: &mut Stream, group_name: &[u8], consumer: &[u8], after: StreamId, count: usize, now_ms: i64, proto: resp::Proto, out: &mut Vec<u8>) -> bool {
    let mut created = false;
    let Some(group) = s.groups.get_mut(group_name) else { return false };
    let c = consumer_of(group, consumer, now_ms, &mut created);
    let limit = if count == 0 { usize::MAX } else { count };
    let ids: Vec<StreamId> = match after.next() {
        Some(start) => c.pel.range(start..).take(limit).copied().collect(),
        None => Vec::new(),
    };
    // Delivered again, unless deleted (then only its ID goes out).
    let live: Vec<bool> = ids.iter().map(|id| s.contains(*id)).collect();
    let group = s.groups.get_mut(group_name).expect("group");
    for (id, _) in ids.iter().zip(&live).filter(|(_, live)| **live) {
        if let Some(p) = group.pel.get_mut(id) {
            p.delivery_time = now_ms;
            p.delivery_count += 1;
        }
    }
    encode::array_len(out, ids.len());
    for id in ids {
        match s.get(id) {
            Some(e) => reply_entry(out, &e),
            None => {
                encode::array_len(out, 2);
                reply_id(out, id);
                encode::null_array(out, proto);
            }
        }
    }
    created
}

/// XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [NOACK] STREAMS key [key
/// ...] id [id ...]
fn xreadgroup(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let r = parse_read(ctx, a, true)?;
    let (group_name, consumer) = r.group.ok_or(CommandError::Syntax)?;
    let keys = &a[r.streams_at..r.streams_at + r.streams];
    let db = ctx.client.db;
    let ks = ctx.ks();
    let shared = ctx.shared;
    // As a blocking pop, it orders and propagates itself (the dispatcher does not for
    // a blocking command): its stripes before its keys' locks.
    let propagating = ctx.client.propagates(shared) && crate::propagate::active(shared);
    let mut ordered = propagating.then(|| shared.stripes.order_keys(ks, keys.iter()));
    let mut locked = ks.lock_keys(db, keys);
    // Each key's type and group are checked before its ID is read, as Redis does.
    let mut after: Vec<Option<StreamId>> = Vec::with_capacity(keys.len());
    for (k, key) in keys.iter().enumerate() {
        let (h, shard) = locked.shard_for(db, key);
        let has_group = coll::read_key::<Stream>(ctx, shard, h, key)?.is_some_and(|s| s.groups.contains_key(group_name));
        if !has_group {
            return Err(CommandError::Owned(format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
                String::from_utf8_lossy(key),
                String::from_utf8_lossy(group_name)
            )));
        }
        let arg = a[r.streams_at + r.streams + k];
        after.push(if arg == b"$" {
            return Err(CommandError::msg("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."));
        } else if arg == b">" {
            None
        } else {
            Some(parse_strict_id(arg)?)
        });
    }
    let mut served: Vec<(&[u8], Vec<u8>)> = Vec::new();
    let mut records = Vec::new();
    let mut events: Vec<(&'static str, &[u8])> = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        let (h, shard) = locked.shard_for(db, key);
        let Some(mut s) = coll::get_key::<Stream>(ctx, shard, h, key)? else { continue };
        // Redis looks each key up again here, a second keyspace hit.
        ctx.count_lookup(true);
        let mut body = Vec::new();
        match after[k] {
            Some(id) => {
                if deliver_history(&mut s, group_name, consumer, id, r.count, ctx.now_ms, ctx.client.proto, &mut body) {
                    events.push(("xgroup-createconsumer", key));
                    // (Redis 7.0.15 propagates it only with NOACK: its log and replicas
                    // then lack the consumer.)
                    records.push(createconsumer_record(key, group_name, consumer));
                }
            }
            None => {
                let last = s.groups.get(group_name).map(|g| g.last_id).unwrap_or_default();
                if !s.has_entries_after(last) {
                    continue;
                }
                let d = deliver_new(&mut s, key, group_name, consumer, r.count, r.noack, ctx.now_ms, &mut body);
                if d.consumer_created {
                    events.push(("xgroup-createconsumer", key));
                }
                records.extend(d.records);
            }
        }
        served.push((key, body));
    }
    for (event, key) in events {
        notify(ctx, UNSIGNALED, event, key);
    }
    drop(locked);
    if served.is_empty() {
        ctx.client.changed_nothing = true;
        // Nothing to propagate: the stripes go before the wait (whose serving takes
        // them again).
        if let Some(mut o) = ordered.take() {
            o.finish(None);
        }
        if let Some(timeout) = r.block_ms {
            let ids = after.iter().map(|a| a.unwrap_or(StreamId::MAX)).collect();
            return block_read(ctx, a, &r, ids, timeout);
        }
    }
    let mut end = None;
    if propagating {
        for rec in &records {
            end = crate::propagate::effect(shared, db, ctx.now_ms, rec, ordered.as_ref()).or(end);
        }
    }
    let need = ordered.as_mut().map_or(0, |o| o.finish(end));
    drop(ordered);
    ctx.client.need = ctx.client.need.max(need);
    ctx.propagate_nothing();
    if !records.is_empty() && shared.repl.feeding() {
        // Its records wait in this loop's part of the stream (see `blocking::block`).
        ctx.client.repl_woff = super::client::WOFF_UNPUBLISHED;
    }
    reply_read(ctx.out, ctx.client.proto, &served);
    Ok(())
}

/// XACK key group id [id ...] — the number of pending entries acknowledged.
fn xack(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let found = coll::read_key::<Stream>(ctx, &mut shard, h, a[1])?.is_some_and(|s| s.groups.contains_key(a[2]));
    if !found {
        drop(shard);
        changed_nothing(ctx);
        return Ok(());
    }
    let ids = a[3..].iter().map(|x| parse_strict_id(x)).collect::<Result<Vec<_>, _>>()?;
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[1])?.ok_or(CommandError::NoSuchKey)?;
    let group = s.groups.get_mut(a[2]).ok_or(CommandError::NoSuchKey)?;
    let acked = ids.into_iter().filter(|id| group.remove_pending(*id).is_some()).count() as u64;
    drop(s);
    drop(shard);
    if acked == 0 {
        ctx.client.changed_nothing = true;
    } else {
        ctx.client.changes = Some(acked);
    }
    encode::integer(ctx.out, acked as i64);
    Ok(())
}

/// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
fn xpending(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let summary = a.len() == 3;
    if a.len() != 3 && !(6..=9).contains(&a.len()) {
        return Err(CommandError::Syntax);
    }
    let mut range = None;
    let mut min_idle = 0i64;
    let mut consumer: Option<&[u8]> = None;
    if a.len() >= 6 {
        let mut at = 3;
        if is(a[3], "idle") {
            min_idle = args::int(a[4])?;
            if a.len() < 8 {
                return Err(CommandError::Syntax);
            }
            at += 2;
        }
        let count = args::int(a[at + 2])?.max(0);
        let (mut start, start_ex) = parse_interval_id(a[at], 0)?;
        if start_ex {
            start = start.next().ok_or(CommandError::msg("ERR invalid start ID for the interval"))?;
        }
        let (mut end, end_ex) = parse_interval_id(a[at + 1], u64::MAX)?;
        if end_ex {
            end = end.prev().ok_or(CommandError::msg("ERR invalid end ID for the interval"))?;
        }
        consumer = a.get(at + 3).copied();
        range = Some((start, end, usize::try_from(count).unwrap_or(usize::MAX)));
    }
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let s = coll::read_key::<Stream>(ctx, &mut shard, h, a[1])?;
    let Some(group) = s.as_ref().and_then(|s| s.groups.get(a[2])) else {
        return Err(no_group(a[1], a[2]));
    };
    let out = &mut *ctx.out;
    if summary {
        encode::array_len(out, 4);
        encode::integer(out, group.pel.len() as i64);
        match (group.pel.keys().next(), group.pel.keys().next_back()) {
            (Some(first), Some(last)) => {
                reply_id(out, *first);
                reply_id(out, *last);
                let owners: Vec<(&Vec<u8>, usize)> = group.consumers.iter().filter(|(_, c)| !c.pel.is_empty()).map(|(n, c)| (n, c.pel.len())).collect();
                encode::array_len(out, owners.len());
                for (name, n) in owners {
                    encode::array_len(out, 2);
                    encode::bulk(out, name);
                    encode::bulk_integer(out, n as i64);
                }
            }
            _ => {
                encode::null(out, ctx.client.proto);
                encode::null(out, ctx.client.proto);
                encode::null_array(out, ctx.client.proto);
            }
        }
        return Ok(());
    }
    let (start, end, count) = range.ok_or(CommandError::Syntax)?;
    let ids: Box<dyn Iterator<Item = StreamId>> = match consumer {
        Some(name) => match group.consumers.get(name) {
            Some(c) => Box::new(if start <= end { c.pel.range(start..=end).copied().collect::<Vec<_>>() } else { Vec::new() }.into_iter()),
            None => {
                encode::array_len(out, 0);
                return Ok(());
            }
        },
        None => Box::new(if start <= end { group.pel.range(start..=end).map(|(id, _)| *id).collect::<Vec<_>>() } else { Vec::new() }.into_iter()),
    };
    let now = ctx.now_ms;
    let mut body = Vec::new();
    let mut n = 0;
    for id in ids {
        if n >= count {
            break;
        }
        let Some(p) = group.pel.get(&id) else { continue };
        if min_idle != 0 && now - p.delivery_time < min_idle {
            continue;
        }
        n += 1;
        encode::array_len(&mut body, 4);
        reply_id(&mut body, id);
        encode::bulk(&mut body, &p.consumer);
        encode::integer(&mut body, (now - p.delivery_time).max(0));
        encode::integer(&mut body, p.delivery_count as i64);
    }
    encode::array_len(out, n);
    out.extend_from_slice(&body);
    Ok(())
}

/// Moves pending entry `id` to `consumer` (created when missing, `created` set), as
/// XCLAIM and XAUTOCLAIM do, with its new delivery time and count.
#[allow(clippy::too_many_arguments)]
fn claim(group: &mut Group, id: StreamId, consumer: &[u8], delivery_time: i64, retry: Option<u64>, justid: bool, now_ms: i64, created: &mut bool) {
    consumer_of(group, consumer, now_ms, created);
    let p = group.pel.get_mut(&id).expect("pending");
    let old = std::mem::replace(&mut p.consumer, consumer.to_vec());
    p.delivery_time = delivery_time;
    match retry {
        Some(n) => p.delivery_count = n,
        None if !justid => p.delivery_count += 1,
        None => {}
    }
    if old != consumer {
        if let Some(c) = group.consumers.get_mut(&old) {
            c.pel.remove(&id);
        }
    }
    group.consumers.get_mut(consumer).expect("consumer").pel.insert(id);
}

/// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]
fn xclaim(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let found = coll::read_key::<Stream>(ctx, &mut shard, h, a[1])?.is_some_and(|s| s.groups.contains_key(a[2]));
    if !found {
        return Err(no_group(a[1], a[2]));
    }
    let min_idle = args::int(a[4]).map_err(|_| CommandError::msg("ERR Invalid min-idle-time argument for XCLAIM"))?.max(0);
    let mut j = 5;
    let mut ids = Vec::new();
    while j < a.len() {
        match parse_strict_id(a[j]) {
            Ok(id) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let now = ctx.now_ms;
    let (mut force, mut justid) = (false, false);
    let mut delivery: Option<i64> = None;
    let mut retry: Option<i64> = None;
    let mut last_id = StreamId::MIN;
    while j < a.len() {
        let more = a.len() - 1 - j;
        let opt = a[j];
        if is(opt, "force") {
            force = true;
        } else if is(opt, "justid") {
            justid = true;
        } else if is(opt, "idle") && more > 0 {
            j += 1;
            let idle = args::int(a[j]).map_err(|_| CommandError::msg("ERR Invalid IDLE option argument for XCLAIM"))?;
            delivery = Some(now.wrapping_sub(idle));
        } else if is(opt, "time") && more > 0 {
            j += 1;
            delivery = Some(args::int(a[j]).map_err(|_| CommandError::msg("ERR Invalid TIME option argument for XCLAIM"))?);
        } else if is(opt, "retrycount") && more > 0 {
            j += 1;
            retry = Some(args::int(a[j]).map_err(|_| CommandError::msg("ERR Invalid RETRYCOUNT option argument for XCLAIM"))?);
        } else if is(opt, "lastid") && more > 0 {
            j += 1;
            last_id = parse_strict_id(a[j])?;
        } else {
            return Err(CommandError::Owned(format!("ERR Unrecognized XCLAIM option '{}'", String::from_utf8_lossy(opt))));
        }
        j += 1;
    }
    let delivery_time = match delivery {
        Some(t) if t < 0 || t > now => now,
        Some(t) => t,
        None => now,
    };
    let retry = retry.filter(|n| *n >= 0).map(|n| n as u64);
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[1])?.ok_or(CommandError::NoSuchKey)?;
    let mut propagate_last_id = false;
    {
        let group = s.groups.get_mut(a[2]).expect("group checked");
        if last_id > group.last_id {
            group.last_id = last_id;
            propagate_last_id = true;
        }
    }
    let mut records = Vec::new();
    let mut created = false;
    let mut body = Vec::new();
    let mut n = 0;
    for id in ids {
        let exists = s.contains(id);
        let group = s.groups.get_mut(a[2]).expect("group checked");
        if !exists {
            if let Some(p) = group.pel.get(&id).cloned() {
                records.push(xclaim_record(a[1], a[2], group, id, &p));
                propagate_last_id = false;
                group.remove_pending(id);
            }
            continue;
        }
        let fresh = match group.pel.get(&id) {
            Some(_) => false,
            None if force => {
                group.pel.insert(id, Pending { delivery_time: now, delivery_count: 1, consumer: Vec::new() });
                true
            }
            None => continue,
        };
        if !fresh && min_idle != 0 && now - group.pel[&id].delivery_time < min_idle {
            continue;
        }
        claim(group, id, a[3], delivery_time, retry, justid, now, &mut created);
        records.push(xclaim_record(a[1], a[2], group, id, &group.pel[&id]));
        propagate_last_id = false;
        if justid {
            reply_id(&mut body, id);
        } else if let Some(fields) = s.get(id) {
            reply_entry(&mut body, &fields);
        }
        n += 1;
    }
    if propagate_last_id {
        records.push(setid_record(a[1], a[2], &s.groups[a[2]]));
    }
    drop(s);
    drop(shard);
    let mut reply = Vec::new();
    encode::array_len(&mut reply, n);
    reply.extend_from_slice(&body);
    finish_claim(ctx, a[1], created, records, &reply);
    Ok(())
}

/// The end of XCLAIM and XAUTOCLAIM: the event of a consumer they made, their records
/// (nothing changed without any), the reply.
fn finish_claim(ctx: &mut Ctx<'_>, key: &[u8], created: bool, records: Vec<Record>, reply: &[u8]) {
    if created {
        notify(ctx, UNSIGNALED, "xgroup-createconsumer", key);
    }
    if records.is_empty() && !created {
        ctx.client.changed_nothing = true;
    }
    ctx.propagate_as(|| records);
    ctx.out.extend_from_slice(reply);
}

/// XAUTOCLAIM's largest COUNT (Redis's bound, so that its scan's attempts cannot
/// overflow).
const AUTOCLAIM_MAX_COUNT: i64 = 5_497_558_138_880;

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
fn xautoclaim(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let min_idle = args::int(a[4]).map_err(|_| CommandError::msg("ERR Invalid min-idle-time argument for XAUTOCLAIM"))?.max(0);
    let (mut start, start_ex) = parse_interval_id(a[5], 0)?;
    if start_ex {
        start = start.next().ok_or(CommandError::msg("ERR invalid start ID for the interval"))?;
    }
    let mut count: i64 = 100;
    let mut justid = false;
    let mut j = 6;
    while j < a.len() {
        let more = a.len() - 1 - j;
        if is(a[j], "count") && more > 0 {
            count = args::int(a[j + 1]).ok().filter(|n| (1..=AUTOCLAIM_MAX_COUNT).contains(n)).ok_or(CommandError::msg("ERR COUNT must be > 0"))?;
            j += 1;
        } else if is(a[j], "justid") {
            justid = true;
        } else {
            return Err(CommandError::Syntax);
        }
        j += 1;
    }
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let found = coll::read_key::<Stream>(ctx, &mut shard, h, a[1])?.is_some_and(|s| s.groups.contains_key(a[2]));
    if !found {
        return Err(no_group(a[1], a[2]));
    }
    let now = ctx.now_ms;
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[1])?.ok_or(CommandError::NoSuchKey)?;
    let mut attempts = count * 10;
    let mut records = Vec::new();
    let mut created = false;
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let pending: Vec<StreamId> = s.groups[a[2]].pel.range(start..).map(|(id, _)| *id).collect();
    let mut next = StreamId::MIN;
    let mut iter = pending.into_iter();
    while attempts > 0 && count > 0 {
        let Some(id) = iter.next() else { break };
        attempts -= 1;
        let exists = s.contains(id);
        let group = s.groups.get_mut(a[2]).expect("group checked");
        if !exists {
            if let Some(p) = group.pel.get(&id).cloned() {
                records.push(xclaim_record(a[1], a[2], group, id, &p));
                group.remove_pending(id);
            }
            deleted.push(id);
            count -= 1;
            continue;
        }
        if min_idle != 0 && now - group.pel[&id].delivery_time < min_idle {
            continue;
        }
        claim(group, id, a[3], now, None, justid, now, &mut created);
        records.push(xclaim_record(a[1], a[2], group, id, &group.pel[&id]));
        claimed.push(id);
        count -= 1;
    }
    if let Some(id) = iter.next() {
        next = id;
    }
    let mut body = Vec::new();
    encode::array_len(&mut body, 3);
    reply_id(&mut body, next);
    encode::array_len(&mut body, claimed.len());
    for id in &claimed {
        match (justid, s.get(*id)) {
            (true, _) | (false, None) => reply_id(&mut body, *id),
            (false, Some(e)) => reply_entry(&mut body, &e),
        }
    }
    encode::array_len(&mut body, deleted.len());
    for id in &deleted {
        reply_id(&mut body, *id);
    }
    drop(s);
    drop(shard);
    finish_claim(ctx, a[1], created, records, &body);
    Ok(())
}

/// The stream of an XGROUP subcommand: WRONGTYPE, or Redis's error when the key is
/// missing (unless `mkstream`).
fn group_key_missing() -> CommandError {
    CommandError::msg("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
}

fn subcommand_syntax(name: &str) -> CommandError {
    CommandError::Owned(format!("ERR unknown subcommand or wrong number of arguments for '{name}'. Try XGROUP HELP."))
}

/// Parses an ENTRIESREAD value: a count, or -1 for unknown.
fn entries_read(arg: &[u8]) -> Result<Option<u64>, CommandError> {
    let n = args::int(arg)?;
    if n < -1 {
        return Err(CommandError::msg("ERR value for ENTRIESREAD must be positive or -1"));
    }
    Ok((n >= 0).then_some(n as u64))
}

/// XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n]
fn xgroup_create(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut mkstream, mut read) = (false, None);
    let mut i = 5;
    while i < a.len() {
        if is(a[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if is(a[i], "entriesread") && i + 1 < a.len() {
            read = entries_read(a[i + 1])?;
            i += 2;
        } else {
            return Err(subcommand_syntax(&String::from_utf8_lossy(a[1])));
        }
    }
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let (last, busy, busy_or_existing) = match coll::get_key::<Stream>(ctx, &mut shard, h, a[2])? {
        Some(s) => (s.last_id, s.groups.contains_key(a[3]), true),
        None if mkstream => (StreamId::MIN, false, false),
        None => return Err(group_key_missing()),
    };
    if a.len() > 8 {
        return Err(subcommand_syntax(&String::from_utf8_lossy(a[1])));
    }
    let id = if a[4] == b"$" { last } else { parse_strict_id(a[4])? };
    if busy {
        return Err(CommandError::msg("BUSYGROUP Consumer Group name already exists"));
    }
    let mut s = coll::get_or_create::<Stream>(ctx, &mut shard, h, a[2])?;
    s.groups.insert(a[3].to_vec(), Group { last_id: id, entries_read: read, ..Group::default() });
    drop(s);
    // A stream MKSTREAM made is a change of the key; a group added to one is not.
    notify(ctx, if busy_or_existing { UNSIGNALED } else { class::STREAM }, "xgroup-create", a[2]);
    drop(shard);
    ctx.ok();
    Ok(())
}

/// Runs `f` on the group `a[3]` of the stream at `a[2]`, with Redis's errors for a
/// missing key or group.
fn with_group<T>(ctx: &mut Ctx<'_>, a: &[&[u8]], f: impl FnOnce(&mut Stream, i64) -> T) -> Result<T, CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[2])?.ok_or_else(group_key_missing)?;
    if !s.groups.contains_key(a[3]) {
        return Err(no_such_group(a[2], a[3]));
    }
    Ok(f(&mut s, ctx.now_ms))
}

/// XGROUP SETID key group id|$ [ENTRIESREAD n]
fn xgroup_setid(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let Some(s) = coll::get_key::<Stream>(ctx, &mut shard, h, a[2])? else { return Err(group_key_missing()) };
    if !s.groups.contains_key(a[3]) {
        return Err(no_such_group(a[2], a[3]));
    }
    if a.len() != 5 && a.len() != 7 {
        return Err(subcommand_syntax(&String::from_utf8_lossy(a[1])));
    }
    let id = if a[4] == b"$" { s.last_id } else { parse_id(a[4], 0)? };
    let mut read = None;
    if a.len() == 7 {
        if !is(a[5], "entriesread") {
            return Err(subcommand_syntax(&String::from_utf8_lossy(a[1])));
        }
        read = entries_read(a[6])?;
    }
    drop(s);
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[2])?.ok_or_else(group_key_missing)?;
    let group = s.groups.get_mut(a[3]).expect("group checked");
    group.last_id = id;
    group.entries_read = read;
    drop(s);
    notify(ctx, UNSIGNALED, "xgroup-setid", a[2]);
    drop(shard);
    ctx.ok();
    Ok(())
}

/// XGROUP DESTROY key group
fn xgroup_destroy(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[2]);
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[2])?.ok_or_else(group_key_missing)?;
    let gone = s.groups.remove(a[3]).is_some();
    drop(s);
    if gone {
        notify(ctx, UNSIGNALED, "xgroup-destroy", a[2]);
    } else {
        ctx.client.changed_nothing = true;
    }
    drop(shard);
    // (Its blocked readers get NOGROUP from the serve pass that follows a write.)
    encode::integer(ctx.out, i64::from(gone));
    Ok(())
}

/// XGROUP CREATECONSUMER key group consumer
fn xgroup_createconsumer(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let created = with_group(ctx, a, |s, now| {
        let group = s.groups.get_mut(a[3]).expect("group checked");
        if group.consumers.contains_key(a[4]) {
            return false;
        }
        group.consumers.insert(a[4].to_vec(), Consumer { seen_time: now, ..Consumer::default() });
        true
    })?;
    if created {
        notify(ctx, UNSIGNALED, "xgroup-createconsumer", a[2]);
    } else {
        ctx.client.changed_nothing = true;
    }
    encode::integer(ctx.out, i64::from(created));
    Ok(())
}

/// XGROUP DELCONSUMER key group consumer — the pending entries it had (now dropped).
fn xgroup_delconsumer(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let pending = with_group(ctx, a, |s, _| {
        let group = s.groups.get_mut(a[3]).expect("group checked");
        let c = group.consumers.remove(a[4])?;
        for id in &c.pel {
            group.pel.remove(id);
        }
        Some(c.pel.len())
    })?;
    match pending {
        Some(_) => notify(ctx, UNSIGNALED, "xgroup-delconsumer", a[2]),
        None => ctx.client.changed_nothing = true,
    }
    encode::integer(ctx.out, pending.unwrap_or(0) as i64);
    Ok(())
}

fn xgroup_help(ctx: &mut Ctx<'_>, _a: &[&[u8]]) -> Result<(), CommandError> {
    const HELP: &[&str] = &[
        "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CREATE <key> <groupname> <id|$> [option]",
        "    Create a new consumer group. Options are:",
        "    * MKSTREAM",
        "      Create the empty stream if it does not exist.",
        "    * ENTRIESREAD entries_read",
        "      Set the group's entries_read counter (internal use).",
        "CREATECONSUMER <key> <groupname> <consumer>",
        "    Create a new consumer in the specified group.",
        "DELCONSUMER <key> <groupname> <consumer>",
        "    Remove the specified consumer.",
        "DESTROY <key> <groupname>",
        "    Remove the specified group.",
        "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
        "    Set the current group ID and entries_read counter.",
        "HELP",
        "    Prints this help.",
    ];
    super::reply_help_text(ctx, HELP);
    Ok(())
}

const STREAM: &[&str] = &["stream"];

/// For WATCH: a group's change is not a change of its key (Redis notifies it without
/// signalModifiedKey), so no WATCH of the key breaks.
fn touches_no_key(_: &[&[u8]]) -> bool {
    false
}

/// XGROUP CREATE breaks a WATCH only when MKSTREAM may make the key (Redis: when it
/// does).
fn may_make_the_key(a: &[&[u8]]) -> bool {
    a.iter().any(|w| is(w, "mkstream"))
}
const KEY2_RW: &[KeySpec] = &[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];
const KEY2_RW_INSERT: &[KeySpec] = &[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];
const KEY2_RW_DELETE: &[KeySpec] = &[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];
const KEY1_RW: &[KeySpec] = &[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];
const KEY1_RW_DELETE: &[KeySpec] = &[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }];

#[rustfmt::skip]
static XGROUP_SUBCOMMANDS: &[CommandSpec] = &[
    spec("create", -5, WRITE | DENYOOM, (2, 2, 1), STREAM, "stream", "Creates a consumer group.", xgroup_create).since("5.0.0").args(ARGS_CREATE).complexity("O(1)").key_specs(KEY2_RW_INSERT).writes(Writes::KeysIf(may_make_the_key)),
    spec("setid", -5, WRITE, (2, 2, 1), STREAM, "stream", "Sets the last-delivered ID of a consumer group.", xgroup_setid).since("5.0.0").args(ARGS_SETID).complexity("O(1)").key_specs(KEY2_RW).writes(Writes::KeysIf(touches_no_key)),
    spec("destroy", 4, WRITE, (2, 2, 1), STREAM, "stream", "Destroys a consumer group.", xgroup_destroy).since("5.0.0").args(ARGS_DESTROY).complexity("O(N) where N is the number of entries in the group's pending entries list (PEL).").key_specs(KEY2_RW_DELETE).writes(Writes::KeysIf(touches_no_key)),
    spec("createconsumer", 5, WRITE | DENYOOM, (2, 2, 1), STREAM, "stream", "Creates a consumer in a consumer group.", xgroup_createconsumer).since("6.2.0").args(ARGS_CONSUMER).complexity("O(1)").key_specs(KEY2_RW_INSERT).writes(Writes::KeysIf(touches_no_key)),
    spec("delconsumer", 5, WRITE, (2, 2, 1), STREAM, "stream", "Deletes a consumer from a consumer group.", xgroup_delconsumer).since("5.0.0").args(ARGS_CONSUMER).complexity("O(1)").key_specs(KEY2_RW_DELETE).writes(Writes::KeysIf(touches_no_key)),
    spec("help", 2, LOADING | STALE, (0, 0, 0), STREAM, "stream", "Returns helpful text about the different subcommands.", xgroup_help).since("5.0.0").complexity("O(1)"),
];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    container("xgroup", "stream", "A container for consumer groups commands.", XGROUP_SUBCOMMANDS).since("5.0.0").complexity("Depends on subcommand."),
    spec("xreadgroup", -7, WRITE | BLOCKING, (0, 0, 0), STREAM, "stream", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", xreadgroup).since("5.0.0").args(ARGS_XREADGROUP).complexity("For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.").movable(Movable::Streams).key_specs(&[KeySpec { begin: BeginSearch::Keyword { keyword: "STREAMS", start_from: 4 }, ..STREAMS_KEYS }]).writes(Writes::KeysIf(touches_no_key)),
    spec("xack", -4, WRITE | FAST, (1, 1, 1), STREAM, "stream", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", xack).since("5.0.0").args(ARGS_XACK).complexity("O(1) for each message ID processed.").key_specs(KEY1_RW).writes(Writes::KeysIf(touches_no_key)),
    spec("xpending", -3, READONLY, (1, 1, 1), STREAM, "stream", "Returns the information and entries from a stream consumer group's pending entries list.", xpending).since("5.0.0").args(ARGS_XPENDING).complexity("O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.").tips(&["nondeterministic_output"]).key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xclaim", -6, WRITE | FAST, (1, 1, 1), STREAM, "stream", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", xclaim).since("5.0.0").args(ARGS_XCLAIM).complexity("O(log N) with N being the number of messages in the PEL of the consumer group.").tips(&["nondeterministic_output"]).key_specs(KEY1_RW).writes(Writes::KeysIf(touches_no_key)),
    spec("xautoclaim", -6, WRITE | FAST, (1, 1, 1), STREAM, "stream", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", xautoclaim).since("6.2.0").args(ARGS_XAUTOCLAIM).complexity("O(1) if COUNT is small.").tips(&["nondeterministic_output"]).key_specs(KEY1_RW_DELETE).writes(Writes::KeysIf(touches_no_key)),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_CREATE: &[Arg] = &[
        arg("key", Key).key_spec(0), arg("groupname", String),
        arg("id", OneOf).args(&[arg("id", String), arg("new_id", PureToken).token("$")]),
        arg("mkstream", PureToken).token("MKSTREAM").optional(),
        arg("entries_read", Integer).token("ENTRIESREAD").optional(),
    ];
    pub const ARGS_SETID: &[Arg] = &[
        arg("key", Key).key_spec(0), arg("groupname", String),
        arg("id", OneOf).args(&[arg("id", String), arg("new_id", PureToken).token("$")]),
        arg("entries_read", Integer).token("ENTRIESREAD").optional(),
    ];
    pub const ARGS_DESTROY: &[Arg] = &[arg("key", Key).key_spec(0), arg("groupname", String)];
    pub const ARGS_CONSUMER: &[Arg] = &[arg("key", Key).key_spec(0), arg("groupname", String), arg("consumername", String)];
    pub const ARGS_XREADGROUP: &[Arg] = &[
        arg("group_consumer", Block).token("GROUP").args(&[arg("group", String), arg("consumer", String)]),
        arg("count", Integer).token("COUNT").optional(),
        arg("milliseconds", Integer).token("BLOCK").optional(),
        arg("noack", PureToken).token("NOACK").optional(),
        arg("streams", Block).token("STREAMS").args(&[arg("key", Key).key_spec(0).multiple(), arg("id", String).multiple()]),
    ];
    pub const ARGS_XACK: &[Arg] = &[arg("key", Key).key_spec(0), arg("group", String), arg("id", String).multiple()];
    pub const ARGS_XPENDING: &[Arg] = &[
        arg("key", Key).key_spec(0), arg("group", String),
        arg("filters", Block).optional().args(&[
            arg("min-idle-time", Integer).token("IDLE").optional().since("6.2.0"),
            arg("start", String), arg("end", String), arg("count", Integer), arg("consumer", String).optional(),
        ]),
    ];
    pub const ARGS_XCLAIM: &[Arg] = &[
        arg("key", Key).key_spec(0), arg("group", String), arg("consumer", String), arg("min-idle-time", String), arg("id", String).multiple(),
        arg("ms", Integer).token("IDLE").optional(),
        arg("unix-time-milliseconds", UnixTime).token("TIME").optional(),
        arg("count", Integer).token("RETRYCOUNT").optional(),
        arg("force", PureToken).token("FORCE").optional(),
        arg("justid", PureToken).token("JUSTID").optional(),
        arg("id", String).token("LASTID").optional(),
    ];
    pub const ARGS_XAUTOCLAIM: &[Arg] = &[
        arg("key", Key).key_spec(0), arg("group", String), arg("consumer", String), arg("min-idle-time", String), arg("start", String),
        arg("count", Integer).token("COUNT").optional(),
        arg("justid", PureToken).token("JUSTID").optional(),
    ];
}
use docs_args::*;
