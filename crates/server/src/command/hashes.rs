//! Hash commands: HSET and friends, counters, random fields and HSCAN. Values live in
//! `store::types::hash::Hash` (listpack while small, hashtable beyond the thresholds).

use resp::{encode, Proto};
use store::events::class;
use store::types::hash::Hash;
use store::types::long_double::{self, AddError};
use store::types::string as algo;

use super::args::{self, is};
use super::collections::{self as coll};
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use super::key_flags as kf;
use super::keyspace_events::notify;

/// HSET key field value [field value ...] — number of fields added.
fn hset(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let added = hset_pairs(ctx, a, "hset")?;
    encode::integer(ctx.out, added);
    Ok(())
}

/// HMSET key field value [field value ...] — OK.
fn hmset(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    hset_pairs(ctx, a, "hmset")?;
    ctx.ok();
    Ok(())
}

fn hset_pairs(ctx: &mut Ctx<'_>, a: &[&[u8]], name: &str) -> Result<i64, CommandError> {
    if a.len() % 2 != 0 {
        return Err(CommandError::Arity(name.into()));
    }
    let limits = ctx.shared.type_limits.hash();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut hash = coll::get_or_create::<Hash>(ctx, &mut shard, h, a[1])?;
    let mut added = 0;
    for pair in a[2..].chunks_exact(2) {
        if hash.set(pair[0], pair[1], limits) {
            added += 1;
        }
    }
    notify(ctx, class::HASH, "hset", a[1]);
    // Redis counts every pair set, new or not.
    ctx.client.changes = Some(((a.len() - 2) / 2) as u64);
    Ok(added)
}

/// HSETNX key field value — 1 if set, 0 if the field existed.
fn hsetnx(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let limits = ctx.shared.type_limits.hash();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut hash = coll::get_or_create::<Hash>(ctx, &mut shard, h, a[1])?;
    let set = hash.get(a[2]).is_none() && hash.set(a[2], a[3], limits);
    if set {
        notify(ctx, class::HASH, "hset", a[1]);
    }
    ctx.client.changed_nothing = !set;
    encode::integer(ctx.out, i64::from(set));
    Ok(())
}

/// HGET key field — the value or nil.
fn hget(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let hash = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])?;
    let v = hash.as_ref().and_then(|hash| hash.field(a[2]));
    match v {
        Some(v) => encode::bulk(ctx.out, v),
        None => encode::null(ctx.out, ctx.client.proto),
    }
    Ok(())
}

/// HMGET key field [field ...] — values or nils.
fn hmget(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let hash = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])?;
    encode::array_len(ctx.out, a.len() - 2);
    for f in &a[2..] {
        match hash.as_ref().and_then(|hash| hash.field(f)) {
            Some(v) => encode::bulk(ctx.out, v),
            None => encode::null(ctx.out, ctx.client.proto),
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Part {
    Fields,
    Values,
    Both,
}

/// HGETALL / HKEYS / HVALS.
fn dump(ctx: &mut Ctx<'_>, key: &[u8], part: Part) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, key);
    let proto = ctx.client.proto;
    let found = coll::read_key::<Hash>(ctx, &mut shard, h, key)?;
    let out = &mut *ctx.out;
    let Some(hash) = found else {
        match part {
            Part::Both => encode::map_len(out, 0, proto),
            _ => encode::array_len(out, 0),
        }
        return Ok(());
    };
    match part {
        Part::Both => encode::map_len(out, hash.len(), proto),
        _ => encode::array_len(out, hash.len()),
    }
    for (f, v) in hash.iter() {
        match part {
            Part::Fields => encode::bulk(out, f),
            Part::Values => encode::bulk(out, v),
            Part::Both => {
                encode::bulk(out, f);
                encode::bulk(out, v);
            }
        }
    }
    Ok(())
}

/// HGETALL key — a map of fields to values.
fn hgetall(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    dump(ctx, a[1], Part::Both)
}
/// HKEYS key — the fields.
fn hkeys(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    dump(ctx, a[1], Part::Fields)
}
/// HVALS key — the values.
fn hvals(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    dump(ctx, a[1], Part::Values)
}

/// HDEL key field [field ...] — number removed; an emptied hash is deleted.
fn hdel(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut removed = 0;
    if let Some(mut hash) = coll::get_key::<Hash>(ctx, &mut shard, h, a[1])? {
        for f in &a[2..] {
            if hash.remove(f) {
                removed += 1;
            }
        }
    }
    if removed > 0 {
        notify(ctx, class::HASH, "hdel", a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    ctx.client.changes = Some(removed as u64);
    ctx.client.changed_nothing = removed == 0;
    encode::integer(ctx.out, removed);
    Ok(())
}

/// HLEN key — number of fields.
fn hlen(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])?.map_or(0, |hash| hash.len());
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// HSTRLEN key field — length of the value, 0 when absent.
fn hstrlen(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])?.and_then(|hash| hash.field(a[2]).map(<[u8]>::len)).unwrap_or(0);
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// HEXISTS key field — 1 or 0.
fn hexists(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let found = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])?.is_some_and(|hash| hash.field(a[2]).is_some());
    encode::integer(ctx.out, i64::from(found));
    Ok(())
}

/// HINCRBY key field increment — the new value.
fn hincrby(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let delta = args::int(a[3])?;
    let limits = ctx.shared.type_limits.hash();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut hash = coll::get_or_create::<Hash>(ctx, &mut shard, h, a[1])?;
    let current = match hash.get(a[2]) {
        None => 0,
        Some(v) => algo::parse_i64(v).ok_or(CommandError::msg("ERR hash value is not an integer"))?,
    };
    let new = algo::incr_by(current, delta).ok_or(CommandError::msg("ERR increment or decrement would overflow"));
    let new = match new {
        Ok(n) => n,
        Err(e) => {
            drop(hash);
            coll::drop_if_empty(&mut shard, h, a[1], ctx.now_ms);
            return Err(e);
        }
    };
    hash.set(a[2], itoa::Buffer::new().format(new).as_bytes(), limits);
    notify(ctx, class::HASH, "hincrby", a[1]);
    encode::integer(ctx.out, new);
    Ok(())
}

/// HINCRBYFLOAT key field increment — the new value as a bulk string.
fn hincrbyfloat(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    // The increment is checked before the key, as in Redis.
    match long_double::check(a[3]) {
        None => return Err(CommandError::NotFloat),
        Some(false) => return Err(CommandError::msg("ERR value is NaN or Infinity")),
        Some(true) => {}
    }
    let limits = ctx.shared.type_limits.hash();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut hash = coll::get_or_create::<Hash>(ctx, &mut shard, h, a[1])?;
    let current = hash.get(a[2]).map_or(b"0".to_vec(), <[u8]>::to_vec);
    // In C long double, as Redis (store::types::long_double).
    let text = match long_double::add(&current, a[3]) {
        Ok(text) => text,
        Err(e) => {
            drop(hash);
            coll::drop_if_empty(&mut shard, h, a[1], ctx.now_ms);
            return Err(match e {
                AddError::Current => CommandError::msg("ERR hash value is not a float"),
                AddError::Increment => CommandError::NotFloat,
                AddError::NotFinite => CommandError::msg("ERR increment would produce NaN or Infinity"),
            });
        }
    };
    hash.set(a[2], &text, limits);
    notify(ctx, class::HASH, "hincrbyfloat", a[1]);
    // Logged as the value it made (Redis: HSET key field value).
    ctx.propagate_as(|| vec![crate::propagate::record(&[b"HSET", a[1], a[2], &text])]);
    encode::bulk(ctx.out, &text);
    Ok(())
}

/// HRANDFIELD key [count [WITHVALUES]] — random field(s).
fn hrandfield(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let count = a.get(2).map(|c| args::int(c)).transpose()?;
    let with_values = match a.get(3) {
        None => false,
        Some(w) if is(w, "withvalues") && a.len() == 4 => true,
        Some(_) => return Err(CommandError::Syntax),
    };
    check_random_count(count, with_values)?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let proto = ctx.client.proto;
    let hash = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])?;
    let Some(count) = count else {
        // One field: a constant-time pick, without copying the hash.
        match hash.as_ref().and_then(|hash| hash.random(ctx.rng)) {
            Some((field, _)) => encode::bulk(ctx.out, field),
            None => encode::null(ctx.out, proto),
        }
        return Ok(());
    };
    // With a count, as Redis: a negative count is |count| independent picks, a small
    // positive one (at most a third of the hash) distinct picks drawn until that many
    // differ, both O(count); a larger one, or a packed hash (whose picks walk it), takes
    // the copied hash, O(N).
    if let Some(hash) = hash.as_ref().filter(|h| h.random_is_constant_time()) {
        let rng = &mut *ctx.rng;
        if let Some((n, picks)) = sample_picks(count, hash.len(), || hash.random(rng), |&(f, _)| f) {
            write_pairs(ctx.out, proto, picks, n, with_values);
            return Ok(());
        }
    }
    let pairs: Vec<(Vec<u8>, Vec<u8>)> =
        hash.map(|hash| hash.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect()).unwrap_or_default();
    drop(shard);
    let (n, picks) = random_picks(ctx.rng, pairs.len(), count);
    write_pairs(ctx.out, proto, picks.map(|i| (&pairs[i].0[..], &pairs[i].1[..])), n, with_values);
    Ok(())
}

/// Most elements a negative count may ask for. Redis has no bound (a huge negative count
/// makes it emit replies until memory runs out); Basalt refuses past this, like Redis's
/// own "out of range" for WITHVALUES counts past LONG_MAX/2.
pub const MAX_RANDOM_REPEATS: u64 = 10_000_000;

/// Redis's range rule for HRANDFIELD/ZRANDMEMBER/SRANDMEMBER counts, plus Basalt's bound.
pub fn check_random_count(count: Option<i64>, paired: bool) -> Result<(), CommandError> {
    if count == Some(i64::MIN) {
        return Err(CommandError::msg(
            "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
        ));
    }
    if let Some(c) = count {
        if (paired && c < -(i64::MAX / 2)) || (c < 0 && c.unsigned_abs() > MAX_RANDOM_REPEATS) {
            return Err(CommandError::msg("ERR value is out of range"));
        }
    }
    Ok(())
}

/// Counted random picks by sampling, as Redis does for large collections: a negative
/// count gives |count| independent picks (streamed), a positive count of at most a third
/// of `len` distinct picks, drawn until that many differ (by `key`); both O(count).
/// `pick` draws one element in constant time. None when the caller must copy the
/// collection instead (a larger positive count; zero).
pub fn sample_picks<'p, T: 'p, K: Eq + std::hash::Hash + 'p>(
    count: i64,
    len: usize,
    mut pick: impl FnMut() -> Option<T> + 'p,
    key: impl Fn(&T) -> K,
) -> Option<(usize, Box<dyn Iterator<Item = T> + 'p>)> {
    if count < 0 {
        let n = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        return Some((n, Box::new((0..n).filter_map(move |_| pick()))));
    }
    let want = count as u64;
    if want == 0 || want.saturating_mul(3) > len as u64 {
        return None;
    }
    let want = want as usize;
    let mut picked = hashbrown::HashMap::with_capacity(want);
    while picked.len() < want {
        if let Some(t) = pick() {
            picked.insert(key(&t), t);
        }
    }
    Some((want, Box::new(picked.into_values())))
}

/// A random pick of `count` indexes out of `len` with Redis's rule: a positive count
/// gives distinct elements (at most `len`), a negative count |count| elements that may
/// repeat. Returns how many, and the indexes lazily (a huge negative count is not
/// materialized).
pub fn random_picks(rng: &mut fastrand::Rng, len: usize, count: i64) -> (usize, Box<dyn Iterator<Item = usize>>) {
    if len == 0 || count == 0 {
        return (0, Box::new(std::iter::empty()));
    }
    if count < 0 {
        let n = usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX);
        let mut rng = rng.fork();
        return (n, Box::new((0..n).map(move |_| rng.usize(..len))));
    }
    let n = (count as u64).min(len as u64) as usize;
    let mut all: Vec<usize> = (0..len).collect();
    rng.shuffle(&mut all);
    all.truncate(n);
    (n, Box::new(all.into_iter()))
}

/// Writes field/value (or member/score-like) pairs: flat in RESP2, as [a, b] pairs in
/// RESP3 when both parts are wanted.
fn write_pairs<'a>(
    out: &mut Vec<u8>,
    proto: Proto,
    pairs: impl Iterator<Item = (&'a [u8], &'a [u8])>,
    n: usize,
    both: bool,
) {
    if !both {
        encode::array_len(out, n);
        for (f, _) in pairs {
            encode::bulk(out, f);
        }
    } else if proto == Proto::Resp3 {
        encode::array_len(out, n);
        for (f, v) in pairs {
            encode::array_len(out, 2);
            encode::bulk(out, f);
            encode::bulk(out, v);
        }
    } else {
        encode::array_len(out, n * 2);
        for (f, v) in pairs {
            encode::bulk(out, f);
            encode::bulk(out, v);
        }
    }
}

/// HSCAN, SSCAN and ZSCAN's arguments after the key.
pub struct ScanArgs<'a> {
    pub cursor: u64,
    /// MATCH's pattern; None for none or `*`.
    pub pattern: Option<&'a [u8]>,
    /// COUNT (default 10, as Redis).
    pub count: usize,
}

impl ScanArgs<'_> {
    pub fn matches(&self, item: &[u8]) -> bool {
        self.pattern.is_none_or(|p| store::glob::glob_match(p, item, false))
    }
}

/// Parses `cursor [MATCH pattern] [COUNT count]` of HSCAN, SSCAN and ZSCAN.
pub fn parse_scan_args<'a>(a: &[&'a [u8]]) -> Result<ScanArgs<'a>, CommandError> {
    let cursor = std::str::from_utf8(a[2]).ok().and_then(|s| s.parse::<u64>().ok().or_else(|| s.parse::<i64>().ok().map(|n| n as u64)));
    let Some(cursor) = cursor else {
        return Err(CommandError::msg("ERR invalid cursor"));
    };
    let mut args = ScanArgs { cursor, pattern: None, count: 10 };
    let mut i = 3;
    while i < a.len() {
        let Some(v) = a.get(i + 1) else { return Err(CommandError::Syntax) };
        if is(a[i], "match") {
            args.pattern = Some(*v).filter(|p| *p != b"*");
        } else if is(a[i], "count") {
            let count = args::int(v)?;
            if count < 1 {
                return Err(CommandError::Syntax);
            }
            args.count = usize::try_from(count).unwrap_or(usize::MAX);
        } else {
            return Err(CommandError::Syntax);
        }
        i += 2;
    }
    Ok(args)
}

/// Writes a *SCAN reply: the next cursor, then the `n` items already encoded in `body`.
pub fn write_scan_reply(out: &mut Vec<u8>, cursor: u64, n: usize, body: &[u8]) {
    encode::array_len(out, 2);
    encode::bulk(out, itoa::Buffer::new().format(cursor).as_bytes());
    encode::array_len(out, n);
    out.extend_from_slice(body);
}

/// HSCAN key cursor [MATCH pattern] [COUNT count] — [next cursor, [field, value, ...]].
/// A table-encoded hash is walked a few buckets per call (`store::types::scan`); a
/// small one comes whole with cursor 0, as in Redis.
fn hscan(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let scan = parse_scan_args(a)?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut body = Vec::new();
    let mut n = 0;
    let mut next = 0;
    if let Some(hash) = coll::read_key::<Hash>(ctx, &mut shard, h, a[1])? {
        next = hash.scan(scan.cursor, scan.count, |f, v| {
            if scan.matches(f) {
                encode::bulk(&mut body, f);
                encode::bulk(&mut body, v);
                n += 2;
            }
        });
    }
    write_scan_reply(ctx.out, next, n, &body);
    Ok(())
}

const HASH: &[&str] = &["hash"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("hset", -4, WRITE | DENYOOM | FAST, (1, 1, 1), HASH, "hash", "Creates or modifies the value of a field in a hash.", hset).since("2.0.0").args(ARGS_HSET).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hmset", -4, WRITE | DENYOOM | FAST, (1, 1, 1), HASH, "hash", "Sets the values of multiple fields.", hmset).since("2.0.0").args(ARGS_HMSET).complexity("O(N)").deprecated("4.0.0").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hsetnx", 4, WRITE | DENYOOM | FAST, (1, 1, 1), HASH, "hash", "Sets the value of a field in a hash only when the field doesn't exist.", hsetnx).since("2.0.0").args(ARGS_HSETNX).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hget", 3, READONLY | FAST, (1, 1, 1), HASH, "hash", "Returns the value of a field in a hash.", hget).since("2.0.0").args(ARGS_HGET).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hmget", -3, READONLY | FAST, (1, 1, 1), HASH, "hash", "Returns the values of all fields in a hash.", hmget).since("2.0.0").args(ARGS_HMGET).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hgetall", 2, READONLY, (1, 1, 1), HASH, "hash", "Returns all fields and values in a hash.", hgetall).since("2.0.0").args(ARGS_HGETALL).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("hkeys", 2, READONLY, (1, 1, 1), HASH, "hash", "Returns all fields in a hash.", hkeys).since("2.0.0").args(ARGS_HKEYS).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("hvals", 2, READONLY, (1, 1, 1), HASH, "hash", "Returns all values in a hash.", hvals).since("2.0.0").args(ARGS_HVALS).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("hdel", -3, WRITE | FAST, (1, 1, 1), HASH, "hash", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", hdel).since("2.0.0").args(ARGS_HDEL).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hlen", 2, READONLY | FAST, (1, 1, 1), HASH, "hash", "Returns the number of fields in a hash.", hlen).since("2.0.0").args(ARGS_HLEN).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hstrlen", 3, READONLY | FAST, (1, 1, 1), HASH, "hash", "Returns the length of the value of a field.", hstrlen).since("3.2.0").args(ARGS_HSTRLEN).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hexists", 3, READONLY | FAST, (1, 1, 1), HASH, "hash", "Determines whether a field exists in a hash.", hexists).since("2.0.0").args(ARGS_HEXISTS).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hincrby", 4, WRITE | DENYOOM | FAST, (1, 1, 1), HASH, "hash", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", hincrby).since("2.0.0").args(ARGS_HINCRBY).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hincrbyfloat", 4, WRITE | DENYOOM | FAST, (1, 1, 1), HASH, "hash", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", hincrbyfloat).since("2.6.0").args(ARGS_HINCRBYFLOAT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("hrandfield", -2, READONLY, (1, 1, 1), HASH, "hash", "Returns one or more random fields from a hash.", hrandfield).since("6.2.0").args(ARGS_HRANDFIELD).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("hscan", -3, READONLY, (1, 1, 1), HASH, "hash", "Iterates over fields and values of a hash.", hscan).since("2.8.0").args(ARGS_HSCAN).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_HSET: &[Arg] = &[arg("key", Key).key_spec(0), arg("field_value", Block).multiple().args(&[arg("field", String), arg("value", String)])];
    pub const ARGS_HMSET: &[Arg] = &[arg("key", Key).key_spec(0), arg("field_value", Block).multiple().args(&[arg("field", String), arg("value", String)])];
    pub const ARGS_HSETNX: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String), arg("value", String)];
    pub const ARGS_HGET: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String)];
    pub const ARGS_HMGET: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String).multiple()];
    pub const ARGS_HGETALL: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_HKEYS: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_HVALS: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_HDEL: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String).multiple()];
    pub const ARGS_HLEN: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_HSTRLEN: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String)];
    pub const ARGS_HEXISTS: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String)];
    pub const ARGS_HINCRBY: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String), arg("increment", Integer)];
    pub const ARGS_HINCRBYFLOAT: &[Arg] = &[arg("key", Key).key_spec(0), arg("field", String), arg("increment", Double)];
    pub const ARGS_HRANDFIELD: &[Arg] = &[arg("key", Key).key_spec(0), arg("options", Block).optional().args(&[arg("count", Integer), arg("withvalues", PureToken).token("WITHVALUES").optional()])];
    pub const ARGS_HSCAN: &[Arg] = &[arg("key", Key).key_spec(0), arg("cursor", Integer), arg("pattern", Pattern).token("MATCH").optional(), arg("count", Integer).token("COUNT").optional()];
}
use docs_args::*;
