//! List commands (non-blocking): pushes and pops at both ends, index and range access,
//! LINSERT, LREM, LTRIM, LPOS, LMOVE/RPOPLPUSH and LMPOP. Values live in
//! `store::types::list::List`. The blocking forms (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
//! BLMPOP) are not built yet: they need per-key wait queues and cross-loop wake-ups.

use resp::encode;
use store::events::class;
use store::types::list::{End, List};

use super::args::{self, is};
use super::collections::{self as coll};
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use super::key_flags as kf;
use super::keyspace_events::notify;

fn push(ctx: &mut Ctx<'_>, a: &[&[u8]], end: End, only_existing: bool) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    if only_existing && !coll::check::<List>(&mut shard, h, a[1], ctx.now_ms)? {
        ctx.client.changed_nothing = true;
        encode::integer(ctx.out, 0);
        return Ok(());
    }
    let mut list = coll::get_or_create::<List>(ctx, &mut shard, h, a[1])?;
    for item in &a[2..] {
        list.push(end, item);
    }
    ctx.client.changes = Some((a.len() - 2) as u64);
    notify(ctx, class::LIST, push_event(end), a[1]);
    encode::integer(ctx.out, list.len() as i64);
    Ok(())
}

/// The keyspace event of a push at `end`.
pub fn push_event(end: End) -> &'static str {
    if end == End::Head { "lpush" } else { "rpush" }
}

/// The keyspace event of a pop at `end`.
pub fn pop_event(end: End) -> &'static str {
    if end == End::Head { "lpop" } else { "rpop" }
}

/// LPUSH key element [element ...] — the new length.
fn lpush(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    push(ctx, a, End::Head, false)
}
/// RPUSH key element [element ...] — the new length.
fn rpush(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    push(ctx, a, End::Tail, false)
}
/// LPUSHX key element [element ...] — the new length, 0 when the key is absent.
fn lpushx(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    push(ctx, a, End::Head, true)
}
/// RPUSHX key element [element ...] — the new length, 0 when the key is absent.
fn rpushx(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    push(ctx, a, End::Tail, true)
}

/// LPOP/RPOP key [count] — an element, or an array of up to count elements.
fn pop(ctx: &mut Ctx<'_>, a: &[&[u8]], end: End) -> Result<(), CommandError> {
    if a.len() > 3 {
        return Err(CommandError::Arity(String::from_utf8_lossy(a[0]).to_ascii_lowercase()));
    }
    let count = match a.get(2) {
        None => None,
        Some(c) => Some(args::pop_count(c)?),
    };
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let proto = ctx.client.proto;
    let Some(mut list) = coll::get_key::<List>(ctx, &mut shard, h, a[1])? else {
        match count {
            None => encode::null(ctx.out, proto),
            Some(_) => encode::null_array(ctx.out, proto),
        }
        ctx.client.changed_nothing = true;
        return Ok(());
    };
    let out = &mut *ctx.out;
    let popped = match count {
        None => {
            let popped = list.pop_with(end, |item| encode::bulk(out, item)).is_some();
            if !popped {
                encode::null(out, proto);
            }
            usize::from(popped)
        }
        Some(n) => {
            let n = n.min(list.len());
            encode::array_len(out, n);
            for _ in 0..n {
                list.pop_with(end, |item| encode::bulk(out, item));
            }
            n
        }
    };
    drop(list);
    ctx.client.changes = Some(popped as u64);
    ctx.client.changed_nothing = popped == 0;
    if popped > 0 {
        notify(ctx, class::LIST, pop_event(end), a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    Ok(())
}

fn lpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    pop(ctx, a, End::Head)
}
fn rpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    pop(ctx, a, End::Tail)
}

/// LLEN key — the length.
fn llen(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<List>(ctx, &mut shard, h, a[1])?.map_or(0, |l| l.len());
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// LRANGE key start stop — the elements in the inclusive range.
fn lrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let start = args::int(a[2])?;
    let stop = args::int(a[3])?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let list = coll::read_key::<List>(ctx, &mut shard, h, a[1])?;
    match list.and_then(|l| l.range(start, stop).map(|r| (l, r))) {
        None => encode::array_len(ctx.out, 0),
        Some((l, (s, e))) => {
            encode::array_len(ctx.out, e - s + 1);
            for item in l.iter_from(s).take(e - s + 1) {
                encode::bulk(ctx.out, item);
            }
        }
    }
    Ok(())
}

/// LINDEX key index — the element or nil.
fn lindex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let i = args::int(a[2])?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let list = coll::get_key::<List>(ctx, &mut shard, h, a[1]);
    ctx.lookup(a[1], !matches!(list, Ok(None)));
    let list = list?;
    match list.as_ref().and_then(|l| l.index(i).and_then(|p| l.get(p))) {
        Some(item) => encode::bulk(ctx.out, item),
        None => encode::null(ctx.out, ctx.client.proto),
    }
    Ok(())
}

/// LSET key index element — OK.
fn lset(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let i = args::int(a[2])?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut list = coll::get_key::<List>(ctx, &mut shard, h, a[1])?.ok_or(CommandError::NoSuchKey)?;
    let p = list.index(i).ok_or(CommandError::msg("ERR index out of range"))?;
    list.set(p, a[3]);
    notify(ctx, class::LIST, "lset", a[1]);
    ctx.ok();
    Ok(())
}

/// LINSERT key BEFORE|AFTER pivot element — the new length, -1 without the pivot, 0
/// without the key.
fn linsert(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let after = if is(a[2], "after") {
        true
    } else if is(a[2], "before") {
        false
    } else {
        return Err(CommandError::Syntax);
    };
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let Some(mut list) = coll::get_key::<List>(ctx, &mut shard, h, a[1])? else {
        ctx.client.changed_nothing = true;
        encode::integer(ctx.out, 0);
        return Ok(());
    };
    let Some(p) = list.iter().position(|x| x == a[3]) else {
        ctx.client.changed_nothing = true;
        encode::integer(ctx.out, -1);
        return Ok(());
    };
    list.insert(if after { p + 1 } else { p }, a[4]);
    notify(ctx, class::LIST, "linsert", a[1]);
    encode::integer(ctx.out, list.len() as i64);
    Ok(())
}

/// LREM key count element — number removed (count > 0 from the head, < 0 from the
/// tail, 0 all).
fn lrem(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let count = args::int(a[2])?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut removed = 0u64;
    if let Some(mut list) = coll::get_key::<List>(ctx, &mut shard, h, a[1])? {
        let limit = if count == 0 { u64::MAX } else { count.unsigned_abs() };
        // Positions of the matches to remove: the first `limit` from the head (count
        // >= 0) or from the tail (count < 0).
        let matches: Vec<usize> = list.iter().enumerate().filter(|(_, x)| *x == a[3]).map(|(i, _)| i).collect();
        let chosen: std::collections::HashSet<usize> = if count >= 0 {
            matches.into_iter().take(limit.min(usize::MAX as u64) as usize).collect()
        } else {
            matches.into_iter().rev().take(limit.min(usize::MAX as u64) as usize).collect()
        };
        removed = chosen.len() as u64;
        if removed > 0 {
            list.retain(|i, _| !chosen.contains(&i));
        }
    }
    if removed > 0 {
        notify(ctx, class::LIST, "lrem", a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    ctx.client.changes = Some(removed);
    ctx.client.changed_nothing = removed == 0;
    encode::integer(ctx.out, removed as i64);
    Ok(())
}

/// LTRIM key start stop — OK; keeps only the range.
fn ltrim(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let start = args::int(a[2])?;
    let stop = args::int(a[3])?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let trimmed = match coll::get_key::<List>(ctx, &mut shard, h, a[1])? {
        Some(mut list) => {
            let before = list.len();
            match list.range(start, stop) {
                Some((s, e)) => list.retain(|i, _| (s..=e).contains(&i)),
                None => list.retain(|_, _| false),
            }
            // Redis counts the elements trimmed (none: no change counted, though the
            // event still goes out).
            ctx.client.changes = Some((before - list.len()) as u64);
            true
        }
        None => {
            ctx.client.changed_nothing = true;
            false
        }
    };
    if trimmed {
        notify(ctx, class::LIST, "ltrim", a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    ctx.ok();
    Ok(())
}

/// LPOS key element [RANK rank] [COUNT num] [MAXLEN len] — position(s) of the element.
fn lpos(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut rank: i64 = 1;
    let mut count: Option<usize> = None;
    let mut maxlen: usize = 0;
    let mut i = 3;
    while i < a.len() {
        let Some(v) = a.get(i + 1) else { return Err(CommandError::Syntax) };
        if is(a[i], "rank") {
            rank = args::int(v)?;
            if rank == 0 {
                return Err(CommandError::msg("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"));
            }
            if rank == i64::MIN {
                return Err(CommandError::msg("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"));
            }
        } else if is(a[i], "count") {
            const NEGATIVE: &str = "ERR COUNT can't be negative";
            let n = args::int(v).map_err(|_| CommandError::msg(NEGATIVE))?;
            count = Some(usize::try_from(n).map_err(|_| CommandError::msg(NEGATIVE))?);
        } else if is(a[i], "maxlen") {
            const NEGATIVE: &str = "ERR MAXLEN can't be negative";
            let n = args::int(v).map_err(|_| CommandError::msg(NEGATIVE))?;
            maxlen = usize::try_from(n).map_err(|_| CommandError::msg(NEGATIVE))?;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 2;
    }
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut found = Vec::new();
    if let Some(list) = coll::read_key::<List>(ctx, &mut shard, h, a[1])? {
        let want = match count {
            Some(0) => usize::MAX,
            Some(n) => n,
            None => 1,
        };
        let mut skip = rank.unsigned_abs() - 1;
        let len = list.len();
        let scan = if maxlen == 0 { len } else { maxlen.min(len) };
        let items: Vec<&[u8]> = list.iter().collect();
        for step in 0..scan {
            let p = if rank > 0 { step } else { len - 1 - step };
            if items[p] == a[2] {
                if skip > 0 {
                    skip -= 1;
                } else {
                    found.push(p);
                    if found.len() >= want {
                        break;
                    }
                }
            }
        }
    }
    match count {
        None => match found.first() {
            Some(p) => encode::integer(ctx.out, *p as i64),
            None => encode::null(ctx.out, ctx.client.proto),
        },
        Some(_) => {
            encode::array_len(ctx.out, found.len());
            for p in found {
                encode::integer(ctx.out, p as i64);
            }
        }
    }
    Ok(())
}


/// Pops from `src` at `from` and pushes onto `dst` at `to`, atomically; the element or
/// None when `src` is absent. LMOVE, RPOPLPUSH and their blocking forms. Queues the
/// keyspace events in Redis's order: the destination's (`new`, the push), then the
/// source's (the pop, `del` when emptied), published before the keys' locks go when
/// `at_once` (`notify::publish_under_lock`).
pub fn move_element(
    ks: &store::Keyspace,
    db: usize,
    now_ms: i64,
    (src, dst): (&[u8], &[u8]),
    (from, to): (End, End),
    at_once: Option<(&crate::shared::Shared, u64)>,
) -> Result<Option<Box<[u8]>>, CommandError> {
    let mut locked = ks.lock_keys(db, [src, dst]);
    // A missing source answers nil before the destination's type is looked at.
    let (sh, s) = locked.shard_for(db, src);
    if !coll::check::<List>(s, sh, src, now_ms)? {
        return Ok(None);
    }
    let (dh, d) = locked.shard_for(db, dst);
    coll::check::<List>(d, dh, dst, now_ms)?;
    let (sh, s) = locked.shard_for(db, src);
    let Some(mut list) = coll::get::<List>(s, sh, src, now_ms)? else { return Ok(None) };
    let Some(item) = list.pop(from) else { return Ok(None) };
    let events = ks.events();
    if src == dst {
        // A rotation: the key never goes away, so it keeps its TTL even when its only
        // element moves (as in Redis, which pushes before it checks for emptiness).
        list.push(to, &item);
        store::events::push(events, class::LIST, push_event(to), db, dst);
        store::events::push(events, class::LIST, pop_event(from), db, src);
        drop(list);
        crate::notify::publish_under_lock(at_once);
        return Ok(Some(item));
    }
    drop(list);
    let (dh, d) = locked.shard_for(db, dst);
    let mut list = coll::get_or_create_with::<List>(d, dh, dst, now_ms, (store::clock::lru_clock(now_ms), None))?;
    list.push(to, &item);
    drop(list);
    store::events::push(events, class::LIST, push_event(to), db, dst);
    let (sh, s) = locked.shard_for(db, src);
    coll::queue_pop(events, db, s, sh, src, now_ms, (class::LIST, pop_event(from)));
    crate::notify::publish_under_lock(at_once);
    Ok(Some(item))
}

/// LMOVE source destination LEFT|RIGHT LEFT|RIGHT — the moved element or nil.
fn lmove(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let from = args::list_end(a[3])?;
    let to = args::list_end(a[4])?;
    match move_element(ctx.ks(), ctx.client.db, ctx.now_ms, (a[1], a[2]), (from, to), super::keyspace_events::at_once(ctx))? {
        Some(item) => encode::bulk(ctx.out, &item),
        None => ctx.null(),
    }
    Ok(())
}

/// RPOPLPUSH source destination — the moved element or nil.
fn rpoplpush(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    match move_element(ctx.ks(), ctx.client.db, ctx.now_ms, (a[1], a[2]), (End::Tail, End::Head), super::keyspace_events::at_once(ctx))? {
        Some(item) => encode::bulk(ctx.out, &item),
        None => ctx.null(),
    }
    Ok(())
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] — [key, elements] of the first
/// non-empty list, or nil.
fn lmpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (keys, i) = super::sets::numkeys(a, CommandError::Syntax)?;
    let Some(w) = a.get(i) else { return Err(CommandError::Syntax) };
    let end = args::list_end(w)?;
    let count = args::mpop_count(&a[i + 1..])?;
    let db = ctx.client.db;
    let mut locked = ctx.ks().lock_keys(db, keys);
    for key in keys {
        let (h, shard) = locked.shard_for(db, key);
        let Some(mut list) = coll::get_key::<List>(ctx, shard, h, key)? else { continue };
        let n = count.min(list.len());
        ctx.client.changes = Some(n as u64);
        encode::array_len(ctx.out, 2);
        encode::bulk(ctx.out, key);
        encode::array_len(ctx.out, n);
        for _ in 0..n {
            if let Some(item) = list.pop(end) {
                encode::bulk(ctx.out, &item);
            }
        }
        drop(list);
        notify(ctx, class::LIST, pop_event(end), key);
        coll::remove_if_empty(ctx, shard, h, key);
        return Ok(());
    }
    ctx.client.changed_nothing = true;
    encode::null_array(ctx.out, ctx.client.proto);
    Ok(())
}

const LIST: &[&str] = &["list"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("lpush", -3, WRITE | DENYOOM | FAST, (1, 1, 1), LIST, "list", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", lpush).since("1.0.0").args(ARGS_LPUSH).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("rpush", -3, WRITE | DENYOOM | FAST, (1, 1, 1), LIST, "list", "Appends one or more elements to a list. Creates the key if it doesn't exist.", rpush).since("1.0.0").args(ARGS_RPUSH).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lpushx", -3, WRITE | DENYOOM | FAST, (1, 1, 1), LIST, "list", "Prepends one or more elements to a list only when the list exists.", lpushx).since("2.2.0").args(ARGS_LPUSHX).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("rpushx", -3, WRITE | DENYOOM | FAST, (1, 1, 1), LIST, "list", "Appends an element to a list only when the list exists.", rpushx).since("2.2.0").args(ARGS_RPUSHX).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lpop", -2, WRITE | FAST, (1, 1, 1), LIST, "list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", lpop).since("1.0.0").args(ARGS_LPOP).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("rpop", -2, WRITE | FAST, (1, 1, 1), LIST, "list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", rpop).since("1.0.0").args(ARGS_RPOP).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("llen", 2, READONLY | FAST, (1, 1, 1), LIST, "list", "Returns the length of a list.", llen).since("1.0.0").args(ARGS_LLEN).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lrange", 4, READONLY, (1, 1, 1), LIST, "list", "Returns a range of elements from a list.", lrange).since("1.0.0").args(ARGS_LRANGE).complexity("O(S+N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lindex", 3, READONLY, (1, 1, 1), LIST, "list", "Returns an element from a list by its index.", lindex).since("1.0.0").args(ARGS_LINDEX).complexity("O(N) or O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lset", 4, WRITE | DENYOOM, (1, 1, 1), LIST, "list", "Sets the value of an element in a list by its index.", lset).since("1.0.0").args(ARGS_LSET).complexity("O(N) or O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("linsert", 5, WRITE | DENYOOM, (1, 1, 1), LIST, "list", "Inserts an element before or after another element in a list.", linsert).since("2.2.0").args(ARGS_LINSERT).complexity("O(N) or O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lrem", 4, WRITE, (1, 1, 1), LIST, "list", "Removes elements from a list. Deletes the list if the last element was removed.", lrem).since("1.0.0").args(ARGS_LREM).complexity("O(N+M)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("ltrim", 4, WRITE, (1, 1, 1), LIST, "list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", ltrim).since("1.0.0").args(ARGS_LTRIM).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lpos", -3, READONLY, (1, 1, 1), LIST, "list", "Returns the index of matching elements in a list.", lpos).since("6.0.6").args(ARGS_LPOS).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lmove", 5, WRITE | DENYOOM, (1, 2, 1), LIST, "list", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", lmove).since("6.2.0").args(ARGS_LMOVE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("rpoplpush", 3, WRITE | DENYOOM, (1, 2, 1), LIST, "list", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", rpoplpush).since("1.2.0").args(ARGS_RPOPLPUSH).complexity("O(1)").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("lmpop", -4, WRITE | WATCH_CHANGED_ONLY, (0, 0, 0), LIST, "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", lmpop).since("7.0.0").args(ARGS_LMPOP).complexity("O(N+M)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_LPUSH: &[Arg] = &[arg("key", Key).key_spec(0), arg("element", String).multiple()];
    pub const ARGS_RPUSH: &[Arg] = &[arg("key", Key).key_spec(0), arg("element", String).multiple()];
    pub const ARGS_LPUSHX: &[Arg] = &[arg("key", Key).key_spec(0), arg("element", String).multiple()];
    pub const ARGS_RPUSHX: &[Arg] = &[arg("key", Key).key_spec(0), arg("element", String).multiple()];
    pub const ARGS_LPOP: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).since("6.2.0").optional()];
    pub const ARGS_RPOP: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).since("6.2.0").optional()];
    pub const ARGS_LLEN: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_LRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", Integer), arg("stop", Integer)];
    pub const ARGS_LINDEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("index", Integer)];
    pub const ARGS_LSET: &[Arg] = &[arg("key", Key).key_spec(0), arg("index", Integer), arg("element", String)];
    pub const ARGS_LINSERT: &[Arg] = &[arg("key", Key).key_spec(0), arg("where", OneOf).args(&[arg("before", PureToken).token("BEFORE"), arg("after", PureToken).token("AFTER")]), arg("pivot", String), arg("element", String)];
    pub const ARGS_LREM: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer), arg("element", String)];
    pub const ARGS_LTRIM: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", Integer), arg("stop", Integer)];
    pub const ARGS_LPOS: &[Arg] = &[arg("key", Key).key_spec(0), arg("element", String), arg("rank", Integer).token("RANK").optional(), arg("num-matches", Integer).token("COUNT").optional(), arg("len", Integer).token("MAXLEN").optional()];
    pub const ARGS_LMOVE: &[Arg] = &[arg("source", Key).key_spec(0), arg("destination", Key).key_spec(1), arg("wherefrom", OneOf).args(&[arg("left", PureToken).token("LEFT"), arg("right", PureToken).token("RIGHT")]), arg("whereto", OneOf).args(&[arg("left", PureToken).token("LEFT"), arg("right", PureToken).token("RIGHT")])];
    pub const ARGS_RPOPLPUSH: &[Arg] = &[arg("source", Key).key_spec(0), arg("destination", Key).key_spec(1)];
    pub const ARGS_LMPOP: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("where", OneOf).args(&[arg("left", PureToken).token("LEFT"), arg("right", PureToken).token("RIGHT")]), arg("count", Integer).token("COUNT").optional()];
}
use docs_args::*;
