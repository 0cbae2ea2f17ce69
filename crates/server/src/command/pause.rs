//! CLIENT PAUSE and CLIENT UNPAUSE: commands from every client are postponed while a
//! pause lasts (mode ALL), or only those that change data (mode WRITE: writes, PUBLISH,
//! an EXEC whose queue holds one), as in Redis 7.0.
//!
//! A postponed command is not executed and not consumed: its connection is blocked
//! (`blocking::postpone`, counted in `blocked_clients` as Redis counts it) with the
//! command left in its input, and when the pause ends (CLIENT UNPAUSE, or its time, seen
//! by every loop's tick) each postponed client is woken, in the order it was postponed,
//! and runs that input again. As in Redis, the check comes after a command's own errors
//! (unknown command, arity, authentication) and before MULTI's queueing, commands
//! inside EXEC are never postponed, and mode ALL postpones CLIENT UNPAUSE too (the pause
//! then ends only by its time). The keyspace holds still while clients are paused, as in
//! Redis: no active expiry, and an expired key reads as absent but stays until the
//! pause ends (`Keyspace::hold_expiry`). A replica's connection is never paused, as in
//! Redis. A script or function that declares `no-writes` is not a write here, as Redis
//! reads its flags for the pause.

use std::sync::atomic::Ordering;

use super::args::{self, is};
use super::{flags, CommandError, CommandSpec, Ctx};
use crate::shared::Shared;
use crate::state::pause::{ALL, OFF, WRITE};

/// Whether the command `spec` from this client waits for the pause to end. One atomic
/// load when no pause was ever set (or since the last UNPAUSE).
#[inline]
pub fn postpones(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> bool {
    if ctx.shared.pause.never_set()
        || ctx.client.in_exec
        || ctx.client.loading
        // Replicas are never paused, as in Redis (their REPLCONF ACKs go on).
        || ctx.client.replica
    {
        return false;
    }
    match ctx.shared.pause.mode_at(ctx.now_ms) {
        OFF => false,
        ALL => true,
        _ => {
            may_change_data(ctx, spec, args)
                || (spec.flags & flags::RUNS_QUEUE != 0
                    && super::transactions::queued_any_call(ctx, |s, queued| {
                        let queued: Vec<&[u8]> = queued.iter().map(Vec::as_slice).collect();
                        may_change_data(ctx, s, &queued)
                    }))
        }
    }
}

/// Redis's "may replicate": writes, PUBLISH, and EVAL, EVALSHA and FCALL unless the
/// script or function declares `no-writes` (Redis's getCommandFlags reads its flags:
/// such a call runs during CLIENT PAUSE WRITE). EVAL_RO and FCALL_RO run too.
fn may_change_data(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> bool {
    if spec.flags & flags::WRITE != 0 {
        return true;
    }
    spec.flags & flags::MAY_REPLICATE != 0 && !declares_no_writes(ctx, spec, args)
}

/// Whether an EVAL, EVALSHA or FCALL names a script or function that declares
/// `no-writes` (an EVALSHA of an unknown script, or an unknown function, does not).
fn declares_no_writes(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> bool {
    let Some(&named) = args.get(1) else { return false };
    match spec.name {
        "eval" => crate::script::shebang::declares_no_writes(named),
        "evalsha" => crate::script::cache::parse_sha(named)
            .and_then(|sha| ctx.shared.scripts.get(&sha))
            .is_some_and(|body| crate::script::shebang::declares_no_writes(&body)),
        "fcall" => {
            let registry = ctx.shared.functions.snapshot();
            let found = registry.function(&String::from_utf8_lossy(named)).map(|(_, f)| f.flags);
            found.is_some_and(|f| f & crate::script::functions::flag::NO_WRITES != 0)
        }
        _ => false,
    }
}

/// Wakes the postponed clients once no pause is in force (each loop's tick; also the
/// safety net for a client postponed just as CLIENT UNPAUSE ran).
pub fn resume_if_over(shared: &Shared, now_ms: i64) {
    let pause = &shared.pause;
    if pause.mode_at(now_ms) != OFF {
        return;
    }
    if pause.expiry_held.load(Ordering::Acquire) {
        let _update = pause.update.lock();
        if pause.mode_at(now_ms) == OFF {
            release_expiry(shared);
        }
    }
    super::blocking::resume_postponed(shared);
}

/// Lets expired keys go again (under `Pause::update`).
fn release_expiry(shared: &Shared) {
    if shared.pause.expiry_held.swap(false, Ordering::AcqRel) {
        shared.keyspace.hold_expiry(false);
    }
}

/// CLIENT PAUSE timeout [WRITE|ALL] — OK. A pause already in force is only ever made
/// longer or stricter, as in Redis.
pub fn client_pause(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if a.len() > 4 {
        return Err(CommandError::Owned(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(&a[1][..a[1].len().min(128)])
        )));
    }
    let ms = args::int(a[2])
        .map_err(|_| CommandError::msg("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(CommandError::msg("ERR timeout is negative"));
    }
    let mode = match a.get(3) {
        None => ALL,
        Some(m) if is(m, "all") => ALL,
        Some(m) if is(m, "write") => WRITE,
        Some(_) => {
            return Err(CommandError::msg(
                "ERR CLIENT PAUSE mode must be WRITE or ALL",
            ))
        }
    };
    let pause = &ctx.shared.pause;
    let _update = pause.update.lock();
    // Redis adds the timeout to the clock without an overflow check: a timeout near
    // i64::MAX wraps into the past and pauses nothing (rather than forever, which in
    // mode ALL would leave no client able to lift it).
    let end = ctx.now_ms.wrapping_add(ms);
    // A pause whose time is over counts as none: the new one replaces it.
    let (old_mode, old_end) = match pause.mode_at(ctx.now_ms) {
        OFF => (OFF, i64::MIN),
        m => (m, pause.end_ms.load(Ordering::Acquire)),
    };
    pause.end_ms.store(end.max(old_end), Ordering::Release);
    pause.mode.store(mode.max(old_mode), Ordering::Release);
    // Keys stay put while clients are paused: an expired key reads as absent but is
    // not removed until the pause ends, as in Redis.
    if pause.active(ctx.now_ms) && !pause.expiry_held.swap(true, Ordering::AcqRel) {
        ctx.shared.keyspace.hold_expiry(true);
    }
    ctx.ok();
    Ok(())
}

/// CLIENT UNPAUSE — OK; postponed clients run their commands now (writes stay held
/// while a FAILOVER or a shutdown holds them).
pub fn client_unpause(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    {
        let _update = ctx.shared.pause.update.lock();
        ctx.shared.pause.mode.store(OFF, Ordering::Release);
        ctx.shared.pause.end_ms.store(0, Ordering::Release);
        if !ctx.shared.pause.writes_held() {
            release_expiry(ctx.shared);
        }
    }
    super::blocking::resume_postponed(ctx.shared);
    ctx.ok();
    Ok(())
}
