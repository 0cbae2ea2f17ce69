//! MIGRATE's connections to its targets, kept between calls as Redis keeps them
//! (`migrate_cached_sockets`): one per `host:port` as the command named it, with the
//! database its last successful MIGRATE selected there (so that the next one to the
//! same database sends no SELECT), closed after [`IDLE_S`] seconds unused (by loop 0's
//! tick) or when [`MAX_CACHED`] are open and another is needed (the least recently used
//! goes; Redis drops one at random). Redis's blocking helpers are here too: a connect, a
//! write and a line read, each bounded by the command's timeout.
//!
//! Only one MIGRATE runs at a time (it holds every event loop's gate, as Redis's blocks
//! the server), so the cache's lock is never contended; it is a lock for the tick.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use hashbrown::HashMap;
use parking_lot::Mutex;

/// Seconds a cached connection may stay unused (Redis's MIGRATE_SOCKET_CACHE_TTL).
pub const IDLE_S: i64 = 10;
/// Most connections kept (Redis's MIGRATE_SOCKET_CACHE_ITEMS).
pub const MAX_CACHED: usize = 64;
/// Longest reply line read; the rest of a longer one is read as the next line, as
/// Redis's syncReadLine does with its 1 KiB buffers.
pub const LINE_MAX: usize = 1023;

/// An open connection to a target.
pub struct Target {
    pub conn: BufReader<TcpStream>,
    /// The database selected there by the last MIGRATE that succeeded; -1: none known
    /// (a new connection, or the last MIGRATE got an error).
    pub last_dbid: i64,
    last_use_s: i64,
}

/// How an exchange with a target failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoFailure {
    /// The connection could not be made in time (or the name did not resolve).
    Connect,
    /// A write failed; `timed_out`: for want of time.
    Write { timed_out: bool },
    /// A read failed or the target closed the connection.
    Read { timed_out: bool },
}

impl IoFailure {
    pub fn timed_out(self) -> bool {
        matches!(self, IoFailure::Connect | IoFailure::Write { timed_out: true } | IoFailure::Read { timed_out: true })
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock)
}

#[derive(Default)]
pub struct MigrateSockets {
    open: Mutex<HashMap<String, Target>>,
}

impl MigrateSockets {
    /// Takes the cached connection to `name` (`host:port`) out of the cache, or opens
    /// one within `timeout`. A refused connection counts as made, and fails at the
    /// first write (Redis's non-blocking connect behaves so: its caller then reports a
    /// write error and may retry).
    pub fn take(&self, name: &str, host: &str, port: u16, timeout: Duration, now_s: i64) -> Result<Target, IoFailure> {
        if let Some(mut t) = self.open.lock().remove(name) {
            t.last_use_s = now_s;
            return Ok(t);
        }
        let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(|_| IoFailure::Connect)?.collect();
        let mut last = IoFailure::Connect;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(Target { conn: BufReader::new(stream), last_dbid: -1, last_use_s: now_s });
                }
                Err(e) if is_timeout(&e) => last = IoFailure::Connect,
                Err(_) => last = IoFailure::Write { timed_out: false },
            }
        }
        Err(last)
    }

    /// Gives a connection that is still good back to the cache.
    pub fn put_back(&self, name: String, target: Target) {
        let mut open = self.open.lock();
        if open.len() >= MAX_CACHED && !open.contains_key(&name) {
            let oldest = open.iter().min_by_key(|(_, t)| t.last_use_s).map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                open.remove(&k);
            }
        }
        open.insert(name, target);
    }

    /// Closes the connections unused for more than [`IDLE_S`] seconds.
    pub fn close_idle(&self, now_s: i64) {
        let mut open = self.open.lock();
        if !open.is_empty() {
            open.retain(|_, t| now_s - t.last_use_s <= IDLE_S);
        }
    }

    /// Connections open (for tests and INFO-style checks).
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Target {
    /// Writes `bytes` whole, each write bounded by `timeout` (Redis writes 64 KiB at a
    /// time, each within the timeout).
    pub fn write_all(&mut self, bytes: &[u8], timeout: Duration) -> Result<(), IoFailure> {
        let stream = self.conn.get_mut();
        stream.set_write_timeout(Some(timeout)).map_err(|_| IoFailure::Write { timed_out: false })?;
        for chunk in bytes.chunks(64 << 10) {
            stream.write_all(chunk).map_err(|e| IoFailure::Write { timed_out: is_timeout(&e) })?;
        }
        Ok(())
    }

    /// Reads one reply line (without its `\r\n`), of at most [`LINE_MAX`] bytes, within
    /// `timeout`.
    pub fn read_line(&mut self, timeout: Duration) -> Result<Vec<u8>, IoFailure> {
        self.conn.get_ref().set_read_timeout(Some(timeout)).map_err(|_| IoFailure::Read { timed_out: false })?;
        let mut line = Vec::new();
        let n = (&mut self.conn)
            .take(LINE_MAX as u64)
            .read_until(b'\n', &mut line)
            .map_err(|e| IoFailure::Read { timed_out: is_timeout(&e) })?;
        if n == 0 {
            return Err(IoFailure::Read { timed_out: false });
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        Ok(line)
    }
}
