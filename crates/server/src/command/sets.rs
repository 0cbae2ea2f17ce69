//! Set commands: membership, random picks and pops, SMOVE, the algebra (SINTER, SUNION,
//! SDIFF, their STORE forms, SINTERCARD) and SSCAN. Values live in
//! `store::types::set::Set` (intset while all members are integers and few, hashtable
//! otherwise). Multi-key commands lock every key's shard first, so they are atomic.

use resp::encode;
use store::events::class;
use store::types::set::Set;
use store::LockedShards;

use super::args;
use super::collections::{self as coll};
use super::flags::*;
use super::hashes::{check_random_count, parse_scan_args, random_picks, sample_picks, write_scan_reply};
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};
use super::key_flags as kf;
use super::keyspace_events::notify;

/// SADD key member [member ...] — number added.
fn sadd(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let max = ctx.shared.type_limits.intset();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut set = coll::get_or_create::<Set>(ctx, &mut shard, h, a[1])?;
    let added = a[2..].iter().filter(|m| set.add(m, max)).count();
    if added > 0 {
        notify(ctx, class::SET, "sadd", a[1]);
    }
    ctx.client.changes = Some(added as u64);
    ctx.client.changed_nothing = added == 0;
    encode::integer(ctx.out, added as i64);
    Ok(())
}

/// SREM key member [member ...] — number removed; an emptied set is deleted.
fn srem(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let removed = match coll::get_key::<Set>(ctx, &mut shard, h, a[1])? {
        Some(mut set) => a[2..].iter().filter(|m| set.remove(m)).count(),
        None => 0,
    };
    if removed > 0 {
        notify(ctx, class::SET, "srem", a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    ctx.client.changes = Some(removed as u64);
    ctx.client.changed_nothing = removed == 0;
    encode::integer(ctx.out, removed as i64);
    Ok(())
}

/// SMEMBERS key — all members.
fn smembers(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let members = coll::read_key::<Set>(ctx, &mut shard, h, a[1])?.map(|s| s.members()).unwrap_or_default();
    drop(shard);
    write_set(ctx, &members);
    Ok(())
}

fn write_set(ctx: &mut Ctx<'_>, members: &[Vec<u8>]) {
    encode::set_len(ctx.out, members.len(), ctx.client.proto);
    for m in members {
        encode::bulk(ctx.out, m);
    }
}

/// A set's members (SRANDMEMBER's copy, after its own lookup of the key).
fn members_of(ctx: &Ctx<'_>, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>, CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, key);
    let members = coll::read::<Set>(&mut shard, h, key, ctx.now_ms)?.map(|s| s.members());
    Ok(members)
}

/// SISMEMBER key member — 1 or 0.
fn sismember(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let found = coll::read_key::<Set>(ctx, &mut shard, h, a[1])?.is_some_and(|s| s.contains(a[2]));
    encode::integer(ctx.out, i64::from(found));
    Ok(())
}

/// SMISMEMBER key member [member ...] — 1 or 0 for each.
fn smismember(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let set = coll::read_key::<Set>(ctx, &mut shard, h, a[1])?;
    encode::array_len(ctx.out, a.len() - 2);
    for m in &a[2..] {
        encode::integer(ctx.out, i64::from(set.as_ref().is_some_and(|s| s.contains(m))));
    }
    Ok(())
}

/// SCARD key — number of members.
fn scard(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<Set>(ctx, &mut shard, h, a[1])?.map_or(0, |s| s.len());
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// SPOP key [count] — a random member (bulk), or up to count distinct members.
fn spop(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let count = match a.get(2) {
        None => None,
        Some(c) => Some(args::pop_count(c)?),
    };
    if a.len() > 3 {
        return Err(CommandError::Syntax);
    }
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let proto = ctx.client.proto;
    let Some(mut set) = coll::get_key::<Set>(ctx, &mut shard, h, a[1])? else {
        match count {
            None => encode::null(ctx.out, proto),
            Some(_) => encode::set_len(ctx.out, 0, proto),
        }
        ctx.client.changed_nothing = true;
        return Ok(());
    };
    let want = count.unwrap_or(1).min(set.len());
    let mut popped = Vec::with_capacity(want);
    for _ in 0..want {
        if let Some(m) = set.random(ctx.rng) {
            set.remove(&m);
            popped.push(m);
        }
    }
    drop(set);
    ctx.client.changes = Some(popped.len() as u64);
    if !popped.is_empty() {
        notify(ctx, class::SET, "spop", a[1]);
        coll::remove_if_empty(ctx, &mut shard, h, a[1]);
    }
    drop(shard);
    // Random: propagated as what was popped, as Redis does.
    if popped.is_empty() {
        ctx.propagate_nothing();
    } else {
        ctx.propagate_as(|| {
            let mut srem = Vec::with_capacity(popped.len() + 2);
            srem.push(b"SREM".to_vec());
            srem.push(a[1].to_vec());
            srem.extend(popped.iter().map(|m| m.to_vec()));
            vec![srem]
        });
    }
    match count {
        None => match popped.first() {
            Some(m) => encode::bulk(ctx.out, m),
            None => encode::null(ctx.out, proto),
        },
        Some(_) => write_set(ctx, &popped),
    }
    Ok(())
}

/// SRANDMEMBER key [count] — random member(s); a negative count may repeat.
fn srandmember(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() > 3 {
        return Err(CommandError::Syntax);
    }
    let count = a.get(2).map(|c| args::int(c)).transpose()?;
    check_random_count(count, false)?;
    let Some(count) = count else {
        // One member: a constant-time pick, without copying the set.
        let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
        match coll::read_key::<Set>(ctx, &mut shard, h, a[1])?.and_then(|s| s.random(ctx.rng)) {
            Some(m) => encode::bulk(ctx.out, &m),
            None => encode::null(ctx.out, ctx.client.proto),
        }
        return Ok(());
    };
    // With a count, as Redis: a negative count is |count| independent picks, a small
    // positive one (at most a third of the set) distinct picks drawn until that many
    // differ, both O(count); a larger one, or a packed set (whose picks walk it), takes
    // the copied set, O(N).
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let set = coll::read_key::<Set>(ctx, &mut shard, h, a[1])?;
    if let Some(set) = set.filter(|s| s.random_is_constant_time()) {
        let rng = &mut *ctx.rng;
        if let Some((n, picks)) = sample_picks(count, set.len(), || set.random(rng), Vec::clone) {
            encode::array_len(ctx.out, n);
            for m in picks {
                encode::bulk(ctx.out, &m);
            }
            return Ok(());
        }
    }
    drop(shard);
    let members = members_of(ctx, a[1])?.unwrap_or_default();
    let (n, picks) = random_picks(ctx.rng, members.len(), count);
    encode::array_len(ctx.out, n);
    for i in picks {
        encode::bulk(ctx.out, &members[i]);
    }
    Ok(())
}

/// SMOVE source destination member — 1 if moved.
fn smove(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let max = ctx.shared.type_limits.intset();
    let db = ctx.client.db;
    let mut locked = ctx.ks().lock_keys(db, &a[1..3]);
    let (sh, s) = locked.shard_for(db, a[1]);
    let src_has = match coll::read::<Set>(s, sh, a[1], ctx.now_ms)? {
        Some(set) => set.contains(a[3]),
        // A missing source answers 0 before the destination's type is looked at, as
        // in Redis.
        None => {
            ctx.client.changed_nothing = true;
            encode::integer(ctx.out, 0);
            return Ok(());
        }
    };
    let (dh, d) = locked.shard_for(db, a[2]);
    coll::check::<Set>(d, dh, a[2], ctx.now_ms)?;
    // As Redis: nothing moved, or a set onto itself, is no change; a move counts its
    // removal and, unless the destination held the member, its addition.
    ctx.client.changed_nothing = !src_has || a[1] == a[2];
    if !src_has {
        encode::integer(ctx.out, 0);
        return Ok(());
    }
    if a[1] != a[2] {
        let (sh, s) = locked.shard_for(db, a[1]);
        if let Some(mut set) = coll::get_key::<Set>(ctx, s, sh, a[1])? {
            set.remove(a[3]);
        }
        notify(ctx, class::SET, "srem", a[1]);
        coll::remove_if_empty(ctx, s, sh, a[1]);
        let (dh, d) = locked.shard_for(db, a[2]);
        let mut set = coll::get_or_create::<Set>(ctx, d, dh, a[2])?;
        let added = set.add(a[3], max);
        drop(set);
        if added {
            notify(ctx, class::SET, "sadd", a[2]);
        }
        ctx.client.changes = Some(1 + u64::from(added));
    }
    encode::integer(ctx.out, 1);
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
}

/// Computes the algebra over `keys` under their shard locks, which it returns still held
/// together with `dest`'s, so that a STORE lands before any other command sees the
/// inputs change (as in Redis, where the whole command is one step). The result keeps
/// the first set's order for INTER and DIFF.
fn compute<'k>(
    ctx: &Ctx<'k>,
    keys: &[&[u8]],
    dest: Option<&[u8]>,
    op: Op,
    limit: usize,
) -> Result<(Vec<Vec<u8>>, LockedShards<'k>), CommandError> {
    let db = ctx.client.db;
    let max_intset = ctx.shared.type_limits.intset();
    let mut locked = ctx.ks().lock_keys(db, keys.iter().copied().chain(dest));
    let mut sets: Vec<Option<Set>> = Vec::with_capacity(keys.len());
    for key in keys {
        let (h, shard) = locked.shard_for(db, key);
        sets.push(coll::read_key::<Set>(ctx, shard, h, key)?.map(|s| s.clone()));
    }
    let out = match op {
        Op::Inter => {
            if sets.iter().any(Option::is_none) {
                return Ok((Vec::new(), locked));
            }
            let mut sets: Vec<Set> = sets.into_iter().flatten().collect();
            sets.sort_by_key(Set::len);
            let (first, rest) = sets.split_first().map_or((None, &[][..]), |(f, r)| (Some(f), r));
            let mut out = Vec::new();
            for m in first.map(Set::members).unwrap_or_default() {
                if rest.iter().all(|s| s.contains(&m)) {
                    out.push(m);
                    if limit > 0 && out.len() >= limit {
                        break;
                    }
                }
            }
            out
        }
        // Like Redis, the result is built as a set (an intset while it can be), so
        // integer results come back sorted.
        Op::Union => {
            let mut acc = Set::new();
            for s in sets.iter().flatten() {
                for m in s.members() {
                    acc.add(&m, max_intset);
                }
            }
            acc.members()
        }
        Op::Diff => {
            let Some(Some(first)) = sets.first() else { return Ok((Vec::new(), locked)) };
            let mut acc = Set::new();
            for m in first.members() {
                if sets[1..].iter().flatten().all(|s| !s.contains(&m)) {
                    acc.add(&m, max_intset);
                }
            }
            acc.members()
        }
    };
    Ok((out, locked))
}

fn algebra(ctx: &mut Ctx<'_>, a: &[&[u8]], op: Op) -> Result<(), CommandError> {
    let (members, locked) = compute(ctx, &a[1..], None, op, 0)?;
    drop(locked);
    write_set(ctx, &members);
    Ok(())
}

fn algebra_store(ctx: &mut Ctx<'_>, a: &[&[u8]], op: Op) -> Result<(), CommandError> {
    let max = ctx.shared.type_limits.intset();
    let (members, mut locked) = compute(ctx, &a[2..], Some(a[1]), op, 0)?;
    let mut set = Set::new();
    for m in &members {
        set.add(m, max);
    }
    let n = set.len();
    let (h, shard) = locked.shard_for(ctx.client.db, a[1]);
    let event = match op {
        Op::Inter => "sinterstore",
        Op::Union => "sunionstore",
        Op::Diff => "sdiffstore",
    };
    ctx.client.changed_nothing = !coll::store(ctx, shard, h, a[1], set, (class::SET, event));
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// SINTER key [key ...] — the intersection.
fn sinter(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra(ctx, a, Op::Inter)
}
/// SUNION key [key ...] — the union.
fn sunion(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra(ctx, a, Op::Union)
}
/// SDIFF key [key ...] — the first set minus the others.
fn sdiff(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra(ctx, a, Op::Diff)
}
/// SINTERSTORE destination key [key ...] — size of the stored result.
fn sinterstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_store(ctx, a, Op::Inter)
}
/// SUNIONSTORE destination key [key ...] — size of the stored result.
fn sunionstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_store(ctx, a, Op::Union)
}
/// SDIFFSTORE destination key [key ...] — size of the stored result.
fn sdiffstore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    algebra_store(ctx, a, Op::Diff)
}

/// Parses `numkeys key [key ...]` starting at a[1]; returns the keys and the index after.
/// `too_many` is the error when numkeys exceeds the arguments (it differs by command).
pub fn numkeys<'a, 'b>(a: &'b [&'a [u8]], too_many: CommandError) -> Result<(&'b [&'a [u8]], usize), CommandError> {
    const NUMKEYS: &str = "ERR numkeys should be greater than 0";
    let n = args::int(a[1]).map_err(|_| CommandError::msg(NUMKEYS))?;
    if n <= 0 {
        return Err(CommandError::msg(NUMKEYS));
    }
    let n = n as usize;
    if n > a.len() - 2 {
        return Err(too_many);
    }
    Ok((&a[2..2 + n], 2 + n))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit] — size of the intersection.
fn sintercard(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (keys, i) = numkeys(a, CommandError::msg("ERR Number of keys can't be greater than number of args"))?;
    let limit = args::intercard_limit(a, i)?;
    let n = compute(ctx, keys, None, Op::Inter, limit)?.0.len();
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// SSCAN key cursor [MATCH pattern] [COUNT count] — [next cursor, [member, ...]]. A
/// table-encoded set is walked a few buckets per call (`store::types::scan`); an intset
/// or a small set comes whole with cursor 0, as in Redis.
fn sscan(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let scan = parse_scan_args(a)?;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let mut body = Vec::new();
    let mut n = 0;
    let mut next = 0;
    if let Some(set) = coll::read_key::<Set>(ctx, &mut shard, h, a[1])? {
        next = set.scan(scan.cursor, scan.count, |m| {
            if scan.matches(m) {
                encode::bulk(&mut body, m);
                n += 1;
            }
        });
    }
    write_scan_reply(ctx.out, next, n, &body);
    Ok(())
}

const SET: &[&str] = &["set"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("sadd", -3, WRITE | DENYOOM | FAST, (1, 1, 1), SET, "set", "Adds one or more members to a set. Creates the key if it doesn't exist.", sadd).since("1.0.0").args(ARGS_SADD).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("srem", -3, WRITE | FAST, (1, 1, 1), SET, "set", "Removes one or more members from a set. Deletes the set if the last member was removed.", srem).since("1.0.0").args(ARGS_SREM).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("smembers", 2, READONLY, (1, 1, 1), SET, "set", "Returns all members of a set.", smembers).since("1.0.0").args(ARGS_SMEMBERS).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("sismember", 3, READONLY | FAST, (1, 1, 1), SET, "set", "Determines whether a member belongs to a set.", sismember).since("1.0.0").args(ARGS_SISMEMBER).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("smismember", -3, READONLY | FAST, (1, 1, 1), SET, "set", "Determines whether multiple members belong to a set.", smismember).since("6.2.0").args(ARGS_SMISMEMBER).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("scard", 2, READONLY | FAST, (1, 1, 1), SET, "set", "Returns the number of members in a set.", scard).since("1.0.0").args(ARGS_SCARD).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("spop", -2, WRITE | FAST, (1, 1, 1), SET, "set", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", spop).since("1.0.0").args(ARGS_SPOP).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("srandmember", -2, READONLY, (1, 1, 1), SET, "set", "Get one or multiple random members from a set", srandmember).since("1.0.0").args(ARGS_SRANDMEMBER).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("smove", 4, WRITE | FAST | WATCH_CHANGED_ONLY, (1, 2, 1), SET, "set", "Moves a member from one set to another.", smove).since("1.0.0").args(ARGS_SMOVE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("sinter", -2, READONLY, (1, -1, 1), SET, "set", "Returns the intersect of multiple sets.", sinter).since("1.0.0").args(ARGS_SINTER).complexity("O(N*M)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("sintercard", -3, READONLY, (0, 0, 0), SET, "set", "Returns the number of members of the intersect of multiple sets.", sintercard).since("7.0.0").args(ARGS_SINTERCARD).complexity("O(N*M)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }]).numkeys(&[], 1),
    spec("sinterstore", -3, WRITE | DENYOOM, (1, -1, 1), SET, "set", "Stores the intersect of multiple sets in a key.", sinterstore).since("1.0.0").args(ARGS_SINTERSTORE).complexity("O(N*M)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
    spec("sunion", -2, READONLY, (1, -1, 1), SET, "set", "Returns the union of multiple sets.", sunion).since("1.0.0").args(ARGS_SUNION).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("sunionstore", -3, WRITE | DENYOOM, (1, -1, 1), SET, "set", "Stores the union of multiple sets in a key.", sunionstore).since("1.0.0").args(ARGS_SUNIONSTORE).complexity("O(N)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
    spec("sdiff", -2, READONLY, (1, -1, 1), SET, "set", "Returns the difference of multiple sets.", sdiff).since("1.0.0").args(ARGS_SDIFF).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output_order"]),
    spec("sdiffstore", -3, WRITE | DENYOOM, (1, -1, 1), SET, "set", "Stores the difference of multiple sets in a key.", sdiffstore).since("1.0.0").args(ARGS_SDIFFSTORE).complexity("O(N)").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
    spec("sscan", -3, READONLY, (1, 1, 1), SET, "set", "Iterates over members of a set.", sscan).since("2.8.0").args(ARGS_SSCAN).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_SADD: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_SREM: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_SMEMBERS: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_SISMEMBER: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String)];
    pub const ARGS_SMISMEMBER: &[Arg] = &[arg("key", Key).key_spec(0), arg("member", String).multiple()];
    pub const ARGS_SCARD: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_SPOP: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).since("3.2.0").optional()];
    pub const ARGS_SRANDMEMBER: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).since("2.6.0").optional()];
    pub const ARGS_SMOVE: &[Arg] = &[arg("source", Key).key_spec(0), arg("destination", Key).key_spec(1), arg("member", String)];
    pub const ARGS_SINTER: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_SINTERCARD: &[Arg] = &[arg("numkeys", Integer), arg("key", Key).key_spec(0).multiple(), arg("limit", Integer).token("LIMIT").optional()];
    pub const ARGS_SINTERSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("key", Key).key_spec(1).multiple()];
    pub const ARGS_SUNION: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_SUNIONSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("key", Key).key_spec(1).multiple()];
    pub const ARGS_SDIFF: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_SDIFFSTORE: &[Arg] = &[arg("destination", Key).key_spec(0), arg("key", Key).key_spec(1).multiple()];
    pub const ARGS_SSCAN: &[Arg] = &[arg("key", Key).key_spec(0), arg("cursor", Integer), arg("pattern", Pattern).token("MATCH").optional(), arg("count", Integer).token("COUNT").optional()];
}
use docs_args::*;
