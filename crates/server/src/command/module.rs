//! MODULE: Redis's module commands, in a server that loads no modules. A Redis module is
//! a shared library written against Redis's C interface (RedisModule_*), which Basalt
//! does not offer, so none can be loaded. What tools ask of this family still works as
//! with a Redis that has none loaded: MODULE LIST is empty (RedisInsight, client
//! libraries and monitoring probe it to find RedisJSON, RediSearch ...) and HELP is
//! Redis's. LOAD, LOADEX and UNLOAD are refused as Redis 7.0 refuses them while
//! `enable-module-command` is `no` (its default); where the setting allows them, LOAD
//! fails as a Redis load that fails does, and says why in the log.

use resp::encode;

use super::flags::*;
use super::{arg, container, reply_help, spec, Arg, ArgKind::*, CommandError, CommandSpec, Ctx};

/// Redis's refusal of the module commands that `enable-module-command` guards.
fn allowed(ctx: &Ctx<'_>) -> Result<(), CommandError> {
    let mode = ctx.shared.config.read().recorded.get("enable-module-command").cloned().unwrap_or_default();
    if crate::config::enabled_for(&mode, &ctx.client.info.addr) {
        return Ok(());
    }
    Err(CommandError::msg("ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."))
}

/// MODULE LIST — the loaded modules: none.
fn list(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    encode::array_len(ctx.out, 0);
    Ok(())
}

/// MODULE LOAD path [arg ...], MODULE LOADEX path [CONFIG name value ...] [ARGS arg ...].
fn load(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    allowed(ctx)?;
    crate::log::warning(&format!(
        "Module {} failed to load: Basalt does not load Redis modules (they are written against Redis's C module interface)",
        std::string::String::from_utf8_lossy(a[2])
    ));
    Err(CommandError::msg("ERR Error loading the extension. Please check the server logs."))
}

/// MODULE UNLOAD name — no module is loaded, so none has the name.
fn unload(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    allowed(ctx)?;
    Err(CommandError::msg("ERR Error unloading module: no such module with that name"))
}

fn help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    reply_help(
        ctx,
        "MODULE",
        &[
            "LIST",
            "    Return a list of loaded modules.",
            "LOAD <path> [<arg> ...]",
            "    Load a module library from <path>, passing to it any optional arguments.",
            "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
            "    Load a module library from <path>, while passing it module configurations and optional arguments.",
            "UNLOAD <name>",
            "    Unload a module.",
        ],
    );
    Ok(())
}

const LOADEX_ARGS: &[Arg] = &[
    arg("path", String),
    arg("configs", Block).token("CONFIG").optional().multiple().multiple_token().args(&[arg("name", String), arg("value", String)]),
    arg("args", Block).token("ARGS").optional().multiple().args(&[arg("arg", String)]),
];

#[rustfmt::skip]
static SUBCOMMANDS: &[CommandSpec] = &[
    spec("help", 2, LOADING | STALE, (0, 0, 0), &[], "server", "Lists the MODULE subcommands.", help).since("5.0.0").complexity("O(1)"),
    spec("list", 2, ADMIN | NOSCRIPT, (0, 0, 0), &[], "server", "Lists the loaded modules (none: Basalt loads no modules).", list).since("4.0.0").complexity("O(N)").tips(&["nondeterministic_output_order"]),
    spec("load", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, (0, 0, 0), &[], "server", "Loads a module (refused: Basalt loads no modules).", load).since("4.0.0").args(&[arg("path", String), arg("arg", String).optional().multiple()]).complexity("O(1)"),
    spec("loadex", -3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, (0, 0, 0), &[], "server", "Loads a module with settings (refused: Basalt loads no modules).", load).since("7.0.0").args(LOADEX_ARGS).complexity("O(1)"),
    spec("unload", 3, ADMIN | NOSCRIPT | NO_ASYNC_LOADING, (0, 0, 0), &[], "server", "Unloads a module.", unload).since("4.0.0").args(&[arg("name", String)]).complexity("O(1)"),
];

pub static COMMANDS: &[CommandSpec] = &[container("module", "server", "A container for the module commands.", SUBCOMMANDS).since("4.0.0").complexity("Depends on the subcommand.")];

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn no_module_is_listed_and_loading_is_refused_as_redis_by_default() {
        let mut h = Harness::new();
        assert_eq!(h.text("MODULE LIST"), "[]");
        assert!(h.text("MODULE LOAD /x.so").starts_with("ERR MODULE command not allowed."));
        assert!(h.text("MODULE UNLOAD x").starts_with("ERR MODULE command not allowed."));
        assert_eq!(h.text("MODULE LOAD"), "ERR wrong number of arguments for 'module|load' command");
    }
}
