//! What other threads may know and change about a connection (CLIENT LIST, CLIENT KILL,
//! the tracking table's redirects): one record per client, owned by its event loop's
//! connection and registered in `Shared::clients`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

/// What other threads may know and change about a connection.
pub struct ClientInfo {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    pub created: Instant,
    /// Index of the event loop that owns the connection (changes when the connection
    /// moves to another loop: `net/balance.rs`).
    pub owner: AtomicUsize,
    pub name: Mutex<Vec<u8>>,
    /// The ACL user it is authenticated as (CLIENT LIST `user`, CLIENT KILL USER).
    pub user: Mutex<Arc<str>>,
    pub lib_name: Mutex<Vec<u8>>,
    pub lib_ver: Mutex<Vec<u8>>,
    pub db: AtomicUsize,
    pub resp: AtomicU8,
    /// Last command time, Unix ms.
    pub last_interaction_ms: AtomicI64,
    /// Index in the command table of the last command, or usize::MAX.
    pub last_cmd: AtomicUsize,
    pub qbuf: AtomicUsize,
    /// The complete arguments of a request still being received (CLIENT LIST `argv-mem`).
    pub argv_mem: AtomicUsize,
    pub obuf: AtomicUsize,
    pub no_evict: AtomicBool,
    pub no_touch: AtomicBool,
    /// Set by CLIENT KILL; the owner closes the connection when it sees it.
    pub killed: AtomicBool,
    /// Channel and pattern subscriptions, commands queued in MULTI (-1 outside), and
    /// whether the client is blocked: published by the owner after each command for
    /// CLIENT LIST.
    pub sub: AtomicUsize,
    pub psub: AtomicUsize,
    pub ssub: AtomicUsize,
    pub multi: AtomicI64,
    pub blocked: AtomicBool,
    /// The client is a replica (PSYNC or SYNC for the stream): CLIENT LIST's `S`, the
    /// `slave` class of CLIENT KILL TYPE and output limits.
    pub replica: AtomicBool,
    /// Tracking clients whose invalidations are redirected to this one (`tracking.rs`):
    /// while any, the connection stays on its event loop.
    pub redirect_sources: AtomicUsize,
}

impl ClientInfo {
    /// A new client's record, as registered on accept.
    pub fn new(id: u64, addr: String, laddr: String, fd: i32, owner: usize, now_ms: i64) -> ClientInfo {
        ClientInfo {
            id,
            addr,
            laddr,
            fd,
            created: Instant::now(),
            owner: AtomicUsize::new(owner),
            name: Default::default(),
            lib_name: Default::default(),
            user: Mutex::new(Arc::from("default")),
            lib_ver: Default::default(),
            db: Default::default(),
            resp: AtomicU8::new(2),
            last_interaction_ms: AtomicI64::new(now_ms),
            last_cmd: AtomicUsize::new(usize::MAX),
            qbuf: Default::default(),
            argv_mem: Default::default(),
            obuf: Default::default(),
            no_evict: Default::default(),
            no_touch: Default::default(),
            killed: Default::default(),
            sub: Default::default(),
            psub: Default::default(),
            ssub: Default::default(),
            multi: AtomicI64::new(-1),
            blocked: Default::default(),
            replica: Default::default(),
            redirect_sources: Default::default(),
        }
    }
}
