//! TLS to the server (redis-benchmark's and memtier's `--tls` flags), with rustls: the
//! client configuration for the whole run (every connection, every server of a
//! `compare`), and a stream that speaks TLS over a blocking socket (set-up) or a
//! non-blocking one (the mio event loop; the io_uring engine does not speak TLS, so a
//! TLS run uses epoll).
//!
//! Writes are flushed whole: when the socket is full the writer waits for it (poll)
//! rather than keep ciphertext the event loop does not know about.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// The TLS flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// CA certificates (PEM) that sign the server's certificate.
    pub ca_cert: Option<PathBuf>,
    /// A directory of them.
    pub ca_cert_dir: Option<PathBuf>,
    /// Client certificate and key (PEM), for servers that ask for one.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// Server name to ask for (SNI) and check the certificate against; the host by default.
    pub sni: Option<String>,
    /// Skip checking the server's certificate.
    pub insecure: bool,
}

static CONFIG: OnceLock<(Arc<ClientConfig>, Option<String>)> = OnceLock::new();

/// Sets up TLS for every connection of this run (the first call wins).
pub fn install(o: &Options) -> Result<(), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = if o.insecure {
        builder.dangerous().with_custom_certificate_verifier(Arc::new(AnyServer(provider)))
    } else {
        let mut roots = RootCertStore::empty();
        let mut files: Vec<PathBuf> = o.ca_cert.iter().cloned().collect();
        if let Some(dir) = &o.ca_cert_dir {
            let entries = std::fs::read_dir(dir).map_err(|e| format!("TLS: {}: {e}", dir.display()))?;
            files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()));
        }
        if files.is_empty() {
            return Err("TLS: --cacert or --cacertdir is needed to check the server's certificate (or --insecure)".into());
        }
        for f in files {
            let certs = CertificateDer::pem_file_iter(&f)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("TLS: {}: {e}", f.display()))?;
            for c in certs {
                roots.add(c).map_err(|e| format!("TLS: {}: {e}", f.display()))?;
            }
        }
        builder.with_root_certificates(roots)
    };
    let config = match (&o.cert, &o.key) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("TLS: {}: {e}", cert.display()))?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("TLS: {}: {e}", key.display()))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| format!("TLS: client certificate: {e}"))?
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("TLS: --cert and --key go together".into()),
    };
    let _ = CONFIG.set((Arc::new(config), o.sni.clone()));
    Ok(())
}

/// Whether this run speaks TLS.
pub fn enabled() -> bool {
    CONFIG.get().is_some()
}

/// Starts TLS on a connected socket (blocking: the handshake completes here).
pub fn connect(sock: std::net::TcpStream, host: &str) -> io::Result<TlsStream<std::net::TcpStream>> {
    let (config, sni) = CONFIG.get().ok_or_else(|| io::Error::other("TLS is not set up"))?;
    let name = sni.as_deref().unwrap_or(host);
    let name = ServerName::try_from(name.to_string()).map_err(|e| io::Error::other(format!("TLS server name: {e}")))?;
    let conn = ClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
    let mut s = TlsStream { conn, sock };
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock)?;
    }
    Ok(s)
}

/// A TLS session over a socket.
pub struct TlsStream<S> {
    conn: ClientConnection,
    sock: S,
}

impl<S> TlsStream<S> {
    /// The same session over another socket (the same descriptor made non-blocking).
    pub fn map<T>(self, f: impl FnOnce(S) -> T) -> TlsStream<T> {
        TlsStream { conn: self.conn, sock: f(self.sock) }
    }

    pub fn socket(&self) -> &S {
        &self.sock
    }

    pub fn socket_mut(&mut self) -> &mut S {
        &mut self.sock
    }
}

impl<S: Read + Write + AsRawFd> TlsStream<S> {
    /// Sends every record waiting; waits for the socket when it is full.
    fn flush_records(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_writable(self.sock.as_raw_fd())?,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl<S: Read + Write + AsRawFd> Read for TlsStream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // No plaintext yet: more records from the socket (WouldBlock goes up to
            // the event loop).
            if self.conn.read_tls(&mut self.sock)? == 0 {
                return Ok(0);
            }
            self.conn.process_new_packets().map_err(io::Error::other)?;
            self.flush_records()?;
        }
    }
}

impl<S: Read + Write + AsRawFd> Write for TlsStream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.conn.writer().write(buf)?;
        self.flush_records()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_records()
    }
}

fn wait_writable(fd: RawFd) -> io::Result<()> {
    let mut p = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    // SAFETY: one pollfd of our own, for at most 10 s.
    let r = unsafe { libc::poll(&mut p, 1, 10_000) };
    match r {
        r if r < 0 => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            }
        }
        0 => Err(io::Error::new(io::ErrorKind::TimedOut, "TLS: the socket stayed full for 10 s")),
        _ => Ok(()),
    }
}

/// `--insecure`: any server certificate is taken (the signatures are still checked).
#[derive(Debug)]
struct AnyServer(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
