//! MONITOR: a client that sends it receives every command the server runs afterwards,
//! from any client on any event loop, one line each as Redis 7.0 writes them:
//! `+<unix seconds>.<microseconds> [<db> <client address>] "arg" "arg" ...`.
//!
//! As Redis: a command is shown after it ran (so SELECT shows its new database, and the
//! commands of an EXEC come before the EXEC), errors from the command itself included;
//! commands refused before running (unknown, wrong arity, queued in MULTI) and
//! administrative ones (CONFIG, DEBUG, ...) are not shown; AUTH's and HELLO's passwords
//! are redacted. A monitoring client may still send commands that do not touch the
//! keyspace (PING, RESET, QUIT); others get Redis's "Replica can't interact with the
//! keyspace". Lines reach a monitor through its loop's mailbox, in each loop's order;
//! a monitor is of the `normal` class of `client-output-buffer-limit`, as in Redis
//! (`output_limit.rs`), and CLIENT LIST flags it `O`.
//!
//! With no monitor the cost is one atomic load per command.

use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use super::flags::*;
use super::{spec, CommandError, CommandSpec, Ctx};
use crate::shared::Shared;

/// MONITOR — OK, then the stream. Ignored (no reply) by a client already monitoring.
fn monitor(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.in_exec {
        return Err(CommandError::msg(
            "ERR MONITOR isn't allowed for DENY BLOCKING client",
        ));
    }
    if ctx.client.monitor {
        return Ok(());
    }
    ctx.client.monitor = true;
    let info = &ctx.client.info;
    let mut monitors = ctx.shared.monitors.lock();
    monitors.push((info.owner.load(Ordering::Relaxed), info.id));
    ctx.shared
        .monitor_count
        .store(monitors.len(), Ordering::Release);
    drop(monitors);
    ctx.ok();
    Ok(())
}

/// Takes a client out of monitoring (RESET, disconnection).
pub fn stop(shared: &Shared, client: &mut super::Client) {
    if !client.monitor {
        return;
    }
    client.monitor = false;
    let mut monitors = shared.monitors.lock();
    monitors.retain(|&(_, id)| id != client.info.id);
    shared
        .monitor_count
        .store(monitors.len(), Ordering::Release);
}

/// Whether commands run by this client may be shown (called after the command).
#[inline]
pub fn wanted(shared: &Shared, spec: &CommandSpec) -> bool {
    shared.monitor_count.load(Ordering::Relaxed) > 0 && spec.flags & (ADMIN | SKIP_MONITOR) == 0
}

/// Whether a command that feeds MONITOR itself before it runs (`skip_monitor`: EVAL,
/// whose line comes before its script's commands, as in Redis) has monitors to feed.
pub fn wanted_before(shared: &Shared) -> bool {
    shared.monitor_count.load(Ordering::Relaxed) > 0
}

/// Sends the line for a command that just ran to every monitor (a monitor's own
/// command goes straight after its reply, as in Redis; others through their loops).
pub fn feed(ctx: &mut Ctx<'_>, args: &[&[u8]]) {
    let source = if ctx.client.in_script { "lua" } else { &ctx.client.info.addr };
    let line = bytes::Bytes::from(line(SystemTime::now(), ctx.client.db, source, args));
    let monitors: Vec<(usize, u64)> = ctx.shared.monitors.lock().clone();
    let me = ctx.client.info.id;
    for (owner, id) in monitors {
        if id == me {
            ctx.out.extend_from_slice(&line);
        } else {
            ctx.shared.post(crate::shared::Subscriber { owner, id, resp3: false }, line.clone());
        }
    }
}

/// One MONITOR line (a simple-string reply) for `args`.
fn line(now: SystemTime, db: usize, addr: &str, args: &[&[u8]]) -> Vec<u8> {
    let t = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let mut out = format!("+{}.{:06} [{db} {addr}]", t.as_secs(), t.subsec_micros()).into_bytes();
    let redacted = super::redact::positions(args);
    for (i, a) in args.iter().enumerate() {
        out.extend_from_slice(b" \"");
        if redacted.contains(&i) {
            out.extend_from_slice(super::redact::SHOWN);
        } else {
            quote_into(&mut out, a);
        }
        out.push(b'"');
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Redis's `sdscatrepr` escaping, without the quotes.
fn quote_into(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
}

/// The refusal a monitoring client gets for a command that reads or writes keys.
pub const KEYSPACE_REFUSED: &str = "ERR Replica can't interact with the keyspace";

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("monitor", 1, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), &["dangerous"], "server", "Listens for all requests received by the server in real-time.", monitor).since("1.0.0"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_redis_writes_them() {
        let t = UNIX_EPOCH + std::time::Duration::from_micros(1_795_601_650_055_237);
        let key: &[u8] = b"k\x00\x01\"\\\n\r\t\x07\x08\xff";
        assert_eq!(
            line(t, 2, "127.0.0.1:34820", &[b"SET", key, b"v"]),
            b"+1795601650.055237 [2 127.0.0.1:34820] \"SET\" \"k\\x00\\x01\\\"\\\\\\n\\r\\t\\a\\b\\xff\" \"v\"\r\n".to_vec()
        );
        assert_eq!(
            line(t, 0, "a:1", &[b"HELLO", b"2", b"AUTH", b"default", b"pw"]),
            b"+1795601650.055237 [0 a:1] \"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n".to_vec()
        );
        assert_eq!(
            line(t, 0, "a:1", &[b"auth", b"pw"]),
            b"+1795601650.055237 [0 a:1] \"auth\" \"(redacted)\"\r\n".to_vec()
        );
    }
}
