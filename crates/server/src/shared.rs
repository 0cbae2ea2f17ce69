//! State every event loop shares: the keyspace, the live configuration, the registry of
//! clients (for CLIENT LIST / KILL and INFO clients), per-thread statistics, the slow
//! log, the shutdown signal, and each subsystem's state (`state/`, the append-only log's
//! `Aof`, the loops' wakers), composed here. Nothing here is touched per request except
//! through per-thread counters and the shard locks inside the keyspace. This file
//! imports only what lies below it: what acts across subsystems takes `&Shared` from
//! above (docs/architecture.md, "Layers of the server crate").

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::config::Config;
use store::Keyspace;

/// Per-command counters of one thread, summed on demand by INFO commandstats.
pub struct CommandStats {
    pub calls: AtomicU64,
    pub usec: AtomicU64,
    pub rejected_calls: AtomicU64,
    pub failed_calls: AtomicU64,
}

/// Counters owned by one event loop. Only that loop writes them (plain load+store with
/// relaxed ordering, no read-modify-write), anyone may read them.
pub struct ThreadStats {
    pub commands: Box<[CommandStats]>,
    pub connections_received: AtomicU64,
    pub rejected_connections: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
    pub keyspace_hits: AtomicU64,
    pub keyspace_misses: AtomicU64,
    pub total_commands: AtomicU64,
    pub total_error_replies: AtomicU64,
    /// Write commands that succeeded (rdb_changes_since_last_save).
    pub writes: AtomicU64,
    /// Keys removed by maxmemory's eviction (INFO evicted_keys).
    pub evicted_keys: AtomicU64,
    /// Error replies by code, indexed like [`ERROR_CODES`].
    pub errors: Box<[AtomicU64]>,
    /// Error replies of other codes (a script's `redis.error_reply`, INVALIDOBJ,
    /// NOTBUSY ...), at most [`MAX_OTHER_ERROR_CODES`] of them; locked only for such a
    /// reply and by INFO.
    pub other_errors: Mutex<Vec<(String, u64)>>,
    /// The clock that times this thread's commands: the TSC where it is constant (as
    /// Redis 7's monotonic clock), read raw and scaled once per command.
    pub clock: quanta::Clock,
    /// Per-command latency histograms (`latency.rs`).
    pub latency: crate::latency::LoopLatencies,
}

/// The error codes counted without a lock for INFO errorstats (the first word of an
/// error reply); others go to [`ThreadStats::other_errors`].
pub const ERROR_CODES: &[&str] = &[
    "WRONGTYPE", "NOAUTH", "WRONGPASS", "NOPROTO", "EXECABORT", "NOSCRIPT", "BUSY", "MISCONF",
    "READONLY", "LOADING", "OOM", "NOPERM", "BUSYKEY", "ERR",
];

/// Distinct codes outside [`ERROR_CODES`] one loop counts; past them a new code counts
/// as ERR, so that clients inventing codes cannot grow INFO without bound (Redis 7.2
/// caps its table at 128 likewise).
pub const MAX_OTHER_ERROR_CODES: usize = 128;

pub use crate::counters::bump;
pub use crate::state::clients::ClientInfo;

impl ThreadStats {
    pub fn new(commands: usize) -> ThreadStats {
        ThreadStats {
            commands: (0..commands)
                .map(|_| CommandStats {
                    calls: AtomicU64::new(0),
                    usec: AtomicU64::new(0),
                    rejected_calls: AtomicU64::new(0),
                    failed_calls: AtomicU64::new(0),
                })
                .collect(),
            connections_received: AtomicU64::new(0),
            rejected_connections: AtomicU64::new(0),
            net_input_bytes: AtomicU64::new(0),
            net_output_bytes: AtomicU64::new(0),
            keyspace_hits: AtomicU64::new(0),
            keyspace_misses: AtomicU64::new(0),
            total_commands: AtomicU64::new(0),
            total_error_replies: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            evicted_keys: AtomicU64::new(0),
            errors: ERROR_CODES.iter().map(|_| AtomicU64::new(0)).collect(),
            other_errors: Mutex::new(Vec::new()),
            clock: quanta::Clock::new(),
            latency: crate::latency::LoopLatencies::new(commands),
        }
    }

    /// Zeroes every counter (CONFIG RESETSTAT). Racy against the owner's updates by
    /// design: a reset that loses an in-flight increment is acceptable, as in Redis.
    pub fn reset(&self) {
        for c in self.commands.iter() {
            c.calls.store(0, Ordering::Relaxed);
            c.usec.store(0, Ordering::Relaxed);
            c.rejected_calls.store(0, Ordering::Relaxed);
            c.failed_calls.store(0, Ordering::Relaxed);
        }
        for c in self.errors.iter() {
            c.store(0, Ordering::Relaxed);
        }
        self.other_errors.lock().clear();
        self.latency.reset();
        for c in [
            &self.connections_received,
            &self.rejected_connections,
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.keyspace_hits,
            &self.keyspace_misses,
            &self.total_commands,
            &self.total_error_replies,
            &self.evicted_keys,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

impl ThreadStats {
    /// Counts one error reply whose text is `text` (code first, e.g. "ERR ...").
    /// The code is the word before the first space within the reply's first 32 bytes
    /// (its `-` included), else ERR, as Redis's afterErrorReply takes it.
    pub fn count_error(&self, text: &str) {
        bump(&self.total_error_replies, 1);
        let code = match text.as_bytes().iter().take(31).position(|&b| b == b' ') {
            Some(end) => &text[..end],
            None => "ERR",
        };
        if let Some(i) = ERROR_CODES.iter().position(|c| *c == code) {
            bump(&self.errors[i], 1);
            return;
        }
        let mut others = self.other_errors.lock();
        if let Some(entry) = others.iter_mut().find(|(c, _)| c == code) {
            entry.1 += 1;
        } else if others.len() < MAX_OTHER_ERROR_CODES {
            others.push((code.to_string(), 1));
        } else {
            drop(others);
            bump(&self.errors[ERROR_CODES.len() - 1], 1);
        }
    }
}

/// The encoding thresholds of the collection types (CONFIG SET changes them).
pub struct TypeLimits {
    pub hash_entries: AtomicUsize,
    pub hash_value: AtomicUsize,
    pub set_intset: AtomicUsize,
    pub zset_entries: AtomicUsize,
    pub zset_value: AtomicUsize,
}

impl Default for TypeLimits {
    fn default() -> TypeLimits {
        TypeLimits {
            hash_entries: AtomicUsize::new(512),
            hash_value: AtomicUsize::new(64),
            set_intset: AtomicUsize::new(512),
            zset_entries: AtomicUsize::new(128),
            zset_value: AtomicUsize::new(64),
        }
    }
}

impl TypeLimits {
    pub fn hash(&self) -> store::types::hash::HashLimits {
        store::types::hash::HashLimits {
            max_listpack_entries: self.hash_entries.load(Ordering::Relaxed),
            max_listpack_value: self.hash_value.load(Ordering::Relaxed),
        }
    }

    pub fn zset(&self) -> store::types::zset::ZLimits {
        store::types::zset::ZLimits {
            max_listpack_entries: self.zset_entries.load(Ordering::Relaxed),
            max_listpack_value: self.zset_value.load(Ordering::Relaxed),
        }
    }

    pub fn intset(&self) -> usize {
        self.set_intset.load(Ordering::Relaxed)
    }
}

/// A subscriber: the loop that owns it and its client id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subscriber {
    pub owner: usize,
    pub id: u64,
    pub resp3: bool,
}

/// Channel and pattern subscriptions of all clients.
#[derive(Default)]
pub struct PubSub {
    pub channels: hashbrown::HashMap<Vec<u8>, Vec<Subscriber>>,
    /// Patterns in subscription order, each with its subscribers.
    pub patterns: Vec<(Vec<u8>, Vec<Subscriber>)>,
    /// Shard channels (SSUBSCRIBE, SPUBLISH) -> subscribers.
    pub shard_channels: hashbrown::HashMap<Vec<u8>, Vec<Subscriber>>,
}

/// What one loop is asked to do for one of its clients.
pub struct Mail {
    pub client_id: u64,
    pub bytes: bytes::Bytes,
    /// The client was blocked and these bytes are its reply: unblock it.
    pub unblock: bool,
    /// Log offset the bytes may not leave before (they reveal a write); 0 = none.
    pub need: u64,
    /// A served blocked pop's write, made for this client on another loop: the
    /// replication stream's offset past its record, which the client's next WAIT waits
    /// for (`Client::repl_woff`); 0 = none.
    pub repl_woff: u64,
}

impl Mail {
    /// Bytes for a client's output (a message, a MONITOR line, a piece of the
    /// replication stream or of a snapshot).
    pub fn output(client_id: u64, bytes: bytes::Bytes) -> Mail {
        Mail { client_id, bytes, unblock: false, need: 0, repl_woff: 0 }
    }

    /// A blocked client's reply, which unblocks it.
    pub fn unblocking(client_id: u64, bytes: bytes::Bytes) -> Mail {
        Mail { unblock: true, ..Mail::output(client_id, bytes) }
    }

    /// The same, held until the log reaches `need` (it reveals a write).
    pub fn after_log(self, need: u64) -> Mail {
        Mail { need, ..self }
    }
}

impl Shared {
    /// Posts bytes to a client's loop and wakes it.
    pub fn post(&self, to: Subscriber, bytes: bytes::Bytes) {
        self.post_mail(to.owner, Mail::output(to.id, bytes));
    }

    /// Asks client `id`'s event loop to close it (from any thread).
    pub fn kill_client(&self, id: u64) {
        if let Some(info) = self.clients.lock().get(&id).cloned() {
            info.killed.store(true, Ordering::SeqCst);
            self.wake(info.owner.load(Ordering::SeqCst));
        }
    }

    /// Posts a mail to loop `owner` and wakes it, unless mail was already waiting: the
    /// loop takes its whole mailbox once woken, so one wake-up per mailbox filling is
    /// enough (a replica's stream or a busy channel would cost a write(2) per mail).
    pub fn post_mail(&self, owner: usize, mail: Mail) {
        if self.post_mail_quietly(owner, mail) {
            self.wake(owner);
        }
    }

    /// Posts mail to loop `owner` without waking it: for the loop's own thread, which
    /// drains its mailbox before it next waits. True when the mailbox was empty.
    pub fn post_mail_quietly(&self, owner: usize, mail: Mail) -> bool {
        if let Some(mb) = self.mailboxes.get(owner) {
            let was_empty = {
                let mut m = mb.lock();
                let was_empty = m.is_empty();
                m.push(mail);
                was_empty
            };
            return was_empty;
        }
        false
    }
}

/// One event loop's mailbox, on a cache line of its own: each loop takes its own after
/// every batch (`net::take_mail`), and two mailboxes on one line would move it between
/// two loops' cores at every turn.
#[repr(align(64))]
#[derive(Default)]
pub struct Mailbox(Mutex<Vec<Mail>>);

impl std::ops::Deref for Mailbox {
    type Target = Mutex<Vec<Mail>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// A watched key's version and how many clients watch it.
#[derive(Debug, Default, Clone, Copy)]
pub struct WatchSlot {
    pub version: u64,
    pub watchers: usize,
}

impl Shared {
    /// Registers a watch of `key` in `db`; returns its current version.
    pub fn watch(&self, db: usize, key: &[u8]) -> u64 {
        let mut w = self.watches.lock();
        let slot = w.entry((db, key.to_vec())).or_default();
        slot.watchers += 1;
        self.watch_count.fetch_add(1, Ordering::SeqCst);
        slot.version
    }

    /// Drops one watch of `key` in `db`.
    pub fn unwatch(&self, db: usize, key: &[u8]) {
        let mut w = self.watches.lock();
        let id = (db, key.to_vec());
        if let Some(slot) = w.get_mut(&id) {
            slot.watchers -= 1;
            if slot.watchers == 0 {
                w.remove(&id);
            }
            self.watch_count.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The version of a watched key (0 when nobody watches it).
    pub fn watch_version(&self, db: usize, key: &[u8]) -> u64 {
        self.watches.lock().get(&(db, key.to_vec())).map_or(0, |s| s.version)
    }

    /// Marks a key as modified for its watchers.
    pub fn touch(&self, db: usize, key: &[u8]) {
        if self.watch_count.load(Ordering::SeqCst) == 0 {
            return;
        }
        if let Some(slot) = self.watches.lock().get_mut(&(db, key.to_vec())) {
            slot.version += 1;
        }
    }
}

/// One entry of the slow log.
#[derive(Clone)]
pub struct SlowlogEntry {
    pub id: u64,
    pub time_s: i64,
    pub duration_us: u64,
    pub args: Vec<Vec<u8>>,
    pub addr: String,
    pub name: Vec<u8>,
}

/// Everything the event loops share.
pub struct Shared {
    pub keyspace: Keyspace,
    pub config: RwLock<Config>,
    pub started: Instant,
    pub started_unix_ms: i64,
    pub run_id: String,
    pub clients: Mutex<std::collections::BTreeMap<u64, Arc<ClientInfo>>>,
    pub next_client_id: AtomicU64,
    pub connected_clients: AtomicUsize,
    pub thread_stats: Vec<Arc<ThreadStats>>,
    pub wakers: Arc<crate::waker::Wakers>,
    pub shutdown: AtomicBool,
    pub slowlog: Mutex<std::collections::VecDeque<SlowlogEntry>>,
    pub slowlog_next_id: AtomicU64,
    /// Copy of slowlog-log-slower-than, read on every command without the config lock.
    pub slowlog_threshold_us: AtomicI64,
    /// `latency-tracking`, read by every command.
    pub latency_tracking: AtomicBool,
    /// The latency monitor (`latency-monitor-threshold`), shared with the log's writer.
    pub latency_monitor: Arc<crate::latency_monitor::LatencyMonitor>,
    /// Client-side caching (CLIENT TRACKING): who tracks what.
    pub tracking: crate::state::tracking::Tracking,
    /// Every script EVAL ran or SCRIPT LOAD loaded.
    pub scripts: crate::script::cache::ScriptCache,
    /// The function libraries (FUNCTION LOAD).
    pub functions: crate::script::functions::Functions,
    /// New connections must authenticate (the default user has a password or is off:
    /// `acl_changed`); read on every command without the config lock.
    pub auth_required: AtomicBool,
    /// ACL users (`acl/`).
    pub acl: crate::acl::Acl,
    /// The TLS configuration new `tls-port` connections get (`tls.rs`).
    pub tls: crate::tls::Context,
    /// `requirepass` as last applied to the default user (it follows only a change).
    applied_requirepass: Mutex<Option<Option<Vec<u8>>>>,
    pub active_expire_enabled: AtomicBool,
    /// Copies of `hz` and `client-query-buffer-limit`, read every loop iteration or
    /// batch without touching the config lock (whose cache line the loops would
    /// otherwise bounce between cores).
    pub hz: AtomicU64,
    pub query_buffer_limit: AtomicU64,
    /// `client-output-buffer-limit`'s normal and pubsub classes, read once per batch.
    pub output_limits: crate::output_limit::Limits,
    /// Copies of the encoding thresholds, read by every collection write.
    pub type_limits: TypeLimits,
    /// maxmemory: the limit, the eviction settings and the memory estimate (`evict.rs`).
    pub memory: crate::state::memory::Memory,
    /// One gate per event loop: a command holds its own loop's gate for reading (never
    /// contended but by EXEC), EXEC holds every gate for writing, so a transaction is
    /// isolated from all other commands without a global lock on the request path.
    pub gates: Vec<RwLock<()>>,
    /// Versions of watched keys, by (db, key); only keys some client watches are here.
    pub watches: Mutex<hashbrown::HashMap<(usize, Vec<u8>), WatchSlot>>,
    /// Number of active watches; write commands skip the registry when it is 0.
    pub watch_count: AtomicUsize,
    /// Pub/sub subscriptions.
    pub pubsub: Mutex<PubSub>,
    /// The loops' load and the queues that move connections between them.
    pub loops: crate::state::loops::Loops,
    /// Per event loop: messages for its connections, posted by any thread, drained by
    /// the loop when woken and after each batch.
    pub mailboxes: Vec<Mailbox>,
    /// Clients in MONITOR mode, as (owning loop, client id) (`command/monitor.rs`).
    pub monitors: Mutex<Vec<(usize, u64)>>,
    /// How many there are: the one load every command makes for MONITOR.
    pub monitor_count: AtomicUsize,
    /// Clients blocked in BLPOP and friends.
    pub blocked: Mutex<crate::state::waiters::Registry>,
    /// The registry's keys with waiters, readable without its lock.
    pub waited: Arc<crate::state::waiters::WaitedKeys>,
    /// CLIENT PAUSE's state (`command::pause`).
    pub pause: crate::state::pause::Pause,
    /// Number of blocked clients; writes skip the registry when it is 0.
    pub blocked_count: AtomicUsize,
    pub stat_expired_stale_perc: AtomicU64,
    /// The append-only log: its state, and whether it is on (`appendonly`; CONFIG SET
    /// turns it on and off).
    pub aof: crate::aof::AofSlot,
    /// The ordering stripes writes hold while their records are propagated (`order.rs`).
    pub stripes: crate::order::Stripes,
    /// The replication stream and the replicas, the master's side (`replication/`).
    pub repl: crate::replication::stream::Stream,
    /// The link to a master while this server is a replica (`replication/replica.rs`).
    pub replica: crate::replication::role::Role,
    /// A data set being loaded (at start, or a replica's full sync): INFO's
    /// `loading_*` fields. `-LOADING` is the role's admission bit.
    pub loading: crate::state::loading::LoadProgress,
    /// MIGRATE's connections to its targets, kept between calls.
    pub migrate_sockets: crate::state::migrate_sockets::MigrateSockets,
    /// A FAILOVER under way (`replication::failover`).
    pub failover: crate::state::failover::Failover,
    /// A shutdown waiting for its replicas (`crate::shutdown`).
    pub shutdown_wait: crate::state::shutdown::ShutdownWait,
    /// This value's own Arc, for threads a command starts (set at start).
    pub me: std::sync::OnceLock<std::sync::Weak<Shared>>,
    /// Background freeing of large deleted values (`lazyfree.rs`).
    pub lazyfree: crate::lazyfree::LazyFree,
    /// Snapshot bookkeeping (LASTSAVE, INFO persistence).
    pub snapshots: crate::state::snapshots::SnapshotStats,
    /// The running capture's walk, shared by the event loops and the snapshot thread.
    pub walk: crate::walk::Walk,
    /// A second SIGINT stopped the server during its shutdown's wait ("You insist"):
    /// as Redis, it exits at once with status 1, without its final save.
    pub insisted: AtomicBool,
    /// A shutdown's final save and stop are under way (`shutdown::exit`): a SIGINT now
    /// is a second one, as during the wait for replicas.
    pub exiting: AtomicBool,
    /// The I/O engine the loops run on (INFO basalt_io_engine), set at start.
    pub io_engine: std::sync::OnceLock<&'static str>,
}

impl Shared {
    pub fn new(config: Config, keyspace: Keyspace, threads: usize, commands: usize) -> Shared {
        let slowlog_threshold = config.slowlog_log_slower_than_us;
        let latency_tracking = config.latency_tracking;
        let auth = config.requirepass.is_some();
        let hz = config.hz;
        let repl_backlog_size = config.repl_backlog_size;
        let loop_spread_busy = config.loop_spread_busy;
        let query_buffer_limit = config.client_query_buffer_limit;
        let output_limits = crate::output_limit::Limits::new(&config.client_output_buffer_limit);
        let latency_monitor = Arc::new(crate::latency_monitor::LatencyMonitor::default());
        let wakers = Arc::new(crate::waker::Wakers::default());
        latency_monitor.set_threshold_ms(config.latency_monitor_threshold_ms);
        keyspace.events().set(config.notify_keyspace_events);
        let aof = crate::aof::AofSlot::new(
            Arc::new(crate::aof::Aof::new(threads, config.appendfsync, Arc::clone(&latency_monitor), Arc::clone(&wakers))),
            config.appendonly,
        );
        let registry = crate::state::waiters::Registry::default();
        let waited = Arc::clone(&registry.waited);
        let shared = Shared {
            keyspace,
            config: RwLock::new(config),
            started: Instant::now(),
            started_unix_ms: store::Clock::System.now_ms(),
            run_id: random_hex(40),
            clients: Mutex::new(Default::default()),
            next_client_id: AtomicU64::new(1),
            connected_clients: AtomicUsize::new(0),
            thread_stats: (0..threads).map(|_| Arc::new(ThreadStats::new(commands))).collect(),
            wakers,
            shutdown: AtomicBool::new(false),
            slowlog: Mutex::new(Default::default()),
            slowlog_next_id: AtomicU64::new(0),
            slowlog_threshold_us: AtomicI64::new(slowlog_threshold),
            latency_tracking: AtomicBool::new(latency_tracking),
            latency_monitor,
            tracking: crate::state::tracking::Tracking::default(),
            scripts: crate::script::cache::ScriptCache::default(),
            functions: crate::script::functions::Functions::default(),
            auth_required: AtomicBool::new(auth),
            acl: crate::acl::Acl::default(),
            tls: crate::tls::Context::default(),
            applied_requirepass: Mutex::new(None),
            active_expire_enabled: AtomicBool::new(true),
            hz: AtomicU64::new(hz),
            query_buffer_limit: AtomicU64::new(query_buffer_limit),
            output_limits,
            type_limits: TypeLimits::default(),
            memory: crate::state::memory::Memory::default(),
            gates: (0..threads.max(1)).map(|_| RwLock::new(())).collect(),
            watches: Mutex::new(hashbrown::HashMap::new()),
            watch_count: AtomicUsize::new(0),
            pubsub: Mutex::new(PubSub::default()),
            loops: crate::state::loops::Loops::new(threads, loop_spread_busy),
            mailboxes: (0..threads.max(1)).map(|_| Mailbox::default()).collect(),
            monitors: Mutex::new(Vec::new()),
            monitor_count: AtomicUsize::new(0),
            blocked: Mutex::new(registry),
            waited,
            pause: Default::default(),
            blocked_count: AtomicUsize::new(0),
            stat_expired_stale_perc: AtomicU64::new(0),
            aof,
            stripes: crate::order::Stripes::default(),
            repl: crate::replication::stream::Stream::new(random_hex(40), repl_backlog_size, threads.max(1)),
            replica: Default::default(),
            loading: Default::default(),
            migrate_sockets: Default::default(),
            failover: Default::default(),
            shutdown_wait: Default::default(),
            me: std::sync::OnceLock::new(),
            lazyfree: crate::lazyfree::LazyFree::start(),
            snapshots: crate::state::snapshots::SnapshotStats::new(store::Clock::System.now_ms() / 1000),
            walk: crate::walk::Walk::default(),
            insisted: AtomicBool::new(false),
            exiting: AtomicBool::new(false),
            io_engine: std::sync::OnceLock::new(),
        };
        // Derive every lock-free copy of configuration values from the config.
        shared.config_changed();
        shared
    }

    /// Loop `owner`'s gate (the last one for an index past them).
    pub fn gate(&self, owner: usize) -> &RwLock<()> {
        &self.gates[owner.min(self.gates.len() - 1)]
    }

    /// Every event loop's gate, taken for writing in index order: the keyspace to the
    /// caller alone (EXEC, SAVE, DEBUG RELOAD, the start of a capture). Empty when
    /// `already_held` (a command running inside EXEC, which holds them all).
    pub fn all_gates(&self, already_held: bool) -> Vec<parking_lot::RwLockWriteGuard<'_, ()>> {
        if already_held {
            return Vec::new();
        }
        self.gates.iter().map(|g| g.write()).collect()
    }

    /// Every event loop's gate, taken for reading: the caller changes the keyspace as a
    /// loop does, beside the loops, and nothing that needs the keyspace alone (EXEC, the
    /// start of a capture) begins until it lets them go (a replica's load).
    pub fn all_gates_shared(&self) -> Vec<parking_lot::RwLockReadGuard<'_, ()>> {
        self.gates.iter().map(|g| g.read()).collect()
    }

    /// A load begins (at start, or a replica's full sync) of `total` bytes (0: not
    /// known yet): every command not flagged `loading` is answered `-LOADING` until the
    /// guard is dropped, however the load ends. `stoppable`: a shutdown stops it
    /// (`state::loading`).
    pub fn begin_loading(&self, total: u64, stoppable: bool) -> LoadingGuard<'_> {
        self.loading.begin(store::Clock::System.now_ms(), total, stoppable);
        self.replica.set_loading(true);
        LoadingGuard { shared: self }
    }

    /// A replica's load aside begins (`repl-diskless-load swapdb` continuing this
    /// server's history), of `total` bytes (0: not known): the data set held goes on
    /// serving, only commands flagged `no-async-loading` are answered `-LOADING`, and
    /// INFO shows `async_loading:1` with the load's progress, until the guard is
    /// dropped. Not stoppable: the load runs on the link's thread, which a shutdown
    /// leaves to finish (the data set served is whole meanwhile).
    pub fn begin_async_loading(&self, total: u64) -> LoadingGuard<'_> {
        self.loading.begin(store::Clock::System.now_ms(), total, false);
        self.replica.set_async_loading(true);
        LoadingGuard { shared: self }
    }

    /// A shutdown was asked for during a load it stops.
    pub fn load_stopped(&self) -> bool {
        self.loading.stoppable() && self.shutdown.load(Ordering::Relaxed)
    }

    /// A reader of the load's bytes: counted for INFO, and stopped by a shutdown when
    /// the load under way is stoppable (not DEBUG RELOAD's, nor a replica's).
    pub fn load_reader<R: std::io::Read>(&self, inner: R) -> crate::state::loading::Counted<'_, R> {
        let stop = self.loading.stoppable().then_some(&self.shutdown);
        crate::state::loading::Counted { inner, progress: &self.loading, stop }
    }

    /// Asks every event loop to stop (SIGTERM, SIGINT, SHUTDOWN).
    pub fn request_shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    pub fn wake_all(&self) {
        self.wakers.wake_all();
    }

    /// Wakes the event loop that owns a client (after setting its kill flag).
    pub fn wake(&self, owner: usize) {
        self.wakers.wake(owner);
    }

    /// Refreshes the lock-free copies of hot configuration values after CONFIG SET.
    pub fn config_changed(&self) {
        let c = self.config.read();
        self.slowlog_threshold_us.store(c.slowlog_log_slower_than_us, Ordering::Relaxed);
        self.latency_tracking.store(c.latency_tracking, Ordering::Relaxed);
        self.latency_monitor.set_threshold_ms(c.latency_monitor_threshold_ms);
        self.keyspace.events().set(c.notify_keyspace_events);
        self.tracking.max_keys.store(c.tracking_table_max_keys as usize, Ordering::Relaxed);
        {
            let mut applied = self.applied_requirepass.lock();
            let now = c.requirepass.clone();
            if applied.as_ref() != Some(&now) {
                self.acl.set_requirepass(now.as_deref());
                *applied = Some(now);
            }
        }
        self.acl_changed();
        self.hz.store(c.hz, Ordering::Relaxed);
        self.loops.set_spread_busy(c.loop_spread_busy);
        self.query_buffer_limit.store(c.client_query_buffer_limit, Ordering::Relaxed);
        self.output_limits.set(&c.client_output_buffer_limit);
        self.memory.configure(&c);
        self.repl.set_backlog_size(c.repl_backlog_size);
        self.repl.set_min_replicas(c.min_replicas_to_write, c.min_replicas_max_lag);
        let says_no = |name: &str| c.recorded.get(name).is_some_and(|v| v == "no");
        self.replica.configure(!says_no("replica-read-only"), !says_no("replica-serve-stale-data"));
        self.loading.set_key_delay(c.recorded.get("key-load-delay").and_then(|v| v.parse().ok()).unwrap_or(0));
        self.snapshots.key_save_delay_us.store(c.recorded.get("rdb-key-save-delay").and_then(|v| v.parse().ok()).unwrap_or(0), Ordering::Relaxed);
        let t = &self.type_limits;
        t.hash_entries.store(c.hash_max_listpack_entries as usize, Ordering::Relaxed);
        t.hash_value.store(c.hash_max_listpack_value as usize, Ordering::Relaxed);
        t.set_intset.store(c.set_max_intset_entries as usize, Ordering::Relaxed);
        t.zset_entries.store(c.zset_max_listpack_entries as usize, Ordering::Relaxed);
        t.zset_value.store(c.zset_max_listpack_value as usize, Ordering::Relaxed);
        // (Kept on the log's state whether it is on or off: it is in force once on.)
        self.aof.object().set_policy(c.appendfsync);
    }

    /// The ACL users changed: whether new connections must authenticate follows the
    /// default user.
    pub fn acl_changed(&self) {
        self.auth_required.store(self.acl.auth_required(), Ordering::Relaxed);
    }

    /// Sum of one counter over all threads.
    pub fn sum(&self, f: impl Fn(&ThreadStats) -> &AtomicU64) -> u64 {
        self.thread_stats.iter().map(|t| f(t).load(Ordering::Relaxed)).sum()
    }

    /// Appends to the slow log, trimming it to slowlog-max-len.
    pub fn slowlog_push(&self, duration_us: u64, args: &[&[u8]], addr: &str, name: &[u8]) {
        let max_len = self.config.read().slowlog_max_len as usize;
        if max_len == 0 {
            return;
        }
        // Redis keeps at most 32 arguments and 128 bytes of each.
        let mut kept: Vec<Vec<u8>> = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i == 31 && args.len() > 32 {
                kept.push(format!("... ({} more arguments)", args.len() - 31).into_bytes());
                break;
            }
            if a.len() > 128 {
                let mut v = a[..128].to_vec();
                v.extend_from_slice(format!("... ({} more bytes)", a.len() - 128).as_bytes());
                kept.push(v);
            } else {
                kept.push(a.to_vec());
            }
        }
        let entry = SlowlogEntry {
            id: self.slowlog_next_id.fetch_add(1, Ordering::Relaxed),
            time_s: store::Clock::System.now_ms() / 1000,
            duration_us,
            args: kept,
            addr: addr.to_string(),
            name: name.to_vec(),
        };
        let mut log = self.slowlog.lock();
        log.push_front(entry);
        log.truncate(max_len);
    }
}

/// A random lowercase hex string (run_id).
pub fn random_hex(len: usize) -> String {
    let mut rng = fastrand::Rng::new();
    (0..len).map(|_| char::from_digit(rng.u32(..16), 16).unwrap_or('0')).collect()
}

/// A load under way ([`Shared::begin_loading`]); its drop ends the `-LOADING` replies.
pub struct LoadingGuard<'a> {
    shared: &'a Shared,
}

impl Drop for LoadingGuard<'_> {
    fn drop(&mut self) {
        self.shared.replica.set_loading(false);
        self.shared.replica.set_async_loading(false);
        self.shared.loading.end();
    }
}
