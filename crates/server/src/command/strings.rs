//! String commands: GET/SET and friends, counters, ranges, bits and LCS.
//!
//! Handlers parse and validate, lock the shards of their keys, and call the pure
//! algorithms in `store::types::string`. Values are created through `Entry::new`, which
//! picks Redis's encoding (int, embstr, raw) from the content.

use resp::{encode, Proto};
use store::entry::{Entry, Payload, StrRef, ValueRef};
use store::events::class;
use store::shard::Shard;
use store::types::long_double::{self, AddError};
use store::types::string as algo;

use super::args::{self, is, ExpireUnit};
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};
use super::key_flags as kf;
use crate::propagate::record;
use super::keyspace_events::notify;

const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// Reads a live key as a string: Ok(None) when absent, WRONGTYPE when not a string.
/// Records the access (LRU) unless the client asked for NO-TOUCH.
fn read_str<'s>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    ctx: &Ctx<'_>,
) -> Result<Option<StrRef<'s>>, CommandError> {
    match shard.read(hash, key, ctx.now_ms, ctx.access()) {
        None => Ok(None),
        Some(e) => {
            match e.value() {
                ValueRef::Str(s) => Ok(Some(s)),
                ValueRef::Obj(_) => Err(CommandError::WrongType),
            }
        }
    }
}

/// [`read_str`] as Redis's read lookup: a keyspace hit when the key exists (whatever
/// its type), a miss and its `keymiss` event when not ([`Ctx::lookup`]).
fn lookup_str<'s>(
    shard: &'s mut Shard,
    hash: u64,
    key: &[u8],
    ctx: &Ctx<'_>,
) -> Result<Option<StrRef<'s>>, CommandError> {
    let found = read_str(shard, hash, key, ctx);
    ctx.lookup(key, !matches!(found, Ok(None)));
    found
}

fn reply_str(out: &mut Vec<u8>, s: StrRef<'_>) {
    match s {
        StrRef::Bytes(b) => encode::bulk(out, b),
        StrRef::Int(n) => encode::bulk_integer(out, n),
    }
}

fn reply_opt_str(out: &mut Vec<u8>, s: Option<StrRef<'_>>, proto: Proto) {
    match s {
        Some(s) => reply_str(out, s),
        None => encode::null(out, proto),
    }
}

/// GET key — bulk string or nil.
fn get(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let v = lookup_str(&mut shard, h, a[1], ctx)?;
    reply_opt_str(ctx.out, v, ctx.client.proto);
    Ok(())
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Cond {
    Always,
    IfAbsent,
    IfPresent,
}

#[derive(Clone, Copy)]
enum Ttl {
    Clear,
    Keep,
    At(i64),
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL] — OK, nil, or the old
/// value with GET.
fn set(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let o = args::string_options(&a[3..], args::OptionSet::Set)?;
    let cond = if o.nx {
        Cond::IfAbsent
    } else if o.xx {
        Cond::IfPresent
    } else {
        Cond::Always
    };
    let ttl = match o.expire {
        Some((unit, v)) => Ttl::At(args::positive_expire_at_ms(v, unit, ctx.now_ms, "set")?),
        None if o.keep_ttl => Ttl::Keep,
        None => Ttl::Clear,
    };
    let want_get = o.get;
    let reply = set_generic(ctx, a[1], a[2], cond, ttl, want_get)?;
    match (&reply, ttl) {
        // Not set (NX / XX): nothing changed, nothing to log (as Redis).
        (SetReply::NotSet | SetReply::Old(_, false), _) => ctx.client.changed_nothing = true,
        // A relative or second-grained expiry goes to the log as an absolute PXAT.
        (_, Ttl::At(t)) if !o.expire.is_some_and(|(unit, _)| unit == ExpireUnit::AbsMillis) => log_set_pxat(ctx, a[1], a[2], t),
        _ => {}
    }
    match reply {
        SetReply::Ok => ctx.ok(),
        SetReply::NotSet => ctx.null(),
        SetReply::Old(old, _) => match old {
            Some(v) => encode::bulk(ctx.out, &v),
            None => ctx.null(),
        },
    }
    Ok(())
}

enum SetReply {
    Ok,
    NotSet,
    /// SET ... GET and GETSET: the old value, and whether the value was set.
    Old(Option<Vec<u8>>, bool),
}

fn set_generic(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    value: &[u8],
    cond: Cond,
    ttl: Ttl,
    want_old: bool,
) -> Result<SetReply, CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, key);
    let found = shard.get(h, key, ctx.now_ms);
    if want_old {
        // SET ... GET and GETSET read the key as Redis's GET does.
        ctx.lookup(key, found.is_some());
    }
    let (exists, old_ttl, old) = match found {
        None => (false, None, None),
        Some(e) => {
            let old = match e.value() {
                ValueRef::Str(s) => want_old.then(|| s.to_vec()),
                ValueRef::Obj(_) if want_old => return Err(CommandError::WrongType),
                ValueRef::Obj(_) => None,
            };
            (true, e.expire_at_ms(), old)
        }
    };
    let allowed = match cond {
        Cond::Always => true,
        Cond::IfAbsent => !exists,
        Cond::IfPresent => exists,
    };
    if allowed {
        let expire = match ttl {
            Ttl::Clear => None,
            Ttl::Keep => old_ttl,
            Ttl::At(t) => Some(t),
        };
        let past = expire.is_some_and(|t| t <= ctx.now_ms);
        if past {
            // An expiry already past (EXAT/PXAT): the key is deleted at once. Redis
            // stores it and expires it at its next lookup or expiry cycle; the events
            // and the expired count are the same: a set, its expire, then `expired`.
            shard.remove(h, key, ctx.now_ms);
            if !exists {
                notify(ctx, class::NEW, "new", key);
            }
        } else {
            shard.set_string(h, key, value, expire, ctx.now_ms, ctx.lru());
        }
        notify(ctx, class::STRING, "set", key);
        if matches!(ttl, Ttl::At(_)) {
            notify(ctx, class::GENERIC, "expire", key);
        }
        if past {
            shard.stats.expired_keys += 1;
            notify(ctx, class::EXPIRED, "expired", key);
        }
    }
    Ok(match (want_old, allowed) {
        (true, _) => SetReply::Old(old, allowed),
        (false, true) => SetReply::Ok,
        (false, false) => SetReply::NotSet,
    })
}

/// SETNX key value — 1 if set, 0 if the key existed.
fn setnx(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let r = set_generic(ctx, a[1], a[2], Cond::IfAbsent, Ttl::Clear, false)?;
    let set = matches!(r, SetReply::Ok);
    ctx.client.changed_nothing = !set;
    encode::integer(ctx.out, i64::from(set));
    Ok(())
}

/// The log's form of a SET with an expiry, as Redis 7.0 writes it: `SET key value PXAT
/// <unix ms>` (NX, XX and GET no longer matter once it ran).
fn log_set_pxat(ctx: &mut Ctx<'_>, key: &[u8], value: &[u8], at_ms: i64) {
    ctx.propagate_as(|| vec![record(&[b"SET", key, value, b"PXAT", at_ms.to_string().as_bytes()])]);
}

/// SETEX key seconds value — OK.
fn setex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let at = args::positive_expire_at_ms(a[2], ExpireUnit::RelSeconds, ctx.now_ms, "setex")?;
    set_generic(ctx, a[1], a[3], Cond::Always, Ttl::At(at), false)?;
    log_set_pxat(ctx, a[1], a[3], at);
    ctx.ok();
    Ok(())
}

/// PSETEX key milliseconds value — OK.
fn psetex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let at = args::positive_expire_at_ms(a[2], ExpireUnit::RelMillis, ctx.now_ms, "psetex")?;
    set_generic(ctx, a[1], a[3], Cond::Always, Ttl::At(at), false)?;
    log_set_pxat(ctx, a[1], a[3], at);
    ctx.ok();
    Ok(())
}

/// GETSET key value — the old value or nil.
fn getset(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if let SetReply::Old(old, _) = set_generic(ctx, a[1], a[2], Cond::Always, Ttl::Clear, true)? {
        match old {
            Some(v) => encode::bulk(ctx.out, &v),
            None => ctx.null(),
        }
    }
    Ok(())
}

/// MGET key [key ...] — array of values or nils (nil also for non-strings).
fn mget(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let db = ctx.client.db;
    let mut locked = ks.lock_keys(db, &a[1..]);
    encode::array_len(ctx.out, a.len() - 1);
    for key in &a[1..] {
        let (h, shard) = locked.shard_for(db, key);
        let e = shard.get(h, key, ctx.now_ms);
        ctx.lookup(key, e.is_some());
        let v = match e {
            Some(e) => match e.value() {
                ValueRef::Str(s) => Some(s),
                ValueRef::Obj(_) => None,
            },
            None => None,
        };
        reply_opt_str(ctx.out, v, ctx.client.proto);
    }
    Ok(())
}

fn check_pairs(a: &[&[u8]], name: &str) -> Result<(), CommandError> {
    if a.len() % 2 == 0 {
        return Err(CommandError::Arity(name.into()));
    }
    Ok(())
}

/// MSET key value [key value ...] — OK; atomic across shards.
fn mset(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    check_pairs(a, "mset")?;
    let ks = ctx.ks();
    let db = ctx.client.db;
    let lru = ctx.lru();
    let mut locked = ks.lock_keys(db, a[1..].iter().step_by(2));
    for pair in a[1..].chunks_exact(2) {
        let (h, shard) = locked.shard_for(db, pair[0]);
        shard.set_string(h, pair[0], pair[1], None, ctx.now_ms, lru);
        notify(ctx, class::STRING, "set", pair[0]);
    }
    ctx.client.changes = Some((a.len() / 2) as u64);
    ctx.ok();
    Ok(())
}

/// MSETNX key value [key value ...] — 1 if all were set, 0 if any key existed.
fn msetnx(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    check_pairs(a, "msetnx")?;
    let ks = ctx.ks();
    let db = ctx.client.db;
    let lru = ctx.lru();
    let mut locked = ks.lock_keys(db, a[1..].iter().step_by(2));
    for key in a[1..].iter().step_by(2) {
        let (h, shard) = locked.shard_for(db, key);
        if shard.get(h, key, ctx.now_ms).is_some() {
            ctx.client.changed_nothing = true;
            encode::integer(ctx.out, 0);
            return Ok(());
        }
    }
    ctx.client.changes = Some((a.len() / 2) as u64);
    for pair in a[1..].chunks_exact(2) {
        let (h, shard) = locked.shard_for(db, pair[0]);
        shard.insert(h, Entry::new(pair[0], Payload::Str(pair[1]), None, lru));
        notify(ctx, class::STRING, "set", pair[0]);
    }
    encode::integer(ctx.out, 1);
    Ok(())
}

/// GETDEL key — the value (then deleted) or nil.
fn getdel(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    if lookup_str(&mut shard, h, a[1], ctx)?.is_none() {
        ctx.client.changed_nothing = true;
        ctx.null();
        return Ok(());
    }
    if let Some(e) = shard.remove(h, a[1], ctx.now_ms) {
        if let ValueRef::Str(s) = e.value() {
            reply_str(ctx.out, s);
        }
        notify(ctx, class::GENERIC, "del", a[1]);
    }
    Ok(())
}

/// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST] — the value or nil; changes the TTL.
fn getex(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    enum Change {
        None,
        Persist,
        At(i64),
    }
    let o = args::string_options(&a[2..], args::OptionSet::GetEx)?;
    let change = match o.expire {
        Some((unit, v)) => Change::At(args::positive_expire_at_ms(v, unit, ctx.now_ms, "getex")?),
        None if o.persist => Change::Persist,
        None => Change::None,
    };
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let Some(v) = lookup_str(&mut shard, h, a[1], ctx)? else {
        ctx.client.changed_nothing = true;
        ctx.null();
        return Ok(());
    };
    reply_str(ctx.out, v);
    // Never logged as sent: as Redis, its effect is a PEXPIREAT, a DEL or a PERSIST.
    match change {
        Change::None => ctx.client.changed_nothing = true,
        Change::Persist => {
            let had_ttl = shard.peek(h, a[1], ctx.now_ms).is_some_and(|e| e.expire_at_ms().is_some());
            if had_ttl {
                shard.set_expire(h, a[1], None, ctx.now_ms);
                notify(ctx, class::GENERIC, "persist", a[1]);
                ctx.propagate_as(|| vec![record(&[b"PERSIST", a[1]])]);
            } else {
                ctx.client.changed_nothing = true;
            }
        }
        Change::At(t) if t <= ctx.now_ms => {
            shard.remove(h, a[1], ctx.now_ms);
            notify(ctx, class::GENERIC, "del", a[1]);
            ctx.propagate_as(|| vec![record(&[b"DEL", a[1]])]);
        }
        Change::At(t) => {
            shard.set_expire(h, a[1], Some(t), ctx.now_ms);
            notify(ctx, class::GENERIC, "expire", a[1]);
            ctx.propagate_as(|| vec![record(&[b"PEXPIREAT", a[1], t.to_string().as_bytes()])]);
        }
    }
    Ok(())
}

/// STRLEN key — length, 0 when absent.
fn strlen(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let len = lookup_str(&mut shard, h, a[1], ctx)?.map_or(0, |s| s.len());
    encode::integer(ctx.out, len as i64);
    Ok(())
}

fn max_string(ctx: &Ctx<'_>) -> u64 {
    ctx.shared.config.read().proto_max_bulk_len
}

/// APPEND key value — the new length.
fn append(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let limit = max_string(ctx);
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let current = read_str(&mut shard, h, a[1], ctx)?.map(|s| s.len());
    let new_len = match current {
        None => {
            shard.insert(h, Entry::new(a[1], Payload::Str(a[2]), None, ctx.lru()));
            a[2].len()
        }
        Some(len) => {
            if (len + a[2].len()) as u64 > limit {
                return Err(CommandError::msg(STRING_TOO_LONG));
            }
            let Some(e) = shard.get(h, a[1], ctx.now_ms) else { return Err(CommandError::NoSuchKey) };
            let s = e.string_mut().ok_or(CommandError::WrongType)?;
            s.extend_from_slice(a[2]);
            s.len()
        }
    };
    notify(ctx, class::STRING, "append", a[1]);
    encode::integer(ctx.out, new_len as i64);
    Ok(())
}

/// Applies `delta` to an integer value (INCR family).
fn incr_generic(ctx: &mut Ctx<'_>, key: &[u8], delta: i64) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let lru = ctx.lru();
    let (h, mut shard) = ks.lock_key(ctx.client.db, key);
    let current = match read_str(&mut shard, h, key, ctx)? {
        None => None,
        Some(StrRef::Int(n)) => Some(n),
        Some(StrRef::Bytes(b)) => Some(algo::parse_i64(b).ok_or(CommandError::NotInteger)?),
    };
    let new = algo::incr_by(current.unwrap_or(0), delta)
        .ok_or(CommandError::msg("ERR increment or decrement would overflow"))?;
    match current {
        None => {
            shard.insert(h, Entry::new(key, Payload::Int(new), None, lru));
        }
        Some(_) => {
            if let Some(e) = shard.get(h, key, ctx.now_ms) {
                e.set_int(new);
            }
        }
    }
    notify(ctx, class::STRING, "incrby", key);
    encode::integer(ctx.out, new);
    Ok(())
}

/// INCR key — the new value.
fn incr(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    incr_generic(ctx, a[1], 1)
}

/// DECR key — the new value.
fn decr(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    incr_generic(ctx, a[1], -1)
}

/// INCRBY key increment — the new value.
fn incrby(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let d = args::int(a[2])?;
    incr_generic(ctx, a[1], d)
}

/// DECRBY key decrement — the new value.
fn decrby(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let d = args::int(a[2])?;
    let d = d.checked_neg().ok_or(CommandError::msg("ERR decrement would overflow"))?;
    incr_generic(ctx, a[1], d)
}

/// INCRBYFLOAT key increment — the new value as a bulk string.
fn incrbyfloat(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let lru = ctx.lru();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let (current, ttl) = match read_str(&mut shard, h, a[1], ctx)? {
        None => (b"0".to_vec(), None),
        Some(s) => (s.to_vec(), shard.peek(h, a[1], ctx.now_ms).and_then(Entry::expire_at_ms)),
    };
    // In C long double, as Redis (store::types::long_double).
    let text = long_double::add(&current, a[2]).map_err(|e| match e {
        AddError::Current | AddError::Increment => CommandError::NotFloat,
        AddError::NotFinite => CommandError::msg("ERR increment would produce NaN or Infinity"),
    })?;
    // Stored as a string even when it reads as an integer, as Redis does (embstr).
    shard.insert(h, Entry::new(a[1], Payload::StrNotInt(&text), ttl, lru));
    notify(ctx, class::STRING, "incrbyfloat", a[1]);
    // Logged as the value it made, so that no float rounding differs on replay (Redis).
    ctx.propagate_as(|| vec![record(&[b"SET", a[1], &text, b"KEEPTTL"])]);
    encode::bulk(ctx.out, &text);
    Ok(())
}

/// GETRANGE key start end — the substring ("" when absent).
fn getrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let start = args::int(a[2])?;
    let end = args::int(a[3])?;
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    match lookup_str(&mut shard, h, a[1], ctx)? {
        None => encode::bulk(ctx.out, b""),
        Some(s) => s.with_bytes(|b| encode::bulk(ctx.out, &b[algo::getrange(b.len(), start, end)])),
    }
    Ok(())
}

/// SETRANGE key offset value — the new length.
fn setrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let offset = args::int(a[2])?;
    let offset = usize::try_from(offset).map_err(|_| CommandError::msg("ERR offset is out of range"))?;
    let limit = max_string(ctx);
    let value = a[3];
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let current = read_str(&mut shard, h, a[1], ctx)?.map(|s| s.len());
    if value.is_empty() {
        encode::integer(ctx.out, current.unwrap_or(0) as i64);
        return Ok(());
    }
    if (offset as u64).saturating_add(value.len() as u64) > limit {
        return Err(CommandError::msg(STRING_TOO_LONG));
    }
    if current.is_none() {
        shard.insert(h, Entry::new(a[1], Payload::Object(Box::new(store::Object::Str(Vec::new()))), None, ctx.lru()));
    }
    let Some(e) = shard.get(h, a[1], ctx.now_ms) else { return Err(CommandError::NoSuchKey) };
    let buf = e.string_mut().ok_or(CommandError::WrongType)?;
    let len = algo::setrange(buf, offset, value);
    notify(ctx, class::STRING, "setrange", a[1]);
    encode::integer(ctx.out, len as i64);
    Ok(())
}

fn bit_offset(arg: &[u8], limit: u64) -> Result<u64, CommandError> {
    bit_offset_in_range(algo::parse_i64(arg), limit)
}

/// A bit offset (parsed, or None when the argument is not an integer) checked against
/// the string size limit in bytes: SETBIT, GETBIT, BITFIELD.
pub(super) fn bit_offset_in_range(n: Option<i64>, limit: u64) -> Result<u64, CommandError> {
    const ERR: &str = "ERR bit offset is not an integer or out of range";
    match n.map(u64::try_from) {
        Some(Ok(n)) if n >> 3 < limit => Ok(n),
        _ => Err(CommandError::msg(ERR)),
    }
}

/// SETBIT key offset value — the old bit.
fn setbit(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let offset = bit_offset(a[2], max_string(ctx))?;
    let on = match a[3] {
        b"1" => true,
        b"0" => false,
        _ => return Err(CommandError::msg("ERR bit is not an integer or out of range")),
    };
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let created = read_str(&mut shard, h, a[1], ctx)?.is_none();
    if created {
        shard.insert(h, Entry::new(a[1], Payload::Object(Box::new(store::Object::Str(Vec::new()))), None, ctx.lru()));
    }
    let Some(e) = shard.get(h, a[1], ctx.now_ms) else { return Err(CommandError::NoSuchKey) };
    let buf = e.string_mut().ok_or(CommandError::WrongType)?;
    let len_before = buf.len();
    let old = algo::setbit(buf, offset, on);
    // Only a change is an event: a key created or grown, or the bit flipped (Redis).
    if created || buf.len() != len_before || (old == 1) != on {
        notify(ctx, class::STRING, "setbit", a[1]);
    } else {
        ctx.client.changed_nothing = true;
    }
    encode::integer(ctx.out, i64::from(old));
    Ok(())
}

/// GETBIT key offset — the bit.
fn getbit(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let offset = bit_offset(a[2], max_string(ctx))?;
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let bit = lookup_str(&mut shard, h, a[1], ctx)?.map_or(0, |s| s.with_bytes(|b| algo::getbit(b, offset)));
    encode::integer(ctx.out, i64::from(bit));
    Ok(())
}

fn bit_unit(arg: Option<&&[u8]>) -> Result<algo::BitUnit, CommandError> {
    match arg {
        None => Ok(algo::BitUnit::Byte),
        Some(w) if is(w, "byte") => Ok(algo::BitUnit::Byte),
        Some(w) if is(w, "bit") => Ok(algo::BitUnit::Bit),
        Some(_) => Err(CommandError::Syntax),
    }
}

/// BITCOUNT key [start end [BYTE|BIT]] — number of set bits.
fn bitcount(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let range = match a.len() {
        2 => None,
        4 | 5 => Some((args::int(a[2])?, args::int(a[3])?)),
        _ => return Err(CommandError::Syntax),
    };
    let unit = bit_unit(a.get(4))?;
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let n = lookup_str(&mut shard, h, a[1], ctx)?.map_or(0, |s| s.with_bytes(|b| algo::bitcount(b, range, unit)));
    encode::integer(ctx.out, n);
    Ok(())
}

/// BITPOS key bit [start [end [BYTE|BIT]]] — position of the first such bit, or -1.
fn bitpos(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() > 6 {
        return Err(CommandError::Syntax);
    }
    let bit = match args::int(a[2])? {
        0 => 0u8,
        1 => 1u8,
        _ => return Err(CommandError::msg("ERR The bit argument must be 1 or 0.")),
    };
    let start = a.get(3).map(|v| args::int(v)).transpose()?;
    let end = a.get(4).map(|v| args::int(v)).transpose()?;
    let unit = bit_unit(a.get(5))?;
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let pos = match lookup_str(&mut shard, h, a[1], ctx)? {
        None => {
            if bit == 1 {
                -1
            } else {
                0
            }
        }
        Some(s) => s.with_bytes(|b| algo::bitpos(b, bit, start, end, unit)),
    };
    encode::integer(ctx.out, pos);
    Ok(())
}

/// BITOP AND|OR|XOR|NOT destkey key [key ...] — length of the stored result.
fn bitop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let op = if is(a[1], "and") {
        algo::BitOp::And
    } else if is(a[1], "or") {
        algo::BitOp::Or
    } else if is(a[1], "xor") {
        algo::BitOp::Xor
    } else if is(a[1], "not") {
        algo::BitOp::Not
    } else {
        return Err(CommandError::Syntax);
    };
    if matches!(op, algo::BitOp::Not) && a.len() != 4 {
        return Err(CommandError::msg("ERR BITOP NOT must be called with a single source key."));
    }
    let ks = ctx.ks();
    let db = ctx.client.db;
    let mut locked = ks.lock_keys(db, &a[2..]);
    let mut sources: Vec<Vec<u8>> = Vec::with_capacity(a.len() - 3);
    for key in &a[3..] {
        let (h, shard) = locked.shard_for(db, key);
        let found = shard.get(h, key, ctx.now_ms);
        ctx.lookup(key, found.is_some());
        match found {
            None => sources.push(Vec::new()),
            Some(e) => match e.value() {
                ValueRef::Str(s) => sources.push(s.to_vec()),
                ValueRef::Obj(_) => return Err(CommandError::WrongType),
            },
        }
    }
    let refs: Vec<&[u8]> = sources.iter().map(Vec::as_slice).collect();
    let result = algo::bitop(op, &refs);
    let (h, shard) = locked.shard_for(db, a[2]);
    if result.is_empty() {
        if shard.remove(h, a[2], ctx.now_ms).is_some() {
            notify(ctx, class::GENERIC, "del", a[2]);
        } else {
            ctx.client.changed_nothing = true;
        }
    } else {
        shard.insert(h, Entry::new(a[2], Payload::Object(Box::new(store::Object::Str(result.clone()))), None, ctx.lru()));
        notify(ctx, class::STRING, "set", a[2]);
    }
    encode::integer(ctx.out, result.len() as i64);
    Ok(())
}

/// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN] — the LCS, its length, or
/// the matching ranges.
fn lcs(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut want_len, mut want_idx, mut with_match_len, mut min_len) = (false, false, false, 0usize);
    let mut i = 3;
    while i < a.len() {
        if is(a[i], "len") {
            want_len = true;
        } else if is(a[i], "idx") {
            want_idx = true;
        } else if is(a[i], "withmatchlen") {
            with_match_len = true;
        } else if is(a[i], "minmatchlen") && i + 1 < a.len() {
            let n = args::int(a[i + 1])?;
            min_len = usize::try_from(n).unwrap_or(0);
            i += 1;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    if want_len && want_idx {
        return Err(CommandError::msg(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    let ks = ctx.ks();
    let db = ctx.client.db;
    let mut locked = ks.lock_keys(db, &a[1..3]);
    // Both keys are looked up before either's type is checked, as Redis does.
    let mut strs: [Option<Vec<u8>>; 2] = [Some(Vec::new()), Some(Vec::new())];
    for (slot, key) in strs.iter_mut().zip(&a[1..3]) {
        let (h, shard) = locked.shard_for(db, key);
        let found = shard.get(h, key, ctx.now_ms);
        ctx.lookup(key, found.is_some());
        if let Some(e) = found {
            *slot = match e.value() {
                ValueRef::Str(s) => Some(s.to_vec()),
                ValueRef::Obj(_) => None,
            };
        }
    }
    let [Some(x), Some(y)] = strs else {
        return Err(CommandError::msg("ERR The specified keys must contain string values"));
    };
    let strs = [x, y];
    drop(locked);
    // Redis refuses when the DP table (u32 cells) would exceed proto-max-bulk-len.
    const TOO_BIG: &str = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
    let cells = algo::lcs_table_cells(strs[0].len(), strs[1].len()).ok_or(CommandError::msg(TOO_BIG))?;
    if (cells as u64).saturating_mul(4) > max_string(ctx) {
        return Err(CommandError::msg(TOO_BIG));
    }
    let result = algo::try_lcs(&strs[0], &strs[1], min_len).ok_or(CommandError::msg(TOO_BIG))?;
    let out = &mut *ctx.out;
    let proto = ctx.client.proto;
    if want_len {
        encode::integer(out, result.len as i64);
    } else if want_idx {
        encode::map_len(out, 2, proto);
        encode::bulk(out, b"matches");
        encode::array_len(out, result.matches.len());
        for m in &result.matches {
            encode::array_len(out, if with_match_len { 3 } else { 2 });
            for (s, e) in [m.a, m.b] {
                encode::array_len(out, 2);
                encode::integer(out, s as i64);
                encode::integer(out, e as i64);
            }
            if with_match_len {
                encode::integer(out, m.len as i64);
            }
        }
        encode::bulk(out, b"len");
        encode::integer(out, result.len as i64);
    } else {
        encode::bulk(out, &result.lcs);
    }
    Ok(())
}

const STR: &[&str] = &["string"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("get", 2, READONLY | FAST, (1, 1, 1), STR, "string", "Returns the string value of a key.", get).since("1.0.0").args(ARGS_GET).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("set", -3, WRITE | DENYOOM, (1, 1, 1), STR, "string", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", set).since("1.0.0").args(ARGS_SET).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE | kf::VARIABLE_FLAGS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("setnx", 3, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Set the string value of a key only when the key doesn't exist.", setnx).since("1.0.0").args(ARGS_SETNX).complexity("O(1)").key_specs(&[KeySpec { flags: kf::OW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("setex", 4, WRITE | DENYOOM, (1, 1, 1), STR, "string", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", setex).since("2.0.0").args(ARGS_SETEX).complexity("O(1)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("psetex", 4, WRITE | DENYOOM, (1, 1, 1), STR, "string", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", psetex).since("2.6.0").args(ARGS_PSETEX).complexity("O(1)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("getset", 3, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Returns the previous string value of a key after setting it to a new value.", getset).since("1.0.0").args(ARGS_GETSET).complexity("O(1)").deprecated("6.2.0").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("mget", -2, READONLY | FAST, (1, -1, 1), STR, "string", "Atomically returns the string values of one or more keys.", mget).since("1.0.0").args(ARGS_MGET).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["request_policy:multi_shard"]),
    spec("mset", -3, WRITE | DENYOOM, (1, -1, 2), STR, "string", "Atomically creates or modifies the string values of one or more keys.", mset).since("1.0.1").args(ARGS_MSET).complexity("O(N)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 2, limit: 0 } }]).tips(&["request_policy:multi_shard", "response_policy:all_succeeded"]),
    spec("msetnx", -3, WRITE | DENYOOM, (1, -1, 2), STR, "string", "Atomically modifies the string values of one or more keys only when all keys don't exist.", msetnx).since("1.0.1").args(ARGS_MSETNX).complexity("O(N)").key_specs(&[KeySpec { flags: kf::OW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 2, limit: 0 } }]).tips(&["request_policy:multi_shard", "response_policy:agg_min"]),
    spec("getdel", 2, WRITE | FAST, (1, 1, 1), STR, "string", "Returns the string value of a key after deleting the key.", getdel).since("6.2.0").args(ARGS_GETDEL).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("getex", -2, WRITE | FAST, (1, 1, 1), STR, "string", "Returns the string value of a key after setting its expiration time.", getex).since("6.2.0").args(ARGS_GETEX).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("strlen", 2, READONLY | FAST, (1, 1, 1), STR, "string", "Returns the length of a string value.", strlen).since("2.2.0").args(ARGS_STRLEN).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("append", 3, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Appends a string to the value of a key. Creates the key if it doesn't exist.", append).since("2.0.0").args(ARGS_APPEND).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("incr", 2, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", incr).since("1.0.0").args(ARGS_INCR).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("decr", 2, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", decr).since("1.0.0").args(ARGS_DECR).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("incrby", 3, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", incrby).since("1.0.0").args(ARGS_INCRBY).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("decrby", 3, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", decrby).since("1.0.0").args(ARGS_DECRBY).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("incrbyfloat", 3, WRITE | DENYOOM | FAST, (1, 1, 1), STR, "string", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", incrbyfloat).since("2.6.0").args(ARGS_INCRBYFLOAT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("getrange", 4, READONLY, (1, 1, 1), STR, "string", "Returns a substring of the string stored at a key.", getrange).since("2.4.0").args(ARGS_GETRANGE).complexity("O(N) or O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("substr", 4, READONLY, (1, 1, 1), STR, "string", "Returns a substring from a string value.", getrange).since("1.0.0").args(ARGS_SUBSTR).complexity("O(N) or O(1)").deprecated("2.0.0").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("setrange", 4, WRITE | DENYOOM, (1, 1, 1), STR, "string", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", setrange).since("2.2.0").args(ARGS_SETRANGE).complexity("O(1) or O(M)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("setbit", 4, WRITE | DENYOOM, (1, 1, 1), &["bitmap"], "bitmap", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", setbit).since("2.2.0").args(ARGS_SETBIT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("getbit", 3, READONLY | FAST, (1, 1, 1), &["bitmap"], "bitmap", "Returns a bit value by offset.", getbit).since("2.2.0").args(ARGS_GETBIT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("bitcount", -2, READONLY, (1, 1, 1), &["bitmap"], "bitmap", "Counts the number of set bits (population counting) in a string.", bitcount).since("2.6.0").args(ARGS_BITCOUNT).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("bitpos", -3, READONLY, (1, 1, 1), &["bitmap"], "bitmap", "Finds the first set (1) or clear (0) bit in a string.", bitpos).since("2.8.7").args(ARGS_BITPOS).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("bitop", -4, WRITE | DENYOOM, (2, -1, 1), &["bitmap"], "bitmap", "Performs bitwise operations on multiple strings, and stores the result.", bitop).since("2.6.0").args(ARGS_BITOP).complexity("O(N)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(3), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
    spec("lcs", -3, READONLY, (1, 2, 1), STR, "string", "Finds the longest common substring.", lcs).since("7.0.0").args(ARGS_LCS).complexity("O(N*M)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 1, key_step: 1, limit: 0 } }]),
];


/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_GET: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_SET: &[Arg] = &[arg("key", Key).key_spec(0), arg("value", String), arg("condition", OneOf).since("2.6.12").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX")]), arg("get", PureToken).token("GET").since("6.2.0").optional(), arg("expiration", OneOf).optional().args(&[arg("seconds", Integer).token("EX").since("2.6.12"), arg("milliseconds", Integer).token("PX").since("2.6.12"), arg("unix-time-seconds", UnixTime).token("EXAT").since("6.2.0"), arg("unix-time-milliseconds", UnixTime).token("PXAT").since("6.2.0"), arg("keepttl", PureToken).token("KEEPTTL").since("6.0.0")])];
    pub const ARGS_SETNX: &[Arg] = &[arg("key", Key).key_spec(0), arg("value", String)];
    pub const ARGS_SETEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("seconds", Integer), arg("value", String)];
    pub const ARGS_PSETEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("milliseconds", Integer), arg("value", String)];
    pub const ARGS_GETSET: &[Arg] = &[arg("key", Key).key_spec(0), arg("value", String)];
    pub const ARGS_MGET: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_MSET: &[Arg] = &[arg("key_value", Block).multiple().args(&[arg("key", Key).key_spec(0), arg("value", String)])];
    pub const ARGS_MSETNX: &[Arg] = &[arg("key_value", Block).multiple().args(&[arg("key", Key).key_spec(0), arg("value", String)])];
    pub const ARGS_GETDEL: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_GETEX: &[Arg] = &[arg("key", Key).key_spec(0), arg("expiration", OneOf).optional().args(&[arg("seconds", Integer).token("EX"), arg("milliseconds", Integer).token("PX"), arg("unix-time-seconds", UnixTime).token("EXAT"), arg("unix-time-milliseconds", UnixTime).token("PXAT"), arg("persist", PureToken).token("PERSIST")])];
    pub const ARGS_STRLEN: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_APPEND: &[Arg] = &[arg("key", Key).key_spec(0), arg("value", String)];
    pub const ARGS_INCR: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_DECR: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_INCRBY: &[Arg] = &[arg("key", Key).key_spec(0), arg("increment", Integer)];
    pub const ARGS_DECRBY: &[Arg] = &[arg("key", Key).key_spec(0), arg("decrement", Integer)];
    pub const ARGS_INCRBYFLOAT: &[Arg] = &[arg("key", Key).key_spec(0), arg("increment", Double)];
    pub const ARGS_GETRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", Integer), arg("end", Integer)];
    pub const ARGS_SUBSTR: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", Integer), arg("end", Integer)];
    pub const ARGS_SETRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("offset", Integer), arg("value", String)];
    pub const ARGS_SETBIT: &[Arg] = &[arg("key", Key).key_spec(0), arg("offset", Integer), arg("value", Integer)];
    pub const ARGS_GETBIT: &[Arg] = &[arg("key", Key).key_spec(0), arg("offset", Integer)];
    pub const ARGS_BITCOUNT: &[Arg] = &[arg("key", Key).key_spec(0), arg("index", Block).optional().args(&[arg("start", Integer), arg("end", Integer), arg("index_unit", OneOf).since("7.0.0").optional().args(&[arg("byte", PureToken).token("BYTE"), arg("bit", PureToken).token("BIT")])])];
    pub const ARGS_BITPOS: &[Arg] = &[arg("key", Key).key_spec(0), arg("bit", Integer), arg("index", Block).optional().args(&[arg("start", Integer), arg("end_index", Block).optional().args(&[arg("end", Integer), arg("index_unit", OneOf).since("7.0.0").optional().args(&[arg("byte", PureToken).token("BYTE"), arg("bit", PureToken).token("BIT")])])])];
    pub const ARGS_BITOP: &[Arg] = &[arg("operation", String), arg("destkey", Key).key_spec(0), arg("key", Key).key_spec(1).multiple()];
    pub const ARGS_LCS: &[Arg] = &[arg("key1", Key).key_spec(0), arg("key2", Key).key_spec(0), arg("len", PureToken).token("LEN").optional(), arg("idx", PureToken).token("IDX").optional(), arg("len", Integer).token("MINMATCHLEN").optional(), arg("withmatchlen", PureToken).token("WITHMATCHLEN").optional()];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn set_options_and_errors() {
        let mut h = Harness::new();
        assert_eq!(h.text("SET k v"), "OK");
        assert_eq!(h.text("SET k w NX"), "(nil)");
        assert_eq!(h.text("SET k w XX GET"), "v");
        assert_eq!(h.text("SET k w NX XX"), "ERR syntax error");
        assert_eq!(h.text("SET k w EX 0"), "ERR invalid expire time in 'set' command");
        assert_eq!(h.text("SET k w EX x"), "ERR value is not an integer or out of range");
        assert_eq!(h.text("SET k w EX 10 PX 10"), "ERR syntax error");
        assert_eq!(h.text("SET k w EX 10 KEEPTTL"), "ERR syntax error");
        assert_eq!(h.text("SET gone v GET"), "(nil)");
        assert_eq!(h.text("GET k"), "w");
    }

    #[test]
    fn expiry_follows_the_movable_clock() {
        let mut h = Harness::new();
        assert_eq!(h.text("SET k v PX 100"), "OK");
        assert_eq!(h.text("PTTL k"), "100");
        h.advance_ms(99);
        assert_eq!(h.text("GET k"), "v");
        h.advance_ms(1);
        assert_eq!(h.text("GET k"), "(nil)");
        assert_eq!(h.text("EXISTS k"), "0");
        assert_eq!(h.text("SET k v EX 10"), "OK");
        assert_eq!(h.text("SET k w KEEPTTL"), "OK");
        assert_eq!(h.text("TTL k"), "10");
        assert_eq!(h.text("SET k w"), "OK");
        assert_eq!(h.text("TTL k"), "-1");
        assert_eq!(h.text("SETEX k 5 v"), "OK");
        assert_eq!(h.text("GETEX k PERSIST"), "v");
        assert_eq!(h.text("TTL k"), "-1");
    }

    #[test]
    fn counters() {
        let mut h = Harness::new();
        assert_eq!(h.text("INCR n"), "1");
        assert_eq!(h.text("INCRBY n 41"), "42");
        assert_eq!(h.text("DECRBY n 2"), "40");
        assert_eq!(h.text("OBJECT ENCODING n"), "int");
        assert_eq!(h.text("SET n 9223372036854775807"), "OK");
        assert_eq!(h.text("INCR n"), "ERR increment or decrement would overflow");
        assert_eq!(h.text("SET s abc"), "OK");
        assert_eq!(h.text("INCR s"), "ERR value is not an integer or out of range");
        assert_eq!(h.text("INCRBYFLOAT f 10.5"), "10.5");
        assert_eq!(h.text("INCRBYFLOAT f 0.1"), "10.6");
        // Redis 7.0.15's reply: long double shows 10.6's binary rounding at this size.
        assert_eq!(h.text("INCRBYFLOAT f 5.0e3"), "5010.60000000000000009");
        assert_eq!(h.text("INCRBYFLOAT f inf"), "ERR increment would produce NaN or Infinity");
        assert_eq!(h.text("INCRBYFLOAT s 1"), "ERR value is not a valid float");
    }

    #[test]
    fn ranges_bits_and_appends() {
        let mut h = Harness::new();
        assert_eq!(h.text("APPEND a Hello"), "5");
        assert_eq!(h.text("APPEND a World"), "10");
        assert_eq!(h.text("OBJECT ENCODING a"), "raw");
        assert_eq!(h.text("GETRANGE a -5 -1"), "World");
        assert_eq!(h.text("SETRANGE a 5 ,"), "10");
        assert_eq!(h.text("GET a"), "Hello,orld");
        assert_eq!(h.text("SETRANGE a -1 x"), "ERR offset is out of range");
        assert_eq!(h.text("SETBIT b 7 1"), "0");
        assert_eq!(h.text("GETBIT b 7"), "1");
        assert_eq!(h.text("SETBIT b 7 2"), "ERR bit is not an integer or out of range");
        assert_eq!(h.text("BITCOUNT b"), "1");
        assert_eq!(h.text("BITPOS b 1"), "7");
        assert_eq!(h.text("MSET x 1 y"), "ERR wrong number of arguments for 'mset' command");
        assert_eq!(h.text("MSETNX x 1 y 2"), "1");
        assert_eq!(h.text("MSETNX y 3 z 4"), "0");
        assert_eq!(h.text("MGET x y z"), "[1,2,(nil)]");
        assert_eq!(h.text("BITOP AND dest x y"), "1");
        assert_eq!(h.text("GET dest"), "0");
    }
}
