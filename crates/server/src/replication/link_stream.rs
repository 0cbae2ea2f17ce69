//! The replica's connection to its master: plain TCP, or TLS over it when
//! `tls-replication yes` (the client configuration comes from `crate::tls::build_client`).
//!
//! The link's one thread reads (through a `BufReader`) and writes (commands, REPLCONF
//! ACK) on the same connection, and a TLS session is one object for both directions:
//! a `LinkStream` is a handle to the shared connection, cloned for the writing side as
//! a socket would be with `try_clone`. The lock is never contended (one thread), it
//! only lets both handles reach the session. Other threads cut the link through a
//! clone of the bare socket (`socket`), which `shutdown` ends for both.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

enum Inner {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// A handle to the link's connection (see the module's header).
#[derive(Clone)]
pub struct LinkStream {
    inner: Arc<Mutex<Inner>>,
    /// The socket under it, for timeouts, the peer's address and a cut.
    socket: Arc<TcpStream>,
}

impl LinkStream {
    pub fn plain(socket: TcpStream) -> io::Result<LinkStream> {
        let bare = socket.try_clone()?;
        Ok(LinkStream { inner: Arc::new(Mutex::new(Inner::Plain(socket))), socket: Arc::new(bare) })
    }

    /// TLS as a client of `host` over a connected socket; the handshake runs with the
    /// first read or write (under the socket's timeouts).
    pub fn tls(socket: TcpStream, config: Arc<ClientConfig>, host: &str) -> Result<LinkStream, String> {
        let name = ServerName::try_from(host.to_string()).map_err(|e| format!("TLS: the master's name {host:?}: {e}"))?;
        let conn = ClientConnection::new(config, name).map_err(|e| format!("TLS: {e}"))?;
        let bare = socket.try_clone().map_err(|e| e.to_string())?;
        Ok(LinkStream {
            inner: Arc::new(Mutex::new(Inner::Tls(Box::new(StreamOwned::new(conn, socket))))),
            socket: Arc::new(bare),
        })
    }

    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.socket.set_read_timeout(timeout)
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.socket.peer_addr()
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// A clone of the bare socket, for another thread to cut the link with.
    pub fn socket(&self) -> io::Result<TcpStream> {
        self.socket.try_clone()
    }
}

impl std::os::fd::AsRawFd for LinkStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.socket.as_raw_fd()
    }
}

impl Read for LinkStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut *self.inner.lock() {
            Inner::Plain(s) => s.read(buf),
            Inner::Tls(s) => s.read(buf),
        }
    }
}

impl Write for LinkStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut *self.inner.lock() {
            Inner::Plain(s) => s.write(buf),
            Inner::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut *self.inner.lock() {
            Inner::Plain(s) => s.flush(),
            Inner::Tls(s) => s.flush(),
        }
    }
}
