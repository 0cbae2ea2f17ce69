//! Connections: blocking set-up (connect, AUTH, SELECT, HELLO 3, with every refusal reported as
//! what it is), then a non-blocking mio stream for the event loop. TCP or a Unix socket.

use super::tls::TlsStream;
use super::DriverError;
use std::io::{Read, Write};
use std::time::Duration;

/// Where the server is.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// TCP host and port.
    Tcp(String, u16),
    /// Unix socket path.
    Unix(std::path::PathBuf),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Tcp(h, p) => write!(f, "{h}:{p}"),
            Target::Unix(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Commands sent once per connection before the load starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Handshake {
    /// AUTH: optional user, password.
    pub auth: Option<(Option<String>, String)>,
    /// SELECT db (skipped for 0).
    pub db: u32,
    /// HELLO 3.
    pub resp3: bool,
}

/// A connected stream, blocking during set-up.
pub enum Blocking {
    /// TCP.
    Tcp(std::net::TcpStream),
    /// Unix socket.
    Unix(std::os::unix::net::UnixStream),
    /// TLS over TCP (`--tls`).
    Tls(Box<TlsStream<std::net::TcpStream>>),
}

/// A connected non-blocking stream for mio.
pub enum Stream {
    /// TCP.
    Tcp(mio::net::TcpStream),
    /// Unix socket.
    Unix(mio::net::UnixStream),
    /// TLS over TCP (`--tls`).
    Tls(Box<TlsStream<mio::net::TcpStream>>),
}

impl Stream {
    /// The socket's descriptor (the io_uring engine's operations name it).
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(s) => s.socket().as_raw_fd(),
        }
    }
}

impl Read for Blocking {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Blocking::Tcp(s) => s.read(b),
            Blocking::Unix(s) => s.read(b),
            Blocking::Tls(s) => s.read(b),
        }
    }
}

impl Write for Blocking {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Blocking::Tcp(s) => s.write(b),
            Blocking::Unix(s) => s.write(b),
            Blocking::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => s.read(b),
            Stream::Tls(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
            Stream::Tls(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl mio::event::Source for Stream {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.register(r, t, i),
            Stream::Unix(s) => s.register(r, t, i),
            Stream::Tls(s) => s.socket_mut().register(r, t, i),
        }
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.reregister(r, t, i),
            Stream::Unix(s) => s.reregister(r, t, i),
            Stream::Tls(s) => s.socket_mut().reregister(r, t, i),
        }
    }
    fn deregister(&mut self, r: &mio::Registry) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.deregister(r),
            Stream::Unix(s) => s.deregister(r),
            Stream::Tls(s) => s.socket_mut().deregister(r),
        }
    }
}

/// Opens a blocking connection with a timeout on every read.
pub fn connect(target: &Target, timeout: Duration) -> Result<Blocking, DriverError> {
    let err = |e: std::io::Error| DriverError::Connect { target: target.to_string(), reason: e.to_string() };
    let b = match target {
        Target::Tcp(host, port) => {
            use std::net::ToSocketAddrs;
            let addrs: Vec<_> = (host.as_str(), *port).to_socket_addrs().map_err(err)?.collect();
            let mut last = None;
            let mut ok = None;
            for a in addrs {
                match std::net::TcpStream::connect_timeout(&a, timeout) {
                    Ok(s) => {
                        ok = Some(s);
                        break;
                    }
                    Err(e) => last = Some(e),
                }
            }
            let s = match ok {
                Some(s) => s,
                None => {
                    return Err(err(last.unwrap_or_else(|| std::io::Error::other("no address"))));
                }
            };
            let _ = s.set_nodelay(true);
            s.set_read_timeout(Some(timeout)).map_err(err)?;
            if super::tls::enabled() {
                Blocking::Tls(Box::new(super::tls::connect(s, host).map_err(err)?))
            } else {
                Blocking::Tcp(s)
            }
        }
        Target::Unix(p) => {
            let s = std::os::unix::net::UnixStream::connect(p).map_err(err)?;
            s.set_read_timeout(Some(timeout)).map_err(err)?;
            Blocking::Unix(s)
        }
    };
    Ok(b)
}

/// Sends `args` and reads one reply (blocking). Returns the raw reply bytes.
pub fn call(s: &mut Blocking, args: &[&[u8]], target: &Target) -> Result<Vec<u8>, DriverError> {
    let mut req = Vec::new();
    resp::encode::command(&mut req, args);
    s.write_all(&req).map_err(|e| DriverError::Io { target: target.to_string(), reason: e.to_string() })?;
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 4096];
    loop {
        match resp::frame_len(&buf, u64::MAX) {
            Ok(Some(n)) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Ok(None) => {}
            Err(e) => return Err(DriverError::NotResp { target: target.to_string(), reason: e.to_string() }),
        }
        let n = match s.read(&mut chunk) {
            Ok(n) => n,
            // A signal arrived during the read (the io_uring probe at start sends one
            // to this thread): read again; it is not the server's doing (issue 25).
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(DriverError::Timeout { target: target.to_string(), secs: 0.0 });
            }
            Err(e) => return Err(DriverError::Io { target: target.to_string(), reason: e.to_string() }),
        };
        if n == 0 {
            return Err(DriverError::Closed { target: target.to_string() });
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// Whether an error reply's message says the client may not run commands at all
/// (NOAUTH, WRONGPASS, NOPERM), where redis-benchmark stops.
pub fn is_auth_error(msg: &[u8]) -> bool {
    msg.starts_with(b"NOAUTH") || msg.starts_with(b"WRONGPASS") || msg.starts_with(b"NOPERM")
}

/// The message of an error reply (`-ERR x` or `!len` blob error), None otherwise.
pub fn error_message(reply: &[u8]) -> Option<&[u8]> {
    match reply.first() {
        Some(b'-') => Some(trim_crlf(&reply[1..])),
        Some(b'!') => {
            let start = memchr::memchr(b'\n', reply).map(|i| i + 1).unwrap_or(reply.len());
            Some(trim_crlf(&reply[start..]))
        }
        _ => None,
    }
}

fn trim_crlf(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\r\n").unwrap_or(b)
}

/// Runs the handshake on a fresh connection; a refused AUTH or SELECT is an error.
pub fn handshake(s: &mut Blocking, h: &Handshake, target: &Target) -> Result<(), DriverError> {
    if let Some((user, pass)) = &h.auth {
        let reply = match user {
            Some(u) => call(s, &[b"AUTH", u.as_bytes(), pass.as_bytes()], target)?,
            None => call(s, &[b"AUTH", pass.as_bytes()], target)?,
        };
        if let Some(m) = error_message(&reply) {
            return Err(DriverError::Auth { target: target.to_string(), reason: String::from_utf8_lossy(m).into() });
        }
    }
    if h.db != 0 {
        let reply = call(s, &[b"SELECT", h.db.to_string().as_bytes()], target)?;
        if let Some(m) = error_message(&reply) {
            return Err(DriverError::Refused { what: "SELECT".into(), reason: String::from_utf8_lossy(m).into() });
        }
    }
    if h.resp3 {
        let reply = call(s, &[b"HELLO", b"3"], target)?;
        if let Some(m) = error_message(&reply) {
            return Err(DriverError::Refused { what: "HELLO 3".into(), reason: String::from_utf8_lossy(m).into() });
        }
    }
    Ok(())
}

/// Turns a set-up connection into a non-blocking mio stream.
pub fn into_nonblocking(b: Blocking, target: &Target) -> Result<Stream, DriverError> {
    let e = |e: std::io::Error| DriverError::Io { target: target.to_string(), reason: e.to_string() };
    Ok(match b {
        Blocking::Tcp(s) => {
            s.set_nonblocking(true).map_err(e)?;
            Stream::Tcp(mio::net::TcpStream::from_std(s))
        }
        Blocking::Unix(s) => {
            s.set_nonblocking(true).map_err(e)?;
            Stream::Unix(mio::net::UnixStream::from_std(s))
        }
        Blocking::Tls(s) => {
            s.socket().set_nonblocking(true).map_err(e)?;
            Stream::Tls(Box::new(s.map(mio::net::TcpStream::from_std)))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages() {
        assert_eq!(error_message(b"-ERR bad\r\n"), Some(&b"ERR bad"[..]));
        assert_eq!(error_message(b"!7\r\nERR bad\r\n"), Some(&b"ERR bad"[..]));
        assert_eq!(error_message(b"+OK\r\n"), None);
    }

    #[test]
    fn refused_connection_is_reported() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        drop(l);
        let t = Target::Tcp("127.0.0.1".into(), port);
        match connect(&t, Duration::from_secs(1)) {
            Err(DriverError::Connect { reason, .. }) => assert!(reason.contains("refused"), "{reason}"),
            _ => panic!("expected a connect error"),
        }
    }
}
