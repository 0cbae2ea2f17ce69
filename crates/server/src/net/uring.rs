//! The io_uring engine, built the way DESIGN.md section 3 measured to beat epoll:
//!
//! - one ring per event loop, created on the loop's own thread with `SINGLE_ISSUER`,
//!   `DEFER_TASKRUN` and `COOP_TASKRUN` (completions run only when the loop asks);
//! - multishot accept on each listener, multishot receive on each connection into a
//!   provided-buffer ring (no receive buffer is pinned per idle connection, and one
//!   submission serves every receive until the kernel ends it);
//! - at most one send in flight per connection, from a buffer the connection no longer
//!   writes into (replies produced meanwhile go to a second buffer, swapped in when the
//!   send completes);
//! - one `io_uring_enter` per loop iteration that submits everything queued and waits
//!   for completions or the next tick;
//! - an eventfd polled with a multishot poll as the cross-thread waker.
//!
//! Closing a connection shuts the socket down, waits for its operations to complete
//! (the multishot receive ends with EOF), and only then closes the descriptor, so no
//! completion can ever refer to a reused slot.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bufring::BufRing;
use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::{admit, close_client, open_client, tick, tick_period, tune_socket, Admission};
use crate::conn::{Conn, Flow, Worker};
use crate::shared::{bump, Shared};

// user_data: low 3 bits the operation, the rest the slot (or listener index).
const OP_ACCEPT: u64 = 1;
const OP_RECV: u64 = 2;
const OP_SEND: u64 = 3;
const OP_WAKE: u64 = 4;
/// The cancel of a moving connection's receive (its completion needs no handling).
const OP_CANCEL: u64 = 5;

/// user_data of DEBUG AOF-FLUSH-SLEEP's timeout on the commit ring (tokens count up
/// from 0 and never reach it).
const DEBUG_DELAY: u64 = u64::MAX;
/// Set in the user_data of a commit's write on the commit ring (the token's bits
/// below it); its fdatasync, linked after it, carries the bare token.
const COMMIT_WRITE: u64 = 1 << 62;

const RING_ENTRIES: u32 = 1024;
const BUF_GROUP: u16 = 0;
/// Provided receive buffers per loop and their size (Redis reads 16 KiB at a time).
const BUF_COUNT: u16 = 256;
const BUF_SIZE: usize = 16 * 1024;
/// Completions per iteration from which the loop counts as loaded.
const BATCH_LOAD: usize = 4;
/// Completions to gather per wake-up under load (within io-uring-min-wait-us).
const BATCH_WANT: usize = 8;

/// One of this loop's log commits in flight: its token, its length, when it began.
struct OwnCommit {
    token: u64,
    len: u32,
    started: Instant,
}

/// Wake-up batching under load (`io-uring-batch-wait-us`). When many connections are
/// active, the loop asks the kernel to wake it only once enough completions are ready
/// for the sends it just queued plus requests from half the active connections (at most
/// `BATCH_MAX_REQUESTS`), or once the wait bound passed: one wake-up then serves many
/// requests, as Redis's slower turns do by themselves, and the clients, which get their
/// replies in bursts, spend less per reply too. Measured here (redis-benchmark SET
/// -c 50, one loop): 88k -> 101k requests/s and 7.9 -> 7.1 us of server CPU per
/// request. Load is measured in connections, not completions: a few busy clients (each
/// waiting for its reply before it sends again) never make the loop wait for requests
/// that cannot come (-c 4 and -c 10 unchanged).
///
/// Only from `BATCH_MIN_ACTIVE` (40) active connections: with 8 (the threshold until
/// 2026-11-26) redis-benchmark GET -c 8 ran at 57.6k requests/s against 94.3k without
/// batching (median of 4 interleaved rounds, one loop, 2 vCPUs; Redis 112k), since a
/// wake-up that waits for half of eight closed-loop clients waits for clients that
/// need this loop's replies first. From -c 24 to -c 200 the two thresholds measured the
/// same within noise; YCSB-style clients (a few threads, one request each) are the
/// common case this protects.
struct Batching {
    /// The current millisecond and the distinct connections with a request in it.
    ms: i64,
    active_now: usize,
    /// Distinct connections with a request in the previous millisecond.
    active_prev: usize,
    /// Sends queued this turn (their completions count toward the wake-up).
    sends: usize,
    /// The bound on a wait, in microseconds (0: no batching).
    wait_us: u64,
    /// Commands executed by the loop (its `total_commands`) when the last turn began,
    /// and in the last turn.
    commands_at: u64,
    last_turn_commands: u64,
}

/// Active connections (in the last millisecond) from which the loop batches wake-ups.
const BATCH_MIN_ACTIVE: usize = 40;
/// The most requests a wake-up waits for.
const BATCH_MAX_REQUESTS: usize = 32;
/// Commands in a turn from which the next wait is not batched.
const BATCH_BUSY_TURN: u64 = 64;

impl Batching {
    fn new(wait_us: u64) -> Batching {
        Batching { ms: 0, active_now: 0, active_prev: 0, sends: 0, wait_us, commands_at: 0, last_turn_commands: 0 }
    }

    /// A turn ends; `commands`: the loop's command count so far.
    fn turn_done(&mut self, commands: u64) {
        self.last_turn_commands = commands.wrapping_sub(self.commands_at);
        self.commands_at = commands;
    }

    /// A turn at `now_ms`: a new millisecond starts a new count.
    fn roll(&mut self, now_ms: i64) {
        if now_ms != self.ms {
            self.active_prev = if now_ms == self.ms + 1 { self.active_now } else { 0 };
            self.active_now = 0;
            self.ms = now_ms;
        }
    }

    /// How many completions to wait for, and for at most how long; None: wake on the
    /// first one.
    fn want(&self) -> Option<(usize, Duration)> {
        // A turn that already had plenty to do (pipelining clients) gains nothing from
        // waiting, and its replies would only leave later.
        if self.wait_us == 0 || self.active_prev < BATCH_MIN_ACTIVE || self.last_turn_commands >= BATCH_BUSY_TURN {
            return None;
        }
        let requests = (self.active_prev / 2).min(BATCH_MAX_REQUESTS);
        Some((self.sends + requests, Duration::from_micros(self.wait_us)))
    }
}

fn user_data(op: u64, index: usize) -> u64 {
    ((index as u64) << 3) | op
}

/// A connection and the engine's state for it.
struct Slot {
    fd: OwnedFd,
    conn: Conn,
    /// The buffer being sent (the connection writes new replies into `conn.out`).
    sending: Vec<u8>,
    sent: usize,
    send_inflight: bool,
    recv_armed: bool,
    /// Shut down; waiting for operations in flight to complete before the fd closes.
    closing: bool,
    /// Close once everything pending is written.
    close_after_send: bool,
    /// The millisecond of this connection's last request (`Batching`).
    active_ms: i64,
    /// Moving to this loop (`balance.rs`): its receive is cancelled, and once it has
    /// ended and the output has drained, the connection is handed over.
    moving_to: Option<usize>,
    /// A cancel of this slot's receive is in flight: the slot is not reused before its
    /// completion (the cancel finds its target by user_data, which is the slot's).
    cancel_inflight: bool,
    /// Its input is paused for its output (`Conn::output_paused`): the receive was
    /// cancelled or not re-armed, and is armed again when the output drains.
    recv_parked: bool,
}

impl Slot {
    fn new(fd: OwnedFd, conn: Conn) -> Slot {
        Slot {
            fd,
            conn,
            sending: Vec::new(),
            sent: 0,
            send_inflight: false,
            recv_armed: false,
            closing: false,
            close_after_send: false,
            active_ms: 0,
            moving_to: None,
            cancel_inflight: false,
            recv_parked: false,
        }
    }

    /// Everything queued for this connection has been sent.
    fn drained(&self) -> bool {
        !self.send_inflight && self.sent >= self.sending.len() && self.conn.all_written()
    }
}

pub struct EventLoop {
    index: usize,
    shared: Arc<Shared>,
    /// Connections handed to this loop by others (`balance.rs`).
    arrivals: Arc<super::balance::Arrivals>,
    // Field order matters: the ring must drop (unregistering the buffer ring) before
    // `bufs` unmaps the memory it refers to.
    ring: IoUring,
    bufs: BufRing,
    listeners: Vec<std::net::TcpListener>,
    waker: OwnedFd,
    wake_buf: u64,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// Slots with replies to send after this batch of completions.
    dirty: Vec<usize>,
    /// Slots whose multishot receive ended for lack of buffers: re-armed next iteration.
    rearm: Vec<usize>,
    /// `io-uring-min-wait-us`, when the kernel supports it (0 = off).
    min_wait_us: u32,
    /// Completions handled in the last iteration (a measure of load).
    last_batch: usize,
    /// Client id -> slot, for messages posted to this loop.
    by_id: hashbrown::HashMap<u64, usize>,
    /// Slots whose replies wait for the append-only log (see `aof`).
    held: Vec<usize>,
    rng: fastrand::Rng,
    /// This loop's part of a running capture's walk (`walk.rs`), and what it left.
    walk: crate::walk::LoopWalk,
    walk_progress: crate::walk::Progress,
    batching: Batching,
    /// A small ring for this loop's durable log writes (`commit_log`), whose completions
    /// signal the waker; None without an append-only log.
    commit_ring: Option<IoUring>,
    /// This loop's log commits in flight (several while their fdatasyncs overlap:
    /// `aof/commit.rs`).
    own_commits: Vec<OwnCommit>,
    /// The last commit took longer than `aof-commit-wait-us`: do not wait for the next.
    commit_slow: bool,
    /// This loop's side of connection balancing, and its slots on their way out.
    balancer: super::balance::Balancer,
    moving: Vec<usize>,
}

/// Creates the eventfd that wakes a uring loop.
pub fn new_waker_fd() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall; the result is checked.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// True when this kernel supports the ring setup and features the engine uses.
pub fn available() -> bool {
    build_ring().and_then(|r| BufRing::new(&r, BUF_GROUP, BUF_COUNT, BUF_SIZE).map(|_| ())).is_ok()
}

fn build_ring() -> io::Result<IoUring> {
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_coop_taskrun()
        .setup_cqsize(RING_ENTRIES * 8)
        .build(RING_ENTRIES)
}

impl EventLoop {
    /// Builds the loop. Must run on the thread that will run it (SINGLE_ISSUER).
    pub fn new(
        index: usize,
        shared: Arc<Shared>,
        arrivals: Arc<super::balance::Arrivals>,
        listeners: Vec<std::net::TcpListener>,
        waker: OwnedFd,
    ) -> io::Result<EventLoop> {
        let ring = build_ring()?;
        let bufs = BufRing::new(&ring, BUF_GROUP, BUF_COUNT, BUF_SIZE)?;
        let shared_batch_wait_us = u64::from(shared.config.read().io_uring_batch_wait_us);
        let min_wait_us = if ring.params().is_feature_min_timeout() {
            shared.config.read().io_uring_min_wait_us
        } else {
            0
        };
        let mut ev = EventLoop {
            index,
            shared,
            arrivals,
            ring,
            bufs,
            listeners,
            waker,
            wake_buf: 0,
            slots: Vec::new(),
            free: Vec::new(),
            dirty: Vec::new(),
            rearm: Vec::new(),
            min_wait_us,
            last_batch: 0,
            by_id: hashbrown::HashMap::new(),
            held: Vec::new(),
            rng: fastrand::Rng::new(),
            walk: Default::default(),
            walk_progress: crate::walk::Progress::Idle,
            batching: Batching::new(shared_batch_wait_us),
            commit_ring: None,
            own_commits: Vec::with_capacity(crate::aof::commit::MAX_IN_FLIGHT),
            commit_slow: false,
            balancer: super::balance::Balancer::new(index),
            moving: Vec::new(),
        };
        {
            // (Made whether the log is on or not: CONFIG SET appendonly may turn it on.)
            // Room for every commit in flight: up to three entries each (delay, write,
            // fdatasync), each posting a completion.
            let entries = (3 * crate::aof::commit::MAX_IN_FLIGHT as u32).next_power_of_two();
            let ring = IoUring::builder().setup_single_issuer().build(entries)?;
            ring.submitter().register_eventfd(ev.waker.as_raw_fd())?;
            ev.commit_ring = Some(ring);
        }
        for i in 0..ev.listeners.len() {
            ev.arm_accept(i)?;
        }
        ev.arm_wake()?;
        Ok(ev)
    }

    /// Queues a submission, flushing the queue to the kernel when it is full.
    fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every buffer an entry points to (send buffers, wake_buf) lives in
            // `self` and is not moved or freed until its completion arrives.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            self.ring.submit()?;
        }
    }

    fn arm_accept(&mut self, i: usize) -> io::Result<()> {
        let fd = self.listeners[i].as_raw_fd();
        let e = opcode::AcceptMulti::new(types::Fd(fd))
            .flags(libc::SOCK_CLOEXEC)
            .build()
            .user_data(user_data(OP_ACCEPT, i));
        self.push(e)
    }

    fn arm_wake(&mut self) -> io::Result<()> {
        let e = opcode::PollAdd::new(types::Fd(self.waker.as_raw_fd()), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(user_data(OP_WAKE, 0));
        self.push(e)
    }

    fn arm_recv(&mut self, t: usize) -> io::Result<()> {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return Ok(()) };
        if slot.closing || slot.recv_armed {
            return Ok(());
        }
        slot.recv_armed = true;
        let e = opcode::RecvMulti::new(types::Fd(slot.fd.as_raw_fd()), BUF_GROUP)
            .build()
            .user_data(user_data(OP_RECV, t));
        self.push(e)
    }

    /// Starts a send of everything pending if none is in flight.
    fn start_send(&mut self, t: usize) -> io::Result<()> {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return Ok(()) };
        if slot.send_inflight || slot.closing {
            return Ok(());
        }
        if slot.sent >= slot.sending.len() {
            if !slot.conn.has_output() {
                if slot.close_after_send && slot.conn.all_written() {
                    self.begin_close(t);
                }
                return Ok(());
            }
            slot.sending.clear();
            slot.sent = 0;
            slot.conn.swap_output(&mut slot.sending);
            if slot.sending.is_empty() {
                // (A TLS session with nothing to say after all.)
                return Ok(());
            }
        }
        let rest = &slot.sending[slot.sent..];
        slot.conn.set_in_flight(rest.len());
        let e = opcode::Send::new(types::Fd(slot.fd.as_raw_fd()), rest.as_ptr(), rest.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(user_data(OP_SEND, t));
        slot.send_inflight = true;
        self.batching.sends += 1;
        self.push(e)
    }

    /// Runs until shutdown is requested.
    pub fn run(mut self) {
        crate::replication::stream::this_thread_runs_loop(self.index);
        let mut next_tick = Instant::now();
        loop {
            let wait = next_tick.saturating_duration_since(Instant::now()).max(Duration::from_micros(1));
            let wait = crate::walk::wait(self.walk_progress, wait, self.last_batch > 0);
            let ts = types::Timespec::from(wait);
            // Under load, let the kernel gather a few completions (for at most
            // min_wait_us) before waking us: fewer wake-ups per request. At low load the
            // loop still wakes on the first completion.
            let (want, min_wait) = if self.min_wait_us > 0 && self.last_batch >= BATCH_LOAD {
                (BATCH_WANT, self.min_wait_us)
            } else {
                (1, 0)
            };
            let commands = self.shared.thread_stats[self.index].total_commands.load(Ordering::Relaxed);
            self.batching.turn_done(commands);
            let batch_ts;
            let (want, ts) = match self.batching.want() {
                Some((w, bound)) if min_wait == 0 && bound < wait => {
                    batch_ts = types::Timespec::from(bound);
                    (w, batch_ts)
                }
                _ => (want, ts),
            };
            self.batching.sends = 0;
            let args = types::SubmitArgs::new().timespec(&ts).min_wait_usec(min_wait);
            if let Err(e) = self.ring.submitter().submit_with_args(want, &args) {
                match e.raw_os_error() {
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) => {}
                    _ => crate::log::warning(&format!("event loop {}: io_uring_enter: {e}", self.index)),
                }
            }
            let woke = Instant::now();
            let now_ms = self.shared.keyspace.now_ms();
            self.batching.roll(now_ms);
            let mut returned_buffers = false;
            self.last_batch = 0;
            loop {
                let Some(cqe) = self.ring.completion().next() else { break };
                self.last_batch += 1;
                let ud = cqe.user_data();
                let index = (ud >> 3) as usize;
                match ud & 7 {
                    OP_ACCEPT => self.on_accept(index, cqe.result(), cqe.flags(), now_ms),
                    OP_RECV => returned_buffers |= self.on_recv(index, cqe.result(), cqe.flags(), now_ms),
                    OP_SEND => self.on_send(index, cqe.result()),
                    OP_WAKE => self.on_wake(cqe.flags()),
                    OP_CANCEL => self.on_cancel(index),
                    _ => {}
                }
            }
            if returned_buffers {
                self.bufs.publish();
            }
            self.commit_log();
            self.release_held();
            crate::replication::master::flush_here(&self.shared, self.index);
            crate::replication::failover::after_acks(&self.shared);
            // Mail for this loop's replicas (left by the flush without a wake-up),
            // before the sends start.
            self.drain_mail();
            for t in std::mem::take(&mut self.rearm) {
                if let Err(e) = self.arm_recv(t) {
                    crate::log::warning(&format!("re-arming receive: {e}"));
                }
            }
            let dirty = std::mem::take(&mut self.dirty);
            for &t in &dirty {
                if let Err(e) = self.start_send(t) {
                    crate::log::warning(&format!("queueing send: {e}"));
                    self.begin_close(t);
                }
            }
            self.dirty = dirty;
            self.dirty.clear();
            if !self.moving.is_empty() {
                self.finish_moves();
            }
            if self.walk_progress != crate::walk::Progress::Idle || self.shared.walk.running() {
                let served = if self.last_batch == 0 { Duration::ZERO } else { woke.elapsed() };
                self.walk_progress = crate::walk::step(&self.shared.walk, &self.shared.keyspace, self.shared.gate(self.index), self.index, &mut self.walk, served);
            }
            if self.shared.shutdown.load(Ordering::SeqCst) {
                break;
            }
            if Instant::now() >= next_tick {
                self.drain_mail();
                for t in std::mem::take(&mut self.dirty) {
                    if let Err(e) = self.start_send(t) {
                        crate::log::warning(&format!("queueing send: {e}"));
                        self.begin_close(t);
                    }
                }
                let live = self.slots.iter().enumerate().filter_map(|(i, s)| {
                    s.as_ref().filter(|s| !s.closing).map(|s| (i, &s.conn))
                });
                for t in tick(&self.shared, self.index, now_ms, live) {
                    self.begin_close(t);
                }
                self.adopt_arrivals();
                self.balance();
                next_tick = Instant::now() + tick_period(&self.shared);
            }
        }
        self.shutdown();
    }

    fn on_accept(&mut self, listener: usize, res: i32, flags: u32, now_ms: i64) {
        if !cqueue::more(flags) {
            if let Err(e) = self.arm_accept(listener) {
                crate::log::warning(&format!("re-arming accept: {e}"));
            }
        }
        if res < 0 {
            let e = io::Error::from_raw_os_error(-res);
            crate::log::warning(&format!("Accepting client connection: {e}"));
            return;
        }
        // SAFETY: a successful accept returns a new descriptor we now own.
        let fd = unsafe { OwnedFd::from_raw_fd(res as RawFd) };
        let sock = socket2::SockRef::from(&fd);
        let peer_addr: Option<SocketAddr> = sock.peer_addr().ok().and_then(|a| a.as_socket());
        let keepalive_s = match admit(&self.shared, self.index, peer_addr.map(|a| a.ip())) {
            Admission::Accept { keepalive_s } => keepalive_s,
            Admission::Reject(msg) => {
                // SAFETY: a short blocking-free write of a constant to our own fd.
                unsafe { libc::send(fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
                return;
            }
        };
        tune_socket(fd.as_fd(), keepalive_s);
        let peer = peer_addr.map(|a| a.to_string()).unwrap_or_default();
        let laddr = sock.local_addr().ok().and_then(|a| a.as_socket()).map(|a: SocketAddr| a.to_string()).unwrap_or_default();
        let home = self.shared.loops.place(self.index);
        let conn = open_client(&self.shared, home, fd.as_raw_fd(), peer, laddr, now_ms);
        if home != self.index {
            self.arrivals.hand_over(&self.shared, self.index, home, fd, conn);
            return;
        }
        self.install(fd, conn);
    }

    /// Gives a connection a slot and starts receiving on it.
    fn install(&mut self, fd: OwnedFd, conn: Conn) {
        let t = match self.free.pop() {
            Some(t) => t,
            None => {
                self.slots.push(None);
                self.slots.len() - 1
            }
        };
        self.by_id.insert(conn.client.info.id, t);
        self.slots[t] = Some(Slot::new(fd, conn));
        if let Err(e) = self.arm_recv(t) {
            crate::log::warning(&format!("arming receive: {e}"));
            self.begin_close(t);
        }
    }

    /// Takes in the connections other loops handed to this one.
    fn adopt_arrivals(&mut self) {
        for a in self.arrivals.take(self.index) {
            self.install(a.fd, a.conn);
        }
    }

    /// On the tick: measures this loop's load and, when the policy says so
    /// (`balance::decide`), starts moving some connections to another loop: each
    /// one's multishot receive is cancelled; `finish_moves` hands it over once the
    /// receive has ended and its output has drained.
    fn balance(&mut self) {
        let candidates: Vec<(usize, u64)> = (0..self.slots.len())
            .filter(|&t| self.may_start_move(t))
            .filter_map(|t| Some((t, self.slots[t].as_ref()?.conn.client.info.id)))
            .collect();
        let moves = super::balance::plan_moves(&self.shared, &mut self.balancer, self.by_id.len(), candidates);
        for (t, to) in moves {
            let Some(Some(slot)) = self.slots.get_mut(t) else {
                continue;
            };
            slot.moving_to = Some(to);
            self.cancel_recv(t);
            self.moving.push(t);
        }
    }

    /// Whether the connection in slot `t` may start moving to another loop now.
    fn may_start_move(&self, t: usize) -> bool {
        matches!(self.slots.get(t), Some(Some(s)) if s.recv_armed && !s.closing && !s.close_after_send && s.moving_to.is_none() && s.conn.can_move())
    }

    /// Hands over the moving connections whose receive has ended and whose output has
    /// drained; one that took input meanwhile (and so may not move) receives again.
    fn finish_moves(&mut self) {
        for t in std::mem::take(&mut self.moving) {
            let Some(Some(slot)) = self.slots.get_mut(t) else {
                continue;
            };
            let Some(to) = slot.moving_to else { continue };
            if slot.closing {
                continue;
            }
            if slot.recv_armed || slot.cancel_inflight {
                // The cancel has not reached the receive yet.
                self.moving.push(t);
                continue;
            }
            if slot.close_after_send {
                // Closing after its last reply (QUIT came meanwhile): the send path
                // closes it; it receives nothing more.
                slot.moving_to = None;
                continue;
            }
            if !slot.conn.can_move() {
                slot.moving_to = None;
                if let Err(e) = self.arm_recv(t) {
                    crate::log::warning(&format!("re-arming receive: {e}"));
                    self.begin_close(t);
                }
                continue;
            }
            if !slot.drained() {
                self.moving.push(t);
                continue;
            }
            let Some(slot) = self.slots[t].take() else {
                continue;
            };
            self.by_id.remove(&slot.conn.client.info.id);
            self.free.push(t);
            self.arrivals.hand_over(&self.shared, self.index, to, slot.fd, slot.conn);
        }
    }

    /// Handles a receive completion; returns true when a buffer went back to the ring.
    fn on_recv(&mut self, t: usize, res: i32, flags: u32, now_ms: i64) -> bool {
        let more = cqueue::more(flags);
        let bid = cqueue::buffer_select(flags);
        let Some(Some(slot)) = self.slots.get_mut(t) else {
            if let Some(bid) = bid {
                self.bufs.give(bid);
                return true;
            }
            return false;
        };
        if !more {
            slot.recv_armed = false;
        }
        if slot.closing {
            if let Some(bid) = bid {
                self.bufs.give(bid);
            }
            self.maybe_finish_close(t);
            return bid.is_some();
        }
        // A moving connection's receive is re-armed (or not) by `finish_moves`.
        let moving = slot.moving_to.is_some();
        if res <= 0 {
            if res == -libc::ENOBUFS {
                // Out of provided buffers: receive again once some are returned.
                if !moving {
                    self.rearm.push(t);
                }
            } else if res == -libc::ECANCELED && (moving || slot.recv_parked) {
                // The cancel asked for by `balance`, or by backpressure (`park_recv`).
            } else if res == -libc::ECANCELED {
                // Parked, and resumed before the cancel landed: receive again.
                self.rearm.push(t);
            } else {
                // EOF or error: the client is gone; nothing more to send.
                self.begin_close(t);
            }
            return false;
        }
        let Some(bid) = bid else { return false };
        if slot.active_ms != now_ms {
            slot.active_ms = now_ms;
            self.batching.active_now += 1;
        }
        let shared = &*self.shared;
        let stats = &*shared.thread_stats[self.index];
        bump(&stats.net_input_bytes, res as u64);
        let took = slot.conn.take_input(self.bufs.bytes(bid, res as usize));
        self.bufs.give(bid);
        if !took {
            self.begin_close(t);
            return true;
        }
        let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
        let flow = slot.conn.process(&mut w);
        match flow {
            Flow::Continue => {}
            Flow::CloseAfterWrite => slot.close_after_send = true,
            Flow::CloseNow => {
                self.begin_close(t);
                return true;
            }
        }
        let parked = slot.conn.output_paused();
        if !more && !slot.close_after_send && !moving && !parked {
            self.rearm.push(t);
        }
        if slot.conn.needs_listing() {
            self.held.push(t);
        }
        self.dirty.push(t);
        if parked {
            self.park_recv(t, more);
        }
        true
    }

    /// Backpressure (`Conn::output_paused`): stops receiving from a client whose
    /// replies pile up unread, so that its input waits in the socket (and TCP holds
    /// the client back) instead of in memory. `armed`: its multishot receive is still
    /// armed and must be cancelled.
    fn park_recv(&mut self, t: usize, armed: bool) {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return };
        if slot.recv_parked {
            return;
        }
        slot.recv_parked = true;
        if armed && !slot.cancel_inflight {
            self.cancel_recv(t);
        }
    }

    /// Cancels slot `t`'s multishot receive (a move, or backpressure): the slot is not
    /// reused before the cancel's completion (`cancel_inflight`).
    fn cancel_recv(&mut self, t: usize) {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return };
        slot.cancel_inflight = true;
        let cancel = opcode::AsyncCancel::new(user_data(OP_RECV, t))
            .build()
            .user_data(user_data(OP_CANCEL, t));
        if let Err(e) = self.push(cancel) {
            crate::log::warning(&format!("cancelling a receive: {e}"));
        }
    }

    /// After a send: runs the input paused for this connection's output once enough
    /// of it has gone, and receives again when the input is no longer paused.
    fn resume_output(&mut self, t: usize) {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return };
        if !slot.conn.output_paused() {
            return;
        }
        let now_ms = self.shared.keyspace.now_ms();
        let shared = &*self.shared;
        let stats = &*shared.thread_stats[self.index];
        let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
        let Some(flow) = slot.conn.resume_output(&mut w) else { return };
        if slot.conn.needs_listing() {
            self.held.push(t);
        }
        match flow {
            Flow::Continue => {}
            Flow::CloseAfterWrite => slot.close_after_send = true,
            Flow::CloseNow => {
                self.begin_close(t);
                return;
            }
        }
        if !slot.conn.output_paused() && slot.recv_parked {
            slot.recv_parked = false;
            if !slot.recv_armed && !slot.close_after_send {
                self.rearm.push(t);
            }
        }
    }

    /// Under `appendfsync always`, makes this loop's batch durable (`aof/commit.rs`):
    /// commits the log's tail as one direct write on the loop's commit ring and waits,
    /// at most `aof-commit-wait-us` in all, until the log is durable up to the end of
    /// what was appended when the turn ended, as Redis waits for its fsync before it
    /// replies. Another loop's commit in flight is waited for the same way, then the
    /// records gathered meanwhile go in the next commit. A commit still in flight when
    /// the wait ends wakes the loop through its waker when it completes. After a commit
    /// slower than the bound the loop only submits, until a commit is fast again.
    fn commit_log(&mut self) {
        // Nothing to do without the log, once this loop's last commit ended (a log
        // turned off may leave some in flight: they are reaped).
        if self.commit_ring.is_none() || (self.own_commits.is_empty() && self.shared.aof.is_none()) {
            return;
        }
        self.reap_commit();
        let Some(aof) = self.shared.aof.as_ref() else { return };
        if !aof.commits_inline() || aof.durable() >= aof.appended() {
            return;
        }
        let shared = self.shared.clone();
        let Some(aof) = shared.aof.as_ref() else { return };
        let target = aof.appended();
        let bound = if self.commit_slow { 0 } else { shared.config.read().aof_commit_wait_us };
        let deadline = Instant::now() + Duration::from_micros(bound.into());
        loop {
            self.submit_commit(aof);
            let left = deadline.saturating_duration_since(Instant::now());
            if aof.durable() >= target || left.is_zero() {
                break;
            }
            if !self.own_commits.is_empty() {
                self.wait_own_commit(left);
                self.reap_commit();
            } else if !(aof.commit_in_flight() && aof.wait_commit_progress(left)) {
                // Nothing in flight that a wait would see move (a case left to the
                // writer thread, or the other loops' commits outlasted the bound).
                break;
            }
        }
        // Whatever gathered while waiting goes out now, without a wait.
        self.submit_commit(aof);
    }

    /// Submits the log's tail as this loop's commit, if `start_commit` gives one.
    fn submit_commit(&mut self, aof: &crate::aof::Aof) {
        let Some(ring) = self.commit_ring.as_mut() else { return };
        let Some(io) = aof.start_commit() else { return };
        // A direct write linked to an fdatasync (not one RWF_DSYNC write): an
        // asynchronous RWF_DSYNC write finishes on a kernel worker bound to the CPU that
        // took the disk's interrupt, and while that CPU was busy each commit waited for
        // the scheduler there, up to 3.8 ms (see aof/commit.rs). The fdatasync runs on
        // the ring's own worker thread, which may take any CPU.
        let write = opcode::Write::new(types::Fd(io.fd), io.ptr, io.len)
            .offset(io.offset)
            .build()
            .flags(squeue::Flags::IO_LINK)
            .user_data(COMMIT_WRITE | io.token);
        let sync = opcode::Fsync::new(types::Fd(io.fd))
            .flags(types::FsyncFlags::DATASYNC)
            .build()
            .user_data(io.token);
        // DEBUG AOF-FLUSH-SLEEP: a timeout linked before the write stands for a slow
        // disk (the kernel reads the timespec when the chain is submitted, below).
        let sleep_us = aof.debug_flush_sleep_us.load(Ordering::Relaxed);
        let sleep = types::Timespec::from(Duration::from_micros(sleep_us));
        let delay = opcode::Timeout::new(&sleep)
            .flags(types::TimeoutFlags::ETIME_SUCCESS)
            .build()
            .flags(squeue::Flags::IO_LINK)
            .user_data(DEBUG_DELAY);
        // SAFETY: the buffer stays valid until the commit is finished or taken over by
        // the writer thread (CommitIo's contract); the ring holds nothing else.
        let pushed = unsafe {
            let mut sq = ring.submission();
            (sleep_us == 0 || sq.push(&delay).is_ok()) && sq.push(&write).is_ok() && sq.push(&sync).is_ok()
        };
        if !pushed {
            aof.finish_commit(self.index, io.token, -libc::EBUSY);
            return;
        }
        if let Err(e) = ring.submitter().submit() {
            crate::log::warning(&format!("event loop {}: log write: {e}", self.index));
        }
        self.own_commits.push(OwnCommit {
            token: io.token,
            len: io.len,
            started: Instant::now(),
        });
    }

    /// Waits at most `left` for this loop's commit to complete.
    fn wait_own_commit(&mut self, left: Duration) {
        let Some(ring) = self.commit_ring.as_mut() else { return };
        // No wake-up through the waker for a completion this loop waits for itself; a
        // completion that lands after the eventfd is enabled again is reaped next turn.
        ring.completion().disable_eventfd();
        let ts = types::Timespec::from(left);
        if let Err(e) = ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts)) {
            if !matches!(e.raw_os_error(), Some(libc::ETIME) | Some(libc::EINTR)) {
                crate::log::warning(&format!("event loop {}: waiting for a log write: {e}", self.index));
            }
        }
        ring.completion().enable_eventfd();
    }

    /// Handles the completions of this loop's log commits: a write that completed lets
    /// the next commit start (`Aof::commit_written`), an fdatasync ends its commit. A
    /// failed write (an error or a short count) ends its commit with that result; its
    /// fdatasync, cancelled, then finds the commit ended already.
    fn reap_commit(&mut self) {
        let Some(ring) = self.commit_ring.as_mut() else { return };
        // Called every turn under `always`: no allocation (the ring holds at most three
        // completions per commit in flight).
        let done: smallvec::SmallVec<[(u64, i32); 3 * crate::aof::commit::MAX_IN_FLIGHT]> =
            ring.completion().map(|c| (c.user_data(), c.result())).collect();
        let shared = self.shared.clone();
        // (Reaped even once the log was turned off: every commit in flight ends.)
        let aof = shared.aof.object();
        for (user_data, res) in done {
            if user_data == DEBUG_DELAY {
                continue;
            }
            let token = user_data & !COMMIT_WRITE;
            let Some(pos) = self.own_commits.iter().position(|c| c.token == token) else {
                continue;
            };
            let len = i32::try_from(self.own_commits[pos].len).unwrap_or(i32::MAX);
            if user_data & COMMIT_WRITE != 0 {
                if res == len {
                    aof.commit_written(self.index, token, res);
                    continue;
                }
                aof.finish_commit(self.index, token, res);
            } else {
                let bound = u128::from(self.shared.config.read().aof_commit_wait_us);
                self.commit_slow = self.own_commits[pos].started.elapsed().as_micros() > bound;
                aof.finish_commit(self.index, token, if res == 0 { len } else { res });
            }
            self.own_commits.swap_remove(pos);
        }
    }

    /// Sends what the append-only log now allows of the held connections' replies.
    fn release_held(&mut self) {
        let released = super::release_held(&self.shared, self.index, &mut self.held, &mut self.slots, |s| &mut s.conn);
        if released.is_empty() {
            return;
        }
        let now_ms = self.shared.keyspace.now_ms();
        for t in released {
            self.dirty.push(t);
            let Some(Some(slot)) = self.slots.get_mut(t) else { continue };
            if slot.closing {
                continue;
            }
            let shared = &*self.shared;
            let stats = &*shared.thread_stats[self.index];
            let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
            let flow = super::resume_paused(&mut slot.conn, &mut w);
            if slot.conn.needs_listing() {
                self.held.push(t);
            }
            match flow {
                None | Some(Flow::Continue) => {}
                Some(Flow::CloseAfterWrite) => slot.close_after_send = true,
                Some(Flow::CloseNow) => self.begin_close(t),
            }
        }
    }

    fn on_cancel(&mut self, t: usize) {
        let Some(Some(slot)) = self.slots.get_mut(t) else {
            return;
        };
        slot.cancel_inflight = false;
        if slot.closing {
            self.maybe_finish_close(t);
        }
    }

    fn on_send(&mut self, t: usize, res: i32) {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return };
        slot.send_inflight = false;
        if slot.closing {
            self.maybe_finish_close(t);
            return;
        }
        if res < 0 {
            self.begin_close(t);
            return;
        }
        bump(&self.shared.thread_stats[self.index].net_output_bytes, res as u64);
        slot.sent += res as usize;
        slot.conn.set_in_flight(slot.sending.len().saturating_sub(slot.sent));
        slot.conn.publish_output_size();
        let paused = slot.conn.output_paused();
        // Partial send, or replies produced meanwhile: send again.
        self.dirty.push(t);
        if paused {
            self.resume_output(t);
        }
    }

    fn on_wake(&mut self, flags: u32) {
        // SAFETY: reads the 8-byte eventfd counter into our own u64.
        unsafe {
            libc::read(self.waker.as_raw_fd(), (&mut self.wake_buf as *mut u64).cast(), 8);
        }
        if !cqueue::more(flags) {
            if let Err(e) = self.arm_wake() {
                crate::log::warning(&format!("re-arming waker: {e}"));
            }
        }
        // Arrivals first, so that a kill of a connection in transit is seen below.
        self.adopt_arrivals();
        let live = self.slots.iter().enumerate().filter_map(|(i, s)| Some((i, &s.as_ref()?.conn)));
        let killed = super::killed(live);
        for t in killed {
            self.begin_close(t);
        }
        self.drain_mail();
    }

    /// Applies the mail posted to this loop (pub/sub messages, blocked clients' replies).
    /// Called on wake-up and on every tick, so mail never waits on a wake-up alone.
    fn drain_mail(&mut self) {
        let now_ms = self.shared.keyspace.now_ms();
        for mail in super::take_mail(&self.shared, self.index) {
            let Some(&t) = self.by_id.get(&mail.client_id) else { continue };
            let Some(Some(slot)) = self.slots.get_mut(t) else { continue };
            if slot.closing {
                continue;
            }
            let shared = &*self.shared;
            let stats = &*shared.thread_stats[self.index];
            let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
            let flow = super::apply_mail(&mut slot.conn, &mail, &mut w);
            if slot.conn.needs_listing() {
                self.held.push(t);
            }
            match flow {
                Flow::CloseNow => self.begin_close(t),
                Flow::CloseAfterWrite => {
                    slot.close_after_send = true;
                    self.dirty.push(t);
                }
                Flow::Continue => self.dirty.push(t),
            }
        }
    }

    /// Shuts the socket down so that operations in flight complete, then closes it
    /// once none remain.
    fn begin_close(&mut self, t: usize) {
        let Some(Some(slot)) = self.slots.get_mut(t) else { return };
        if !slot.closing {
            slot.closing = true;
            // SAFETY: shutdown on a descriptor we own.
            unsafe { libc::shutdown(slot.fd.as_raw_fd(), libc::SHUT_RDWR) };
            // A receive shut down still takes what a client goes on sending (Linux queues
            // it after SHUT_RD), so the multishot receive could run for as long as the
            // client sends: a client closed for its query buffer went on sending for 20 s.
            // Cancelled, it ends now and the close follows.
            if slot.recv_armed && !slot.cancel_inflight {
                self.cancel_recv(t);
            }
        }
        self.maybe_finish_close(t);
    }

    fn maybe_finish_close(&mut self, t: usize) {
        let done = matches!(self.slots.get(t), Some(Some(s)) if s.closing && !s.recv_armed && !s.send_inflight && !s.cancel_inflight);
        if done {
            if let Some(mut slot) = self.slots[t].take() {
                self.by_id.remove(&slot.conn.client.info.id);
                close_client(&self.shared, &mut slot.conn);
                drop(slot); // closes the descriptor
                self.free.push(t);
            }
        }
    }

    /// Stops accepting, sends what is pending (bounded), closes every connection.
    fn shutdown(&mut self) {
        self.listeners.clear();
        self.adopt_arrivals();
        let deadline = Instant::now() + Duration::from_millis(500);
        for t in 0..self.slots.len() {
            let _ = self.start_send(t);
        }
        while Instant::now() < deadline
            && (!self.own_commits.is_empty()
                || self.slots.iter().flatten().any(|s| s.send_inflight || !s.conn.all_written()))
        {
            self.commit_log();
            self.release_held();
            // Bounded: replies held for the append-only log arrive by a wake-up, not by a
            // completion of ours, and the deadline must hold even if none comes.
            let ts = types::Timespec::from(Duration::from_millis(5));
            let _ = self.ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts));
            let done: Vec<(u64, i32, u32)> =
                self.ring.completion().map(|c| (c.user_data(), c.result(), c.flags())).collect();
            for (ud, res, flags) in done {
                match ud & 7 {
                    OP_SEND => self.on_send((ud >> 3) as usize, res),
                    // Re-arms the waker read: the log writer's wake-ups must keep coming.
                    OP_WAKE => self.on_wake(flags),
                    _ => {}
                }
            }
            for t in std::mem::take(&mut self.dirty) {
                let _ = self.start_send(t);
            }
        }
        for mut slot in self.slots.iter_mut().filter_map(Option::take) {
            close_client(&self.shared, &mut slot.conn);
        }
    }
}
