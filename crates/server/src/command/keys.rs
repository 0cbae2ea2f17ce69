//! Generic key commands: existence, deletion, expiry, renaming and copying, iteration
//! (KEYS, SCAN, RANDOMKEY), database-wide operations (DBSIZE, FLUSHDB, FLUSHALL, SWAPDB)
//! and OBJECT introspection. They work on every value type.

use resp::encode;
use store::entry::{StrRef, ValueRef};
use store::events::class;
use store::glob::glob_match;
use store::ValueType;

use super::args::{self, is, ExpireUnit};
use super::flags::*;
use super::{container, spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};
use super::key_flags as kf;
use super::keyspace_events::{notify, notify_in};

/// DEL key [key ...] — the number of keys removed. Values are freed after the shard
/// locks are released; under `lazyfree-lazy-user-del yes` large ones in the background.
fn del(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let lazy = ctx.shared.config.read().lazyfree_lazy_user_del;
    remove_keys(ctx, a, lazy)
}

/// UNLINK key [key ...] — the number of keys removed; large values are freed in the
/// background (`lazyfree.rs`), as Redis does.
fn unlink(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    remove_keys(ctx, a, true)
}

fn remove_keys(ctx: &mut Ctx<'_>, a: &[&[u8]], lazy: bool) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let db = ctx.client.db;
    let mut locked = ks.lock_keys(db, &a[1..]);
    // Held until the locks are released (no allocation for up to 4 keys).
    let mut removed: smallvec::SmallVec<[store::Entry; 4]> = smallvec::SmallVec::new();
    for key in &a[1..] {
        let (h, shard) = locked.shard_for(db, key);
        if let Some(entry) = shard.remove(h, key, ctx.now_ms) {
            removed.push(entry);
            notify(ctx, class::GENERIC, "del", key);
        }
    }
    drop(locked);
    // As Redis: each removed key counts; none removed is no change (not logged).
    ctx.client.changes = Some(removed.len() as u64);
    ctx.client.changed_nothing = removed.is_empty();
    encode::integer(ctx.out, removed.len() as i64);
    if lazy {
        for entry in removed {
            ctx.shared.lazyfree.free_entry(entry);
        }
    }
    Ok(())
}

/// EXISTS key [key ...] — how many of the keys exist (repeats count).
fn exists(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    count_live(ctx, a, false)
}

/// TOUCH key [key ...] — how many exist; records an access on each.
fn touch(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    count_live(ctx, a, true)
}

fn count_live(ctx: &mut Ctx<'_>, a: &[&[u8]], touch: bool) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let db = ctx.client.db;
    // TOUCH records an access even under CLIENT NO-TOUCH (as Redis 7.2, which has it).
    let access = touch.then(|| {
        let rng = &mut *ctx.rng;
        ctx.shared.memory.touch(ctx.now_ms, || rng.f64())
    });
    let mut locked = ks.lock_keys(db, &a[1..]);
    let mut n = 0;
    for key in &a[1..] {
        let (h, shard) = locked.shard_for(db, key);
        let found = shard.read(h, key, ctx.now_ms, access).is_some();
        ctx.lookup(key, found);
        n += i64::from(found);
    }
    encode::integer(ctx.out, n);
    Ok(())
}

/// TYPE key — the type name, or "none".
fn type_(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let name = shard.read(h, a[1], ctx.now_ms, None).map_or("none", |e| e.value().value_type().name());
    ctx.lookup(a[1], name != "none");
    encode::simple(ctx.out, name.as_bytes());
    Ok(())
}

/// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT key time [NX|XX|GT|LT] — 1 if set, 0 if not.
fn expire_generic(
    ctx: &mut Ctx<'_>,
    a: &[&[u8]],
    unit: ExpireUnit,
    name: &'static str,
) -> Result<(), CommandError> {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for w in &a[3..] {
        if is(w, "nx") {
            nx = true;
        } else if is(w, "xx") {
            xx = true;
        } else if is(w, "gt") {
            gt = true;
        } else if is(w, "lt") {
            lt = true;
        } else {
            return Err(CommandError::Owned(format!(
                "ERR Unsupported option {}",
                String::from_utf8_lossy(w)
            )));
        }
    }
    if nx && (xx || gt || lt) {
        return Err(CommandError::msg(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(CommandError::msg("ERR GT and LT options at the same time are not compatible"));
    }
    let n = args::int(a[2])?;
    let when = args::expire_at_ms(n, unit, ctx.now_ms).ok_or(CommandError::InvalidExpire(name))?;
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let Some(e) = shard.get(h, a[1], ctx.now_ms) else {
        ctx.client.changed_nothing = true;
        encode::integer(ctx.out, 0);
        return Ok(());
    };
    let current = e.expire_at_ms();
    // A key without TTL has an infinite TTL: GT never beats it, LT always does.
    let allowed = (!nx || current.is_none())
        && (!xx || current.is_some())
        && (!gt || current.is_some_and(|c| when > c))
        && (!lt || current.is_none_or(|c| when < c));
    if !allowed {
        ctx.client.changed_nothing = true;
        encode::integer(ctx.out, 0);
        return Ok(());
    }
    // The log gets what Redis 7.0 propagates: a DEL for a time already past, else
    // PEXPIREAT with the absolute time (and the options as given). A replica never
    // deletes for a past time (Redis's checkAlreadyExpired): its master's PEXPIREAT may
    // arrive late, and the master's DEL comes when the master expires the key.
    if when <= ctx.now_ms && !ctx.shared.replica.is_replica() {
        shard.remove(h, a[1], ctx.now_ms);
        notify(ctx, class::GENERIC, "del", a[1]);
        ctx.propagate_as(|| vec![crate::propagate::record(&[b"DEL", a[1]])]);
    } else {
        shard.set_expire(h, a[1], Some(when), ctx.now_ms);
        notify(ctx, class::GENERIC, "expire", a[1]);
        if unit != ExpireUnit::AbsMillis {
            ctx.propagate_as(|| {
                let at = when.to_string();
                let mut words: Vec<&[u8]> = vec![b"PEXPIREAT", a[1], at.as_bytes()];
                words.extend_from_slice(&a[3..]);
                vec![crate::propagate::record(&words)]
            });
        }
    }
    encode::integer(ctx.out, 1);
    Ok(())
}

fn expire(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    expire_generic(ctx, a, ExpireUnit::RelSeconds, "expire")
}
fn pexpire(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    expire_generic(ctx, a, ExpireUnit::RelMillis, "pexpire")
}
fn expireat(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    expire_generic(ctx, a, ExpireUnit::AbsSeconds, "expireat")
}
fn pexpireat(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    expire_generic(ctx, a, ExpireUnit::AbsMillis, "pexpireat")
}

#[derive(Clone, Copy)]
enum TtlForm {
    RemainingSeconds,
    RemainingMillis,
    AbsSeconds,
    AbsMillis,
}

/// TTL/PTTL/EXPIRETIME/PEXPIRETIME key — -2 when absent, -1 without expiry.
fn ttl_generic(ctx: &mut Ctx<'_>, key: &[u8], form: TtlForm) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, key);
    let found = shard.get(h, key, ctx.now_ms);
    ctx.lookup(key, found.is_some());
    let reply = match found {
        None => -2,
        Some(e) => match e.expire_at_ms() {
            None => -1,
            Some(at) => {
                let left = (at - ctx.now_ms).max(0);
                match form {
                    TtlForm::RemainingSeconds => (left + 500) / 1000,
                    TtlForm::RemainingMillis => left,
                    TtlForm::AbsSeconds => at / 1000,
                    TtlForm::AbsMillis => at,
                }
            }
        },
    };
    encode::integer(ctx.out, reply);
    Ok(())
}

fn ttl(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    ttl_generic(ctx, a[1], TtlForm::RemainingSeconds)
}
fn pttl(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    ttl_generic(ctx, a[1], TtlForm::RemainingMillis)
}
fn expiretime(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    ttl_generic(ctx, a[1], TtlForm::AbsSeconds)
}
fn pexpiretime(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    ttl_generic(ctx, a[1], TtlForm::AbsMillis)
}

/// PERSIST key — 1 if a TTL was removed.
fn persist(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let had = shard.get(h, a[1], ctx.now_ms).is_some_and(|e| e.expire_at_ms().is_some());
    if had {
        shard.set_expire(h, a[1], None, ctx.now_ms);
        notify(ctx, class::GENERIC, "persist", a[1]);
    } else {
        ctx.client.changed_nothing = true;
    }
    encode::integer(ctx.out, i64::from(had));
    Ok(())
}

/// Moves `src` (db `sdb`) to `dst` (db `ddb`). Returns Ok(false) when `dst` exists and
/// `replace` is false, Err(NoSuchKey) when `src` is absent. Once done, and before the
/// locks go, queues the keyspace events given as (event, database, key); a replaced
/// `dst` is deleted first, so that it is `new` as in Redis.
fn move_key(
    ctx: &Ctx<'_>,
    (sdb, src): (usize, &[u8]),
    (ddb, dst): (usize, &[u8]),
    replace: bool,
    copy: bool,
    events: &[(&'static str, usize, &[u8])],
) -> Result<bool, CommandError> {
    let ks = ctx.ks();
    let mut wanted =
        vec![(sdb, ks.shard_index(ks.hash(src))), (ddb, ks.shard_index(ks.hash(dst)))];
    let mut locked = ks.lock_set(&mut wanted);
    let now = ctx.now_ms;
    // Both keys' shards are locked; each step borrows one of them (possibly the same).
    let found = locked.shard_for(sdb, src).1.get(ks.hash(src), src, now).is_some();
    if copy {
        // COPY reads its source as Redis's read lookup does (RENAME and MOVE do not).
        ctx.lookup(src, found);
    }
    if !found {
        return Err(CommandError::NoSuchKey);
    }
    let (dh, dshard) = locked.shard_for(ddb, dst);
    if !replace && dshard.get(dh, dst, now).is_some() {
        return Ok(false);
    }
    let (sh, sshard) = locked.shard_for(sdb, src);
    let entry = if copy {
        sshard.peek(sh, src, now).map(|e| e.clone_with_key(dst))
    } else {
        sshard.remove(sh, src, now).map(|e| e.with_key(dst))
    };
    if let Some(e) = entry {
        let (dh, dshard) = locked.shard_for(ddb, dst);
        if replace {
            // (Without REPLACE `dst` was found absent above.)
            dshard.remove(dh, dst, now);
        }
        dshard.insert(dh, e);
        for &(event, db, key) in events {
            notify_in(ctx, class::GENERIC, event, db, key);
        }
    }
    Ok(true)
}

/// RENAME key newkey — OK.
fn rename(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let db = ctx.client.db;
    if a[1] == a[2] {
        // Same key: only checks existence.
        let ks = ctx.ks();
        let (h, mut s) = ks.lock_key(db, a[1]);
        if s.get(h, a[1], ctx.now_ms).is_none() {
            return Err(CommandError::NoSuchKey);
        }
        ctx.client.changed_nothing = true;
    } else {
        move_key(ctx, (db, a[1]), (db, a[2]), true, false, &[("rename_from", db, a[1]), ("rename_to", db, a[2])])?;
    }
    ctx.ok();
    Ok(())
}

/// RENAMENX key newkey — 1 if renamed, 0 if newkey existed.
fn renamenx(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let db = ctx.client.db;
    let done = if a[1] == a[2] {
        let ks = ctx.ks();
        let (h, mut s) = ks.lock_key(db, a[1]);
        if s.get(h, a[1], ctx.now_ms).is_none() {
            return Err(CommandError::NoSuchKey);
        }
        false
    } else {
        move_key(ctx, (db, a[1]), (db, a[2]), false, false, &[("rename_from", db, a[1]), ("rename_to", db, a[2])])?
    };
    // Not done (the destination held a key, the source none): no change, as Redis.
    ctx.client.changed_nothing = !done;
    encode::integer(ctx.out, i64::from(done));
    Ok(())
}

/// COPY source destination [DB db] [REPLACE] — 1 if copied.
fn copy(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let databases = ctx.ks().databases();
    let mut ddb = ctx.client.db;
    let mut replace = false;
    let mut i = 3;
    while i < a.len() {
        if is(a[i], "replace") {
            replace = true;
        } else if is(a[i], "db") && i + 1 < a.len() {
            ddb = args::db_index(a[i + 1], databases)?;
            i += 1;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    let sdb = ctx.client.db;
    if sdb == ddb && a[1] == a[2] {
        return Err(CommandError::msg("ERR source and destination objects are the same"));
    }
    let done = match move_key(ctx, (sdb, a[1]), (ddb, a[2]), replace, true, &[("copy_to", ddb, a[2])]) {
        Ok(d) => d,
        Err(CommandError::NoSuchKey) => false,
        Err(e) => return Err(e),
    };
    // Not done (the destination held a key, the source none): no change, as Redis.
    ctx.client.changed_nothing = !done;
    encode::integer(ctx.out, i64::from(done));
    Ok(())
}

/// MOVE key db — 1 if moved.
fn move_(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let databases = ctx.ks().databases();
    let ddb = args::db_index(a[2], databases)?;
    let sdb = ctx.client.db;
    if sdb == ddb {
        return Err(CommandError::msg("ERR source and destination objects are the same"));
    }
    let done = match move_key(ctx, (sdb, a[1]), (ddb, a[1]), false, false, &[("move_from", sdb, a[1]), ("move_to", ddb, a[1])]) {
        Ok(d) => d,
        Err(CommandError::NoSuchKey) => false,
        Err(e) => return Err(e),
    };
    // Not done (the destination held a key, the source none): no change, as Redis.
    ctx.client.changed_nothing = !done;
    encode::integer(ctx.out, i64::from(done));
    Ok(())
}

/// KEYS pattern — every live key matching (expired keys are skipped, not deleted,
/// as in Redis). O(N).
fn keys(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let pattern = a[1];
    let all = pattern == b"*";
    let mut body = Vec::new();
    let mut n = 0;
    for s in 0..ks.shards_per_db() {
        let shard = ks.lock(ctx.client.db, s);
        shard.for_each_live(ctx.now_ms, |e| {
            if all || glob_match(pattern, e.key(), false) {
                encode::bulk(&mut body, e.key());
                n += 1;
            }
        });
    }
    encode::array_len(ctx.out, n);
    ctx.out.extend_from_slice(&body);
    Ok(())
}

// SCAN cursor layout: bits 52..63 shard, 40..51 the shard's epoch (low 12 bits),
// 0..39 bucket position. A position of 0 ignores the epoch.

/// Most shards per database a SCAN cursor can address (12 bits of shard index).
pub const MAX_SHARDS: usize = 1 << 12;
const POS_BITS: u32 = 40;
const EPOCH_MASK: u64 = 0xfff;

fn encode_cursor(shard: usize, epoch: u32, pos: usize) -> u64 {
    ((shard as u64) << 52) | ((u64::from(epoch) & EPOCH_MASK) << POS_BITS) | pos as u64
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] — [next cursor, keys].
fn scan(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    // Like Redis's strtoul: a negative cursor wraps (and simply ends the scan).
    let cursor: u64 = std::str::from_utf8(a[1])
        .ok()
        .and_then(|s| s.parse::<u64>().ok().or_else(|| s.parse::<i64>().ok().map(|n| n as u64)))
        .ok_or(CommandError::msg("ERR invalid cursor"))?;
    let mut pattern: Option<&[u8]> = None;
    let mut count = 10usize;
    let mut type_filter: Option<Option<ValueType>> = None;
    let mut i = 2;
    while i < a.len() {
        let Some(v) = a.get(i + 1) else { return Err(CommandError::Syntax) };
        if is(a[i], "match") {
            pattern = Some(*v).filter(|p| *p != b"*");
        } else if is(a[i], "count") {
            let n = args::int(v)?;
            if n < 1 {
                return Err(CommandError::Syntax);
            }
            count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if is(a[i], "type") {
            type_filter = Some(ValueType::parse(v));
        } else {
            return Err(CommandError::Syntax);
        }
        i += 2;
    }
    let ks = ctx.ks();
    let shards = ks.shards_per_db();
    let mut shard_idx = (cursor >> 52) as usize;
    let mut pos = (cursor & ((1 << POS_BITS) - 1)) as usize;
    let epoch = ((cursor >> POS_BITS) & EPOCH_MASK) as u32;
    let mut body = Vec::new();
    let mut n = 0;
    let mut visited = 0;
    let mut next = 0u64;
    let mut first = true;
    while shard_idx < shards {
        let shard = ks.lock(ctx.client.db, shard_idx);
        let shard_epoch = shard.epoch() & EPOCH_MASK as u32;
        if first && pos != 0 && epoch != shard_epoch {
            pos = 0; // the table moved entries since the cursor was made: rescan it
        }
        first = false;
        let want = count.saturating_sub(visited).max(1);
        let resume = shard.scan_from(pos, want, ctx.now_ms, |e| {
            visited += 1;
            if pattern.is_some_and(|p| !glob_match(p, e.key(), false)) {
                return;
            }
            if let Some(t) = type_filter {
                if Some(e.value().value_type()) != t {
                    return;
                }
            }
            encode::bulk(&mut body, e.key());
            n += 1;
        });
        match resume {
            Some(p) => {
                next = encode_cursor(shard_idx, shard_epoch, p);
                break;
            }
            None => {
                shard_idx += 1;
                pos = 0;
                if shard_idx < shards && visited >= count {
                    next = encode_cursor(shard_idx, 0, 0);
                    break;
                }
            }
        }
    }
    encode::array_len(ctx.out, 2);
    encode::bulk(ctx.out, itoa::Buffer::new().format(next).as_bytes());
    encode::array_len(ctx.out, n);
    ctx.out.extend_from_slice(&body);
    Ok(())
}

/// RANDOMKEY — a random key or nil.
fn randomkey(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let shards = ks.shards_per_db();
    let start = ctx.rng.usize(..shards);
    for i in 0..shards {
        let mut shard = ks.lock(ctx.client.db, (start + i) % shards);
        if let Some(e) = shard.random_live(ctx.now_ms, ctx.rng) {
            encode::bulk(ctx.out, e.key());
            return Ok(());
        }
    }
    ctx.null();
    Ok(())
}

/// DBSIZE — number of keys in the selected database.
fn dbsize(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let n = ctx.ks().dbsize(ctx.client.db);
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// Parses FLUSHDB/FLUSHALL's [ASYNC|SYNC]; true for asynchronous freeing.
fn flush_mode(ctx: &Ctx<'_>, a: &[&[u8]]) -> Result<bool, CommandError> {
    match a.get(1) {
        None => Ok(ctx.shared.config.read().lazyfree_lazy_user_flush),
        Some(w) if a.len() == 2 && is(w, "async") => Ok(true),
        Some(w) if a.len() == 2 && is(w, "sync") => Ok(false),
        Some(_) => Err(CommandError::Syntax),
    }
}

fn free_tables(ctx: &Ctx<'_>, tables: Vec<hashbrown::raw::RawTable<store::Entry>>, asynchronous: bool) {
    if asynchronous {
        // Freeing millions of entries takes time: do it off the event loop.
        ctx.shared.lazyfree.free_tables(tables);
    } else {
        drop(tables);
    }
}

/// The keys a flush took out of the keyspace (each counts as a change, as in Redis).
fn keys_in(tables: &[hashbrown::raw::RawTable<store::Entry>]) -> u64 {
    tables.iter().map(|t| t.len() as u64).sum()
}

/// FLUSHDB [ASYNC|SYNC] — OK.
fn flushdb(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let asynchronous = flush_mode(ctx, a)?;
    let tables = ctx.ks().flush_db(ctx.client.db);
    ctx.client.changes = Some(keys_in(&tables));
    free_tables(ctx, tables, asynchronous);
    // Client-side caches are told to drop everything (never a published event).
    notify(ctx, class::FLUSH, "flush", b"");
    ctx.ok();
    Ok(())
}

/// FLUSHALL [ASYNC|SYNC] — OK. As Redis: a running BGSAVE is abandoned (its file would
/// bring the flushed keys back), and with save rules an empty `dbfilename` is written
/// before the reply (errors are logged, not returned, as Redis's rdbSave there).
fn flushall(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let asynchronous = flush_mode(ctx, a)?;
    crate::snapshot::abort_dump(ctx.shared);
    let ks = ctx.ks();
    let mut tables = Vec::new();
    for db in 0..ks.databases() {
        tables.extend(ks.flush_db(db));
    }
    ctx.client.changes = Some(keys_in(&tables));
    free_tables(ctx, tables, asynchronous);
    notify(ctx, class::FLUSH, "flush", b"");
    if crate::snapshot::has_save_rules(ctx.shared) {
        // Every shard held instead of every gate: the file is one point in time.
        let dbs: Vec<usize> = (0..ks.databases()).collect();
        let mut locked = ks.lock_dbs(&dbs);
        if crate::snapshot::save_locked(ctx.shared, &mut locked).is_ok() {
            // The save holds the flush: no change since it (Redis's counter reads 0).
            ctx.client.changes = Some(0);
        }
    }
    ctx.ok();
    Ok(())
}

/// SWAPDB index1 index2 — OK.
fn swapdb(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let n = ctx.ks().databases();
    let x = store::types::string::parse_i64(a[1]).ok_or(CommandError::msg("ERR invalid first DB index"))?;
    let y = store::types::string::parse_i64(a[2]).ok_or(CommandError::msg("ERR invalid second DB index"))?;
    let in_range = |v: i64| usize::try_from(v).ok().filter(|&v| v < n);
    let (Some(x), Some(y)) = (in_range(x), in_range(y)) else {
        return Err(CommandError::msg("ERR DB index is out of range"));
    };
    ctx.ks().swap_dbs(x, y);
    ctx.ok();
    Ok(())
}

const LFU_NOT_SELECTED: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
const LFU_SELECTED: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";

/// Redis shares integer objects 0..9999 when no maxmemory is set; OBJECT REFCOUNT
/// reports them as such. Basalt stores every integer inline and mimics that reply.
const SHARED_INTEGERS: i64 = 10_000;

/// OBJECT ENCODING|IDLETIME|FREQ|REFCOUNT key.
fn object_sub(ctx: &mut Ctx<'_>, a: &[&[u8]], what: &str) -> Result<(), CommandError> {
    let lfu = ctx.shared.memory.policy().lfu();
    let ks = ctx.ks();
    let (h, shard) = ks.lock_key(ctx.client.db, a[2]);
    let found = shard.peek(h, a[2], ctx.now_ms);
    // Counted as a hit or miss, without a `keymiss` event (Redis's OBJECT lookup).
    ctx.count_lookup(found.is_some());
    let Some(e) = found else {
        ctx.null();
        return Ok(());
    };
    match what {
        "encoding" => {
            encode::bulk(ctx.out, e.encoding().as_bytes());
        }
        "idletime" => {
            if lfu {
                return Err(CommandError::msg(LFU_SELECTED));
            }
            let idle = store::clock::lru_idle_seconds(ctx.now_ms, e.lru());
            encode::integer(ctx.out, i64::from(idle));
        }
        "freq" => {
            if !lfu {
                return Err(CommandError::msg(LFU_NOT_SELECTED));
            }
            encode::integer(ctx.out, i64::from(ctx.shared.memory.frequency(e.lru(), ctx.now_ms)));
        }
        _ => {
            let shared = matches!(e.value(), ValueRef::Str(StrRef::Int(n)) if (0..SHARED_INTEGERS).contains(&n))
                && ctx.shared.config.read().maxmemory == 0;
            encode::integer(ctx.out, if shared { i64::from(i32::MAX) } else { 1 });
        }
    }
    Ok(())
}

fn object_encoding(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    object_sub(ctx, a, "encoding")
}
fn object_idletime(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    object_sub(ctx, a, "idletime")
}
fn object_freq(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    object_sub(ctx, a, "freq")
}
fn object_refcount(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    object_sub(ctx, a, "refcount")
}
fn object_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help(
        ctx,
        "OBJECT",
        &[
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
        ],
    );
    Ok(())
}

const KEYSPACE: &[&str] = &["keyspace"];
const KEYSPACE_DANGEROUS: &[&str] = &["keyspace", "dangerous"];

static OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    spec("encoding", 3, READONLY, (2, 2, 1), KEYSPACE, "generic", "Returns the internal encoding of a Redis object.", object_encoding).since("2.2.3").args(ARGS_OBJECT_ENCODING).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("idletime", 3, READONLY, (2, 2, 1), KEYSPACE, "generic", "Returns the time since the last access to a Redis object.", object_idletime).since("2.2.3").args(ARGS_OBJECT_IDLETIME).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("freq", 3, READONLY, (2, 2, 1), KEYSPACE, "generic", "Returns the logarithmic access frequency counter of a Redis object.", object_freq).since("4.0.0").args(ARGS_OBJECT_FREQ).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("refcount", 3, READONLY, (2, 2, 1), KEYSPACE, "generic", "Returns the reference count of a value of a key.", object_refcount).since("2.2.3").args(ARGS_OBJECT_REFCOUNT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("help", 2, LOADING | STALE, (0, 0, 0), KEYSPACE, "generic", "Returns helpful text about the different subcommands.", object_help).since("6.2.0").complexity("O(1)"),
];

/// What MOVE changes, for WATCH: its key in the current database and in the target
/// one (an argument that does not parse names nothing more: the command then fails).
fn moved<'a>(db: usize, args: &[&'a [u8]]) -> Vec<(usize, &'a [u8])> {
    let mut v = vec![(db, args[1])];
    v.extend(args.get(2).and_then(|a| db_index(a)).map(|to| (to, args[1])));
    v
}

/// What COPY changes, for WATCH: its destination in the database DB names (the current
/// one by default).
fn copied<'a>(db: usize, args: &[&'a [u8]]) -> Vec<(usize, &'a [u8])> {
    let dest_db = args
        .iter()
        .skip(3)
        .position(|a| super::args::is(a, "db"))
        .and_then(|i| args.get(3 + i + 1))
        .and_then(|a| db_index(a))
        .unwrap_or(db);
    args.get(2).map(|dst| vec![(dest_db, *dst)]).unwrap_or_default()
}

fn db_index(arg: &[u8]) -> Option<usize> {
    store::types::string::parse_i64(arg).and_then(|n| usize::try_from(n).ok())
}

pub static COMMANDS: &[CommandSpec] = &[
    spec("del", -2, WRITE, (1, -1, 1), KEYSPACE, "generic", "Deletes one or more keys.", del).since("1.0.0").args(ARGS_DEL).complexity("O(N) or O(M) or O(1)").key_specs(&[KeySpec { flags: kf::RM | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    spec("unlink", -2, WRITE | FAST, (1, -1, 1), KEYSPACE, "generic", "Asynchronously deletes one or more keys.", unlink).since("4.0.0").args(ARGS_UNLINK).complexity("O(1) or O(N)").key_specs(&[KeySpec { flags: kf::RM | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    spec("exists", -2, READONLY | FAST, (1, -1, 1), KEYSPACE, "generic", "Determines whether one or more keys exist.", exists).since("1.0.0").args(ARGS_EXISTS).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    spec("touch", -2, READONLY | FAST, (1, -1, 1), KEYSPACE, "generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", touch).since("3.2.1").args(ARGS_TOUCH).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).tips(&["request_policy:multi_shard", "response_policy:agg_sum"]),
    spec("type", 2, READONLY | FAST, (1, 1, 1), KEYSPACE, "generic", "Determines the type of value stored at a key.", type_).since("1.0.0").args(ARGS_TYPE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("expire", -3, WRITE | FAST, (1, 1, 1), KEYSPACE, "generic", "Sets the expiration time of a key in seconds.", expire).since("1.0.0").args(ARGS_EXPIRE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("pexpire", -3, WRITE | FAST, (1, 1, 1), KEYSPACE, "generic", "Sets the expiration time of a key in milliseconds.", pexpire).since("2.6.0").args(ARGS_PEXPIRE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("expireat", -3, WRITE | FAST, (1, 1, 1), KEYSPACE, "generic", "Sets the expiration time of a key to a Unix timestamp.", expireat).since("1.2.0").args(ARGS_EXPIREAT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("pexpireat", -3, WRITE | FAST, (1, 1, 1), KEYSPACE, "generic", "Sets the expiration time of a key to a Unix milliseconds timestamp.", pexpireat).since("2.6.0").args(ARGS_PEXPIREAT).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("ttl", 2, READONLY | FAST, (1, 1, 1), KEYSPACE, "generic", "Returns the expiration time in seconds of a key.", ttl).since("1.0.0").args(ARGS_TTL).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("pttl", 2, READONLY | FAST, (1, 1, 1), KEYSPACE, "generic", "Returns the expiration time in milliseconds of a key.", pttl).since("2.6.0").args(ARGS_PTTL).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("expiretime", 2, READONLY | FAST, (1, 1, 1), KEYSPACE, "generic", "Returns the expiration time of a key as a Unix timestamp.", expiretime).since("7.0.0").args(ARGS_EXPIRETIME).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("pexpiretime", 2, READONLY | FAST, (1, 1, 1), KEYSPACE, "generic", "Returns the expiration time of a key as a Unix milliseconds timestamp.", pexpiretime).since("7.0.0").args(ARGS_PEXPIRETIME).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("persist", 2, WRITE | FAST, (1, 1, 1), KEYSPACE, "generic", "Removes the expiration time of a key.", persist).since("2.2.0").args(ARGS_PERSIST).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("rename", 3, WRITE, (1, 2, 1), KEYSPACE, "generic", "Renames a key and overwrites the destination.", rename).since("1.0.0").args(ARGS_RENAME).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("renamenx", 3, WRITE | FAST, (1, 2, 1), KEYSPACE, "generic", "Renames a key only when the target key name doesn't exist.", renamenx).since("1.0.0").args(ARGS_RENAMENX).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::OW | kf::INSERT, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("copy", -3, WRITE | DENYOOM, (1, 2, 1), KEYSPACE, "generic", "Copies the value of a key to a new key.", copy).since("6.2.0").args(ARGS_COPY).complexity("O(N) or O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).writes(Writes::InDatabases(copied)),
    spec("move", 3, WRITE | FAST, (1, 1, 1), KEYSPACE, "generic", "Moves a key to another database.", move_).since("1.0.0").args(ARGS_MOVE).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).writes(Writes::InDatabases(moved)),
    spec("keys", 2, READONLY, (0, 0, 0), KEYSPACE_DANGEROUS, "generic", "Returns all key names that match a pattern.", keys).since("1.0.0").args(ARGS_KEYS).complexity("O(N)").tips(&["request_policy:all_shards", "nondeterministic_output_order"]),
    spec("scan", -2, READONLY, (0, 0, 0), KEYSPACE, "generic", "Iterates over the key names in the database.", scan).since("2.8.0").args(ARGS_SCAN).complexity("O(1) or O(N)").tips(&["nondeterministic_output", "request_policy:special"]),
    spec("randomkey", 1, READONLY, (0, 0, 0), KEYSPACE, "generic", "Returns a random key name from the database.", randomkey).since("1.0.0").complexity("O(1)").tips(&["request_policy:all_shards", "nondeterministic_output"]),
    spec("dbsize", 1, READONLY | FAST | READS_ANY_KEY, (0, 0, 0), KEYSPACE, "server", "Returns the number of keys in the database.", dbsize).since("1.0.0").complexity("O(1)").tips(&["request_policy:all_shards", "response_policy:agg_sum"]),
    spec("flushdb", -1, WRITE | WHOLE_KEYSPACE, (0, 0, 0), KEYSPACE_DANGEROUS, "server", "Remove all keys from the current database.", flushdb).since("1.0.0").args(ARGS_FLUSHDB).complexity("O(N)").tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    spec("flushall", -1, WRITE | WHOLE_KEYSPACE, (0, 0, 0), KEYSPACE_DANGEROUS, "server", "Removes all keys from all databases.", flushall).since("1.0.0").args(ARGS_FLUSHALL).complexity("O(N)").tips(&["request_policy:all_shards", "response_policy:all_succeeded"]).writes(Writes::AllDatabases),
    spec("swapdb", 3, WRITE | FAST | WHOLE_KEYSPACE, (0, 0, 0), KEYSPACE_DANGEROUS, "server", "Swaps two Redis databases.", swapdb).since("4.0.0").args(ARGS_SWAPDB).complexity("O(N)").writes(Writes::AllDatabases),
    container("object", "generic", "A container for object introspection commands.", OBJECT_SUBCOMMANDS).since("2.2.3").complexity("Depends on the subcommand."),
];


/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_OBJECT_ENCODING: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_OBJECT_IDLETIME: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_OBJECT_FREQ: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_OBJECT_REFCOUNT: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_DEL: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_UNLINK: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_EXISTS: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_TOUCH: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_TYPE: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_EXPIRE: &[Arg] = &[arg("key", Key).key_spec(0), arg("seconds", Integer), arg("condition", OneOf).since("7.0.0").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX"), arg("gt", PureToken).token("GT"), arg("lt", PureToken).token("LT")])];
    pub const ARGS_PEXPIRE: &[Arg] = &[arg("key", Key).key_spec(0), arg("milliseconds", Integer), arg("condition", OneOf).since("7.0.0").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX"), arg("gt", PureToken).token("GT"), arg("lt", PureToken).token("LT")])];
    pub const ARGS_EXPIREAT: &[Arg] = &[arg("key", Key).key_spec(0), arg("unix-time-seconds", UnixTime), arg("condition", OneOf).since("7.0.0").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX"), arg("gt", PureToken).token("GT"), arg("lt", PureToken).token("LT")])];
    pub const ARGS_PEXPIREAT: &[Arg] = &[arg("key", Key).key_spec(0), arg("unix-time-milliseconds", UnixTime), arg("condition", OneOf).since("7.0.0").optional().args(&[arg("nx", PureToken).token("NX"), arg("xx", PureToken).token("XX"), arg("gt", PureToken).token("GT"), arg("lt", PureToken).token("LT")])];
    pub const ARGS_TTL: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_PTTL: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_EXPIRETIME: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_PEXPIRETIME: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_PERSIST: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_RENAME: &[Arg] = &[arg("key", Key).key_spec(0), arg("newkey", Key).key_spec(1)];
    pub const ARGS_RENAMENX: &[Arg] = &[arg("key", Key).key_spec(0), arg("newkey", Key).key_spec(1)];
    pub const ARGS_COPY: &[Arg] = &[arg("source", Key).key_spec(0), arg("destination", Key).key_spec(1), arg("destination-db", Integer).token("DB").optional(), arg("replace", PureToken).token("REPLACE").optional()];
    pub const ARGS_MOVE: &[Arg] = &[arg("key", Key).key_spec(0), arg("db", Integer)];
    pub const ARGS_KEYS: &[Arg] = &[arg("pattern", Pattern)];
    pub const ARGS_SCAN: &[Arg] = &[arg("cursor", Integer), arg("pattern", Pattern).token("MATCH").optional(), arg("count", Integer).token("COUNT").optional(), arg("type", String).token("TYPE").since("6.0.0").optional()];
    pub const ARGS_FLUSHDB: &[Arg] = &[arg("async", OneOf).optional().args(&[arg("async", PureToken).token("ASYNC").since("4.0.0"), arg("sync", PureToken).token("SYNC").since("6.2.0")])];
    pub const ARGS_FLUSHALL: &[Arg] = &[arg("async", OneOf).optional().args(&[arg("async", PureToken).token("ASYNC").since("4.0.0"), arg("sync", PureToken).token("SYNC").since("6.2.0")])];
    pub const ARGS_SWAPDB: &[Arg] = &[arg("index1", Integer), arg("index2", Integer)];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn expire_flags_follow_redis() {
        let mut h = Harness::new();
        h.text("SET k v");
        assert_eq!(h.text("EXPIRE k 100 XX"), "0");
        assert_eq!(h.text("EXPIRE k 100 GT"), "0");
        assert_eq!(h.text("EXPIRE k 100 LT"), "1");
        assert_eq!(h.text("EXPIRE k 50 NX"), "0");
        assert_eq!(h.text("EXPIRE k 200 GT"), "1");
        assert_eq!(h.text("TTL k"), "200");
        assert_eq!(h.text("EXPIRE k 10 NX XX"), "ERR NX and XX, GT or LT options at the same time are not compatible");
        assert_eq!(h.text("EXPIRE k 10 GT LT"), "ERR GT and LT options at the same time are not compatible");
        assert_eq!(h.text("EXPIRE k 9223372036854775807"), "ERR invalid expire time in 'expire' command");
        assert_eq!(h.text("EXPIRE k -1"), "1");
        assert_eq!(h.text("EXISTS k"), "0");
        assert_eq!(h.text("TTL k"), "-2");
    }

    #[test]
    fn rename_copy_move_and_swapdb() {
        let mut h = Harness::new();
        assert_eq!(h.text("RENAME nope x"), "ERR no such key");
        h.text("SET a 1");
        h.text("EXPIRE a 100");
        assert_eq!(h.text("RENAME a b"), "OK");
        assert_eq!(h.text("TTL b"), "100");
        assert_eq!(h.text("COPY b c"), "1");
        assert_eq!(h.text("COPY b c"), "0");
        assert_eq!(h.text("COPY b c REPLACE"), "1");
        assert_eq!(h.text("COPY b b"), "ERR source and destination objects are the same");
        assert_eq!(h.text("MOVE c 1"), "1");
        assert_eq!(h.text("MOVE b 99"), "ERR DB index is out of range");
        assert_eq!(h.text("SELECT 1"), "OK");
        assert_eq!(h.text("GET c"), "1");
        assert_eq!(h.text("SWAPDB 0 1"), "OK");
        assert_eq!(h.text("GET b"), "1");
        assert_eq!(h.text("DBSIZE"), "1");
        assert_eq!(h.text("SWAPDB 0 x"), "ERR invalid second DB index");
    }

    #[test]
    fn scan_visits_every_key_once_per_full_iteration() {
        let mut h = Harness::new();
        for i in 0..500 {
            h.text(&format!("SET key:{i} v"));
        }
        let mut cursor = "0".to_string();
        let mut seen = std::collections::HashSet::new();
        loop {
            let reply = h.run(&format!("SCAN {cursor} COUNT 7"));
            let resp::Frame::Array(parts) = reply else { panic!("not an array") };
            cursor = crate::command::testing::render(&parts[0]);
            if let resp::Frame::Array(keys) = &parts[1] {
                for k in keys {
                    seen.insert(crate::command::testing::render(k));
                }
            }
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(seen.len(), 500);
        let reply = h.run("SCAN 0 MATCH key:49? COUNT 1000");
        let resp::Frame::Array(parts) = reply else { panic!("not an array") };
        assert_eq!(crate::command::testing::render(&parts[0]), "0");
        let mut keys: Vec<String> = match &parts[1] {
            resp::Frame::Array(k) => k.iter().map(crate::command::testing::render).collect(),
            _ => panic!("keys not an array"),
        };
        keys.sort();
        let want: Vec<String> = (490..500).map(|i| format!("key:{i}")).collect();
        assert_eq!(keys, want);
    }

    #[test]
    fn active_expiry_removes_untouched_keys() {
        let mut h = Harness::new();
        for i in 0..200 {
            h.text(&format!("SET k{i} v PX 10"));
        }
        h.text("SET keep v");
        h.advance_ms(11);
        for _ in 0..20 {
            crate::expire::active_cycle(&h.shared, 0, h.clock.now_ms());
        }
        assert_eq!(h.text("DBSIZE"), "1");
        assert!(h.text("INFO stats").contains("expired_keys:200"));
    }
}
