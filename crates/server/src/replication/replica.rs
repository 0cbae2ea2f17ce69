//! The replica's side of replication: REPLICAOF's link to a master, on a thread of its
//! own (one per server; blocking socket I/O with short read timeouts for its timers).
//!
//! The link does what a Redis 7.0 replica does: PING, AUTH with `masterauth`
//! (`masteruser`), REPLCONF listening-port and capa eof/psync2, then PSYNC with the
//! master's replication ID and the offset held (a partial resync after a broken link)
//! or `? -1`. On `+FULLRESYNC` it receives the RDB (`$<len>` or the disk-less
//! `$EOF:<mark>` form) into a temporary file in `dir` (or, with `repl-diskless-load
//! on-empty-db` and no key here, loads it as it arrives), then empties the keyspace and
//! loads it while the loops answer `-LOADING` to every command not flagged `loading`,
//! as Redis's replica (`load`). With `repl-diskless-load swapdb` it loads the RDB as it
//! arrives into a keyspace aside and exchanges the two once it is whole (`load_aside`):
//! a failed transfer leaves the data set as it was, and when the sync continues the
//! history held, the old data set is served meanwhile (Redis's async loading). On
//! `+CONTINUE` it keeps its data. Then it applies the
//! stream through the dispatcher's loading client (`apply::Apply`, installed at start,
//! so this module never imports `command`), acknowledging the offset applied, answers
//! `REPLCONF GETACK` and sends `REPLCONF ACK <offset>` every second, and reconnects
//! (after a second) when the link breaks or the master is silent for `repl-timeout`.
//!
//! Each command's bytes are fed to this server's own stream as applied (`feed_raw`):
//! its backlog and offsets are its master's, so that its own replicas get that stream
//! byte for byte (chained; a snapshot for them records the stream's database,
//! `repl-stream-db`, which a full sync here reads back), and once promoted (REPLICAOF
//! NO ONE) the old master's other replicas continue from it (PSYNC2, the old ID kept as
//! the second one). A transaction is applied and passed on when its EXEC arrives, under
//! every gate, so that no snapshot starts inside it.
//!
//! The replica's log (`appendonly yes`) records its master's stream as applied, as a
//! Redis replica's AOF does: the stream's writes go through the dispatcher as the
//! master's client (`Client::from_master`), whose writes reach the log (and only the
//! log). A full sync replaces the data set: the log is detached from it
//! (`aof::rewrite::detach`, Redis 7.0's temporary incremental file), so that a restart
//! before the rewrite that follows brings back the data set of before the sync (then a
//! full sync), never the master's records over it; the rewrite from the data just
//! loaded then names its base and its incremental file together.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use super::link_stream::LinkStream;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::apply::Apply;
pub use crate::replication::role::{Link, LinkState};
use crate::replication::role::{now_ms, MasterClient};
use crate::shared::Shared;

/// Makes the applier a link runs the stream through (the dispatcher's replayer),
/// installed at start by the layer above the dispatcher ([`install`]), so that
/// replication never imports it. Stateless (it builds an applier for the server it is
/// given), hence one per process.
pub type MakeApply = Box<dyn for<'a> Fn(&'a Shared) -> Box<dyn Apply + 'a> + Send + Sync>;

static MAKE_APPLY: std::sync::OnceLock<MakeApply> = std::sync::OnceLock::new();

/// Installs the applier's maker (once per process; later calls change nothing).
pub fn install(make: MakeApply) {
    let _ = MAKE_APPLY.set(make);
}

/// REPLICAOF host port: follows that master from now on (a link to another one is cut
/// first). Nothing happens when it already follows that master.
pub fn follow(shared: &Arc<Shared>, host: &str, port: u16) -> bool {
    let mut slot = shared.replica.link.lock();
    if slot.as_ref().is_some_and(|l| l.host == host && l.port == port) {
        return false;
    }
    if let Some(old) = slot.take() {
        cut(&old);
    }
    let link = Arc::new(Link {
        host: host.to_string(),
        port,
        state: AtomicU8::new(LinkState::Connect as u8),
        offset: AtomicI64::new(-1),
        replid: Mutex::new(String::new()),
        last_io_ms: AtomicI64::new(0),
        down_since_ms: AtomicI64::new(now_ms()),
        stop: AtomicBool::new(false),
        socket: Mutex::new(None),
        stream_db: Mutex::new(None),
        transfer_size: AtomicI64::new(0),
        transfer_read: AtomicI64::new(0),
        master_client: Mutex::new(None),
        cached_master_client: Mutex::new(None),
        stream_db_now: std::sync::atomic::AtomicUsize::new(0),
        last_cmd: Mutex::new(String::new()),
        syncs_refused: std::sync::atomic::AtomicU32::new(0),
    });
    *slot = Some(Arc::clone(&link));
    shared.replica.set_replica(true);
    drop(slot);
    // Replicas of this server sync again, from the new master's stream once this one
    // has it.
    drop_own_replicas(shared);
    crate::log::notice(&format!("Connecting to MASTER {host}:{port}"));
    let s = Arc::clone(shared);
    let spawned = std::thread::Builder::new().name("replica-link".into()).spawn(move || run(&s, &link));
    if let Err(e) = spawned {
        crate::log::warning(&format!("Can't start the replication link: {e}"));
    }
    true
}

/// REPLICAOF NO ONE: the link is cut and this server is a master again, with a new
/// replication ID. False when it was not a replica. `why` is logged:
/// "MASTER MODE enabled (<why>)".
pub fn stop_following(shared: &Shared, why: &str) -> bool {
    let Some(old) = shared.replica.link.lock().take() else { return false };
    shared.replica.set_replica(false);
    cut(&old);
    shared.repl.new_history();
    // The log holds what was applied of the stream, once the rewrite after the last
    // full sync has ended: one still to begin (its load failed) is scheduled now.
    crate::aof::rewrite::schedule_if_detached(shared);
    crate::log::notice(&format!("MASTER MODE enabled ({why})"));
    true
}

/// How long a replica handed the role waits for its link to apply the old master's
/// stream to its end (`take_over`): the event loop that read the PSYNC waits meanwhile.
const HAND_OVER_WAIT: Duration = Duration::from_millis(500);

/// `PSYNC <replid> <from> FAILOVER` from the master this server follows, whose stream
/// ends before `from`: the link first applies the rest of that stream, then stops as
/// [`stop_following`]. The rest is in this server's socket, or on its way, when the
/// link's thread lagged (a FAILOVER ... FORCE to a replica that was behind): cut at
/// once, it would be lost, and the old master, which has it, would sync in full from a
/// new master without it. Bounded by [`HAND_OVER_WAIT`]: a link that is not streaming,
/// or does not get there in time, is cut where it stands (as Redis's replica, which
/// does not wait at all).
pub fn take_over(shared: &Shared, from: i64, why: &str) -> bool {
    if let Some(link) = shared.replica.link() {
        let deadline = Instant::now() + HAND_OVER_WAIT;
        while link.state() == LinkState::Connected && link.offset().saturating_add(1) < from && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    stop_following(shared, why)
}

/// FAILOVER's end once its target accepted this server's PSYNC (a partial or full sync
/// starts): writes are let go (a replica now refuses them).
fn failover_finished(shared: &Shared) {
    end_failover(shared, |state| state == crate::state::failover::IN_PROGRESS);
}

/// Ends the failover under way, if any, for `reason` (logged); one in progress makes
/// this server a master again. False when there was none.
pub fn abort_failover(shared: &Shared, reason: &str) -> bool {
    let f = &shared.failover;
    let state = {
        let plan = f.plan();
        let state = f.state();
        if state == crate::state::failover::NONE {
            return false;
        }
        crate::state::failover::Failover::log_abort(&plan, reason);
        state
    };
    // (Not under the plan's lock: the link's thread, which takes it, is stopped here.)
    if state == crate::state::failover::IN_PROGRESS && stop_following(shared, "FAILOVER aborted") {
        shared.config.write().replicaof = None;
    }
    end_failover(shared, |state| state != crate::state::failover::NONE);
    true
}

/// Forgets the failover, if its state (under the plan's lock) passes `ends`, and lets
/// the writes it held go.
fn end_failover(shared: &Shared, ends: impl FnOnce(u8) -> bool) {
    let f = &shared.failover;
    let mut plan = f.plan();
    if ends(f.state()) {
        f.clear(&mut plan);
        shared.pause.hold_for_failover(&shared.keyspace, false);
    }
}

/// Closes this server's replicas: they reconnect and sync again.
fn drop_own_replicas(shared: &Shared) {
    for id in shared.repl.replica_ids() {
        shared.repl.remove(id);
        shared.kill_client(id);
    }
}

/// Closes the link's connection (CLIENT KILL TYPE master): it reconnects a second
/// later, continuing where it stopped. False when it had none.
pub fn drop_connection(link: &Link) -> bool {
    match link.socket.lock().as_ref() {
        Some(s) => s.shutdown(std::net::Shutdown::Both).is_ok(),
        None => false,
    }
}

fn cut(link: &Link) {
    link.stop.store(true, Ordering::Release);
    if let Some(s) = link.socket.lock().as_ref() {
        let _ = s.shutdown(std::net::Shutdown::Both);
    }
}

fn run(shared: &Shared, link: &Link) {
    let Some(make_apply) = MAKE_APPLY.get() else {
        crate::log::warning("The replication link has no way to apply the stream (set at start)");
        return;
    };
    let mut apply = make_apply(shared);
    // This thread applies the master's commands: they find every key the master finds
    // (`store::set_expired_keys_live`).
    store::set_expired_keys_live(true);
    while !link.stop.load(Ordering::Acquire) && !shared.shutdown.load(Ordering::Acquire) {
        link.set_state(LinkState::Connecting);
        match session(shared, link, apply.as_mut()) {
            Ok(()) => {}
            Err(e) => crate::log::warning(&format!("Replication link to {}:{}: {e}", link.host, link.port)),
        }
        apply.drop_transaction();
        *link.socket.lock() = None;
        master_client_gone(shared, link);
        link.set_state(LinkState::Connect);
        if link.stop.load(Ordering::Acquire) {
            break;
        }
        // Redis retries once a second; a sync this server's log refused, later and later.
        let refused = link.syncs_refused.load(Ordering::Relaxed);
        let tenths = if refused == 0 { 10 } else { (10u32 << refused.min(6)).min(600) };
        for _ in 0..tenths {
            if link.stop.load(Ordering::Acquire) || shared.shutdown.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

type LinkResult<T> = Result<T, String>;

/// One connection to the master: handshake, sync, stream, until it breaks.
fn session(shared: &Shared, link: &Link, apply: &mut dyn Apply) -> LinkResult<()> {
    let (timeout_s, auth, own_port, announce_ip, tls) = {
        let c = shared.config.read();
        let announce_port = c.recorded.get("replica-announce-port").and_then(|p| p.parse::<u16>().ok()).filter(|&p| p > 0);
        let announce_ip = c.recorded.get("replica-announce-ip").filter(|ip| !ip.is_empty()).cloned();
        // `tls-replication yes`: TLS to the master, and this server's TLS port is the
        // one its master announces (as Redis's replica).
        let tls = c.recorded.get("tls-replication").is_some_and(|v| v == "yes");
        let port = if tls && c.tls_port() != 0 { c.tls_port() } else { c.port };
        (c.repl_timeout, (c.masteruser.clone(), c.masterauth.clone()), announce_port.unwrap_or(port), announce_ip, tls.then(|| c.tls_settings()))
    };
    let timeout = Duration::from_secs(timeout_s.max(1));
    let addr = format!("{}:{}", link.host, link.port);
    let sock = std::net::ToSocketAddrs::to_socket_addrs(&addr)
        .map_err(|e| format!("can't resolve {addr}: {e}"))?
        .next()
        .ok_or_else(|| format!("no address for {addr}"))?;
    let socket = TcpStream::connect_timeout(&sock, timeout).map_err(|e| format!("Error condition on socket for SYNC: {e}"))?;
    let _ = socket.set_nodelay(true);
    socket.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let stream = match tls {
        Some(settings) => {
            let config = crate::tls::build_client(&settings).map_err(|e| format!("TLS for the link to the master: {e}"))?;
            LinkStream::tls(socket, config, &link.host)?
        }
        None => LinkStream::plain(socket).map_err(|e| e.to_string())?,
    };
    *link.socket.lock() = stream.socket().ok();
    if link.stop.load(Ordering::Acquire) {
        return Ok(());
    }
    crate::log::notice("MASTER <-> REPLICA sync started");
    let mut w = stream.clone();
    let mut r = BufReader::with_capacity(64 * 1024, stream);

    // The handshake, as Redis's replica sends it.
    let reply = command(&mut w, &mut r, &[b"PING"])?;
    if reply.starts_with('-') && !reply.starts_with("-NOAUTH") {
        return Err(format!("Error reply to PING from master: '{reply}'"));
    }
    if let (user, Some(pass)) = auth {
        let reply = match user {
            Some(u) => command(&mut w, &mut r, &[b"AUTH", u.as_bytes(), &pass])?,
            None => command(&mut w, &mut r, &[b"AUTH", &pass])?,
        };
        if reply.starts_with('-') {
            return Err(format!("Unable to AUTH to MASTER: {reply}"));
        }
    }
    let port = own_port.to_string();
    let reply = command(&mut w, &mut r, &[b"REPLCONF", b"listening-port", port.as_bytes()])?;
    if reply.starts_with('-') {
        crate::log::notice(&format!("(Non critical) Master does not understand REPLCONF listening-port: {reply}"));
    }
    if let Some(ip) = announce_ip {
        let reply = command(&mut w, &mut r, &[b"REPLCONF", b"ip-address", ip.as_bytes()])?;
        if reply.starts_with('-') {
            crate::log::notice(&format!("(Non critical) Master does not understand REPLCONF ip-address: {reply}"));
        }
    }
    let reply = command(&mut w, &mut r, &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])?;
    if reply.starts_with('-') {
        crate::log::notice(&format!("(Non critical) Master does not understand REPLCONF capa: {reply}"));
    }
    // PSYNC with the history this server's data follows: its stream's ID and offset once
    // it has synced with a master (this link's or an earlier one's: a replica moved to a
    // promoted replica continues with PSYNC2), else a full sync.
    let (replid, offset) = if shared.repl.feeding() {
        let (id, off) = shared.repl.position();
        (id, off as i64)
    } else {
        (String::new(), -1)
    };
    let mut partial = false;
    // A FAILOVER's hand-over to this master asks it to take over (`failover.rs`).
    let failing_over = shared.failover.in_progress_target().is_some_and(|(h, p)| h == link.host && p == link.port);
    let (id, at) = if replid.is_empty() || offset < 0 {
        crate::log::notice("Partial resynchronization not possible (no cached master)");
        ("?".to_string(), "-1".to_string())
    } else {
        crate::log::notice(&format!("Trying a partial resynchronization (request {replid}:{}).", offset + 1));
        (replid.clone(), (offset + 1).to_string())
    };
    let mut args: Vec<&[u8]> = vec![b"PSYNC", id.as_bytes(), at.as_bytes()];
    if failing_over {
        args.push(b"FAILOVER");
    }
    let reply = match command(&mut w, &mut r, &args) {
        Ok(reply) => reply,
        // A PSYNC that did not reach the target, or got no answer, ends the failover as
        // a refusal does (Redis's words for each).
        Err(e) if failing_over => {
            let why = if e.starts_with("Error writing") { "Write error to failover target" } else { "Failover target rejected psync request" };
            abort_failover(shared, why);
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    if failing_over {
        // Either answer that starts a sync ends the failover; anything else (the target
        // refused to take over) makes this server a master again.
        if reply.starts_with("+FULLRESYNC") || reply.starts_with("+CONTINUE") {
            failover_finished(shared);
        } else {
            abort_failover(shared, "Failover target rejected psync request");
            return Err(format!("The failover target refused to take over: {reply}"));
        }
    }
    if let Some(rest) = reply.strip_prefix("+FULLRESYNC ") {
        let mut words = rest.split(' ');
        let (Some(id), Some(off)) = (words.next(), words.next().and_then(|o| o.parse::<i64>().ok())) else {
            return Err(format!("Master replied with an unreadable FULLRESYNC: '{reply}'"));
        };
        crate::log::notice(&format!("Full resync from master: {id}:{off}"));
        link.set_state(LinkState::Sync);
        full_sync(shared, link, &mut r, id, off)?;
    } else if let Some(rest) = reply.strip_prefix("+CONTINUE") {
        let id = rest.trim();
        if !id.is_empty() && id != replid {
            crate::log::notice(&format!("Master replication ID changed to {id}"));
            shared.repl.shift_history(id);
            // Its replicas learn the new ID by reconnecting (PSYNC2 continues them).
            drop_own_replicas(shared);
        }
        *link.replid.lock() = shared.repl.position().0;
        link.offset.store(offset, Ordering::Release);
        crate::log::notice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
        partial = true;
    } else {
        return Err(format!("Unexpected reply to PSYNC from master: {reply}"));
    }
    master_client_up(shared, link, &w, partial);
    link.set_state(LinkState::Connected);
    link.last_io_ms.store(now_ms(), Ordering::Relaxed);
    stream_from_master(shared, link, apply, &mut w, r, timeout)
}

/// Sends one command and reads its one-line reply (the handshake's).
fn command(w: &mut LinkStream, r: &mut BufReader<LinkStream>, args: &[&[u8]]) -> LinkResult<String> {
    let mut buf = Vec::new();
    resp::encode::array_len(&mut buf, args.len());
    for a in args {
        resp::encode::bulk(&mut buf, a);
    }
    w.write_all(&buf).map_err(|e| format!("Error writing to MASTER: {e}"))?;
    read_line(r)
}

/// A reply line, skipping the newlines a master sends to keep a waiting replica's link
/// alive.
fn read_line(r: &mut BufReader<LinkStream>) -> LinkResult<String> {
    loop {
        let mut line = Vec::new();
        let n = r.read_until(b'\n', &mut line).map_err(|e| format!("Error reading from MASTER: {e}"))?;
        if n == 0 {
            return Err("the master closed the connection".into());
        }
        let text = String::from_utf8_lossy(&line).trim_end_matches(['\r', '\n']).to_string();
        if !text.is_empty() {
            return Ok(text);
        }
    }
}

/// Receives the master's RDB into a temporary file, then empties the keyspace and loads
/// it (`load`).
fn full_sync(shared: &Shared, link: &Link, r: &mut BufReader<LinkStream>, replid: &str, offset: i64) -> LinkResult<()> {
    let header = read_line(r)?;
    let Some(size) = header.strip_prefix('$') else {
        return Err(format!("Bad protocol from MASTER, the first byte is not '$' (we received '{header}')"));
    };
    let mode = shared.config.read().recorded.get("repl-diskless-load").cloned().unwrap_or_default();
    // `repl-diskless-load swapdb`: loaded as it arrives into a keyspace aside, which
    // takes the place of the one served once whole.
    if mode == "swapdb" {
        return load_aside(shared, link, StreamedRdb::new(link, r, size)?, replid, offset);
    }
    // `on-empty-db`: with nothing to lose, the RDB is loaded as it arrives, with no
    // temporary file.
    if mode == "on-empty-db" && (0..shared.keyspace.databases()).all(|db| shared.keyspace.dbsize(db) == 0) {
        let rdb = StreamedRdb::new(link, r, size)?;
        let total = rdb.remaining.unwrap_or(0);
        let mut source = LoadSource::Streamed(rdb);
        crate::log::notice("MASTER <-> REPLICA sync: Loading DB in memory from the socket (repl-diskless-load on-empty-db)");
        return load(shared, link, &mut source, total, replid, offset);
    }
    let dir = shared.config.read().dir.clone();
    let tmp = dir.join(format!("temp-{}.{}.rdb", std::process::id(), now_ms()));
    let result = receive(link, r, size, &tmp).and_then(|len| {
        crate::log::notice(&format!("MASTER <-> REPLICA sync: receiving {len} bytes from master to disk"));
        let file = std::fs::File::open(&tmp).map_err(|e| e.to_string())?;
        load(shared, link, &mut LoadSource::File(BufReader::with_capacity(1 << 20, file)), len, replid, offset)
    });
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Writes the RDB that follows `$<size>` (or `$EOF:<mark>`) to `path`; its length.
fn receive(link: &Link, r: &mut BufReader<LinkStream>, size: &str, path: &std::path::Path) -> LinkResult<u64> {
    let mut file = std::fs::File::create(path).map_err(|e| format!("Opening the temp file needed for MASTER <-> REPLICA synchronization: {e}"))?;
    let mut rdb = StreamedRdb::new(link, r, size)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = rdb.read(&mut buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => e.to_string(),
            _ => format!("I/O error trying to sync with MASTER: {e}"),
        })?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n]).map_err(|e| e.to_string())?;
        total += n as u64;
    }
    file.sync_all().map_err(|e| e.to_string())?;
    Ok(total)
}

/// Where a full sync's RDB is loaded from: the temporary file it was received into, or
/// the master's connection itself (`repl-diskless-load on-empty-db`).
enum LoadSource<'a> {
    File(BufReader<std::fs::File>),
    Streamed(StreamedRdb<'a>),
}

impl Read for LoadSource<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        match self {
            LoadSource::File(f) => f.read(out),
            LoadSource::Streamed(s) => s.read(out),
        }
    }
}

/// The RDB of a full sync as read from the master's connection (into the temporary
/// file, or by the loader itself): the `$<len>` bytes, or (disk-less form) everything
/// before the 40-byte `$EOF:` mark, never a byte past it (the stream that follows stays
/// in the reader); INFO's transfer figures counted as it goes. The last 40 bytes read are
/// held back until it is known whether they are the mark; the master sends nothing
/// after the mark before this replica acknowledges (Redis's rule too).
struct StreamedRdb<'a> {
    link: &'a Link,
    r: &'a mut BufReader<LinkStream>,
    /// `$<len>`: the bytes still to come.
    remaining: Option<u64>,
    /// `$EOF:<mark>`: the mark, the bytes read and not yet given out, and whether the
    /// mark was seen (then `held` is the rest of the RDB).
    mark: Option<Vec<u8>>,
    held: Vec<u8>,
    done: bool,
}

impl<'a> StreamedRdb<'a> {
    fn new(link: &'a Link, r: &'a mut BufReader<LinkStream>, size: &str) -> LinkResult<StreamedRdb<'a>> {
        link.transfer_read.store(0, Ordering::Relaxed);
        link.transfer_size.store(size.parse::<i64>().unwrap_or(-1), Ordering::Relaxed);
        let (remaining, mark) = match size.strip_prefix("EOF:") {
            Some(mark) if mark.len() == 40 => (None, Some(mark.as_bytes().to_vec())),
            Some(_) => return Err(format!("Bad EOF mark from MASTER: '{size}'")),
            None => (Some(size.parse::<u64>().map_err(|_| format!("Bad RDB length from MASTER: '{size}'"))?), None),
        };
        Ok(StreamedRdb { link, r, remaining, mark, held: Vec::new(), done: false })
    }

    fn count(&self, n: usize) {
        self.link.last_io_ms.store(now_ms(), Ordering::Relaxed);
        self.link.transfer_read.fetch_add(n as i64, Ordering::Relaxed);
    }

    /// After the load: the whole transfer was consumed, mark included (an RDB shorter
    /// than what the master announced is a corrupt transfer).
    fn finish(&mut self) -> LinkResult<()> {
        let mut rest = [0u8; 4096];
        let extra = self.read(&mut rest).map_err(|e| format!("I/O error trying to sync with MASTER: {e}"))?;
        if extra > 0 {
            return Err("the master's RDB has bytes after its end".into());
        }
        Ok(())
    }
}

impl Read for StreamedRdb<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let closed = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the master closed the connection during the transfer");
        if let Some(remaining) = self.remaining.as_mut() {
            if *remaining == 0 || out.is_empty() {
                return Ok(0);
            }
            let want = (*remaining).min(out.len() as u64) as usize;
            let n = self.r.read(&mut out[..want])?;
            if n == 0 {
                return Err(closed());
            }
            *remaining -= n as u64;
            self.count(n);
            return Ok(n);
        }
        let Some(mark) = self.mark.as_ref() else { return Ok(0) };
        loop {
            let keep = if self.done { 0 } else { mark.len() };
            if self.held.len() > keep {
                let n = (self.held.len() - keep).min(out.len());
                out[..n].copy_from_slice(&self.held[..n]);
                self.held.drain(..n);
                return Ok(n);
            }
            if self.done {
                return Ok(0);
            }
            let chunk = self.r.fill_buf()?;
            if chunk.is_empty() {
                return Err(closed());
            }
            let n = chunk.len();
            self.held.extend_from_slice(chunk);
            self.r.consume(n);
            self.count(n);
            if self.held.ends_with(mark) {
                self.held.truncate(self.held.len() - mark.len());
                self.done = true;
            }
        }
    }
}

/// Empties the keyspace and loads the received RDB; from then on this server's stream
/// is its master's, from `offset` of `replid`.
///
/// The flush, and the switch to the master's history at the end, run under every
/// loop's gate. The load between them holds the gates only for reading, as a loop
/// does while it writes: the loops go on serving, and answer `-LOADING` to every
/// command not flagged `loading` (INFO, ROLE, CONFIG, CLIENT, SHUTDOWN run), as Redis
/// does while it loads. (Held for writing, a load of millions of keys left every client,
/// Sentinel's PINGs and INFOs among them, without a reply for seconds.) Whatever needs
/// the keyspace alone (EXEC, a capture's start) waits for the load's end, and the
/// snapshot thread starts none meanwhile.
fn load(shared: &Shared, link: &Link, source: &mut LoadSource<'_>, total: u64, replid: &str, offset: i64) -> LinkResult<()> {
    let loading = {
        let _gates = shared.all_gates(false);
        if link.stop.load(Ordering::Acquire) {
            return Err("the link was cut before the load".into());
        }
        detach_log(shared, link)?;
        // The old history goes with the flush: a load that fails must not leave a PSYNC
        // that the master would continue on partial data; this server's own replicas sync
        // again (as Redis's disconnectSlaves).
        shared.repl.forget_history();
        drop_own_replicas(shared);
        crate::log::notice("MASTER <-> REPLICA sync: Flushing old data");
        invalidate_for_flush(shared, None);
        // `replica-lazy-flush yes`: the old data set is freed on the lazy-free thread,
        // not under every gate (Redis's default, `no`, frees it here: less memory held
        // while the new one loads, a stall of every client meanwhile).
        let lazy = shared.config.read().recorded.get("replica-lazy-flush").is_some_and(|v| v == "yes");
        let ks = &shared.keyspace;
        for db in 0..ks.databases() {
            let tables = ks.flush_db(db);
            if lazy && tables.iter().any(|t| !t.is_empty()) {
                shared.lazyfree.free_tables(tables);
            }
        }
        shared.begin_loading(total, false)
    };
    crate::log::notice("MASTER <-> REPLICA sync: Loading DB in memory");
    let loaded = {
        let _gates = shared.all_gates_shared();
        let loaded = crate::snapshot::load_with_info(shared, &shared.keyspace, shared.load_reader(&mut *source));
        store::release_kept();
        loaded
    };
    let (keys, expired, info) = loaded.map_err(|e| format!("Failed trying to load the MASTER synchronization DB from disk: {e}"))?;
    if let LoadSource::Streamed(rdb) = source {
        rdb.finish()?;
    }
    let _gates = shared.all_gates(false);
    drop(loading);
    finish_sync(shared, link, &info, keys, expired, replid, offset);
    Ok(())
}

/// `repl-diskless-load swapdb`: loads the master's snapshot from the connection into a
/// keyspace aside, then exchanges the two under every gate, and frees the old data set
/// off the loops. When the snapshot continues the history this server holds (the same
/// replication ID: a full sync after the link was down longer than the master's
/// backlog covers), the old data set is served meanwhile (Redis 7.0's async loading,
/// INFO `async_loading:1`); otherwise clients get `-LOADING` as during a load in place.
/// A load that fails or is cut leaves the data set and the history as they were, so
/// that the next attempt may still continue it (`+CONTINUE`).
fn load_aside(shared: &Shared, link: &Link, mut rdb: StreamedRdb<'_>, replid: &str, offset: i64) -> LinkResult<()> {
    let total = rdb.remaining.unwrap_or(0);
    let continues = shared.repl.position().0 == replid;
    let loading = {
        let _gates = shared.all_gates(false);
        if link.stop.load(Ordering::Acquire) {
            return Err("the link was cut before the load".into());
        }
        if continues {
            shared.begin_async_loading(total)
        } else {
            shared.begin_loading(total, false)
        }
    };
    crate::log::notice(if continues {
        "MASTER <-> REPLICA sync: Loading DB in memory aside, serving the old data meanwhile (repl-diskless-load swapdb)"
    } else {
        "MASTER <-> REPLICA sync: Loading DB in memory aside (repl-diskless-load swapdb)"
    });
    let mut aside = shared.keyspace.empty_like();
    let loaded = crate::snapshot::load_with_info(shared, &aside, shared.load_reader(&mut rdb));
    store::release_kept();
    let loaded = loaded
        .map_err(|e| format!("Failed trying to load the MASTER synchronization DB from socket: {e}"))
        .and_then(|l| rdb.finish().map(|()| l));
    let gates = shared.all_gates(false);
    let loaded = loaded.and_then(|l| match link.stop.load(Ordering::Acquire) {
        true => Err("the link was cut during the load".to_string()),
        false => Ok(l),
    });
    drop(loading);
    let (keys, expired, info) = match loaded {
        Ok(l) => l,
        Err(e) => {
            drop(gates);
            discard(shared, aside);
            crate::log::notice("MASTER <-> REPLICA sync: Discarding temporary DB in background");
            return Err(e);
        }
    };
    if let Err(e) = detach_log(shared, link) {
        drop(gates);
        discard(shared, aside);
        crate::log::notice("MASTER <-> REPLICA sync: Discarding temporary DB in background");
        return Err(e);
    }
    shared.repl.forget_history();
    drop_own_replicas(shared);
    invalidate_for_flush(shared, Some(&aside));
    crate::log::notice("MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
    shared.keyspace.exchange(&mut aside);
    finish_sync(shared, link, &info, keys, expired, replid, offset);
    drop(gates);
    discard(shared, aside);
    crate::log::notice("MASTER <-> REPLICA sync: Discarding old DB in background");
    Ok(())
}

/// Before the data set is replaced (every gate held): the log goes on in a file of the
/// new data set's (`aof::rewrite::detach`). Where it cannot, the sync ends with nothing
/// replaced, and the link tries again later (2, 4 ... 60 s: `Link::syncs_refused`).
fn detach_log(shared: &Shared, link: &Link) -> LinkResult<()> {
    match crate::aof::rewrite::detach(shared) {
        Ok(()) => {
            link.syncs_refused.store(0, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => {
            let refused = link.syncs_refused.fetch_add(1, Ordering::Relaxed) + 1;
            let wait_s = (1u32 << refused.min(6)).min(60);
            Err(format!("Can't start a new AOF file for the data set the master sent ({e}): the sync is abandoned, the data set and the log stay as they were; next attempt in {wait_s} s"))
        }
    }
}

/// Before the data set is replaced: every watched key that the old or the incoming
/// data set holds has changed for its watchers, and every tracking client drops what
/// it cached (as Redis's flush of a replica's data). Under every gate.
fn invalidate_for_flush(shared: &Shared, incoming: Option<&store::Keyspace>) {
    let watched: Vec<(usize, Vec<u8>)> = shared.watches.lock().keys().cloned().collect();
    let now = shared.keyspace.now_ms();
    let holds = |ks: &store::Keyspace, db: usize, key: &[u8]| {
        let (h, shard) = ks.lock_key(db, key);
        shard.peek(h, key, now).is_some()
    };
    for (db, key) in watched {
        if holds(&shared.keyspace, db, &key) || incoming.is_some_and(|ks| holds(ks, db, &key)) {
            shared.touch(db, &key);
        }
    }
    store::release_kept();
    crate::tracking::flush_all(shared, 0);
}

/// Frees a data set that left the keyspace (the old one, or a load that failed) on
/// the lazy-free thread.
fn discard(shared: &Shared, ks: store::Keyspace) {
    let tables = (0..ks.databases()).flat_map(|db| ks.flush_db(db)).collect();
    store::release_kept();
    shared.lazyfree.free_tables(tables);
}

/// After a full sync's load, under every gate: this server's stream is its master's
/// from `offset` of `replid`, and its log is rewritten from the data just loaded.
fn finish_sync(shared: &Shared, link: &Link, info: &store::rdb::LoadInfo, keys: u64, expired: u64, replid: &str, offset: i64) {
    // The database the master's stream is in at the snapshot (a replica passing its own
    // master's stream on cannot add a SELECT; Redis writes it for every sync too).
    let stream_db = info
        .aux
        .iter()
        .find(|(k, _)| k == b"repl-stream-db")
        .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse::<usize>().ok())
        .filter(|&db| db < shared.keyspace.databases());
    shared.repl.follow(replid, u64::try_from(offset).unwrap_or(0), stream_db);
    *link.stream_db.lock() = stream_db;
    *link.replid.lock() = replid.to_string();
    link.offset.store(offset, Ordering::Release);
    crate::log::notice(&format!("Done loading RDB, keys loaded: {keys}, keys expired: {expired}."));
    // As Redis after a sync: the log restarts from the data just loaded, so that a
    // restart does not bring back what the flush removed.
    crate::aof::rewrite::begin_or_schedule(shared, true);
    crate::log::notice("MASTER <-> REPLICA sync: Finished with success");
}

/// Applies the master's stream until the link breaks or is cut.
fn stream_from_master(shared: &Shared, link: &Link, apply: &mut dyn Apply, w: &mut LinkStream, mut r: BufReader<LinkStream>, timeout: Duration) -> LinkResult<()> {
    // Short reads, so that the link acknowledges every second and notices a cut.
    r.get_ref().set_read_timeout(Some(Duration::from_millis(100))).map_err(|e| e.to_string())?;
    let mut parser = resp::RequestParser::new(resp::Limits::default());
    let mut input: Vec<u8> = r.buffer().to_vec();
    r.consume(input.len());
    let mut stream = r.into_inner();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut last_ack = Instant::now() - Duration::from_secs(2);
    let mut last_data = Instant::now();
    let mut block: Vec<(Vec<Vec<u8>>, Vec<u8>)> = Vec::new();
    // An acknowledgement that could not be written ends the link, but only once what
    // the master sent before is read and applied: a master handing its role over
    // (FAILOVER) closes the link right after its last commands and its GETACK, and those
    // commands are a prefix of its stream like any other.
    let mut ack_error: Option<String> = None;
    // After a full sync, the stream's commands run in the database the snapshot named.
    if let Some(db) = link.stream_db.lock().take() {
        apply_one(shared, link, apply, &[b"SELECT", db.to_string().as_bytes()], b"");
    }
    loop {
        if link.stop.load(Ordering::Acquire) || shared.shutdown.load(Ordering::Acquire) {
            return Ok(());
        }
        // A shutdown waiting for this server's own replicas (`crate::shutdown`): the
        // master's writes wait, as Redis pauses its master client with the other
        // clients' writes, so that the offset the replicas catch up with stands still.
        // (Acknowledgements go on; the master's bytes wait in the socket.)
        if shared.pause.writes_held() {
            if last_ack.elapsed() >= Duration::from_secs(1) && ack_error.is_none() {
                ack_error = send_ack(w, link).err();
                last_ack = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(10));
            last_data = Instant::now();
            continue;
        }
        let mut start = 0;
        while start < input.len() {
            // Cut (REPLICAOF NO ONE, or another master): not one command more of this
            // master's.
            if link.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            let n = match parser.parse(&input[start..]) {
                Ok(Some(n)) => n,
                Ok(None) => break,
                Err(e) => return Err(format!("protocol error in the master's stream: {e:?}")),
            };
            let args: Vec<&[u8]> = parser.args(&input[start..]).collect();
            let raw = &input[start..start + n];
            if is_getack(&args) {
                // The offset before this command, as Redis's replica answers.
                if ack_error.is_none() {
                    ack_error = send_ack(w, link).err();
                }
                last_ack = Instant::now();
                let _gate = shared.gate(0).read();
                shared.repl.feed_raw(raw, None);
            } else if !block.is_empty() || is(&args, b"MULTI") {
                // A transaction is applied, and passed on, when its EXEC arrives: at
                // once, so that no snapshot for a replica of this one starts inside it.
                block.push((args.iter().map(|a| a.to_vec()).collect(), raw.to_vec()));
                if is(&args, b"EXEC") || is(&args, b"DISCARD") {
                    apply_block(shared, link, apply, std::mem::take(&mut block));
                }
            } else {
                apply_one(shared, link, apply, &args, raw);
            }
            if block.is_empty() {
                // The offset applied (and passed on): a transaction counts once its EXEC
                // ran, so an acknowledgement never covers half of one.
                link.offset.store(shared.repl.offset_now() as i64, Ordering::Release);
            }
            start += n;
        }
        input.drain(..start);
        if start > 0 {
            // What was applied reaches the log's file now, not at the writer's next
            // tick (the loops, which write their own records, need not run).
            if let Some(aof) = shared.aof.as_ref() {
                aof.nudge_writer();
            }
        }
        if last_ack.elapsed() >= Duration::from_secs(1) && ack_error.is_none() {
            ack_error = send_ack(w, link).err();
            last_ack = Instant::now();
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Err(ack_error.unwrap_or_else(|| "the master closed the connection".into())),
            Ok(n) => {
                input.extend_from_slice(&chunk[..n]);
                last_data = Instant::now();
                link.last_io_ms.store(now_ms(), Ordering::Relaxed);
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                // Everything the master sent before the failed write has been applied.
                if let Some(e) = ack_error {
                    return Err(e);
                }
                if last_data.elapsed() > timeout {
                    return Err("MASTER timeout: no data nor PING received...".into());
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ack_error.unwrap_or_else(|| format!("Error reading from MASTER: {e}"))),
        }
    }
}

fn is(args: &[&[u8]], name: &[u8]) -> bool {
    args.first().is_some_and(|a| a.eq_ignore_ascii_case(name))
}

/// The database a SELECT of the stream selects.
fn selected(args: &[&[u8]]) -> Option<usize> {
    if is(args, b"SELECT") {
        std::str::from_utf8(args.get(1)?).ok()?.parse().ok()
    } else {
        None
    }
}

/// A transaction of the stream, MULTI to EXEC (or DISCARD), applied and passed on under
/// every loop's gate.
fn apply_block(shared: &Shared, link: &Link, apply: &mut dyn Apply, block: Vec<(Vec<Vec<u8>>, Vec<u8>)>) {
    let _gates = shared.all_gates(false);
    let now = now_ms();
    for (args, raw) in &block {
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        note_applied(link, &args);
        apply.apply(&args, now);
        shared.repl.feed_raw(raw, selected(&args));
    }
}

/// What the master client's CLIENT LIST line shows of a command applied: its name and,
/// for SELECT, the database.
fn note_applied(link: &Link, args: &[&[u8]]) {
    let Some(name) = args.first() else { return };
    if let Some(db) = selected(args) {
        link.stream_db_now.store(db, Ordering::Relaxed);
    }
    let mut last = link.last_cmd.lock();
    last.clear();
    last.extend(name.iter().take(32).map(|&b| char::from(b.to_ascii_lowercase())));
}

/// The link is up: the master becomes a client of this server, with an id of its own
/// after a full sync and, after a partial one, the id and age of the last connection's
/// (Redis resurrects its cached master client).
fn master_client_up(shared: &Shared, link: &Link, socket: &LinkStream, partial: bool) {
    let cached = link.cached_master_client.lock().take().filter(|_| partial);
    let client = MasterClient {
        id: cached.as_ref().map_or_else(|| shared.next_client_id.fetch_add(1, Ordering::Relaxed), |c| c.id),
        since: cached.as_ref().map_or_else(Instant::now, |c| c.since),
        addr: socket.peer_addr().map(|a| a.to_string()).unwrap_or_default(),
        laddr: socket.local_addr().map(|a| a.to_string()).unwrap_or_default(),
        fd: std::os::fd::AsRawFd::as_raw_fd(socket),
    };
    if link.master_client.lock().replace(client).is_none() {
        shared.connected_clients.fetch_add(1, Ordering::Relaxed);
    }
}

fn master_client_gone(shared: &Shared, link: &Link) {
    if let Some(client) = link.master_client.lock().take() {
        shared.connected_clients.fetch_sub(1, Ordering::Relaxed);
        *link.cached_master_client.lock() = Some(client);
    }
}

fn is_getack(args: &[&[u8]]) -> bool {
    args.len() >= 2 && args[0].eq_ignore_ascii_case(b"REPLCONF") && args[1].eq_ignore_ascii_case(b"GETACK")
}

fn send_ack(w: &mut LinkStream, link: &Link) -> LinkResult<()> {
    let offset = link.offset().max(0).to_string();
    let mut buf = Vec::new();
    resp::encode::array_len(&mut buf, 3);
    for a in [&b"REPLCONF"[..], b"ACK", offset.as_bytes()] {
        resp::encode::bulk(&mut buf, a);
    }
    w.write_all(&buf).map_err(|e| format!("Error writing to MASTER: {e}"))
}

/// Runs one command of the stream and feeds its bytes to this server's own stream (its
/// backlog, for PSYNC2 after a promotion, and its replicas): under loop 0's gate, so
/// that no EXEC on a loop and no snapshot's start sees it half done.
fn apply_one(shared: &Shared, link: &Link, apply: &mut dyn Apply, args: &[&[u8]], raw: &[u8]) {
    let _gate = shared.gate(0).read();
    if !args.is_empty() {
        note_applied(link, args);
        apply.apply(args, now_ms());
    }
    shared.repl.feed_raw(raw, selected(args));
}
