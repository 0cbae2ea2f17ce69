//! The replica role's state: the link to a master while this server is a replica, as
//! the event loops, INFO and ROLE read it (plain data; `replica.rs` runs the link).

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
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
}

/// The replica role: the link, when this server is a replica.
#[derive(Default)]
pub struct Role {
    pub(crate) link: Mutex<Option<Arc<Link>>>,
    /// A link is set (the request path's one load for `replica-read-only`).
    pub(crate) is_replica: AtomicBool,
}

impl Role {
    #[inline]
    pub fn is_replica(&self) -> bool {
        self.is_replica.load(Ordering::Acquire)
    }

    pub fn link(&self) -> Option<Arc<Link>> {
        self.link.lock().clone()
    }
}

pub(crate) fn now_ms() -> i64 {
    store::Clock::System.now_ms()
}

