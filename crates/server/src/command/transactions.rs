//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, and the queueing that dispatch
//! does while a client is inside MULTI.
//!
//! Isolation: every command runs holding its own event loop's gate for reading; EXEC
//! takes every loop's gate for writing (in index order, so two EXECs cannot deadlock)
//! and runs the queue under them, so no other client, on any loop, observes half of a
//! transaction. The active expiry cycle takes its loop's gate too.
//!
//! WATCH: watched keys have versions in `Shared::watches`, bumped after every successful
//! write command to them (`touch_keys`), or wholesale by commands that change many keys.
//! EXEC aborts when a watched key's version moved, or when a key that had a TTL at WATCH
//! time has expired since (Redis 7.0's rule).

use resp::encode;

use super::flags::*;
pub use super::client::{Multi, Watched};
use super::dispatch::execute;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};
use super::key_flags as kf;
use crate::shared::Shared;

/// Commands that run immediately even inside MULTI (`flags::NOT_QUEUED`).
pub fn runs_inside_multi(spec: &CommandSpec) -> bool {
    spec.flags & super::flags::NOT_QUEUED != 0
}

/// Queues a command (already checked for existence, arity and authentication).
pub fn queue(ctx: &mut Ctx<'_>, args: &[&[u8]]) {
    if let Some(m) = ctx.client.multi.as_mut() {
        m.queue.push(args.iter().map(|a| a.to_vec()).collect());
    }
    super::publish_client_state(ctx.client);
    encode::simple(ctx.out, b"QUEUED");
}

/// Whether the client's MULTI queue holds a command for which `pred` holds (what Redis
/// keeps as the queue's union of command flags).
pub fn queued_any(ctx: &Ctx<'_>, pred: impl Fn(&CommandSpec) -> bool) -> bool {
    queued_any_call(ctx, |spec, _| pred(spec))
}

/// [`queued_any`] for a question that also reads the queued command's arguments.
pub fn queued_any_call(ctx: &Ctx<'_>, pred: impl Fn(&CommandSpec, &[Vec<u8>]) -> bool) -> bool {
    let t = ctx.table;
    ctx.client.multi.as_ref().is_some_and(|m| {
        m.queue.iter().any(|cmd| {
            // A subcommand's own flags (CONFIG GET is `loading`, CONFIG is not), as
            // Redis's queue records them.
            let found = cmd.first().and_then(|name| t.lookup_client(name));
            let found = found.map(|i| cmd.get(1).and_then(|sub| t.lookup_sub(i, sub)).unwrap_or(i));
            found.is_some_and(|i| pred(t.entries[i].spec, cmd))
        })
    })
}

/// Drops all of a client's watches.
pub fn unwatch_all(shared: &Shared, client: &mut super::Client) {
    for w in client.watched.drain(..) {
        shared.unwatch(w.db, &w.key);
    }
}

/// Watched keys a write command may change, each with its state before the command
/// (see [`state`]), and whether only a change of that state counts as a write.
pub struct WriteTargets {
    keys: Vec<(usize, Vec<u8>, Option<usize>)>,
    changed_only: bool,
}

/// A key's state for WATCH: None when absent, else its number of elements (0 for a
/// string).
fn state(ctx: &Ctx<'_>, db: usize, key: &[u8]) -> Option<usize> {
    let (h, shard) = ctx.ks().lock_key(db, key);
    shard.peek(h, key, ctx.now_ms).map(|e| match e.value() {
        store::ValueRef::Obj(o) => o.len(),
        store::ValueRef::Str(_) => 0,
    })
}

/// Before a write command (only called while some client watches a key): the watched
/// keys it may change (`CommandSpec::writes`: its keys, [`super::written_keys`], or
/// those it names in other databases too, MOVE's and COPY's). Commands that change many
/// keys, or keyless ones, consider every watched key of the database (of every database
/// for FLUSHALL and SWAPDB).
pub fn before_write(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> WriteTargets {
    let db = ctx.client.db;
    let watched: Vec<(usize, Vec<u8>)> = ctx.shared.watches.lock().keys().cloned().collect();
    let candidates: Vec<(usize, Vec<u8>)> = match spec.writes {
        Writes::AllDatabases => watched,
        // Not every watched key (the shared black-box server saw unrelated WATCHes fail
        // while another test ran COPY).
        Writes::InDatabases(targets) => {
            let targets = targets(db, args);
            watched.into_iter().filter(|(d, k)| targets.iter().any(|(td, tk)| td == d && *tk == k.as_slice())).collect()
        }
        _ => match super::written_keys(spec, args) {
            Some(keys) => watched.into_iter().filter(|(d, k)| *d == db && keys.iter().any(|&i| args[i] == k.as_slice())).collect(),
            None => watched.into_iter().filter(|(d, _)| *d == db).collect(),
        },
    };
    WriteTargets {
        keys: candidates.into_iter().map(|(d, k)| {
            let before = state(ctx, d, &k);
            (d, k, before)
        }).collect(),
        changed_only: spec.flags & WATCH_CHANGED_ONLY != 0,
    }
}

/// After a successful write: bumps the version of each target that existed before or
/// exists now (a DEL of a missing key, or a FLUSHDB that did not hold it, changes
/// nothing, as in Redis), or, for the *MPOP commands, whose state changed.
pub fn after_write(ctx: &Ctx<'_>, targets: WriteTargets) {
    if ctx.client.changed_nothing {
        return;
    }
    for (db, key, before) in targets.keys {
        let after = state(ctx, db, &key);
        let touched = if targets.changed_only { after != before } else { before.is_some() || after.is_some() };
        if touched {
            ctx.shared.touch(db, &key);
        }
    }
}

/// MULTI — OK; starts queueing.
fn multi(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.multi.is_some() {
        return Err(CommandError::msg("ERR MULTI calls can not be nested"));
    }
    ctx.client.multi = Some(Multi::default());
    ctx.ok();
    Ok(())
}

/// DISCARD — OK; drops the queue and the watches.
fn discard(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.multi.take().is_none() {
        return Err(CommandError::msg("ERR DISCARD without MULTI"));
    }
    unwatch_all(ctx.shared, ctx.client);
    ctx.ok();
    Ok(())
}

/// True when a watched key changed (or expired) since WATCH.
fn watch_broken(ctx: &Ctx<'_>) -> bool {
    ctx.client.watched.iter().any(|w| {
        ctx.shared.watch_version(w.db, &w.key) != w.version
            || w.expire_at_ms.is_some_and(|t| t <= ctx.now_ms)
    })
}

/// EXEC — the replies of the queued commands, nil when a watched key changed.
fn exec(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    // While a data set loads in place, the load holds every gate for reading until it
    // ends (seconds; minutes for a large one). The dispatcher admits an EXEC then only
    // of commands flagged `loading`, none of which touches a key: such a queue runs
    // without the gates, rather than holding this loop and its clients until the end.
    let keyless_during_load = ctx.shared.replica.admit_bits() & crate::replication::role::LOADING != 0
        && !queued_any(ctx, |s| s.flags & LOADING == 0);
    let Some(m) = ctx.client.multi.take() else {
        return Err(CommandError::msg("ERR EXEC without MULTI"));
    };
    if m.aborted {
        unwatch_all(ctx.shared, ctx.client);
        return Err(CommandError::msg("EXECABORT Transaction discarded because of previous errors."));
    }
    // Exclusive: no command runs on any loop until the queue is done. (A replay of
    // the log runs alone already, and DEBUG LOADAOF holds the gates itself.)
    let _gates = ctx.shared.all_gates(ctx.client.loading || keyless_during_load);
    if stopped_while_waiting(ctx) {
        return Ok(());
    }
    if watch_broken(ctx) {
        unwatch_all(ctx.shared, ctx.client);
        encode::null_array(ctx.out, ctx.client.proto);
        return Ok(());
    }
    unwatch_all(ctx.shared, ctx.client);
    run_as_transaction(ctx, |ctx| {
        encode::array_len(ctx.out, m.queue.len());
        for cmd in &m.queue {
            let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
            execute(ctx, &args);
        }
    });
    Ok(())
}

/// Whether a final save (SHUTDOWN SAVE) ran while this client waited for every gate
/// (EXEC, a script): then the server stops and nothing of the transaction runs (no
/// reply may acknowledge a write the save does not hold: `shutdown::exit`); the
/// connection closes without a reply.
pub(super) fn stopped_while_waiting(ctx: &mut Ctx<'_>) -> bool {
    if ctx.shared.shutdown.load(std::sync::atomic::Ordering::Acquire) && !ctx.client.loading {
        ctx.client.close_after_reply = true;
        return true;
    }
    false
}

/// Runs `body` as one transaction, every gate held by the caller: EXEC's queue, or a
/// script. Its records are bracketed by MULTI/EXEC in the log and the replication
/// stream; its keyspace notifications and PUBLISH messages wait for the whole of it to
/// be in the log; blocked clients are served after it (a push undone later in the same
/// transaction wakes nobody, as in Redis). A script that EXEC runs is part of that
/// EXEC's transaction.
pub fn run_as_transaction(ctx: &mut Ctx<'_>, body: impl FnOnce(&mut Ctx<'_>)) {
    if ctx.client.in_exec {
        body(ctx);
        return;
    }
    ctx.client.in_exec = true;
    // Decided once, under every gate: the replication stream switches on only there.
    let propagating = crate::propagate::active(ctx.shared) && ctx.client.propagates(ctx.shared);
    if propagating {
        crate::propagate::begin_transaction(ctx.shared);
    }
    body(ctx);
    if let Some(end) = propagating.then(|| crate::propagate::end_transaction(ctx.shared)).flatten() {
        ctx.client.need = ctx.client.need.max(end);
    }
    if propagating && ctx.shared.repl.feeding() {
        // WAIT after EXEC waits for the closing EXEC too: a replica that has the
        // queue's records without it has applied none of them.
        ctx.client.repl_woff = ctx.shared.repl.offset_now();
    }
    // With the log, the queue's PUBLISH messages and keyspace notifications waited for
    // the whole transaction to be in it (`command/pubsub.rs`, `notify.rs`).
    if let Some(aof) = ctx.shared.aof.as_ref() {
        crate::publish::post_held_for_exec(ctx.shared, aof.appended());
    }
    crate::notify::flush(ctx.shared, ctx.client.need, ctx.client.info.id);
    ctx.client.in_exec = false;
    let popped = super::blocking::serve(ctx.shared, ctx.now_ms);
    crate::counters::bump(&ctx.stats.writes, popped);
}

/// WATCH key [key ...] — OK.
fn watch(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    if ctx.client.multi.is_some() {
        return Err(CommandError::msg("ERR WATCH inside MULTI is not allowed"));
    }
    let db = ctx.client.db;
    for key in &a[1..] {
        if ctx.client.watched.iter().any(|w| w.db == db && w.key == *key) {
            continue;
        }
        let (h, shard) = ctx.ks().lock_key(db, key);
        let expire_at_ms = shard.peek(h, key, ctx.now_ms).and_then(|e| e.expire_at_ms());
        drop(shard);
        let version = ctx.shared.watch(db, key);
        ctx.client.watched.push(Watched { db, key: key.to_vec(), version, expire_at_ms });
    }
    ctx.ok();
    Ok(())
}

/// UNWATCH — OK.
fn unwatch(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    unwatch_all(ctx.shared, ctx.client);
    ctx.ok();
    Ok(())
}

const TX: &[&str] = &["transaction"];

pub static COMMANDS: &[CommandSpec] = &[
    spec("multi", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | NOT_QUEUED, (0, 0, 0), TX, "transactions", "Starts a transaction.", multi).since("1.2.0").complexity("O(1)"),
    spec("exec", 1, NOSCRIPT | LOADING | STALE | SKIP_SLOWLOG | NOT_QUEUED | ALL_GATES | READS_ANY_KEY | RUNS_QUEUE, (0, 0, 0), TX, "transactions", "Executes all commands in a transaction.", exec).since("1.2.0").complexity("Depends on the queued commands."),
    spec("discard", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | NOT_QUEUED, (0, 0, 0), TX, "transactions", "Discards a transaction.", discard).since("2.0.0").complexity("O(N)"),
    spec("watch", -2, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY | NOT_QUEUED, (1, -1, 1), TX, "transactions", "Monitors changes to keys to determine the execution of a transaction.", watch).since("2.2.0").args(ARGS_WATCH).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: -1, key_step: 1, limit: 0 } }]),
    spec("unwatch", 1, NOSCRIPT | LOADING | STALE | FAST | ALLOW_BUSY, (0, 0, 0), TX, "transactions", "Forgets about watched keys of a transaction.", unwatch).since("2.2.0").complexity("O(1)"),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_WATCH: &[Arg] = &[arg("key", Key).key_spec(0).multiple()];
}
use docs_args::*;
