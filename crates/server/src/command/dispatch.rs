//! The dispatcher: one command in phases, each a function of its own (inlined into one
//! body: see `execute_found`): **resolve** (the command or subcommand in the table),
//! **admit** (every refusal Redis makes before a call, in Redis's order), **before the
//! call** (the write's ordering stripes, its WATCH targets, a tracked read's keys),
//! **call** (the handler, timed; stats, latency, MONITOR), **propagate** (what the call
//! means to the log, `crate::propagate`), **after** (blocked clients served, the error
//! reply, tracking, the slow log).

use std::borrow::Cow;
use std::sync::atomic::Ordering;

use super::table::CommandTable;
use super::{
    blocking, command_keys, flags, monitor, pause, pubsub, publish_client_state, transactions, write_error, CommandError,
    CommandSpec, Ctx,
};
use crate::propagate::Propagation;
use crate::replication::role;
use crate::shared::{bump, Shared};

/// Answers a command that is refused before it runs: the error, counted as Redis counts
/// it (`rejected_calls` of the command, `errorstat`).
fn refuse(ctx: &mut Ctx<'_>, idx: usize, text: &str) {
    bump(&ctx.stats.commands[idx].rejected_calls, 1);
    ctx.stats.count_error(text);
    write_error(ctx.out, text);
}

/// [`refuse`] for the refusals that, as Redis's, also end a transaction: inside MULTI
/// the transaction is flagged (EXEC will answer EXECABORT), and an EXEC refused itself
/// discards it, saying why (the reason without its "ERR " code, as Redis words it).
fn reject(ctx: &mut Ctx<'_>, idx: usize, spec: &CommandSpec, text: &str) {
    if let Some(m) = ctx.client.multi.as_mut() {
        if spec.flags & flags::RUNS_QUEUE != 0 {
            ctx.client.multi = None;
            transactions::unwatch_all(ctx.shared, ctx.client);
            let reason = text.strip_prefix("ERR ").unwrap_or(text);
            return refuse(ctx, idx, &format!("EXECABORT Transaction discarded because of: {reason}"));
        }
        m.aborted = true;
    }
    refuse(ctx, idx, text);
}

pub(super) fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i64;
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

fn unknown_command(args: &[&[u8]]) -> String {
    // Redis: the name (up to 128 bytes) and then arguments, quoted, until 128 bytes of
    // argument text have been written.
    let name = String::from_utf8_lossy(&args[0][..args[0].len().min(128)]).into_owned();
    let mut shown = String::new();
    for a in &args[1..] {
        if shown.len() >= 128 {
            break;
        }
        let room = 128 - shown.len();
        let part = String::from_utf8_lossy(&a[..a.len().min(room)]).into_owned();
        shown.push('\'');
        shown.push_str(&part);
        shown.push_str("' ");
    }
    format!("ERR unknown command '{name}', with args beginning with: {shown}")
}

/// Runs one command: lookup, checks, handler, stats, slow log. (A command run from
/// another, EXEC's queue or a script, has no request bytes of its own: the running
/// one's are dropped.)
pub fn execute(ctx: &mut Ctx<'_>, args: &[&[u8]]) {
    ctx.request = None;
    let found = if ctx.client.loading { ctx.table.lookup_any(args[0]) } else { ctx.table.lookup_client(args[0]) };
    execute_found(ctx, found, args);
}

/// [`execute`] for a caller that has looked the command name up already
/// ([`CommandTable::lookup`] of `args[0]`).
pub fn execute_found(ctx: &mut Ctx<'_>, found: Option<usize>, args: &[&[u8]]) {
    // The phases are functions of their own for the reader; inlined here, as one body,
    // they cost what one function did (passed between functions, the ordering stripes'
    // guard was copied twice: +8% instructions per pipelined GET, callgrind).
    let t = ctx.table;
    let Some(idx) = resolve(ctx, t, found, args) else { return };
    let spec = t.entries[idx].spec;
    if !admit(ctx, t, idx, spec, args) {
        return;
    }
    // Before the call: the write's ordering stripes, its WATCH targets, a tracked read's
    // keys, the database it starts in (SELECT inside MULTI changes it). Locals, not a
    // struct: moved through one, they cost 30 instructions per command.
    // A write that must run alone (MIGRATE, which holds the keyspace still across its
    // round trip to another server) takes every loop's gate before its ordering
    // stripes: taken after them, a loop waiting under its gate for one of them would
    // wait for ever. (The caller let this loop's gate go: `TableEntry::all_gates`.)
    let shared = ctx.shared;
    let _alone = (spec.flags & (flags::WRITE | flags::ALL_GATES) == flags::WRITE | flags::ALL_GATES)
        .then(|| shared.all_gates(ctx.client.in_exec || ctx.client.loading));
    let mut ordered = order_write(ctx, spec, args);
    let watch_targets = watch_targets(ctx, spec, args);
    let read_keys = tracked_read_keys(ctx, spec, args);
    let db = ctx.client.db;
    let (result, us) = call(ctx, idx, spec, args);
    if let (Some(targets), true) = (watch_targets, result.is_ok()) {
        transactions::after_write(ctx, targets);
    }
    propagate(ctx, t.entries[idx].data, spec, args, &mut ordered, db, result.is_ok());
    // The propagate phase let the stripes go: nothing is left to drop, and its drop
    // glue (an out-of-line call per command) is skipped. (A handler that panics
    // unwinds past here: then the guard's drop puts its stripes back.)
    debug_assert!(ordered.is_none());
    std::mem::forget(ordered);
    after(ctx, t, idx, spec, args, result, us, &read_keys);
}

/// The dispatcher's first phase: the command's table index (a subcommand's when it has
/// them), or None after answering an unknown command or subcommand (which, inside MULTI,
/// aborts the transaction).
#[inline(always)]
fn resolve(ctx: &mut Ctx<'_>, t: &CommandTable, found: Option<usize>, args: &[&[u8]]) -> Option<usize> {
    let text = match found {
        None => unknown_command(args),
        Some(idx) if t.entries[idx].spec.subcommands.is_empty() || args.len() < 2 => return Some(idx),
        Some(idx) => match t.lookup_sub(idx, args[1]) {
            Some(sub) => return Some(sub),
            None => {
                let sub = String::from_utf8_lossy(&args[1][..args[1].len().min(128)]).into_owned();
                format!("ERR unknown subcommand '{sub}'. Try {} HELP.", t.entries[idx].fullname.to_ascii_uppercase())
            }
        },
    };
    if let Some(m) = ctx.client.multi.as_mut() {
        m.aborted = true;
    }
    ctx.stats.count_error(&text);
    write_error(ctx.out, &text);
    None
}

/// The admit phase: every refusal Redis makes before a call, in Redis's order (arity,
/// authentication, out of memory, MISCONF, pub/sub context, MONITOR, no-multi), then
/// CLIENT PAUSE's postponing and MULTI's queueing. True when the command is to run now.
#[inline(always)]
fn admit(ctx: &mut Ctx<'_>, t: &CommandTable, idx: usize, spec: &'static CommandSpec, args: &[&[u8]]) -> bool {
    if !coalescable(ctx, t.entries[idx].data) {
        store::release_kept();
    }
    if !arity_ok(spec.arity, args.len()) {
        let text = CommandError::Arity(t.entries[idx].fullname.clone()).to_string();
        reject(ctx, idx, spec, &text);
        return false;
    }
    if !ctx.client.authenticated && spec.flags & flags::NO_AUTH == 0 && ctx.shared.auth_required.load(Ordering::Relaxed) {
        refuse(ctx, idx, "NOAUTH Authentication required.");
        return false;
    }
    // ACL (Redis's order: right after authentication). The loading client (the log's
    // replay, a master's stream) runs everything.
    if !ctx.client.loading {
        super::acl::refresh_user(ctx);
        if !ctx.client.unrestricted {
            if let Some(text) = super::acl::denied(ctx, idx, spec, args) {
                reject(ctx, idx, spec, &text);
                return false;
            }
        }
    }
    // maxmemory (Redis's order: before MISCONF): evict until under the limit; a command
    // that may add memory (a `denyoom` one, an EXEC of a queue with one, anything
    // queued in MULTI but the transaction's own commands) is refused while still over.
    // Then writes (an EXEC of a queue with one included) and PING, as Redis, while the
    // disk cannot take them: refused before the transaction's queueing, so that EXEC
    // aborts.
    if !ctx.client.loading && !ctx.client.in_exec {
        if ctx.shared.memory.limited() {
            let stats = ctx.stats;
            if crate::evict::make_room(ctx.shared, stats, ctx.now_ms, ctx.rng).is_err() && grows_memory(ctx, spec) {
                reject(ctx, idx, spec, crate::evict::OOM_ERROR);
                return false;
            }
            if spec.flags & flags::WRITE != 0 {
                ctx.shared.memory.note_write(args.iter().map(|a| a.len()).sum::<usize>() + 64);
            }
        }
        if let Some(text) = disk_error(ctx, spec) {
            reject(ctx, idx, spec, &text);
            return false;
        }
    }
    let role = ctx.shared.replica.admit_bits();
    // A write, or an EXEC of a queue with one (Redis's is_write_command).
    let writes = spec.flags & flags::WRITE != 0
        || (spec.flags & flags::RUNS_QUEUE != 0 && transactions::queued_any(ctx, |s| s.flags & flags::WRITE != 0));
    if writes && !ctx.client.loading {
        if role & role::REPLICA == 0 {
            // min-replicas-to-write (Redis's order: after MISCONF; masters only).
            if ctx.shared.repl.too_few_good_replicas() {
                reject(ctx, idx, spec, "NOREPLICAS Not enough good replicas to write.");
                return false;
            }
        } else if role & role::READ_ONLY != 0 {
            // A read-only replica takes writes from its master's stream only (Redis's
            // order: after MISCONF and min-replicas).
            reject(ctx, idx, spec, "READONLY You can't write against a read only replica.");
            return false;
        }
    }
    if let Some(text) = pubsub::subscribed_mode_error(ctx, t.entries[idx].parent.map_or(spec, |p| t.entries[p].spec)) {
        refuse(ctx, idx, &text);
        return false;
    }
    // replica-serve-stale-data no: while the link is down only `stale` commands run
    // (Redis's order: after the pub/sub context).
    if role & (role::REPLICA | role::NO_STALE_DATA) == role::REPLICA | role::NO_STALE_DATA
        && spec.flags & flags::STALE == 0
        && !ctx.client.loading
        && link_down(ctx.shared)
    {
        reject(ctx, idx, spec, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
        return false;
    }
    // A data set loading (at start, or a replica's full sync): only `loading` commands
    // run, and an EXEC only of such commands (Redis's order: after
    // replica-serve-stale-data).
    if role & role::LOADING != 0
        && !ctx.client.loading
        && (spec.flags & flags::LOADING == 0
            || (spec.flags & flags::RUNS_QUEUE != 0 && transactions::queued_any(ctx, |s| s.flags & flags::LOADING == 0)))
    {
        reject(ctx, idx, spec, "LOADING Redis is loading the dataset in memory");
        return false;
    }
    // A replica loading its master's snapshot aside (`repl-diskless-load swapdb`): the
    // data set held serves, and only what acts on it whole waits (SAVE, BGSAVE,
    // BGREWRITEAOF, REPLICAOF, SYNC, PSYNC, and an EXEC of one), as Redis's async load.
    if role & role::ASYNC_LOADING != 0
        && !ctx.client.loading
        && (spec.flags & flags::NO_ASYNC_LOADING != 0
            || (spec.flags & flags::RUNS_QUEUE != 0 && transactions::queued_any(ctx, |s| s.flags & flags::NO_ASYNC_LOADING != 0)))
    {
        reject(ctx, idx, spec, "LOADING Redis is loading the dataset in memory");
        return false;
    }
    if ctx.client.monitor && spec.flags & (flags::READONLY | flags::WRITE) != 0 {
        refuse(ctx, idx, monitor::KEYSPACE_REFUSED);
        return false;
    }
    if ctx.client.multi.is_some() && spec.flags & flags::NO_MULTI != 0 && !transactions::runs_inside_multi(spec) {
        reject(ctx, idx, spec, "ERR Command not allowed inside a transaction");
        return false;
    }
    // CLIENT PAUSE: after the command's own errors, before MULTI's queueing (Redis's
    // order). The command is not consumed (`conn.rs` sees `postponed`).
    if pause::postpones(ctx, spec, args) && blocking::postpone(ctx, spec, args) {
        // CLIENT LIST shows it blocked in this command, as Redis does.
        ctx.client.info.last_cmd.store(idx, Ordering::Relaxed);
        publish_client_state(ctx.client);
        return false;
    }
    if ctx.client.multi.is_some() && !transactions::runs_inside_multi(spec) {
        transactions::queue(ctx, args);
        return false;
    }
    true
}

/// Before a call: a write takes its keys' ordering stripes, held until its records are
/// in the log and the replication stream, while either consumes them (blocking pops
/// order and propagate themselves, under the waiters' registry lock). Kept a local of
/// the dispatcher's: the guard is large, and moved through a struct it was copied twice
/// per command.
#[inline(always)]
fn order_write<'s>(ctx: &Ctx<'s>, spec: &CommandSpec, args: &[&[u8]]) -> Option<crate::order::Ordered<'s>> {
    let shared: &'s Shared = ctx.shared;
    let write = spec.flags & (flags::WRITE | flags::CHANGES_ON_READ) != 0 && spec.flags & flags::BLOCKING == 0;
    (write && ctx.client.propagates(shared) && crate::propagate::active(shared)).then(|| take_stripes(&shared.stripes, ctx, spec, args))
}

/// Before a call: the watched keys a write may change (only while some client watches).
#[inline(always)]
fn watch_targets(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> Option<transactions::WriteTargets> {
    (spec.flags & flags::WRITE != 0 && ctx.shared.watch_count.load(Ordering::Relaxed) > 0)
        .then(|| transactions::before_write(ctx, spec, args))
}

/// Before a call: a tracked read's keys, remembered now and again after the call.
///
/// Client-side caching remembers a read's keys before it runs, and again after: a
/// write on another loop between the read and a registration made only afterwards
/// would find nobody to tell, and the reader would keep the old value for good.
/// Registered first, such a write costs at most an invalidation the reader did not
/// need; registered again, the keys stay tracked when the read itself expired one
/// (which invalidates it). Left: a write landing between a read's own expiry of a
/// key and the second registration goes untold (the key then reads as missing).
#[inline(always)]
fn tracked_read_keys<'k>(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&'k [u8]]) -> Vec<&'k [u8]> {
    if ctx.client.tracking.is_none() || !tracks_read(ctx, spec) {
        return Vec::new();
    }
    let keys: Vec<&'k [u8]> = command_keys(spec, args).unwrap_or_default().into_iter().map(|i| args[i]).collect();
    if !keys.is_empty() && !tracking_waits_for_exec(ctx) {
        remember_read_keys(ctx, &keys);
    }
    keys
}

/// The call phase: the handler, timed; the latency monitor and histogram, MONITOR's
/// feed, the command's stats. Returns the handler's result and its time in µs.
#[inline(always)]
fn call(ctx: &mut Ctx<'_>, idx: usize, spec: &CommandSpec, args: &[&[u8]]) -> (Result<(), CommandError>, u64) {
    let info = &ctx.client.info;
    info.last_cmd.store(idx, Ordering::Relaxed);
    info.last_interaction_ms.store(ctx.now_ms, Ordering::Relaxed);
    // The thread's clock reads the TSC raw (as Redis 7's monotonic clock does where the
    // TSC is constant) and scales the difference once: clock_gettime twice per command
    // was 7% of pipelined CPU here, quanta's scaled Instant::now still 3%.
    let clock = &ctx.stats.clock;
    let start = clock.raw();
    let result = (spec.handler)(ctx, args);
    let ns = clock.delta_as_nanos(start, clock.raw());
    let us = ns / 1000;
    // The latency monitor's command events (Redis's `command` and `fast-command`).
    let event = if spec.flags & flags::FAST != 0 { "fast-command" } else { "command" };
    ctx.shared.latency_monitor.observe_us(event, us);
    if ctx.shared.latency_tracking.load(Ordering::Relaxed) {
        ctx.stats.latency.record(idx, ns);
    }
    if monitor::wanted(ctx.shared, spec) && !ctx.client.loading {
        monitor::feed(ctx, args);
    }
    let stats = &ctx.stats.commands[idx];
    bump(&stats.calls, 1);
    bump(&stats.usec, us);
    bump(&ctx.stats.total_commands, 1);
    (result, us)
}

/// The propagate phase: what the call means to the log (`crate::propagate`), appended
/// under the stripes it held; its keyspace notifications, each held until the log has
/// the write it reveals; and the log offset this client's replies must wait for.
#[inline(always)]
fn propagate(ctx: &mut Ctx<'_>, data: bool, spec: &CommandSpec, args: &[&[u8]], ordered: &mut Option<crate::order::Ordered<'_>>, db: usize, ok: bool) {
    let changed_nothing = std::mem::take(&mut ctx.client.changed_nothing);
    // Outside a call the client's propagation is always AsSent (taken here after each
    // call), so only a handler's statement needs taking.
    let what = match ctx.client.propagation {
        Propagation::AsSent => Propagation::AsSent,
        _ => std::mem::take(&mut ctx.client.propagation),
    };
    let changes = ctx.client.changes.take();
    if spec.flags & (flags::WRITE | flags::CHANGES_ON_READ) != 0 && ok && !changed_nothing {
        bump(&ctx.stats.writes, changes.unwrap_or(1));
    }
    let logging = ctx.shared.aof.is_some() && !ctx.client.loading;
    let need = match ordered.as_mut() {
        Some(o) => {
            let what = if changed_nothing && matches!(what, Propagation::AsSent) { Propagation::Nothing } else { what };
            let to = crate::propagate::Sinks { log: !ctx.client.script_skips_log, replicas: !ctx.client.from_master && !ctx.client.script_skips_replicas };
            let end = if ok { crate::propagate::call(ctx.shared, db, ctx.now_ms, args, what, o, ctx.request, to) } else { None };
            if ctx.shared.repl.feeding() {
                // What WAIT waits for: the stream up to this write's record, whose
                // offset is known once its loop's part is published (see `wait`).
                ctx.client.repl_woff = crate::command::client::WOFF_UNPUBLISHED;
            }
            // Keyspace notifications go out before the stripes do (so in the order the
            // key changed), each held until the log has the write it reveals; inside
            // EXEC, once the whole transaction is in the log.
            if !ctx.client.in_exec {
                crate::notify::flush(ctx.shared, end.unwrap_or(0), ctx.client.info.id);
            }
            let need = o.finish(end);
            // The stripes go now, before blocked clients are served (the waiters'
            // registry comes before stripes in the lock order).
            *ordered = None;
            // SORT's patterns read keys its stripes do not cover.
            if logging && spec.flags & flags::READS_ANY_KEY != 0 { need.max(ctx.shared.stripes.need_for_all()) } else { need }
        }
        None if logging => read_need(&ctx.shared.stripes, ctx, spec, data, args),
        None => {
            // Events not published yet: those of a handler that queued none itself (a
            // read that found a key expired, a miss).
            crate::notify::flush(ctx.shared, ctx.client.need, ctx.client.info.id);
            return;
        }
    };
    ctx.client.need = ctx.client.need.max(need);
    // A read's events (inside EXEC they wait for the transaction's end).
    if !ctx.client.in_exec {
        crate::notify::flush(ctx.shared, ctx.client.need, ctx.client.info.id);
    }
}

/// The phase after a call: blocked clients served, the error reply, tracking, CLIENT
/// CACHING's end, the client's published state, the slow log.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn after(ctx: &mut Ctx<'_>, t: &CommandTable, idx: usize, spec: &CommandSpec, args: &[&[u8]], result: Result<(), CommandError>, us: u64, read_keys: &[&[u8]]) {
    if result.is_ok() && spec.flags & flags::WRITE != 0 {
        // The keys this write changed are ready for the clients waiting on them
        // (inside EXEC too: the transaction's end serves them)...
        if ctx.shared.blocked_count.load(Ordering::Relaxed) != 0 {
            signal_written(ctx, spec, args);
        }
        // ... who are served now, in FIFO order.
        if !ctx.client.in_exec {
            let popped = blocking::serve(ctx.shared, ctx.now_ms);
            if popped > 0 {
                bump(&ctx.stats.writes, popped);
            }
        }
    }
    if let Err(e) = result {
        bump(&ctx.stats.commands[idx].failed_calls, 1);
        let text: Cow<'_, str> = match &e {
            CommandError::Static(s) => Cow::Borrowed(s),
            other => Cow::Owned(other.to_string()),
        };
        ctx.stats.count_error(&text);
        write_error(ctx.out, &text);
    }
    if !read_keys.is_empty() {
        remember_read_keys(ctx, read_keys);
    }
    // CLIENT CACHING's answer lasts one command, as in Redis: not cleared by CLIENT's
    // own subcommands, nor inside a transaction (MULTI, the commands EXEC runs), so
    // that it covers a whole MULTI/EXEC; EXEC's end clears it.
    if ctx.client.caching.is_some()
        && ctx.client.multi.is_none()
        && !ctx.client.in_exec
        && t.entries[idx].parent.is_none_or(|p| t.entries[p].spec.flags & flags::KEEPS_CACHING == 0)
    {
        ctx.client.caching = None;
    }
    publish_client_state(ctx.client);
    let threshold = ctx.shared.slowlog_threshold_us.load(Ordering::Relaxed);
    // (A script's commands are not logged one by one: the script is, as in Redis.)
    if threshold >= 0 && us as i64 >= threshold && spec.flags & flags::SKIP_SLOWLOG == 0 && !ctx.client.in_script {
        let name = ctx.client.info.name.lock().clone();
        let shown = super::redact::redacted(args);
        ctx.shared.slowlog_push(us, shown.as_deref().unwrap_or(args), &ctx.client.info.addr, &name);
    }
}

/// Marks the keys a write may have filled as ready for their waiters: the keys it names,
/// or every queue for a write that changes keys it does not name (other databases, the
/// whole keyspace).
fn signal_written(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) {
    if spec.flags & flags::WHOLE_KEYSPACE != 0 || matches!(spec.writes, super::Writes::AllDatabases | super::Writes::InDatabases(_)) {
        blocking::signal_all(ctx.shared);
        return;
    }
    match command_keys(spec, args) {
        Some(keys) if !keys.is_empty() => blocking::signal_ready(ctx.shared, ctx.client.db, keys.iter().map(|&i| args[i])),
        _ => blocking::signal_all(ctx.shared),
    }
}

/// Client-side caching, default mode: whether the keys of this read-only command are
/// remembered for the client (with OPTIN only after CLIENT CACHING YES, with OPTOUT
/// unless after CLIENT CACHING NO), as Redis's trackingRememberKeys.
fn tracks_read(ctx: &Ctx<'_>, spec: &CommandSpec) -> bool {
    let caching = ctx.client.caching;
    let Some(mode) = ctx.client.tracking.as_ref() else { return false };
    !mode.bcast
        && spec.flags & flags::READONLY != 0
        && (!mode.optin || caching == Some(true))
        && (!mode.optout || caching != Some(false))
}

/// Inside EXEC with the log, the transaction's changes reach the tracking table at its
/// end (`notify.rs`): its reads are queued among them, to be remembered in order.
fn tracking_waits_for_exec(ctx: &Ctx<'_>) -> bool {
    ctx.client.in_exec && ctx.shared.aof.is_some() && !ctx.client.loading
}

/// Remembers a read's keys for its tracking client (or queues them, inside EXEC with the
/// log).
fn remember_read_keys(ctx: &Ctx<'_>, keys: &[&[u8]]) {
    if tracking_waits_for_exec(ctx) {
        for key in keys {
            store::events::push_track(ctx.client.db, key);
        }
    } else {
        crate::tracking::remember(ctx.shared, ctx.client.info.id, keys);
    }
}

/// The refusal of a write a script runs (`redis.call`), which the dispatcher does not
/// make inside a script (the script as a whole was admitted): MISCONF while the disk
/// cannot take writes, and, until the script's first write, OOM for a `denyoom` one
/// while memory is over `maxmemory` (Redis 7.0's rules: a script that has written
/// goes on, lest half of it stay).
pub(super) fn refusal_in_script(ctx: &mut Ctx<'_>, spec: &CommandSpec, wrote: bool) -> Option<String> {
    if let Some(text) = disk_error(ctx, spec) {
        return Some(text);
    }
    if !wrote && spec.flags & flags::DENYOOM != 0 && ctx.shared.memory.limited() {
        let stats = ctx.stats;
        if crate::evict::make_room(ctx.shared, stats, ctx.now_ms, ctx.rng).is_err() {
            return Some(crate::evict::OOM_ERROR.to_string());
        }
    }
    None
}

/// The refusal of a function that may write (FCALL of one without `no-writes`), made
/// before it runs, as Redis 7.0's scriptPrepareForRun makes it: on a read-only replica,
/// while the disk cannot take writes, without enough good replicas, and over
/// `maxmemory` unless the function has `allow-oom`.
pub(super) fn refusal_of_writing_function(ctx: &mut Ctx<'_>, allow_oom: bool) -> Option<String> {
    if ctx.client.from_master || ctx.client.loading {
        return None;
    }
    let rdb_failed = !ctx.shared.snapshots.last_ok.load(Ordering::Relaxed);
    if rdb_failed && crate::snapshot::writes_refused(ctx.shared) {
        return Some("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only scripts.".into());
    }
    if let Some(aof) = ctx.shared.aof.as_ref().filter(|aof| !aof.write_ok.load(Ordering::Acquire)) {
        return Some(format!("MISCONF Errors writing to the AOF file: {}", aof.write_error.lock()));
    }
    let role = ctx.shared.replica.admit_bits();
    if role & role::REPLICA != 0 && role & role::READ_ONLY != 0 {
        return Some("READONLY You can't write against a read only replica.".into());
    }
    if role & role::REPLICA == 0 && ctx.shared.repl.too_few_good_replicas() {
        return Some("NOREPLICAS Not enough good replicas to write.".into());
    }
    if !allow_oom && role & role::REPLICA == 0 && ctx.shared.memory.limited() {
        let stats = ctx.stats;
        if crate::evict::make_room(ctx.shared, stats, ctx.now_ms, ctx.rng).is_err() {
            // (Redis's processCommand refuses it as any `denyoom` command, with the
            // same text: a script's flags make it one.)
            return Some(crate::evict::OOM_ERROR.to_string());
        }
    }
    None
}

/// Whether a command is refused while memory is over `maxmemory` (Redis's
/// reject_cmd_on_oom): a `denyoom` command, an EXEC whose queue holds one, and inside
/// MULTI anything queued but EXEC, DISCARD, MULTI, WATCH, QUIT and RESET.
fn grows_memory(ctx: &Ctx<'_>, spec: &CommandSpec) -> bool {
    if spec.flags & flags::DENYOOM != 0 {
        return true;
    }
    if spec.flags & flags::RUNS_QUEUE != 0 {
        return transactions::queued_any(ctx, |s| s.flags & flags::DENYOOM != 0);
    }
    ctx.client.multi.is_some() && spec.flags & flags::NOT_QUEUED == 0
}

/// The MISCONF error for a write (or an EXEC of a queue with one, or PING, as Redis)
/// while the disk cannot take writes: after a failed save with
/// `stop-writes-on-bgsave-error` and save rules set, until a save succeeds; or while the
/// append-only log cannot be written. None otherwise (two loads in the common case).
fn disk_error(ctx: &Ctx<'_>, spec: &CommandSpec) -> Option<String> {
    let rdb_failed = !ctx.shared.snapshots.last_ok.load(Ordering::Relaxed);
    let aof_failed = ctx.shared.aof.as_ref().is_some_and(|aof| !aof.write_ok.load(Ordering::Acquire));
    if !rdb_failed && !aof_failed {
        return None;
    }
    let writes = spec.flags & flags::WRITE != 0
        || spec.flags & flags::DISK_PROBE != 0
        || (spec.flags & flags::RUNS_QUEUE != 0 && transactions::queued_any(ctx, |s| s.flags & flags::WRITE != 0));
    if !writes {
        return None;
    }
    if rdb_failed && crate::snapshot::writes_refused(ctx.shared) {
        return Some(crate::snapshot::MISCONF_RDB.to_string());
    }
    let aof = ctx.shared.aof.as_ref().filter(|aof| !aof.write_ok.load(Ordering::Acquire))?;
    Some(format!("MISCONF Errors writing to the AOF file: {}", aof.write_error.lock()))
}

/// Whether a command may run while this thread keeps a shard lock from an earlier
/// command of its batch (lock coalescing, store's `shard_lock.rs`): plain data commands,
/// whose only locks are shard locks (taken through the keyspace, which gives back a kept
/// lock before it waits for another) and leaf locks. Not with the append-only log (its
/// ordering stripes are taken before shard locks), nor inside EXEC; blocking commands
/// give the kept lock back before they take the waiters' registry.
fn coalescable(ctx: &Ctx<'_>, data: bool) -> bool {
    data && !crate::propagate::active(ctx.shared) && !ctx.client.in_exec
}

/// A replica whose link is not up (asked only with `replica-serve-stale-data no`).
fn link_down(shared: &Shared) -> bool {
    shared.replica.link().is_some_and(|l| l.state() != crate::replication::role::LinkState::Connected)
}

/// Takes the ordering stripes a write command needs: those of its keys ([`command_keys`]:
/// numkeys commands and SORT's STORE included), all of them for FLUSHALL, FLUSHDB and
/// SWAPDB, and those of every argument for other keyless writes.
fn take_stripes<'a>(stripes: &'a crate::order::Stripes, ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> crate::order::Ordered<'a> {
    // One key at argument 1 (SET, INCR, LPUSH, HSET ...): its stripe found directly.
    // (Through the positions and the sorted list below, a pipelined SET with a replica
    // counted 130-180 instructions more, callgrind.)
    if spec.movable.is_none() && spec.keys == (1, 1, 1) && args.len() > 1 {
        return stripes.order_key(ctx.ks(), args[1]);
    }
    match command_keys(spec, args) {
        Some(keys) if !keys.is_empty() => stripes.order_keys(ctx.ks(), keys.iter().map(|&i| args[i])),
        _ if spec.flags & flags::WHOLE_KEYSPACE != 0 => stripes.order_all(),
        // Other keyless writes, and a numkeys count that is not valid (the command fails
        // on it): every argument, a superset of any keys.
        _ => stripes.order_keys(ctx.ks(), args[1..].iter()),
    }
}

/// The log offset a read's reply must wait for: the newest write to the keys it read,
/// or to any key for commands that read the keyspace as a whole (SORT_RO's patterns
/// read keys its spec does not name). Commands that reveal
/// nothing of the keyspace (PING, CLIENT ...) wait for nothing, and neither does INFO:
/// its key counts are diagnostics, and an operator must be able to read
/// `aof_last_write_status` while the disk fails.
fn read_need(stripes: &crate::order::Stripes, ctx: &Ctx<'_>, spec: &CommandSpec, data: bool, args: &[&[u8]]) -> u64 {
    let keys = command_keys(spec, args).unwrap_or_default();
    if data && !keys.is_empty() && spec.flags & flags::READS_ANY_KEY == 0 {
        stripes.need_for_keys(ctx.ks(), keys.iter().map(|&i| args[i]))
    } else if data || spec.flags & flags::READS_ANY_KEY != 0 {
        stripes.need_for_all()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_command_text_matches_redis() {
        assert_eq!(
            unknown_command(&[b"foo", b"a", b"b"]),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
        );
        assert_eq!(unknown_command(&[b"foo"]), "ERR unknown command 'foo', with args beginning with: ");
    }
}
