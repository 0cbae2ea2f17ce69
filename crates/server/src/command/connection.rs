//! Connection commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH, RESET and CLIENT.
//! They act on the calling connection's state (`ctx.client`) and, for CLIENT LIST and
//! KILL, on the shared client registry.

use std::sync::atomic::Ordering;

use resp::{encode, Proto};

use super::args::{self, is};
use super::flags::*;
use super::{container, spec, CommandError, CommandSpec, Ctx};
use crate::shared::ClientInfo;
use crate::version::REDIS_VERSION;

/// PING [message] — PONG or the message.
fn ping(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.proto == Proto::Resp2 && ctx.client.subs.count() > 0 {
        // RESP2 subscribed mode answers ["pong", message].
        if a.len() > 2 {
            return Err(CommandError::Arity("ping".into()));
        }
        encode::array_len(ctx.out, 2);
        encode::bulk(ctx.out, b"pong");
        encode::bulk(ctx.out, a.get(1).copied().unwrap_or(b""));
        return Ok(());
    }
    match a.len() {
        1 => encode::simple(ctx.out, b"PONG"),
        2 => encode::bulk(ctx.out, a[1]),
        _ => return Err(CommandError::Arity("ping".into())),
    }
    Ok(())
}

/// ECHO message — the message.
fn echo(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    encode::bulk(ctx.out, a[1]);
    Ok(())
}

/// QUIT — OK, then the connection closes.
fn quit(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    ctx.ok();
    ctx.client.close_after_reply = true;
    Ok(())
}

/// SELECT index — OK.
fn select(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let db = args::db_index(a[1], ctx.ks().databases())?;
    ctx.client.db = db;
    ctx.client.info.db.store(db, Ordering::Relaxed);
    ctx.ok();
    Ok(())
}

/// AUTH's and HELLO AUTH's check: the ACL user and password (`command/acl.rs`).
fn check_auth(ctx: &mut Ctx<'_>, user: Option<&[u8]>, pass: &[u8]) -> Result<(), CommandError> {
    // The one-word form is an error while the default user needs no password (Redis).
    if user.is_none() && ctx.shared.acl.default_user().nopass {
        return Err(CommandError::msg(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        ));
    }
    super::acl::authenticate(ctx, user.unwrap_or(b"default"), pass)
}

/// AUTH [username] password — OK.
fn auth(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (user, pass) = match a.len() {
        2 => (None, a[1]),
        3 => (Some(a[1]), a[2]),
        _ => return Err(CommandError::Syntax),
    };
    check_auth(ctx, user, pass)?;
    ctx.ok();
    Ok(())
}

/// HELLO [protover [AUTH username password] [SETNAME clientname]] — server properties.
fn hello(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut proto = ctx.client.proto;
    if a.len() >= 2 {
        let v = store::types::string::parse_i64(a[1]).ok_or(CommandError::msg(
            "ERR Protocol version is not an integer or out of range",
        ))?;
        proto = match v {
            2 => Proto::Resp2,
            3 => Proto::Resp3,
            _ => return Err(CommandError::msg("NOPROTO unsupported protocol version")),
        };
    }
    let mut creds = None;
    let mut name = None;
    let mut i = 2;
    while i < a.len() {
        if is(a[i], "auth") && i + 2 < a.len() {
            creds = Some((a[i + 1], a[i + 2]));
            i += 3;
        } else if is(a[i], "setname") && i + 1 < a.len() {
            name = Some(a[i + 1]);
            i += 2;
        } else {
            return Err(CommandError::Owned(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(a[i])
            )));
        }
    }
    if let Some((u, p)) = creds {
        check_auth(ctx, Some(u), p)?;
    }
    if !ctx.client.authenticated && ctx.shared.auth_required.load(Ordering::Relaxed) {
        return Err(CommandError::msg("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"));
    }
    if let Some(n) = name {
        validate_name(n)?;
        *ctx.client.info.name.lock() = n.to_vec();
    }
    ctx.client.proto = proto;
    ctx.client.info.resp.store(if proto == Proto::Resp3 { 3 } else { 2 }, Ordering::Relaxed);
    let out = &mut *ctx.out;
    encode::map_len(out, 7, proto);
    encode::bulk(out, b"server");
    encode::bulk(out, b"redis");
    encode::bulk(out, b"version");
    encode::bulk(out, REDIS_VERSION.as_bytes());
    encode::bulk(out, b"proto");
    encode::integer(out, if proto == Proto::Resp3 { 3 } else { 2 });
    encode::bulk(out, b"id");
    encode::integer(out, ctx.client.info.id as i64);
    encode::bulk(out, b"mode");
    encode::bulk(out, b"standalone");
    encode::bulk(out, b"role");
    encode::bulk(out, if ctx.shared.replica.is_replica() { b"replica" } else { b"master" });
    encode::bulk(out, b"modules");
    encode::array_len(out, 0);
    Ok(())
}

/// RESET — RESET; the connection returns to its initial state.
fn reset(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let c = &mut *ctx.client;
    c.db = 0;
    c.proto = Proto::Resp2;
    c.authenticated = !ctx.shared.auth_required.load(Ordering::Relaxed);
    // Back to the default user (looked up again before the next command).
    *c.info.user.lock() = std::sync::Arc::from("default");
    c.acl_version = 0;
    c.info.db.store(0, Ordering::Relaxed);
    c.info.resp.store(2, Ordering::Relaxed);
    c.info.name.lock().clear();
    c.info.no_evict.store(false, Ordering::Relaxed);
    c.info.no_touch.store(false, Ordering::Relaxed);
    c.multi = None;
    super::transactions::unwatch_all(ctx.shared, ctx.client);
    super::pubsub::unsubscribe_all(ctx.shared, ctx.client);
    super::monitor::stop(ctx.shared, ctx.client);
    stop_tracking(ctx);
    ctx.client.reply_mode = super::ReplyMode::On;
    encode::simple(ctx.out, b"RESET");
    Ok(())
}

fn validate_name(name: &[u8]) -> Result<(), CommandError> {
    if name.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return Err(CommandError::msg(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    Ok(())
}

/// CLIENT REPLY ON|OFF|SKIP — OK for ON; OFF and SKIP answer nothing (the dispatch
/// loop drops the replies, `conn.rs`).
fn client_reply(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    use super::ReplyMode;
    let mode = ctx.client.reply_mode;
    if is(a[2], "on") {
        ctx.client.reply_mode = ReplyMode::On;
        ctx.ok();
    } else if is(a[2], "off") {
        ctx.client.reply_mode = ReplyMode::Off;
    } else if is(a[2], "skip") {
        if mode != ReplyMode::Off {
            ctx.client.reply_mode = ReplyMode::SkipNext;
        }
    } else {
        return Err(CommandError::Syntax);
    }
    Ok(())
}

/// CLIENT UNBLOCK client-id [TIMEOUT|ERROR] — 1 when that client was blocked (it gets its
/// timeout reply, or an UNBLOCKED error), else 0.
fn client_unblock(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut error = false;
    if a.len() == 4 {
        if is(a[3], "error") {
            error = true;
        } else if !is(a[3], "timeout") {
            return Err(CommandError::msg("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"));
        }
    }
    let id = args::int(a[2])?;
    let done = u64::try_from(id).is_ok_and(|id| super::blocking::unblock(ctx.shared, id, error));
    encode::integer(ctx.out, i64::from(done));
    Ok(())
}

/// CLIENT ID — this connection's id.
fn client_id(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    encode::integer(ctx.out, ctx.client.info.id as i64);
    Ok(())
}

/// CLIENT SETNAME name — OK.
fn client_setname(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    validate_name(a[2])?;
    *ctx.client.info.name.lock() = a[2].to_vec();
    ctx.ok();
    Ok(())
}

/// CLIENT GETNAME — the name or nil.
fn client_getname(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let name = ctx.client.info.name.lock().clone();
    if name.is_empty() {
        ctx.null();
    } else {
        encode::bulk(ctx.out, &name);
    }
    Ok(())
}

/// Whether a TYPE filter names this client's type (`replica` is `slave`'s other name).
fn type_is(name: &[u8], info: &ClientInfo) -> bool {
    let ty = super::client_line::client_type(info);
    is(name, ty) || (ty == "slave" && is(name, "replica"))
}


/// CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]] — one line per client.
fn client_list(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut ids: Option<Vec<u64>> = None;
    let mut only_type: Option<&[u8]> = None;
    let mut i = 2;
    while i < a.len() {
        if is(a[i], "type") && i + 1 < a.len() {
            let t = a[i + 1];
            if !["normal", "master", "replica", "slave", "pubsub"].iter().any(|n| is(t, n)) {
                return Err(CommandError::Owned(format!(
                    "ERR Unknown client type '{}'",
                    String::from_utf8_lossy(t)
                )));
            }
            only_type = Some(t);
            i += 2;
        } else if is(a[i], "id") && i + 1 < a.len() {
            let mut v = Vec::new();
            for id in &a[i + 1..] {
                let n = store::types::string::parse_i64(id)
                    .filter(|&n| n > 0)
                    .ok_or(CommandError::msg("ERR Invalid client ID"))?;
                v.push(n as u64);
            }
            ids = Some(v);
            i = a.len();
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let clients: Vec<_> = ctx.shared.clients.lock().values().cloned().collect();
    // A replica's master, first (its id is older than its clients'), as Redis lists it.
    let master = ctx.shared.replica.link().and_then(|l| super::client_line::describe_master(&l, ctx.now_ms));
    let mut text = String::new();
    if let Some((id, line)) = master {
        if ids.as_ref().is_none_or(|ids| ids.contains(&id)) && only_type.is_none_or(|t| is(t, "master")) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    for c in clients {
        if ids.as_ref().is_some_and(|ids| !ids.contains(&c.id)) {
            continue;
        }
        if only_type.is_some_and(|t| !type_is(t, &c)) {
            continue;
        }
        text.push_str(&super::client_line::describe(ctx.shared, ctx.table, &c, ctx.now_ms));
        text.push('\n');
    }
    encode::verbatim(ctx.out, b"txt", text.as_bytes(), ctx.client.proto);
    Ok(())
}

/// CLIENT INFO — this connection's CLIENT LIST line.
fn client_info(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let mut line = super::client_line::describe(ctx.shared, ctx.table, &ctx.client.info, ctx.now_ms);
    line.push('\n');
    encode::verbatim(ctx.out, b"txt", line.as_bytes(), ctx.client.proto);
    Ok(())
}

/// CLIENT KILL addr:port | CLIENT KILL [ID id] [ADDR a] [LADDR a] [USER u] [SKIPME yes|no]
/// [TYPE t] — OK (old form) or the number killed.
fn client_kill(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let old_form = a.len() == 3;
    let mut id = None;
    let mut addr = None;
    let mut laddr = None;
    let mut skipme = true;
    let mut user: Option<&[u8]> = None;
    let mut only_type: Option<&[u8]> = None;
    let mut max_age_s: Option<u64> = None;
    if old_form {
        addr = Some(a[2]);
        skipme = false;
    } else {
        if a.len() % 2 != 0 {
            return Err(CommandError::Syntax);
        }
        for pair in a[2..].chunks_exact(2) {
            let (k, v) = (pair[0], pair[1]);
            if is(k, "id") {
                let n = store::types::string::parse_i64(v)
                    .filter(|&n| n > 0)
                    .ok_or(CommandError::msg("ERR client-id should be greater than 0"))?;
                id = Some(n as u64);
            } else if is(k, "addr") {
                addr = Some(v);
            } else if is(k, "laddr") {
                laddr = Some(v);
            } else if is(k, "user") {
                if ctx.shared.acl.get(&String::from_utf8_lossy(v)).is_none() {
                    return Err(CommandError::Owned(format!("ERR No such user '{}'", String::from_utf8_lossy(v))));
                }
                user = Some(v);
            } else if is(k, "type") {
                if !["normal", "master", "replica", "slave", "pubsub"].iter().any(|n| is(v, n)) {
                    return Err(CommandError::Owned(format!(
                        "ERR Unknown client type '{}'",
                        String::from_utf8_lossy(v)
                    )));
                }
                only_type = Some(v);
            } else if is(k, "skipme") {
                skipme = if is(v, "yes") {
                    true
                } else if is(v, "no") {
                    false
                } else {
                    return Err(CommandError::Syntax);
                };
            } else if is(k, "maxage") {
                max_age_s = Some(u64::try_from(args::int(v)?).unwrap_or(0));
            } else {
                return Err(CommandError::Syntax);
            }
        }
    }
    let me = ctx.client.info.id;
    let mut killed = 0;
    let clients: Vec<_> = ctx.shared.clients.lock().values().cloned().collect();
    for c in clients {
        let matches = id.is_none_or(|i| i == c.id)
            && addr.is_none_or(|x| x == c.addr.as_bytes())
            && laddr.is_none_or(|x| x == c.laddr.as_bytes())
            && user.is_none_or(|u| u == c.user.lock().as_bytes())
            && only_type.is_none_or(|t| type_is(t, &c))
            && max_age_s.is_none_or(|m| c.created.elapsed().as_secs() >= m);
        // A client already being killed is on its way out: it no longer counts.
        if !matches || (skipme && c.id == me) || c.killed.load(Ordering::SeqCst) {
            continue;
        }
        ctx.kill_client(&c);
        killed += 1;
    }
    // A replica's master (no client of the registry: the link is a thread of its own)
    // by its id, address, local address or TYPE master: the link is cut and reconnects
    // (a partial resync), as Redis's master client does.
    if let Some(link) = ctx.shared.replica.link() {
        let master = link.master_client.lock().clone();
        if let Some(m) = master {
            let matches = id.is_none_or(|i| i == m.id)
                && addr.is_none_or(|x| x == m.addr.as_bytes())
                && laddr.is_none_or(|x| x == m.laddr.as_bytes())
                && user.is_none()
                && only_type.is_none_or(|t| is(t, "master"))
                && max_age_s.is_none_or(|a| m.since.elapsed().as_secs() >= a);
            if matches && crate::replication::replica::drop_connection(&link) {
                killed += 1;
            }
        }
    }
    if old_form {
        if killed == 0 {
            return Err(CommandError::msg("ERR No such client"));
        }
        ctx.ok();
    } else {
        encode::integer(ctx.out, killed);
    }
    Ok(())
}

fn on_off(arg: &[u8]) -> Result<bool, CommandError> {
    if is(arg, "on") {
        Ok(true)
    } else if is(arg, "off") {
        Ok(false)
    } else {
        Err(CommandError::Syntax)
    }
}

/// CLIENT NO-EVICT on|off — OK.
fn client_no_evict(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    ctx.client.info.no_evict.store(on_off(a[2])?, Ordering::Relaxed);
    ctx.ok();
    Ok(())
}

/// CLIENT NO-TOUCH on|off — OK.
fn client_no_touch(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    ctx.client.info.no_touch.store(on_off(a[2])?, Ordering::Relaxed);
    ctx.ok();
    Ok(())
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value — OK.
fn client_setinfo(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let value = a[3];
    if value.iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return Err(CommandError::Owned(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            String::from_utf8_lossy(a[2]).to_ascii_lowercase()
        )));
    }
    if is(a[2], "lib-name") {
        *ctx.client.info.lib_name.lock() = value.to_vec();
    } else if is(a[2], "lib-ver") {
        *ctx.client.info.lib_ver.lock() = value.to_vec();
    } else {
        return Err(CommandError::Owned(format!(
            "ERR Unrecognized option '{}'",
            String::from_utf8_lossy(a[2])
        )));
    }
    ctx.ok();
    Ok(())
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT]
/// [NOLOOP] — OK (`crate::tracking`). Redis's checks and errors in its order: the
/// options first (REDIRECT's client must exist, once), then ON or OFF, then with ON
/// the options against one another and the client's current mode.
fn client_tracking(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut mode = crate::tracking::Mode::default();
    let mut i = 3;
    while i < a.len() {
        let more = i + 1 < a.len();
        if is(a[i], "redirect") && more {
            i += 1;
            if mode.redirect != 0 {
                return Err(CommandError::msg("ERR A client can only redirect to a single other client"));
            }
            let id = args::int(a[i])?;
            if !ctx.shared.clients.lock().contains_key(&(id as u64)) || id <= 0 {
                return Err(CommandError::msg("ERR The client ID you want redirect to does not exist"));
            }
            mode.redirect = id as u64;
        } else if is(a[i], "bcast") {
            mode.bcast = true;
        } else if is(a[i], "optin") {
            mode.optin = true;
        } else if is(a[i], "optout") {
            mode.optout = true;
        } else if is(a[i], "noloop") {
            mode.noloop = true;
        } else if is(a[i], "prefix") && more {
            i += 1;
            mode.prefixes.push(a[i].to_vec());
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    if !on_off(a[2])? {
        stop_tracking(ctx);
        ctx.ok();
        return Ok(());
    }
    if !mode.bcast && !mode.prefixes.is_empty() {
        return Err(CommandError::msg("ERR PREFIX option requires BCAST mode to be enabled"));
    }
    let current = ctx.client.tracking.as_ref();
    if current.is_some_and(|m| m.bcast != mode.bcast) {
        return Err(CommandError::msg("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."));
    }
    if mode.bcast && (mode.optin || mode.optout) {
        return Err(CommandError::msg("ERR OPTIN and OPTOUT are not compatible with BCAST"));
    }
    if mode.optin && mode.optout {
        return Err(CommandError::msg("ERR You can't specify both OPTIN mode and OPTOUT mode"));
    }
    if current.is_some_and(|m| (mode.optin && m.optout) || (mode.optout && m.optin)) {
        return Err(CommandError::msg("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."));
    }
    if mode.bcast {
        let existing: Vec<Vec<u8>> = current.map(|m| m.prefixes.clone()).unwrap_or_default();
        check_prefixes(&mode.prefixes, &existing)?;
        // BCAST without PREFIX is the empty prefix (every key), added unchecked as
        // Redis does, even beside prefixes registered before.
        if mode.prefixes.is_empty() {
            mode.prefixes.push(Vec::new());
        }
    }
    ctx.client.tracking = Some(crate::tracking::enable(ctx.shared, &ctx.client.info, mode));
    ctx.ok();
    Ok(())
}

/// Turns the client's tracking off (CLIENT TRACKING OFF, RESET).
fn stop_tracking(ctx: &mut Ctx<'_>) {
    ctx.client.tracking = None;
    ctx.client.caching = None;
    crate::tracking::disable(ctx.shared, ctx.client.info.id);
}

/// BCAST prefixes may not overlap one another nor those registered before, a prefix
/// equal to one registered included (Redis's errors, quoting the two prefixes).
fn check_prefixes(new: &[Vec<u8>], existing: &[Vec<u8>]) -> Result<(), CommandError> {
    let overlap = |a: &[u8], b: &[u8]| a.starts_with(b) || b.starts_with(a);
    for (i, p) in new.iter().enumerate() {
        let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        if let Some(q) = existing.iter().find(|q| overlap(p, q)) {
            return Err(CommandError::Owned(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                show(p),
                show(q)
            )));
        }
        if let Some(q) = new[i + 1..].iter().find(|q| overlap(p, q)) {
            return Err(CommandError::Owned(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                show(p),
                show(q)
            )));
        }
    }
    Ok(())
}

/// CLIENT CACHING YES|NO — OK; for the next command (OPTIN: YES tracks it, OPTOUT: NO
/// does not).
fn client_caching(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let Some(mode) = ctx.client.tracking.as_ref() else {
        return Err(CommandError::msg("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"));
    };
    if is(a[2], "yes") {
        if !mode.optin {
            return Err(CommandError::msg("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."));
        }
        ctx.client.caching = Some(true);
    } else if is(a[2], "no") {
        if !mode.optout {
            return Err(CommandError::msg("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."));
        }
        ctx.client.caching = Some(false);
    } else {
        return Err(CommandError::Syntax);
    }
    ctx.ok();
    Ok(())
}

/// CLIENT GETREDIR — the redirect client's id, 0 when tracking without one, -1 when
/// not tracking.
fn client_getredir(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let id = ctx.client.tracking.as_ref().map_or(-1, |m| m.redirect as i64);
    encode::integer(ctx.out, id);
    Ok(())
}

/// CLIENT TRACKINGINFO — flags, redirect and prefixes, as Redis's map.
fn client_trackinginfo(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let proto = ctx.client.proto;
    let mode = ctx.client.tracking.clone();
    let broken = crate::tracking::state(ctx.shared, ctx.client.info.id).is_some_and(|(_, _, broken)| broken);
    let mut flags: Vec<&str> = Vec::new();
    let redirect = match &mode {
        None => {
            flags.push("off");
            -1
        }
        Some(m) => {
            flags.push("on");
            if m.bcast {
                flags.push("bcast");
            }
            if m.optin {
                flags.push("optin");
                if ctx.client.caching == Some(true) {
                    flags.push("caching-yes");
                }
            }
            if m.optout {
                flags.push("optout");
                if ctx.client.caching == Some(false) {
                    flags.push("caching-no");
                }
            }
            if m.noloop {
                flags.push("noloop");
            }
            if broken {
                flags.push("broken_redirect");
            }
            m.redirect as i64
        }
    };
    let out = &mut *ctx.out;
    encode::map_len(out, 3, proto);
    encode::bulk(out, b"flags");
    encode::set_len(out, flags.len(), proto);
    for f in &flags {
        encode::bulk(out, f.as_bytes());
    }
    encode::bulk(out, b"redirect");
    encode::integer(out, redirect);
    encode::bulk(out, b"prefixes");
    let prefixes = mode.map(|m| m.prefixes).unwrap_or_default();
    encode::array_len(out, prefixes.len());
    for p in &prefixes {
        encode::bulk(out, p);
    }
    Ok(())
}

/// CLIENT HELP: Redis 7.0.15's text, byte for byte (SETINFO and NO-TOUCH, the 7.2
/// subcommands Basalt also takes for newer clients, are in COMMAND DOCS, not here).
fn client_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help(
        ctx,
        "CLIENT",
        &[
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are:",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made from the specified address",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made to specified local address",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Kill connections by type.",
            "    * USER <username>",
            "      Kill connections authenticated by <username>.",
            "    * SKIPME (YES|NO)",
            "      Skip killing current connection (default: yes).",
            "LIST [options ...]",
            "    Return information about client connections. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Return clients of specified type.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
        ],
    );
    Ok(())
}

const CONN: &[&str] = &["connection"];

static CLIENT_SUBCOMMANDS: &[CommandSpec] = &[
    spec("id", 2, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Returns the unique client ID of the connection.", client_id).since("5.0.0").complexity("O(1)"),
    spec("setname", 3, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Sets the connection name.", client_setname).since("2.6.9").args(ARGS_CLIENT_SETNAME).complexity("O(1)"),
    spec("getname", 2, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Returns the name of the connection.", client_getname).since("2.6.9").complexity("O(1)"),
    spec("list", -2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Lists open connections.", client_list).since("2.4.0").args(ARGS_CLIENT_LIST).complexity("O(N)").tips(&["nondeterministic_output"]),
    spec("info", 2, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Returns information about the connection.", client_info).since("6.2.0").complexity("O(1)").tips(&["nondeterministic_output"]),
    spec("kill", -3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Terminates open connections.", client_kill).since("2.4.0").args(ARGS_CLIENT_KILL).complexity("O(N)"),
    spec("no-evict", 3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Sets the client eviction mode of the connection.", client_no_evict).since("7.0.0").args(ARGS_CLIENT_NO_EVICT).complexity("O(1)"),
    spec("no-touch", 3, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", client_no_touch).since("7.2.0"),
    spec("setinfo", 4, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Sets information specific to the client or connection.", client_setinfo).since("7.2.0"),
    spec("reply", 3, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Instructs the server whether to reply to commands.", client_reply).since("3.2.0").args(ARGS_CLIENT_REPLY).complexity("O(1)"),
    spec("unblock", -3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Unblocks a client blocked by a blocking command from a different connection.", client_unblock).since("5.0.0").args(ARGS_CLIENT_UNBLOCK).complexity("O(log N)"),
    spec("pause", -3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Stop processing commands from clients for some time", super::pause::client_pause).since("2.9.50").args(ARGS_CLIENT_PAUSE).complexity("O(1)"),
    spec("unpause", 2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Resume processing of clients that were paused", super::pause::client_unpause).since("6.2.0").complexity("O(N)"),
    spec("tracking", -3, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Enable or disable server assisted client side caching support", client_tracking).since("6.0.0").args(ARGS_CLIENT_TRACKING).complexity("O(1)"),
    spec("caching", 3, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Instruct the server about tracking or not keys in the next request", client_caching).since("6.0.0").args(ARGS_CLIENT_CACHING).complexity("O(1)"),
    spec("getredir", 2, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Get tracking notifications redirection client ID if any", client_getredir).since("6.0.0").complexity("O(1)"),
    spec("trackinginfo", 2, NOSCRIPT | LOADING | STALE, (0, 0, 0), CONN, "connection", "Return information about server assisted client side caching for the current connection", client_trackinginfo).since("6.2.0").complexity("O(1)"),
    spec("help", 2, LOADING | STALE, (0, 0, 0), CONN, "connection", "Returns helpful text about the different subcommands.", client_help).since("5.0.0").complexity("O(1)"),
];

pub static COMMANDS: &[CommandSpec] = &[
    spec("ping", -1, FAST | WHILE_SUBSCRIBED | DISK_PROBE, (0, 0, 0), CONN, "connection", "Returns the server's liveliness response.", ping).since("1.0.0").args(ARGS_PING).complexity("O(1)").tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    spec("echo", 2, LOADING | STALE | FAST, (0, 0, 0), CONN, "connection", "Returns the given string.", echo).since("1.0.0").args(ARGS_ECHO).complexity("O(1)"),
    spec("quit", -1, ALLOW_BUSY | NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | NOT_QUEUED | WHILE_SUBSCRIBED, (0, 0, 0), CONN, "connection", "Closes the connection.", quit).since("1.0.0").complexity("O(1)"),
    spec("select", 2, LOADING | STALE | FAST, (0, 0, 0), CONN, "connection", "Changes the selected database.", select).since("1.0.0").args(ARGS_SELECT).complexity("O(1)"),
    spec("auth", -2, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, (0, 0, 0), CONN, "connection", "Authenticates the connection.", auth).since("1.0.0").args(ARGS_AUTH).complexity("O(N)"),
    spec("hello", -1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY, (0, 0, 0), CONN, "connection", "Handshakes with the Redis server.", hello).since("6.0.0").args(ARGS_HELLO).complexity("O(1)"),
    spec("reset", 1, NOSCRIPT | LOADING | STALE | FAST | NO_AUTH | ALLOW_BUSY | NOT_QUEUED | WHILE_SUBSCRIBED, (0, 0, 0), CONN, "connection", "Resets the connection.", reset).since("6.2.0").complexity("O(1)"),
    CommandSpec { flags: KEEPS_CACHING, complexity: "Depends on the subcommand.", since: "2.4.0", ..container("client", "connection", "A container for client connection commands.", CLIENT_SUBCOMMANDS) },
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_CLIENT_SETNAME: &[Arg] = &[arg("connection-name", String)];
    pub const ARGS_CLIENT_LIST: &[Arg] = &[arg("normal_master_replica_pubsub", OneOf).token("TYPE").since("5.0.0").optional().args(&[arg("normal", PureToken).token("NORMAL"), arg("master", PureToken).token("MASTER"), arg("replica", PureToken).token("REPLICA"), arg("pubsub", PureToken).token("PUBSUB")]), arg("id", Block).token("ID").since("6.2.0").optional().args(&[arg("client-id", Integer).multiple()])];
    pub const ARGS_CLIENT_KILL: &[Arg] = &[arg("filter", OneOf).args(&[arg("ip:port", String).deprecated_since("2.8.12"), arg("new-format", OneOf).multiple().args(&[arg("client-id", Integer).token("ID").since("2.8.12").optional(), arg("normal_master_slave_pubsub", OneOf).token("TYPE").since("2.8.12").optional().args(&[arg("normal", PureToken).token("NORMAL"), arg("master", PureToken).token("MASTER").since("3.2.0"), arg("slave", PureToken).token("SLAVE"), arg("replica", PureToken).token("REPLICA").since("5.0.0"), arg("pubsub", PureToken).token("PUBSUB")]), arg("username", String).token("USER").optional(), arg("ip:port", String).token("ADDR").optional(), arg("ip:port", String).token("LADDR").since("6.2.0").optional(), arg("yes/no", String).token("SKIPME").optional()])])];
    pub const ARGS_CLIENT_NO_EVICT: &[Arg] = &[arg("enabled", OneOf).args(&[arg("on", PureToken).token("ON"), arg("off", PureToken).token("OFF")])];
    pub const ARGS_CLIENT_REPLY: &[Arg] = &[arg("on_off_skip", OneOf).args(&[arg("on", PureToken).token("ON"), arg("off", PureToken).token("OFF"), arg("skip", PureToken).token("SKIP")])];
    pub const ARGS_CLIENT_UNBLOCK: &[Arg] = &[arg("client-id", Integer), arg("timeout_error", OneOf).optional().args(&[arg("timeout", PureToken).token("TIMEOUT"), arg("error", PureToken).token("ERROR")])];
    pub const ARGS_CLIENT_PAUSE: &[Arg] = &[arg("timeout", Integer), arg("mode", OneOf).since("6.2.0").optional().args(&[arg("write", PureToken).token("WRITE"), arg("all", PureToken).token("ALL")])];
    pub const ARGS_CLIENT_TRACKING: &[Arg] = &[arg("status", OneOf).args(&[arg("on", PureToken).token("ON"), arg("off", PureToken).token("OFF")]), arg("client-id", Integer).token("REDIRECT").optional(), arg("prefix", String).token("PREFIX").optional().multiple().multiple_token(), arg("bcast", PureToken).token("BCAST").optional(), arg("optin", PureToken).token("OPTIN").optional(), arg("optout", PureToken).token("OPTOUT").optional(), arg("noloop", PureToken).token("NOLOOP").optional()];
    pub const ARGS_CLIENT_CACHING: &[Arg] = &[arg("mode", OneOf).args(&[arg("yes", PureToken).token("YES"), arg("no", PureToken).token("NO")])];
    pub const ARGS_PING: &[Arg] = &[arg("message", String).optional()];
    pub const ARGS_ECHO: &[Arg] = &[arg("message", String)];
    pub const ARGS_SELECT: &[Arg] = &[arg("index", Integer)];
    pub const ARGS_AUTH: &[Arg] = &[arg("username", String).since("6.0.0").optional(), arg("password", String)];
    pub const ARGS_HELLO: &[Arg] = &[arg("arguments", Block).optional().args(&[arg("protover", Integer), arg("username_password", Block).token("AUTH").optional().args(&[arg("username", String), arg("password", String)]), arg("clientname", String).token("SETNAME").optional()])];
}
use docs_args::*;
