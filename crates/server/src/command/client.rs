//! Per-connection state that the owning event loop keeps (`Client`), with the state of
//! its transaction (MULTI's queue, WATCH) and subscriptions, and what it publishes for
//! other threads (CLIENT LIST).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use resp::Proto;

use crate::shared::ClientInfo;

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

/// `repl_woff` of a client whose last write's record may still wait in its loop's part
/// of the replication stream: WAIT publishes that part and takes the offset then.
pub const WOFF_UNPUBLISHED: u64 = u64::MAX;

/// Per-connection state that the owning event loop keeps.
pub struct Client {
    pub info: Arc<ClientInfo>,
    pub db: usize,
    pub proto: Proto,
    pub authenticated: bool,
    /// The ACL user it runs as (`default` until AUTH), as of `acl_version`.
    pub user: Arc<crate::acl::User>,
    pub acl_version: u64,
    /// The user may run every command on every key and channel: no check per command.
    pub unrestricted: bool,
    /// Close once the pending output is written (QUIT, protocol error, CLIENT KILL of
    /// self).
    pub close_after_reply: bool,
    /// Commands queued since MULTI.
    pub multi: Option<Multi>,
    /// Keys watched by WATCH.
    pub watched: Vec<Watched>,
    /// Pub/sub channels and patterns.
    pub subs: Subscriptions,
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
    /// `rdb_changes_since_last_save` and is not logged, unless the command states what
    /// to log (`Ctx::propagate_as`). Reset by the dispatcher.
    pub changed_nothing: bool,
    /// Set by a write command that changed several things, or perhaps none: how many,
    /// as Redis counts them in `rdb_changes_since_last_save` (its `server.dirty`: an
    /// MSET's keys, an LPUSH's elements, a DEL's deleted keys, a ZADD's added and
    /// updated members ...), which the save rules compare with their counts. Unset, a
    /// write counts one. Taken by the dispatcher.
    pub changes: Option<u64>,
    /// Running the queue of an EXEC, or a script (blocking commands do not block there).
    pub in_exec: bool,
    /// Running a script: MONITOR shows its commands as the script's (`[0 lua]`).
    pub in_script: bool,
    /// A client with no connection (`replay.rs`): the log's replay at start, or a
    /// replica's master. Every command runs, with no admission check, and its writes
    /// are not propagated again, unless `from_master`.
    pub loading: bool,
    /// The master's stream on a replica (with `loading`): its writes reach this
    /// server's log, as a Redis replica's AOF records its master's commands (its
    /// replicas get the stream's bytes from the link itself).
    pub from_master: bool,
    /// A script's command whose effect `redis.set_repl` keeps out of the log, or out of
    /// the replication stream (set around each of the script's calls).
    pub script_skips_log: bool,
    pub script_skips_replicas: bool,
    /// Log offset that the replies produced since the last batch end may not leave
    /// before (they reveal a write not yet on disk); 0 = none. See `aof`.
    pub need: u64,
    /// What the running call means to the log, as its handler stated it (SPOP: the
    /// SREM of what it popped); taken by the dispatcher's propagate phase.
    pub propagation: crate::propagate::Propagation,
    /// Input is not executed until this client's held replies leave: the log's tail
    /// was over its limit (`aof::TAIL_LIMIT`). The owning loop resumes it.
    pub paused_for_log: bool,
    /// REPLCONF rdb-only 1: a SYNC of this client wants the snapshot only
    /// (`command/replication.rs`).
    pub rdb_only: bool,
    /// The port a replica said it listens on (REPLCONF listening-port), 0 if none, and
    /// the address it wants to be known by (REPLCONF ip-address).
    pub listening_port: u16,
    pub announced_ip: Option<String>,
    /// REPLCONF capa eof: it can read a disk-less snapshot.
    pub capa_eof: bool,
    /// The replication stream's offset after this client's last write (Redis's `woff`:
    /// what WAIT waits for replicas to acknowledge), or [`WOFF_UNPUBLISHED`].
    pub repl_woff: u64,
    /// This client is a replica that receives the replication stream: its connection
    /// stays on its event loop, and its output limit is the replica class's.
    pub replica: bool,
    /// CLIENT TRACKING's options while tracking is on (`crate::tracking`).
    pub tracking: Option<crate::tracking::Mode>,
    /// CLIENT CACHING's answer, for the next command only.
    pub caching: Option<bool>,
}

impl Client {
    /// Whether this client's writes are propagated (`crate::propagate`): a connection's
    /// are; a replay's are not; the master's stream's reach the log only.
    #[inline(always)]
    pub fn propagates(&self, shared: &crate::shared::Shared) -> bool {
        !self.loading || (self.from_master && shared.aof.is_some())
    }

    pub fn new(info: Arc<ClientInfo>, authenticated: bool) -> Client {
        Client {
            info,
            db: 0,
            proto: Proto::Resp2,
            authenticated,
            user: Arc::new(crate::acl::User::new("default", crate::acl::catalog(), true)),
            acl_version: 0,
            unrestricted: false,
            close_after_reply: false,
            multi: None,
            watched: Vec::new(),
            subs: Subscriptions::default(),
            blocked: false,
            postponed: false,
            monitor: false,
            reply_mode: ReplyMode::On,
            reply_is_push: false,
            changed_nothing: false,
            changes: None,
            in_exec: false,
            in_script: false,
            loading: false,
            from_master: false,
            script_skips_log: false,
            script_skips_replicas: false,
            need: 0,
            propagation: crate::propagate::Propagation::AsSent,
            paused_for_log: false,
            rdb_only: false,
            listening_port: 0,
            announced_ip: None,
            capa_eof: false,
            replica: false,
            repl_woff: 0,
            tracking: None,
            caching: None,
        }
    }
}

/// Copies the state CLIENT LIST shows from the owner's client into the shared record.
pub fn publish_client_state(client: &Client) {
    let info = &client.info;
    info.sub.store(client.subs.channels.len(), Ordering::Relaxed);
    info.psub.store(client.subs.patterns.len(), Ordering::Relaxed);
    info.ssub.store(client.subs.shard_channels.len(), Ordering::Relaxed);
    info.multi.store(client.multi.as_ref().map_or(-1, |m| m.queue.len() as i64), Ordering::Relaxed);
    info.blocked.store(client.blocked, Ordering::Relaxed);
}

/// The queue of a client inside MULTI.
#[derive(Default)]
pub struct Multi {
    pub queue: Vec<Vec<Vec<u8>>>,
    /// A command was refused while queueing: EXEC will answer EXECABORT.
    pub aborted: bool,
}

/// A key a client watches.
pub struct Watched {
    pub db: usize,
    pub key: Vec<u8>,
    pub version: u64,
    /// The key's expiry when WATCH ran.
    pub expire_at_ms: Option<i64>,
}

/// Per-client subscription state.
#[derive(Default)]
pub struct Subscriptions {
    pub channels: Vec<Vec<u8>>,
    pub patterns: Vec<Vec<u8>>,
    /// Shard channels (SSUBSCRIBE): a namespace of their own.
    pub shard_channels: Vec<Vec<u8>>,
}

impl Subscriptions {
    /// Every subscription: a RESP2 client with any is in subscribed mode.
    pub fn count(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shard_channels.len()
    }

    /// Channels and patterns: the count SUBSCRIBE's and PSUBSCRIBE's replies carry
    /// (SSUBSCRIBE's carry the shard channels' alone).
    pub fn plain_count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }
}
