//! Functions: FCALL, FCALL_RO and FUNCTION (LOAD, DELETE, FLUSH, LIST, STATS, DUMP,
//! RESTORE, KILL, HELP), as Redis 7.0.
//!
//! Libraries live in `script::functions` (shared by the loops); loading one runs its
//! code in the calling loop's Lua state (`script::engine::load_library`) to learn the
//! functions it registers, and each loop loads every library again into its own state
//! when the set changed. A function runs as a script does (`scripting::run_alone`:
//! alone, one transaction, its effects propagated), with Redis's checks of its flags
//! first: `no-writes` (FCALL_RO needs it, and then a write inside is refused),
//! `allow-oom`. The FUNCTION commands that change the set are writes, propagated as
//! sent; snapshot files carry the libraries (`snapshot.rs`).
//!
//! Not built: `allow-stale` is shown but a stale replica's refusal does not look at it.

use resp::encode;

use super::args::is;
use super::flags::*;
use super::scripting::{KEYS_RO, KEYS_RW, RUNS_ALONE, SCRIPTING};
use super::{container, dispatch, scripting, spec, CommandError, CommandSpec, Ctx};
use crate::script::engine::{self, FunctionCall};
use crate::script::functions::{self as lib, check_library, flag, Library, OnConflict};

fn fcall(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    fcall_generic(ctx, a, false)
}

fn fcall_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    fcall_generic(ctx, a, true)
}

/// FCALL function numkeys [key ...] [arg ...] — the function's result.
fn fcall_generic(ctx: &mut Ctx<'_>, a: &[&[u8]], ro: bool) -> Result<(), CommandError> {
    let registry = ctx.shared.functions.snapshot();
    let name = String::from_utf8_lossy(a[1]);
    let Some((_, f)) = registry.function(&name) else { return Err(CommandError::msg("ERR Function not found")) };
    let numkeys = store::types::string::parse_i64(a[2]).ok_or(CommandError::msg("ERR Bad number of keys provided"))?;
    if numkeys > (a.len() - 3) as i64 {
        return Err(CommandError::msg("ERR Number of keys can't be greater than number of args"));
    }
    if numkeys < 0 {
        return Err(CommandError::msg("ERR Number of keys can't be negative"));
    }
    let numkeys = numkeys as usize;
    let read_only = f.flags & flag::NO_WRITES != 0;
    if !read_only {
        if ro {
            return Err(CommandError::msg("ERR Can not execute a script with write flag using *_ro command."));
        }
        if let Some(text) = dispatch::refusal_of_writing_function(ctx, f.flags & flag::ALLOW_OOM != 0) {
            return Err(CommandError::Owned(text));
        }
    }
    let call = FunctionCall {
        name: &name,
        keys: &a[3..3 + numkeys],
        args: &a[3 + numkeys..],
        proto: ctx.client.proto,
        stop_after: scripting::stop_after(ctx),
    };
    let generation = ctx.shared.scripts.generation();
    scripting::run_alone(ctx, a, read_only, |run| {
        let mut codes = registry.libraries.values().map(|l| &l.code[..]);
        engine::run_function(generation, registry.generation, &mut codes, &call, run)
    });
    Ok(())
}

/// FUNCTION LOAD [REPLACE] code — the library's name.
fn load(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mut replace = false;
    let mut at = 2;
    while at < a.len() - 1 {
        if !is(a[at], "replace") {
            return Err(CommandError::Owned(format!("ERR Unknown option given: {}", String::from_utf8_lossy(a[at]))));
        }
        replace = true;
        at += 1;
    }
    let code = a[at];
    // Redis refuses a taken name before it runs the code.
    let name = lib::parse_metadata(code).map_err(CommandError::Owned)?;
    if !replace && ctx.shared.functions.snapshot().libraries.contains_key(&name) {
        return Err(CommandError::Owned(format!("ERR Library '{name}' already exists")));
    }
    let library = check_library(ctx.shared.scripts.generation(), code).map_err(CommandError::Owned)?;
    let on_conflict = if replace { OnConflict::Replace } else { OnConflict::Refuse };
    ctx.shared.functions.add(vec![library], on_conflict).map_err(CommandError::Owned)?;
    encode::bulk(ctx.out, name.as_bytes());
    Ok(())
}

/// FUNCTION DELETE library-name
fn delete(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if !ctx.shared.functions.delete(&String::from_utf8_lossy(a[2])) {
        return Err(CommandError::msg("ERR Library not found"));
    }
    ctx.ok();
    Ok(())
}

/// FUNCTION FLUSH [ASYNC|SYNC] — every library gone (both modes at once: libraries are
/// small).
fn flush(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let mode_ok = match a.len() {
        2 => true,
        3 => is(a[2], "sync") || is(a[2], "async"),
        _ => false,
    };
    if !mode_ok {
        return Err(CommandError::msg("ERR FUNCTION FLUSH only supports SYNC|ASYNC option"));
    }
    ctx.shared.functions.replace_all(Vec::new());
    ctx.ok();
    Ok(())
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE] — each library (by name) with its
/// functions, their descriptions and flags.
fn list(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let (mut with_code, mut pattern) = (false, None);
    let mut i = 2;
    while i < a.len() {
        if !with_code && is(a[i], "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(a[i], "libraryname") {
            if i >= a.len() - 1 {
                return Err(CommandError::msg("ERR library name argument was not given"));
            }
            pattern = Some(a[i + 1]);
            i += 1;
        } else {
            return Err(CommandError::Owned(format!("ERR Unknown argument {}", String::from_utf8_lossy(a[i]))));
        }
        i += 1;
    }
    let registry = ctx.shared.functions.snapshot();
    let libraries: Vec<&Library> = registry
        .libraries
        .values()
        .map(|l| &**l)
        .filter(|l| pattern.is_none_or(|p| store::glob::glob_match(p, l.name.as_bytes(), true)))
        .collect();
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    encode::array_len(out, libraries.len());
    for l in libraries {
        encode::map_len(out, 3 + usize::from(with_code), proto);
        encode::bulk(out, b"library_name");
        encode::bulk(out, l.name.as_bytes());
        encode::bulk(out, b"engine");
        encode::bulk(out, b"LUA");
        encode::bulk(out, b"functions");
        encode::array_len(out, l.functions.len());
        for f in &l.functions {
            encode::map_len(out, 3, proto);
            encode::bulk(out, b"name");
            encode::bulk(out, f.name.as_bytes());
            encode::bulk(out, b"description");
            match &f.description {
                Some(d) => encode::bulk(out, d),
                None => encode::null(out, proto),
            }
            encode::bulk(out, b"flags");
            let names: Vec<&str> = flag::NAMES.iter().filter(|(bit, _)| f.flags & bit != 0).map(|(_, n)| *n).collect();
            encode::set_len(out, names.len(), proto);
            for n in names {
                encode::simple(out, n.as_bytes());
            }
        }
        if with_code {
            encode::bulk(out, b"library_code");
            encode::bulk(out, &l.code);
        }
    }
    Ok(())
}

/// FUNCTION STATS — no function is ever found running (the other clients wait while
/// one runs), and the Lua engine's counts.
fn stats(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let registry = ctx.shared.functions.snapshot();
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    encode::map_len(out, 2, proto);
    encode::bulk(out, b"running_script");
    encode::null(out, proto);
    encode::bulk(out, b"engines");
    encode::map_len(out, 1, proto);
    encode::bulk(out, b"LUA");
    encode::map_len(out, 2, proto);
    encode::bulk(out, b"libraries_count");
    encode::integer(out, registry.libraries.len() as i64);
    encode::bulk(out, b"functions_count");
    encode::integer(out, registry.function_count() as i64);
    Ok(())
}

/// FUNCTION DUMP — every library as Redis's payload.
fn dump(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let codes = ctx.shared.functions.codes();
    let compress = ctx.shared.config.read().rdbcompression;
    let payload = store::rdb::functions_payload(codes.iter().map(|c| &c[..]), compress);
    encode::bulk(ctx.out, &payload);
    Ok(())
}

/// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE] — the payload's libraries added
/// (all or none).
fn restore(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    #[derive(PartialEq)]
    enum Policy {
        Flush,
        Append,
        Replace,
    }
    let policy = match a.get(3) {
        None => Policy::Append,
        Some(w) if a.len() == 4 && is(w, "flush") => Policy::Flush,
        Some(w) if a.len() == 4 && is(w, "append") => Policy::Append,
        Some(w) if a.len() == 4 && is(w, "replace") => Policy::Replace,
        Some(_) => return Err(CommandError::msg("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")),
    };
    let codes = store::rdb::functions_of_payload(a[2]).map_err(CommandError::msg)?;
    let generation = ctx.shared.scripts.generation();
    let mut libraries = Vec::with_capacity(codes.len());
    for code in &codes {
        libraries.push(check_library(generation, code).map_err(CommandError::Owned)?);
    }
    match policy {
        Policy::Flush => ctx.shared.functions.replace_all(libraries),
        // (RESTORE's text names the library without quotes, unlike LOAD's.)
        Policy::Append => ctx.shared.functions.add(libraries, OnConflict::Refuse).map_err(|e| CommandError::Owned(e.replace('\'', "")))?,
        Policy::Replace => ctx.shared.functions.add(libraries, OnConflict::Replace).map_err(CommandError::Owned)?,
    }
    ctx.ok();
    Ok(())
}

/// FUNCTION KILL — never finds one running (see STATS).
fn kill(_: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    Err(CommandError::msg("NOTBUSY No scripts in execution right now."))
}

const HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

/// FUNCTION HELP — Redis's text.
fn help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help_text(ctx, HELP);
    Ok(())
}

const ALL_SHARDS: &[&str] = &["request_policy:all_shards", "response_policy:all_succeeded"];

#[rustfmt::skip]
static SUBCOMMANDS: &[CommandSpec] = &[
    spec("dump", 2, NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Dumps every library as a payload.", dump).since("7.0.0").complexity("O(N) where N is the number of functions"),
    spec("delete", 3, WRITE | NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Deletes a library and its functions.", delete).since("7.0.0").args(ARGS_DELETE).complexity("O(1)").tips(ALL_SHARDS),
    spec("load", -3, WRITE | DENYOOM | NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Creates a library.", load).since("7.0.0").args(ARGS_LOAD).complexity("O(1) (considering compilation time is redundant)").tips(ALL_SHARDS),
    spec("kill", 2, NOSCRIPT | ALLOW_BUSY, (0, 0, 0), SCRIPTING, "scripting", "Terminates a function during execution.", kill).since("7.0.0").complexity("O(1)").tips(&["request_policy:all_shards", "response_policy:one_succeeded"]),
    spec("stats", 2, NOSCRIPT | ALLOW_BUSY, (0, 0, 0), SCRIPTING, "scripting", "Returns information about a function during execution.", stats).since("7.0.0").complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    spec("help", 2, LOADING | STALE, (0, 0, 0), SCRIPTING, "scripting", "Returns helpful text about the different subcommands.", help).since("7.0.0").complexity("O(1)"),
    spec("list", -2, NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Returns information about all libraries.", list).since("7.0.0").args(ARGS_LIST).complexity("O(N) where N is the number of functions").tips(&["nondeterministic_output_order"]),
    spec("restore", -3, WRITE | DENYOOM | NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Restores all libraries from a payload.", restore).since("7.0.0").args(ARGS_RESTORE).complexity("O(N) where N is the number of functions on the payload").tips(ALL_SHARDS),
    spec("flush", -2, WRITE | NOSCRIPT, (0, 0, 0), SCRIPTING, "scripting", "Deletes all libraries and functions.", flush).since("7.0.0").args(ARGS_FLUSH).complexity("O(N) where N is the number of functions deleted").tips(ALL_SHARDS),
];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("fcall", -3, NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MAY_REPLICATE | RUNS_ALONE, (0, 0, 0), SCRIPTING, "scripting", "Invokes a function.", fcall).since("7.0.0").args(ARGS_FCALL).complexity("Depends on the function that is executed.").key_specs(KEYS_RW).numkeys(&[], 2),
    spec("fcall_ro", -3, READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | RUNS_ALONE, (0, 0, 0), SCRIPTING, "scripting", "Invokes a read-only function.", fcall_ro).since("7.0.0").args(ARGS_FCALL).complexity("Depends on the function that is executed.").key_specs(KEYS_RO).numkeys(&[], 2),
    container("function", "scripting", "A container for function commands.", SUBCOMMANDS).since("7.0.0").complexity("Depends on subcommand."),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_FCALL: &[Arg] = &[arg("function", String), arg("numkeys", Integer), arg("key", Key).key_spec(0).optional().multiple(), arg("arg", String).optional().multiple()];
    pub const ARGS_DELETE: &[Arg] = &[arg("library-name", String)];
    pub const ARGS_LOAD: &[Arg] = &[arg("replace", PureToken).token("REPLACE").optional(), arg("function-code", String)];
    pub const ARGS_LIST: &[Arg] = &[arg("library-name-pattern", String).token("LIBRARYNAME").optional(), arg("withcode", PureToken).token("WITHCODE").optional()];
    pub const ARGS_RESTORE: &[Arg] = &[arg("serialized-value", String), arg("policy", OneOf).optional().args(&[arg("flush", PureToken).token("FLUSH"), arg("append", PureToken).token("APPEND"), arg("replace", PureToken).token("REPLACE")])];
    pub const ARGS_FLUSH: &[Arg] = &[arg("async", OneOf).optional().args(&[arg("async", PureToken).token("ASYNC"), arg("sync", PureToken).token("SYNC")])];
}
use docs_args::*;
