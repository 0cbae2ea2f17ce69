//! Replication, the master's side, as far as it is built (issue 24): REPLCONF, and SYNC
//! and PSYNC of a client that asked for a snapshot only (`REPLCONF rdb-only 1`, as
//! `redis-cli --rdb` does for a backup): it gets the RDB of the next save of
//! `dbfilename`, as Redis's disk-based sync sends it, and nothing after it
//! (`snapshot::wait_for_sync_snapshot`). A replica that wants the stream of writes
//! after the snapshot is refused with an error instead: Basalt does not stream
//! replication yet, and a replica given a snapshot and no stream would silently diverge.

use resp::encode;

use super::args::is;
use super::flags::*;
use super::{spec, CommandError, CommandSpec, Ctx};
use store::types::string::parse_i64;

/// REPLCONF option value ... — +OK; `ack`, `fack` and `getack` answer nothing (as
/// Redis, which takes them from replicas and masters only).
fn replconf(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() % 2 == 0 {
        return Err(CommandError::Syntax);
    }
    let mut rdb_only = ctx.client.rdb_only;
    for pair in a[1..].chunks(2) {
        let (option, value) = (pair[0], pair[1]);
        if is(option, "listening-port") {
            parse_i64(value).ok_or(CommandError::NotInteger)?;
        } else if is(option, "ip-address") || is(option, "capa") || is(option, "rdb-filter-only") {
        } else if is(option, "rdb-only") {
            match parse_i64(value).ok_or(CommandError::NotInteger)? {
                v @ 0..=1 => rdb_only = v == 1,
                _ => return Err(CommandError::msg("ERR value is out of range, value must between 0 and 1")),
            }
        } else if is(option, "ack") || is(option, "fack") || is(option, "getack") {
            return Ok(());
        } else {
            return Err(CommandError::Owned(format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(&option[..option.len().min(128)])
            )));
        }
    }
    ctx.client.rdb_only = rdb_only;
    ctx.ok();
    Ok(())
}

/// SYNC — a full synchronization: for a snapshot-only client the RDB of the next save.
fn sync(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    full_sync(ctx, false)
}

/// PSYNC replicationid offset — as SYNC, after `+FULLRESYNC <replid> <offset>` (Basalt
/// keeps no backlog: every sync is full).
fn psync(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    parse_i64(a[2]).ok_or(CommandError::NotInteger)?;
    full_sync(ctx, true)
}

fn full_sync(ctx: &mut Ctx<'_>, psync: bool) -> Result<(), CommandError> {
    if !ctx.client.rdb_only {
        crate::log::warning(&format!(
            "Replica {} asks for synchronization: refused, Basalt does not stream replication yet",
            ctx.client.info.addr
        ));
        return Err(CommandError::msg(
            "ERR Basalt does not stream replication yet: only a snapshot (REPLCONF rdb-only 1, then SYNC) can be taken",
        ));
    }
    let owner = ctx.client.info.owner.load(std::sync::atomic::Ordering::Relaxed);
    crate::snapshot::wait_for_sync_snapshot(ctx.shared, owner, ctx.client.info.id, &ctx.client.info.addr).map_err(CommandError::msg)?;
    if psync {
        encode::simple(ctx.out, format!("FULLRESYNC {} 0", ctx.shared.run_id).as_bytes());
    }
    // Waits for the save: its file arrives by mail and unblocks the client.
    ctx.client.blocked = true;
    Ok(())
}

const ADMIN_ACL: &[&str] = &["dangerous"];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("replconf", -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY, (0, 0, 0), ADMIN_ACL, "server", "Configures the replication stream of a replica or a snapshot's client.", replconf).since("3.0.0").complexity("O(1)").syscmd(),
    spec("sync", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Synchronizes a replica with this server (here: a snapshot only).", sync).since("1.0.0"),
    spec("psync", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Synchronizes a replica from a replication position (here: a full snapshot only).", psync).since("2.8.0").args(ARGS_PSYNC),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_PSYNC: &[Arg] = &[arg("replicationid", String), arg("offset", Integer)];
}
use docs_args::*;
