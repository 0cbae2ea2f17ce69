//! DUMP and RESTORE: one key's value in Redis 7.0's serialization (the RDB encoding of
//! the value, the RDB version and a CRC-64; `store::rdb::dump_payload` / `restore`), so
//! that a key moves between Basalt and Redis with any client or tool that copies keys
//! this way. The payload is byte-compatible both ways: Redis restores Basalt's DUMP and
//! Basalt restores Redis's (module types excepted, which Basalt does not hold: a clear
//! error). RESTORE-ASKING, what a cluster sends after an ASK redirection, is RESTORE.
//!
//! RESTORE checks as Redis does, in its order: options, BUSYKEY, the TTL, the footer
//! (version and checksum), the value. The value is built with the server's encoding
//! thresholds. IDLETIME sets the key's idle time under an LRU policy, FREQ its access
//! frequency under an LFU one (`evict.rs`), as Redis.

use resp::encode;
use store::events::class;

use super::args::{self, is};
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use super::key_flags as kf;
use super::keyspace_events::notify;

/// DUMP key — the serialized value, or nil.
fn dump(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let compress = ctx.shared.config.read().rdbcompression;
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let payload = shard
        .read(h, a[1], ctx.now_ms, None)
        .map(|e| store::rdb::dump_payload(e, compress));
    ctx.lookup(a[1], payload.is_some());
    drop(shard);
    match payload {
        Some(p) => encode::bulk(ctx.out, &p),
        None => ctx.null(),
    }
    Ok(())
}

/// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ
/// frequency] — OK.
fn restore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut replace, mut absttl, mut idle_s, mut freq) = (false, false, None, None);
    let mut i = 4;
    while i < a.len() {
        let has_value = i + 1 < a.len();
        if is(a[i], "replace") {
            replace = true;
        } else if is(a[i], "absttl") {
            absttl = true;
        } else if is(a[i], "idletime") && has_value && freq.is_none() {
            let v = args::int(a[i + 1])?;
            if v < 0 {
                return Err(CommandError::msg(
                    "ERR Invalid IDLETIME value, must be >= 0",
                ));
            }
            idle_s = Some(v);
            i += 1;
        } else if is(a[i], "freq") && has_value && idle_s.is_none() {
            let v = args::int(a[i + 1])?;
            if !(0..=255).contains(&v) {
                return Err(CommandError::msg(
                    "ERR Invalid FREQ value, must be >= 0 and <= 255",
                ));
            }
            freq = Some(v);
            i += 1;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    let now = ctx.now_ms;
    let limits = crate::snapshot::limits(ctx.shared);
    // As Redis's objectSetLRUOrLFU: IDLETIME sets the idle time under an LRU policy,
    // FREQ the access frequency under an LFU one; otherwise the key is new.
    let lfu = ctx.shared.memory.policy().lfu();
    let lru = match (idle_s, freq, lfu) {
        (Some(s), _, false) => store::clock::lru_clock(now.saturating_sub(s.saturating_mul(1000))),
        (_, Some(f), true) => store::clock::lfu_pack(store::clock::lfu_minutes(now), f.clamp(0, 255) as u8),
        _ => ctx.lru(),
    };
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    if !replace && shard.get(h, a[1], now).is_some() {
        return Err(CommandError::msg("BUSYKEY Target key name already exists."));
    }
    let ttl = args::int(a[2])?;
    if ttl < 0 {
        return Err(CommandError::msg("ERR Invalid TTL value, must be >= 0"));
    }
    let expire_at = match ttl {
        0 => None,
        t if absttl => Some(t),
        t => Some(now.saturating_add(t)),
    };
    let entry = store::rdb::restore(a[3], a[1], expire_at, lru, &limits)
        .map_err(|e| CommandError::Owned(e.to_string()))?;
    let replaced = replace && shard.remove(h, a[1], now).is_some();
    // Already expired: nothing is created (an old value was still replaced), as Redis;
    // but a replica creates it (Redis's checkAlreadyExpired): its master's RESTORE ...
    // ABSTTL may arrive after that time, with a PERSIST behind it.
    if expire_at.is_none_or(|t| t > now) || ctx.shared.replica.is_replica() {
        shard.insert(h, entry);
        notify(ctx, class::GENERIC, "restore", a[1]);
        // The log gets the TTL as an absolute time (Redis 7.0 appends ABSTTL).
        if let (Some(t), false) = (expire_at, absttl) {
            ctx.propagate_as(|| {
                let at = t.to_string();
                let mut words: Vec<&[u8]> = a.to_vec();
                words[2] = at.as_bytes();
                words.push(b"ABSTTL");
                vec![crate::propagate::record(&words)]
            });
        }
    } else if replaced {
        notify(ctx, class::GENERIC, "del", a[1]);
        ctx.propagate_as(|| vec![crate::propagate::record(&[b"DEL", a[1]])]);
    } else {
        ctx.client.changed_nothing = true;
    }
    ctx.ok();
    Ok(())
}

const KEYSPACE: &[&str] = &["keyspace"];
const KEYSPACE_DANGEROUS: &[&str] = &["keyspace", "dangerous"];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("dump", 2, READONLY, (1, 1, 1), KEYSPACE, "generic", "Returns a serialized representation of the value stored at a key.", dump).since("2.6.0").args(ARGS_DUMP).complexity("O(1) or O(N*M) or O(1*M)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).tips(&["nondeterministic_output"]),
    spec("restore", -4, WRITE | DENYOOM, (1, 1, 1), KEYSPACE_DANGEROUS, "generic", "Creates a key from the serialized representation of a value.", restore).since("2.6.0").args(ARGS_RESTORE).complexity("O(1) or O(N*M) or O(1*M) or O(N*M*log(N)) or O(log(N))").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("restore-asking", -4, WRITE | DENYOOM | ASKING, (1, 1, 1), KEYSPACE_DANGEROUS, "server", "RESTORE, as sent by a cluster after an ASK redirection.", restore).since("3.0.0").syscmd().args(ARGS_RESTORE).complexity("O(1) or O(N*M) or O(1*M) or O(N*M*log(N)) or O(log(N))").key_specs(&[KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_DUMP: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_RESTORE: &[Arg] = &[arg("key", Key).key_spec(0), arg("ttl", Integer), arg("serialized-value", String), arg("replace", PureToken).token("REPLACE").since("3.0.0").optional(), arg("absttl", PureToken).token("ABSTTL").since("5.0.0").optional(), arg("seconds", Integer).token("IDLETIME").since("5.0.0").optional(), arg("frequency", Integer).token("FREQ").since("5.0.0").optional()];
}
use docs_args::*;
