//! ACL, the command side: the ACL command (SETUSER, GETUSER, DELUSER, LIST, USERS,
//! WHOAMI, CAT, GENPASS, LOG, DRYRUN, SAVE, LOAD, HELP), AUTH's check against the
//! users, the dispatcher's permission check (a command, its keys, its channels) with
//! Redis 7.0's `-NOPERM` texts and ACL LOG entries, and the catalog of commands the
//! rules name, made from the command table. The users themselves are `crate::acl`.

use std::sync::Arc;

use resp::encode;

use super::args::is;
use super::flags::*;
use super::table::CommandTable;
use super::{arg, container, key_flags, spec, ArgKind, CommandError, CommandSpec, Ctx};
use crate::acl::{self, user, Catalog, CatalogEntry, Denied, LogEntry};

/// The catalog of the table's commands, for the rules (installed at start).
pub fn catalog_of(t: &CommandTable) -> Catalog {
    let entries = t
        .entries
        .iter()
        .map(|e| CatalogEntry {
            name: e.fullname.clone(),
            parent: e.parent,
            categories: super::server::acl_categories(e.spec)
                .iter()
                .filter_map(|c| user::category_bit(&c[1..]))
                .fold(0, |a, b| a | b),
        })
        .collect();
    Catalog::new(entries)
}

/// AUTH and HELLO AUTH: logs the client in as `name`, or answers WRONGPASS (and logs
/// the attempt in ACL LOG, as Redis).
pub fn authenticate(ctx: &mut Ctx<'_>, name: &[u8], password: &[u8]) -> Result<(), CommandError> {
    let name = String::from_utf8_lossy(name);
    match ctx.shared.acl.authenticate(&name, password) {
        Some(u) => {
            *ctx.client.info.user.lock() = Arc::from(u.name.as_str());
            ctx.client.authenticated = true;
            // Looked up again (with its version) before the next command.
            ctx.client.acl_version = 0;
            Ok(())
        }
        None => {
            log_denial(ctx, Denied::Auth, "AUTH".into(), &name);
            Err(CommandError::msg(
                "WRONGPASS invalid username-password pair or user is disabled.",
            ))
        }
    }
}

/// The client's user, looked up again when the users changed since it last looked.
#[inline]
pub fn refresh_user(ctx: &mut Ctx<'_>) {
    let version = ctx.shared.acl.version();
    if ctx.client.acl_version == version {
        return;
    }
    let name = ctx.client.info.user.lock().clone();
    let catalog = acl::catalog();
    // A deleted user's clients are being closed (ACL DELUSER); meanwhile they may do
    // nothing.
    let u = ctx
        .shared
        .acl
        .get(&name)
        .unwrap_or_else(|| Arc::new(acl::User::new(&name, catalog, false)));
    ctx.client.unrestricted = u.root.all_keys && u.root.all_channels && u.root.runs_everything(catalog);
    ctx.client.user = u;
    ctx.client.acl_version = version;
}

/// Why a command may not run, as Redis's processCommand words it (and logs it): None
/// when it may. Called for a client whose user is not unrestricted.
pub fn denied(ctx: &mut Ctx<'_>, idx: usize, spec: &CommandSpec, args: &[&[u8]]) -> Option<String> {
    let (kind, object) = first_denial(&ctx.client.user, ctx.table, idx, spec, args)?;
    let text = if ctx.client.in_script {
        // Redis's words for a script's command (the script's error adds where).
        let reason = match kind {
            Denied::Command => "run this command or subcommand",
            Denied::Key => "access at least one of the keys mentioned in the command arguments",
            _ => "publish to the channel mentioned in the command",
        };
        format!("ERR The user executing the script can't {reason}")
    } else if ctx.client.in_exec {
        // Queued while allowed, refused at EXEC: Redis's words for that.
        let reason = match kind {
            Denied::Command => "no permission to execute the command or subcommand",
            Denied::Key => "no permission to touch the specified keys",
            _ => "no permission to access one of the channels used as arguments",
        };
        format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")
    } else {
        match kind {
            Denied::Command => format!("NOPERM this user has no permissions to run the '{object}' command"),
            Denied::Key => "NOPERM this user has no permissions to access one of the keys used as arguments".into(),
            Denied::Channel => {
                "NOPERM this user has no permissions to access one of the channels used as arguments".into()
            }
            Denied::Auth => return None,
        }
    };
    let name = ctx.client.user.name.clone();
    log_denial(ctx, kind, object, &name);
    Some(text)
}

/// Why `user` may not run this command, None when it may: some selector (the root
/// rules first) allows it whole, or the most relevant refusal of them all (Redis 7.0's
/// order, [`Denied`]'s: channel over key over command, then the later argument).
fn first_denial(user: &acl::User, t: &CommandTable, idx: usize, spec: &CommandSpec, args: &[&[u8]]) -> Option<(Denied, String)> {
    let mut keys: Option<Vec<(usize, u16)>> = None;
    let mut worst: Option<(Denied, usize)> = None;
    for sel in user.all_selectors() {
        let refusal = selector_denial(sel, idx, spec, args, &mut keys)?;
        worst = worst.max(Some(refusal));
    }
    let (kind, pos) = worst?;
    let object = match kind {
        Denied::Command => t.entries[idx].fullname.clone(),
        _ => String::from_utf8_lossy(args[pos]).into_owned(),
    };
    Some((kind, object))
}

/// One selector's refusal and the argument it names (0 for the command), None when it
/// allows the command. The keys are found once, for all selectors.
fn selector_denial(
    sel: &acl::user::Selector,
    idx: usize,
    spec: &CommandSpec,
    args: &[&[u8]],
    keys: &mut Option<Vec<(usize, u16)>>,
) -> Option<(Denied, usize)> {
    // AUTH and HELLO run for everyone (Redis: `no_auth` commands skip the check).
    if spec.flags & NO_AUTH == 0 && !sel.may_run(idx) {
        return Some((Denied::Command, 0));
    }
    if !sel.all_keys {
        for &(pos, flags) in keys.get_or_insert_with(|| super::keys_with_flags(spec, args)).iter() {
            let mut perms = 0;
            if flags & key_flags::ACCESS != 0 {
                perms |= user::KEY_READ;
            }
            if flags & (key_flags::INSERT | key_flags::DELETE | key_flags::UPDATE) != 0 {
                perms |= user::KEY_WRITE;
            }
            if !sel.key_allowed(args[pos], perms) {
                return Some((Denied::Key, pos));
            }
        }
    }
    if !sel.all_channels {
        let (positions, patterns) = spec.channels.positions(args.len());
        if let Some(pos) = positions.into_iter().find(|&pos| !sel.channel_allowed(args[pos], patterns)) {
            return Some((Denied::Channel, pos));
        }
    }
    None
}

fn log_denial(ctx: &mut Ctx<'_>, reason: Denied, object: String, username: &str) {
    let max_len = ctx
        .shared
        .config
        .read()
        .recorded
        .get("acllog-max-len")
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    let context = if ctx.client.in_script {
        "lua"
    } else if ctx.client.multi.is_some() || ctx.client.in_exec {
        "multi"
    } else {
        "toplevel"
    };
    let client_info = super::client_line::describe(ctx.shared, ctx.table, &ctx.client.info, ctx.now_ms);
    ctx.shared.acl.log_denial(
        LogEntry {
            count: 1,
            reason,
            context,
            object,
            username: username.to_string(),
            created_ms: ctx.now_ms,
            updated_ms: ctx.now_ms,
            client_info,
        },
        max_len,
    );
}

/// Whether new users get every channel (`acl-pubsub-default allchannels`).
fn all_channels_default(ctx: &Ctx<'_>) -> bool {
    ctx.shared
        .config
        .read()
        .recorded
        .get("acl-pubsub-default")
        .is_some_and(|v| v == "allchannels")
}

fn user_name(a: &[u8]) -> Result<String, CommandError> {
    if a.iter().any(|&c| c == b' ' || c == 0) {
        return Err(CommandError::msg(
            "ERR Usernames can't contain spaces or null characters",
        ));
    }
    Ok(String::from_utf8_lossy(a).into_owned())
}

/// ACL SETUSER username [rule ...] — OK, or the rule refused (nothing changed).
fn acl_setuser(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let name = user_name(a[2])?;
    let all_channels = all_channels_default(ctx);
    if let Err((rule, e)) = ctx.shared.acl.set_user(&name, &a[3..], all_channels) {
        if e == acl::RuleError::Unmatched {
            return Err(CommandError::Owned(format!(
                "ERR Unmatched parenthesis in acl selector starting at '{}'.",
                String::from_utf8_lossy(&rule)
            )));
        }
        return Err(CommandError::Owned(format!(
            "ERR Error in ACL SETUSER modifier '{}': {}",
            String::from_utf8_lossy(&rule),
            user::rule_error_text(e)
        )));
    }
    ctx.shared.acl_changed();
    ctx.ok();
    Ok(())
}

/// ACL GETUSER username — the user's flags, passwords, commands, keys, channels and
/// selectors, or nil.
fn acl_getuser(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let Some(u) = ctx.shared.acl.get(&String::from_utf8_lossy(a[2])) else {
        encode::null(ctx.out, ctx.client.proto);
        return Ok(());
    };
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    encode::map_len(out, 6, proto);
    encode::bulk(out, b"flags");
    let flags = u.flag_words();
    encode::array_len(out, flags.len());
    for f in flags {
        encode::bulk(out, f.as_bytes());
    }
    encode::bulk(out, b"passwords");
    encode::array_len(out, u.passwords.len());
    for p in &u.passwords {
        encode::bulk(out, p.as_bytes());
    }
    write_selector(out, &u.root, proto);
    encode::bulk(out, b"selectors");
    encode::array_len(out, u.selectors.len());
    for s in &u.selectors {
        encode::map_len(out, 3, proto);
        write_selector(out, s, proto);
    }
    Ok(())
}

/// A selector's `commands`, `keys` and `channels` fields (ACL GETUSER).
fn write_selector(out: &mut Vec<u8>, s: &acl::user::Selector, _proto: resp::Proto) {
    encode::bulk(out, b"commands");
    encode::bulk(out, s.describe_commands(acl::catalog()).as_bytes());
    encode::bulk(out, b"keys");
    encode::bulk(out, s.describe_keys().as_bytes());
    encode::bulk(out, b"channels");
    encode::bulk(out, s.describe_channels().as_bytes());
}

/// ACL DELUSER username [username ...] — how many were deleted; their clients are
/// disconnected.
fn acl_deluser(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let names: Vec<String> = a[2..].iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
    if names.iter().any(|n| n == "default") {
        return Err(CommandError::msg("ERR The 'default' user cannot be removed"));
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let gone = ctx.shared.acl.delete(&refs);
    disconnect_users(ctx, &gone);
    ctx.shared.acl_changed();
    encode::integer(ctx.out, gone.len() as i64);
    Ok(())
}

/// Closes every client logged in as one of `names` (after its current reply).
fn disconnect_users(ctx: &mut Ctx<'_>, names: &[String]) {
    if names.is_empty() {
        return;
    }
    let clients: Vec<_> = ctx.shared.clients.lock().values().cloned().collect();
    for c in clients {
        let user = c.user.lock().clone();
        if names.iter().any(|n| **n == *user) {
            ctx.kill_client(&c);
        }
    }
}

/// ACL LIST — one line per user, as an ACL file holds them.
fn acl_list(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let users = ctx.shared.acl.all();
    encode::array_len(ctx.out, users.len());
    for u in users {
        encode::bulk(ctx.out, u.describe(acl::catalog()).as_bytes());
    }
    Ok(())
}

/// ACL USERS — the user names, sorted.
fn acl_users(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let names = ctx.shared.acl.names();
    encode::array_len(ctx.out, names.len());
    for n in names {
        encode::bulk(ctx.out, n.as_bytes());
    }
    Ok(())
}

/// ACL WHOAMI — the client's user name.
fn acl_whoami(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let name = ctx.client.info.user.lock().clone();
    encode::bulk(ctx.out, name.as_bytes());
    Ok(())
}

/// ACL CAT [category] — the categories, or the commands of one.
fn acl_cat(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    match a.get(2) {
        None => {
            encode::array_len(ctx.out, user::CATEGORIES.len());
            for c in user::CATEGORIES {
                encode::bulk(ctx.out, c.as_bytes());
            }
        }
        Some(name) => {
            let name = String::from_utf8_lossy(name);
            let bit = user::category_bit(&name)
                .ok_or_else(|| CommandError::Owned(format!("ERR Unknown category '{name}'")))?;
            let names = acl::catalog().in_category(bit);
            encode::array_len(ctx.out, names.len());
            for n in names {
                encode::bulk(ctx.out, n.as_bytes());
            }
        }
    }
    Ok(())
}

/// ACL GENPASS [bits] — a random password of `bits` bits (256), in hex.
fn acl_genpass(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    const ERR: &str =
        "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";
    let bits = match a.get(2) {
        None => 256,
        Some(v) => store::types::string::parse_i64(v)
            .filter(|&b| (1..=4096).contains(&b))
            .ok_or(CommandError::msg(ERR))?,
    };
    let chars = (bits as usize).div_ceil(4);
    let mut bytes = vec![0u8; chars.div_ceil(2)];
    getrandom::fill(&mut bytes).map_err(|_| CommandError::msg("ERR Can't read random bytes"))?;
    let mut hex = String::with_capacity(bytes.len() * 2);
    for b in &bytes {
        hex.push_str(&format!("{b:02x}"));
    }
    hex.truncate(chars);
    encode::bulk(ctx.out, hex.as_bytes());
    Ok(())
}

/// ACL LOG [count | RESET] — the newest denials (10 by default), or OK after RESET.
fn acl_log(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let count = match a.get(2) {
        None => 10,
        Some(w) if is(w, "reset") => {
            ctx.shared.acl.reset_log();
            ctx.ok();
            return Ok(());
        }
        Some(w) => store::types::string::parse_i64(w)
            .filter(|&n| n >= 0)
            .ok_or(CommandError::msg("ERR value is out of range, must be positive"))? as usize,
    };
    let entries = ctx.shared.acl.log_entries(count);
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    encode::array_len(out, entries.len());
    for e in entries {
        encode::map_len(out, 7, proto);
        encode::bulk(out, b"count");
        encode::integer(out, e.count as i64);
        encode::bulk(out, b"reason");
        encode::bulk(out, e.reason.reason().as_bytes());
        encode::bulk(out, b"context");
        encode::bulk(out, e.context.as_bytes());
        encode::bulk(out, b"object");
        encode::bulk(out, e.object.as_bytes());
        encode::bulk(out, b"username");
        encode::bulk(out, e.username.as_bytes());
        encode::bulk(out, b"age-seconds");
        encode::double(out, (ctx.now_ms - e.created_ms) as f64 / 1000.0, proto);
        encode::bulk(out, b"client-info");
        encode::bulk(out, e.client_info.as_bytes());
    }
    Ok(())
}

/// ACL DRYRUN username command [arg ...] — OK when the user could run it, else why not.
fn acl_dryrun(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let name = String::from_utf8_lossy(a[2]);
    let u = ctx
        .shared
        .acl
        .get(&name)
        .ok_or_else(|| CommandError::Owned(format!("ERR User '{name}' not found")))?;
    let cmd_args = &a[3..];
    let t = ctx.table;
    let mut idx = t.lookup(cmd_args[0]).ok_or_else(|| {
        CommandError::Owned(format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(cmd_args[0])
        ))
    })?;
    if !t.entries[idx].spec.subcommands.is_empty() && cmd_args.len() >= 2 {
        if let Some(sub) = t.lookup_sub(idx, cmd_args[1]) {
            idx = sub;
        }
    }
    let spec = t.entries[idx].spec;
    let arity = spec.arity;
    let n = cmd_args.len() as i32;
    if (arity > 0 && n != arity) || n < -arity {
        return Err(CommandError::Owned(format!(
            "ERR wrong number of arguments for '{}' command",
            t.entries[idx].fullname
        )));
    }
    match first_denial(&u, t, idx, spec, cmd_args) {
        None => ctx.ok(),
        Some((Denied::Command, object)) => encode::bulk(
            ctx.out,
            format!("This user has no permissions to run the '{object}' command").as_bytes(),
        ),
        Some((Denied::Key, object)) => encode::bulk(
            ctx.out,
            format!("This user has no permissions to access the '{object}' key").as_bytes(),
        ),
        Some((Denied::Channel, object)) => encode::bulk(
            ctx.out,
            format!("This user has no permissions to access the '{object}' channel").as_bytes(),
        ),
        Some((Denied::Auth, _)) => ctx.ok(),
    }
    Ok(())
}

/// The ACL file's path, when one is configured.
fn acl_file(ctx: &Ctx<'_>) -> Option<std::path::PathBuf> {
    let c = ctx.shared.config.read();
    let f = c.recorded.get("aclfile").filter(|f| !f.is_empty())?.clone();
    Some(std::path::Path::new(&f).to_path_buf())
}

/// ACL SAVE — writes the users to the ACL file.
fn acl_save(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let Some(path) = acl_file(ctx) else {
        return Err(CommandError::msg("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."));
    };
    save_file(&ctx.shared.acl, &path).map_err(|e| {
        crate::log::warning(&format!("Failed to save the ACL file {}: {e}", path.display()));
        CommandError::msg(
            "ERR There was an error trying to save the ACLs. Please check the server logs for more information",
        )
    })?;
    ctx.ok();
    Ok(())
}

/// Writes the ACL file whole: a temporary file beside it, synced, then renamed.
pub fn save_file(acl: &acl::Acl, path: &std::path::Path) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("acl.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(acl::file_text(acl).as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// ACL LOAD — replaces every user with the ACL file's, or changes nothing.
fn acl_load(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let Some(path) = acl_file(ctx) else {
        return Err(CommandError::msg("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."));
    };
    load_file(&ctx.shared.acl, &path, all_channels_default(ctx))
        .map_err(|e| CommandError::Owned(format!("ERR {e}")))?;
    ctx.shared.acl_changed();
    ctx.ok();
    Ok(())
}

/// Reads the ACL file and replaces the users with its own (at start and ACL LOAD).
pub fn load_file(acl: &acl::Acl, path: &std::path::Path, all_channels_default: bool) -> Result<(), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Error loading ACLs, opening file '{}': {e}", path.display()))?;
    let users = acl::parse_file(&text, &path.display().to_string(), all_channels_default)?;
    acl.replace_all(users);
    Ok(())
}

/// ACL HELP — the subcommands.
fn acl_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help(
        ctx,
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    );
    Ok(())
}

const ACL: &[&str] = &[];
const NS: u32 = NOSCRIPT | LOADING | STALE;

#[rustfmt::skip]
static ACL_SUBCOMMANDS: &[CommandSpec] = &[
    spec("cat", -2, NS, (0, 0, 0), ACL, "server", "Lists the ACL categories, or the commands inside a category.", acl_cat).since("6.0.0").args(&[arg("categoryname", ArgKind::String).optional()]).complexity("O(1)"),
    spec("deluser", -3, ADMIN | NS, (0, 0, 0), ACL, "server", "Deletes ACL users, and terminates their connections.", acl_deluser).since("6.0.0").args(&[arg("username", ArgKind::String).multiple()]).complexity("O(1)"),
    spec("dryrun", -4, ADMIN | NS, (0, 0, 0), ACL, "server", "Simulates the execution of a command by a user, without executing the command.", acl_dryrun).since("7.0.0").args(&[arg("username", ArgKind::String), arg("command", ArgKind::String), arg("arg", ArgKind::String).optional().multiple()]).complexity("O(1)"),
    spec("genpass", -2, NS, (0, 0, 0), ACL, "server", "Generates a pseudorandom, secure password that can be used to identify ACL users.", acl_genpass).since("6.0.0").args(&[arg("bits", ArgKind::Integer).optional()]).complexity("O(1)"),
    spec("getuser", 3, ADMIN | NS, (0, 0, 0), ACL, "server", "Lists the ACL rules of a user.", acl_getuser).since("6.0.0").args(&[arg("username", ArgKind::String)]).complexity("O(N)"),
    spec("help", 2, LOADING | STALE, (0, 0, 0), ACL, "server", "Returns helpful text about the different subcommands.", acl_help).since("6.0.0").complexity("O(1)"),
    spec("list", 2, ADMIN | NS, (0, 0, 0), ACL, "server", "Dumps the effective rules in ACL file format.", acl_list).since("6.0.0").complexity("O(N)"),
    spec("load", 2, ADMIN | NS, (0, 0, 0), ACL, "server", "Reloads the rules from the configured ACL file.", acl_load).since("6.0.0").complexity("O(N)"),
    spec("log", -2, ADMIN | NS, (0, 0, 0), ACL, "server", "Lists recent security events generated due to ACL rules.", acl_log).since("6.0.0").args(&[arg("operation", ArgKind::OneOf).optional().args(&[arg("count", ArgKind::Integer), arg("reset", ArgKind::PureToken).token("RESET")])]).complexity("O(N)"),
    spec("save", 2, ADMIN | NS, (0, 0, 0), ACL, "server", "Saves the effective ACL rules in the configured ACL file.", acl_save).since("6.0.0").complexity("O(N)"),
    spec("setuser", -3, ADMIN | NS, (0, 0, 0), ACL, "server", "Creates and modifies an ACL user and its rules.", acl_setuser).since("6.0.0").args(&[arg("username", ArgKind::String), arg("rule", ArgKind::String).optional().multiple()]).complexity("O(N)"),
    spec("users", 2, ADMIN | NS, (0, 0, 0), ACL, "server", "Lists all ACL users.", acl_users).since("6.0.0").complexity("O(N)"),
    spec("whoami", 2, NS, (0, 0, 0), ACL, "server", "Returns the authenticated username of the current connection.", acl_whoami).since("6.0.0").complexity("O(1)"),
];

pub static COMMANDS: &[CommandSpec] = &[container(
    "acl",
    "server",
    "A container for Access List Control commands.",
    ACL_SUBCOMMANDS,
)
.since("6.0.0")
.complexity("Depends on subcommand.")];
