//! Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (LOAD, EXISTS,
//! FLUSH, KILL, HELP), on the Lua engine of `crate::script`.
//!
//! A script runs alone, as EXEC's queue does (every event loop's gate, for writing),
//! and as one transaction (`transactions::run_as_transaction`): the log and replicas
//! get its effects, the commands it ran, between MULTI and EXEC, never the script
//! (Redis 7.0's effects replication). `redis.call` runs each command through the
//! dispatcher, after the refusals Redis makes inside scripts (unknown command, arity,
//! `noscript`, a write from a read-only script, MISCONF, OOM before the first write);
//! the command replies in RESP2 (the script's own protocol; RESP3 after
//! `redis.setresp(3)`), and a SELECT lasts until the script ends.
//!
//! FUNCTION and FCALL are `functions.rs`, which runs its functions through
//! `run_alone` too.
//!
//! A script may start with Redis 7's shebang (`#!lua flags=no-writes,allow-oom`): it is
//! then checked before it runs, as a function is.
//!
//! Not built: SCRIPT DEBUG,
//! the `struct` library and cjson's settings functions. While a
//! script runs, other clients wait for it rather than get -BUSY (their loops wait at
//! the gates), so SCRIPT KILL never finds one running: a script that has not written
//! is stopped at busy-reply-threshold instead (`script/engine.rs`).

use std::sync::atomic::Ordering;
use std::time::Duration;

use resp::encode;

use super::args::is;
use super::flags::*;
use super::{container, dispatch, monitor, spec, transactions, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use super::key_flags as kf;
use crate::script::cache::{parse_sha, Sha};
use crate::script::engine::{self, CallMode, Called, Script};
use crate::script::functions::flag;

/// EVAL script numkeys [key ...] [arg ...]
fn eval(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    run(ctx, a, false, false)
}

/// EVAL_RO: as EVAL, for a script that only reads.
fn eval_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    run(ctx, a, false, true)
}

/// EVALSHA sha1 numkeys [key ...] [arg ...]
fn evalsha(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    run(ctx, a, true, false)
}

/// EVALSHA_RO: as EVALSHA, for a script that only reads.
fn evalsha_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    run(ctx, a, true, true)
}

/// The number of keys of an EVAL-family command, checked as Redis checks it.
fn key_count(a: &[&[u8]]) -> Result<usize, CommandError> {
    let n = store::types::string::parse_i64(a[2]).ok_or(CommandError::Static("ERR value is not an integer or out of range"))?;
    if n < 0 {
        return Err(CommandError::Static("ERR Number of keys can't be negative"));
    }
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    if n > a.len() - 3 {
        return Err(CommandError::Static("ERR Number of keys can't be greater than number of args"));
    }
    Ok(n)
}

/// The script's name and body: EVALSHA's from the cache, EVAL's given (kept in the cache
/// once it compiles, as Redis keeps it).
fn script_body(ctx: &Ctx<'_>, a: &[&[u8]], by_sha: bool) -> Result<(Sha, std::sync::Arc<[u8]>), CommandError> {
    let cache = &ctx.shared.scripts;
    if by_sha {
        let found = parse_sha(a[1]).and_then(|sha| cache.get(&sha).map(|body| (sha, body)));
        return found.ok_or(CommandError::Static("NOSCRIPT No matching script. Please use EVAL."));
    }
    let sha = crate::script::cache::sha1_hex(a[1]);
    if let Some(body) = cache.get(&sha) {
        return Ok((sha, body));
    }
    check_script(cache.generation(), &sha, a[1])?;
    Ok((sha, cache.insert(sha, a[1])))
}

/// A new script's shebang and code checked (EVAL, SCRIPT LOAD): Redis's error, if any.
fn check_script(generation: u64, sha: &Sha, body: &[u8]) -> Result<(), CommandError> {
    shebang_flags(body)?;
    engine::check_compiles(generation, sha, engine::code_after_shebang(body)).map_err(CommandError::Owned)
}

/// A script's flags from its shebang line (`script::shebang`), as a command's error.
fn shebang_flags(body: &[u8]) -> Result<Option<u8>, CommandError> {
    crate::script::shebang::flags(body).map_err(CommandError::Owned)
}

fn run(ctx: &mut Ctx<'_>, a: &[&[u8]], by_sha: bool, ro_command: bool) -> Result<(), CommandError> {
    let numkeys = key_count(a)?;
    let (sha, body) = script_body(ctx, a, by_sha)?;
    // A script with a shebang is checked before it runs, as a function is (its flags);
    // one without runs in the compatibility mode, refused at its first write instead.
    let mut read_only = ro_command;
    if let Some(flags) = shebang_flags(&body)? {
        read_only |= flags & flag::NO_WRITES != 0;
        if flags & flag::NO_WRITES == 0 {
            if ro_command {
                return Err(CommandError::msg("ERR Can not execute a script with write flag using *_ro command."));
            }
            if let Some(text) = dispatch::refusal_of_writing_function(ctx, flags & flag::ALLOW_OOM != 0) {
                return Err(CommandError::Owned(text));
            }
        }
    }
    let script = Script {
        sha: &sha,
        body: engine::code_after_shebang(&body),
        keys: &a[3..3 + numkeys],
        argv: &a[3 + numkeys..],
        proto: ctx.client.proto,
        stop_after: stop_after(ctx),
    };
    let generation = ctx.shared.scripts.generation();
    run_alone(ctx, a, read_only, |call| engine::run(generation, &script, call));
    Ok(())
}

/// When a script that has not written is stopped (busy-reply-threshold).
pub(super) fn stop_after(ctx: &Ctx<'_>) -> Option<Duration> {
    let threshold_ms = ctx.shared.config.read().busy_reply_threshold_ms;
    (threshold_ms > 0).then(|| Duration::from_millis(threshold_ms as u64))
}

/// Runs a script or a function (`run`, given the command runner of its `redis.call`)
/// alone and as one transaction, and writes its reply; `a` is the calling command.
pub(super) fn run_alone(ctx: &mut Ctx<'_>, a: &[&[u8]], read_only: bool, run: impl FnOnce(&mut dyn FnMut(&[&[u8]], CallMode) -> Called) -> engine::Outcome) {
    // Alone: no command runs on any loop until the script is done (inside EXEC, or in
    // the log's replay, the gates are held already).
    let _gates = ctx.shared.all_gates(ctx.client.in_exec || ctx.client.loading);
    if transactions::stopped_while_waiting(ctx) {
        return;
    }
    let db = ctx.client.db;
    if monitor::wanted_before(ctx.shared) && !ctx.client.loading {
        monitor::feed(ctx, a);
    }
    // The command CLIENT LIST names stays the EVAL, whatever the script ran.
    let me = ctx.client.info.last_cmd.load(Ordering::Relaxed);
    let mut outcome = None;
    transactions::run_as_transaction(ctx, |ctx| {
        let mut wrote = false;
        ctx.client.in_script = true;
        outcome = Some(run(&mut |args, mode| call(ctx, args, mode, read_only, &mut wrote)));
        ctx.client.in_script = false;
    });
    ctx.client.info.last_cmd.store(me, Ordering::Relaxed);
    // A SELECT inside the script was the script's own.
    ctx.client.db = db;
    let Some(outcome) = outcome else { return };
    if outcome.reply.starts_with(b"-") {
        // A failed script is a failed call of its command; its error is counted once,
        // where it happened (a command's, in the script) or here (Redis's rule).
        crate::shared::bump(&ctx.stats.commands[me].failed_calls, 1);
        if !outcome.error_counted {
            let text = String::from_utf8_lossy(outcome.reply.get(1..outcome.reply.len().saturating_sub(2)).unwrap_or_default());
            ctx.stats.count_error(&text);
        }
    }
    ctx.out.extend_from_slice(&outcome.reply);
}

/// `redis.call` and `redis.pcall`: one command, refused or run through the dispatcher.
fn call(ctx: &mut Ctx<'_>, args: &[&[u8]], mode: CallMode, read_only: bool, wrote: &mut bool) -> Called {
    // A refusal counts as an error reply where it happens, as in Redis.
    let stats = ctx.stats;
    let refused = |text: &str| {
        stats.count_error(text);
        let mut reply = Vec::new();
        encode::error(&mut reply, text.as_bytes());
        Called { reply, wrote: false }
    };
    let t = ctx.table;
    let Some(top) = t.lookup_client(args[0]) else {
        return refused("ERR Unknown Redis command called from script");
    };
    let idx = if t.entries[top].spec.subcommands.is_empty() || args.len() < 2 {
        top
    } else {
        match t.lookup_sub(top, args[1]) {
            Some(sub) => sub,
            None => return refused("ERR Unknown Redis command called from script"),
        }
    };
    let spec = t.entries[idx].spec;
    if !dispatch::arity_ok(spec.arity, args.len()) {
        return refused("ERR Wrong number of args calling Redis command from script");
    }
    if spec.flags & NOSCRIPT != 0 {
        return refused("ERR This Redis command is not allowed from script");
    }
    if spec.flags & WRITE != 0 {
        if read_only {
            return refused("ERR Write commands are not allowed from read-only scripts.");
        }
        if let Some(text) = dispatch::refusal_in_script(ctx, spec, *wrote) {
            return refused(&text);
        }
    }
    // The script's own client speaks RESP2 (or RESP3 after redis.setresp(3)), whatever
    // its caller speaks.
    let caller_proto = std::mem::replace(&mut ctx.client.proto, mode.proto);
    // `redis.set_repl`: where this command's effect is propagated.
    ctx.client.script_skips_log = !mode.to_log;
    ctx.client.script_skips_replicas = !mode.to_replicas;
    let mut reply = Vec::new();
    let mut inner = Ctx {
        shared: ctx.shared,
        table: ctx.table,
        client: &mut *ctx.client,
        out: &mut reply,
        now_ms: ctx.now_ms,
        stats: ctx.stats,
        rng: &mut *ctx.rng,
        request: None,
    };
    dispatch::execute_found(&mut inner, Some(top), args);
    ctx.client.proto = caller_proto;
    ctx.client.script_skips_log = false;
    ctx.client.script_skips_replicas = false;
    let ran_write = spec.flags & WRITE != 0 && !reply.starts_with(b"-");
    *wrote |= ran_write;
    Called { reply, wrote: ran_write }
}

/// SCRIPT LOAD script — its SHA-1, once it compiles.
fn load(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let cache = &ctx.shared.scripts;
    let sha = crate::script::cache::sha1_hex(a[2]);
    if !cache.contains(&sha) {
        check_script(cache.generation(), &sha, a[2])?;
        cache.insert(sha, a[2]);
    }
    encode::bulk(ctx.out, &sha);
    Ok(())
}

/// SCRIPT EXISTS sha1 [sha1 ...] — 1 or 0 for each.
fn exists(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    encode::array_len(ctx.out, a.len() - 2);
    for name in &a[2..] {
        let known = parse_sha(name).is_some_and(|sha| ctx.shared.scripts.contains(&sha));
        encode::integer(ctx.out, i64::from(known));
    }
    Ok(())
}

/// SCRIPT FLUSH [ASYNC|SYNC] — forgets every script (both modes free at once: the
/// bodies are small beside a data set).
fn flush(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mode_ok = match a.len() {
        2 => true,
        3 => super::args::is(a[2], "sync") || super::args::is(a[2], "async"),
        _ => false,
    };
    if !mode_ok {
        return Err(CommandError::Static("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
    }
    ctx.shared.scripts.flush();
    ctx.ok();
    Ok(())
}

/// SCRIPT KILL — no script is ever found running: while one runs, the other clients
/// wait at the gates (see the module's header).
fn kill(_: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    Err(CommandError::Static("NOTBUSY No scripts in execution right now."))
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

/// SCRIPT DEBUG YES|SYNC|NO. NO, the mode every script runs in, is OK. YES and SYNC would
/// start Redis's Lua debugger (LDB) for the next EVAL, which Basalt does not have: they
/// are refused with an error that says so, rather than answered OK and then ignored
/// (`redis-cli --ldb` shows the error).
fn debug(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.in_exec {
        return Err(CommandError::msg("ERR SCRIPT DEBUG must be called outside a pipeline"));
    }
    if is(a[2], "no") {
        ctx.ok();
        Ok(())
    } else if is(a[2], "yes") || is(a[2], "sync") {
        Err(CommandError::msg("ERR SCRIPT DEBUG YES and SYNC are not supported: Basalt has no Lua debugger"))
    } else {
        Err(CommandError::msg("ERR Use SCRIPT DEBUG YES/SYNC/NO"))
    }
}

/// SCRIPT HELP — Redis's text.
fn help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help_text(ctx, HELP);
    Ok(())
}

pub(super) const SCRIPTING: &[&str] = &["scripting"];
/// EVAL's keys (and FCALL's): Redis cannot tell how a script uses them, and assumes the
/// worst.
pub(super) const KEYS_RW: &[KeySpec] = &[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }];
pub(super) const KEYS_RO: &[KeySpec] = &[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(2), find: FindKeys::Keynum { keynum_idx: 0, first_key: 1, key_step: 1 } }];
/// Basalt's own flags of the EVAL family (and FCALL's): each takes every gate and runs
/// as a transaction whose replies may reveal any key; EVAL and EVALSHA may write
/// (CLIENT PAUSE WRITE postpones them, as Redis does a script without `no-writes`).
pub(super) const RUNS_ALONE: u32 = ALL_GATES | READS_ANY_KEY;

#[rustfmt::skip]
static SUBCOMMANDS: &[CommandSpec] = &[
    spec("debug", 3, NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Sets the debug mode of the scripts run after it (NO only: Basalt has no Lua debugger).", debug).since("3.2.0").args(ARGS_DEBUG).complexity("O(1)"),
    spec("kill", 2, NOSCRIPT | ALLOW_BUSY, (0, 0, 0), SCRIPTING, "scripting", "Terminates a server-side Lua script during execution.", kill).since("2.6.0").complexity("O(1)").tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
    spec("help", 2, LOADING | STALE, (0, 0, 0), SCRIPTING, "scripting", "Returns helpful text about the different subcommands.", help).since("5.0.0").complexity("O(1)"),
    spec("load", 3, NOSCRIPT | STALE, (0, 0, 0), SCRIPTING, "scripting", "Loads a server-side Lua script to the script cache.", load).since("2.6.0").args(ARGS_LOAD).complexity("O(N) with N being the length in bytes of the script body.").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    spec("exists", -3, NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Determines whether server-side Lua scripts exist in the script cache.", exists).since("2.6.0").args(ARGS_EXISTS).complexity("O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).").tips(&["request_policy:all_shards", "response_policy:agg_logical_and"]),
    spec("flush", -2, NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Removes all server-side Lua scripts from the script cache.", flush).since("2.6.0").args(ARGS_FLUSH).complexity("O(N) with N being the number of scripts in cache").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("eval", -3, NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MAY_REPLICATE | RUNS_ALONE, (0, 0, 0), SCRIPTING, "scripting", "Executes a server-side Lua script.", eval).since("2.6.0").args(ARGS_EVAL).complexity("Depends on the script that is executed.").key_specs(KEYS_RW).numkeys(&[], 2),
    spec("evalsha", -3, NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MAY_REPLICATE | RUNS_ALONE, (0, 0, 0), SCRIPTING, "scripting", "Executes a server-side Lua script by SHA1 digest.", evalsha).since("2.6.0").args(ARGS_EVALSHA).complexity("Depends on the script that is executed.").key_specs(KEYS_RW).numkeys(&[], 2),
    spec("eval_ro", -3, READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | RUNS_ALONE, (0, 0, 0), SCRIPTING, "scripting", "Executes a read-only server-side Lua script.", eval_ro).since("7.0.0").args(ARGS_EVAL).complexity("Depends on the script that is executed.").key_specs(KEYS_RO).numkeys(&[], 2),
    spec("evalsha_ro", -3, READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | RUNS_ALONE, (0, 0, 0), SCRIPTING, "scripting", "Executes a read-only server-side Lua script by SHA1 digest.", evalsha_ro).since("7.0.0").args(ARGS_EVALSHA).complexity("Depends on the script that is executed.").key_specs(KEYS_RO).numkeys(&[], 2),
    container("script", "scripting", "A container for Lua scripts management commands.", SUBCOMMANDS).since("2.6.0").complexity("Depends on subcommand."),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_EVAL: &[Arg] = &[arg("script", String), arg("numkeys", Integer), arg("key", Key).key_spec(0).optional().multiple(), arg("arg", String).optional().multiple()];
    pub const ARGS_EVALSHA: &[Arg] = &[arg("sha1", String), arg("numkeys", Integer), arg("key", Key).key_spec(0).optional().multiple(), arg("arg", String).optional().multiple()];
    pub const ARGS_LOAD: &[Arg] = &[arg("script", String)];
    pub const ARGS_EXISTS: &[Arg] = &[arg("sha1", String).multiple()];
    pub const ARGS_DEBUG: &[Arg] = &[arg("mode", OneOf).args(&[arg("yes", PureToken).token("YES"), arg("sync", PureToken).token("SYNC"), arg("no", PureToken).token("NO")])];
    pub const ARGS_FLUSH: &[Arg] = &[arg("async", OneOf).since("6.2.0").optional().args(&[arg("async", PureToken).token("ASYNC"), arg("sync", PureToken).token("SYNC")])];
}
use docs_args::*;
