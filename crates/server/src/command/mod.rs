//! Commands: what every file of this folder shares, the types a handler works with
//! (`Ctx`, `CommandSpec` and its flags, key specs and arguments, `CommandError`), and the
//! key facts read from a spec (`command_keys`, `written_keys`).
//!
//! The folder's layers: this file and `client.rs` (per-connection state) at the bottom;
//! `table.rs` (the flattened table, lookups, rename-command); the families, one file
//! per type or area (`strings.rs`, `lists.rs`, `server.rs` ...), each ending with its
//! `COMMANDS` table of specs; `dispatch.rs` (one command in phases) and `replay.rs`
//! (the entry point for callers above the dispatcher); and `registry.rs`, the one file
//! that lists the families. A spec line is the single source of a command's facts
//! (docs/architecture.md, "Adding a command"). Handlers validate every argument before
//! they change anything, then write their reply into `ctx.out`; an `Err` is written by
//! the dispatcher as the error reply.

pub mod acl;
pub mod args;
pub mod bitfield;
pub mod blocking;
pub mod client;
pub mod client_line;
pub mod cluster;
pub mod collections;
pub mod connection;
pub mod debug;
pub mod dispatch;
pub mod dump;
pub mod functions;
pub mod geo;
pub mod hashes;
pub mod hyperloglog;
pub mod keys;
pub mod keyspace_events;
pub mod latency;
pub mod lists;
pub mod memory;
pub mod migrate;
pub mod module;
pub mod monitor;
pub mod pause;
pub mod pubsub;
pub mod redact;
pub mod registry;
pub mod replay;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod sets;
pub mod sort;
pub mod sorted_sets;
pub mod stream_deliver;
pub mod stream_groups;
pub mod stream_info;
pub mod stream_reply;
pub mod stream_serve;
pub mod streams;
pub mod strings;
pub mod table;
pub mod testing;
pub mod transactions;

use resp::{encode, Proto};

pub use client::{publish_client_state, Client, ReplyMode};
use crate::shared::{bump, Shared, ThreadStats};

/// A handler: parse `args` (args[0] is the command name), act, write the reply.
pub type Handler = fn(&mut Ctx<'_>, &[&[u8]]) -> Result<(), CommandError>;

/// Command flags (a subset of Redis's, as COMMAND INFO lists them).
pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const NOSCRIPT: u32 = 1 << 4;
    pub const LOADING: u32 = 1 << 5;
    pub const STALE: u32 = 1 << 6;
    pub const FAST: u32 = 1 << 7;
    pub const NO_AUTH: u32 = 1 << 8;
    pub const SKIP_SLOWLOG: u32 = 1 << 9;
    pub const NO_MULTI: u32 = 1 << 10;
    pub const ALLOW_BUSY: u32 = 1 << 11;
    pub const SENTINEL: u32 = 1 << 12;
    pub const PUBSUB: u32 = 1 << 13;
    pub const BLOCKING: u32 = 1 << 14;
    pub const NO_ASYNC_LOADING: u32 = 1 << 15;

    // Basalt's own facts about a command, which the dispatcher reads instead of
    // comparing names (COMMAND INFO does not show them):
    /// Runs at once inside MULTI instead of being queued (EXEC, DISCARD, MULTI, WATCH,
    /// QUIT, RESET).
    pub const NOT_QUEUED: u32 = 1 << 16;
    /// A RESP2 client may run it while subscribed.
    pub const WHILE_SUBSCRIBED: u32 = 1 << 17;
    /// Takes every event loop's gate itself, to run the keyspace alone: the dispatcher
    /// releases the caller's gate first (`TableEntry::all_gates`).
    pub const ALL_GATES: u32 = 1 << 18;
    /// Writes the keyspace as a whole (FLUSHALL, FLUSHDB, SWAPDB): takes every ordering
    /// stripe of the log.
    pub const WHOLE_KEYSPACE: u32 = 1 << 19;
    /// Its reply may reveal any key (DBSIZE, SORT's BY and GET patterns, DEBUG ...): it
    /// waits for every write in the log, not only its keys'.
    pub const READS_ANY_KEY: u32 = 1 << 20;
    /// Redis's may-replicate without being a write (PUBLISH): CLIENT PAUSE WRITE
    /// postpones it.
    pub const MAY_REPLICATE: u32 = 1 << 21;
    /// Refused with MISCONF while the disk fails, as a write is (PING, as Redis: a
    /// health check sees the failure).
    pub const DISK_PROBE: u32 = 1 << 22;
    /// Runs a transaction's queue (EXEC): the refusals for memory, disk and pause look
    /// at the queued commands, and a refusal discards the transaction.
    pub const RUNS_QUEUE: u32 = 1 << 23;
    /// CLIENT CACHING's answer outlives it (the CLIENT commands, as Redis).
    pub const KEEPS_CACHING: u32 = 1 << 24;
    /// For WATCH, only the keys whose state it changed count as written (the *MPOP
    /// commands pop from one of their keys; SMOVE leaves a destination that has the
    /// member alone).
    pub const WATCH_CHANGED_ONLY: u32 = 1 << 25;
    /// COMMAND DOCS's `syscmd` doc flag (DEBUG).
    pub const DOC_SYSCMD: u32 = 1 << 26;
    /// Redis's `skip_monitor` (EVAL: MONITOR shows the commands a script runs).
    pub const SKIP_MONITOR: u32 = 1 << 27;
    /// Redis's `no_mandatory_keys` (EVAL: its key count may be 0).
    pub const NO_MANDATORY_KEYS: u32 = 1 << 28;
    /// A read that may change its key's value without changing what reads of it see
    /// (PFCOUNT caches its count in the value): ordered as a write is, so that when its
    /// handler lets the call propagate (it changed the value; otherwise it states
    /// `changed_nothing`) the record keeps its place in the log and the stream, as Redis
    /// propagates such a PFCOUNT and its replicas hold the same bytes.
    pub const CHANGES_ON_READ: u32 = 1 << 29;
    /// Its key specs name shard channels (`not_key`, SSUBSCRIBE, SPUBLISH): COMMAND
    /// INFO shows them as Redis does, but they are no keys of the keyspace.
    pub const CHANNEL_KEYS: u32 = 1 << 30;
    /// Redis's `asking` (RESTORE-ASKING): in a cluster, runs on a slot being imported
    /// after an ASK redirection. COMMAND INFO shows it; without cluster mode it changes
    /// nothing.
    pub const ASKING: u32 = 1 << 31;

    /// Names in Redis 7.0's COMMAND INFO order (`movablekeys`, computed from the key
    /// positions, goes before `allow_busy`; `sentinel` is not shown, as in Redis).
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (ASKING, "asking"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// A key specification, as Redis 7 describes where a command's keys are and what it does
/// with them (COMMAND INFO's key specs; `key_flags` for the flags).
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub flags: u16,
    pub begin: BeginSearch,
    pub find: FindKeys,
}

/// Where the search for a key spec's keys begins.
#[derive(Clone, Copy, Debug)]
pub enum BeginSearch {
    /// At this argument.
    Index(i32),
    /// After the argument equal to this keyword, searched from `start_from` (negative:
    /// from the end, backwards).
    Keyword { keyword: &'static str, start_from: i32 },
    /// Not known from the arguments alone.
    Unknown,
}

/// How a key spec's keys are found from where the search began.
#[derive(Clone, Copy, Debug)]
pub enum FindKeys {
    /// Keys up to `last_key` (relative to the start; negative: from the end), every
    /// `key_step`, at most a fraction `limit` of the rest (0: no limit).
    Range { last_key: i32, key_step: i32, limit: i32 },
    /// A count at `keynum_idx`, then the keys from `first_key`, every `key_step`.
    Keynum { keynum_idx: i32, first_key: i32, key_step: i32 },
    Unknown,
}

/// Key spec flags, in the order Redis 7.0's COMMAND INFO lists them.
pub mod key_flags {
    pub const RO: u16 = 1 << 0;
    pub const RW: u16 = 1 << 1;
    pub const OW: u16 = 1 << 2;
    pub const RM: u16 = 1 << 3;
    pub const ACCESS: u16 = 1 << 4;
    pub const UPDATE: u16 = 1 << 5;
    pub const INSERT: u16 = 1 << 6;
    pub const DELETE: u16 = 1 << 7;
    pub const NOT_KEY: u16 = 1 << 8;
    pub const INCOMPLETE: u16 = 1 << 9;
    pub const VARIABLE_FLAGS: u16 = 1 << 10;

    pub const NAMES: &[(u16, &str)] = &[
        (RO, "RO"),
        (RW, "RW"),
        (OW, "OW"),
        (RM, "RM"),
        (ACCESS, "access"),
        (UPDATE, "update"),
        (INSERT, "insert"),
        (DELETE, "delete"),
        (NOT_KEY, "not_key"),
        (INCOMPLETE, "incomplete"),
        (VARIABLE_FLAGS, "variable_flags"),
    ];
}

/// One argument of a command as COMMAND DOCS describes it (redis-cli builds its hints
/// from these): built with [`arg`] and the methods below.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    pub name: &'static str,
    pub kind: ArgKind,
    /// Index of the key spec of a `key` argument.
    pub key_spec_index: Option<u8>,
    pub token: Option<&'static str>,
    pub since: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    /// `arg_flags`.
    pub flags: u8,
    /// The arguments of a `oneof` or `block`.
    pub args: &'static [Arg],
}

/// An argument's type, as COMMAND DOCS names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    String,
    Integer,
    Double,
    Key,
    Pattern,
    UnixTime,
    PureToken,
    OneOf,
    Block,
}

impl ArgKind {
    pub fn name(self) -> &'static str {
        match self {
            ArgKind::String => "string",
            ArgKind::Integer => "integer",
            ArgKind::Double => "double",
            ArgKind::Key => "key",
            ArgKind::Pattern => "pattern",
            ArgKind::UnixTime => "unix-time",
            ArgKind::PureToken => "pure-token",
            ArgKind::OneOf => "oneof",
            ArgKind::Block => "block",
        }
    }
}

/// Argument flags, in COMMAND DOCS's order.
pub mod arg_flags {
    pub const OPTIONAL: u8 = 1 << 0;
    pub const MULTIPLE: u8 = 1 << 1;
    pub const MULTIPLE_TOKEN: u8 = 1 << 2;
    pub const NAMES: &[(u8, &str)] = &[(OPTIONAL, "optional"), (MULTIPLE, "multiple"), (MULTIPLE_TOKEN, "multiple_token")];
}

/// An argument named `name` of type `kind`.
pub const fn arg(name: &'static str, kind: ArgKind) -> Arg {
    Arg { name, kind, key_spec_index: None, token: None, since: None, deprecated_since: None, flags: 0, args: &[] }
}

impl Arg {
    pub const fn key_spec(self, index: u8) -> Arg {
        Arg { key_spec_index: Some(index), ..self }
    }
    pub const fn token(self, token: &'static str) -> Arg {
        Arg { token: Some(token), ..self }
    }
    pub const fn since(self, version: &'static str) -> Arg {
        Arg { since: Some(version), ..self }
    }
    pub const fn deprecated_since(self, version: &'static str) -> Arg {
        Arg { deprecated_since: Some(version), ..self }
    }
    pub const fn optional(self) -> Arg {
        Arg { flags: self.flags | arg_flags::OPTIONAL, ..self }
    }
    pub const fn multiple(self) -> Arg {
        Arg { flags: self.flags | arg_flags::MULTIPLE, ..self }
    }
    pub const fn multiple_token(self) -> Arg {
        Arg { flags: self.flags | arg_flags::MULTIPLE_TOKEN, ..self }
    }
    pub const fn args(self, args: &'static [Arg]) -> Arg {
        Arg { args, ..self }
    }
}

/// The static description of a command (or subcommand).
pub struct CommandSpec {
    /// Lower-case name (for a subcommand, just its own word).
    pub name: &'static str,
    /// Redis arity: positive = exact argument count including the name, negative =
    /// at least that many.
    pub arity: i32,
    pub flags: u32,
    /// First key, last key (negative counts from the end) and step; 0,0,0 for none.
    pub keys: (i32, i32, i32),
    /// ACL categories without the '@'.
    pub acl: &'static [&'static str],
    pub group: &'static str,
    pub summary: &'static str,
    pub handler: Handler,
    pub subcommands: &'static [CommandSpec],
    /// Where its keys are when they move with its arguments (Redis's `movablekeys`).
    pub movable: Option<Movable>,
    /// Which of its keys a write may change (WATCH).
    pub writes: Writes,
    /// The Redis version that introduced it (COMMAND DOCS).
    pub since: &'static str,
    /// Its key specs (COMMAND INFO); empty for a keyless command.
    pub key_specs: &'static [KeySpec],
    /// Redis's command tips (COMMAND INFO: `nondeterministic_output`,
    /// `request_policy:all_shards` ...).
    pub tips: &'static [&'static str],
    /// Its arguments (COMMAND DOCS).
    pub args: &'static [Arg],
    /// Its time complexity, in big-O (COMMAND DOCS).
    pub complexity: &'static str,
    /// The Redis version that deprecated it (COMMAND DOCS), if any.
    pub deprecated_since: &'static str,
    /// Which of its arguments are pub/sub channels an ACL user must be allowed.
    pub channels: Channels,
}

/// Where a command names channels (Redis 7.0's `getChannelsFromCommand`, for ACL
/// checks; unsubscribing needs no permission).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    None,
    /// The first argument (PUBLISH).
    First,
    /// Every argument (SUBSCRIBE).
    All,
    /// Every argument, each a pattern (PSUBSCRIBE).
    AllPatterns,
}

impl Channels {
    /// The positions of the channels among `argc` arguments, and whether they are
    /// patterns.
    pub fn positions(self, argc: usize) -> (std::ops::Range<usize>, bool) {
        match self {
            Channels::None => (0..0, false),
            Channels::First => (1..argc.min(2), false),
            Channels::All => (1..argc, false),
            Channels::AllPatterns => (1..argc, true),
        }
    }
}

impl CommandSpec {
    /// Its keys follow a `numkeys` count at `count_at`, after the keys at `fixed`.
    pub const fn numkeys(self, fixed: &'static [usize], count_at: usize) -> CommandSpec {
        CommandSpec { movable: Some(Movable::NumKeys { fixed, count_at }), ..self }
    }

    /// Its keys are found as `m` says.
    pub const fn movable(self, m: Movable) -> CommandSpec {
        CommandSpec { movable: Some(m), ..self }
    }

    /// Which of its keys a write changes.
    pub const fn writes(self, w: Writes) -> CommandSpec {
        CommandSpec { writes: w, ..self }
    }

    /// The Redis version that introduced it.
    pub const fn since(self, version: &'static str) -> CommandSpec {
        CommandSpec { since: version, ..self }
    }

    /// Where its keys are and what it does with them.
    pub const fn key_specs(self, specs: &'static [KeySpec]) -> CommandSpec {
        CommandSpec { key_specs: specs, ..self }
    }

    /// Its command tips.
    pub const fn tips(self, tips: &'static [&'static str]) -> CommandSpec {
        CommandSpec { tips, ..self }
    }

    /// Its arguments, for COMMAND DOCS.
    pub const fn args(self, args: &'static [Arg]) -> CommandSpec {
        CommandSpec { args, ..self }
    }

    /// Which arguments are channels (ACL).
    pub const fn channels(self, channels: Channels) -> CommandSpec {
        CommandSpec { channels, ..self }
    }

    /// Its time complexity (COMMAND DOCS).
    pub const fn complexity(self, complexity: &'static str) -> CommandSpec {
        CommandSpec { complexity, ..self }
    }

    /// Deprecated since that Redis version.
    pub const fn deprecated(self, since: &'static str) -> CommandSpec {
        CommandSpec { deprecated_since: since, ..self }
    }

    /// A command for the system, not for users (Redis's `syscmd` doc flag).
    pub const fn syscmd(self) -> CommandSpec {
        CommandSpec { flags: self.flags | flags::DOC_SYSCMD, ..self }
    }
}

/// A command error; its Display is the exact error reply text (code included).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("ERR syntax error")]
    Syntax,
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    #[error("ERR value is not a valid float")]
    NotFloat,
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    #[error("ERR no such key")]
    NoSuchKey,
    #[error("ERR invalid expire time in '{0}' command")]
    InvalidExpire(&'static str),
    #[error("ERR wrong number of arguments for '{0}' command")]
    Arity(String),
    #[error("{0}")]
    Static(&'static str),
    #[error("{0}")]
    Owned(String),
}

impl CommandError {
    /// An error with a fixed text (code included, e.g. "ERR ...").
    pub fn msg(text: &'static str) -> CommandError {
        CommandError::Static(text)
    }
}

/// What a handler works with.
pub struct Ctx<'a> {
    pub shared: &'a Shared,
    /// The command table (`registry::table()`).
    pub table: &'static table::CommandTable,
    pub client: &'a mut Client,
    pub out: &'a mut Vec<u8>,
    /// The time of this command, read once per batch.
    pub now_ms: i64,
    pub stats: &'a ThreadStats,
    pub rng: &'a mut fastrand::Rng,
    /// The bytes of the request being run, as the client sent them, when they are the
    /// canonical encoding of its arguments and replicas are fed (None otherwise, and for
    /// commands run from elsewhere: EXEC's queue, scripts, the log's replay; a command
    /// run from another through `dispatch::execute` drops them).
    pub request: Option<&'a [u8]>,
}

impl<'a> Ctx<'a> {
    /// Disconnects a client: this one after its reply, another by its loop (CLIENT
    /// KILL, ACL DELUSER).
    pub fn kill_client(&mut self, c: &crate::shared::ClientInfo) {
        if c.id == self.client.info.id {
            self.client.close_after_reply = true;
        } else {
            c.killed.store(true, std::sync::atomic::Ordering::SeqCst);
            // A replica gets no more of the stream from here (Redis writes nothing more
            // to a client it closes), not the rest of this batch's records before its
            // loop closes it: killed inside MULTI before the transaction's writes, it
            // must find them missing when it asks to continue.
            self.shared.repl.remove(c.id);
            self.shared.wake(c.owner.load(std::sync::atomic::Ordering::SeqCst));
        }
    }

    /// The keyspace, borrowed for the context's lifetime rather than the handler's
    /// borrow of `ctx`, so that shard guards can live while the handler writes replies.
    pub fn ks(&self) -> &'a store::Keyspace {
        &self.shared.keyspace
    }

    pub fn proto(&self) -> Proto {
        self.client.proto
    }

    pub fn ok(&mut self) {
        encode::ok(self.out);
    }

    pub fn null(&mut self) {
        encode::null(self.out, self.client.proto);
    }

    /// Records a read of `key` in the client's database as Redis's read lookup does: a
    /// keyspace hit or miss (INFO stats), and for a miss the `keymiss` notification.
    /// Called by every command that reads a key as Redis reads it (reads, and the keys
    /// some writes read: SET ... GET, COPY's source, the *STORE commands' sources).
    #[inline]
    pub fn lookup(&self, key: &[u8], found: bool) {
        self.count_lookup(found);
        if !found {
            keyspace_events::notify(self, store::events::class::KEY_MISS, "keymiss", key);
            // A key found expired (the store queued `expired`) is published while the
            // caller holds its lock.
            crate::notify::publish_under_lock(keyspace_events::at_once(self));
        }
    }

    /// Counts a keyspace hit or miss (INFO stats) without notifying.
    #[inline]
    pub fn count_lookup(&self, found: bool) {
        count_lookup(self.stats, found);
    }

    /// What looking a key up writes into its access field (Redis's lookupKey, reads and
    /// writes alike): the LRU clock or an LFU increment; None under CLIENT NO-TOUCH.
    /// (Takes `&self`, as the lookup helpers hold one: LFU's draw uses a per-thread
    /// generator, not the loop's.)
    #[inline]
    pub fn access(&self) -> Option<store::clock::Touch> {
        if self.client.info.no_touch.load(std::sync::atomic::Ordering::Relaxed) {
            None
        } else {
            Some(self.shared.memory.touch(self.now_ms, fastrand::f64))
        }
    }

    /// The access field of a key created now: the LRU clock, or under an LFU policy an
    /// initial frequency (`evict.rs`).
    pub fn lru(&self) -> u32 {
        self.shared.memory.new_access(self.now_ms)
    }

    /// States what this call means to the log, instead of the command as sent (Redis's
    /// `rewriteClientCommandVector` and `alsoPropagate`): relative times become
    /// absolute, a float increment the value it made, a random pop what it popped.
    /// Nothing when there is no log or this is its replay (`Client::propagates`): then `records` is not called,
    /// so a server without a log copies no key or value. (`crate::propagate`.)
    pub fn propagate_as(&mut self, records: impl FnOnce() -> Vec<crate::propagate::Record>) {
        if crate::propagate::active(self.shared) && self.client.propagates(self.shared) {
            self.client.propagation = crate::propagate::Propagation::Effect(records());
        }
    }

    /// States that this call propagates nothing (it changed nothing, or propagated
    /// itself).
    pub fn propagate_nothing(&mut self) {
        self.client.propagation = crate::propagate::Propagation::Nothing;
    }
}

/// Counts a keyspace hit or miss in a loop's stats (INFO's `keyspace_hits`,
/// `keyspace_misses`).
#[inline]
pub fn count_lookup(stats: &ThreadStats, found: bool) {
    let counter = if found { &stats.keyspace_hits } else { &stats.keyspace_misses };
    bump(counter, 1);
}

/// Writes an error reply, replacing CR and LF (which could come from client input
/// echoed in the message) with spaces, as Redis does.
pub fn write_error(out: &mut Vec<u8>, text: &str) {
    if text.bytes().any(|b| b == b'\r' || b == b'\n') {
        let clean: Vec<u8> =
            text.bytes().map(|b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect();
        encode::error(out, &clean);
    } else {
        encode::error(out, text.as_bytes());
    }
}

/// Writes a HELP reply given whole, for the containers whose text is not
/// addReplyHelp's (LATENCY's and SCRIPT's end with "Prints this help.").
pub fn reply_help_text(ctx: &mut Ctx<'_>, lines: &[&str]) {
    encode::array_len(ctx.out, lines.len());
    for line in lines {
        encode::simple(ctx.out, line.as_bytes());
    }
}

/// Writes a HELP reply: a header line then the lines, as Redis's addReplyHelp.
pub fn reply_help(ctx: &mut Ctx<'_>, command: &str, lines: &[&str]) {
    let out = &mut *ctx.out;
    encode::array_len(out, lines.len() + 3);
    encode::simple(
        out,
        format!("{command} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:").as_bytes(),
    );
    for l in lines {
        encode::simple(out, l.as_bytes());
    }
    encode::simple(out, b"HELP");
    encode::simple(out, b"    Prints this help.");
}

/// Shorthand for a spec line in a family table.
#[allow(clippy::too_many_arguments)]
pub const fn spec(
    name: &'static str,
    arity: i32,
    flags: u32,
    keys: (i32, i32, i32),
    acl: &'static [&'static str],
    group: &'static str,
    summary: &'static str,
    handler: Handler,
) -> CommandSpec {
    CommandSpec { name, arity, flags, keys, acl, group, summary, handler, subcommands: &[], movable: None, writes: Writes::Keys, since: "", key_specs: &[], tips: &[], args: &[], complexity: "", deprecated_since: "", channels: Channels::None }
}

/// A parent command that dispatches to subcommands (CLIENT, CONFIG, OBJECT ...). Its
/// own handler runs only when no subcommand word was given.
pub const fn container(
    name: &'static str,
    group: &'static str,
    summary: &'static str,
    subcommands: &'static [CommandSpec],
) -> CommandSpec {
    CommandSpec {
        name,
        arity: -2,
        flags: 0,
        keys: (0, 0, 0),
        acl: &[],
        group,
        summary,
        handler: container_without_subcommand,
        subcommands,
        movable: None,
        writes: Writes::Keys,
        since: "",
        key_specs: &[],
        tips: &[],
        args: &[],
        complexity: "",
        deprecated_since: "",
        channels: Channels::None,
    }
}

fn container_without_subcommand(_: &mut Ctx<'_>, args: &[&[u8]]) -> Result<(), CommandError> {
    // Arity -2 guarantees a subcommand word; dispatch resolves known ones first.
    Err(CommandError::Arity(String::from_utf8_lossy(args[0]).to_ascii_lowercase()))
}

/// Where a command whose keys move with its arguments (Redis's `movablekeys`) has them.
#[derive(Clone, Copy)]
pub enum Movable {
    /// `numkeys key ...` with the count at `count_at`, after the keys at `fixed`.
    NumKeys { fixed: &'static [usize], count_at: usize },
    /// SORT: its key, and the last STORE's destination.
    Sort,
    /// SORT_RO: its key is its range, but its BY and GET patterns may read others.
    Patterns,
    /// GEORADIUS, GEORADIUSBYMEMBER: its key, and the argument after each STORE or
    /// STOREDIST from `from` on. Redis's key specs name the first of each keyword's (what
    /// COMMAND GETKEYS shows), its command stores to the last: with each keyword given
    /// once, as clients send them, all three agree; otherwise this names every candidate,
    /// so that the destination is always among the keys ordered, watched and checked.
    GeoStore { from: usize },
    /// XREAD, XREADGROUP: after the first STREAMS (past the options' arguments), the
    /// first half of what follows (the other half are IDs).
    Streams,
    /// MIGRATE: its key argument, or with an empty one the keys after KEYS
    /// (`migrate::key_positions`).
    Migrate,
}

/// What a write changes in other databases too: (database, key) pairs from the client's
/// database and the arguments (`Writes::InDatabases`).
pub type WrittenInDatabases = for<'a> fn(usize, &[&'a [u8]]) -> Vec<(usize, &'a [u8])>;

/// Which of the keys a write command names it may change, for WATCH (what Redis's key
/// specs say with their write flags).
#[derive(Clone, Copy)]
pub enum Writes {
    /// Every key it names.
    Keys,
    /// Its first key; the others it only reads (SINTERSTORE, ZRANGESTORE, BITOP,
    /// ZUNIONSTORE).
    FirstKey,
    /// The keys after its first (SORT changes only its STORE destination).
    AfterFirst,
    /// Its keys, when this says its arguments write (a BITFIELD of GETs changes nothing).
    KeysIf(fn(&[&[u8]]) -> bool),
    /// Keys of other databases too, as this finds them from the client's database and
    /// the arguments (MOVE, COPY ... DB).
    InDatabases(WrittenInDatabases),
    /// Every key of every database (FLUSHALL, SWAPDB).
    AllDatabases,
}

/// Whether COMMAND INFO flags the command `movablekeys` (SORT_RO too: Redis counts its
/// BY/GET patterns, though GETKEYS names only its key).
pub fn has_movable_keys(spec: &CommandSpec) -> bool {
    spec.movable.is_some()
}

/// Positions of a command's keys, as COMMAND GETKEYS names them: the spec's range, or,
/// for a command whose keys move, found in `args` as Redis finds them (a numkeys count;
/// SORT's last STORE, skipping LIMIT's, BY's and GET's arguments). None when the count
/// is not a number from 1 to the arguments left. (On the stack for up to four keys:
/// the dispatcher asks for every write while the log or replicas take records.)
pub fn command_keys(spec: &CommandSpec, args: &[&[u8]]) -> Option<KeyPositions> {
    match spec.movable {
        None | Some(Movable::Patterns) => Some(key_positions(spec, args.len())),
        Some(Movable::NumKeys { fixed, count_at }) => {
            let n = store::types::string::parse_i64(args.get(count_at)?)?;
            let first = count_at + 1;
            let n = usize::try_from(n).ok().filter(|&n| n >= 1 && n <= args.len().saturating_sub(first))?;
            Some(fixed.iter().copied().chain(first..first + n).collect())
        }
        Some(Movable::Sort) => {
            let mut store = None;
            let mut i = 2;
            while i < args.len() {
                let w = args[i];
                if args::is(w, "limit") {
                    i += 2;
                } else if args::is(w, "get") || args::is(w, "by") {
                    i += 1;
                } else if args::is(w, "store") && i + 1 < args.len() {
                    store = Some(i + 1);
                }
                i += 1;
            }
            Some(std::iter::once(1).chain(store).collect())
        }
        Some(Movable::Streams) => {
            let mut i = 1;
            let mut at = None;
            while i < args.len() {
                let w = args[i];
                if args::is(w, "block") || args::is(w, "count") {
                    i += 1;
                } else if args::is(w, "group") {
                    i += 2;
                } else if args::is(w, "streams") {
                    at = Some(i);
                    break;
                } else if !args::is(w, "noack") {
                    break;
                }
                i += 1;
            }
            let at = at?;
            let n = args.len() - at - 1;
            if n == 0 || n % 2 != 0 {
                return None;
            }
            Some((at + 1..at + 1 + n / 2).collect())
        }
        Some(Movable::Migrate) => migrate::key_positions(args).map(|v| v.into_iter().collect()),
        Some(Movable::GeoStore { from }) => {
            let stores = (from..args.len().saturating_sub(1)).filter(|&i| args::is(args[i], "store") || args::is(args[i], "storedist"));
            Some(std::iter::once(1).chain(stores.map(|i| i + 1)).collect())
        }
    }
}

/// The positions of a command's keys with their key spec's flags, as Redis 7.0 finds
/// them for ACL (getKeysUsingKeySpecs): each spec's begin-search and find-keys rules;
/// a spec that cannot be followed from the arguments alone (SORT's STORE) takes the
/// positions `command_keys` finds that no other spec named.
pub fn keys_with_flags(spec: &CommandSpec, args: &[&[u8]]) -> Vec<(usize, u16)> {
    let argc = args.len() as i64;
    let mut keys: Vec<(usize, u16)> = Vec::new();
    let mut incomplete: Option<u16> = None;
    for ks in spec.key_specs {
        // (Shard channels: not keys, as Redis's search without GET_KEYSPEC_INCLUDE_NOT_KEYS.)
        if ks.flags & key_flags::NOT_KEY != 0 {
            continue;
        }
        if ks.flags & key_flags::INCOMPLETE != 0 || matches!(ks.begin, BeginSearch::Unknown) {
            incomplete = Some(incomplete.unwrap_or(0) | ks.flags);
            continue;
        }
        let first = match ks.begin {
            BeginSearch::Index(i) => i64::from(i),
            BeginSearch::Keyword { keyword, start_from } => {
                let start = if start_from > 0 {
                    i64::from(start_from)
                } else {
                    argc + i64::from(start_from)
                };
                let forward = start_from > 0;
                let mut i = start;
                let mut found = None;
                while i >= 1 && i < argc {
                    if args[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
                        found = Some(i + 1);
                        break;
                    }
                    i += if forward { 1 } else { -1 };
                }
                match found {
                    Some(f) => f,
                    None => continue,
                }
            }
            BeginSearch::Unknown => continue,
        };
        let (first, last, step) = match ks.find {
            FindKeys::Range {
                last_key,
                key_step,
                limit,
            } => {
                let last = if last_key >= 0 {
                    first + i64::from(last_key)
                } else if limit <= 1 {
                    argc + i64::from(last_key)
                } else {
                    first + ((argc - first) / i64::from(limit) + i64::from(last_key))
                };
                (first, last, i64::from(key_step))
            }
            FindKeys::Keynum {
                keynum_idx,
                first_key,
                key_step,
            } => {
                let at = first + i64::from(keynum_idx);
                let Some(n) = usize::try_from(at)
                    .ok()
                    .and_then(|a| args.get(a))
                    .and_then(|a| store::types::string::parse_i64(a))
                else {
                    continue;
                };
                if n < 0 {
                    continue;
                }
                let first = first + i64::from(first_key);
                (first, first + n - 1, i64::from(key_step))
            }
            FindKeys::Unknown => {
                incomplete = Some(incomplete.unwrap_or(0) | ks.flags);
                continue;
            }
        };
        let mut i = first;
        while i <= last && step > 0 {
            if i >= argc || i < 1 {
                break;
            }
            keys.push((i as usize, ks.flags));
            i += step;
        }
    }
    let fallback = if spec.key_specs.is_empty() {
        Some(key_flags::ACCESS | key_flags::UPDATE)
    } else {
        incomplete
    };
    if let Some(flags) = fallback {
        for pos in command_keys(spec, args).unwrap_or_default() {
            if !keys.iter().any(|(p, _)| *p == pos) {
                keys.push((pos, flags));
            }
        }
    }
    keys
}

/// The keys a write command may change (WATCH), when they can be told from its
/// arguments (`CommandSpec::writes`): all it names, its first (S*STORE, ZRANGESTORE,
/// BITOP, ZUNIONSTORE ...), those after its first (SORT's STORE destination), none for a
/// BITFIELD of GETs. None for a keyless write, or one whose keys are in other databases
/// too (the caller considers every key).
pub fn written_keys(spec: &CommandSpec, args: &[&[u8]]) -> Option<KeyPositions> {
    let keys = command_keys(spec, args)?;
    match spec.writes {
        Writes::Keys => Some(keys).filter(|k| !k.is_empty()),
        Writes::FirstKey => Some(keys.into_iter().take(1).collect()),
        Writes::AfterFirst => Some(keys.into_iter().skip(1).collect()),
        Writes::KeysIf(writes) if !writes(args) => Some(KeyPositions::new()),
        Writes::KeysIf(_) => Some(keys).filter(|k| !k.is_empty()),
        Writes::InDatabases(_) | Writes::AllDatabases => None,
    }
}

/// Positions of a command's keys in its arguments.
pub type KeyPositions = smallvec::SmallVec<[usize; 4]>;

/// Keys of a command invocation per its spec's range (first, last, step); empty when
/// the spec has none. See [`command_keys`] for the keys of every command.
pub fn key_positions(spec: &CommandSpec, argc: usize) -> KeyPositions {
    let (first, last, step) = spec.keys;
    if first <= 0 || step <= 0 || spec.flags & flags::CHANNEL_KEYS != 0 {
        return KeyPositions::new();
    }
    let last = if last < 0 { argc as i32 + last } else { last };
    (first..=last.min(argc as i32 - 1)).step_by(step as usize).map(|i| i as usize).collect()
}

