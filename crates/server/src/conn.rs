//! One client connection's buffers and the request cycle, independent of the I/O
//! engine: the engine appends bytes to `rbuf`, calls [`Conn::process`], and writes out
//! what [`Output`] says may leave. Every complete request in the buffer is decoded,
//! executed and answered into the output's tail, so pipelining costs one read and one
//! write per batch.
//!
//! Arguments are slices of the read buffer (no copy, no allocation per command for up
//! to 16 arguments); the buffers are reused for the life of the connection.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use resp::{Limits, RequestParser};

use crate::command::{self, Client, Ctx};
use crate::output::Output;
use crate::output_limit::{self, Class};
use crate::shared::{ClientInfo, Shared, ThreadStats};

/// Arguments held on the stack per command; longer commands collect theirs in a Vec.
const SMALL_ARGC: usize = 16;

/// Read buffer growth step; also the size of each read.
pub const READ_CHUNK: usize = 16 * 1024;

/// Query buffer limit for clients that have not authenticated (Redis: 1 MiB).
const UNAUTHENTICATED_QUERY_LIMIT: u64 = 1024 * 1024;
/// Pending output allowed to a client that has not authenticated.
const UNAUTHENTICATED_OUTPUT_LIMIT: usize = 1024 * 1024;

/// Backpressure on a client that does not read its replies: once this much output is
/// pending (produced and not yet taken by the kernel), no more of its input runs and
/// the engine stops reading from it; it goes on when the pending output is down to
/// `OUTPUT_RESUME_BYTES`. A client that pipelines a million GETs of a large value and
/// never reads so costs at most this plus one reply, not the sum of all its replies
/// (Redis 7.0 keeps executing and dies of it, issue 26). Not a Redis parameter: large
/// enough that a deep pipeline of large values never waits on it in practice
/// (`-P 32` of 100 KB values is 3.2 MB).
const OUTPUT_PAUSE_BYTES: usize = 8 * 1024 * 1024;
const OUTPUT_RESUME_BYTES: usize = 2 * 1024 * 1024;

/// What the engine should do after processing.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep the connection; write what is pending.
    Continue,
    /// Write what is pending, then close.
    CloseAfterWrite,
    /// Close now without writing (security: HTTP-looking requests).
    CloseNow,
}

pub struct Conn {
    pub client: Client,
    pub rbuf: Vec<u8>,
    /// Start of the unconsumed part of `rbuf`.
    rpos: usize,
    parser: RequestParser,
    /// Replies not yet taken by the kernel, and those held for the log.
    pub output: Output,
    /// The owning loop lists this connection among those with holds.
    pub held_listed: bool,
    /// When this client's output went over its soft limit (Unix seconds; 0: not over),
    /// `output_limit`.
    soft_limit_since: i64,
    /// Input execution is paused until the pending output drains
    /// (`OUTPUT_PAUSE_BYTES`); the engine stops reading meanwhile.
    output_paused: bool,
    /// A `tls-port` connection's TLS layer: between the bytes the engine moves and the
    /// requests and replies.
    tls: Option<Box<TlsLayer>>,
}

/// A connection's TLS session and its buffers.
struct TlsLayer {
    session: crate::tls::Session,
    /// Ciphertext made and not yet written, for engines that write from the
    /// connection (epoll); and how much of it is written.
    cipher: Vec<u8>,
    cipher_written: usize,
    /// Replies taken from the output to be encrypted (reused).
    plain: Vec<u8>,
}

/// Per-thread things a request needs besides the connection.
pub struct Worker<'a> {
    pub shared: &'a Shared,
    pub stats: &'a ThreadStats,
    pub rng: &'a mut fastrand::Rng,
    pub now_ms: i64,
}

impl Conn {
    pub fn new(info: Arc<ClientInfo>, shared: &Shared) -> Conn {
        let cfg = shared.config.read();
        let limits = Limits {
            max_bulk_len: cfg.proto_max_bulk_len,
            unauthenticated: cfg.requirepass.is_some(),
            ..Limits::default()
        };
        drop(cfg);
        Conn {
            client: Client::new(info, !shared.auth_required.load(Ordering::Relaxed)),
            rbuf: Vec::with_capacity(READ_CHUNK),
            rpos: 0,
            parser: RequestParser::new(limits),
            output: Output::new(),
            held_listed: false,
            soft_limit_since: 0,
            output_paused: false,
            tls: None,
        }
    }

    /// Makes this a TLS connection (accepted on `tls-port`). A session that cannot be
    /// made leaves the connection to fail at its first input.
    pub fn start_tls(&mut self, config: Arc<rustls::ServerConfig>) {
        match crate::tls::Session::new(config) {
            Ok(session) => {
                self.tls = Some(Box::new(TlsLayer { session, cipher: Vec::new(), cipher_written: 0, plain: Vec::new() }))
            }
            Err(e) => {
                crate::log::warning(&format!("Error creating a TLS session for client id={}: {}", self.client.info.id, e.0));
                self.client.close_after_reply = true;
            }
        }
    }

    /// A TLS connection: the engine hands it what it receives ([`Conn::take_input`]).
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// True while this client's input waits for its pending output to drain: the
    /// engine reads no more from it until [`resume_output`](Self::resume_output) says so.
    pub fn output_paused(&self) -> bool {
        self.output_paused
    }

    /// After output was sent: when the input was paused for it and the pending output
    /// is down to the resume mark, runs the waiting input. None when nothing resumed;
    /// the engine reads again if the result left the input unpaused.
    pub fn resume_output(&mut self, w: &mut Worker<'_>) -> Option<Flow> {
        if !self.output_paused || self.pending_output() > OUTPUT_RESUME_BYTES {
            return None;
        }
        self.output_paused = false;
        Some(self.process(w))
    }

    /// Makes room for the next read and returns how many bytes to read at most; None
    /// when the memory for it cannot be had (logged here: the engine closes the client,
    /// and the server goes on).
    pub fn reserve_for_read(&mut self) -> Option<usize> {
        // A large bulk announced by the client grows the buffer at most 1 MiB ahead of
        // the bytes actually received: memory is never reserved on a client's word.
        let want = self.parser.bytes_hint().unwrap_or(0).clamp(READ_CHUNK, 1024 * 1024);
        if self.rbuf.capacity() - self.rbuf.len() < READ_CHUNK && !self.grow_input(want) {
            return None;
        }
        Some(self.rbuf.capacity() - self.rbuf.len())
    }

    /// Appends received bytes, for engines that receive into buffers of their own; false
    /// when the memory for them cannot be had (logged here: the engine closes the client).
    pub fn take_input(&mut self, bytes: &[u8]) -> bool {
        if self.rbuf.capacity() - self.rbuf.len() < bytes.len() && !self.grow_input(bytes.len()) {
            return false;
        }
        if let Some(t) = self.tls.as_mut() {
            // Decrypted into the read buffer (a record's plaintext is never longer than
            // its ciphertext, so the room reserved above usually suffices; a record
            // completed by these bytes may need more, taken as the buffer grows).
            if let Err(e) = t.session.receive(bytes, &mut self.rbuf) {
                crate::log::verbose(&format!(
                    "Error accepting a client connection: {} (addr={})",
                    e.0, self.client.info.addr
                ));
                // The alert that says why goes out, then the connection closes (as
                // OpenSSL's does; a client that finds the socket shut first may die of
                // SIGPIPE instead of reporting it).
                self.client.close_after_reply = true;
            }
            return true;
        }
        self.rbuf.extend_from_slice(bytes);
        true
    }

    /// Grows the read buffer by at least `more` bytes without aborting when the
    /// allocator refuses (a client can ask for a query buffer of up to
    /// `client-query-buffer-limit`, 1 GB by default): doubling first, then exactly what
    /// is needed, then the client is given up.
    fn grow_input(&mut self, more: usize) -> bool {
        if self.rbuf.try_reserve(more).is_ok() || self.rbuf.try_reserve_exact(more).is_ok() {
            return true;
        }
        crate::log::warning(&format!(
            "Closing client id={} addr={}: no memory for its query buffer ({} bytes held, {more} more asked).",
            self.client.info.id,
            self.client.info.addr,
            self.rbuf.len()
        ));
        false
    }

    /// True when nothing in this connection refers to its event loop, so that it may
    /// move to another (`net/balance.rs`): no unparsed input, not blocked, not
    /// subscribed, monitoring or receiving another client's invalidations (mail finds
    /// those by loop), no replies held for the append-only log
    /// (the log wakes the loop that waits), not closing. Output still being written is
    /// for the engine to let drain.
    pub fn can_move(&self) -> bool {
        let c = &self.client;
        self.rpos >= self.rbuf.len()
            && !self.output_paused
            && !self.output.has_holds()
            && !self.held_listed
            && !c.blocked
            && !c.paused_for_log
            && !c.close_after_reply
            && c.subs.count() == 0
            && !c.monitor
            && !c.replica
            && c.tracking.is_none()
            && c.info.redirect_sources.load(Ordering::Relaxed) == 0
            && !c.info.killed.load(Ordering::SeqCst)
    }

    /// Bytes of input not yet consumed.
    pub fn pending_input(&self) -> usize {
        self.rbuf.len() - self.rpos
    }

    /// True while output may be written now.
    pub fn has_output(&self) -> bool {
        self.output.has_sendable()
            || self.tls.as_ref().is_some_and(|t| t.cipher_written < t.cipher.len() || t.session.wants_write())
    }

    /// True once every byte of output, held or not, has been written.
    pub fn all_written(&self) -> bool {
        self.output.all_written()
            && self.tls.as_ref().is_none_or(|t| t.cipher_written >= t.cipher.len() && !t.session.wants_write())
    }

    /// The bytes to write now, for engines that write from the connection (epoll);
    /// [`Conn::advance_output`] says how many were written. For TLS, the replies that
    /// may leave are encrypted first.
    pub fn sendable_bytes(&mut self) -> &[u8] {
        let Conn { output, tls, client, .. } = self;
        let Some(t) = tls.as_mut() else { return output.sendable() };
        if t.cipher_written >= t.cipher.len() {
            t.cipher.clear();
            t.cipher_written = 0;
            t.plain.clear();
            if output.has_sendable() {
                output.take_sendable(&mut t.plain);
            }
            if let Err(e) = t.session.send(&t.plain, &mut t.cipher) {
                crate::log::verbose(&format!("TLS error writing to client id={}: {}", client.info.id, e.0));
                client.close_after_reply = true;
            }
            output.set_in_flight(t.cipher.len());
        }
        &t.cipher[t.cipher_written..]
    }

    /// Notes that the owning loop must watch this connection's holds; true the first
    /// time (the caller adds it to its list).
    pub fn needs_listing(&mut self) -> bool {
        if !self.output.has_holds() || self.held_listed {
            return false;
        }
        self.held_listed = true;
        true
    }

    /// Hands the output that may leave to the engine in exchange for `spare` (an empty
    /// buffer), for engines that keep a buffer stable while the kernel sends it.
    pub fn swap_output(&mut self, spare: &mut Vec<u8>) {
        let Conn { output, tls, client, .. } = self;
        let Some(t) = tls.as_mut() else {
            output.take_sendable(spare);
            return;
        };
        t.plain.clear();
        if output.has_sendable() {
            output.take_sendable(&mut t.plain);
        }
        if let Err(e) = t.session.send(&t.plain, spare) {
            crate::log::verbose(&format!("TLS error writing to client id={}: {}", client.info.id, e.0));
            client.close_after_reply = true;
        }
    }

    /// Tells how many bytes the engine has taken from the output and not sent yet.
    pub fn set_in_flight(&mut self, bytes: usize) {
        self.output.set_in_flight(bytes);
    }

    /// Bytes of output produced and not yet handed to the kernel, held replies included.
    pub fn pending_output(&self) -> usize {
        self.output.pending()
    }

    /// Publishes the pending output for CLIENT LIST (`obl`, `oll`, `omem`); the engines
    /// call it when a send completes, the request cycle and mail when output is added.
    pub fn publish_output_size(&self) {
        self.client.info.obuf.store(self.pending_output(), Ordering::Relaxed);
    }

    /// True when this client's pending output is over its class's
    /// `client-output-buffer-limit` and it must be disconnected (logged here).
    pub fn over_output_limit(&mut self, limits: &output_limit::Snapshot, now_ms: i64) -> bool {
        let pending = self.pending_output();
        over_output_limit(limits, &self.client, pending, &mut self.soft_limit_since, now_ms)
    }

    /// True when this client has been over its soft output limit for longer than the
    /// limit's seconds (the loop's tick asks: Redis's timer disconnects such a client
    /// even when nothing more is added to its output). Logged here.
    pub fn soft_output_limit_overdue(&self, limits: &output_limit::Snapshot, now_ms: i64) -> bool {
        let class = Class::of_client(self.client.replica, self.client.subs.count());
        if self.soft_limit_since == 0
            || !limits.soft_overdue(class, self.pending_output(), self.soft_limit_since, now_ms.div_euclid(1000))
        {
            return false;
        }
        log_cut_off(&self.client, class, self.pending_output());
        true
    }

    /// Marks `n` bytes of [`Output::sendable`] written.
    pub fn advance_output(&mut self, n: usize) {
        match self.tls.as_mut() {
            None => self.output.advance(n),
            Some(t) => {
                t.cipher_written += n;
                self.output.set_in_flight(t.cipher.len() - t.cipher_written);
            }
        }
    }

    /// Decodes and executes every complete request in the read buffer.
    pub fn process(&mut self, w: &mut Worker<'_>) -> Flow {
        let auth_required = w.shared.auth_required.load(Ordering::Relaxed);
        let query_limit = w.shared.query_buffer_limit.load(Ordering::Relaxed);
        let batch_start = self.output.end_at();
        // One load per batch while no limit is set (the default `normal` class has none).
        let out_limits = w.shared.output_limits.any().then(|| w.shared.output_limits.snapshot());
        // Set when the client went over its output limit: nothing more of its input
        // runs and the connection closes without writing (`output_limit`).
        let mut cut_off = false;
        let Conn { client, rbuf, rpos, parser, output, soft_limit_since, output_paused, .. } = self;
        let client_owner = client.info.owner.load(Ordering::Relaxed).min(w.shared.gates.len() - 1);
        let commands = command::registry::table();
        let shared: &Shared = w.shared;
        // This loop's gate, held while the batch runs (see below).
        let mut gate: Option<parking_lot::RwLockReadGuard<'_, ()>> = None;
        // Consecutive commands of this batch on one shard take its lock once (see
        // store's `shard_lock.rs`); `command::execute` releases it before any command
        // that is not a plain data command, and it is released before any gate is
        // taken or given back, since a gate's writer locks shards.
        let mut coalescing = Some(shared.keyspace.coalescing());
        loop {
            if client.close_after_reply || client.blocked || *output_paused {
                break;
            }
            if output.pending() > OUTPUT_PAUSE_BYTES && *rpos < rbuf.len() {
                *output_paused = true;
                break;
            }
            // Backpressure from a slow disk: a client whose replies already wait for the
            // log gets no more of its input executed while the log's unwritten tail is
            // over its limit; the loop resumes it when its replies leave.
            // (Only with holds from earlier batches: the loop lists such a connection and
            // so is sure to come back to it.)
            if output.has_holds() && shared.aof.as_ref().is_some_and(|a| a.tail_over_limit()) {
                client.paused_for_log = true;
                break;
            }
            parser.limits_mut().unauthenticated = auth_required && !client.authenticated;
            let input = &rbuf[*rpos..];
            match parser.parse(input) {
                Ok(Some(n)) => {
                    let argc = parser.argc();
                    if argc > 0 {
                        // Up to 16 arguments in an array on the stack (a SmallVec here
                        // cost a 264-byte copy per command); more go to a Vec.
                        let mut few: [&[u8]; SMALL_ARGC] = [&[]; SMALL_ARGC];
                        let many: Vec<&[u8]>;
                        let args: &[&[u8]] = if argc <= SMALL_ARGC {
                            for (i, slot) in few[..argc].iter_mut().enumerate() {
                                *slot = parser.arg(input, i);
                            }
                            &few[..argc]
                        } else {
                            many = parser.args(input).collect();
                            &many
                        };
                        // The name is looked up once, here, for the gate and for execute.
                        let found = commands.lookup_client(args[0]);
                        // Redis drops connections that look like HTTP (cross-protocol
                        // scripting): "POST" or "Host:" as a command name.
                        if found.is_none()
                            && (args[0].eq_ignore_ascii_case(b"post") || args[0].eq_ignore_ascii_case(b"host:"))
                        {
                            crate::log::warning("Possible SECURITY ATTACK detected. It looks like somebody is sending POST or Host: commands to Redis. This is likely due to an attacker attempting to use Cross Protocol Scripting to compromise your Redis instance. Connection aborted.");
                            return Flow::CloseNow;
                        }
                        let mut ctx = Ctx {
                            shared: w.shared,
                            table: commands,
                            client,
                            out: &mut output.tail,
                            now_ms: w.now_ms,
                            stats: w.stats,
                            rng: &mut *w.rng,
                            // (Looked at only while replicas are fed: see `propagate::call`.)
                            request: (shared.repl.feeding() && parser.is_canonical(input)).then(|| &input[..n]),
                        };
                        // Every command runs under this loop's gate, taken once per
                        // batch, but those that take all gates themselves (EXEC, SAVE,
                        // SHUTDOWN, DEBUG LOADAOF/RELOAD): ours is released first (see
                        // command::transactions).
                        let reply_at = ctx.out.len();
                        if found.is_some_and(|i| commands.entries[i].all_gates) {
                            store::release_kept();
                            gate = None;
                        } else if gate.is_none() {
                            store::release_kept();
                            gate = Some(shared.gates[client_owner].read());
                            // A final save (SHUTDOWN SAVE) ran while this loop waited
                            // for its gate: nothing more runs, so that no reply
                            // acknowledges a write it does not hold (`shutdown::exit`).
                            if shared.shutdown.load(Ordering::Acquire) {
                                break;
                            }
                        }
                        command::dispatch::execute_found(&mut ctx, found, args);
                        if client.postponed {
                            // CLIENT PAUSE: this command runs again when the pause ends.
                            break;
                        }
                        // CLIENT REPLY OFF / SKIP (a blocked command's later reply is
                        // dropped on arrival, `net::apply_mail`).
                        if client.reply_mode != command::ReplyMode::On {
                            let pushed = std::mem::take(&mut client.reply_is_push);
                            if client.reply_mode.drops() && !pushed {
                                output.tail.truncate(reply_at);
                            }
                            if !client.blocked {
                                client.reply_mode = client.reply_mode.after_command();
                            }
                        }
                    }
                    output.seal_if_full();
                    *rpos += n;
                    if out_limits.as_ref().is_some_and(|l| {
                        l.may_limit(client.subs.count())
                            && over_output_limit(l, client, output.pending(), soft_limit_since, w.now_ms)
                    }) {
                        cut_off = true;
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let text = format!("ERR Protocol error: {e}");
                    w.stats.count_error(&text);
                    command::write_error(&mut output.tail, &text);
                    crate::log::verbose(&format!(
                        "Protocol error ({e}) from client: id={} addr={}",
                        client.info.id, client.info.addr
                    ));
                    client.close_after_reply = true;
                    break;
                }
            }
        }
        coalescing.take();
        // The batch's records go to the replication stream before the gate does (a
        // snapshot or EXEC that takes every gate finds every loop's part published).
        shared.repl.publish_mine();
        drop(gate);
        if client.need > 0 {
            // These replies reveal writes: they leave once the log has them on disk.
            if let Some(aof) = shared.aof.as_ref() {
                if client.need > aof.reached() {
                    output.hold(batch_start, client.need);
                }
            }
            client.need = 0;
        }
        // Compact: drop consumed bytes so a partial request starts at 0.
        if *rpos == rbuf.len() {
            rbuf.clear();
            *rpos = 0;
            if rbuf.capacity() > 4 * 1024 * 1024 {
                rbuf.shrink_to(READ_CHUNK);
            }
        } else if *rpos > 0 {
            rbuf.drain(..*rpos);
            *rpos = 0;
        }
        // A request still being received counts its complete arguments apart, as Redis
        // moves them out of its query buffer.
        let (consumed, argv_mem) = parser.progress();
        client.info.qbuf.store(rbuf.len() - consumed.min(rbuf.len()), Ordering::Relaxed);
        client.info.argv_mem.store(argv_mem, Ordering::Relaxed);
        client.info.obuf.store(output.pending(), Ordering::Relaxed);
        if cut_off {
            return Flow::CloseNow;
        }
        let unauthenticated = auth_required && !client.authenticated;
        if unauthenticated && output.pending() > UNAUTHENTICATED_OUTPUT_LIMIT {
            // A client that cannot log in may only earn error replies; one that piles
            // them up without reading is cut off (the lesson of CVE-2025-21605).
            crate::log::warning(&format!(
                "Closing unauthenticated client over the output limit: id={} addr={}",
                client.info.id, client.info.addr
            ));
            return Flow::CloseNow;
        }
        let query_limit = if unauthenticated { query_limit.min(UNAUTHENTICATED_QUERY_LIMIT) } else { query_limit };
        if rbuf.len() as u64 > query_limit {
            crate::log::warning(&format!(
                "Closing client that reached max query buffer length: id={} addr={} (qbuf initial bytes: {:?})",
                client.info.id,
                client.info.addr,
                String::from_utf8_lossy(&rbuf[..rbuf.len().min(64)])
            ));
            return Flow::CloseNow;
        }
        if client.close_after_reply {
            Flow::CloseAfterWrite
        } else {
            Flow::Continue
        }
    }
}

/// `Conn::over_output_limit` for callers that hold the connection's fields apart.
fn over_output_limit(limits: &output_limit::Snapshot, client: &Client, pending: usize, soft_since: &mut i64, now_ms: i64) -> bool {
    let class = Class::of_client(client.replica, client.subs.count());
    if !limits.limits(class) || !limits.over(class, pending, soft_since, now_ms.div_euclid(1000)) {
        return false;
    }
    log_cut_off(client, class, pending);
    true
}

fn log_cut_off(client: &Client, class: Class, pending: usize) {
    crate::log::warning(&format!(
        "Client id={} addr={} closed for overcoming of output buffer limits ({}: {pending} bytes pending).",
        client.info.id,
        client.info.addr,
        class.name()
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::testing::Harness;

    /// A new connection of the harness's server given `request` `times` over in one
    /// batch: the connection and what processing it said.
    fn pipeline(h: &Harness, request: &[u8], times: usize) -> (Conn, Flow) {
        let shared = h.shared.clone();
        let mut conn = Conn::new(h.client.info.clone(), &shared);
        let mut rng = fastrand::Rng::with_seed(1);
        let stats = shared.thread_stats[0].clone();
        let mut w = Worker { shared: &shared, stats: &stats, rng: &mut rng, now_ms: 0 };
        for _ in 0..times {
            conn.rbuf.extend_from_slice(request);
        }
        let flow = conn.process(&mut w);
        (conn, flow)
    }

    #[test]
    fn unauthenticated_client_piling_up_errors_is_cut_off() {
        let mut h = Harness::new();
        assert_eq!(h.text("CONFIG SET requirepass secret"), "OK");
        // 40,000 pipelined PINGs answered with NOAUTH: about 1.4 MB of errors.
        let (conn, flow) = pipeline(&h, b"*1\r\n$4\r\nPING\r\n", 40_000);
        assert!(!conn.client.authenticated);
        assert_eq!(flow, Flow::CloseNow);
    }

    #[test]
    fn a_client_over_its_output_limit_runs_no_more_of_its_pipeline() {
        let mut h = Harness::new();
        let set_limits = |h: &mut Harness, v: &str| {
            let reply = h.run_args(&[b"CONFIG", b"SET", b"client-output-buffer-limit", v.as_bytes()]);
            assert_eq!(crate::command::testing::render(&reply), "OK");
        };
        set_limits(&mut h, "normal 1000 0 0");
        let (_, flow) = pipeline(&h, b"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n", 1000);
        assert_eq!(flow, Flow::CloseNow);
        // Replies of 4 to 6 bytes: the 1000-byte limit is passed after about 200 INCRs.
        let ran: usize = h.text("GET n").parse().unwrap();
        assert!((150..300).contains(&ran), "{ran} INCRs ran");
        // Bytes in flight count as well.
        set_limits(&mut h, "normal 0 50 0");
        let mut conn = Conn::new(h.client.info.clone(), &h.shared);
        conn.set_in_flight(100);
        let limits = h.shared.output_limits.snapshot();
        assert!(!conn.over_output_limit(&limits, 5_000), "the soft limit's first sight");
        assert!(!conn.over_output_limit(&limits, 5_999));
        assert!(conn.over_output_limit(&limits, 6_000));
    }

    #[test]
    fn a_deep_pipeline_of_large_replies_is_kept_in_chunks() {
        let mut h = Harness::new();
        let value = vec![b'v'; 100_000];
        h.run_args(&[b"SET", b"big", &value]);
        // 60 GETs of 100 KB: 6 MB of replies, under the backpressure mark.
        let (conn, flow) = pipeline(&h, b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n", 60);
        assert_eq!(flow, Flow::Continue);
        assert_eq!(conn.pending_output(), 60 * (100_000 + 11));
        let chunks = conn.output.chunk_lens();
        assert!(chunks.len() >= 5, "{chunks:?}");
        let most = crate::output::CHUNK_BYTES + 100_011;
        assert!(chunks.iter().all(|&c| c <= most), "no chunk past one chunk and one reply: {chunks:?}");
    }

    #[test]
    fn authenticated_client_may_pipeline_as_much() {
        let h = Harness::new();
        let (conn, flow) = pipeline(&h, b"*1\r\n$4\r\nPING\r\n", 40_000);
        assert_eq!(flow, Flow::Continue);
        assert_eq!(conn.pending_output(), 40_000 * 7);
    }
}
