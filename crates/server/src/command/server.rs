//! Server commands: INFO, CONFIG, COMMAND (generated from the command table), TIME,
//! SLOWLOG and SHUTDOWN, plus the HELP reply format shared by container commands.

use std::sync::atomic::Ordering;

use resp::{encode, Proto};

use super::args::{self, is};
use super::flags::*;
use super::table::{CommandTable, TableEntry};
use super::{arg_flags, container, key_flags, spec, Arg, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use crate::config;

/// INFO [section [section ...]] — the report as a verbatim/bulk string.
fn info(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let sections: Vec<String> =
        a[1..].iter().map(|s| String::from_utf8_lossy(s).to_ascii_lowercase()).collect();
    let text = crate::info::render(ctx.shared, ctx.table, &sections);
    encode::verbatim(ctx.out, b"txt", text.as_bytes(), ctx.client.proto);
    Ok(())
}

/// CONFIG GET parameter [parameter ...] — a map of matching names to values.
fn config_get(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let cfg = ctx.shared.config.read();
    let mut pairs: Vec<(&str, String)> = Vec::new();
    for pattern in &a[2..] {
        // As Redis: a pattern (with `*`, `?` or `[`) passes over the hidden parameters.
        let glob = pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'['));
        for (name, p) in config::names() {
            if glob && config::HIDDEN.contains(&name) {
                continue;
            }
            if store::glob::glob_match(pattern, name.as_bytes(), true)
                && !pairs.iter().any(|(n, _)| *n == name)
            {
                pairs.push((name, p.get(&cfg)));
            }
        }
    }
    drop(cfg);
    encode::map_len(ctx.out, pairs.len(), ctx.client.proto);
    for (name, value) in pairs {
        encode::bulk(ctx.out, name.as_bytes());
        encode::bulk(ctx.out, value.as_bytes());
    }
    Ok(())
}

/// CONFIG SET parameter value [parameter value ...] — OK; all or nothing.
fn config_set(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() % 2 != 0 {
        return Err(CommandError::Arity("config|set".into()));
    }
    let mut staged = ctx.shared.config.read().clone();
    let mut seen: Vec<&str> = Vec::new();
    for pair in a[2..].chunks_exact(2) {
        let name = String::from_utf8_lossy(pair[0]).to_ascii_lowercase();
        let Some(p) = config::param(&name) else {
            return Err(CommandError::Owned(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        };
        // As Redis 7.0.15: refusals name the parameter as the client wrote it, a value's
        // errors in lower case (an old alias stays the alias).
        let typed = String::from_utf8_lossy(pair[0]);
        let fail_as = |shown: &str, why: &str| {
            CommandError::Owned(format!(
                "ERR CONFIG SET failed (possibly related to argument '{shown}') - {why}"
            ))
        };
        let fail = |why: &str| fail_as(&name, why);
        if seen.contains(&p.name) {
            return Err(fail_as(&typed, "duplicate parameter"));
        }
        seen.push(p.name);
        match p.modify {
            config::Modify::Immutable => return Err(fail_as(&typed, "can't set immutable config")),
            config::Modify::Protected
                if !config::enabled_for(&staged.enable_protected_configs, &ctx.client.info.addr) =>
            {
                return Err(fail_as(&typed, "can't set protected config"))
            }
            _ => {}
        }
        let value = String::from_utf8_lossy(pair[1]);
        p.apply(&mut staged, &value).map_err(|e| fail(&e))?;
    }
    // New TLS settings take effect for new connections, or the whole CONFIG SET fails
    // (Redis: "Unable to update TLS configuration").
    let tls_settings = staged.tls_settings();
    let tls = if staged.tls_port() != 0 && tls_settings != ctx.shared.config.read().tls_settings() {
        match crate::tls::build(&tls_settings) {
            Ok(c) => Some(c),
            Err(e) => {
                crate::log::warning(&format!("Failed to update TLS configuration: {e}"));
                let first = seen.iter().find(|n| n.starts_with("tls-")).copied().unwrap_or("tls-cert-file");
                return Err(CommandError::Owned(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{first}') - Unable to update TLS configuration. Check server logs."
                )));
            }
        }
    } else {
        None
    };
    // appendonly: the log turned on or off (`aof::switch`), under every loop's gate
    // (CONFIG runs without its own: `ALL_GATES`), before the settings are kept, so that
    // a failure keeps none of them.
    if staged.appendonly != ctx.shared.aof.is_some() {
        let _gates = ctx.shared.all_gates(ctx.client.in_exec || ctx.client.loading);
        ctx.shared.aof.object().set_policy(staged.appendfsync);
        let switched = if staged.appendonly { crate::aof::switch::turn_on(ctx.shared) } else { crate::aof::switch::turn_off(ctx.shared) };
        switched.map_err(|e| CommandError::Owned(format!("ERR CONFIG SET failed (possibly related to argument 'appendonly') - {e}")))?;
    }
    *ctx.shared.config.write() = staged;
    if let Some(c) = tls {
        ctx.shared.tls.set(c);
    }
    ctx.shared.config_changed();
    ctx.ok();
    Ok(())
}

/// CONFIG RESETSTAT — OK.
fn config_resetstat(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    for t in &ctx.shared.thread_stats {
        t.reset();
    }
    ctx.shared.snapshots.syncs_full.store(0, Ordering::Relaxed);
    ctx.shared.snapshots.syncs_partial_ok.store(0, Ordering::Relaxed);
    ctx.shared.snapshots.syncs_partial_err.store(0, Ordering::Relaxed);
    ctx.shared.slowlog.lock().clear();
    ctx.ok();
    Ok(())
}

/// CONFIG REWRITE — OK; rewrites the config file the server started from.
fn config_rewrite(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let mut cfg = ctx.shared.config.read().clone();
    let Some(path) = cfg.config_file.clone() else {
        return Err(CommandError::msg("ERR The server is running without a config file"));
    };
    // The users go into the config file unless an ACL file keeps them (ACL SAVE's job).
    if cfg.recorded.get("aclfile").is_none_or(|f| f.is_empty()) {
        let catalog = crate::acl::catalog();
        cfg.users = ctx
            .shared
            .acl
            .all()
            .iter()
            .map(|u| u.describe(catalog).split(' ').skip(1).map(String::from).collect())
            .collect();
    }
    let text = config::render(&cfg);
    crate::fsutil::write_atomically(&path, text.as_bytes()).map_err(|e| {
        crate::log::warning(&format!("CONFIG REWRITE failed: {e}"));
        CommandError::Owned(format!("ERR Rewriting config file: {e}"))
    })?;
    ctx.ok();
    Ok(())
}

fn config_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help(
        ctx,
        "CONFIG",
        &[
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
        ],
    );
    Ok(())
}

pub(super) fn acl_categories(spec: &CommandSpec) -> Vec<String> {
    // Redis's category order, and the categories its flags imply (setImplicitACLCategories).
    const ORDER: &[&str] = &[
        "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
        "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
        "dangerous", "connection", "transaction", "scripting",
    ];
    let mut has: Vec<&str> = spec.acl.to_vec();
    let implied = [
        (WRITE, "write"),
        (READONLY, "read"),
        (ADMIN, "admin"),
        (ADMIN, "dangerous"),
        (PUBSUB, "pubsub"),
        (FAST, "fast"),
        (BLOCKING, "blocking"),
    ];
    // (A read-only script, EVAL_RO, is not @read: what it reads is the script's.)
    let scripting = has.contains(&"scripting");
    has.extend(implied.iter().filter(|(bit, c)| spec.flags & bit != 0 && !(scripting && *c == "read")).map(|(_, c)| *c));
    if !has.contains(&"fast") {
        has.push("slow");
    }
    ORDER.iter().filter(|c| has.contains(c)).map(|c| format!("@{c}")).collect()
}

/// One COMMAND INFO entry (10 fields, as Redis 7).
fn write_command_info(t: &CommandTable, out: &mut Vec<u8>, proto: Proto, idx: usize, e: &TableEntry) {
    let spec = e.spec;
    encode::array_len(out, 10);
    encode::bulk(out, e.fullname.as_bytes());
    encode::integer(out, i64::from(spec.arity));
    let mut flag_names: Vec<&str> =
        NAMES.iter().filter(|(bit, _)| spec.flags & bit != 0 && *bit != ALLOW_BUSY).map(|(_, n)| *n).collect();
    if super::has_movable_keys(spec) {
        flag_names.push("movablekeys");
    }
    if spec.flags & ALLOW_BUSY != 0 {
        flag_names.push("allow_busy");
    }
    encode::set_len(out, flag_names.len(), proto);
    for f in flag_names {
        encode::simple(out, f.as_bytes());
    }
    let (first, last, step) = spec.keys;
    encode::integer(out, i64::from(first));
    encode::integer(out, i64::from(last));
    encode::integer(out, i64::from(step));
    let cats = acl_categories(spec);
    encode::set_len(out, cats.len(), proto);
    for c in cats {
        encode::simple(out, c.as_bytes());
    }
    encode::array_len(out, spec.tips.len());
    for tip in spec.tips {
        encode::simple(out, tip.as_bytes());
    }
    encode::array_len(out, spec.key_specs.len());
    for ks in spec.key_specs {
        write_key_spec(out, proto, ks);
    }
    let children: Vec<_> = t.children(idx).collect();
    encode::array_len(out, children.len());
    for (ci, ce) in children {
        write_command_info(t, out, proto, ci, ce);
    }
}

/// One key spec as Redis 7.0's COMMAND INFO writes it (without the notes Redis gives
/// some, which are its prose).
fn write_key_spec(out: &mut Vec<u8>, proto: Proto, ks: &KeySpec) {
    use SpecValue::{Int, Text};
    encode::map_len(out, 3, proto);
    encode::bulk(out, b"flags");
    let names: Vec<&str> = key_flags::NAMES.iter().filter(|(bit, _)| ks.flags & bit != 0).map(|(_, n)| *n).collect();
    encode::set_len(out, names.len(), proto);
    for n in names {
        encode::simple(out, n.as_bytes());
    }
    match ks.begin {
        BeginSearch::Index(i) => write_search(out, proto, "begin_search", "index", &[("index", Int(i))]),
        BeginSearch::Keyword { keyword, start_from } => write_search(
            out,
            proto,
            "begin_search",
            "keyword",
            &[("keyword", Text(keyword)), ("startfrom", Int(start_from))],
        ),
        BeginSearch::Unknown => write_search(out, proto, "begin_search", "unknown", &[]),
    }
    match ks.find {
        FindKeys::Range { last_key, key_step, limit } => write_search(
            out,
            proto,
            "find_keys",
            "range",
            &[("lastkey", Int(last_key)), ("keystep", Int(key_step)), ("limit", Int(limit))],
        ),
        FindKeys::Keynum { keynum_idx, first_key, key_step } => write_search(
            out,
            proto,
            "find_keys",
            "keynum",
            &[("keynumidx", Int(keynum_idx)), ("firstkey", Int(first_key)), ("keystep", Int(key_step))],
        ),
        FindKeys::Unknown => write_search(out, proto, "find_keys", "unknown", &[]),
    }
}

/// A value of a key spec's search part.
enum SpecValue {
    Int(i32),
    Text(&'static str),
}

/// `label` => {type => `kind`, spec => {name => value ...}}.
fn write_search(out: &mut Vec<u8>, proto: Proto, label: &str, kind: &str, fields: &[(&str, SpecValue)]) {
    encode::bulk(out, label.as_bytes());
    encode::map_len(out, 2, proto);
    encode::bulk(out, b"type");
    encode::bulk(out, kind.as_bytes());
    encode::bulk(out, b"spec");
    encode::map_len(out, fields.len(), proto);
    for (name, value) in fields {
        encode::bulk(out, name.as_bytes());
        match value {
            SpecValue::Int(i) => encode::integer(out, i64::from(*i)),
            SpecValue::Text(t) => encode::bulk(out, t.as_bytes()),
        }
    }
}

/// COMMAND — every command's info.
fn command(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() > 1 {
        // Unknown subcommands are answered by dispatch; reaching here is a bug guard.
        return Err(CommandError::Syntax);
    }
    let t = ctx.table;
    let top: Vec<_> = t.top_level().collect();
    encode::array_len(ctx.out, top.len());
    for (i, e) in top {
        write_command_info(t, ctx.out, ctx.client.proto, i, e);
    }
    Ok(())
}

/// COMMAND COUNT — number of top-level commands.
fn command_count(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    encode::integer(ctx.out, ctx.table.top_level().count() as i64);
    Ok(())
}

/// Finds a command or "parent|sub" by name.
fn find_entry(t: &CommandTable, name: &[u8]) -> Option<usize> {
    match name.iter().position(|&b| b == b'|') {
        Some(bar) => t.lookup_client(&name[..bar]).and_then(|p| t.lookup_sub(p, &name[bar + 1..])),
        None => t.lookup_client(name),
    }
}

/// COMMAND INFO [name ...] — info for each (nil for unknown names).
fn command_info(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = ctx.table;
    if a.len() == 2 {
        return command(ctx, &a[..1]);
    }
    encode::array_len(ctx.out, a.len() - 2);
    for name in &a[2..] {
        match find_entry(t, name) {
            Some(i) => write_command_info(t, ctx.out, ctx.client.proto, i, &t.entries[i]),
            None => encode::null_array(ctx.out, ctx.client.proto),
        }
    }
    Ok(())
}

fn write_docs(t: &CommandTable, out: &mut Vec<u8>, proto: Proto, idx: usize) {
    let spec = t.entries[idx].spec;
    let children: Vec<_> = t.children(idx).collect();
    let syscmd = spec.flags & DOC_SYSCMD != 0;
    let deprecated = !spec.deprecated_since.is_empty();
    let fields = 3
        + usize::from(!spec.complexity.is_empty())
        + usize::from(syscmd || deprecated)
        + usize::from(deprecated)
        + usize::from(!spec.args.is_empty())
        + usize::from(!children.is_empty());
    encode::map_len(out, fields, proto);
    encode::bulk(out, b"summary");
    encode::bulk(out, spec.summary.as_bytes());
    encode::bulk(out, b"since");
    encode::bulk(out, spec.since.as_bytes());
    encode::bulk(out, b"group");
    encode::bulk(out, spec.group.as_bytes());
    if !spec.complexity.is_empty() {
        encode::bulk(out, b"complexity");
        encode::bulk(out, spec.complexity.as_bytes());
    }
    if syscmd || deprecated {
        encode::bulk(out, b"doc_flags");
        encode::set_len(out, 1, proto);
        encode::simple(out, if syscmd { b"syscmd" } else { b"deprecated" });
    }
    if deprecated {
        encode::bulk(out, b"deprecated_since");
        encode::bulk(out, spec.deprecated_since.as_bytes());
    }
    if !spec.args.is_empty() {
        encode::bulk(out, b"arguments");
        write_args(out, proto, spec.args);
    }
    if !children.is_empty() {
        encode::bulk(out, b"subcommands");
        encode::map_len(out, children.len(), proto);
        for (ci, ce) in children {
            encode::bulk(out, ce.fullname.as_bytes());
            write_docs(t, out, proto, ci);
        }
    }
}

/// Arguments as COMMAND DOCS describes them, in Redis 7.0.15's field order.
fn write_args(out: &mut Vec<u8>, proto: Proto, args: &[Arg]) {
    encode::array_len(out, args.len());
    for a in args {
        let flags: Vec<&str> = arg_flags::NAMES.iter().filter(|(bit, _)| a.flags & bit != 0).map(|(_, n)| *n).collect();
        let fields = 2
            + usize::from(a.key_spec_index.is_some())
            + usize::from(a.token.is_some())
            + usize::from(a.since.is_some())
            + usize::from(a.deprecated_since.is_some())
            + usize::from(!flags.is_empty())
            + usize::from(!a.args.is_empty());
        encode::map_len(out, fields, proto);
        encode::bulk(out, b"name");
        encode::bulk(out, a.name.as_bytes());
        encode::bulk(out, b"type");
        encode::bulk(out, a.kind.name().as_bytes());
        if let Some(i) = a.key_spec_index {
            encode::bulk(out, b"key_spec_index");
            encode::integer(out, i64::from(i));
        }
        if let Some(token) = a.token {
            encode::bulk(out, b"token");
            encode::bulk(out, token.as_bytes());
        }
        if let Some(v) = a.since {
            encode::bulk(out, b"since");
            encode::bulk(out, v.as_bytes());
        }
        if let Some(v) = a.deprecated_since {
            encode::bulk(out, b"deprecated_since");
            encode::bulk(out, v.as_bytes());
        }
        if !flags.is_empty() {
            encode::bulk(out, b"flags");
            encode::set_len(out, flags.len(), proto);
            for f in flags {
                encode::simple(out, f.as_bytes());
            }
        }
        if !a.args.is_empty() {
            encode::bulk(out, b"arguments");
            write_args(out, proto, a.args);
        }
    }
}

/// COMMAND DOCS [name ...] — a map of name to documentation: summary (ours), since, group,
/// complexity (its big-O), doc flags, arguments (Redis's structure, from which redis-cli
/// builds its hints) and subcommands. Redis's history notes are its prose: left out.
fn command_docs(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = ctx.table;
    let wanted: Vec<usize> = if a.len() == 2 {
        t.top_level().map(|(i, _)| i).collect()
    } else {
        a[2..].iter().filter_map(|n| find_entry(t, n)).collect()
    };
    encode::map_len(ctx.out, wanted.len(), ctx.client.proto);
    for i in wanted {
        encode::bulk(ctx.out, t.entries[i].fullname.as_bytes());
        write_docs(t, ctx.out, ctx.client.proto, i);
    }
    Ok(())
}

/// COMMAND LIST [FILTERBY MODULE name|ACLCAT cat|PATTERN pattern] — command names.
fn command_list(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = ctx.table;
    let filter: Option<(&[u8], &[u8])> = match a.len() {
        2 => None,
        5 if is(a[2], "filterby") => Some((a[3], a[4])),
        _ => return Err(CommandError::Syntax),
    };
    let mut names = Vec::new();
    for (i, e) in t.top_level() {
        let keep = match filter {
            None => true,
            Some((k, v)) if is(k, "module") => {
                let _ = v;
                false
            }
            Some((k, v)) if is(k, "aclcat") => {
                let want = String::from_utf8_lossy(v).to_ascii_lowercase();
                acl_categories(e.spec).iter().any(|c| c[1..] == want)
            }
            Some((k, v)) if is(k, "pattern") => store::glob::glob_match(v, e.fullname.as_bytes(), true),
            Some(_) => return Err(CommandError::Syntax),
        };
        if keep {
            names.push(e.fullname.clone());
        }
        // Subcommands are listed too (as "config|get"), as Redis 7 does.
        for (_, ce) in t.children(i) {
            let keep_sub = match filter {
                None => true,
                Some((k, v)) if is(k, "pattern") => store::glob::glob_match(v, ce.fullname.as_bytes(), true),
                Some((k, v)) if is(k, "aclcat") => {
                    let want = String::from_utf8_lossy(v).to_ascii_lowercase();
                    acl_categories(ce.spec).iter().any(|c| c[1..] == want)
                }
                Some(_) => false,
            };
            if keep_sub {
                names.push(ce.fullname.clone());
            }
        }
    }
    encode::array_len(ctx.out, names.len());
    for n in names {
        encode::bulk(ctx.out, n.as_bytes());
    }
    Ok(())
}

/// COMMAND GETKEYS command [arg ...] — the key arguments.
fn command_getkeys(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (_, cmd, keys) = keys_of_command(ctx, a)?;
    encode::array_len(ctx.out, keys.len());
    for k in keys {
        encode::bulk(ctx.out, cmd[k]);
    }
    Ok(())
}

/// COMMAND GETKEYSANDFLAGS command [arg ...] — each key argument with its flags, as
/// Redis 7.0 finds them: the key specs', or for the commands whose flags depend on the
/// arguments its own rules (SET with or without GET, BITFIELD of GETs only, SORT's
/// STORE, MIGRATE's KEYS).
fn command_getkeysandflags(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    use super::key_flags as kf;
    let (spec, cmd, positions) = keys_of_command(ctx, a)?;
    let has = |word: &str| cmd[1..].iter().any(|w| super::args::is(w, word));
    let keys: Vec<(usize, u16)> = match spec.name {
        "set" => {
            let flags = if cmd[3..].iter().any(|w| super::args::is(w, "get")) { kf::RW | kf::ACCESS | kf::UPDATE } else { kf::OW | kf::UPDATE };
            positions.into_iter().map(|p| (p, flags)).collect()
        }
        "bitfield" => {
            let flags = if has("set") || has("incrby") { kf::RW | kf::ACCESS | kf::UPDATE } else { kf::RO | kf::ACCESS };
            positions.into_iter().map(|p| (p, flags)).collect()
        }
        "sort" | "sort_ro" => positions.into_iter().map(|p| (p, if p == 1 { kf::RO | kf::ACCESS } else { kf::OW | kf::UPDATE })).collect(),
        // Its own key finder's flags, for either form (not the KEYS spec's `incomplete`).
        "migrate" => positions.into_iter().map(|p| (p, kf::RW | kf::ACCESS | kf::DELETE)).collect(),
        // (The positions GETKEYS names, each with its spec's flags: a count past the
        // arguments names none.)
        _ => super::keys_with_flags(spec, &cmd).into_iter().filter(|(p, _)| positions.contains(p)).collect(),
    };
    let proto = ctx.client.proto;
    encode::array_len(ctx.out, keys.len());
    for (at, flags) in keys {
        encode::array_len(ctx.out, 2);
        encode::bulk(ctx.out, cmd[at]);
        let names: Vec<&str> = kf::NAMES.iter().filter(|(bit, _)| flags & bit != 0).map(|(_, n)| *n).collect();
        encode::set_len(ctx.out, names.len(), proto);
        for n in names {
            encode::simple(ctx.out, n.as_bytes());
        }
    }
    Ok(())
}

/// The command COMMAND GETKEYS and GETKEYSANDFLAGS look at (its spec and arguments),
/// and its key positions; Redis's errors for an unknown command, a wrong count of
/// arguments, or one without keys.
fn keys_of_command<'c>(ctx: &Ctx<'_>, a: &[&'c [u8]]) -> Result<(&'static CommandSpec, Vec<&'c [u8]>, super::KeyPositions), CommandError> {
    let t = ctx.table;
    let cmd = &a[2..];
    let Some(mut idx) = t.lookup_client(cmd[0]) else {
        return Err(CommandError::msg("ERR Invalid command specified"));
    };
    if !t.entries[idx].spec.subcommands.is_empty() && cmd.len() > 1 {
        if let Some(s) = t.lookup_sub(idx, cmd[1]) {
            idx = s;
        }
    }
    let spec = t.entries[idx].spec;
    // Redis's order: a command without keys first (its key specs, if any, name
    // channels), then the count of arguments, then the keys found.
    if spec.key_specs.iter().all(|k| k.flags & super::key_flags::NOT_KEY != 0) {
        return Err(CommandError::msg("ERR The command has no key arguments"));
    }
    let arity = i64::from(spec.arity);
    let argc = cmd.len() as i64;
    if (arity > 0 && argc != arity) || argc < -arity {
        return Err(CommandError::msg("ERR Invalid number of arguments specified for command"));
    }
    match super::command_keys(spec, cmd).filter(|k| !k.is_empty()) {
        Some(keys) => Ok((spec, cmd.to_vec(), keys)),
        // EVAL and FCALL may name no key.
        None if spec.flags & NO_MANDATORY_KEYS != 0 => Ok((spec, cmd.to_vec(), super::KeyPositions::new())),
        None => Err(CommandError::msg("ERR Invalid arguments specified for command")),
    }
}

fn command_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help(
        ctx,
        "COMMAND",
        &[
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
        ],
    );
    Ok(())
}

/// TIME — [unix seconds, microseconds].
fn time(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    encode::array_len(ctx.out, 2);
    encode::bulk_integer(ctx.out, now.as_secs() as i64);
    encode::bulk_integer(ctx.out, i64::from(now.subsec_micros()));
    Ok(())
}

/// SLOWLOG GET [count] — the most recent entries (10 by default, -1 for all).
fn slowlog_get(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let count = match a.get(2) {
        None => 10,
        Some(v) => {
            let n = args::int(v).ok().filter(|&n| n >= -1).ok_or(CommandError::msg(
                "ERR count should be greater than or equal to -1",
            ))?;
            if n == -1 {
                usize::MAX
            } else {
                n as usize
            }
        }
    };
    let entries: Vec<_> = ctx.shared.slowlog.lock().iter().take(count).cloned().collect();
    let out = &mut *ctx.out;
    encode::array_len(out, entries.len());
    for e in entries {
        encode::array_len(out, 6);
        encode::integer(out, e.id as i64);
        encode::integer(out, e.time_s);
        encode::integer(out, e.duration_us as i64);
        encode::array_len(out, e.args.len());
        for arg in &e.args {
            encode::bulk(out, arg);
        }
        encode::bulk(out, e.addr.as_bytes());
        encode::bulk(out, &e.name);
    }
    Ok(())
}

/// SLOWLOG LEN — number of entries.
fn slowlog_len(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let n = ctx.shared.slowlog.lock().len();
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// SLOWLOG RESET — OK.
fn slowlog_reset(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    ctx.shared.slowlog.lock().clear();
    ctx.ok();
    Ok(())
}

fn slowlog_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help(
        ctx,
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    );
    Ok(())
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] — no reply on success: the server
/// stops and connections close.
fn shutdown(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut save, mut nosave, mut abort, mut now, mut force) = (false, false, false, false, false);
    for w in &a[1..] {
        if is(w, "save") {
            save = true;
        } else if is(w, "nosave") {
            nosave = true;
        } else if is(w, "abort") {
            abort = true;
        } else if is(w, "now") {
            now = true;
        } else if is(w, "force") {
            force = true;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    if (save && nosave) || (abort && a.len() > 2) {
        return Err(CommandError::Syntax);
    }
    if abort {
        if crate::shutdown::abort(ctx.shared) {
            ctx.ok();
            return Ok(());
        }
        return Err(CommandError::msg("ERR No shutdown in progress."));
    }
    crate::log::notice("User requested shutdown...");
    // A master whose replicas lag waits for them first (`crate::shutdown`); this
    // client then waits, blocked, for the exit (or ABORT's error). Inside EXEC it
    // cannot block, and goes on at once, as Redis's.
    let asked_save = if save { Some(true) } else if nosave { Some(false) } else { None };
    let ask = crate::shutdown::Ask {
        save: asked_save,
        now: now || ctx.client.in_exec,
        force,
        client: Some((ctx.client.info.owner.load(Ordering::Relaxed), ctx.client.info.id)),
    };
    if crate::shutdown::begin(ctx.shared, ask, ctx.client.in_exec, ctx.now_ms) == crate::shutdown::Begun::Waiting {
        ctx.client.blocked = true;
        return Ok(());
    }
    // As Redis: SAVE forces a snapshot, NOSAVE skips it, and with neither the save rules
    // decide (`shutdown::exit`, under every gate: dispatch released ours).
    if !crate::shutdown::exit(ctx.shared, crate::shutdown::command_save(ctx.shared, asked_save), force) {
        return Err(CommandError::msg("ERR Errors trying to SHUTDOWN. Check logs."));
    }
    ctx.client.close_after_reply = true;
    Ok(())
}

/// SAVE — OK once the whole keyspace is in `dbfilename` (blocks every client meanwhile,
/// as Redis's SAVE does).
fn save(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.shared.snapshots.bg_in_progress.load(Ordering::Acquire) {
        return Err(CommandError::msg("ERR Background save already in progress"));
    }
    let _gates = ctx.shared.all_gates(ctx.client.in_exec);
    crate::snapshot::save(ctx.shared).map_err(|_| CommandError::msg("ERR"))?;
    ctx.ok();
    Ok(())
}

/// BGSAVE [SCHEDULE] — "Background saving started": a point-in-time snapshot written
/// by the snapshot thread while clients go on (no fork; see `snapshot`).
fn bgsave(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() > 2 || (a.len() == 2 && !is(a[1], "schedule")) {
        return Err(CommandError::Syntax);
    }
    let schedule = a.len() == 2;
    let rewriting = ctx.shared.aof.as_ref().is_some_and(|x| x.rewrite.in_progress.load(Ordering::Acquire));
    if ctx.client.in_exec && !ctx.shared.snapshots.bg_in_progress.load(Ordering::Acquire) {
        // As Redis: inside EXEC the save is scheduled, to start right after it.
        ctx.shared.snapshots.bg_scheduled.store(true, Ordering::Release);
        encode::simple(ctx.out, b"Background saving scheduled");
        return Ok(());
    }
    if rewriting {
        // As Redis: one snapshot at a time; SCHEDULE runs it once the rewrite is done.
        if !schedule {
            return Err(CommandError::msg("ERR An AOF log rewriting in progress: can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible."));
        }
        ctx.shared.snapshots.bg_scheduled.store(true, Ordering::Release);
        encode::simple(ctx.out, b"Background saving scheduled");
        return Ok(());
    }
    crate::snapshot::begin_bgsave(ctx.shared, ctx.client.in_exec).map_err(CommandError::msg)?;
    encode::simple(ctx.out, b"Background saving started");
    Ok(())
}

/// BGREWRITEAOF — compacts the append-only log in the background (see aof::rewrite).
fn bgrewriteaof(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if let (true, Some(aof)) = (ctx.client.in_exec, ctx.shared.aof.as_ref()) {
        if !aof.rewrite.in_progress.load(Ordering::Acquire) {
            // As Redis: inside EXEC the rewrite is scheduled, to start right after it.
            aof.rewrite.scheduled.store(true, Ordering::Release);
            encode::simple(ctx.out, b"Background append only file rewriting scheduled");
            return Ok(());
        }
    }
    match crate::aof::rewrite::begin(ctx.shared, ctx.client.in_exec).map_err(CommandError::Owned)? {
        crate::aof::rewrite::Started::Now => encode::simple(ctx.out, b"Background append only file rewriting started"),
        crate::aof::rewrite::Started::Scheduled => {
            encode::simple(ctx.out, b"Background append only file rewriting scheduled")
        }
    }
    Ok(())
}

/// LASTSAVE — Unix time of the last successful save.
fn lastsave(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    encode::integer(ctx.out, ctx.shared.snapshots.last_save_s.load(Ordering::Relaxed));
    Ok(())
}

/// ROLE. Basalt does not replicate yet (issue 24): it is always a master with no
/// replicas, at replication offset 0, as INFO replication says.
fn role(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if let Some(link) = ctx.shared.replica.link() {
        // A replica: its master, the link's state and the offset applied.
        encode::array_len(ctx.out, 5);
        encode::bulk(ctx.out, b"slave");
        encode::bulk(ctx.out, link.host.as_bytes());
        encode::integer(ctx.out, link.port as i64);
        encode::bulk(ctx.out, link.state().name().as_bytes());
        encode::integer(ctx.out, link.offset());
        return Ok(());
    }
    let r = ctx.shared.repl.info();
    encode::array_len(ctx.out, 3);
    encode::bulk(ctx.out, b"master");
    encode::integer(ctx.out, r.offset as i64);
    // As Redis: the online replicas, each as ip, port and acknowledged offset (strings).
    let online: Vec<_> = r.replicas.iter().filter(|x| x.2 == crate::replication::stream::ReplicaState::Online).collect();
    encode::array_len(ctx.out, online.len());
    for (ip, port, _, offset, _) in online {
        encode::array_len(ctx.out, 3);
        encode::bulk(ctx.out, ip.as_bytes());
        encode::bulk(ctx.out, port.to_string().as_bytes());
        encode::bulk(ctx.out, offset.to_string().as_bytes());
    }
    Ok(())
}


const SERVER: &[&str] = &[];

static CONFIG_SUBCOMMANDS: &[CommandSpec] = &[
    spec("get", -3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), SERVER, "server", "Returns the effective values of configuration parameters.", config_get).since("2.0.0").args(ARGS_CONFIG_GET).complexity("O(N)"),
    spec("set", -4, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), SERVER, "server", "Sets configuration parameters in-flight.", config_set).since("2.0.0").args(ARGS_CONFIG_SET).complexity("O(N)").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    spec("resetstat", 2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), SERVER, "server", "Resets the server's statistics.", config_resetstat).since("2.0.0").complexity("O(1)"),
    spec("rewrite", 2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), SERVER, "server", "Persists the effective configuration to file.", config_rewrite).since("2.8.0").complexity("O(1)"),
    spec("help", 2, LOADING | STALE, (0, 0, 0), SERVER, "server", "Returns helpful text about the different subcommands.", config_help).since("5.0.0").complexity("O(1)"),
];

static COMMAND_SUBCOMMANDS: &[CommandSpec] = &[
    spec("count", 2, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Returns a count of commands.", command_count).since("2.8.13").complexity("O(1)"),
    spec("info", -2, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Returns information about one, multiple or all commands.", command_info).since("2.8.13").args(ARGS_COMMAND_INFO).complexity("O(N)").tips(&["nondeterministic_output_order"]),
    spec("docs", -2, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Returns documentary information about one, multiple or all commands.", command_docs).since("7.0.0").args(ARGS_COMMAND_DOCS).complexity("O(N)").tips(&["nondeterministic_output_order"]),
    spec("list", -2, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Returns a list of command names.", command_list).since("7.0.0").args(ARGS_COMMAND_LIST).complexity("O(N)").tips(&["nondeterministic_output_order"]),
    spec("getkeys", -4, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Extracts the key names from an arbitrary command.", command_getkeys).since("2.8.13").complexity("O(N)"),
    spec("getkeysandflags", -4, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Extracts the key names and access flags from an arbitrary command.", command_getkeysandflags).since("7.0.0").complexity("O(N)"),
    spec("help", 2, LOADING | STALE, (0, 0, 0), &["connection"], "server", "Returns helpful text about the different subcommands.", command_help).since("5.0.0").complexity("O(1)"),
];

static SLOWLOG_SUBCOMMANDS: &[CommandSpec] = &[
    spec("get", -2, ADMIN | LOADING | STALE, (0, 0, 0), SERVER, "server", "Returns the slow log's entries.", slowlog_get).since("2.2.12").args(ARGS_SLOWLOG_GET).complexity("O(N)").tips(&["request_policy:all_nodes", "nondeterministic_output"]),
    spec("len", 2, ADMIN | LOADING | STALE, (0, 0, 0), SERVER, "server", "Returns the number of entries in the slow log.", slowlog_len).since("2.2.12").complexity("O(1)").tips(&["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"]),
    spec("reset", 2, ADMIN | LOADING | STALE, (0, 0, 0), SERVER, "server", "Clears all entries from the slow log.", slowlog_reset).since("2.2.12").complexity("O(N)").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    spec("help", 2, LOADING | STALE, (0, 0, 0), SERVER, "server", "Show helpful text about the different subcommands", slowlog_help).since("6.2.0").complexity("O(1)"),
];

/// COMMAND has its own handler for the bare form, so it is declared by hand rather
/// than with `container`.
static COMMAND_SPEC_FLAGS: u32 = LOADING | STALE;

pub static COMMANDS: &[CommandSpec] = &[
    spec("info", -1, LOADING | STALE, (0, 0, 0), &["dangerous"], "server", "Returns information and statistics about the server.", info).since("1.0.0").args(ARGS_INFO).complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    // (Without the loop's gate: CONFIG SET appendonly takes every gate itself, and the
    // rest needs none.)
    CommandSpec { flags: ALL_GATES, ..container("config", "server", "A container for server configuration commands.", CONFIG_SUBCOMMANDS).since("2.0.0").complexity("Depends on the subcommand.") },
    CommandSpec {
        name: "command",
        arity: -1,
        flags: COMMAND_SPEC_FLAGS,
        keys: (0, 0, 0),
        acl: &["connection"],
        group: "server",
        summary: "Returns detailed information about all commands.",
        handler: command,
        subcommands: COMMAND_SUBCOMMANDS,
        movable: None,
        writes: super::Writes::Keys,
        since: "2.8.13",
        key_specs: &[],
        tips: &["nondeterministic_output_order"],
        args: &[],
        complexity: "O(N)",
        deprecated_since: "",
        channels: super::Channels::None,
    },
    spec("time", 1, LOADING | STALE | FAST, (0, 0, 0), SERVER, "server", "Returns the server time.", time).since("2.6.0").complexity("O(1)").tips(&["nondeterministic_output"]),
    container("slowlog", "server", "A container for slow log commands.", SLOWLOG_SUBCOMMANDS).since("2.2.12").complexity("Depends on the subcommand."),
    container("memory", "server", "A container for memory diagnostics commands.", super::memory::MEMORY_SUBCOMMANDS).since("4.0.0").complexity("Depends on the subcommand."),
    spec("save", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | NO_MULTI | ALL_GATES, (0, 0, 0), SERVER, "server", "Synchronously saves the database(s) to disk.", save).since("1.0.0").complexity("O(N)"),
    spec("bgsave", -1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | ALL_GATES, (0, 0, 0), SERVER, "server", "Asynchronously saves the database(s) to disk.", bgsave).since("1.0.0").args(ARGS_BGSAVE).complexity("O(1)"),
    spec("bgrewriteaof", 1, ADMIN | NOSCRIPT | NO_ASYNC_LOADING | ALL_GATES, (0, 0, 0), SERVER, "server", "Asynchronously rewrites the append-only file to disk.", bgrewriteaof).since("1.0.0").complexity("O(1)"),
    spec("lastsave", 1, LOADING | STALE | FAST, (0, 0, 0), &["admin", "dangerous"], "server", "Returns the Unix timestamp of the last successful save to disk.", lastsave).since("1.0.0").complexity("O(1)").tips(&["nondeterministic_output"]),
    spec("role", 1, NOSCRIPT | LOADING | STALE | FAST, (0, 0, 0), &["admin", "dangerous"], "server", "Return the role of the instance in the context of replication", role).since("2.8.12").complexity("O(1)"),
    spec("shutdown", -1, ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | SENTINEL | ALLOW_BUSY | ALL_GATES, (0, 0, 0), SERVER, "server", "Synchronously saves the database(s) to disk and shuts down the Redis server.", shutdown).since("1.0.0").args(ARGS_SHUTDOWN).complexity("O(N) or O(1)"),
];


/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_CONFIG_GET: &[Arg] = &[arg("parameter", Block).multiple().args(&[arg("parameter", String)])];
    pub const ARGS_CONFIG_SET: &[Arg] = &[arg("parameter_value", Block).multiple().args(&[arg("parameter", String), arg("value", String)])];
    pub const ARGS_COMMAND_INFO: &[Arg] = &[arg("command-name", String).optional().multiple()];
    pub const ARGS_COMMAND_DOCS: &[Arg] = &[arg("command-name", String).optional().multiple()];
    pub const ARGS_COMMAND_LIST: &[Arg] = &[arg("filterby", OneOf).token("FILTERBY").optional().args(&[arg("module-name", String).token("MODULE"), arg("category", String).token("ACLCAT"), arg("pattern", Pattern).token("PATTERN")])];
    pub const ARGS_SLOWLOG_GET: &[Arg] = &[arg("count", Integer).optional()];
    pub const ARGS_INFO: &[Arg] = &[arg("section", String).optional().multiple()];
    pub const ARGS_BGSAVE: &[Arg] = &[arg("schedule", PureToken).token("SCHEDULE").since("3.2.2").optional()];
    pub const ARGS_SHUTDOWN: &[Arg] = &[arg("nosave_save", OneOf).optional().args(&[arg("nosave", PureToken).token("NOSAVE"), arg("save", PureToken).token("SAVE")]), arg("now", PureToken).token("NOW").since("7.0.0").optional(), arg("force", PureToken).token("FORCE").since("7.0.0").optional(), arg("abort", PureToken).token("ABORT").since("7.0.0").optional()];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn every_command_has_a_since_version() {
        for e in &crate::command::registry::table().entries {
            assert!(!e.spec.since.is_empty(), "{} has no .since(..) in its spec", e.fullname);
        }
    }

    #[test]
    fn errorstats_count_by_code() {
        let mut h = Harness::new();
        h.text("SET k v");
        h.text("INCR k");
        h.text("NOSUCHCOMMAND");
        h.text("GET");
        let info = h.text("INFO errorstats");
        assert!(info.contains("errorstat_ERR:count=3"), "{info}");
        assert!(h.text("INFO stats").contains("total_error_replies:3"));
        h.text("CONFIG RESETSTAT");
        assert!(!h.text("INFO errorstats").contains("errorstat_ERR"));
    }

    #[test]
    fn config_set_is_all_or_nothing_and_visible_to_get() {
        let mut h = Harness::new();
        assert_eq!(
            h.text("CONFIG SET maxmemory 10mb timeout -1"),
            "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive"
        );
        assert_eq!(h.text("CONFIG GET maxmemory"), "[maxmemory,0]");
        assert_eq!(h.text("CONFIG SET maxmemory 10mb timeout 5"), "OK");
        assert_eq!(h.text("CONFIG GET maxmemory"), "[maxmemory,10485760]");
        assert_eq!(h.text("CONFIG SET port 1"), "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config");
        assert_eq!(h.text("CONFIG REWRITE"), "ERR The server is running without a config file");
    }

    #[test]
    fn command_count_matches_the_table() {
        let mut h = Harness::new();
        let top = crate::command::registry::table().top_level().count();
        assert_eq!(h.text("COMMAND COUNT"), top.to_string());
        assert_eq!(h.text("COMMAND GETKEYS MSET a 1 b 2"), "[a,b]");
    }
}
