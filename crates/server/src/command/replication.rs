//! Replication's commands, the master's side (issue 24; the work is in
//! `crate::replication`): REPLCONF, and SYNC and PSYNC. A replica gets a full sync (the
//! next snapshot, then the stream from its point in time) or, with PSYNC of an offset the
//! backlog still holds, `+CONTINUE` and the stream from there. A client that asked for a
//! snapshot only (`REPLCONF rdb-only 1`, as `redis-cli --rdb` does for a backup) gets
//! the RDB of the next save of `dbfilename` and nothing after it
//! (`snapshot::wait_for_sync_snapshot`).

use resp::encode;

use super::args::is;
use crate::replication::master;
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
    let mut listening_port = ctx.client.listening_port;
    let mut announced_ip = ctx.client.announced_ip.take();
    for pair in a[1..].chunks(2) {
        let (option, value) = (pair[0], pair[1]);
        if is(option, "listening-port") {
            let port = parse_i64(value).ok_or(CommandError::NotInteger)?;
            // Redis keeps what fits its int; a port out of range is shown as given.
            listening_port = u16::try_from(port).unwrap_or(0);
        } else if is(option, "ip-address") {
            // The address a replica wants to be known by (replica-announce-ip), as
            // Redis keeps it (at most 45 bytes, an IPv6 address's length).
            announced_ip = Some(String::from_utf8_lossy(&value[..value.len().min(45)]).into_owned());
        } else if is(option, "capa") {
            // `eof`: it reads a disk-less RDB ($EOF:<mark>); without it, disk-based.
            if is(value, "eof") {
                ctx.client.capa_eof = true;
            }
        } else if is(option, "rdb-filter-only") {
        } else if is(option, "rdb-only") {
            match parse_i64(value).ok_or(CommandError::NotInteger)? {
                v @ 0..=1 => rdb_only = v == 1,
                _ => return Err(CommandError::msg("ERR value is out of range, value must between 0 and 1")),
            }
        } else if is(option, "ack") {
            // A replica's acknowledgement: no reply, as Redis (ignored from others).
            if ctx.client.replica {
                if let Some(offset) = parse_i64(value).and_then(|v| u64::try_from(v).ok()) {
                    if ctx.shared.repl.ack(ctx.client.info.id, offset, ctx.now_ms) {
                        let name = ctx.shared.repl.name(ctx.client.info.id).unwrap_or_default();
                        crate::log::notice(&format!("Synchronization with replica {name} succeeded"));
                    }
                    super::blocking::serve_waits(ctx.shared);
                    ctx.shared.failover.note_ack();
                }
            }
            return Ok(());
        } else if is(option, "fack") || is(option, "getack") {
            return Ok(());
        } else {
            return Err(CommandError::Owned(format!(
                "ERR Unrecognized REPLCONF option: {}",
                String::from_utf8_lossy(&option[..option.len().min(128)])
            )));
        }
    }
    ctx.client.rdb_only = rdb_only;
    ctx.client.listening_port = listening_port;
    ctx.client.announced_ip = announced_ip;
    ctx.ok();
    Ok(())
}

/// SYNC — a full synchronization, without the `+FULLRESYNC` line (the protocol before
/// PSYNC); for a snapshot-only client the RDB of the next save.
fn sync(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.rdb_only {
        return snapshot_only(ctx, false);
    }
    sync_replica(ctx, None)
}

/// PSYNC replicationid offset — `+CONTINUE` and the stream after `offset` when the
/// backlog holds it, else `+FULLRESYNC <replid> <offset>` and a full sync.
fn psync(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() > 3 && is(a[3], "failover") && !ctx.client.replica {
        // (The offset is judged after the hand-over, as Redis: a bad one is refused
        // by the PSYNC itself.)
        take_over(ctx, a[1], parse_i64(a[2]).unwrap_or(0))?;
    }
    let offset = parse_i64(a[2]).ok_or(CommandError::NotInteger)?;
    if ctx.client.rdb_only {
        return snapshot_only(ctx, true);
    }
    sync_replica(ctx, Some((a[1], offset)))
}

/// `PSYNC <replid> <offset> FAILOVER` from the master this replica follows, handing its
/// role over (its FAILOVER, `replication::failover`): this server becomes a master,
/// keeping that history as its second one, and the PSYNC then continues the old master
/// from it. The replication ID must be the one this server follows; `from`, the offset
/// the PSYNC asks for, is where the old master's stream ends.
fn take_over(ctx: &mut Ctx<'_>, replid: &[u8], from: i64) -> Result<(), CommandError> {
    crate::log::warning(&format!("Failover request received for replid {}.", String::from_utf8_lossy(&replid[..replid.len().min(64)])));
    if !ctx.shared.replica.is_replica() {
        return Err(CommandError::msg("ERR PSYNC FAILOVER can't be sent to a master."));
    }
    if !replid.eq_ignore_ascii_case(ctx.shared.repl.position().0.as_bytes()) {
        return Err(CommandError::msg("ERR PSYNC FAILOVER replid must match my replid."));
    }
    let who = format!("failover request from 'id={} addr={}'", ctx.client.info.id, ctx.client.info.addr);
    // (PSYNC takes every loop's gate itself, later: none is held here.)
    if crate::replication::replica::take_over(ctx.shared, from, &who) {
        ctx.shared.config.write().replicaof = None;
    }
    Ok(())
}

/// A replica's SYNC or PSYNC (`psync`: its replication ID and offset).
fn sync_replica(ctx: &mut Ctx<'_>, psync: Option<(&[u8], i64)>) -> Result<(), CommandError> {
    if ctx.client.replica {
        // As Redis: a replica that asks again is ignored.
        return Ok(());
    }
    if ctx.shared.failover.active() {
        return Err(CommandError::msg("NOMASTERLINK Can't SYNC while failing over"));
    }
    if let Some(link) = ctx.shared.replica.link() {
        // A replica serves replicas of its own from its master's stream (chained), once
        // its own link is up, as Redis.
        if link.state() != crate::replication::role::LinkState::Connected {
            return Err(CommandError::msg("NOMASTERLINK Can't SYNC while not connected with my master"));
        }
    }
    // Under every gate: the stream switches on, and a full sync's snapshot begins, with
    // no write half done.
    let shared = ctx.shared;
    let _gates = shared.all_gates(false);
    let info = &ctx.client.info;
    let who = master::Asker {
        client_id: info.id,
        owner: info.owner.load(std::sync::atomic::Ordering::Relaxed),
        addr: &info.addr,
        announced_ip: ctx.client.announced_ip.as_deref(),
        capa_eof: ctx.client.capa_eof,
        listening_port: ctx.client.listening_port,
    };
    ctx.client.replica = true;
    info.replica.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some((replid, offset)) = psync {
        if let Some(reply) = master::partial_sync(shared, &who, replid, offset) {
            ctx.out.extend_from_slice(&reply);
            // The backlog's bytes leave once this server's log holds them, as the
            // stream's do (`replication::stream`'s deliver).
            ctx.client.need = ctx.client.need.max(shared.repl.log_end());
            return Ok(());
        }
    }
    master::full_sync(shared, &who, psync.is_some());
    // Waits for its snapshot: `+FULLRESYNC` arrives by mail when it begins, the file
    // when written, and the last piece unblocks the client (its REPLCONF ACKs run then).
    ctx.client.blocked = true;
    Ok(())
}

/// REPLICAOF host port | NO ONE (and SLAVEOF) — follows that master, or becomes a
/// master again (`replication::replica`).
fn replicaof(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.shared.failover.active() {
        return Err(CommandError::msg("ERR REPLICAOF not allowed while failing over."));
    }
    if is(a[1], "no") && is(a[2], "one") {
        if crate::replication::replica::stop_following(ctx.shared, "user request from 'REPLICAOF NO ONE'") {
            ctx.shared.config.write().replicaof = None;
        }
        ctx.ok();
        return Ok(());
    }
    if ctx.client.replica {
        return Err(CommandError::msg("ERR Command is not valid when client is a replica."));
    }
    let port = parse_i64(a[2]).and_then(|p| u16::try_from(p).ok()).ok_or(CommandError::msg("ERR Invalid master port"))?;
    let host = String::from_utf8_lossy(a[1]).into_owned();
    let Some(shared) = ctx.shared.me.get().and_then(std::sync::Weak::upgrade) else {
        return Err(CommandError::msg("ERR the server is shutting down"));
    };
    if !crate::replication::replica::follow(&shared, &host, port) {
        crate::log::notice("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
        encode::simple(ctx.out, b"OK Already connected to specified master");
        return Ok(());
    }
    ctx.shared.config.write().replicaof = Some((host.clone(), port));
    crate::log::notice(&format!("REPLICAOF {host}:{port} enabled (user request from 'id={} addr={}')", ctx.client.info.id, ctx.client.info.addr));
    ctx.ok();
    Ok(())
}

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms] — hands this master's role to a
/// replica (`replication::failover`): OK once it starts, the errors of Redis 7.0 in its
/// order of checks.
fn failover(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() == 2 && is(a[1], "abort") {
        if !crate::replication::replica::abort_failover(ctx.shared, "Failover manually aborted") {
            return Err(CommandError::msg("ERR No failover in progress."));
        }
        ctx.ok();
        return Ok(());
    }
    let (mut timeout_ms, mut force, mut to) = (0i64, false, None);
    let mut j = 1;
    while j < a.len() {
        if is(a[j], "timeout") && j + 1 < a.len() && timeout_ms == 0 {
            timeout_ms = parse_i64(a[j + 1]).ok_or(CommandError::NotInteger)?;
            if timeout_ms <= 0 {
                return Err(CommandError::msg("ERR FAILOVER timeout must be greater than 0"));
            }
            j += 2;
        } else if is(a[j], "to") && j + 2 < a.len() && to.is_none() {
            let port = parse_i64(a[j + 2]).ok_or(CommandError::NotInteger)?;
            // A port out of range names no replica (the check below says so).
            to = Some((String::from_utf8_lossy(a[j + 1]).into_owned(), u16::try_from(port).unwrap_or(0)));
            j += 3;
        } else if is(a[j], "force") && !force {
            force = true;
            j += 1;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    crate::replication::failover::begin(ctx.shared, to, timeout_ms, force, ctx.now_ms).map_err(CommandError::msg)?;
    ctx.ok();
    Ok(())
}

/// SYNC or PSYNC of a client that asked for a snapshot only: the RDB of the next save.
fn snapshot_only(ctx: &mut Ctx<'_>, psync: bool) -> Result<(), CommandError> {
    let owner = ctx.client.info.owner.load(std::sync::atomic::Ordering::Relaxed);
    crate::snapshot::wait_for_sync_snapshot(ctx.shared, owner, ctx.client.info.id, &ctx.client.info.addr).map_err(CommandError::msg)?;
    if psync {
        let (replid, offset) = ctx.shared.repl.position();
        encode::simple(ctx.out, format!("FULLRESYNC {replid} {offset}").as_bytes());
    }
    // Waits for the save: its file arrives by mail and unblocks the client.
    ctx.client.blocked = true;
    Ok(())
}

const ADMIN_ACL: &[&str] = &["dangerous"];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("replconf", -1, ADMIN | NOSCRIPT | LOADING | STALE | ALLOW_BUSY, (0, 0, 0), ADMIN_ACL, "server", "Configures the replication stream of a replica or a snapshot's client.", replconf).since("3.0.0").complexity("O(1)").syscmd(),
    spec("sync", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Synchronizes a replica with this server.", sync).since("1.0.0"),
    spec("replicaof", 3, ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Makes this server a replica of another one, or a master again.", replicaof).since("5.0.0").args(ARGS_REPLICAOF).complexity("O(1)"),
    spec("slaveof", 3, ADMIN | NOSCRIPT | STALE | NO_ASYNC_LOADING | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Makes this server a replica of another one, or a master again (the old name of REPLICAOF).", replicaof).since("1.0.0").args(ARGS_REPLICAOF).complexity("O(1)").deprecated("5.0.0"),
    spec("failover", -1, ADMIN | NOSCRIPT | STALE | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Start a coordinated failover between this server and one of its replicas.", failover).since("6.2.0").args(ARGS_FAILOVER).complexity("O(1)"),
    spec("psync", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI | ALL_GATES, (0, 0, 0), ADMIN_ACL, "server", "Synchronizes a replica from a replication position.", psync).since("2.8.0").args(ARGS_PSYNC),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_FAILOVER: &[Arg] = &[
        arg("target", Block).token("TO").optional().args(&[arg("host", String), arg("port", Integer), arg("force", PureToken).token("FORCE").optional()]),
        arg("abort", PureToken).token("ABORT").optional(),
        arg("milliseconds", Integer).token("TIMEOUT").optional(),
    ];
    pub const ARGS_PSYNC: &[Arg] = &[arg("replicationid", String), arg("offset", Integer)];
    pub const ARGS_REPLICAOF: &[Arg] = &[arg("args", OneOf).args(&[arg("host-port", Block).args(&[arg("host", String), arg("port", Integer)]), arg("no-one", Block).args(&[arg("no", PureToken).token("NO"), arg("one", PureToken).token("ONE")])])];
}
use docs_args::*;
