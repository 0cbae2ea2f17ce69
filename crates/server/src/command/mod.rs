//! Commands: the spec table, dispatch (lookup, arity, authentication, timing, stats,
//! slow log), the error type whose text is Redis's reply, and the context a handler gets.
//!
//! Each family file (`connection.rs`, `strings.rs`, `keys.rs`, `server.rs`, `debug.rs`)
//! holds its handlers and ends with its `COMMANDS` table; adding a command is one handler
//! plus one spec line. COMMAND INFO / DOCS / LIST / COUNT are generated from the table.
//! Handlers validate every argument before they change anything, then write their reply
//! into `ctx.out`; an `Err` is written by the dispatcher as the error reply.

pub mod args;
pub mod bitfield;
pub mod blocking;
pub mod collections;
pub mod connection;
pub mod debug;
pub mod dump;
pub mod hashes;
pub mod keys;
pub mod latency;
pub mod lists;
pub mod memory;
pub mod monitor;
pub mod pause;
pub mod pubsub;
pub mod replay;
pub mod server;
pub mod sets;
pub mod sort;
pub mod sorted_sets;
pub mod strings;
pub mod testing;
pub mod transactions;

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use hashbrown::HashMap;
use resp::{encode, Proto};

use crate::propagate::Propagation;
use crate::shared::{bump, ClientInfo, Shared, ThreadStats};

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
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
    ];
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

/// CLIENT REPLY ON|OFF|SKIP, as Redis's flags: SKIP marks the next command
/// (`SkipNext`), whose reply is then dropped (`Skip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    SkipNext,
    Skip,
}

impl ReplyMode {
    /// Whether the reply of the command that just ran is dropped.
    pub fn drops(self) -> bool {
        matches!(self, ReplyMode::Off | ReplyMode::Skip)
    }

    /// The state for the next command, once a command (not blocked) is done.
    pub fn after_command(self) -> ReplyMode {
        match self {
            ReplyMode::SkipNext => ReplyMode::Skip,
            ReplyMode::Skip => ReplyMode::On,
            other => other,
        }
    }
}

/// Per-connection state that the owning event loop keeps.
pub struct Client {
    pub info: Arc<ClientInfo>,
    pub db: usize,
    pub proto: Proto,
    pub authenticated: bool,
    /// Close once the pending output is written (QUIT, protocol error, CLIENT KILL of
    /// self).
    pub close_after_reply: bool,
    /// Commands queued since MULTI.
    pub multi: Option<transactions::Multi>,
    /// Keys watched by WATCH.
    pub watched: Vec<transactions::Watched>,
    /// Pub/sub channels and patterns.
    pub subs: pubsub::Subscriptions,
    /// Waiting in a blocking command: no further input runs until its reply comes.
    pub blocked: bool,
    /// Blocked by CLIENT PAUSE before its command ran: the command stays in the input
    /// and runs when the pause ends (`pause.rs`).
    pub postponed: bool,
    /// In MONITOR mode (`monitor.rs`).
    pub monitor: bool,
    /// CLIENT REPLY's state: whether this connection's replies are sent.
    pub reply_mode: ReplyMode,
    /// Set (only while `reply_mode` is not On) by a command whose reply is a push
    /// (the pub/sub confirmations): Redis sends those even under CLIENT REPLY OFF or
    /// SKIP, and clients wait for them.
    pub reply_is_push: bool,
    /// Set by a write command whose call changed nothing (a SETBIT that leaves the bit
    /// as it was, a BITFIELD of GETs or of SETs to the values there): as Redis, which
    /// counts and signals only changes, it touches no WATCH, does not count in
    /// `rdb_changes_since_last_save` and is not logged. Reset by the dispatcher.
    pub changed_nothing: bool,
    /// Running the queue of an EXEC (blocking commands do not block there).
    pub in_exec: bool,
    /// Replaying the append-only log at start: writes are not logged again.
    pub loading: bool,
    /// Log offset that the replies produced since the last batch end may not leave
    /// before (they reveal a write not yet on disk); 0 = none. See `aof`.
    pub need: u64,
    /// What the running call means to the log, as its handler stated it (SPOP: the
    /// SREM of what it popped); taken by the dispatcher's propagate phase.
    pub propagation: crate::propagate::Propagation,
    /// Input is not executed until this client's held replies leave: the log's tail
    /// was over its limit (`aof::TAIL_LIMIT`). The owning loop resumes it.
    pub paused_for_log: bool,
    /// CLIENT TRACKING's options while tracking is on (`crate::tracking`).
    pub tracking: Option<crate::tracking::Mode>,
    /// CLIENT CACHING's answer, for the next command only.
    pub caching: Option<bool>,
}

impl Client {
    pub fn new(info: Arc<ClientInfo>, authenticated: bool) -> Client {
        Client {
            info,
            db: 0,
            proto: Proto::Resp2,
            authenticated,
            close_after_reply: false,
            multi: None,
            watched: Vec::new(),
            subs: pubsub::Subscriptions::default(),
            blocked: false,
            postponed: false,
            monitor: false,
            reply_mode: ReplyMode::On,
            reply_is_push: false,
            changed_nothing: false,
            in_exec: false,
            loading: false,
            need: 0,
            propagation: crate::propagate::Propagation::AsSent,
            paused_for_log: false,
            tracking: None,
            caching: None,
        }
    }
}

/// What a handler works with.
pub struct Ctx<'a> {
    pub shared: &'a Shared,
    pub client: &'a mut Client,
    pub out: &'a mut Vec<u8>,
    /// The time of this command, read once per batch.
    pub now_ms: i64,
    pub stats: &'a ThreadStats,
    pub rng: &'a mut fastrand::Rng,
}

impl<'a> Ctx<'a> {
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
            crate::notify::notify(self, store::events::class::KEY_MISS, "keymiss", key);
            // A key found expired (the store queued `expired`) is published while the
            // caller holds its lock.
            crate::notify::publish_under_lock(crate::notify::at_once(self));
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
    /// Nothing when there is no log or this is its replay: then `records` is not called,
    /// so a server without a log copies no key or value. (`crate::propagate`.)
    pub fn propagate_as(&mut self, records: impl FnOnce() -> Vec<crate::propagate::Record>) {
        if self.shared.aof.is_some() && !self.client.loading {
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

/// One row of the flattened command table.
pub struct TableEntry {
    pub spec: &'static CommandSpec,
    /// "get", or "client|kill" for a subcommand.
    pub fullname: String,
    pub parent: Option<usize>,
    /// A plain data command (its group is a data type's or generic keys'): it may keep
    /// a shard lock across a batch (`coalescable`), and as a read it waits for the log
    /// offsets of its keys (`read_need`). Computed once from the group name.
    pub data: bool,
    /// Takes every event loop's gate itself (`flags::ALL_GATES`).
    pub all_gates: bool,
}

/// Whether a command group holds plain data commands (see `TableEntry::data`).
fn is_data_group(group: &str) -> bool {
    matches!(group, "string" | "list" | "set" | "sorted_set" | "hash" | "generic" | "bitmap")
}

/// Longest command name looked up by its packed form (`CommandTable::short`).
const SHORT_NAME: usize = 16;

/// `name` lower-cased and zero-padded into one integer, when it fits. Read with a few
/// word loads and lower-cased eight bytes at a time: a byte loop into a `u128` (or
/// bytes stored into an array and read back whole) cost ~150 instructions a lookup.
fn short_key(name: &[u8]) -> Option<u128> {
    if name.len() > SHORT_NAME {
        return None;
    }
    // Most names fit in the low word: the high one is then zero, with nothing to load.
    let (lo, hi) = if name.len() > 8 {
        (load_le(&name[..8]), ascii_lower8(load_le(&name[8..])))
    } else {
        (load_le(name), 0)
    };
    Some(u128::from(hi) << 64 | u128::from(ascii_lower8(lo)))
}

/// Up to 8 bytes as a little-endian integer, zero-padded.
fn load_le(bytes: &[u8]) -> u64 {
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    match bytes.len() {
        8 => u64::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]]),
        // Two overlapping 4-byte words: the shared bytes are the same in both.
        n @ 4..=7 => u64::from(word(bytes)) | u64::from(word(&bytes[n - 4..])) << (8 * (n - 4)),
        3 => u64::from(bytes[0]) | u64::from(bytes[1]) << 8 | u64::from(bytes[2]) << 16,
        2 => u64::from(bytes[0]) | u64::from(bytes[1]) << 8,
        1 => u64::from(bytes[0]),
        _ => 0,
    }
}

/// ASCII `A`-`Z` to `a`-`z` in each byte of `x`, other bytes unchanged.
fn ascii_lower8(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Per byte, on its low 7 bits (sums stay inside the byte): the high bit is set when
    // the byte is at least 'A', and when it is above 'Z'.
    let low7 = x & (0x7f * ONES);
    let at_least_a = low7 + (0x80 - u64::from(b'A')) * ONES;
    let above_z = low7 + (0x80 - u64::from(b'Z') - 1) * ONES;
    let upper = at_least_a & !above_z & !x & (0x80 * ONES);
    x | upper >> 2
}

/// Top-level command names by their packed form (`short_key`), in an open-addressed
/// table probed linearly from a multiplicative hash: one multiply, usually one probe.
/// hashbrown's general map (ahash of the `u128`, group probing) was 3% of the server's
/// CPU under pipelined LPUSH; with this table a lookup costs ~90 instructions instead of
/// ~130 (callgrind), name packing included.
struct ShortNames {
    /// Indexes into `names`, `EMPTY` where free; a power of two, at most a quarter
    /// full so that probe runs stay short.
    slots: Box<[u16]>,
    /// Each command's packed name and its index in the command table.
    names: Vec<(u128, usize)>,
}

impl ShortNames {
    const EMPTY: u16 = u16::MAX;

    fn new(names: &[(u128, usize)]) -> ShortNames {
        let size = (names.len() * 4).next_power_of_two().max(64);
        assert!(names.len() < usize::from(Self::EMPTY), "command table too large for u16 slots");
        let mut t = ShortNames { slots: vec![Self::EMPTY; size].into_boxed_slice(), names: names.to_vec() };
        for (i, &(key, _)) in names.iter().enumerate() {
            let mut h = t.home(key);
            while t.slots[h] != Self::EMPTY {
                h = (h + 1) & (size - 1);
            }
            t.slots[h] = i as u16;
        }
        t
    }

    fn home(&self, key: u128) -> usize {
        let folded = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
        let bits = self.slots.len().trailing_zeros();
        (folded.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }

    #[inline]
    fn get(&self, key: u128) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut h = self.home(key);
        loop {
            let s = self.slots[h];
            if s == Self::EMPTY {
                return None;
            }
            let (name, idx) = self.names[usize::from(s)];
            if name == key {
                return Some(idx);
            }
            h = (h + 1) & mask;
        }
    }
}

/// The flattened table: every command and subcommand with an index (used for stats).
pub struct CommandTable {
    pub entries: Vec<TableEntry>,
    top: HashMap<Vec<u8>, usize>,
    /// Top-level names of up to 16 bytes by their packed form (`short_key`): the lookup
    /// of every command, one integer hash instead of a lower-cased copy and a byte hash.
    short: ShortNames,
    subs: HashMap<(usize, Vec<u8>), usize>,
}

/// Every family's table.
fn families() -> [&'static [CommandSpec]; 17] {
    [
        connection::COMMANDS,
        strings::COMMANDS,
        bitfield::COMMANDS,
        keys::COMMANDS,
        dump::COMMANDS,
        hashes::COMMANDS,
        lists::COMMANDS,
        blocking::COMMANDS,
        sets::COMMANDS,
        sorted_sets::COMMANDS,
        sort::COMMANDS,
        transactions::COMMANDS,
        pubsub::COMMANDS,
        server::COMMANDS,
        latency::COMMANDS,
        monitor::COMMANDS,
        debug::COMMANDS,
    ]
}

impl CommandTable {
    fn build() -> CommandTable {
        let mut t = CommandTable { entries: Vec::new(), top: HashMap::new(), short: ShortNames::new(&[]), subs: HashMap::new() };
        let mut short = Vec::new();
        for family in families() {
            for spec in family {
                let idx = t.entries.len();
                t.entries.push(TableEntry {
                    spec,
                    fullname: spec.name.to_string(),
                    parent: None,
                    data: is_data_group(spec.group),
                    all_gates: spec.flags & flags::ALL_GATES != 0,
                });
                t.top.insert(spec.name.as_bytes().to_vec(), idx);
                if let Some(key) = short_key(spec.name.as_bytes()) {
                    short.push((key, idx));
                }
                for sub in spec.subcommands {
                    let sidx = t.entries.len();
                    t.entries.push(TableEntry {
                        spec: sub,
                        fullname: format!("{}|{}", spec.name, sub.name),
                        parent: Some(idx),
                        data: is_data_group(sub.group),
                        all_gates: false,
                    });
                    t.subs.insert((idx, sub.name.as_bytes().to_vec()), sidx);
                }
            }
        }
        t.short = ShortNames::new(&short);
        t
    }

    /// Finds a top-level command by name, case-insensitively, without allocating.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        if let Some(key) = short_key(name) {
            let idx = self.short.get(key)?;
            // Zero padding makes "get" and "get\0" one key: the length tells them apart.
            return (self.entries[idx].spec.name.len() == name.len()).then_some(idx);
        }
        self.lookup_long(name)
    }

    /// Names longer than `SHORT_NAME` (none of the common commands): out of line, so
    /// that its stack buffer does not weigh on every lookup.
    #[cold]
    #[inline(never)]
    fn lookup_long(&self, name: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = lowercase_into(name, &mut buf)?;
        self.top.get(lower).copied()
    }

    /// Finds a subcommand of `parent`.
    pub fn lookup_sub(&self, parent: usize, name: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = lowercase_into(name, &mut buf)?;
        self.subs.get(&(parent, lower.to_vec())).copied()
    }

    /// Top-level entries only, in table order.
    pub fn top_level(&self) -> impl Iterator<Item = (usize, &TableEntry)> {
        self.entries.iter().enumerate().filter(|(_, e)| e.parent.is_none())
    }

    /// Subcommand entries of a parent.
    pub fn children(&self, parent: usize) -> impl Iterator<Item = (usize, &TableEntry)> {
        self.entries.iter().enumerate().filter(move |(_, e)| e.parent == Some(parent))
    }
}

fn lowercase_into<'b>(name: &[u8], buf: &'b mut [u8; 64]) -> Option<&'b [u8]> {
    if name.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    Some(&buf[..name.len()])
}

/// The command table, built on first use.
pub fn table() -> &'static CommandTable {
    static TABLE: OnceLock<CommandTable> = OnceLock::new();
    TABLE.get_or_init(CommandTable::build)
}

/// `rename-command` (redis.conf): commands clients reach by another name, or not at all.
struct Renames {
    /// New name (lower case) -> the command.
    to: hashbrown::HashMap<Vec<u8>, usize>,
    /// Commands no longer reachable by their own name.
    hidden: Vec<usize>,
}

static RENAMES: OnceLock<Renames> = OnceLock::new();

/// Applies the config's `rename-command` pairs (original, new; an empty new name
/// disables the command), once, at start, with Redis's errors for an unknown command and
/// a name taken: Err((index of the pair, reason)). The log's replay still knows every
/// command by its own name too (`lookup_any`), as Redis's lookupCommandOrOriginal.
pub fn install_renames(pairs: &[(String, String)]) -> Result<(), (usize, String)> {
    if pairs.is_empty() {
        return Ok(());
    }
    let t = table();
    let mut r = Renames { to: hashbrown::HashMap::new(), hidden: Vec::new() };
    for (n, (from, to)) in pairs.iter().enumerate() {
        let Some(idx) = lookup_client_in(t, &r, from.as_bytes()) else {
            return Err((n, "No such command in rename-command".into()));
        };
        let to = to.to_ascii_lowercase();
        if !to.is_empty() && lookup_client_in(t, &r, to.as_bytes()).is_some() {
            return Err((n, "Target command name already exists".into()));
        }
        r.to.retain(|_, i| *i != idx);
        r.hidden.push(idx);
        if !to.is_empty() {
            r.to.insert(to.into_bytes(), idx);
        }
    }
    RENAMES.set(r).map_err(|_| (0, "rename-command applied twice".to_string()))
}

fn lookup_client_in(t: &CommandTable, r: &Renames, name: &[u8]) -> Option<usize> {
    if !r.to.is_empty() {
        if let Some(&idx) = r.to.get(&name.to_ascii_lowercase()) {
            return Some(idx);
        }
    }
    t.lookup(name).filter(|idx| !r.hidden.contains(idx))
}

/// A command as clients name it (after `rename-command`).
#[inline]
pub fn lookup_client(name: &[u8]) -> Option<usize> {
    let t = table();
    match RENAMES.get() {
        None => t.lookup(name),
        Some(r) => lookup_client_in(t, r, name),
    }
}

/// A command by the name a client gave it or by its own (the log's replay: records
/// written as sent use the new names, those a command states, SET ... PXAT say, the own).
pub fn lookup_any(name: &[u8]) -> Option<usize> {
    lookup_client(name).or_else(|| table().lookup(name))
}

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

fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i64;
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
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

/// Runs one command: lookup, checks, handler, stats, slow log.
pub fn execute(ctx: &mut Ctx<'_>, args: &[&[u8]]) {
    let found = if ctx.client.loading { lookup_any(args[0]) } else { lookup_client(args[0]) };
    execute_found(ctx, found, args);
}

/// [`execute`] for a caller that has looked the command name up already
/// ([`CommandTable::lookup`] of `args[0]`).
pub fn execute_found(ctx: &mut Ctx<'_>, found: Option<usize>, args: &[&[u8]]) {
    // The phases are functions of their own for the reader; inlined here, as one body,
    // they cost what one function did (passed between functions, the ordering stripes'
    // guard was copied twice: +8% instructions per pipelined GET, callgrind).
    let t = table();
    let Some(idx) = resolve(ctx, t, found, args) else { return };
    let spec = t.entries[idx].spec;
    if !admit(ctx, t, idx, spec, args) {
        return;
    }
    // Before the call: the write's ordering stripes, its WATCH targets, a tracked read's
    // keys, the database it starts in (SELECT inside MULTI changes it). Locals, not a
    // struct: moved through one, they cost 30 instructions per command.
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
    if let Some(text) = pubsub::subscribed_mode_error(ctx, t.entries[idx].parent.map_or(spec, |p| t.entries[p].spec)) {
        refuse(ctx, idx, &text);
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
    if pause::postpones(ctx, spec) && blocking::postpone(ctx, spec) {
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

/// Before a call: a write takes its keys' ordering stripes, held
/// until its records are in the log (blocking pops order and propagate themselves,
/// under the waiters' registry lock). Kept a local of the dispatcher's: the guard is
/// large, and moved through a struct it was copied twice per command.
#[inline(always)]
fn order_write<'s>(ctx: &Ctx<'s>, spec: &CommandSpec, args: &[&[u8]]) -> Option<crate::aof::Ordered<'s>> {
    let shared: &'s Shared = ctx.shared;
    match shared.aof.as_ref().filter(|_| !ctx.client.loading) {
        Some(aof) if spec.flags & flags::WRITE != 0 && spec.flags & flags::BLOCKING == 0 => Some(aof_order(aof, ctx, spec, args)),
        _ => None,
    }
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
fn propagate(ctx: &mut Ctx<'_>, data: bool, spec: &CommandSpec, args: &[&[u8]], ordered: &mut Option<crate::aof::Ordered<'_>>, db: usize, ok: bool) {
    let changed_nothing = std::mem::take(&mut ctx.client.changed_nothing);
    // Outside a call the client's propagation is always AsSent (taken here after each
    // call), so only a handler's statement needs taking.
    let what = match ctx.client.propagation {
        Propagation::AsSent => Propagation::AsSent,
        _ => std::mem::take(&mut ctx.client.propagation),
    };
    if spec.flags & flags::WRITE != 0 && ok && !changed_nothing {
        bump(&ctx.stats.writes, 1);
    }
    let Some(aof) = ctx.shared.aof.as_ref().filter(|_| !ctx.client.loading) else {
        // Events not published yet: those of a handler that queued none itself (a read
        // that found a key expired, a miss).
        crate::notify::flush(ctx.shared, ctx.client.need, ctx.client.info.id);
        return;
    };
    let need = match ordered.as_mut() {
        Some(o) => {
            let what = if changed_nothing && matches!(what, Propagation::AsSent) { Propagation::Nothing } else { what };
            let end = if ok { crate::propagate::call(aof, db, ctx.now_ms, args, what) } else { None };
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
            if spec.flags & flags::READS_ANY_KEY != 0 { need.max(aof.need_for_all()) } else { need }
        }
        None => read_need(aof, ctx, spec, data, args),
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
    if result.is_ok() && spec.flags & flags::WRITE != 0 && !ctx.client.in_exec {
        // Waiters on keys this write filled are served now, in FIFO order.
        blocking::serve(ctx.shared, ctx.now_ms);
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
        && !t.entries[idx].parent.is_some_and(|p| t.entries[p].spec.flags & flags::KEEPS_CACHING != 0)
    {
        ctx.client.caching = None;
    }
    publish_client_state(ctx.client);
    let threshold = ctx.shared.slowlog_threshold_us.load(Ordering::Relaxed);
    if threshold >= 0 && us as i64 >= threshold && spec.flags & flags::SKIP_SLOWLOG == 0 {
        let name = ctx.client.info.name.lock().clone();
        ctx.shared.slowlog_push(us, args, &ctx.client.info.addr, &name);
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
    data && ctx.shared.aof.is_none() && !ctx.client.in_exec
}

/// Takes the ordering stripes a write command needs: those of its keys ([`command_keys`]:
/// numkeys commands and SORT's STORE included), all of them for FLUSHALL, FLUSHDB and
/// SWAPDB, and those of every argument for other keyless writes.
fn aof_order<'a>(aof: &'a crate::aof::Aof, ctx: &Ctx<'_>, spec: &CommandSpec, args: &[&[u8]]) -> crate::aof::Ordered<'a> {
    match command_keys(spec, args) {
        Some(keys) if !keys.is_empty() => aof.order_keys(ctx.ks(), keys.iter().map(|&i| args[i])),
        _ if spec.flags & flags::WHOLE_KEYSPACE != 0 => aof.order_all(),
        // Other keyless writes, and a numkeys count that is not valid (the command fails
        // on it): every argument, a superset of any keys.
        _ => aof.order_keys(ctx.ks(), args[1..].iter()),
    }
}

/// The log offset a read's reply must wait for: the newest write to the keys it read,
/// or to any key for commands that read the keyspace as a whole (SORT_RO's patterns
/// read keys its spec does not name). Commands that reveal
/// nothing of the keyspace (PING, CLIENT ...) wait for nothing, and neither does INFO:
/// its key counts are diagnostics, and an operator must be able to read
/// `aof_last_write_status` while the disk fails.
fn read_need(aof: &crate::aof::Aof, ctx: &Ctx<'_>, spec: &CommandSpec, data: bool, args: &[&[u8]]) -> u64 {
    let keys = command_keys(spec, args).unwrap_or_default();
    if data && !keys.is_empty() && spec.flags & flags::READS_ANY_KEY == 0 {
        aof.need_for_keys(ctx.ks(), keys.iter().map(|&i| args[i]))
    } else if data || spec.flags & flags::READS_ANY_KEY != 0 {
        aof.need_for_all()
    } else {
        0
    }
}

/// Copies the state CLIENT LIST shows from the owner's client into the shared record.
pub fn publish_client_state(client: &Client) {
    let info = &client.info;
    info.sub.store(client.subs.channels.len(), Ordering::Relaxed);
    info.psub.store(client.subs.patterns.len(), Ordering::Relaxed);
    info.multi.store(client.multi.as_ref().map_or(-1, |m| m.queue.len() as i64), Ordering::Relaxed);
    info.blocked.store(client.blocked, Ordering::Relaxed);
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
    CommandSpec { name, arity, flags, keys, acl, group, summary, handler, subcommands: &[] }
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
    }
}

fn container_without_subcommand(_: &mut Ctx<'_>, args: &[&[u8]]) -> Result<(), CommandError> {
    // Arity -2 guarantees a subcommand word; dispatch resolves known ones first.
    Err(CommandError::Arity(String::from_utf8_lossy(args[0]).to_ascii_lowercase()))
}

/// Where a command whose keys move with its arguments (Redis's `movablekeys`) has them.
#[derive(Clone, Copy)]
enum Movable {
    /// `numkeys key ...` with the count at `count_at`, after the keys at `fixed`.
    NumKeys { fixed: &'static [usize], count_at: usize },
    /// SORT: its key, and the last STORE's destination.
    Sort,
}

fn movable(name: &str) -> Option<Movable> {
    Some(match name {
        "zunionstore" | "zinterstore" | "zdiffstore" => Movable::NumKeys { fixed: &[1], count_at: 2 },
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "lmpop" | "zmpop" => {
            Movable::NumKeys { fixed: &[], count_at: 1 }
        }
        "blmpop" | "bzmpop" => Movable::NumKeys { fixed: &[], count_at: 2 },
        "sort" => Movable::Sort,
        _ => return None,
    })
}

/// Whether COMMAND INFO flags the command `movablekeys` (SORT_RO too: Redis counts its
/// BY/GET patterns, though GETKEYS names only its key).
pub fn has_movable_keys(spec: &CommandSpec) -> bool {
    movable(spec.name).is_some() || spec.name == "sort_ro"
}

/// Positions of a command's keys, as COMMAND GETKEYS names them: the spec's range, or,
/// for a command whose keys move, found in `args` as Redis finds them (a numkeys count;
/// SORT's last STORE, skipping LIMIT's, BY's and GET's arguments). None when the count
/// is not a number from 1 to the arguments left.
pub fn command_keys(spec: &CommandSpec, args: &[&[u8]]) -> Option<Vec<usize>> {
    match movable(spec.name) {
        None => Some(key_positions(spec, args.len())),
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
    }
}

/// The keys a write command may change (WATCH), when they can be told from its
/// arguments: SORT changes only its STORE destination, ZUNIONSTORE and the like only
/// theirs (the spec's range), S*STORE, ZRANGESTORE and BITOP their first key, the *MPOP
/// commands one of their numkeys keys, a BITFIELD of GETs nothing. None for a keyless
/// write (the caller considers every key).
pub fn written_keys(spec: &CommandSpec, args: &[&[u8]]) -> Option<Vec<usize>> {
    match movable(spec.name) {
        Some(Movable::Sort) => Some(command_keys(spec, args)?.into_iter().skip(1).collect()),
        Some(Movable::NumKeys { fixed: &[], .. }) if spec.flags & flags::WRITE != 0 => command_keys(spec, args),
        None if spec.name == "bitfield" && !bitfield::writes(args) => Some(Vec::new()),
        // Their spec's range names their sources too, which they only read.
        None if matches!(spec.name, "sinterstore" | "sunionstore" | "sdiffstore" | "zrangestore" | "bitop") => {
            Some(key_positions(spec, args.len()).into_iter().take(1).collect())
        }
        _ => Some(key_positions(spec, args.len())).filter(|k| !k.is_empty()),
    }
}

/// Keys of a command invocation per its spec's range (first, last, step); empty when
/// the spec has none. See [`command_keys`] for the keys of every command.
pub fn key_positions(spec: &CommandSpec, argc: usize) -> Vec<usize> {
    let (first, last, step) = spec.keys;
    if first <= 0 || step <= 0 {
        return Vec::new();
    }
    let last = if last < 0 { argc as i32 + last } else { last };
    (first..=last.min(argc as i32 - 1)).step_by(step as usize).map(|i| i as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_unique_names_and_lookups_ignore_case() {
        let t = table();
        let mut names: Vec<&str> = t.entries.iter().map(|e| e.fullname.as_str()).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate command names");
        let get = t.lookup(b"GeT").expect("get exists");
        assert_eq!(t.entries[get].fullname, "get");
        let client = t.lookup(b"client").expect("client exists");
        let kill = t.lookup_sub(client, b"KILL").expect("client kill");
        assert_eq!(t.entries[kill].fullname, "client|kill");
        assert!(t.lookup(&[b'x'; 100]).is_none());
        // Every top-level name, in any case, finds itself; padding and near-misses find nothing.
        for (idx, e) in t.top_level() {
            assert_eq!(t.lookup(e.spec.name.to_ascii_uppercase().as_bytes()), Some(idx), "{}", e.spec.name);
            let mut padded = e.spec.name.as_bytes().to_vec();
            padded.push(0);
            assert_eq!(t.lookup(&padded), None, "{} with a NUL", e.spec.name);
        }
        assert!(t.lookup(b"ZREMRANGEBYSCORE").is_some());
        assert_eq!(t.lookup(b"get\0\0"), None);
        assert_eq!(t.lookup(b"ge"), None);
        assert_eq!(t.lookup(b""), None);
        assert_eq!(t.lookup(b"g\xc5t"), None);
    }

    #[test]
    fn short_keys_lower_case_ascii_only_and_keep_every_byte() {
        let slow = |name: &[u8]| {
            let mut key = 0u128;
            for (i, b) in name.iter().enumerate() {
                key |= u128::from(b.to_ascii_lowercase()) << (8 * i);
            }
            key
        };
        let mut names: Vec<Vec<u8>> = vec![b"".to_vec(), b"@[`{".to_vec(), b"AZaz".to_vec()];
        for len in 1..=16 {
            names.push((0..len).map(|i| b"GeTzREMRANGEBYSCORE"[i % 19]).collect());
            names.push((0..len).map(|i| (i as u8).wrapping_mul(37).wrapping_add(0x3f)).collect());
            names.push((0..len).map(|i| 0xc1 + i as u8).collect());
        }
        for b in 0..=255u8 {
            names.push(vec![b; 3]);
            names.push(vec![b; 11]);
        }
        for name in &names {
            assert_eq!(short_key(name), Some(slow(name)), "{name:?}");
        }
        assert_eq!(short_key(&[b'a'; 17]), None);
    }

    #[test]
    fn short_names_are_found_within_a_few_probes() {
        // The hash spreads real command names: a bad multiplier or fold would leave long
        // runs that every lookup of those commands walks.
        let s = &table().short;
        let probes: Vec<usize> = (0..s.names.len())
            .map(|i| {
                let mut h = s.home(s.names[i].0);
                let mut n = 1;
                while usize::from(s.slots[h]) != i {
                    h = (h + 1) & (s.slots.len() - 1);
                    n += 1;
                }
                n
            })
            .collect();
        let mean = probes.iter().sum::<usize>() as f64 / probes.len() as f64;
        assert!(probes.len() > 150, "{} names", probes.len());
        assert!(mean < 1.5 && probes.iter().all(|&n| n <= 8), "mean {mean}, max {:?}", probes.iter().max());
    }

    #[test]
    fn unknown_command_text_matches_redis() {
        assert_eq!(
            unknown_command(&[b"foo", b"a", b"b"]),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
        );
        assert_eq!(unknown_command(&[b"foo"]), "ERR unknown command 'foo', with args beginning with: ");
    }
}
