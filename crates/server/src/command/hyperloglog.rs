//! HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, as Redis 7.0.
//!
//! A HyperLogLog is a string value in Redis's layout (`store::types::hyperloglog`), so
//! persistence, DUMP/RESTORE and replication carry it as any string. Handlers check the
//! value as Redis does (a string that is not a HyperLogLog gets `-WRONGTYPE Key is not a
//! valid HyperLogLog string value.`, one whose opcodes are broken `-INVALIDOBJ`), then
//! change it in place under the key's shard lock.
//!
//! PFCOUNT of one key caches the cardinality in the value's header, as Redis does: that
//! is a change, which breaks a WATCH of the key, invalidates it for client-side caching,
//! and is propagated (the PFCOUNT itself, ordered as a write: `CHANGES_ON_READ`), so that
//! the log and the replicas hold the same bytes, as Redis's do. While the keyspace holds
//! still (CLIENT PAUSE, a FAILOVER waiting for its replica) the count is not cached.

use resp::encode;
use store::entry::{Entry, Payload, StrRef, ValueRef};
use store::events::class;
use store::shard::Shard;
use store::types::hyperloglog::{self as hll, Corrupt, Encoding};

use super::flags::*;
use super::key_flags as kf;
use super::keyspace_events::notify;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

impl From<Corrupt> for CommandError {
    fn from(_: Corrupt) -> CommandError {
        CommandError::msg(CORRUPT)
    }
}

/// Looks a key up (recording the access unless NO-TOUCH) and checks it holds a
/// HyperLogLog: Ok(None) when absent, Ok(Some(encoding)) when it does.
fn find_hll(shard: &mut Shard, hash: u64, key: &[u8], ctx: &Ctx<'_>) -> Result<Option<Encoding>, CommandError> {
    match shard.read(hash, key, ctx.now_ms, ctx.access()).map(|e| e.value()) {
        None => Ok(None),
        Some(ValueRef::Obj(_)) => Err(CommandError::WrongType),
        Some(ValueRef::Str(StrRef::Int(_))) => Err(CommandError::msg(NOT_HLL)),
        Some(ValueRef::Str(StrRef::Bytes(b))) => hll::encoding(b).map(Some).ok_or(CommandError::msg(NOT_HLL)),
    }
}

/// [`find_hll`] as Redis's read lookup: a keyspace hit or a miss.
fn lookup_hll(shard: &mut Shard, hash: u64, key: &[u8], ctx: &Ctx<'_>) -> Result<Option<Encoding>, CommandError> {
    let found = find_hll(shard, hash, key, ctx);
    ctx.lookup(key, !matches!(found, Ok(None)));
    found
}

/// The bytes of a key [`find_hll`] found, to change in place (a running snapshot keeps
/// the value it had first).
fn hll_mut<'s>(shard: &'s mut Shard, hash: u64, key: &[u8], now_ms: i64) -> Result<&'s mut Vec<u8>, CommandError> {
    shard.get(hash, key, now_ms).and_then(|e| e.string_mut()).ok_or(CommandError::NoSuchKey)
}

fn hll_bytes<'s>(shard: &'s Shard, hash: u64, key: &[u8], now_ms: i64) -> Option<&'s [u8]> {
    match shard.peek(hash, key, now_ms)?.value() {
        ValueRef::Str(StrRef::Bytes(b)) => Some(b),
        _ => None,
    }
}

fn sparse_max(ctx: &Ctx<'_>) -> usize {
    usize::try_from(ctx.shared.config.read().hll_sparse_max_bytes).unwrap_or(usize::MAX)
}

fn create(shard: &mut Shard, hash: u64, key: &[u8], ctx: &Ctx<'_>) {
    let value = Payload::Object(Box::new(store::Object::Str(hll::new_sparse())));
    shard.insert(hash, Entry::new(key, value, None, ctx.lru()));
}

/// PFADD key [element ...] — 1 when a register changed or the key was created, else 0.
fn pfadd(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let limit = sparse_max(ctx);
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let mut updated = 0u64;
    if find_hll(&mut shard, h, a[1], ctx)?.is_none() {
        create(&mut shard, h, a[1], ctx);
        updated += 1;
    }
    let value = hll_mut(&mut shard, h, a[1], ctx.now_ms)?;
    for element in &a[2..] {
        // A corrupt value keeps what was added before the error, as Redis's.
        if hll::add(value, element, limit)? {
            updated += 1;
        }
    }
    if updated > 0 {
        hll::invalidate_cache(value);
        notify(ctx, class::STRING, "pfadd", a[1]);
        ctx.client.changes = Some(updated);
    } else {
        ctx.client.changed_nothing = true;
    }
    drop(shard);
    encode::integer(ctx.out, i64::from(updated > 0));
    Ok(())
}

/// PFCOUNT key [key ...] — the estimated cardinality of one HyperLogLog (cached in its
/// header), or of the union of several.
fn pfcount(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let db = ctx.client.db;
    let ks = ctx.ks();
    // Only a single key's count, newly cached, is a change (below).
    ctx.client.changed_nothing = true;
    if a.len() > 2 {
        let mut max = Box::new([0u8; hll::REGISTERS]);
        let mut locked = ks.lock_keys(db, &a[1..]);
        for key in &a[1..] {
            let (h, shard) = locked.shard_for(db, key);
            if lookup_hll(shard, h, key, ctx)?.is_some() {
                let bytes = hll_bytes(shard, h, key, ctx.now_ms).ok_or(CommandError::NoSuchKey)?;
                hll::merge_into(&mut max, bytes)?;
            }
        }
        drop(locked);
        encode::integer(ctx.out, hll::count_registers(&max) as i64);
        return Ok(());
    }
    let (h, mut shard) = ks.lock_key(db, a[1]);
    if lookup_hll(&mut shard, h, a[1], ctx)?.is_none() {
        drop(shard);
        encode::integer(ctx.out, 0);
        return Ok(());
    }
    let holds_still = shard.holds_still();
    let bytes = hll_bytes(&shard, h, a[1], ctx.now_ms).ok_or(CommandError::NoSuchKey)?;
    let card = match hll::cached_count(bytes) {
        Some(card) => card,
        None if holds_still => hll::count(bytes)?,
        None => {
            let card = hll::count(bytes)?;
            hll::set_cached_count(hll_mut(&mut shard, h, a[1], ctx.now_ms)?, card);
            // The value changed, if not its count: WATCH and client-side caching hear
            // of it, as of Redis's signalModifiedKey, and the call is propagated.
            ctx.shared.touch(db, a[1]);
            notify(ctx, class::MODIFIED, "", a[1]);
            ctx.client.changed_nothing = false;
            card
        }
    };
    drop(shard);
    encode::integer(ctx.out, card as i64);
    Ok(())
}

/// PFMERGE destkey [sourcekey ...] — the destination's registers raised to every
/// source's (the destination counts as a source).
fn pfmerge(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let limit = sparse_max(ctx);
    let db = ctx.client.db;
    let ks = ctx.ks();
    let mut locked = ks.lock_keys(db, &a[1..]);
    let mut max = Box::new([0u8; hll::REGISTERS]);
    let mut use_dense = false;
    for key in &a[1..] {
        let (h, shard) = locked.shard_for(db, key);
        if let Some(encoding) = lookup_hll(shard, h, key, ctx)? {
            use_dense |= encoding == Encoding::Dense;
            let bytes = hll_bytes(shard, h, key, ctx.now_ms).ok_or(CommandError::NoSuchKey)?;
            hll::merge_into(&mut max, bytes)?;
        }
    }
    let (h, shard) = locked.shard_for(db, a[1]);
    if shard.peek(h, a[1], ctx.now_ms).is_none() {
        create(shard, h, a[1], ctx);
    }
    let value = hll_mut(shard, h, a[1], ctx.now_ms)?;
    // A dense source makes the destination dense at once, instead of growing it.
    if use_dense {
        hll::to_dense(value)?;
    }
    for (index, &m) in max.iter().enumerate() {
        if m != 0 {
            // The destination was merged above, so its opcodes cover every register.
            let _ = hll::raise(value, index, m, limit);
        }
    }
    hll::invalidate_cache(value);
    // PFMERGE's event is `pfadd`, as Redis's.
    notify(ctx, class::STRING, "pfadd", a[1]);
    drop(locked);
    ctx.ok();
    Ok(())
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key — Redis's internal inspection of a value.
fn pfdebug(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[2]);
    let Some(encoding) = find_hll(&mut shard, h, a[2], ctx)? else {
        return Err(CommandError::msg("ERR The specified key does not exist"));
    };
    let sub = a[1].to_ascii_lowercase();
    // Turning the value dense is a change, logged as the command (Redis's dirty++).
    let mut changed = false;
    match sub.as_slice() {
        b"getreg" => {
            if encoding == Encoding::Sparse {
                changed = hll::to_dense(hll_mut(&mut shard, h, a[2], ctx.now_ms)?)?;
            }
            let registers = hll::registers(hll_bytes(&shard, h, a[2], ctx.now_ms).ok_or(CommandError::NoSuchKey)?)?;
            encode::array_len(ctx.out, registers.len());
            for r in registers {
                encode::integer(ctx.out, i64::from(r));
            }
        }
        b"decode" => {
            if encoding != Encoding::Sparse {
                return Err(CommandError::msg("ERR HLL encoding is not sparse"));
            }
            let text = hll::decode_sparse(hll_bytes(&shard, h, a[2], ctx.now_ms).ok_or(CommandError::NoSuchKey)?);
            encode::bulk(ctx.out, text.as_bytes());
        }
        b"encoding" => encode::simple(ctx.out, encoding.name().as_bytes()),
        b"todense" => {
            if encoding == Encoding::Sparse {
                changed = hll::to_dense(hll_mut(&mut shard, h, a[2], ctx.now_ms)?)?;
            }
            encode::integer(ctx.out, i64::from(changed));
        }
        _ => {
            return Err(CommandError::Owned(format!(
                "ERR Unknown PFDEBUG subcommand '{}'",
                String::from_utf8_lossy(a[1])
            )))
        }
    }
    ctx.client.changed_nothing = !changed;
    Ok(())
}

/// PFSELFTEST — checks the register packing and the estimator on this build.
fn pfselftest(ctx: &mut Ctx<'_>, _a: &[&[u8]]) -> Result<(), CommandError> {
    match hll::self_test() {
        Ok(()) => ctx.ok(),
        Err(failure) => return Err(CommandError::Owned(format!("TESTFAILED {failure}"))),
    }
    Ok(())
}

const HLL: &[&str] = &["hyperloglog"];
const HLL_DANGEROUS: &[&str] = &["hyperloglog", "dangerous"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("pfadd", -2, WRITE | DENYOOM | FAST, (1, 1, 1), HLL, "hyperloglog", "Adds elements to a HyperLogLog key, creating it if needed.", pfadd).since("2.8.9").args(ARGS_PFADD).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("pfcount", -2, READONLY | CHANGES_ON_READ, (1, -1, 1), HLL, "hyperloglog", "Returns the estimated number of distinct elements added to one HyperLogLog, or to the union of several.", pfcount).since("2.8.9").args(ARGS_PFCOUNT).complexity("O(1) for one key, O(N) for N keys").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]),
    spec("pfmerge", -2, WRITE | DENYOOM, (1, -1, 1), HLL, "hyperloglog", "Merges HyperLogLogs into a destination key.", pfmerge).since("2.8.9").args(ARGS_PFMERGE).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::INSERT, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]).writes(Writes::FirstKey),
    spec("pfdebug", 3, WRITE | DENYOOM | ADMIN, (2, 2, 1), HLL_DANGEROUS, "hyperloglog", "Inspects a HyperLogLog value's internals.", pfdebug).since("2.8.9").args(ARGS_PFDEBUG).complexity("N/A").syscmd().key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("pfselftest", 1, ADMIN, (0, 0, 0), HLL_DANGEROUS, "hyperloglog", "Checks the HyperLogLog implementation.", pfselftest).since("2.8.9").complexity("N/A").syscmd(),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_PFADD: &[Arg] = &[arg("key", Key).key_spec(0), arg("element", String).optional().multiple()];
    pub const ARGS_PFCOUNT: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
    pub const ARGS_PFMERGE: &[Arg] = &[arg("destkey", Key).key_spec(0), arg("sourcekey", Key).key_spec(1).multiple()];
    pub const ARGS_PFDEBUG: &[Arg] = &[arg("subcommand", String), arg("key", Key).key_spec(0)];
}
use docs_args::*;
