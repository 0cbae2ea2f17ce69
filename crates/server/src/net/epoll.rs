//! The epoll engine (through mio, edge-triggered): one event loop per thread, owning its
//! listening sockets (SO_REUSEPORT, so the kernel spreads connections) and its
//! connections until `balance.rs` moves one to another loop. Each wake-up reads every
//! ready socket until a short read or `WouldBlock`, processes all complete requests,
//! and writes the batched replies with one write. The loop also runs the periodic tick
//! (active expiry, idle timeouts) and cross-thread requests (CLIENT KILL, shutdown).

use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};

use crate::conn::{Conn, Flow, Worker};
use super::{admit, close_client, open_client, tick, tick_period, tune_socket, Admission};
use crate::waker::LoopWaker;
use crate::shared::{bump, Shared};

const WAKER: Token = Token(usize::MAX - 1);
const LISTENER_BASE: usize = usize::MAX - 1024;

/// Everything one event loop owns.
pub struct EventLoop {
    index: usize,
    shared: Arc<Shared>,
    /// Connections handed to this loop by others (`balance.rs`).
    arrivals: Arc<super::balance::Arrivals>,
    poll: Poll,
    listeners: Vec<TcpListener>,
    conns: Vec<Option<Slot>>,
    free: Vec<usize>,
    /// Client id -> slot, for messages posted to this loop.
    by_id: hashbrown::HashMap<u64, usize>,
    /// Slots whose replies wait for the append-only log (see `aof`).
    held: Vec<usize>,
    /// Slots paused for their output that wrote some of it (`resume_output`).
    resume: Vec<usize>,
    rng: fastrand::Rng,
    /// This loop's part of a running capture's walk (`walk.rs`), and what it left.
    walk: crate::walk::LoopWalk,
    walk_progress: crate::walk::Progress,
    /// This loop's side of connection balancing.
    balancer: super::balance::Balancer,
}

struct Slot {
    stream: TcpStream,
    conn: Conn,
}

impl EventLoop {
    /// Sets up a loop with its listeners and registers its waker in `shared`.
    pub fn new(
        index: usize,
        shared: Arc<Shared>,
        arrivals: Arc<super::balance::Arrivals>,
        listeners: Vec<std::net::TcpListener>,
    ) -> std::io::Result<(EventLoop, Arc<LoopWaker>)> {
        let poll = Poll::new()?;
        let waker = Arc::new(LoopWaker::Mio(Waker::new(poll.registry(), WAKER)?));
        let mut mio_listeners = Vec::new();
        for (i, l) in listeners.into_iter().enumerate() {
            let mut l = TcpListener::from_std(l);
            poll.registry().register(&mut l, Token(LISTENER_BASE + i), Interest::READABLE)?;
            mio_listeners.push(l);
        }
        Ok((
            EventLoop {
                index,
                shared,
                arrivals,
                poll,
                listeners: mio_listeners,
                conns: Vec::new(),
                free: Vec::new(),
                by_id: hashbrown::HashMap::new(),
                held: Vec::new(),
                resume: Vec::new(),
                rng: fastrand::Rng::new(),
                walk: Default::default(),
                walk_progress: crate::walk::Progress::Idle,
                balancer: super::balance::Balancer::new(index),
            },
            waker,
        ))
    }

    /// Runs until shutdown is requested.
    pub fn run(mut self) {
        crate::replication::stream::this_thread_runs_loop(self.index);
        let mut events = Events::with_capacity(1024);
        let mut next_cron = Instant::now();
        loop {
            let period = tick_period(&self.shared);
            let timeout = next_cron.saturating_duration_since(Instant::now());
            let timeout = crate::walk::wait(self.walk_progress, timeout, false);
            // Paused input whose output drained: do not sleep before running it.
            let timeout = if self.resume.is_empty() { timeout } else { Duration::ZERO };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != ErrorKind::Interrupted {
                    crate::log::warning(&format!("event loop {}: poll failed: {e}", self.index));
                }
            }
            let woke = Instant::now();
            let now_ms = self.shared.keyspace.now_ms();
            for ev in events.iter() {
                match ev.token() {
                    WAKER => self.handle_wake(),
                    Token(t) if t >= LISTENER_BASE => self.accept(t - LISTENER_BASE, now_ms),
                    Token(t) => {
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.on_readable(t, now_ms);
                        }
                        if ev.is_writable() {
                            self.on_writable(t);
                        }
                    }
                }
            }
            self.release_held();
            crate::replication::master::flush_here(&self.shared, self.index);
            crate::replication::failover::after_acks(&self.shared);
            // Mail for this loop's replicas (left by the flush without a wake-up).
            self.drain_mail();
            self.resume_output(now_ms);
            if self.walk_progress != crate::walk::Progress::Idle || self.shared.walk.running() {
                let served = if events.is_empty() { Duration::ZERO } else { woke.elapsed() };
                self.walk_progress = crate::walk::step(&self.shared.walk, &self.shared.keyspace, self.shared.gate(self.index), self.index, &mut self.walk, served);
            }
            if self.shared.shutdown.load(Ordering::SeqCst) {
                break;
            }
            if Instant::now() >= next_cron {
                self.cron(now_ms);
                next_cron = Instant::now() + period;
            }
        }
        self.shutdown();
    }

    fn accept(&mut self, which: usize, now_ms: i64) {
        loop {
            let (mut stream, peer) = match self.listeners[which].accept() {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    crate::log::warning(&format!("Accepting client connection: {e}"));
                    return;
                }
            };
            let keepalive_s = match admit(&self.shared, self.index, Some(peer.ip())) {
                Admission::Accept { keepalive_s } => keepalive_s,
                Admission::Reject(msg) => {
                    let _ = stream.write(msg);
                    continue;
                }
            };
            use std::os::fd::{AsFd, AsRawFd};
            tune_socket(stream.as_fd(), keepalive_s);
            let laddr = stream
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            let fd = stream.as_raw_fd();
            let home = self.shared.loops.place(self.index);
            let conn = open_client(&self.shared, home, fd, peer.to_string(), laddr, now_ms);
            if home != self.index {
                self.arrivals.hand_over(&self.shared, self.index, home, into_fd(stream), conn);
                continue;
            }
            self.install(stream, conn, now_ms);
        }
    }

    /// Registers a connection and serves what it has already sent.
    fn install(&mut self, mut stream: TcpStream, mut conn: Conn, now_ms: i64) {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.conns.push(None);
                self.conns.len() - 1
            }
        };
        if let Err(e) = self.poll.registry().register(
            &mut stream,
            Token(slot),
            Interest::READABLE | Interest::WRITABLE,
        ) {
            crate::log::warning(&format!("Registering client connection: {e}"));
            self.free.push(slot);
            close_client(&self.shared, &mut conn);
            return;
        }
        self.by_id.insert(conn.client.info.id, slot);
        self.conns[slot] = Some(Slot { stream, conn });
        // Data may already be waiting (edge-triggered: no event would tell us).
        self.on_readable(slot, now_ms);
    }

    /// Takes in the connections other loops handed to this one.
    fn adopt_arrivals(&mut self) {
        let now_ms = self.shared.keyspace.now_ms();
        for a in self.arrivals.take(self.index) {
            let stream = TcpStream::from_std(std::net::TcpStream::from(a.fd));
            self.install(stream, a.conn, now_ms);
        }
    }

    /// On the tick: measures this loop's load and moves connections to another loop
    /// when the policy says so (`balance::decide`). Readiness needs no cancel here: a
    /// connection with nothing unread in its buffer and nothing left to write is
    /// deregistered and handed over at once; what the client sends meanwhile waits in
    /// the socket for the new loop.
    fn balance(&mut self) {
        let movable = |s: &Option<Slot>| {
            s.as_ref()
                .is_some_and(|s| s.conn.can_move() && s.conn.all_written())
        };
        let candidates: Vec<(usize, u64)> = (0..self.conns.len())
            .filter(|&t| movable(&self.conns[t]))
            .filter_map(|t| Some((t, self.conns[t].as_ref()?.conn.client.info.id)))
            .collect();
        let moves = super::balance::plan_moves(&self.shared, &mut self.balancer, self.by_id.len(), candidates);
        for (t, to) in moves {
            let Some(mut slot) = self.conns.get_mut(t).and_then(Option::take) else {
                continue;
            };
            let _ = self.poll.registry().deregister(&mut slot.stream);
            self.by_id.remove(&slot.conn.client.info.id);
            self.free.push(t);
            self.arrivals.hand_over(
                &self.shared,
                self.index,
                to,
                into_fd(slot.stream),
                slot.conn,
            );
        }
    }

    fn on_readable(&mut self, t: usize, now_ms: i64) {
        let Some(Some(slot)) = self.conns.get_mut(t) else { return };
        if slot.conn.output_paused() {
            // Backpressure (`Conn::output_paused`): the input waits in the socket until
            // the output drains; `resume_output` reads it then.
            return;
        }
        let shared = &*self.shared;
        let stats = &*shared.thread_stats[self.index];
        let mut closed = false;
        let mut flow = Flow::Continue;
        let mut read_total = 0u64;
        loop {
            let Some(room) = slot.conn.reserve_for_read() else {
                closed = true;
                break;
            };
            // TLS reads at most a buffer's worth of records at a time (the short-read
            // test below must compare with what was asked).
            const TLS_READ: usize = 16 * 1024;
            let tls = slot.conn.is_tls();
            let room = if tls { room.min(TLS_READ) } else { room };
            let n = if tls {
                // TLS: read the records aside, the session decrypts them into the
                // read buffer.
                let mut cipher = [0u8; TLS_READ];
                match slot.stream.read(&mut cipher[..room]) {
                    Ok(n) if n > 0 && !slot.conn.take_input(&cipher[..n]) => {
                        closed = true;
                        break;
                    }
                    other => other,
                }
            } else {
                let buf = &mut slot.conn.rbuf;
                let len = buf.len();
                // SAFETY: the spare capacity is written by read() before set_len exposes
                // it; read() reports exactly how many bytes it wrote.
                unsafe {
                    let spare = std::slice::from_raw_parts_mut(buf.as_mut_ptr().add(len), room);
                    match slot.stream.read(spare) {
                        Ok(n) => {
                            buf.set_len(len + n);
                            Ok(n)
                        }
                        Err(e) => Err(e),
                    }
                }
            };
            match n {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    read_total += n as u64;
                    let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
                    flow = slot.conn.process(&mut w);
                    if flow != Flow::Continue || slot.conn.output_paused() {
                        break;
                    }
                    // A client that sends faster than we answer: keep going only while
                    // we can also write; the loop ends at WouldBlock.
                    if n < room {
                        // Short read: the socket is most likely drained; one more read
                        // would return WouldBlock, so skip it (saves a syscall).
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        bump(&stats.net_input_bytes, read_total);
        if slot.conn.needs_listing() {
            self.held.push(t);
        }
        if flow == Flow::CloseNow || closed {
            self.close(t);
            return;
        }
        self.flush(t);
        if flow == Flow::CloseAfterWrite {
            self.close_when_flushed(t);
        }
    }

    fn on_writable(&mut self, t: usize) {
        let closing = matches!(self.conns.get(t), Some(Some(s)) if s.conn.client.close_after_reply);
        self.flush(t);
        if closing {
            self.close_when_flushed(t);
        }
    }

    /// Runs the input of connections paused for their output (`Conn::output_paused`)
    /// whose output has drained, then reads what waited in their sockets. A few rounds
    /// per loop iteration; what is left stays listed (the poll then does not sleep).
    fn resume_output(&mut self, now_ms: i64) {
        for _ in 0..4 {
            if self.resume.is_empty() {
                return;
            }
            for t in std::mem::take(&mut self.resume) {
                let Some(Some(slot)) = self.conns.get_mut(t) else { continue };
                let shared = &*self.shared;
                let stats = &*shared.thread_stats[self.index];
                let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
                let Some(flow) = slot.conn.resume_output(&mut w) else { continue };
                let paused = slot.conn.output_paused();
                if slot.conn.needs_listing() {
                    self.held.push(t);
                }
                match flow {
                    Flow::CloseNow => {
                        self.close(t);
                        continue;
                    }
                    Flow::CloseAfterWrite => {
                        self.flush(t);
                        self.close_when_flushed(t);
                        continue;
                    }
                    Flow::Continue => {}
                }
                if paused {
                    // Paused again: what the socket takes now, the rest on writable.
                    self.flush(t);
                } else {
                    // The edge that announced the waiting input is gone: read it now.
                    self.on_readable(t, now_ms);
                }
            }
        }
    }

    /// Writes as much pending output as the socket takes.
    fn flush(&mut self, t: usize) {
        let Some(Some(slot)) = self.conns.get_mut(t) else { return };
        let stats = &self.shared.thread_stats[self.index];
        let mut written = 0u64;
        let mut failed = false;
        while slot.conn.has_output() {
            let bytes = slot.conn.sendable_bytes();
            if bytes.is_empty() {
                break;
            }
            match slot.stream.write(bytes) {
                Ok(0) => {
                    failed = true;
                    break;
                }
                Ok(n) => {
                    written += n as u64;
                    slot.conn.advance_output(n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        bump(&stats.net_output_bytes, written);
        if written > 0 {
            slot.conn.publish_output_size();
            if slot.conn.output_paused() {
                // Perhaps drained enough to go on: the loop's iteration looks.
                self.resume.push(t);
            }
        }
        if failed {
            self.close(t);
        }
    }

    fn close_when_flushed(&mut self, t: usize) {
        if let Some(Some(slot)) = self.conns.get(t) {
            if slot.conn.all_written() {
                self.close(t);
            }
        }
    }

    fn close(&mut self, t: usize) {
        if let Some(mut slot) = self.conns.get_mut(t).and_then(Option::take) {
            let _ = self.poll.registry().deregister(&mut slot.stream);
            self.by_id.remove(&slot.conn.client.info.id);
            close_client(&self.shared, &mut slot.conn);
            self.free.push(t);
        }
    }

    /// Cross-thread wake-up: CLIENT KILL or shutdown.
    fn handle_wake(&mut self) {
        // Arrivals first, so that a kill of a connection in transit is seen below.
        self.adopt_arrivals();
        let live = self.conns.iter().enumerate().filter_map(|(i, s)| Some((i, &s.as_ref()?.conn)));
        let killed = super::killed(live);
        for t in killed {
            self.close(t);
        }
        self.drain_mail();
    }

    /// Applies the mail posted to this loop (pub/sub messages, blocked clients' replies).
    /// Called on wake-up and on every tick, so mail never waits on a wake-up alone.
    fn drain_mail(&mut self) {
        let now_ms = self.shared.keyspace.now_ms();
        for mail in super::take_mail(&self.shared, self.index) {
            let Some(&t) = self.by_id.get(&mail.client_id) else { continue };
            let Some(Some(slot)) = self.conns.get_mut(t) else { continue };
            let shared = &*self.shared;
            let stats = &*shared.thread_stats[self.index];
            let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
            let flow = super::apply_mail(&mut slot.conn, &mail, &mut w);
            if slot.conn.needs_listing() {
                self.held.push(t);
            }
            match flow {
                Flow::CloseNow => self.close(t),
                Flow::CloseAfterWrite => {
                    self.flush(t);
                    self.close_when_flushed(t);
                }
                Flow::Continue => self.flush(t),
            }
        }
    }

    /// Writes what the append-only log now allows of the held connections' replies.
    fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let released = super::release_held(&self.shared, self.index, &mut self.held, &mut self.conns, |s| &mut s.conn);
        let now_ms = self.shared.keyspace.now_ms();
        for t in released {
            if let Some(Some(slot)) = self.conns.get_mut(t) {
                let shared = &*self.shared;
                let stats = &*shared.thread_stats[self.index];
                let mut w = Worker { shared, stats, rng: &mut self.rng, now_ms };
                let flow = super::resume_paused(&mut slot.conn, &mut w);
                if slot.conn.needs_listing() {
                    self.held.push(t);
                }
                if flow == Some(Flow::CloseNow) {
                    self.close(t);
                    continue;
                }
            }
            let closing = matches!(self.conns.get(t), Some(Some(s)) if s.conn.client.close_after_reply);
            self.flush(t);
            if closing {
                self.close_when_flushed(t);
            }
        }
    }

    /// Periodic work: active expiry of this loop's shards, idle client timeout.
    fn cron(&mut self, now_ms: i64) {
        self.drain_mail();
        let live = self.conns.iter().enumerate().filter_map(|(i, s)| Some((i, &s.as_ref()?.conn)));
        let idle = tick(&self.shared, self.index, now_ms, live);
        for t in idle {
            self.close(t);
        }
        self.adopt_arrivals();
        self.balance();
    }

    /// Stops accepting, sends replies still pending (bounded), and closes everything.
    fn shutdown(&mut self) {
        for l in &mut self.listeners {
            let _ = self.poll.registry().deregister(l);
        }
        self.listeners.clear();
        self.adopt_arrivals();
        let deadline = Instant::now() + Duration::from_millis(500);
        for t in 0..self.conns.len() {
            while Instant::now() < deadline {
                let pending = matches!(self.conns.get(t), Some(Some(s)) if !s.conn.all_written());
                if !pending {
                    break;
                }
                self.release_held();
                self.flush(t);
                std::thread::sleep(Duration::from_millis(1));
            }
            self.close(t);
        }
    }
}

/// The descriptor of a mio stream, to hand to another loop.
fn into_fd(stream: TcpStream) -> std::os::fd::OwnedFd {
    use std::os::fd::{FromRawFd, IntoRawFd};
    // SAFETY: into_raw_fd gives up ownership of a valid descriptor, which we take.
    unsafe { std::os::fd::OwnedFd::from_raw_fd(stream.into_raw_fd()) }
}
