//! Test harness for the black-box suite.
//!
//! Which server the tests talk to:
//! - `BASALT_TEST_ADDR=host:port`: an already running server (e.g. a real
//!   Redis). Nothing is spawned. Tests that need global state (FLUSHALL,
//!   DBSIZE, CONFIG SET, ...) then run one at a time: every test takes a
//!   process-wide read lock ([`shared`]), global-state tests take the write
//!   lock ([`exclusive`]) and work in database [`EXTERNAL_EXCLUSIVE_DB`]
//!   (FLUSHALL tests do flush the whole external server). Tests that need a
//!   server started with extra flags ([`exclusive_with_args`], e.g.
//!   `--requirepass`) are skipped in that mode.
//! - `BASALT_TEST_SERVER=/path/to/binary`: spawn that binary (e.g.
//!   `/usr/bin/redis-server`) instead of Basalt.
//! - otherwise: spawn the `basalt-server` binary built by cargo.
//!
//! Spawned servers get `--port P --bind 127.0.0.1 --dir <tempdir>
//! --enable-debug-command yes --save ""`. One server is shared by all
//! tests of the binary (started lazily, killed by PID at exit); global-state
//! tests spawn their own server, killed by PID when the test ends. Every
//! spawned server is also watched by a small `sh` watchdog that kills it if
//! the test process dies without cleaning up.
//!
//! Persistence tests start servers in a directory they own, which outlives
//! each process ([`ServerProcess::spawn_in`], one log file per start,
//! [`ServerProcess::kill9`]), and servers expected not to start
//! ([`start_expect_exit`]: exit code and log, bounded wait).

#![allow(dead_code)]

use std::cell::Cell;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// How long a spawned server may take to answer PING.
pub const SPAWN_TIMEOUT: Duration = Duration::from_secs(10);
/// Default read timeout for a reply.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Database used by exclusive tests when running against `BASALT_TEST_ADDR`.
pub const EXTERNAL_EXCLUSIVE_DB: i64 = 9;

// ---------------------------------------------------------------------------
// Mode
// ---------------------------------------------------------------------------

enum Mode {
    External(String),
    Spawn(PathBuf),
}

/// The server binary the suite spawns; None against an external server.
pub fn server_binary() -> Option<&'static std::path::Path> {
    match mode() {
        Mode::Spawn(bin) => Some(bin.as_path()),
        Mode::External(_) => None,
    }
}

fn mode() -> &'static Mode {
    static MODE: OnceLock<Mode> = OnceLock::new();
    MODE.get_or_init(|| {
        if let Ok(addr) = std::env::var("BASALT_TEST_ADDR") {
            if !addr.trim().is_empty() {
                return Mode::External(addr.trim().to_string());
            }
        }
        if let Ok(bin) = std::env::var("BASALT_TEST_SERVER") {
            if !bin.trim().is_empty() {
                return Mode::Spawn(PathBuf::from(bin.trim()));
            }
        }
        Mode::Spawn(PathBuf::from(env!("CARGO_BIN_EXE_basalt-server")))
    })
}

/// True when the suite spawns Basalt (not another binary, not an external server): for
/// the few checks that are tighter than Redis's own behaviour (e.g. how uniform a random
/// pick is).
pub fn is_basalt() -> bool {
    matches!(mode(), Mode::Spawn(bin) if bin.as_path() == Path::new(env!("CARGO_BIN_EXE_basalt-server")))
}

/// Sends `args` `batches` x 1000 times (pipelined by the thousand) and counts the
/// replies by their bytes: how often each element a random pick returns comes up. Checks
/// that every one of `expect_distinct` elements came up, and that each count lies in
/// 40..180 when 100 are expected per element for Basalt's uniform picks, or in 15..300
/// for another server (Redis's pick samples a few buckets and is only roughly fair:
/// 33..186 seen).
pub fn assert_uniform_picks(c: &mut RawConn, args: &[&str], batches: usize, expect_distinct: usize) {
    let mut req = Vec::new();
    for _ in 0..1000 {
        req.extend(encode(args));
    }
    let mut counts = std::collections::BTreeMap::<Vec<u8>, u32>::new();
    for _ in 0..batches {
        c.send(&req);
        for _ in 0..1000 {
            *counts.entry(c.read_reply()).or_default() += 1;
        }
    }
    assert_eq!(counts.len(), expect_distinct, "every element comes up: {args:?}");
    assert_eq!(batches * 1000 / expect_distinct, 100, "sized for 100 picks per element");
    let bounds = if is_basalt() { 40..180 } else { 15..300 };
    assert!(counts.values().all(|n| bounds.contains(n)), "{args:?}: {counts:?}");
}

/// True when the suite talks to an externally started server.
/// Follows `scan` (HSCAN, SSCAN or ZSCAN) over `key` with COUNT 20 from cursor 0 to
/// the end, calling `churn(c, call)` between calls so that the collection grows and
/// shrinks under the walk. Returns the names seen (every `stride`-th item of the
/// replies: fields and members) and the most items one reply carried. Panics if the
/// walk does not end within 100,000 calls.
pub fn scan_with_churn(
    c: &mut RawConn,
    scan: &str,
    key: &str,
    stride: usize,
    mut churn: impl FnMut(&mut RawConn, usize),
) -> (std::collections::BTreeSet<String>, usize) {
    let mut cursor = "0".to_string();
    let mut seen = std::collections::BTreeSet::new();
    let mut largest = 0;
    for call in 0..100_000 {
        let r = parse(&c.cmd(&[scan, key, &cursor, "COUNT", "20"]));
        let items = r.items();
        largest = largest.max(items[1].items().len());
        seen.extend(items[1].items().iter().step_by(stride).map(Resp::text));
        cursor = items[0].text();
        if cursor == "0" {
            return (seen, largest);
        }
        churn(c, call);
    }
    panic!("{scan} did not finish");
}

/// The churn of the *SCAN tests, between calls: for calls 0..40 `add` 250 new names
/// (`args_for(name)` gives each one's arguments), for calls 40..80 `remove` them again.
pub fn scan_churn(c: &mut RawConn, call: usize, key: &str, add: &str, remove: &str, args_for: impl Fn(String) -> Vec<String>) {
    let mut args: Vec<String> = Vec::new();
    if call < 40 {
        args.extend([add.to_string(), key.to_string()]);
        args.extend((0..250).flat_map(|i| args_for(format!("c{call}-{i}"))));
    } else if call < 80 {
        args.extend([remove.to_string(), key.to_string()]);
        args.extend((0..250).map(|i| format!("c{}-{i}", call - 40)));
    } else {
        return;
    }
    c.cmd(&args);
}

pub fn is_external() -> bool {
    matches!(mode(), Mode::External(_))
}

// ---------------------------------------------------------------------------
// Spawned server process
// ---------------------------------------------------------------------------

pub struct ServerProcess {
    child: Child,
    watchdog: Option<Child>,
    pub addr: String,
    pub port: u16,
    /// The temp dir owned by this process ([`ServerProcess::spawn`]); None
    /// when the caller owns the directory ([`ServerProcess::spawn_in`]).
    dir: Option<tempfile::TempDir>,
    dir_path: PathBuf,
    log_path: PathBuf,
}

pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local_addr").port()
}

/// A fresh log file name for a server started in a caller-owned directory,
/// so that each start of a server in the same directory has its own log.
fn next_log_path(dir: &Path) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("server-{}-{n}.log", std::process::id()))
}

/// The standard flags plus `extra`, for a server on `port` with data in `dir`.
fn server_command(
    bin: &Path,
    port: u16,
    dir: &Path,
    extra: &[&str],
    log_path: &Path,
) -> Result<Command, String> {
    let log = std::fs::File::create(log_path).map_err(|e| format!("log file: {e}"))?;
    let log2 = log.try_clone().map_err(|e| format!("log file: {e}"))?;
    let mut cmd = Command::new(bin);
    cmd.arg("--port")
        .arg(port.to_string())
        .arg("--bind")
        .arg("127.0.0.1")
        .arg("--dir")
        .arg(dir)
        .arg("--enable-debug-command")
        .arg("yes")
        .arg("--save")
        .arg("");
    // BASALT_TEST_ARGS are Basalt's flags (e.g. --io-engine): never for a real Redis
    // that a test starts beside Basalt.
    let is_redis = bin.file_name().is_some_and(|n| n.to_string_lossy().starts_with("redis-server"));
    if !is_redis {
        cmd.args(env_args());
    }
    cmd.args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log2));
    Ok(cmd)
}

/// How a start that was expected to fail ended ([`start_expect_exit`]).
#[derive(Debug)]
pub struct FailedStart {
    /// Exit code; None if it was still running at the deadline (then killed)
    /// or was ended by a signal.
    pub code: Option<i32>,
    /// Whether the server answered PING before the deadline (it started).
    pub answered: bool,
    /// Everything it wrote to stdout and stderr.
    pub log: String,
}

/// Starts `bin` with its data in `dir` (standard flags plus `extra`) when it
/// is expected NOT to start, e.g. on a corrupt AOF. Waits at most `timeout`
/// for it to exit; a server still running then is killed by PID.
pub fn start_expect_exit(bin: &Path, dir: &Path, extra: &[&str], timeout: Duration) -> FailedStart {
    let port = free_port();
    let log_path = next_log_path(dir);
    let mut cmd = server_command(bin, port, dir, extra, &log_path).expect("server command");
    let mut child = cmd.spawn().expect("spawn server");
    let mut watchdog = spawn_watchdog(child.id());
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + timeout;
    let mut answered = false;
    let exited = loop {
        if let Ok(Some(_)) = child.try_wait() {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        if !answered && ping_ready(&addr) {
            answered = true;
        }
        std::thread::sleep(Duration::from_millis(25));
    };
    if !exited {
        // Child::kill sends SIGKILL to this child's PID.
        let _ = child.kill();
    }
    let status = child.wait().ok();
    let code = if exited {
        status.and_then(|s| s.code())
    } else {
        None
    };
    if let Some(mut w) = watchdog.take() {
        let _ = w.kill();
        let _ = w.wait();
    }
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    FailedStart {
        code,
        answered,
        log,
    }
}

impl ServerProcess {
    /// Spawns `bin` with the standard flags plus `extra`, waits until it
    /// answers PING (or NOAUTH when a password is set).
    pub fn spawn(bin: &Path, extra: &[&str]) -> ServerProcess {
        let mut last_err = String::new();
        for _attempt in 0..3 {
            match Self::try_spawn(bin, extra) {
                Ok(p) => return p,
                Err(e) => last_err = e,
            }
        }
        panic!("could not start server {}: {}", bin.display(), last_err);
    }

    /// Spawns `bin` with its data in `dir`, which the caller owns and which
    /// outlives the process (so that a later server can be started in the
    /// same directory, e.g. to test persistence across a restart). Each
    /// start writes its own log file in `dir` ([`ServerProcess::log`]).
    pub fn spawn_in(bin: &Path, dir: &Path, extra: &[&str]) -> ServerProcess {
        let mut last_err = String::new();
        for _attempt in 0..3 {
            let log_path = next_log_path(dir);
            match Self::try_spawn_at(bin, dir.to_path_buf(), None, log_path, extra) {
                Ok(p) => return p,
                Err(e) => last_err = e,
            }
        }
        panic!(
            "could not start server {} in {}: {}",
            bin.display(),
            dir.display(),
            last_err
        );
    }

    fn try_spawn(bin: &Path, extra: &[&str]) -> Result<ServerProcess, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let dir_path = dir.path().to_path_buf();
        let log_path = dir.path().join("server.log");
        Self::try_spawn_at(bin, dir_path, Some(dir), log_path, extra)
    }

    fn try_spawn_at(
        bin: &Path,
        dir_path: PathBuf,
        dir: Option<tempfile::TempDir>,
        log_path: PathBuf,
        extra: &[&str],
    ) -> Result<ServerProcess, String> {
        let port = free_port();
        let mut cmd = server_command(bin, port, &dir_path, extra, &log_path)?;
        let child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
        let watchdog = spawn_watchdog(child.id());
        let addr = format!("127.0.0.1:{port}");
        let mut proc = ServerProcess {
            child,
            watchdog,
            addr,
            port,
            dir,
            dir_path,
            log_path,
        };
        let deadline = Instant::now() + SPAWN_TIMEOUT;
        loop {
            if let Ok(Some(status)) = proc.child.try_wait() {
                let log = proc.log();
                return Err(format!("server exited early ({status}); log:\n{log}"));
            }
            if ping_ready(&proc.addr) {
                return Ok(proc);
            }
            if Instant::now() > deadline {
                let log = proc.log();
                // `proc` is dropped on return, which kills the process.
                return Err(format!(
                    "server did not answer PING within {SPAWN_TIMEOUT:?}; log:\n{log}"
                ));
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// The server's data directory (`--dir`).
    pub fn dir(&self) -> &Path {
        &self.dir_path
    }

    /// What the server wrote to stdout and stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Sends SIGKILL to the server by its PID and waits (bounded) until it is
    /// gone; panics if it is still there after 10 s.
    pub fn kill9(&mut self) {
        self.signal("KILL");
        assert!(
            self.wait_exit(Duration::from_secs(10)).is_some(),
            "server {} did not die on SIGKILL",
            self.child.id()
        );
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl ServerProcess {
    /// Sends a signal (e.g. "TERM", "INT") to the server process by its PID.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits (bounded) for the server to exit; its exit code, or None on timeout.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.code().unwrap_or(-1));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        // Child::kill sends SIGKILL to this child's PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A shell loop (bounded: at most ~3 hours) that kills the server if this
/// test process disappears without running its cleanup.
pub fn spawn_watchdog(server_pid: u32) -> Option<Child> {
    let me = std::process::id();
    let script = format!(
        "i=0; while [ $i -lt 21600 ] && kill -0 {me} 2>/dev/null && kill -0 {server_pid} 2>/dev/null; \
         do sleep 0.5; i=$((i+1)); done; kill -9 {server_pid} 2>/dev/null; exit 0"
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

pub fn ping_ready(addr: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"*1\r\n$4\r\nPING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(n) if n > 0 => buf[..n].starts_with(b"+PONG") || buf[..n].starts_with(b"-NOAUTH"),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// The shared server and cleanup at exit
// ---------------------------------------------------------------------------

static SHARED: Mutex<Option<ServerProcess>> = Mutex::new(None);
static SHARED_ADDR: OnceLock<String> = OnceLock::new();

extern "C" {
    fn atexit(cb: extern "C" fn()) -> std::os::raw::c_int;
}

extern "C" fn kill_shared_at_exit() {
    if let Ok(mut g) = SHARED.try_lock() {
        g.take();
    }
}

/// Address of the server shared by all tests of this binary.
pub fn shared_addr() -> &'static str {
    SHARED_ADDR.get_or_init(|| match mode() {
        Mode::External(a) => a.clone(),
        Mode::Spawn(bin) => {
            let p = ServerProcess::spawn(bin, &[]);
            let addr = p.addr.clone();
            *SHARED.lock().unwrap_or_else(|e| e.into_inner()) = Some(p);
            // SAFETY: registering a plain extern "C" callback with libc.
            unsafe {
                atexit(kill_shared_at_exit);
            }
            addr
        }
    })
}

// ---------------------------------------------------------------------------
// Test contexts
// ---------------------------------------------------------------------------

static GLOBAL: RwLock<()> = RwLock::new(());
thread_local! {
    static HELD: Cell<u32> = const { Cell::new(0) };
}

/// A server a test talks to, plus whatever keeps it valid for the test.
pub struct Srv {
    pub addr: String,
    /// Database the test should use (0 unless external exclusive mode).
    pub db: i64,
    own: Option<ServerProcess>,
    read: Option<RwLockReadGuard<'static, ()>>,
    write: Option<RwLockWriteGuard<'static, ()>>,
}

impl Drop for Srv {
    fn drop(&mut self) {
        if self.read.is_some() || self.write.is_some() {
            HELD.with(|h| h.set(h.get().saturating_sub(1)));
        }
        self.own.take();
    }
}

/// The shared server. Tests using it must use their own key prefix and must
/// not depend on global state.
pub fn shared() -> Srv {
    let addr = shared_addr().to_string();
    let mut read = None;
    if is_external() && HELD.with(|h| h.get()) == 0 {
        read = Some(GLOBAL.read().unwrap_or_else(|e| e.into_inner()));
        HELD.with(|h| h.set(h.get() + 1));
    }
    Srv {
        addr,
        db: 0,
        own: None,
        read,
        write: None,
    }
}

/// A server the test may treat as its own (fresh, empty). Spawned for the
/// test; with `BASALT_TEST_ADDR`, the external server under the write lock,
/// database [`EXTERNAL_EXCLUSIVE_DB`] flushed.
pub fn exclusive() -> Srv {
    match mode() {
        Mode::Spawn(bin) => {
            let p = ServerProcess::spawn(bin, &[]);
            Srv {
                addr: p.addr.clone(),
                db: 0,
                own: Some(p),
                read: None,
                write: None,
            }
        }
        Mode::External(a) => {
            let write = Some(GLOBAL.write().unwrap_or_else(|e| e.into_inner()));
            HELD.with(|h| h.set(h.get() + 1));
            let srv = Srv {
                addr: a.clone(),
                db: EXTERNAL_EXCLUSIVE_DB,
                own: None,
                read: None,
                write,
            };
            let mut c = srv.raw_conn();
            assert_eq!(c.cmd(&["FLUSHDB"]), b"+OK\r\n");
            srv
        }
    }
}

/// A dedicated server started with extra flags; `None` (test skipped) when
/// running against `BASALT_TEST_ADDR`.
pub fn exclusive_with_args(extra: &[&str]) -> Option<Srv> {
    match mode() {
        Mode::Spawn(bin) => {
            let p = ServerProcess::spawn(bin, extra);
            Some(Srv {
                addr: p.addr.clone(),
                db: 0,
                own: Some(p),
                read: None,
                write: None,
            })
        }
        Mode::External(_) => {
            eprintln!("skipped: needs a server started with {extra:?}");
            None
        }
    }
}

impl Srv {
    /// The spawned process, when this server was spawned for the test (not external).
    pub fn process(&mut self) -> Option<&mut ServerProcess> {
        self.own.as_mut()
    }

    /// Port number of the server.
    pub fn port(&self) -> u16 {
        self.addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port in addr")
    }

    /// A redis-rs connection (sync API), already on `self.db`.
    pub fn conn(&self) -> redis::Connection {
        self.conn_url(&format!("redis://{}/{}", self.addr, self.db))
    }

    /// A redis-rs connection from a full URL.
    pub fn conn_url(&self, url: &str) -> redis::Connection {
        let client = redis::Client::open(url).expect("client");
        let c = client
            .get_connection_with_timeout(READ_TIMEOUT)
            .expect("connect");
        c.set_read_timeout(Some(READ_TIMEOUT))
            .expect("read timeout");
        c.set_write_timeout(Some(READ_TIMEOUT))
            .expect("write timeout");
        c
    }

    /// A raw TCP connection, already on `self.db`.
    pub fn raw_conn(&self) -> RawConn {
        let mut c = RawConn::connect(&self.addr);
        if self.db != 0 {
            let db = self.db.to_string();
            assert_eq!(c.cmd(&["SELECT", &db]), b"+OK\r\n");
        }
        c
    }

    /// A raw TCP connection without SELECT (e.g. for servers with a password).
    pub fn raw_conn_plain(&self) -> RawConn {
        RawConn::connect(&self.addr)
    }

    /// Sends `req` on a new connection and returns every reply byte
    /// (see [`RawConn::read_until_quiet`]).
    pub fn raw(&self, req: &[u8]) -> Vec<u8> {
        self.raw_closed(req).0
    }

    /// Like [`Srv::raw`], also telling whether the server closed the connection.
    pub fn raw_closed(&self, req: &[u8]) -> (Vec<u8>, bool) {
        let mut c = self.raw_conn();
        c.send(req);
        c.read_until_quiet(Duration::from_millis(150), READ_TIMEOUT)
    }
}

/// Raw request against the shared server: sends `req` on a fresh connection
/// and returns the reply bytes.
pub fn raw(req: &[u8]) -> Vec<u8> {
    shared().raw(req)
}

/// redis-rs connection to the shared server.
pub fn conn() -> redis::Connection {
    shared().conn()
}

// ---------------------------------------------------------------------------
// Raw connection
// ---------------------------------------------------------------------------

/// Encodes a command as a RESP multibulk.
pub fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        let a = a.as_ref();
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
pub enum ReadEnd {
    Closed,
    Timeout,
}

pub struct RawConn {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl RawConn {
    pub fn connect(addr: &str) -> RawConn {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_nodelay(true).expect("nodelay");
        stream
            .set_write_timeout(Some(Duration::from_secs(10)))
            .expect("write timeout");
        RawConn {
            stream,
            buf: Vec::new(),
        }
    }

    /// Connects from another loopback address than 127.0.0.1 (`source`, e.g.
    /// 127.0.0.2): a peer that Redis does not count as local (protected mode).
    pub fn connect_from(source: std::net::Ipv4Addr, addr: &str) -> RawConn {
        let target: std::net::SocketAddr = addr.parse().expect("socket address");
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
        socket
            .bind(&std::net::SocketAddr::from((source, 0)).into())
            .unwrap_or_else(|e| panic!("bind {source}: {e}"));
        socket.connect(&target.into()).unwrap_or_else(|e| panic!("connect {addr} from {source}: {e}"));
        let stream: TcpStream = socket.into();
        stream.set_write_timeout(Some(Duration::from_secs(10))).expect("write timeout");
        RawConn { stream, buf: Vec::new() }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write to server");
    }

    /// Sends a command and reads exactly one reply.
    pub fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Vec<u8> {
        self.send(&encode(args));
        self.read_reply()
    }

    /// Sends raw bytes and reads exactly one reply.
    pub fn req(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.send(bytes);
        self.read_reply()
    }

    /// Reads one complete reply; panics on timeout or close.
    pub fn read_reply(&mut self) -> Vec<u8> {
        match self.try_read_reply(READ_TIMEOUT) {
            Ok(r) => r,
            Err(e) => panic!(
                "expected a reply, got {e:?}; pending bytes: {:?}",
                show(&self.buf)
            ),
        }
    }

    /// Reads `n` complete replies, concatenated.
    pub fn read_replies(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.extend(self.read_reply());
        }
        out
    }

    /// Reads one complete reply within `timeout`.
    pub fn try_read_reply(&mut self, timeout: Duration) -> Result<Vec<u8>, ReadEnd> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(n) = reply_len(&self.buf) {
                let rest = self.buf.split_off(n);
                return Ok(std::mem::replace(&mut self.buf, rest));
            }
            self.fill(deadline)?;
        }
    }

    /// Reads more bytes into the buffer; Err on close or when `deadline` passes.
    fn fill(&mut self, deadline: Instant) -> Result<usize, ReadEnd> {
        let now = Instant::now();
        if now >= deadline {
            return Err(ReadEnd::Timeout);
        }
        let wait = (deadline - now).max(Duration::from_millis(1));
        self.stream
            .set_read_timeout(Some(wait))
            .expect("set_read_timeout");
        let mut tmp = [0u8; 65536];
        match self.stream.read(&mut tmp) {
            Ok(0) => Err(ReadEnd::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&tmp[..n]);
                Ok(n)
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => {
                Err(ReadEnd::Timeout)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(0),
            // A reset counts as a close.
            Err(_) => Err(ReadEnd::Closed),
        }
    }

    /// Reads until the connection is closed, or until no byte arrived for
    /// `quiet` after the buffer holds only complete replies (or nothing at
    /// all arrived for the whole `max`). Returns the bytes and whether the
    /// server closed the connection.
    pub fn read_until_quiet(&mut self, quiet: Duration, max: Duration) -> (Vec<u8>, bool) {
        let hard = Instant::now() + max;
        let mut closed = false;
        loop {
            let complete = !self.buf.is_empty() && only_complete_replies(&self.buf);
            let deadline = if complete {
                (Instant::now() + quiet).min(hard)
            } else {
                hard
            };
            match self.fill(deadline) {
                Ok(_) => continue,
                Err(ReadEnd::Closed) => {
                    closed = true;
                    break;
                }
                Err(ReadEnd::Timeout) => break,
            }
        }
        (std::mem::take(&mut self.buf), closed)
    }

    /// True if the server closes the connection within `timeout` (bytes that
    /// arrive before the close are kept in the buffer).
    pub fn is_closed_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            match self.fill(deadline) {
                Ok(_) => continue,
                Err(ReadEnd::Closed) => return true,
                Err(ReadEnd::Timeout) => return false,
            }
        }
    }

    /// Asserts that nothing arrives for `dur` and the connection stays open.
    pub fn expect_silence(&mut self, dur: Duration) {
        let deadline = Instant::now() + dur;
        match self.fill(deadline) {
            Err(ReadEnd::Timeout) => {}
            Err(ReadEnd::Closed) => panic!("connection closed, expected it to stay open"),
            Ok(_) => panic!("unexpected bytes: {:?}", show(&self.buf)),
        }
    }

    /// Bytes received but not consumed yet.
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }
}

/// Printable rendering of bytes for assertion messages.
pub fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .replace('\r', "\\r")
        .replace('\n', "\\n")
}

fn only_complete_replies(mut b: &[u8]) -> bool {
    while !b.is_empty() {
        match reply_len(b) {
            Some(n) => b = &b[n..],
            None => return false,
        }
    }
    true
}

// ---------------------------------------------------------------------------
// RESP parsing (RESP2 and RESP3)
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub enum Resp {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    /// `$-1` or `*-1` (RESP2 nulls).
    Nil,
    /// `_` (RESP3 null).
    Null,
    Array(Vec<Resp>),
    Map(Vec<(Resp, Resp)>),
    Set(Vec<Resp>),
    Push(Vec<Resp>),
    Double(String),
    Bool(bool),
    BigNum(String),
    Verbatim(String, Vec<u8>),
}

impl Resp {
    /// Bulk/simple/verbatim text as a String.
    pub fn text(&self) -> String {
        match self {
            Resp::Simple(s) | Resp::Error(s) | Resp::Double(s) | Resp::BigNum(s) => s.clone(),
            Resp::Bulk(b) | Resp::Verbatim(_, b) => String::from_utf8_lossy(b).into_owned(),
            Resp::Int(i) => i.to_string(),
            other => panic!("not a string reply: {other:?}"),
        }
    }
    pub fn int(&self) -> i64 {
        match self {
            Resp::Int(i) => *i,
            other => panic!("not an integer reply: {other:?}"),
        }
    }
    pub fn items(&self) -> &[Resp] {
        match self {
            Resp::Array(v) | Resp::Set(v) | Resp::Push(v) => v,
            other => panic!("not an aggregate reply: {other:?}"),
        }
    }
    /// Key/value pairs of a RESP3 map, or of a RESP2 flat array.
    pub fn pairs(&self) -> Vec<(Resp, Resp)> {
        match self {
            Resp::Map(m) => m.clone(),
            Resp::Array(v) => {
                assert!(v.len() % 2 == 0, "odd array used as map: {v:?}");
                v.chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect()
            }
            other => panic!("not a map reply: {other:?}"),
        }
    }
    /// Value for a string key in a map-like reply.
    pub fn get(&self, key: &str) -> Option<Resp> {
        self.pairs()
            .into_iter()
            .find(|(k, _)| k.text() == key)
            .map(|(_, v)| v)
    }
}

/// Parses exactly one reply that must span all of `b`.
pub fn parse(b: &[u8]) -> Resp {
    match parse_one(b) {
        Some((r, n)) if n == b.len() => r,
        Some((_, n)) => panic!("trailing bytes after reply: {:?}", show(&b[n..])),
        None => panic!("incomplete reply: {:?}", show(b)),
    }
}

/// Length in bytes of the first complete reply in `b`, if complete.
pub fn reply_len(b: &[u8]) -> Option<usize> {
    parse_one(b).map(|(_, n)| n)
}

fn line(b: &[u8]) -> Option<(&[u8], usize)> {
    let pos = b.windows(2).position(|w| w == b"\r\n")?;
    Some((&b[..pos], pos + 2))
}

fn num(b: &[u8]) -> i64 {
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad number in reply: {:?}", show(b)))
}

/// Parses one reply from the start of `b`; `None` if incomplete.
pub fn parse_one(b: &[u8]) -> Option<(Resp, usize)> {
    let t = *b.first()?;
    let (l, mut used) = line(&b[1..])?;
    used += 1;
    let s = || String::from_utf8_lossy(l).into_owned();
    let agg = |n: i64, used: usize, per: usize| -> Option<(Vec<Resp>, usize)> {
        let mut items = Vec::new();
        let mut off = used;
        for _ in 0..(n.max(0) as usize * per) {
            let (r, k) = parse_one(&b[off..])?;
            items.push(r);
            off += k;
        }
        Some((items, off))
    };
    match t {
        b'+' => Some((Resp::Simple(s()), used)),
        b'-' => Some((Resp::Error(s()), used)),
        b':' => Some((Resp::Int(num(l)), used)),
        b',' => Some((Resp::Double(s()), used)),
        b'(' => Some((Resp::BigNum(s()), used)),
        b'#' => Some((Resp::Bool(l == b"t"), used)),
        b'_' => Some((Resp::Null, used)),
        b'$' | b'=' | b'!' => {
            let n = num(l);
            if n < 0 {
                return Some((Resp::Nil, used));
            }
            let n = n as usize;
            if b.len() < used + n + 2 {
                return None;
            }
            let data = b[used..used + n].to_vec();
            let r = match t {
                b'$' => Resp::Bulk(data),
                b'!' => Resp::Error(String::from_utf8_lossy(&data).into_owned()),
                _ => {
                    let fmt = String::from_utf8_lossy(&data[..3.min(data.len())]).into_owned();
                    Resp::Verbatim(fmt, data[4.min(data.len())..].to_vec())
                }
            };
            Some((r, used + n + 2))
        }
        b'*' | b'~' | b'>' => {
            let n = num(l);
            if n < 0 {
                return Some((Resp::Nil, used));
            }
            let (items, off) = agg(n, used, 1)?;
            let r = match t {
                b'*' => Resp::Array(items),
                b'~' => Resp::Set(items),
                _ => Resp::Push(items),
            };
            Some((r, off))
        }
        b'%' | b'|' => {
            let n = num(l);
            let (items, off) = agg(n, used, 2)?;
            let pairs: Vec<(Resp, Resp)> = items
                .chunks(2)
                .map(|c| (c[0].clone(), c[1].clone()))
                .collect();
            if t == b'|' {
                // Attribute: skip it, return the reply that follows.
                let (r, k) = parse_one(&b[off..])?;
                return Some((r, off + k));
            }
            Some((Resp::Map(pairs), off))
        }
        other => panic!(
            "unknown RESP type byte {:?} in {:?}",
            other as char,
            show(b)
        ),
    }
}

// ---------------------------------------------------------------------------
// redis-rs helpers
// ---------------------------------------------------------------------------

/// Runs a command through redis-rs and converts the reply.
pub fn q<T: redis::FromRedisValue>(c: &mut redis::Connection, args: &[&str]) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    match cmd.query(c) {
        Ok(v) => v,
        Err(e) => panic!("{args:?} failed: {e}"),
    }
}

/// Runs a command through redis-rs that must fail; returns "CODE detail".
pub fn qerr(c: &mut redis::Connection, args: &[&str]) -> String {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    match cmd.query::<redis::Value>(c) {
        Ok(v) => panic!("{args:?} succeeded with {v:?}, expected an error"),
        Err(e) => err_text(&e),
    }
}

/// "CODE detail" of a server error, e.g. "ERR syntax error".
pub fn err_text(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(c), Some(d)) => format!("{c} {d}"),
        (Some(c), None) => c.to_string(),
        _ => e.to_string(),
    }
}

/// Polls `f` every 20 ms until it returns true or `timeout` passes.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// Milliseconds since the Unix epoch.
pub fn unix_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// Asserts that `$got` equals `$want` (anything that is `AsRef<[u8]>`),
/// printing both readably.
/// Waits (bounded) until the server reports `n` blocked clients in `INFO clients`
/// (blocking pops, WAIT, clients postponed by CLIENT PAUSE).
pub fn wait_blocked(c: &mut RawConn, n: usize) {
    let want = format!("blocked_clients:{n}\r\n");
    let ok = wait_until(Duration::from_secs(5), || {
        let info = parse(&c.cmd(&["INFO", "clients"])).text();
        info.contains(&want)
    });
    assert!(ok, "server never reported {want:?}");
}

/// Reads one reply of a client that was waiting (blocked or postponed): it must
/// arrive within a few seconds.
pub fn late_reply(c: &mut RawConn) -> Vec<u8> {
    c.try_read_reply(Duration::from_secs(5))
        .unwrap_or_else(|e| panic!("waiting client got no reply: {e:?}"))
}

#[macro_export]
macro_rules! assert_bytes {
    ($got:expr, $want:expr $(,)?) => {
        match (&$got, &$want) {
            (got, want) => {
                let got: &[u8] = ::core::convert::AsRef::<[u8]>::as_ref(got);
                let want: &[u8] = ::core::convert::AsRef::<[u8]>::as_ref(want);
                assert!(
                    got == want,
                    "reply mismatch\n  got:  {}\n  want: {}",
                    $crate::harness::show(got),
                    $crate::harness::show(want)
                );
            }
        }
    };
    ($got:expr, $want:expr, $($msg:tt)+) => {
        match (&$got, &$want) {
            (got, want) => {
                let got: &[u8] = ::core::convert::AsRef::<[u8]>::as_ref(got);
                let want: &[u8] = ::core::convert::AsRef::<[u8]>::as_ref(want);
                assert!(
                    got == want,
                    "reply mismatch ({})\n  got:  {}\n  want: {}",
                    format!($($msg)+),
                    $crate::harness::show(got),
                    $crate::harness::show(want)
                );
            }
        }
    };
}

/// Extra server flags from `BASALT_TEST_ARGS` (whitespace separated), e.g.
/// `--io-engine uring`, so that the whole suite can run against each engine.
fn env_args() -> Vec<String> {
    std::env::var("BASALT_TEST_ARGS")
        .map(|v| v.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

// Replies many modules compare against.

pub const WRONGTYPE: &[u8] = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
pub const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
pub const NOT_INT: &[u8] = b"-ERR value is not an integer or out of range\r\n";

/// The wrong-arity error for a command (lower-case full name, e.g. "config|get").
pub fn arity(cmd: &str) -> Vec<u8> {
    format!("-ERR wrong number of arguments for '{cmd}' command\r\n").into_bytes()
}

/// A RESP2 array of bulk strings.
pub fn arr(items: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", items.len()).into_bytes();
    for i in items {
        out.extend_from_slice(format!("${}\r\n{}\r\n", i.len(), i).as_bytes());
    }
    out
}
