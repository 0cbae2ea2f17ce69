//! Sorted set commands: ZADD and updates, scores and ranks, the ZRANGE family (by rank,
//! score or lex, forward or reverse, LIMIT, WITHSCORES, STORE), removals by range, pops,
//! random members, the algebra (ZUNION, ZINTER, ZDIFF and STORE forms, ZINTERCARD) and
//! ZSCAN. Values live in `store::types::zset::ZSet`; scores print as Redis 7.0 prints
//! them (`%.17g`, `inf`, `-inf`). The blocking pops are not built yet.

use resp::{encode, Proto};
use store::events::class;
use store::types::set::Set;
use store::types::string::parse_f64;
use store::types::zset::{LexBound, ScoreBound, ZSet};
use store::LockedShards;

use super::args::{self, is};
use super::collections::{self as coll};
use super::flags::*;
use super::hashes::{check_random_count, parse_scan_args, random_picks, sample_picks, write_scan_reply};
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};
use super::key_flags as kf;
use super::keyspace_events::notify;

const NOT_FLOAT: CommandError = CommandError::NotFloat;
const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";

fn score_arg(arg: &[u8]) -> Result<f64, CommandError> {
    parse_f64(arg).ok_or(NOT_FLOAT)
}

/// Writes a score as a RESP3 double or a RESP2 bulk string.
fn write_score(out: &mut Vec<u8>, score: f64, proto: Proto) {
    encode::double(out, score, proto);
}

/// Writes members, with scores when asked: flat in RESP2, [member, score] pairs in RESP3.
fn write_scored(out: &mut Vec<u8>, proto: Proto, items: &[(f64, Vec<u8>)], with_scores: bool) {
    write_scored_iter(out, proto, items.len(), items.iter().map(|(s, m)| (*s, &m[..])), with_scores);
}

/// [`write_scored`] for `n` items produced one by one (never collected).
fn write_scored_iter<'a>(out: &mut Vec<u8>, proto: Proto, n: usize, items: impl Iterator<Item = (f64, &'a [u8])>, with_scores: bool) {
    if !with_scores {
        encode::array_len(out, n);
        for (_, m) in items {
            encode::bulk(out, m);
        }
    } else if proto == Proto::Resp3 {
        encode::array_len(out, n);
        for (s, m) in items {
            encode::array_len(out, 2);
            encode::bulk(out, m);
            write_score(out, s, proto);
        }
    } else {
        encode::array_len(out, n * 2);
        for (s, m) in items {
            encode::bulk(out, m);
            write_score(out, s, proto);
        }
    }
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
pub(super) fn zadd(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut nx, mut xx, mut gt, mut lt, mut ch, mut incr) = (false, false, false, false, false, false);
    let mut i = 2;
    while i < a.len() {
        let w = a[i];
        if is(w, "nx") {
            nx = true;
        } else if is(w, "xx") {
            xx = true;
        } else if is(w, "gt") {
            gt = true;
        } else if is(w, "lt") {
            lt = true;
        } else if is(w, "ch") {
            ch = true;
        } else if is(w, "incr") {
            incr = true;
        } else {
            break;
        }
        i += 1;
    }
    let pairs = &a[i..];
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return Err(CommandError::Syntax);
    }
    if nx && xx {
        return Err(CommandError::msg("ERR XX and NX options at the same time are not compatible"));
    }
    if (gt && nx) || (lt && nx) || (gt && lt) {
        return Err(CommandError::msg("ERR GT, LT, and/or NX options at the same time are not compatible"));
    }
    if incr && pairs.len() > 2 {
        return Err(CommandError::msg("ERR INCR option supports a single increment-element pair"));
    }
    let mut parsed = Vec::with_capacity(pairs.len() / 2);
    for p in pairs.chunks_exact(2) {
        parsed.push((score_arg(p[0])?, p[1]));
    }
    let limits = ctx.shared.type_limits.zset();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    if xx && !coll::check::<ZSet>(&mut shard, h, a[1], ctx.now_ms)? {
        // XX never creates the key.
        ctx.client.changed_nothing = true;
        if incr {
            ctx.null();
        } else {
            encode::integer(ctx.out, 0);
        }
        return Ok(());
    }
    let mut z = coll::get_or_create::<ZSet>(ctx, &mut shard, h, a[1])?;
    let (mut added, mut changed) = (0i64, 0i64);
    let mut incr_result: Option<f64> = None;
    for (score, member) in parsed {
        let current = z.score(member);
        if (nx && current.is_some()) || (xx && current.is_none()) {
            continue;
        }
        let new = if incr {
            // A new member gets the increment itself (Redis adds nothing to it: -0
            // stays -0 in the reply).
            let s = current.map_or(score, |c| c + score);
            if s.is_nan() {
                drop(z);
                coll::drop_if_empty(&mut shard, h, a[1], ctx.now_ms);
                return Err(CommandError::msg(NAN_SCORE));
            }
            s
        } else {
            score
        };
        if let Some(cur) = current {
            if (gt && new <= cur) || (lt && new >= cur) {
                continue;
            }
        }
        // A score equal to the one there (as doubles: -0 equals 0) changes nothing, as
        // in Redis, and stays as it was (a changed sign unlogged would differ on a
        // replica).
        if current.is_none() {
            added += 1;
            z.insert(member, new, limits);
        } else if current != Some(new) {
            changed += 1;
            z.insert(member, new, limits);
        }
        incr_result = Some(new);
    }
    drop(z);
    if added > 0 || changed > 0 {
        notify(ctx, class::ZSET, if incr { "zincr" } else { "zadd" }, a[1]);
    }
    ctx.client.changes = Some((added + changed) as u64);
    ctx.client.changed_nothing = added + changed == 0;
    coll::drop_if_empty(&mut shard, h, a[1], ctx.now_ms);
    if incr {
        match incr_result {
            Some(s) => write_score(ctx.out, s, ctx.client.proto),
            None => ctx.null(),
        }
    } else {
        encode::integer(ctx.out, if ch { added + changed } else { added });
    }
    Ok(())
}

/// ZINCRBY key increment member — the new score.
fn zincrby(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let delta = score_arg(a[2])?;
    let limits = ctx.shared.type_limits.zset();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut z = coll::get_or_create::<ZSet>(ctx, &mut shard, h, a[1])?;
    // A new member gets the increment itself, as in Redis (-0 stays -0 in the reply).
    let current = z.score(a[3]);
    let new = current.map_or(delta, |c| c + delta);
    if new.is_nan() {
        drop(z);
        coll::drop_if_empty(&mut shard, h, a[1], ctx.now_ms);
        return Err(CommandError::msg(NAN_SCORE));
    }
    // An increment that leaves the score as it was changes nothing: no event, and the
    // score stays (-0 plus 0 keeps -0), as in Redis.
    if current != Some(new) {
        z.insert(a[3], new, limits);
        notify(ctx, class::ZSET, "zincr", a[1]);
    }
    ctx.client.changed_nothing = current == Some(new);
    write_score(ctx.out, new, ctx.client.proto);
    Ok(())
}

/// ZREM key member [member ...] — number removed.
fn zrem(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let removed = match coll::get_key::<ZSet>(ctx, &mut shard, h, a[1])? {
        Some(mut z) => a[2..].iter().filter(|m| z.remove(m)).count(),
        None => 0,
    };
    if removed > 0 {
        notify(ctx, class::ZSET, "zrem", a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    ctx.client.changes = Some(removed as u64);
    ctx.client.changed_nothing = removed == 0;
    encode::integer(ctx.out, removed as i64);
    Ok(())
}

/// ZCARD key — number of members.
fn zcard(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?.map_or(0, |z| z.len());
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// ZSCORE key member — the score or nil.
fn zscore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let s = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?.and_then(|z| z.member_score(a[2]));
    match s {
        Some(s) => write_score(ctx.out, s, ctx.client.proto),
        None => ctx.null(),
    }
    Ok(())
}

/// ZMSCORE key member [member ...] — scores or nils.
fn zmscore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let z = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?;
    let proto = ctx.client.proto;
    encode::array_len(ctx.out, a.len() - 2);
    for m in &a[2..] {
        match z.as_ref().and_then(|z| z.member_score(m)) {
            Some(s) => write_score(ctx.out, s, proto),
            None => encode::null(ctx.out, proto),
        }
    }
    Ok(())
}

fn rank_generic(ctx: &mut Ctx<'_>, a: &[&[u8]], rev: bool) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let r = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?
        .and_then(|z| z.rank(a[2]).map(|r| if rev { z.len() - 1 - r } else { r }));
    match r {
        Some(r) => encode::integer(ctx.out, r as i64),
        None => ctx.null(),
    }
    Ok(())
}

/// ZRANK key member — the ascending rank or nil.
fn zrank(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    rank_generic(ctx, a, false)
}
/// ZREVRANK key member — the descending rank or nil.
fn zrevrank(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    rank_generic(ctx, a, true)
}

fn score_bound(arg: &[u8]) -> Result<ScoreBound, CommandError> {
    const BAD: &str = "ERR min or max is not a float";
    let (exclusive, text) = match arg.first() {
        Some(b'(') => (true, &arg[1..]),
        _ => (false, arg),
    };
    let value = parse_f64(text).ok_or(CommandError::msg(BAD))?;
    Ok(ScoreBound { value, exclusive })
}

fn lex_bound(arg: &[u8]) -> Result<LexBound, CommandError> {
    match arg {
        b"-" => Ok(LexBound::Min),
        b"+" => Ok(LexBound::Max),
        [b'[', rest @ ..] => Ok(LexBound::Inclusive(rest.to_vec())),
        [b'(', rest @ ..] => Ok(LexBound::Exclusive(rest.to_vec())),
        _ => Err(CommandError::msg("ERR min or max not valid string range item")),
    }
}

/// What a ZRANGE-like command selects.
enum By {
    Rank(i64, i64),
    Score(ScoreBound, ScoreBound),
    Lex(LexBound, LexBound),
}

struct RangeQuery {
    by: By,
    rev: bool,
    /// (offset, count); a negative count means all.
    limit: Option<(i64, i64)>,
}

/// Selects members in query order.
fn select(z: &ZSet, q: &RangeQuery) -> Vec<(f64, Vec<u8>)> {
    let len = z.len();
    let (first, last) = match &q.by {
        By::Rank(start, stop) => {
            let n = len as i64;
            let norm = |i: i64| if i < 0 { n + i } else { i };
            let (mut s, mut e) = (norm(*start).max(0), norm(*stop));
            if e >= n {
                e = n - 1;
            }
            if s > e || s >= n {
                return Vec::new();
            }
            if q.rev {
                // Ranks count from the highest score.
                let (rs, re) = (n - 1 - e, n - 1 - s);
                s = rs;
                e = re;
            }
            (s as usize, e as usize + 1)
        }
        By::Score(min, max) => z.score_ranks(*min, *max),
        By::Lex(min, max) => z.lex_ranks(min, max),
    };
    if first >= last {
        return Vec::new();
    }
    let mut items = z.range(first, last - 1);
    if q.rev {
        items.reverse();
    }
    if let Some((offset, count)) = q.limit {
        if offset < 0 {
            return Vec::new();
        }
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = if count < 0 { usize::MAX } else { count as usize };
        items = items.into_iter().skip(skip).take(take).collect();
    }
    items
}

/// Parses ZRANGE's arguments from a[start..]: min max [BYSCORE|BYLEX] [REV] [LIMIT o c]
/// [WITHSCORES]. Returns the query and WITHSCORES.
fn parse_zrange(a: &[&[u8]], allow_withscores: bool) -> Result<(RangeQuery, bool), CommandError> {
    let (min, max) = (a[0], a[1]);
    let (mut byscore, mut bylex, mut rev, mut withscores) = (false, false, false, false);
    let mut limit = None;
    let mut i = 2;
    while i < a.len() {
        let w = a[i];
        if is(w, "byscore") {
            byscore = true;
        } else if is(w, "bylex") {
            bylex = true;
        } else if is(w, "rev") {
            rev = true;
        } else if is(w, "withscores") && allow_withscores {
            withscores = true;
        } else if is(w, "limit") && i + 2 < a.len() {
            limit = Some((args::int(a[i + 1])?, args::int(a[i + 2])?));
            i += 2;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    if byscore && bylex {
        return Err(CommandError::Syntax);
    }
    if limit.is_some() && !byscore && !bylex {
        return Err(CommandError::msg(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && bylex {
        return Err(CommandError::msg("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
    }
    // With REV, the first bound is the high one.
    let (lo, hi) = if rev && (byscore || bylex) { (max, min) } else { (min, max) };
    let by = if byscore {
        By::Score(score_bound(lo)?, score_bound(hi)?)
    } else if bylex {
        By::Lex(lex_bound(lo)?, lex_bound(hi)?)
    } else {
        By::Rank(args::int(min)?, args::int(max)?)
    };
    Ok((RangeQuery { by, rev, limit }, withscores))
}

fn run_range(ctx: &mut Ctx<'_>, key: &[u8], q: &RangeQuery, withscores: bool) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, key);
    let items = coll::read_key::<ZSet>(ctx, &mut shard, h, key)?.map(|z| select(&z, q)).unwrap_or_default();
    drop(shard);
    write_scored(ctx.out, ctx.client.proto, &items, withscores);
    Ok(())
}

/// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
fn zrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (q, withscores) = parse_zrange(&a[2..], true)?;
    run_range(ctx, a[1], &q, withscores)
}

/// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] — stored size.
fn zrangestore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (q, _) = parse_zrange(&a[3..], false)?;
    let limits = ctx.shared.type_limits.zset();
    let db = ctx.client.db;
    let mut locked = ctx.ks().lock_keys(db, &a[1..3]);
    let (sh, s) = locked.shard_for(db, a[2]);
    let items = coll::read_key::<ZSet>(ctx, s, sh, a[2])?.map(|z| select(&z, &q)).unwrap_or_default();
    // As Redis's zsetTypeCreate with the result's size: a result past the listpack's
    // entries is a skiplist from the start, so that a -0 score stays -0 (built packed
    // and then converted, it came out 0; the differential test's DEBUG DIGEST found it).
    let mut out = if items.len() > limits.max_listpack_entries { ZSet::new_large() } else { ZSet::new() };
    for (score, m) in &items {
        out.insert(m, *score, limits);
    }
    let n = out.len();
    let (dh, d) = locked.shard_for(db, a[1]);
    ctx.client.changed_nothing = !coll::store(ctx, d, dh, a[1], out, (class::ZSET, "zrangestore"));
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// The legacy forms: ZRANGEBYSCORE / ZREVRANGEBYSCORE / ZRANGEBYLEX / ZREVRANGEBYLEX /
/// ZREVRANGE, translated to a query.
fn legacy_range(ctx: &mut Ctx<'_>, a: &[&[u8]], kind: &str, rev: bool) -> Result<(), CommandError> {
    let (mut withscores, mut limit) = (false, None);
    let mut i = 4;
    while i < a.len() {
        if is(a[i], "withscores") {
            if kind == "lex" {
                return Err(CommandError::msg("ERR syntax error, WITHSCORES not supported in combination with BYLEX"));
            }
            withscores = true;
        } else if is(a[i], "limit") && kind != "rank" && i + 2 < a.len() {
            limit = Some((args::int(a[i + 1])?, args::int(a[i + 2])?));
            i += 2;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    let (lo, hi) = if rev { (a[3], a[2]) } else { (a[2], a[3]) };
    let by = match kind {
        "score" => By::Score(score_bound(lo)?, score_bound(hi)?),
        "lex" => By::Lex(lex_bound(lo)?, lex_bound(hi)?),
        _ => By::Rank(args::int(a[2])?, args::int(a[3])?),
    };
    run_range(ctx, a[1], &RangeQuery { by, rev, limit }, withscores)
}

fn zrangebyscore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    legacy_range(ctx, a, "score", false)
}
fn zrevrangebyscore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    legacy_range(ctx, a, "score", true)
}
fn zrangebylex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    legacy_range(ctx, a, "lex", false)
}
fn zrevrangebylex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    legacy_range(ctx, a, "lex", true)
}
fn zrevrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    legacy_range(ctx, a, "rank", true)
}

/// ZCOUNT key min max — members with scores in range.
fn zcount(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (min, max) = (score_bound(a[2])?, score_bound(a[3])?);
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?.map_or(0, |z| {
        let (f, l) = z.score_ranks(min, max);
        l - f
    });
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// ZLEXCOUNT key min max — members in the lex range.
fn zlexcount(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (min, max) = (lex_bound(a[2])?, lex_bound(a[3])?);
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?.map_or(0, |z| {
        let (f, l) = z.lex_ranks(&min, &max);
        l - f
    });
    encode::integer(ctx.out, n as i64);
    Ok(())
}

fn remrange(ctx: &mut Ctx<'_>, a: &[&[u8]], by: By) -> Result<(), CommandError> {
    let event = match by {
        By::Rank(..) => "zremrangebyrank",
        By::Score(..) => "zremrangebyscore",
        By::Lex(..) => "zremrangebylex",
    };
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut removed = 0;
    if let Some(mut z) = coll::get_key::<ZSet>(ctx, &mut shard, h, a[1])? {
        let items = select(&z, &RangeQuery { by, rev: false, limit: None });
        for (_, m) in &items {
            z.remove(m);
        }
        removed = items.len();
    }
    if removed > 0 {
        notify(ctx, class::ZSET, event, a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    ctx.client.changes = Some(removed as u64);
    ctx.client.changed_nothing = removed == 0;
    encode::integer(ctx.out, removed as i64);
    Ok(())
}

/// ZREMRANGEBYRANK key start stop — number removed.
fn zremrangebyrank(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let by = By::Rank(args::int(a[2])?, args::int(a[3])?);
    remrange(ctx, a, by)
}
/// ZREMRANGEBYSCORE key min max — number removed.
fn zremrangebyscore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let by = By::Score(score_bound(a[2])?, score_bound(a[3])?);
    remrange(ctx, a, by)
}
/// ZREMRANGEBYLEX key min max — number removed.
fn zremrangebylex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let by = By::Lex(lex_bound(a[2])?, lex_bound(a[3])?);
    remrange(ctx, a, by)
}

/// Pops up to `count` members from the low (min) or high end.
fn pop_from(z: &mut ZSet, count: usize, max: bool) -> Vec<(f64, Vec<u8>)> {
    let mut out = Vec::with_capacity(count.min(z.len()));
    for _ in 0..count {
        let len = z.len();
        if len == 0 {
            break;
        }
        let Some((s, m)) = z.at(if max { len - 1 } else { 0 }).map(|(s, m)| (s, m.to_vec())) else { break };
        z.remove(&m);
        out.push((s, m));
    }
    out
}

/// The keyspace event of a pop from the high (`max`) or low end.
pub fn pop_event(max: bool) -> &'static str {
    if max { "zpopmax" } else { "zpopmin" }
}

fn zpop(ctx: &mut Ctx<'_>, a: &[&[u8]], max: bool) -> Result<(), CommandError> {
    if a.len() > 3 {
        return Err(CommandError::Syntax);
    }
    let count = a.get(2).map(|c| args::pop_count(c)).transpose()?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let items = match coll::get_key::<ZSet>(ctx, &mut shard, h, a[1])? {
        Some(mut z) => pop_from(&mut z, count.unwrap_or(1), max),
        None => Vec::new(),
    };
    // A missing key has nothing to drop: no second lookup (ZPOPMIN on an empty key is
    // redis-benchmark's test when no ZADD ran before it).
    if !items.is_empty() {
        notify(ctx, class::ZSET, pop_event(max), a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    drop(shard);
    ctx.client.changes = Some(items.len() as u64);
    ctx.client.changed_nothing = items.is_empty();
    let proto = ctx.client.proto;
    if count.is_none() && proto == Proto::Resp3 {
        // Without COUNT, RESP3 replies one flat [member, score] pair.
        encode::array_len(ctx.out, items.len() * 2);
        for (s, m) in &items {
            encode::bulk(ctx.out, m);
            write_score(ctx.out, *s, proto);
        }
    } else {
        write_scored(ctx.out, proto, &items, true);
    }
    Ok(())
}

/// ZPOPMIN key [count] — the lowest members with scores.
fn zpopmin(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    zpop(ctx, a, false)
}
/// ZPOPMAX key [count] — the highest members with scores.
fn zpopmax(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    zpop(ctx, a, true)
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] — [key, [[member, score] ...]] of
/// the first non-empty sorted set, or nil.
fn zmpop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (keys, i) = super::sets::numkeys(a, CommandError::Syntax)?;
    let Some(w) = a.get(i) else { return Err(CommandError::Syntax) };
    let max = if is(w, "max") {
        true
    } else if is(w, "min") {
        false
    } else {
        return Err(CommandError::Syntax);
    };
    let count = args::mpop_count(&a[i + 1..])?;
    let db = ctx.client.db;
    let proto = ctx.client.proto;
    let mut locked = ctx.ks().lock_keys(db, keys);
    for key in keys {
        let (h, shard) = locked.shard_for(db, key);
        let Some(mut z) = coll::get_key::<ZSet>(ctx, shard, h, key)? else { continue };
        let items = pop_from(&mut z, count, max);
        drop(z);
        ctx.client.changes = Some(items.len() as u64);
        notify(ctx, class::ZSET, pop_event(max), key);
        coll::remove_if_empty(ctx, shard, h, key);
        encode::array_len(ctx.out, 2);
        encode::bulk(ctx.out, key);
        encode::array_len(ctx.out, items.len());
        for (s, m) in &items {
            encode::array_len(ctx.out, 2);
            encode::bulk(ctx.out, m);
            write_score(ctx.out, *s, proto);
        }
        return Ok(());
    }
    ctx.client.changed_nothing = true;
    encode::null_array(ctx.out, proto);
    Ok(())
}

/// ZRANDMEMBER key [count [WITHSCORES]] — random member(s).
fn zrandmember(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let count = a.get(2).map(|c| args::int(c)).transpose()?;
    let withscores = match a.get(3) {
        None => false,
        Some(w) if is(w, "withscores") && a.len() == 4 => true,
        Some(_) => return Err(CommandError::Syntax),
    };
    check_random_count(count, withscores)?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let zset = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])?;
    let proto = ctx.client.proto;
    let Some(count) = count else {
        // One member: a constant-time pick, without copying the sorted set.
        match zset.as_ref().and_then(|z| z.random(ctx.rng)) {
            Some((_, member)) => encode::bulk(ctx.out, member),
            None => encode::null(ctx.out, proto),
        }
        return Ok(());
    };
    // With a count, as Redis: a negative count is |count| independent picks, a small
    // positive one (at most a third of the set) distinct picks drawn until that many
    // differ, both O(count); a larger one, or a packed sorted set (whose picks walk it),
    // takes the copied set, O(N).
    if let Some(z) = zset.as_ref().filter(|z| z.random_is_constant_time()) {
        let rng = &mut *ctx.rng;
        if let Some((n, picks)) = sample_picks(count, z.len(), || z.random(rng), |&(_, m)| m) {
            write_scored_iter(ctx.out, proto, n, picks, withscores);
            return Ok(());
        }
    }
    let items = zset.map(|z| z.range(0, z.len().saturating_sub(1))).unwrap_or_default();
    drop(shard);
    let (_, picks) = random_picks(ctx.rng, items.len(), count);
    let picked: Vec<(f64, Vec<u8>)> = picks.map(|i| items[i].clone()).collect();
    write_scored(ctx.out, ctx.client.proto, &picked, withscores);
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Algebra {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

/// Reads a key as a sorted set, or a plain set with scores 1 (Redis accepts both as
/// inputs of the algebra).
fn scored_members(shard: &mut store::Shard, h: u64, key: &[u8], now: i64) -> Result<Option<Vec<(f64, Vec<u8>)>>, CommandError> {
    // The guard is consumed here, so that the plain-set fallback may borrow the shard.
    let as_zset = coll::read::<ZSet>(shard, h, key, now).map(|z| z.map(|z| z.range(0, z.len().saturating_sub(1))));
    match as_zset {
        Ok(members) => Ok(members),
        Err(_) => match coll::read::<Set>(shard, h, key, now)? {
            Some(s) => Ok(Some(s.members().into_iter().map(|m| (1.0, m)).collect())),
            None => Ok(None),
        },
    }
}

/// Parses `numkeys key ... [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]` from
/// a[start..] and computes the result, under the inputs' shard locks and `dest`'s, which
/// it returns still held (a STORE lands before anyone sees the inputs change).
fn algebra<'k>(
    ctx: &Ctx<'k>,
    a: &[&[u8]],
    start: usize,
    op: Algebra,
    allow_withscores: bool,
    dest: Option<&[u8]>,
) -> Result<(ZSet, bool, LockedShards<'k>), CommandError> {
    let name = String::from_utf8_lossy(a[0]).to_ascii_lowercase();
    let n = args::int(a[start])?;
    if n < 1 {
        return Err(CommandError::Owned(format!("ERR at least 1 input key is needed for '{name}' command")));
    }
    let n = n as usize;
    if n > a.len() - start - 1 {
        return Err(CommandError::Syntax);
    }
    let keys = &a[start + 1..start + 1 + n];
    let mut weights = vec![1.0f64; n];
    let mut aggregate = Aggregate::Sum;
    let mut withscores = false;
    let mut i = start + 1 + n;
    while i < a.len() {
        if is(a[i], "weights") && op != Algebra::Diff && i + n < a.len() {
            for (j, w) in weights.iter_mut().enumerate() {
                *w = parse_f64(a[i + 1 + j]).ok_or(CommandError::msg("ERR weight value is not a float"))?;
            }
            i += n + 1;
        } else if is(a[i], "aggregate") && op != Algebra::Diff && i + 1 < a.len() {
            aggregate = if is(a[i + 1], "sum") {
                Aggregate::Sum
            } else if is(a[i + 1], "min") {
                Aggregate::Min
            } else if is(a[i + 1], "max") {
                Aggregate::Max
            } else {
                return Err(CommandError::Syntax);
            };
            i += 2;
        } else if is(a[i], "withscores") && allow_withscores {
            withscores = true;
            i += 1;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let db = ctx.client.db;
    let mut locked = ctx.ks().lock_keys(db, keys.iter().copied().chain(dest));
    let mut inputs = Vec::with_capacity(n);
    for key in keys {
        let (h, shard) = locked.shard_for(db, key);
        let found = scored_members(shard, h, key, ctx.now_ms);
        ctx.lookup(key, !matches!(found, Ok(None)));
        inputs.push(found?);
    }
    let limits = ctx.shared.type_limits.zset();
    // Redis's aggregation (zunionInterAggregate): a sum that is NaN (inf + -inf) is 0;
    // MIN and MAX keep the current value unless the new one compares below or above it
    // (so NaN never wins, and of 0 and -0 the first stays).
    let combine = |acc: f64, x: f64| -> f64 {
        match aggregate {
            Aggregate::Sum => {
                let r = acc + x;
                if r.is_nan() {
                    0.0
                } else {
                    r
                }
            }
            Aggregate::Min => {
                if x < acc {
                    x
                } else {
                    acc
                }
            }
            Aggregate::Max => {
                if x > acc {
                    x
                } else {
                    acc
                }
            }
        }
    };
    // A weighted score that starts an element's aggregate: NaN (0 x inf) is 0. The
    // scores aggregated into it are weighted without that rule, as in Redis.
    let weighted = |s: f64, w: f64| {
        let r = s * w;
        if r.is_nan() {
            0.0
        } else {
            r
        }
    };
    // Redis takes the inputs smallest first (by cardinality, a stable sort; a missing
    // key counts as empty): which comes first decides the NaN and +-0 cases above.
    let mut order: Vec<usize> = (0..inputs.len()).collect();
    order.sort_by_key(|&i| inputs[i].as_ref().map_or(0, Vec::len));
    // Built as a skiplist, as Redis builds it, so that -0 (a weight of 0 on a negative
    // score) stays -0; `algebra_store` converts a small result as Redis does.
    let mut out = ZSet::new_large();
    match op {
        Algebra::Union => {
            let mut acc: hashbrown::HashMap<Vec<u8>, f64> = hashbrown::HashMap::new();
            for &i in &order {
                for (s, m) in inputs[i].iter().flatten() {
                    let v = weighted(*s, weights[i]);
                    acc.entry(m.clone()).and_modify(|x| *x = combine(*x, v)).or_insert(v);
                }
            }
            for (m, s) in acc {
                out.insert(&m, s, limits);
            }
        }
        Algebra::Inter => {
            if inputs.iter().all(Option::is_some) {
                let maps: Vec<hashbrown::HashMap<&[u8], f64>> = inputs
                    .iter()
                    .map(|i| i.iter().flatten().map(|(s, m)| (m.as_slice(), *s)).collect())
                    .collect();
                let first = order[0];
                for (s, m) in inputs[first].iter().flatten() {
                    let mut v = weighted(*s, weights[first]);
                    let mut all = true;
                    for &j in &order[1..] {
                        match maps[j].get(m.as_slice()) {
                            Some(x) => v = combine(v, *x * weights[j]),
                            None => {
                                all = false;
                                break;
                            }
                        }
                    }
                    if all {
                        out.insert(m, v, limits);
                    }
                }
            }
        }
        Algebra::Diff => {
            if let Some(Some(first)) = inputs.first() {
                for (s, m) in first {
                    if inputs[1..].iter().flatten().all(|other| !other.iter().any(|(_, x)| x == m)) {
                        out.insert(m, *s, limits);
                    }
                }
            }
        }
    }
    Ok((out, withscores, locked))
}

fn algebra_reply(ctx: &mut Ctx<'_>, a: &[&[u8]], op: Algebra) -> Result<(), CommandError> {
    let (z, withscores, locked) = algebra(ctx, a, 1, op, true, None)?;
    drop(locked);
    let items = z.range(0, z.len().saturating_sub(1));
    write_scored(ctx.out, ctx.client.proto, if z.is_empty() { &[] } else { &items }, withscores);
    Ok(())
}

fn algebra_store(ctx: &mut Ctx<'_>, a: &[&[u8]], op: Algebra) -> Result<(), CommandError> {
    let (z, _, mut locked) = algebra(ctx, a, 2, op, false, Some(a[1]))?;
    let n = z.len();
    // A result within the listpack limits is stored as a listpack, as Redis converts it
    // (which turns -0 into 0).
    let z = z.into_compact_if_fits(ctx.shared.type_limits.zset());
    let (h, shard) = locked.shard_for(ctx.client.db, a[1]);
    let event = match op {
        Algebra::Union => "zunionstore",
        Algebra::Inter => "zinterstore",
        Algebra::Diff => "zdiffstore",
    };
    ctx.client.changed_nothing = !coll::store(ctx, shard, h, a[1], z, (class::ZSET, event));
    encode::integer(ctx.out, n as i64);
    Ok(())
}

fn zunion(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_reply(ctx, a, Algebra::Union)
}
fn zinter(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_reply(ctx, a, Algebra::Inter)
}
fn zdiff(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_reply(ctx, a, Algebra::Diff)
}
fn zunionstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_store(ctx, a, Algebra::Union)
}
fn zinterstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_store(ctx, a, Algebra::Inter)
}
fn zdiffstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_store(ctx, a, Algebra::Diff)
}

/// ZINTERCARD numkeys key [key ...] [LIMIT limit] — size of the intersection.
fn zintercard(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let n = args::int(a[1])?;
    if n < 1 {
        return Err(CommandError::msg("ERR at least 1 input key is needed for 'zintercard' command"));
    }
    let n = n as usize;
    if n > a.len() - 2 {
        return Err(CommandError::Syntax);
    }
    let keys = &a[2..2 + n];
    let limit = args::intercard_limit(a, 2 + n)?;
    let mut words: Vec<&[u8]> = vec![b"zinter", b""];
    let n = keys.len().to_string();
    words[1] = n.as_bytes();
    words.extend_from_slice(keys);
    let (z, _, locked) = algebra(ctx, &words, 1, Algebra::Inter, false, None)?;
    drop(locked);
    let count = if limit > 0 { z.len().min(limit) } else { z.len() };
    encode::integer(ctx.out, count as i64);
    Ok(())
}

/// ZSCAN key cursor [MATCH pattern] [COUNT count] — [next cursor, [member, score,
/// ...]]. A large sorted set's member table is walked a few buckets per call
/// (`store::types::scan`); a small one comes whole with cursor 0, as in Redis.
fn zscan(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let scan = parse_scan_args(a)?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut body = Vec::new();
    let mut n = 0;
    let mut next = 0;
    if let Some(z) = coll::read_key::<ZSet>(ctx, &mut shard, h, a[1])? {
        next = z.scan(scan.cursor, scan.count, |m, s| {
            if scan.matches(m) {
                encode::bulk(&mut body, m);
                // Scores in SCAN replies are always bulk strings.
                write_score(&mut body, s, Proto::Resp2);
                n += 2;
            }
        });
    }
    write_scan_reply(ctx.out, next, n, &body);
    Ok(())
}

const ZSET: &[&str] = &["sortedset"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("zadd", -4, WRITE | DENYOOM | FAST, (1, 1, 1), ZSET, "sorted-set", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", zadd).since("1.2.0").args(ARGS_ZADD).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zincrby", 4, WRITE | DENYOOM | FAST, (1, 1, 1), ZSET, "sorted-set", "Increments the score of a member in a sorted set.", zincrby).since("1.2.0").args(ARGS_ZINCRBY).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrem", -3, WRITE | FAST, (1, 1, 1), ZSET, "sorted-set", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", zrem).since("1.2.0").args(ARGS_ZREM).complexity("O(M*log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zcard", 2, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the number of members in a sorted set.", zcard).since("1.2.0").args(ARGS_ZCARD).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zcount", 4, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the count of members in a sorted set that have scores within a range.", zcount).since("2.0.0").args(ARGS_ZCOUNT).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zlexcount", 4, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the number of members in a sorted set within a lexicographical range.", zlexcount).since("2.8.9").args(ARGS_ZLEXCOUNT).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zscore", 3, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the score of a member in a sorted set.", zscore).since("1.2.0").args(ARGS_ZSCORE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zmscore", -3, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the score of one or more members in a sorted set.", zmscore).since("6.2.0").args(ARGS_ZMSCORE).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrank", 3, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the index of a member in a sorted set ordered by ascending scores.", zrank).since("2.0.0").args(ARGS_ZRANK).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrevrank", 3, READONLY | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the index of a member in a sorted set ordered by descending scores.", zrevrank).since("2.0.0").args(ARGS_ZREVRANK).complexity("O(log(N))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrange", -4, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns members in a sorted set within a range of indexes.", zrange).since("1.2.0").args(ARGS_ZRANGE).complexity("O(log(N)+M)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrangestore", -5, WRITE | DENYOOM, (1, 2, 1), ZSET, "sorted-set", "Stores a range of members from sorted set in a key.", zrangestore).since("6.2.0").args(ARGS_ZRANGESTORE).complexity("O(log(N)+M)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
    spec("zrangebyscore", -4, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns members in a sorted set within a range of scores.", zrangebyscore).since("1.0.5").args(ARGS_ZRANGEBYSCORE).complexity("O(log(N)+M) or O(log(N))").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrevrangebyscore", -4, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns members in a sorted set within a range of scores in reverse order.", zrevrangebyscore).since("2.2.0").args(ARGS_ZREVRANGEBYSCORE).complexity("O(log(N)+M) or O(log(N))").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrangebylex", -4, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns members in a sorted set within a lexicographical range.", zrangebylex).since("2.8.9").args(ARGS_ZRANGEBYLEX).complexity("O(log(N)+M) or O(log(N))").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrevrangebylex", -4, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns members in a sorted set within a lexicographical range in reverse order.", zrevrangebylex).since("2.8.9").args(ARGS_ZREVRANGEBYLEX).complexity("O(log(N)+M) or O(log(N))").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zrevrange", -4, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns members in a sorted set within a range of indexes in reverse order.", zrevrange).since("1.2.0").args(ARGS_ZREVRANGE).complexity("O(log(N)+M)").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zremrangebyrank", 4, WRITE, (1, 1, 1), ZSET, "sorted-set", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", zremrangebyrank).since("2.0.0").args(ARGS_ZREMRANGEBYRANK).complexity("O(log(N)+M)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zremrangebyscore", 4, WRITE, (1, 1, 1), ZSET, "sorted-set", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", zremrangebyscore).since("1.2.0").args(ARGS_ZREMRANGEBYSCORE).complexity("O(log(N)+M)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zremrangebylex", 4, WRITE, (1, 1, 1), ZSET, "sorted-set", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", zremrangebylex).since("2.8.9").args(ARGS_ZREMRANGEBYLEX).complexity("O(log(N)+M)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zpopmin", -2, WRITE | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zpopmin).since("5.0.0").args(ARGS_ZPOPMIN).complexity("O(log(N)*M)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zpopmax", -2, WRITE | FAST, (1, 1, 1), ZSET, "sorted-set", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", zpopmax).since("5.0.0").args(ARGS_ZPOPMAX).complexity("O(log(N)*M)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("zmpop", -4, WRITE | WATCH_CHANGED_ONLY, (0, 0, 0), ZSET, "sorted-set", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", zmpop).since("7.0.0").args(ARGS_ZMPOP).complexity("O(K) or O(M*log(N))").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
    spec("zrandmember", -2, READONLY, (1, 1, 1), ZSET, "sorted-set", "Returns one or more random members from a sorted set.", zrandmember).since("6.2.0").args(ARGS_ZRANDMEMBER).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("zunion", -3, READONLY, (0, 0, 0), ZSET, "sorted-set", "Returns the union of multiple sorted sets.", zunion).since("6.2.0").args(ARGS_ZUNION).complexity("O(N) or O(M*log(M))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
    spec("zinter", -3, READONLY, (0, 0, 0), ZSET, "sorted-set", "Returns the intersect of multiple sorted sets.", zinter).since("6.2.0").args(ARGS_ZINTER).complexity("O(N*K) or O(M*log(M))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
    spec("zdiff", -3, READONLY, (0, 0, 0), ZSET, "sorted-set", "Returns the difference between multiple sorted sets.", zdiff).since("6.2.0").args(ARGS_ZDIFF).complexity("O(L + (N-K)log(N))").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
    spec("zunionstore", -4, WRITE | DENYOOM, (1, 1, 1), ZSET, "sorted-set", "Stores the union of multiple sorted sets in a key.", zunionstore).since("2.0.0").args(ARGS_ZUNIONSTORE).complexity("O(N) or O(M log(M))").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[1], 2).writes(Writes::FirstKey),
    spec("zinterstore", -4, WRITE | DENYOOM, (1, 1, 1), ZSET, "sorted-set", "Stores the intersect of multiple sorted sets in a key.", zinterstore).since("2.0.0").args(ARGS_ZINTERSTORE).complexity("O(N*K) or O(M*log(M))").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[1], 2).writes(Writes::FirstKey),
    spec("zdiffstore", -4, WRITE | DENYOOM, (1, 1, 1), ZSET, "sorted-set", "Stores the difference of multiple sorted sets in a key.", zdiffstore).since("6.2.0").args(ARGS_ZDIFFSTORE).complexity("O(L + (N-K)log(N))").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[1], 2).writes(Writes::FirstKey),
    spec("zintercard", -3, READONLY, (0, 0, 0), ZSET, "sorted-set", "Returns the number of members of the intersect of multiple sorted sets.", zintercard).since("7.0.0").args(ARGS_ZINTERCARD).complexity("O(N*K)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
    spec("zscan", -3, READONLY, (1, 1, 1), ZSET, "sorted-set", "Iterates over members and scores of a sorted set.", zscan).since("2.8.0").args(ARGS_ZSCAN).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_ZADD: &[Arg] = &[arg("key", Key).key_spec(0), arg("condition", OneOf).since("3.0.2").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX")]), arg("comparison", OneOf).since("6.2.0").optional().args(&[arg("gt", PureToken).token("GT"), arg("lt", PureToken).token("LT")]), arg("change", PureToken).token("CH").since("3.0.2").optional(), arg("increment", PureToken).token("INCR").since("3.0.2").optional(), arg("score_member", Block).multiple().args(&[arg("score", Double), arg("member", String)])];
    pub const ARGS_ZINCRBY: &[Arg] = &[arg("key", Key).key_spec(0), arg("increment", Integer), arg("member", String)];
    pub const ARGS_ZREM: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_ZCARD: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_ZCOUNT: &[Arg] = &[arg("key", Key).key_spec(0), arg("min", Double), arg("max", Double)];
    pub const ARGS_ZLEXCOUNT: &[Arg] = &[arg("key", Key).key_spec(0), arg("min", String), arg("max", String)];
    pub const ARGS_ZSCORE: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String)];
    pub const ARGS_ZMSCORE: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_ZRANK: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String)];
    pub const ARGS_ZREVRANK: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String)];
    pub const ARGS_ZRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", String), arg("stop", String), arg("sortby", OneOf).since("6.2.0").optional().args(&[arg("byscore", PureToken).token("BYSCORE"), arg("bylex", PureToken).token("BYLEX")]), arg("rev", PureToken).token("REV").since("6.2.0").optional(), arg("offset_count", Block).token("LIMIT").since("6.2.0").optional().args(&[arg("offset", Integer), arg("count", Integer)]), arg("withscores", PureToken).token("WITHSCORES").optional()];
    pub const ARGS_ZRANGESTORE: &[Arg] = &[arg("dst", Key).key_spec(0), arg("src", Key).key_spec(1), arg("min", String), arg("max", String), arg("sortby", OneOf).optional().args(&[arg("byscore", PureToken).token("BYSCORE"), arg("bylex", PureToken).token("BYLEX")]), arg("rev", PureToken).token("REV").optional(), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)])];
    pub const ARGS_ZRANGEBYSCORE: &[Arg] = &[arg("key", Key).key_spec(0), arg("min", Double), arg("max", Double), arg("withscores", PureToken).token("WITHSCORES").since("2.0.0").optional(), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)])];
    pub const ARGS_ZREVRANGEBYSCORE: &[Arg] = &[arg("key", Key).key_spec(0), arg("max", Double), arg("min", Double), arg("withscores", PureToken).token("WITHSCORES").optional(), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)])];
    pub const ARGS_ZRANGEBYLEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("min", String), arg("max", String), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)])];
    pub const ARGS_ZREVRANGEBYLEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("max", String), arg("min", String), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)])];
    pub const ARGS_ZREVRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", Integer), arg("stop", Integer), arg("withscores", PureToken).token("WITHSCORES").optional()];
    pub const ARGS_ZREMRANGEBYRANK: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", Integer), arg("stop", Integer)];
    pub const ARGS_ZREMRANGEBYSCORE: &[Arg] = &[arg("key", Key).key_spec(0), arg("min", Double), arg("max", Double)];
    pub const ARGS_ZREMRANGEBYLEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("min", String), arg("max", String)];
    pub const ARGS_ZPOPMIN: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).optional()];
    pub const ARGS_ZPOPMAX: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).optional()];
    pub const ARGS_ZMPOP: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("where", OneOf).args(&[arg("min", PureToken).token("MIN"), arg("max", PureToken).token("MAX")]), arg("count", Integer).token("COUNT").optional()];
    pub const ARGS_ZRANDMEMBER: &[Arg] = &[arg("key", Key).key_spec(0), arg("options", Block).optional().args(&[arg("count", Integer), arg("withscores", PureToken).token("WITHSCORES").optional()])];
    pub const ARGS_ZUNION: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("weight", Integer).token("WEIGHTS").optional().multiple(), arg("aggregate", OneOf).token("AGGREGATE").optional().args(&[arg("sum", PureToken).token("SUM"), arg("min", PureToken).token("MIN"), arg("max", PureToken).token("MAX")]), arg("withscores", PureToken).token("WITHSCORES").optional()];
    pub const ARGS_ZINTER: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("weight", Integer).token("WEIGHTS").optional().multiple(), arg("aggregate", OneOf).token("AGGREGATE").optional().args(&[arg("sum", PureToken).token("SUM"), arg("min", PureToken).token("MIN"), arg("max", PureToken).token("MAX")]), arg("withscores", PureToken).token("WITHSCORES").optional()];
    pub const ARGS_ZDIFF: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("withscores", PureToken).token("WITHSCORES").optional()];
    pub const ARGS_ZUNIONSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("numkeys", Integer), arg("key", Key).key_spec(1).multiple(), arg("weight", Integer).token("WEIGHTS").optional().multiple(), arg("aggregate", OneOf).token("AGGREGATE").optional().args(&[arg("sum", PureToken).token("SUM"), arg("min", PureToken).token("MIN"), arg("max", PureToken).token("MAX")])];
    pub const ARGS_ZINTERSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("numkeys", Integer), arg("key", Key).key_spec(1).multiple(), arg("weight", Integer).token("WEIGHTS").optional().multiple(), arg("aggregate", OneOf).token("AGGREGATE").optional().args(&[arg("sum", PureToken).token("SUM"), arg("min", PureToken).token("MIN"), arg("max", PureToken).token("MAX")])];
    pub const ARGS_ZDIFFSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("numkeys", Integer), arg("key", Key).key_spec(1).multiple()];
    pub const ARGS_ZINTERCARD: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("limit", Integer).token("LIMIT").optional()];
    pub const ARGS_ZSCAN: &[Arg] = &[arg("key", Key).key_spec(0), arg("cursor", Integer), arg("pattern", Pattern).token("MATCH").optional(), arg("count", Integer).token("COUNT").optional()];
}
use docs_args::*;
