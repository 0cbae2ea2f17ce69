//! MIGRATE: moves keys to another server (Redis, Basalt or anything that takes RESTORE),
//! as Redis 7.0 does it: each key's DUMP payload is sent as `RESTORE key ttl payload
//! [REPLACE]` (after AUTH and SELECT where needed) over a connection kept for the next
//! call (`state::migrate_sockets`); each key the target acknowledged is then deleted here
//! (not with COPY), and the call is logged and replicated as a DEL of those keys.
//!
//! Like Redis's, a MIGRATE stops the server for its round trip: it holds every event
//! loop's gate (the dispatcher takes them for a write that needs them, before its
//! ordering stripes), so that no client changes a key between its payload being taken
//! and its deletion, and no client sees it here after the target has answered. Its
//! `timeout` bounds each step (connect, each write, each reply line). The replies and
//! errors are Redis's, quirks included: a refused connection is reported as a write
//! error (after one retry), a target's error is the reply once every key was tried, and
//! the keys it took before that are deleted all the same.

use std::time::Duration;

use resp::encode;
use store::events::class;

use super::args::{self, is};
use super::flags::*;
use super::key_flags as kf;
use super::keyspace_events::notify;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Movable, Writes};
use crate::state::migrate_sockets::{IoFailure, Target};

/// What MIGRATE was asked, once parsed.
struct Request<'a> {
    host: &'a [u8],
    port: &'a [u8],
    keys: &'a [&'a [u8]],
    db: i64,
    timeout: Duration,
    copy: bool,
    replace: bool,
    /// AUTH password, or AUTH2 username password.
    auth: Option<(Option<&'a [u8]>, &'a [u8])>,
}

/// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
/// AUTH2 username password] [KEYS key ...] — OK, NOKEY (none of the keys is here), or an
/// error.
fn migrate(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let req = parse(a)?;
    // Each key here and live, with its payload and what is left of its time to live
    // (0: none), taken now: nothing changes them until this call ends.
    let compress = ctx.shared.config.read().rdbcompression;
    let mut found: Vec<(&[u8], i64, Vec<u8>)> = Vec::new();
    for &key in req.keys {
        let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, key);
        let entry = shard.read(h, key, ctx.now_ms, ctx.access()).map(|e| (e.expire_at_ms(), store::rdb::dump_payload(e, compress)));
        drop(shard);
        ctx.lookup(key, entry.is_some());
        if let Some((expire_at, payload)) = entry {
            let ttl = match expire_at {
                None => 0,
                Some(at) if at - ctx.now_ms < 0 => continue,
                Some(at) => (at - ctx.now_ms).max(1),
            };
            found.push((key, ttl, payload));
        }
    }
    if found.is_empty() {
        ctx.client.changed_nothing = true;
        encode::simple(ctx.out, b"NOKEY");
        return Ok(());
    }
    let name = format!("{}:{}", String::from_utf8_lossy(req.host), String::from_utf8_lossy(req.port));
    // Redis reads the port with atoi: anything that is not a number is port 0.
    let port = std::str::from_utf8(req.port).ok().and_then(|p| p.parse::<u16>().ok()).unwrap_or(0);
    let host = String::from_utf8_lossy(req.host).into_owned();
    let now_s = ctx.now_ms / 1000;
    let mut may_retry = true;
    loop {
        let sockets = &ctx.shared.migrate_sockets;
        let mut target = match sockets.take(&name, &host, port, req.timeout, now_s) {
            Ok(t) => t,
            Err(IoFailure::Connect) => {
                ctx.client.changed_nothing = true;
                return Err(CommandError::msg("IOERR error or timeout connecting to the client"));
            }
            Err(failure) => {
                if !failure.timed_out() && std::mem::take(&mut may_retry) {
                    continue;
                }
                ctx.client.changed_nothing = true;
                return Err(io_error(failure));
            }
        };
        match exchange(ctx, &req, &found, &mut target) {
            Exchanged::Done(result) => {
                sockets.put_back(name, target);
                return result.or_else(|e| error_after_changes(ctx, e));
            }
            Exchanged::Broken { failure, deleted, error_from_target } => {
                // The connection is dropped (closed here). A retry only when nothing at
                // all was read back; a target's error already chosen stays the reply.
                drop(target);
                if deleted == 0 && error_from_target.is_none() && !failure.timed_out() && std::mem::take(&mut may_retry) {
                    continue;
                }
                return error_after_changes(ctx, error_from_target.unwrap_or_else(|| io_error(failure)));
            }
        }
    }
}

/// An error reply for a call that may have deleted keys first (the keys the target
/// took before its error, or before the connection broke): those deletions are still
/// propagated, as Redis propagates the DEL it rewrote the call into whatever it
/// answers. The dispatcher propagates nothing for a failed call, so the error is
/// answered and counted here (as a failed call and in errorstats) and the call
/// succeeds for the propagation.
fn error_after_changes(ctx: &mut Ctx<'_>, e: CommandError) -> Result<(), CommandError> {
    if ctx.client.changed_nothing {
        return Err(e);
    }
    let text = e.to_string();
    let idx = ctx.client.info.last_cmd.load(std::sync::atomic::Ordering::Relaxed);
    if let Some(stats) = ctx.stats.commands.get(idx) {
        crate::shared::bump(&stats.failed_calls, 1);
    }
    ctx.stats.count_error(&text);
    super::write_error(ctx.out, &text);
    Ok(())
}

fn io_error(failure: IoFailure) -> CommandError {
    let what = if matches!(failure, IoFailure::Write { .. }) { "writing" } else { "reading" };
    CommandError::Owned(format!("IOERR error or timeout {what} to target instance"))
}

/// How one exchange with the target ended.
enum Exchanged {
    /// Every reply was read: the call's result (OK, or the target's first error).
    Done(Result<(), CommandError>),
    /// The connection failed; `deleted` keys were acknowledged (and deleted) first.
    Broken { failure: IoFailure, deleted: usize, error_from_target: Option<CommandError> },
}

/// Sends AUTH, SELECT (unless the connection has `db` selected already) and the RESTOREs
/// in one write, reads the replies, and deletes (without COPY) each key the target took.
fn exchange(ctx: &mut Ctx<'_>, req: &Request<'_>, found: &[(&[u8], i64, Vec<u8>)], target: &mut Target) -> Exchanged {
    let mut out = Vec::new();
    if let Some((user, password)) = req.auth {
        let mut words: Vec<&[u8]> = vec![b"AUTH"];
        words.extend(user);
        words.push(password);
        encode::command(&mut out, &words);
    }
    let select = target.last_dbid != req.db;
    if select {
        encode::command(&mut out, &[b"SELECT", req.db.to_string().as_bytes()]);
    }
    for (key, ttl, payload) in found {
        let ttl = ttl.to_string();
        let mut words: Vec<&[u8]> = vec![b"RESTORE", key, ttl.as_bytes(), payload];
        if req.replace {
            words.push(b"REPLACE");
        }
        encode::command(&mut out, &words);
    }
    if let Err(failure) = target.write_all(&out, req.timeout) {
        return Exchanged::Broken { failure, deleted: 0, error_from_target: None };
    }
    let mut read_first = |wanted: bool| -> Result<Option<Vec<u8>>, IoFailure> { if wanted { target.read_line(req.timeout).map(Some) } else { Ok(None) } };
    let auth_reply = match read_first(req.auth.is_some()) {
        Ok(r) => r,
        Err(failure) => return Exchanged::Broken { failure, deleted: 0, error_from_target: None },
    };
    let select_reply = match read_first(select) {
        Ok(r) => r,
        Err(failure) => return Exchanged::Broken { failure, deleted: 0, error_from_target: None },
    };
    let is_error = |r: &Option<Vec<u8>>| r.as_ref().is_some_and(|l| l.first() == Some(&b'-'));
    let mut error_from_target: Option<CommandError> = None;
    let mut deleted: Vec<&[u8]> = Vec::new();
    let mut broken = None;
    for (key, _, _) in found {
        let reply = match target.read_line(req.timeout) {
            Ok(line) => line,
            Err(failure) => {
                broken = Some(failure);
                break;
            }
        };
        if is_error(&auth_reply) || is_error(&select_reply) || reply.first() == Some(&b'-') {
            if error_from_target.is_none() {
                target.last_dbid = -1;
                let line = if is_error(&auth_reply) {
                    auth_reply.as_deref().unwrap_or_default()
                } else if is_error(&select_reply) {
                    select_reply.as_deref().unwrap_or_default()
                } else {
                    &reply
                };
                error_from_target = Some(CommandError::Owned(format!(
                    "ERR Target instance replied with error: {}",
                    String::from_utf8_lossy(&line[1..])
                )));
            }
        } else if !req.copy {
            let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, key);
            if shard.remove(h, key, ctx.now_ms).is_some() {
                drop(shard);
                notify(ctx, class::GENERIC, "del", key);
                deleted.push(key);
            }
        }
    }
    // What the call changed here is the keys deleted, logged as one DEL (Redis rewrites
    // the command so); none deleted is no change.
    ctx.client.changes = Some(deleted.len() as u64);
    ctx.client.changed_nothing = deleted.is_empty();
    if !deleted.is_empty() {
        ctx.propagate_as(|| {
            let mut words: Vec<&[u8]> = vec![b"DEL"];
            words.extend(deleted.iter().copied());
            vec![crate::propagate::record(&words)]
        });
    }
    if let Some(failure) = broken {
        return Exchanged::Broken { failure, deleted: deleted.len(), error_from_target };
    }
    match error_from_target {
        Some(e) => Exchanged::Done(Err(e)),
        None => {
            target.last_dbid = req.db;
            ctx.ok();
            Exchanged::Done(Ok(()))
        }
    }
}

/// The arguments, checked in Redis's order: the options (a syntax error, or KEYS with a
/// key given), then the timeout and the database as integers.
fn parse<'a>(a: &'a [&'a [u8]]) -> Result<Request<'a>, CommandError> {
    let (mut copy, mut replace, mut auth) = (false, false, None);
    let mut keys = &a[3..4];
    let mut j = 6;
    while j < a.len() {
        let more = a.len() - 1 - j;
        if is(a[j], "copy") {
            copy = true;
        } else if is(a[j], "replace") {
            replace = true;
        } else if is(a[j], "auth") {
            if more == 0 {
                return Err(CommandError::Syntax);
            }
            j += 1;
            auth = Some((None, a[j]));
        } else if is(a[j], "auth2") {
            if more < 2 {
                return Err(CommandError::Syntax);
            }
            auth = Some((Some(a[j + 1]), a[j + 2]));
            j += 2;
        } else if is(a[j], "keys") {
            if !a[3].is_empty() {
                return Err(CommandError::msg("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"));
            }
            keys = &a[j + 1..];
            break;
        } else {
            return Err(CommandError::Syntax);
        }
        j += 1;
    }
    let timeout = args::int(a[5])?;
    let db = args::int(a[4])?;
    let timeout = if timeout <= 0 { 1000 } else { timeout };
    Ok(Request {
        host: a[1],
        port: a[2],
        keys,
        db,
        timeout: Duration::from_millis(timeout as u64),
        copy,
        replace,
        auth,
    })
}

/// The positions of MIGRATE's keys, as Redis's migrateGetKeys finds them: the key
/// argument, or with an empty one everything after KEYS (the options' values skipped,
/// the last argument never read as KEYS). None: KEYS with a key given.
pub fn key_positions(args: &[&[u8]]) -> Option<Vec<usize>> {
    let mut i = 6;
    while i + 1 < args.len() {
        if is(args[i], "auth2") {
            i += 2;
        } else if is(args[i], "auth") {
            i += 1;
        } else if is(args[i], "keys") {
            if args.get(3).is_some_and(|k| !k.is_empty()) {
                return None;
            }
            return Some((i + 1..args.len()).collect());
        }
        i += 1;
    }
    Some(vec![3])
}

/// Whether a MIGRATE may delete its keys here (not with COPY), for WATCH.
fn deletes(a: &[&[u8]]) -> bool {
    !a.iter().skip(6).any(|w| is(w, "copy"))
}

/// The arguments, as COMMAND DOCS describes them (Redis 7.0.15's).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS: &[Arg] = &[
        arg("host", String),
        arg("port", Integer),
        arg("key_or_empty_string", OneOf).args(&[arg("key", Key).key_spec(0), arg("empty_string", PureToken).token("")]),
        arg("destination-db", Integer),
        arg("timeout", Integer),
        arg("copy", PureToken).token("COPY").since("3.0.0").optional(),
        arg("replace", PureToken).token("REPLACE").since("3.0.0").optional(),
        arg("authentication", OneOf).optional().args(&[
            arg("password", String).token("AUTH").since("4.0.7").optional(),
            arg("username_password", Block).token("AUTH2").since("6.0.0").optional().args(&[arg("username", String), arg("password", String)]),
        ]),
        arg("key", Key).key_spec(1).token("KEYS").since("3.0.6").optional().multiple(),
    ];
}
use docs_args::ARGS;


#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("migrate", -6, WRITE | ALL_GATES | WATCH_CHANGED_ONLY, (3, 3, 1), &["keyspace", "dangerous"], "generic", "Moves keys to another server, as RESTOREs there and a deletion here.", migrate)
        .since("2.6.0").args(ARGS).complexity("O(N)").tips(&["nondeterministic_output"])
        .key_specs(&[
            KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE, begin: BeginSearch::Index(3), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } },
            KeySpec { flags: kf::RW | kf::ACCESS | kf::DELETE | kf::INCOMPLETE, begin: BeginSearch::Keyword { keyword: "KEYS", start_from: -2 }, find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } },
        ])
        .movable(Movable::Migrate)
        .writes(Writes::KeysIf(deletes)),
];

#[cfg(test)]
mod tests {
    use super::key_positions;

    fn keys(words: &str) -> Option<Vec<usize>> {
        let args: Vec<&[u8]> = words.split(' ').map(|w| if w == "''" { &b""[..] } else { w.as_bytes() }).collect();
        key_positions(&args)
    }

    /// As Redis 7.0.15's COMMAND GETKEYS answered for each (checked by hand).
    #[test]
    fn keys_are_found_as_redis_finds_them() {
        assert_eq!(keys("MIGRATE h 1 k 0 0"), Some(vec![3]));
        assert_eq!(keys("MIGRATE h 1 k 0 0 KEYS a b"), None);
        assert_eq!(keys("MIGRATE h 1 '' 0 0 KEYS a b"), Some(vec![7, 8]));
        assert_eq!(keys("MIGRATE h 1 '' 0 0 AUTH KEYS KEYS a b"), Some(vec![9, 10]));
        assert_eq!(keys("MIGRATE h 1 '' 0 0 AUTH2 KEYS KEYS KEYS a b"), Some(vec![10, 11]));
        assert_eq!(keys("MIGRATE h 1 k 0 0 KEYS"), Some(vec![3]));
        assert_eq!(keys("MIGRATE h 1 '' 0 0 AUTH2 u KEYS a"), Some(vec![3]));
        assert_eq!(keys("MIGRATE h 1 '' 0 0 COPY KEYS a"), Some(vec![8]));
        assert_eq!(keys("MIGRATE h 1 k 0 0 JUNK KEYS a"), None);
    }
}
