//! Networking shared by both I/O engines: listening sockets, the cross-thread waker,
//! client registration on accept and close, socket options, and the periodic tick
//! (active expiry, idle timeouts). The engines themselves live in `epoll.rs` (mio) and
//! `uring.rs` (io_uring with multishot receive into a provided-buffer ring); each runs
//! one event loop per thread that owns its connections until `balance.rs` moves one to
//! another loop.

pub mod balance;
pub mod epoll;
pub mod uring;

use std::net::SocketAddr;
use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::conn::Conn;
use crate::shared::{ClientInfo, Shared};

/// Creates a non-blocking listening socket with SO_REUSEPORT, so that every event loop
/// can have its own on the same address.
pub fn listen(addr: SocketAddr, backlog: u32) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(backlog.min(i32::MAX as u32) as i32)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Fails with EADDRINUSE when something already listens on `addr`: a bind without
/// SO_REUSEPORT (SO_REUSEADDR only, so connections in TIME_WAIT do not count), closed
/// again at once.
pub fn probe_port_free(addr: SocketAddr) -> std::io::Result<()> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())
}

/// [`probe_port_free`], waiting up to a second for a port that is taken: a server
/// killed just before (a supervisor's restart after a crash) may still hold it. The
/// kernel tears an io_uring instance down after its process is gone, and the listening
/// sockets its accepts held close only then: measured on 6.x kernels, a restart right
/// after a SIGKILL found the port taken 5 times in 6, free some 10 ms later. A port
/// another live server holds still fails, a second later.
pub fn wait_port_free(addr: SocketAddr) -> std::io::Result<()> {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    loop {
        match probe_port_free(addr) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// Applies TCP_NODELAY and keepalive to an accepted socket.
pub fn tune_socket(fd: BorrowedFd<'_>, keepalive_s: u64) {
    let sock = socket2::SockRef::from(&fd);
    let _ = sock.set_nodelay(true);
    if keepalive_s > 0 {
        let ka = socket2::TcpKeepalive::new().with_time(Duration::from_secs(keepalive_s));
        let _ = sock.set_tcp_keepalive(&ka);
    }
}

/// Outcome of the admission check on accept.
pub enum Admission {
    Accept { keepalive_s: u64 },
    /// maxclients reached: the caller sends this error and closes.
    Reject(&'static [u8]),
}

/// Redis 7.0.15's refusal of a client from another host while `protected-mode` is on
/// and the default user has no password.
const PROTECTED_MODE_DENIED: &[u8] = b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// Whether a peer is local as Redis counts it (`islocalClient`): exactly 127.0.0.1 or
/// ::1 (another 127.x address is not).
pub fn is_local_peer(peer: Option<std::net::IpAddr>) -> bool {
    match peer {
        Some(std::net::IpAddr::V4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
        Some(std::net::IpAddr::V6(ip)) => ip == std::net::Ipv6Addr::LOCALHOST,
        None => false,
    }
}

/// Counts the connection and checks maxclients and protected mode (as Redis, a client
/// from another host is refused while `protected-mode` is on and the default user has
/// no password; both refusals count in `rejected_connections`).
pub fn admit(shared: &Shared, owner: usize, peer: Option<std::net::IpAddr>) -> Admission {
    let stats = &shared.thread_stats[owner];
    crate::shared::bump(&stats.connections_received, 1);
    let (maxclients, keepalive_s, protected) = {
        let c = shared.config.read();
        (c.maxclients, c.tcp_keepalive_s, c.protected_mode)
    };
    let protected = protected && shared.acl.default_user().nopass;
    if shared.connected_clients.load(Ordering::Relaxed) as u64 >= maxclients {
        crate::shared::bump(&stats.rejected_connections, 1);
        return Admission::Reject(b"-ERR max number of clients reached\r\n");
    }
    if protected && !is_local_peer(peer) {
        crate::shared::bump(&stats.rejected_connections, 1);
        return Admission::Reject(PROTECTED_MODE_DENIED);
    }
    Admission::Accept { keepalive_s }
}

/// Registers a new client and returns its connection state.
pub fn open_client(
    shared: &Shared,
    owner: usize,
    fd: i32,
    peer: String,
    laddr: String,
    now_ms: i64,
) -> Conn {
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed);
    // A connection to `tls-port` speaks TLS (the listeners of both ports share the
    // loops; the local port tells them apart).
    let tls = shared.tls.get().filter(|_| {
        let tls_port = shared.config.read().tls_port();
        tls_port != 0 && laddr.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()) == Some(tls_port)
    });
    let info = Arc::new(ClientInfo::new(id, peer, laddr, fd, owner, now_ms));
    shared.clients.lock().insert(id, info.clone());
    shared.connected_clients.fetch_add(1, Ordering::Relaxed);
    let mut conn = Conn::new(info, shared);
    if let Some(config) = tls {
        conn.start_tls(config);
    }
    conn
}

/// Removes a client from the registry and drops its watches.
pub fn close_client(shared: &Shared, conn: &mut Conn) {
    crate::command::transactions::unwatch_all(shared, &mut conn.client);
    crate::command::pubsub::unsubscribe_all(shared, &mut conn.client);
    crate::command::blocking::forget(shared, conn.client.info.id);
    crate::tracking::disable(shared, conn.client.info.id);
    crate::command::monitor::stop(shared, &mut conn.client);
    if conn.client.replica {
        if let Some(name) = shared.repl.name(conn.client.info.id) {
            shared.repl.remove(conn.client.info.id);
            crate::log::notice(&format!("Connection with replica {name} lost."));
        }
    }
    shared.clients.lock().remove(&conn.client.info.id);
    shared.connected_clients.fetch_sub(1, Ordering::Relaxed);
}

/// The periodic tick of one event loop: active expiry of its shards. Returns the
/// connections (by the caller's slot index) to close: idle past `timeout`, or over
/// their output soft limit for longer than its seconds (`output_limit`).
pub fn tick<'a>(
    shared: &Shared,
    owner: usize,
    now_ms: i64,
    conns: impl Iterator<Item = (usize, &'a Conn)>,
) -> Vec<usize> {
    // Safety net: serve waiters whose keys hold data even if no wake-up reached them.
    // Under the loop's gate: a served pop is a write, and must not land in the middle
    // of an EXEC (or of its MULTI/EXEC block in the append-only log).
    {
        let _gate = shared.gates[owner.min(shared.gates.len() - 1)].read();
        // (Not once the server stops: a pop served after a final save would be one the
        // save does not hold.)
        if !shared.shutdown.load(Ordering::Acquire) {
            let popped = crate::command::blocking::serve_all(shared, now_ms);
            if let Some(stats) = shared.thread_stats.get(owner) {
                crate::counters::bump(&stats.writes, popped);
            }
        }
    }
    crate::command::blocking::expire(shared, owner, now_ms);
    crate::command::pause::resume_if_over(shared, now_ms);
    if owner == 0 {
        crate::replication::master::cron(shared, now_ms);
        shared.migrate_sockets.close_idle(now_ms / 1000);
        // A shutdown waiting for its replicas: on to the exit once they have it all.
        crate::shutdown::progress(shared, now_ms);
    }
    // Keys stay put while clients are paused (CLIENT PAUSE), as in Redis (the shards
    // hold expired keys too; this saves the walk).
    // A replica leaves expiry to its master's DELs, as Redis's does; nothing expires
    // while a load runs (its records would not be logged: Redis expires nothing then
    // either).
    let admit = shared.replica.admit_bits();
    if shared.active_expire_enabled.load(Ordering::Relaxed)
        && !shared.pause.active(now_ms)
        && admit & (crate::replication::role::REPLICA | crate::replication::role::LOADING) == 0
    {
        // Under the loop's gate, so that no key expires in the middle of an EXEC.
        let _gate = shared.gates[owner.min(shared.gates.len() - 1)].read();
        crate::expire::active_cycle(shared, owner, now_ms);
    }
    if shared.memory.limited() && !shared.pause.active(now_ms) {
        // Eviction that ran out of time before a command goes on here (Redis's timer);
        // under the loop's gate, as any removal of keys. (`make_room` leaves a replica
        // and a load alone.)
        let _gate = shared.gates[owner.min(shared.gates.len() - 1)].read();
        crate::evict::tick(shared, owner, now_ms);
    }
    let timeout_s = shared.config.read().timeout_s;
    // Under the defaults (no `timeout`, no output limit) there is nothing to look for.
    let output_limits = shared.output_limits.any().then(|| shared.output_limits.snapshot());
    if timeout_s == 0 && output_limits.is_none() {
        return Vec::new();
    }
    let limit = now_ms - (timeout_s as i64) * 1000;
    conns
        .filter(|(_, c)| {
            let idle = timeout_s > 0
                && c.client.info.last_interaction_ms.load(Ordering::Relaxed) < limit
                && c.client.info.created.elapsed().as_secs() > timeout_s;
            idle || output_limits.as_ref().is_some_and(|l| c.soft_output_limit_overdue(l, now_ms))
        })
        .map(|(i, _)| i)
        .collect()
}

/// Slots whose client was marked by CLIENT KILL, for the owning loop to close.
pub fn killed<'a>(conns: impl Iterator<Item = (usize, &'a Conn)>) -> Vec<usize> {
    conns.filter(|(_, c)| c.client.info.killed.load(Ordering::SeqCst)).map(|(i, _)| i).collect()
}

/// Takes the messages posted to loop `owner`'s mailbox (pub/sub), in order.
pub fn take_mail(shared: &Shared, owner: usize) -> Vec<crate::shared::Mail> {
    shared.mailboxes.get(owner).map(|m| std::mem::take(&mut *m.lock())).unwrap_or_default()
}

/// Applies a posted mail to its connection: a blocked client's reply unblocks it and
/// resumes its pending input; a pub/sub message (or MONITOR line, or invalidation) is
/// appended. Returns the flow: CloseNow when the client went over its
/// `client-output-buffer-limit` (`output_limit`).
pub fn apply_mail(conn: &mut Conn, mail: &crate::shared::Mail, w: &mut crate::conn::Worker<'_>) -> crate::conn::Flow {
    if mail.unblock {
        conn.client.blocked = false;
        // (WOFF_UNPUBLISHED, u64::MAX, stays: WAIT then takes a later offset still.)
        conn.client.repl_woff = conn.client.repl_woff.max(mail.repl_woff);
        crate::command::publish_client_state(&conn.client);
        if std::mem::take(&mut conn.client.postponed) {
            // The end of a CLIENT PAUSE: the postponed command, not consumed, runs now.
            return conn.process(w);
        }
        let mode = conn.client.reply_mode;
        if !mode.drops() {
            hold_until_logged(conn, mail, w);
            conn.output.append(&mail.bytes);
            conn.publish_output_size();
            if over_output_limit(conn, w) {
                return crate::conn::Flow::CloseNow;
            }
        }
        conn.client.reply_mode = mode.after_command();
        return conn.process(w);
    }
    // A message that reveals a write (a keyspace notification, a PUBLISH after
    // writes, an invalidation) leaves once the log holds that write, as replies do.
    hold_until_logged(conn, mail, w);
    conn.output.append(&mail.bytes);
    conn.publish_output_size();
    if over_output_limit(conn, w) {
        crate::conn::Flow::CloseNow
    } else {
        crate::conn::Flow::Continue
    }
}

/// Holds what the connection gets next until the log reaches the mail's `need` (the
/// engine lists the connection among its held ones after `apply_mail`).
fn hold_until_logged(conn: &mut Conn, mail: &crate::shared::Mail, w: &crate::conn::Worker<'_>) {
    if mail.need > 0 && w.shared.aof.as_ref().is_some_and(|a| mail.need > a.reached()) {
        conn.output.hold_from_here(mail.need);
    }
}

/// Whether a connection that was just given output is over its output limit (one load
/// while no limit is set).
fn over_output_limit(conn: &mut Conn, w: &crate::conn::Worker<'_>) -> bool {
    let limits = &w.shared.output_limits;
    limits.any() && conn.over_output_limit(&limits.snapshot(), w.now_ms)
}

/// Releases what the append-only log now allows of the replies held on a loop's
/// connections (`held`: their slots; `conn` finds a slot's connection). Returns the
/// slots whose output may now be sent (the engine also resumes the input of those
/// paused for the log: [`resume_paused`]), and tells the log writer the smallest offset
/// still awaited, so that it wakes this loop when it gets there.
pub fn release_held<S>(
    shared: &Shared,
    owner: usize,
    held: &mut Vec<usize>,
    slots: &mut [Option<S>],
    conn: impl Fn(&mut S) -> &mut Conn,
) -> Vec<usize> {
    let mut released = Vec::new();
    if held.is_empty() {
        return released;
    }
    // (The log's state even once it was turned off: the replies held for its records
    // before then still wait until they are durable, `aof::switch`.)
    let aof = shared.aof.object();
    aof.write_inline(owner);
    while !held.is_empty() {
        let reached = aof.reached();
        let mut smallest = u64::MAX;
        for t in std::mem::take(held) {
            let Some(Some(slot)) = slots.get_mut(t) else { continue };
            let c = conn(slot);
            let before = c.output.holds_len();
            match c.output.release_holds(reached) {
                Some(n) => {
                    smallest = smallest.min(n);
                    held.push(t);
                }
                None => c.held_listed = false,
            }
            if c.output.holds_len() != before {
                released.push(t);
            }
        }
        if held.is_empty() {
            aof.set_waiting(owner, 0);
            break;
        }
        aof.set_waiting(owner, smallest);
        // The writer may have got there between our reading and our telling it.
        if aof.reached() < smallest {
            break;
        }
    }
    released
}

/// Executes the pending input of a connection that was paused because the log's tail
/// was over its limit, once its held replies have left. None when it was not paused.
pub fn resume_paused(conn: &mut Conn, w: &mut crate::conn::Worker<'_>) -> Option<crate::conn::Flow> {
    if !conn.client.paused_for_log || conn.output.has_holds() {
        return None;
    }
    conn.client.paused_for_log = false;
    Some(conn.process(w))
}

/// The tick period for the configured `hz`.
pub fn tick_period(shared: &Shared) -> Duration {
    Duration::from_millis(1000 / shared.hz.load(Ordering::Relaxed).max(1))
}

/// Which engine runs the loops, after resolving `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Epoll,
    Uring,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Epoll => "epoll",
            Engine::Uring => "uring",
        }
    }
}
