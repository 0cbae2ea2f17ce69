//! The io_uring engine of the load loops (`--io-engine uring`), built like the server's:
//! one ring per load thread, created on that thread with `SINGLE_ISSUER` and
//! `DEFER_TASKRUN` where the kernel has them; one multishot receive per connection into a
//! provided-buffer ring (`bufring`; bytes are copied into the connection's read buffer and
//! the buffer given back); at most one send in flight per connection, from its request
//! buffer; one `io_uring_enter` per iteration submits what was queued and waits for
//! completions or the next deadline (open-loop send time, end of `--test-time`, 100 ms).
//!
//! A request buffer is refilled only when no send is in flight (`pump` sends only once
//! `out_pos` reached `out_len`, which happens when the send completes), and the
//! connections outlive the ring.

use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

use bufring::BufRing;
use io_uring::{cqueue, opcode, types, IoUring};

use super::{after_events, compact_input, consume_replies, io_err, pump, start_schedule, wait_bounds, Conn, DriverError, Progress, RunSpec, Shared};
use crate::stats::RunStats;

const OP_RECV: u64 = 0;
const OP_SEND: u64 = 1;
const BUF_GROUP: u16 = 0;
/// Provided receive buffers per load thread and their size.
const BUF_COUNT: u16 = 256;
const BUF_SIZE: usize = 16 * 1024;

/// Whether this kernel gives us a ring with a provided-buffer ring (for `auto`).
pub fn available() -> bool {
    Engine::new(2).is_ok()
}

/// The ring and its receive buffers. Field order matters: the ring drops (unregistering
/// the buffers) before `bufs` unmaps them.
struct Engine {
    ring: IoUring,
    bufs: BufRing,
}

impl Engine {
    fn new(conns: usize) -> io::Result<Engine> {
        // Two operations per connection at most, plus slack; completions queue twice that.
        let entries = (2 * conns + 8).next_power_of_two().min(32_768) as u32;
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))?;
        let bufs = BufRing::new(&ring, BUF_GROUP, BUF_COUNT, BUF_SIZE)?;
        Ok(Engine { ring, bufs })
    }

    /// Queues one operation; when the submission queue is full, submits first.
    fn push(&mut self, sqe: io_uring::squeue::Entry) -> io::Result<()> {
        // SAFETY: a send points into a connection's request buffer, which is neither
        // refilled nor freed while it is in flight (module header); receives use the
        // registered buffers.
        while unsafe { self.ring.submission().push(&sqe) }.is_err() {
            self.ring.submit()?;
        }
        Ok(())
    }

    fn recv(&mut self, i: usize, fd: RawFd) -> io::Result<()> {
        let sqe = opcode::RecvMulti::new(types::Fd(fd), BUF_GROUP).build().user_data(((i as u64) << 1) | OP_RECV);
        self.push(sqe)
    }

    fn send(&mut self, i: usize, fd: RawFd, c: &mut Conn) -> io::Result<()> {
        let out = &c.out[c.out_pos..c.out_len];
        let sqe = opcode::Send::new(types::Fd(fd), out.as_ptr(), out.len() as u32)
            .build()
            .user_data(((i as u64) << 1) | OP_SEND);
        c.send_busy = true;
        self.push(sqe)
    }
}

/// Appends received bytes to a connection's read buffer (moving unparsed bytes to the
/// front or growing it as needed).
fn append_input(c: &mut Conn, bytes: &[u8]) {
    if c.inbuf.len() - c.in_end < bytes.len() {
        if c.in_start > 0 {
            compact_input(c);
        }
        if c.inbuf.len() - c.in_end < bytes.len() {
            let n = (c.in_end + bytes.len()).next_power_of_two();
            c.inbuf.resize(n, 0);
        }
    }
    c.inbuf[c.in_end..c.in_end + bytes.len()].copy_from_slice(bytes);
    c.in_end += bytes.len();
}

/// The io_uring counterpart of the mio `event_loop`.
pub fn event_loop(
    spec: &RunSpec,
    shared: &Shared,
    conns: &mut [Conn],
    stats: &mut RunStats,
    start: Instant,
) -> Result<Instant, DriverError> {
    let mut eng = Engine::new(conns.len()).map_err(|e| io_err(spec, e))?;
    let fds: Vec<RawFd> = conns.iter().map(|c| c.stream.raw_fd()).collect();
    start_schedule(spec, conns, start);
    // `pump` asks for sends through `flush`; they are queued here and submitted with the
    // next wait.
    let mut queued: Vec<usize> = Vec::with_capacity(conns.len());
    let mut progress = Progress::new(start);
    let now = Instant::now();
    for (i, c) in conns.iter_mut().enumerate() {
        eng.recv(i, fds[i]).map_err(|e| io_err(spec, e))?;
        pump(spec, shared, c, stats, start, now, false, &mut |c: &mut Conn| queue_send(c, &mut queued))?;
    }
    let mut reaped: Vec<(u64, i32, u32)> = Vec::with_capacity(1024);
    // Connections whose multishot receive ended (buffers ran out): re-armed next round.
    let mut rearm: Vec<usize> = Vec::new();
    loop {
        for &i in &queued {
            eng.send(i, fds[i], &mut conns[i]).map_err(|e| io_err(spec, e))?;
        }
        queued.clear();
        for &i in &rearm {
            eng.recv(i, fds[i]).map_err(|e| io_err(spec, e))?;
        }
        rearm.clear();
        if conns.iter().all(|c| c.done) || shared.stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(progress.end);
        }
        let now = Instant::now();
        let (mut timeout, next_send) = wait_bounds(spec, conns, start, now);
        if let Some(next) = next_send {
            timeout = timeout.min(next);
        }
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match eng.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            // ETIME: the deadline passed; EBUSY: completions to reap first.
            Err(e) if matches!(e.raw_os_error(), Some(ETIME) | Some(EBUSY)) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(spec, e)),
        }
        reaped.extend(eng.ring.completion().map(|cqe| (cqe.user_data(), cqe.result(), cqe.flags())));
        let now = Instant::now();
        let mut progressed = false;
        for &(ud, res, flags) in &reaped {
            let i = (ud >> 1) as usize;
            let Some(c) = conns.get_mut(i) else { continue };
            if ud & 1 == OP_RECV {
                if res == -ENOBUFS {
                    rearm.push(i);
                    continue;
                }
                if res == 0 || res == -ECONNRESET {
                    return Err(DriverError::Closed { target: spec.target.to_string() });
                }
                if res < 0 {
                    return Err(io_err(spec, io::Error::from_raw_os_error(-res)));
                }
                let Some(bid) = cqueue::buffer_select(flags) else {
                    return Err(io_err(spec, io::Error::other("receive completion without a buffer")));
                };
                append_input(c, eng.bufs.bytes(bid, res as usize));
                eng.bufs.give(bid);
                if !cqueue::more(flags) {
                    rearm.push(i);
                }
                progressed |= consume_replies(spec, shared, c, stats, start, now)?;
            } else {
                c.send_busy = false;
                if res == -EPIPE || res == -ECONNRESET {
                    return Err(DriverError::Closed { target: spec.target.to_string() });
                }
                if res < 0 {
                    return Err(io_err(spec, io::Error::from_raw_os_error(-res)));
                }
                c.out_pos += res as usize;
            }
            pump(spec, shared, c, stats, start, now, false, &mut |c: &mut Conn| queue_send(c, &mut queued))?;
        }
        reaped.clear();
        eng.bufs.publish();
        after_events(spec, shared, conns, stats, start, now, progressed, &mut progress, &mut |c: &mut Conn| {
            queue_send(c, &mut queued)
        })?;
    }
}

/// `flush` of the io_uring engine: a send is queued (submitted with the next wait) unless
/// one is in flight or already queued.
fn queue_send(c: &mut Conn, queued: &mut Vec<usize>) -> Result<(), DriverError> {
    if !c.send_busy && c.out_pos < c.out_len {
        c.send_busy = true;
        queued.push(c.slot);
    }
    Ok(())
}

use libc::{EBUSY, ECONNRESET, ENOBUFS, EPIPE, ETIME};
