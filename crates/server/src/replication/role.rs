//! The replica role's state: the link to a master while this server is a replica, as
//! the event loops, INFO and ROLE read it (plain data; `replica.rs` runs the link).

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::time::Instant;
use std::sync::Arc;

use parking_lot::Mutex;

/// Where a link stands (ROLE's and INFO's words).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum LinkState {
    Connect = 0,
    Connecting = 1,
    Sync = 2,
    Connected = 3,
}

impl LinkState {
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Connect => "connect",
            LinkState::Connecting => "connecting",
            LinkState::Sync => "sync",
            LinkState::Connected => "connected",
        }
    }
}

/// One link to a master.
pub struct Link {
    pub host: String,
    pub port: u16,
    pub(crate) state: AtomicU8,
    /// The offset of the master's stream applied here, -1 before any sync.
    pub(crate) offset: AtomicI64,
    /// The master's replication ID this server's data follows ("" before any sync).
    pub(crate) replid: Mutex<String>,
    /// Unix ms of the last byte from the master; when the link went down (0: up).
    pub last_io_ms: AtomicI64,
    pub down_since_ms: AtomicI64,
    pub(crate) stop: AtomicBool,
    /// The socket, so that REPLICAOF NO ONE can cut a blocking read short.
    pub(crate) socket: Mutex<Option<TcpStream>>,
    /// The database the stream starts in after a full sync (`repl-stream-db`).
    pub(crate) stream_db: Mutex<Option<usize>>,
    /// The snapshot being received: its size (-1 for a disk-less `$EOF:` transfer)
    /// and the bytes read so far (INFO's `master_sync_*`).
    pub(crate) transfer_size: AtomicI64,
    pub(crate) transfer_read: AtomicI64,
    /// The master as a client of this server, while the link is up (Redis lists it in
    /// CLIENT LIST with flag `M` and counts it in `connected_clients`); and the one of
    /// the last connection, which a partial resync brings back with its id and age (as
    /// Redis's cached master).
    pub master_client: Mutex<Option<MasterClient>>,
    pub(crate) cached_master_client: Mutex<Option<MasterClient>>,
    /// The database the master's stream is in, and the name of its last command
    /// applied (lowercase; empty: none), for that client's line.
    pub stream_db_now: AtomicUsize,
    pub last_cmd: Mutex<String>,
    /// Full syncs given up in a row because this server's log could not start a file
    /// for them (`replica::detach_log`): the next attempt waits 2, 4 ... 60 s, not 1,
    /// since each one has the master make and send a whole snapshot.
    pub(crate) syncs_refused: std::sync::atomic::AtomicU32,
}

/// The master's connection, seen as a client of this server.
#[derive(Clone, Debug)]
pub struct MasterClient {
    pub id: u64,
    pub since: Instant,
    /// The master's address and this end's, as CLIENT LIST shows them.
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
}

impl Link {
    pub fn state(&self) -> LinkState {
        match self.state.load(Ordering::Acquire) {
            1 => LinkState::Connecting,
            2 => LinkState::Sync,
            3 => LinkState::Connected,
            _ => LinkState::Connect,
        }
    }

    pub(crate) fn set_state(&self, s: LinkState) {
        self.state.store(s as u8, Ordering::Release);
        if s != LinkState::Connected && self.down_since_ms.load(Ordering::Relaxed) == 0 {
            self.down_since_ms.store(now_ms(), Ordering::Relaxed);
        }
        if s == LinkState::Connected {
            self.down_since_ms.store(0, Ordering::Relaxed);
        }
    }

    /// The offset applied (-1 before the first sync).
    pub fn offset(&self) -> i64 {
        self.offset.load(Ordering::Acquire)
    }

    pub fn replid(&self) -> String {
        self.replid.lock().clone()
    }

    /// The snapshot transfer's size (-1: disk-less) and bytes read.
    pub fn transfer(&self) -> (i64, u64) {
        (self.transfer_size.load(Ordering::Relaxed), self.transfer_read.load(Ordering::Relaxed).max(0) as u64)
    }
}

/// The replica role: the link, when this server is a replica.
pub struct Role {
    pub(crate) link: Mutex<Option<Arc<Link>>>,
    /// What the request path asks of the role, in one word (bits below): whether a
    /// link is set, `replica-read-only`, `replica-serve-stale-data no`. A master's
    /// commands pay one load and one test for all three.
    admit: AtomicU8,
}

/// This server follows a master (a link is set).
pub const REPLICA: u8 = 1;
/// `replica-read-only yes` (the default), in force while [`REPLICA`].
pub const READ_ONLY: u8 = 2;
/// `replica-serve-stale-data no`, in force while [`REPLICA`].
pub const NO_STALE_DATA: u8 = 4;
/// A data set is being loaded (`Shared::begin_loading`: at start, or a replica's full
/// sync): only commands flagged `loading` run, as in Redis (the others get `-LOADING`).
pub const LOADING: u8 = 8;
/// A replica loads its master's snapshot aside (`repl-diskless-load swapdb`, and the
/// snapshot continues the history this server holds): the old data set goes on
/// serving, and only commands flagged `no-async-loading` get `-LOADING` (Redis 7.0's
/// async loading).
pub const ASYNC_LOADING: u8 = 16;

impl Default for Role {
    fn default() -> Role {
        Role { link: Mutex::new(None), admit: AtomicU8::new(READ_ONLY) }
    }
}

impl Role {
    #[inline]
    pub fn is_replica(&self) -> bool {
        self.admit.load(Ordering::Acquire) & REPLICA != 0
    }

    /// The admission bits; 0 or only [`READ_ONLY`] on a master.
    #[inline]
    pub fn admit_bits(&self) -> u8 {
        self.admit.load(Ordering::Acquire)
    }

    fn set(&self, bit: u8, on: bool) {
        if on {
            self.admit.fetch_or(bit, Ordering::AcqRel);
        } else {
            self.admit.fetch_and(!bit, Ordering::AcqRel);
        }
    }

    pub(crate) fn set_replica(&self, on: bool) {
        self.set(REPLICA, on);
    }

    pub(crate) fn set_loading(&self, on: bool) {
        self.set(LOADING, on);
    }

    pub(crate) fn set_async_loading(&self, on: bool) {
        self.set(ASYNC_LOADING, on);
    }

    /// A data set is being loaded (at start, or a replica's full sync), in its place or
    /// aside ([`ASYNC_LOADING`]): no snapshot starts, and a shutdown saves nothing (as
    /// Redis's, whose `loading` flag covers both).
    pub fn is_loading(&self) -> bool {
        self.admit.load(Ordering::Acquire) & (LOADING | ASYNC_LOADING) != 0
    }

    /// `replica-read-only` and `replica-serve-stale-data` as configured now.
    pub fn configure(&self, read_only: bool, serve_stale_data: bool) {
        self.set(READ_ONLY, read_only);
        self.set(NO_STALE_DATA, !serve_stale_data);
    }

    pub fn link(&self) -> Option<Arc<Link>> {
        self.link.lock().clone()
    }
}

pub(crate) fn now_ms() -> i64 {
    store::Clock::System.now_ms()
}

