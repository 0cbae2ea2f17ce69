//! Event loops: one loop per thread (mio here, io_uring in `uring.rs`), each owning its
//! share of the connections. Closed loop
//! (batch-synchronous like redis-benchmark, or a sliding window like memtier) with pipeline
//! depth, or open loop on a fixed schedule (`--rate`) with latency from the intended send time.
//!
//! Latency rule (documented in --help and docs/bench-tool.md): every request gets its own sample,
//! from the moment its batch was written (open loop: from its intended send time) to the read that
//! completed its reply. redis-benchmark instead records the first-byte time of a batch P times.

pub mod conn;
mod timer;
pub mod tls;
mod uring;

use crate::stats::{self, cpu, RunStats};
use crate::workload::Generator;
use conn::{Handshake, Stream, Target};
use mio::{Events, Interest, Poll, Token};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Why a run failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum DriverError {
    /// The server could not be reached.
    #[error("Could not connect to server at {target}: {reason}")]
    Connect {
        /// Address.
        target: String,
        /// OS message.
        reason: String,
    },
    /// AUTH was refused.
    #[error("AUTH failed at {target}: {reason}")]
    Auth {
        /// Address.
        target: String,
        /// Server message.
        reason: String,
    },
    /// The server refused a request for want of authentication or permission
    /// (NOAUTH, WRONGPASS, NOPERM): every further request would be refused too, so the
    /// run stops, as redis-benchmark does (its message, word for word).
    #[error("Node {target} replied with error:\n{reason}")]
    AuthRefused {
        /// Address.
        target: String,
        /// Server message.
        reason: String,
    },
    /// A set-up command was refused.
    #[error("{what} refused: {reason}")]
    Refused {
        /// The command.
        what: String,
        /// Server message.
        reason: String,
    },
    /// The server closed a connection while requests were outstanding or expected.
    #[error("Server {target} closed the connection")]
    Closed {
        /// Address.
        target: String,
    },
    /// The reply bytes are not RESP.
    #[error("Reply from {target} is not RESP: {reason}")]
    NotResp {
        /// Address.
        target: String,
        /// Parser message.
        reason: String,
    },
    /// No reply within the timeout.
    #[error("No reply from {target} for {secs:.1} s (server stalled or not a RESP server)")]
    Timeout {
        /// Address.
        target: String,
        /// Seconds waited.
        secs: f64,
    },
    /// Another I/O error.
    #[error("I/O error with {target}: {reason}")]
    Io {
        /// Address.
        target: String,
        /// OS message.
        reason: String,
    },
}

/// How requests are issued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LoadMode {
    /// Send `depth` requests, wait for all replies, repeat (redis-benchmark -P).
    Batch,
    /// Keep up to `depth` requests outstanding (memtier --pipeline).
    Window,
    /// Open loop: this many requests per second over all connections, at most `depth`
    /// outstanding per connection; latency from the intended send time.
    Rate(f64),
}

/// Which I/O engine the event loops use (`--io-engine`, as the server's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IoEngine {
    /// mio (epoll): nonblocking reads and writes when the socket is ready.
    #[default]
    Epoll,
    /// io_uring: a multishot receive and at most one send in flight per connection,
    /// submitted and reaped with one system call per loop iteration.
    Uring,
}

impl IoEngine {
    /// `uring`, `epoll`, or `auto` (uring where the kernel has it).
    pub fn parse(s: &str) -> Result<IoEngine, String> {
        match s.to_ascii_lowercase().as_str() {
            "epoll" => Ok(IoEngine::Epoll),
            "uring" | "io_uring" | "io-uring" => Ok(IoEngine::Uring),
            "auto" => Ok(if uring::available() { IoEngine::Uring } else { IoEngine::Epoll }),
            _ => Err(format!("Invalid --io-engine \"{s}\": expected uring, epoll or auto")),
        }
    }
}

/// Everything the driver needs for one run.
pub struct RunSpec {
    /// Server.
    pub target: Target,
    /// Per-connection set-up.
    pub handshake: Handshake,
    /// Total connections.
    pub clients: usize,
    /// Event-loop threads.
    pub threads: usize,
    /// Pipeline depth.
    pub depth: usize,
    /// Issue mode.
    pub mode: LoadMode,
    /// Total requests over all connections (redis-benchmark -n).
    pub total_requests: Option<u64>,
    /// Requests per connection (memtier -n).
    pub per_client_requests: Option<u64>,
    /// Stop issuing after this long (memtier --test-time).
    pub duration: Option<Duration>,
    /// HDR significant figures.
    pub sigfig: u8,
    /// Base seed; connection i uses seed + i (or seed for all if `same_seed`).
    pub seed: u64,
    /// Give every connection the same seed (memtier's default behaviour).
    pub same_seed: bool,
    /// Fail when no reply arrives for this long.
    pub stall_timeout: Duration,
    /// One generator per connection.
    pub generators: Vec<Generator>,
    /// I/O engine of the event loops.
    pub io_engine: IoEngine,
}

/// Counters the main thread reads for the live progress line.
#[derive(Default)]
pub struct Live {
    /// Replies received.
    pub finished: AtomicU64,
    /// Sum of their latencies, µs.
    pub latency_sum_us: AtomicU64,
    /// Bytes received plus bytes sent for the requests answered.
    pub bytes: AtomicU64,
}

/// What a run produced.
pub struct RunOutput {
    /// Merged measurements.
    pub stats: RunStats,
    /// From the start signal to the last reply.
    pub elapsed: Duration,
    /// Wall-clock start, ms since the epoch.
    pub start_ms: u128,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// Stopped early by this failure (a connection closed or stalled): the stats are
    /// those of the requests that completed before it (issue 25: they were thrown away).
    pub stopped_by: Option<DriverError>,
}

/// Set by the SIGINT handler.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs the Ctrl-C handler: the run stops and the partial report is printed.
pub fn install_sigint() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
}

struct Shared {
    issued: AtomicU64,
    stop: AtomicBool,
    live: Arc<Live>,
}

struct Pending {
    kind: u8,
    tx: u32,
    sent: Instant,
    intended: Instant,
}

struct Conn {
    stream: Stream,
    gen: Generator,
    rng: fastrand::Rng,
    out: Vec<u8>,
    out_len: usize,
    out_pos: usize,
    inbuf: Vec<u8>,
    in_start: usize,
    in_end: usize,
    pending: VecDeque<Pending>,
    remaining: Option<u64>,
    next_intended: Instant,
    interval: Duration,
    done: bool,
    /// io_uring engine: a send of `out[out_pos..out_len]` is in flight or queued.
    send_busy: bool,
    /// Index among this thread's connections.
    slot: usize,
}

/// Runs one workload and returns the merged stats.
pub fn run(mut spec: RunSpec, live: Arc<Live>) -> Result<RunOutput, DriverError> {
    let threads = spec.threads.clamp(1, spec.clients.max(1));
    let shared = Arc::new(Shared { issued: AtomicU64::new(0), stop: AtomicBool::new(false), live });
    let barrier = Arc::new(Barrier::new(threads + 1));
    let kinds = spec.generators.first().map(|g| g.kinds()).unwrap_or(1);
    let mut per_thread: Vec<Vec<(usize, Generator)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, g) in spec.generators.drain(..).enumerate() {
        per_thread[i % threads].push((i, g));
    }
    let spec = Arc::new(spec);
    let start_cell = Arc::new(std::sync::OnceLock::<Instant>::new());
    let mut handles = Vec::new();
    for (t, gens) in per_thread.into_iter().enumerate() {
        let spec = spec.clone();
        let shared = shared.clone();
        let barrier = barrier.clone();
        let start_cell = start_cell.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("load-{t}"))
                .spawn(move || thread_main(&spec, &shared, &barrier, &start_cell, gens))
                .map_err(|e| DriverError::Io { target: "thread".into(), reason: e.to_string() })?,
        );
    }
    barrier.wait(); // every connection is set up (or failed)
    let start = Instant::now();
    let _ = start_cell.set(start);
    let start_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    barrier.wait(); // go
    let mut merged = RunStats::new(kinds, spec.sigfig);
    let mut first_err = None;
    let mut stopped_by = None;
    let mut end = start;
    for h in handles {
        match h.join() {
            Ok(Ok((s, t_end, stopped))) => {
                merged.merge(&s);
                end = end.max(t_end);
                if let Some(e) = stopped {
                    stopped_by.get_or_insert(e);
                }
            }
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(DriverError::Io { target: "thread".into(), reason: "panicked".into() });
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    Ok(RunOutput {
        stats: merged,
        elapsed: end.saturating_duration_since(start),
        start_ms,
        interrupted: INTERRUPTED.load(Ordering::SeqCst),
        stopped_by,
    })
}

fn thread_main(
    spec: &RunSpec,
    shared: &Shared,
    barrier: &Barrier,
    start_cell: &std::sync::OnceLock<Instant>,
    gens: Vec<(usize, Generator)>,
) -> Result<(RunStats, Instant, Option<DriverError>), DriverError> {
    let kinds = gens.first().map(|g| g.1.kinds()).unwrap_or(1);
    let setup = setup_conns(spec, gens);
    barrier.wait();
    barrier.wait();
    let mut conns = match setup {
        Ok(c) => c,
        Err(e) => {
            shared.stop.store(true, Ordering::SeqCst);
            return Err(e);
        }
    };
    let start = start_cell.get().copied().unwrap_or_else(Instant::now);
    let meter = cpu::CpuMeter::start();
    let mut stats = RunStats::new(kinds, spec.sigfig);
    let res = event_loop(spec, shared, &mut conns, &mut stats, start);
    if res.is_err() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    stats.cpu.push(meter.finish());
    match res {
        Ok(end) => Ok((stats, end, None)),
        // A refused AUTH ends the run with nothing to report (as redis-benchmark).
        Err(e @ DriverError::AuthRefused { .. }) => Err(e),
        // Anything else mid-run: what completed before it is kept.
        Err(e) => Ok((stats, Instant::now(), Some(e))),
    }
}

fn setup_conns(spec: &RunSpec, gens: Vec<(usize, Generator)>) -> Result<Vec<Conn>, DriverError> {
    let mut conns = Vec::with_capacity(gens.len());
    let rate_per_conn = match spec.mode {
        LoadMode::Rate(r) => Some(r / spec.clients.max(1) as f64),
        _ => None,
    };
    for (i, gen) in gens {
        let mut b = conn::connect(&spec.target, Duration::from_secs(5))?;
        conn::handshake(&mut b, &spec.handshake, &spec.target)?;
        let stream = conn::into_nonblocking(b, &spec.target)?;
        let seed = if spec.same_seed { spec.seed } else { spec.seed.wrapping_add(i as u64) };
        let mut out = Vec::new();
        gen.prepare(&mut out, spec.depth);
        let interval = rate_per_conn.map(|r| Duration::from_secs_f64(1.0 / r.max(1e-9))).unwrap_or_default();
        conns.push(Conn {
            stream,
            gen,
            rng: fastrand::Rng::with_seed(seed),
            out,
            out_len: 0,
            out_pos: 0,
            inbuf: vec![0; 64 * 1024],
            in_start: 0,
            in_end: 0,
            pending: VecDeque::with_capacity(spec.depth.max(1)),
            remaining: spec.per_client_requests,
            // Spread the first sends of the connections over one interval.
            next_intended: Instant::now(),
            interval,
            done: false,
            send_busy: false,
            slot: conns.len(),
        });
    }
    Ok(conns)
}

/// Claims up to `want` requests from the budgets. Returns how many may be sent.
fn claim(spec: &RunSpec, shared: &Shared, c: &mut Conn, want: usize, now: Instant, start: Instant) -> usize {
    if shared.stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
        return 0;
    }
    if let Some(d) = spec.duration {
        if now.duration_since(start) >= d {
            return 0;
        }
    }
    let mut k = want as u64;
    if let Some(r) = c.remaining {
        k = k.min(r);
    }
    if let Some(total) = spec.total_requests {
        let got = shared.issued.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
            if v >= total {
                None
            } else {
                Some(v + k.min(total - v))
            }
        });
        k = match got {
            Ok(v) => k.min(total - v),
            Err(_) => 0,
        };
    }
    if let Some(r) = c.remaining.as_mut() {
        *r -= k;
    }
    k as usize
}

fn event_loop(
    spec: &RunSpec,
    shared: &Shared,
    conns: &mut [Conn],
    stats: &mut RunStats,
    start: Instant,
) -> Result<Instant, DriverError> {
    // The io_uring engine moves plain bytes only: a TLS run uses this loop.
    if spec.io_engine == IoEngine::Uring && !tls::enabled() {
        return uring::event_loop(spec, shared, conns, stats, start);
    }
    let mut poll = Poll::new().map_err(|e| io_err(spec, e))?;
    for (i, c) in conns.iter_mut().enumerate() {
        poll.registry()
            .register(&mut c.stream, Token(i), Interest::READABLE | Interest::WRITABLE)
            .map_err(|e| io_err(spec, e))?;
    }
    start_schedule(spec, conns, start);
    // Open loop: a precise timer for the next intended send (see timer.rs).
    let timer = match spec.mode {
        LoadMode::Rate(_) => Some(timer::Timer::new(poll.registry(), TIMER).map_err(|e| io_err(spec, e))?),
        _ => None,
    };
    let mut events = Events::with_capacity(1024);
    let mut progress = Progress::new(start);
    let now = Instant::now();
    let mut flush = |c: &mut Conn| write_out(spec, c);
    for c in conns.iter_mut() {
        pump(spec, shared, c, stats, start, now, false, &mut flush)?;
    }
    loop {
        if conns.iter().all(|c| c.done) || shared.stop.load(Ordering::Relaxed) {
            return Ok(progress.end);
        }
        let now = Instant::now();
        let (mut timeout, next_send) = wait_bounds(spec, conns, start, now);
        if let (Some(timer), Some(next)) = (&timer, next_send) {
            if next.is_zero() {
                timeout = Duration::ZERO;
            } else if next < timeout {
                timer.arm(next).map_err(|e| io_err(spec, e))?;
            }
        }
        match poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(spec, e)),
        }
        let now = Instant::now();
        let mut progressed = false;
        for ev in events.iter() {
            if ev.token() == TIMER {
                if let Some(timer) = &timer {
                    timer.clear();
                }
                continue;
            }
            let Some(c) = conns.get_mut(ev.token().0) else { continue };
            if pump(spec, shared, c, stats, start, now, ev.is_readable(), &mut flush)? {
                progressed = true;
            }
        }
        after_events(spec, shared, conns, stats, start, now, progressed, &mut progress, &mut flush)?;
    }
}

/// Rate mode: the schedule starts at `start`, spread by connection index.
fn start_schedule(spec: &RunSpec, conns: &mut [Conn], start: Instant) {
    if let LoadMode::Rate(_) = spec.mode {
        let n = conns.len().max(1);
        for (i, c) in conns.iter_mut().enumerate() {
            c.next_intended = start + c.interval.mul_f64(i as f64 / n as f64);
        }
    }
}

/// How long the loop may wait for I/O (at most 100 ms, and not past `--test-time`), and in
/// open loop how long until the next intended send.
fn wait_bounds(spec: &RunSpec, conns: &[Conn], start: Instant, now: Instant) -> (Duration, Option<Duration>) {
    let mut timeout = Duration::from_millis(100);
    let mut next_send = None;
    if matches!(spec.mode, LoadMode::Rate(_)) {
        let mut next = timeout;
        for c in conns.iter() {
            if !c.done && c.pending.len() < spec.depth {
                next = next.min(c.next_intended.saturating_duration_since(now));
            }
        }
        next_send = Some(next);
    }
    if let Some(d) = spec.duration {
        timeout = timeout.min((start + d).saturating_duration_since(now).max(Duration::from_micros(100)));
    }
    (timeout, next_send)
}

/// When replies last arrived, for the stall timeout and the run's end time.
struct Progress {
    last: Instant,
    end: Instant,
}

impl Progress {
    fn new(start: Instant) -> Progress {
        Progress { last: Instant::now(), end: start }
    }
}

/// After each wait: timers (rate schedule, end of --test-time, Ctrl-C), then the stall check.
#[allow(clippy::too_many_arguments)]
fn after_events(
    spec: &RunSpec,
    shared: &Shared,
    conns: &mut [Conn],
    stats: &mut RunStats,
    start: Instant,
    now: Instant,
    progressed: bool,
    progress: &mut Progress,
    flush: &mut impl FnMut(&mut Conn) -> Result<(), DriverError>,
) -> Result<(), DriverError> {
    let stopping = INTERRUPTED.load(Ordering::Relaxed);
    for c in conns.iter_mut() {
        if c.done {
            continue;
        }
        if stopping {
            c.done = true;
            continue;
        }
        if matches!(spec.mode, LoadMode::Rate(_)) || spec.duration.is_some() {
            pump(spec, shared, c, stats, start, now, false, flush)?;
        }
    }
    if progressed {
        progress.last = now;
        progress.end = now;
    } else if conns.iter().any(|c| !c.pending.is_empty()) && now.duration_since(progress.last) > spec.stall_timeout {
        return Err(DriverError::Timeout { target: spec.target.to_string(), secs: spec.stall_timeout.as_secs_f64() });
    } else if conns.iter().all(|c| c.pending.is_empty()) {
        progress.last = now;
    }
    Ok(())
}

/// The poll token of the open-loop timer (connections use their index).
const TIMER: Token = Token(usize::MAX);

fn io_err(spec: &RunSpec, e: std::io::Error) -> DriverError {
    DriverError::Io { target: spec.target.to_string(), reason: e.to_string() }
}

/// Reads what is there, records replies, then sends what the mode allows. Returns whether any
/// reply arrived.
/// `flush` starts writing `out[out_pos..out_len]`: mio writes what the socket takes, the
/// io_uring engine queues a send.
#[allow(clippy::too_many_arguments)]
fn pump(
    spec: &RunSpec,
    shared: &Shared,
    c: &mut Conn,
    stats: &mut RunStats,
    start: Instant,
    now: Instant,
    readable: bool,
    flush: &mut impl FnMut(&mut Conn) -> Result<(), DriverError>,
) -> Result<bool, DriverError> {
    let mut got = false;
    if readable {
        got = read_replies(spec, shared, c, stats, start)?;
    }
    if c.done {
        return Ok(got);
    }
    flush(c)?;
    if c.out_pos < c.out_len {
        return Ok(got);
    }
    let t = if got { Instant::now() } else { now };
    match spec.mode {
        LoadMode::Batch => {
            if c.pending.is_empty() {
                let k = claim(spec, shared, c, spec.depth, t, start);
                send(c, k, t, None, flush)?;
            }
        }
        LoadMode::Window => {
            let free = spec.depth - c.pending.len().min(spec.depth);
            if free > 0 {
                let k = claim(spec, shared, c, free, t, start);
                send(c, k, t, None, flush)?;
            }
        }
        LoadMode::Rate(_) => {
            while c.pending.len() < spec.depth && c.next_intended <= t {
                let k = claim(spec, shared, c, 1, t, start);
                if k == 0 {
                    break;
                }
                let intended = c.next_intended;
                c.next_intended += c.interval;
                send(c, 1, t, Some(intended), flush)?;
                if c.out_pos < c.out_len {
                    break;
                }
            }
        }
    }
    if c.pending.is_empty() && c.out_pos >= c.out_len {
        // Nothing outstanding: done unless more may still be issued.
        let budget_left = claim_possible(spec, shared, c, t, start);
        if !budget_left {
            c.done = true;
        }
    }
    Ok(got)
}

fn claim_possible(spec: &RunSpec, shared: &Shared, c: &Conn, now: Instant, start: Instant) -> bool {
    if shared.stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
        return false;
    }
    if let Some(d) = spec.duration {
        if now.duration_since(start) >= d {
            return false;
        }
    }
    if c.remaining == Some(0) {
        return false;
    }
    if let Some(total) = spec.total_requests {
        if shared.issued.load(Ordering::Relaxed) >= total {
            return false;
        }
    }
    true
}

fn send(
    c: &mut Conn,
    k: usize,
    now: Instant,
    intended: Option<Instant>,
    flush: &mut impl FnMut(&mut Conn) -> Result<(), DriverError>,
) -> Result<(), DriverError> {
    if k == 0 {
        return Ok(());
    }
    let Conn { gen, out, rng, pending, .. } = c;
    let n = gen.fill(out, k, rng, |kind, tx| {
        pending.push_back(Pending { kind, tx: tx as u32, sent: now, intended: intended.unwrap_or(now) });
    });
    c.out_len = n;
    c.out_pos = 0;
    flush(c)
}

/// Writes what the socket takes of `out[out_pos..out_len]` (mio engine).
fn write_out(spec: &RunSpec, c: &mut Conn) -> Result<(), DriverError> {
    while c.out_pos < c.out_len {
        match c.stream.write(&c.out[c.out_pos..c.out_len]) {
            Ok(0) => return Err(DriverError::Closed { target: spec.target.to_string() }),
            Ok(n) => c.out_pos += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
                return Err(DriverError::Closed { target: spec.target.to_string() })
            }
            Err(e) => return Err(io_err(spec, e)),
        }
    }
    Ok(())
}

fn read_replies(
    spec: &RunSpec,
    shared: &Shared,
    c: &mut Conn,
    stats: &mut RunStats,
    start: Instant,
) -> Result<bool, DriverError> {
    let mut any = false;
    loop {
        make_room(c);
        let n = match c.stream.read(&mut c.inbuf[c.in_end..]) {
            Ok(0) => return Err(DriverError::Closed { target: spec.target.to_string() }),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(any),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                return Err(DriverError::Closed { target: spec.target.to_string() })
            }
            Err(e) => return Err(io_err(spec, e)),
        };
        c.in_end += n;
        any |= consume_replies(spec, shared, c, stats, start, Instant::now())?;
    }
}

/// Makes room after `in_end` for the next read: moves unparsed bytes to the front, or
/// doubles the buffer when a partial reply fills it.
fn make_room(c: &mut Conn) {
    if c.in_end == c.inbuf.len() {
        if c.in_start > 0 {
            compact_input(c);
        } else {
            let n = c.inbuf.len() * 2;
            c.inbuf.resize(n, 0);
        }
    }
}

/// Moves the unparsed bytes of the read buffer to its front.
fn compact_input(c: &mut Conn) {
    c.inbuf.copy_within(c.in_start..c.in_end, 0);
    c.in_end -= c.in_start;
    c.in_start = 0;
}

/// Records every complete reply in `inbuf[in_start..in_end]`, read at `now`. Returns
/// whether there was any.
fn consume_replies(
    spec: &RunSpec,
    shared: &Shared,
    c: &mut Conn,
    stats: &mut RunStats,
    start: Instant,
    now: Instant,
) -> Result<bool, DriverError> {
    let mut any = false;
    {
        let sec = now.saturating_duration_since(start).as_secs() as usize;
        let mut replies = 0u64;
        let mut lat_sum = 0u64;
        let mut bytes_rx = 0u64;
        let mut bytes_tx = 0u64;
        loop {
            let buf = &c.inbuf[c.in_start..c.in_end];
            if buf.is_empty() {
                break;
            }
            let len = match resp::frame_len(buf, u64::MAX) {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(e) => {
                    return Err(DriverError::NotResp { target: spec.target.to_string(), reason: e.to_string() })
                }
            };
            let frame = &c.inbuf[c.in_start..c.in_start + len];
            c.in_start += len;
            if matches!(frame[0], b'>' | b'|') {
                continue; // push or attribute: not a reply to a request
            }
            let Some(p) = c.pending.pop_front() else {
                return Err(DriverError::NotResp {
                    target: spec.target.to_string(),
                    reason: format!("unexpected reply without a request: {:?}", String::from_utf8_lossy(&frame[..len.min(60)])),
                });
            };
            any = true;
            bytes_rx += len as u64;
            bytes_tx += p.tx as u64;
            let ki = (p.kind as usize).min(stats.kinds.len() - 1);
            let ks = &mut stats.kinds[ki];
            ks.bytes_rx += len as u64;
            ks.bytes_tx += p.tx as u64;
            if let Some(msg) = conn::error_message(frame) {
                if conn::is_auth_error(msg) {
                    return Err(DriverError::AuthRefused {
                        target: spec.target.to_string(),
                        reason: String::from_utf8_lossy(msg).into_owned(),
                    });
                }
                ks.errors += 1;
                stats.errors.add(msg);
                stats.second(sec).errors += 1;
                stats.kind_second(ki, sec).errors += 1;
                continue;
            }
            if frame.starts_with(b"$-1") || frame.starts_with(b"*-1") || frame[0] == b'_' {
                ks.misses += 1;
            } else {
                ks.hits += 1;
            }
            let lat = now.saturating_duration_since(p.intended).as_micros() as u64;
            stats::record(&mut ks.hist, lat, 1);
            ks.sum_us += lat as u128;
            let svc = matches!(spec.mode, LoadMode::Rate(_))
                .then(|| now.saturating_duration_since(p.sent).as_micros() as u64);
            if let Some(svc) = svc {
                stats::record(&mut ks.service, svc, 1);
            }
            let s = stats.second(sec);
            s.count += 1;
            s.sum_us += lat;
            s.bytes_tx += p.tx as u64;
            stats::record(&mut s.hist, lat, 1);
            if let Some(svc) = svc {
                s.record_service(svc);
            }
            let s = stats.kind_second(ki, sec);
            if let Some(svc) = svc {
                s.record_service(svc);
            }
            s.count += 1;
            s.sum_us += lat;
            s.bytes_rx += len as u64;
            s.bytes_tx += p.tx as u64;
            stats::record(&mut s.hist, lat, 1);
            replies += 1;
            lat_sum += lat;
        }
        stats.second(sec).bytes_rx += bytes_rx;
        if c.in_start == c.in_end {
            c.in_start = 0;
            c.in_end = 0;
        }
        if bytes_rx > 0 {
            shared.live.bytes.fetch_add(bytes_rx + bytes_tx, Ordering::Relaxed);
        }
        if replies > 0 {
            shared.live.finished.fetch_add(replies, Ordering::Relaxed);
            shared.live.latency_sum_us.fetch_add(lat_sum, Ordering::Relaxed);
        }
    }
    Ok(any)
}
