//! TLS for client connections (`tls-port`), with rustls: the server's TLS settings as
//! Redis 7.0's `tls-*` parameters give them, built into a rustls configuration at start
//! and again at CONFIG SET (new connections get the new one), and one connection's
//! session, which turns the bytes received into requests and the replies into bytes to
//! send. The engines move bytes; `conn.rs` puts a session between them and the parser.
//!
//! Redis 7.0's parameters: `tls-cert-file` and `tls-key-file` (PEM; the key may not be
//! encrypted here), `tls-ca-cert-file` / `tls-ca-cert-dir` (the CAs that sign client
//! certificates), `tls-auth-clients` (yes: a client must present a certificate signed by
//! one of them, the default; optional; no), `tls-protocols` (`TLSv1.2`, `TLSv1.3`),
//! `tls-ciphersuites` (TLS 1.3 suites by their IANA names). Not applied, recorded only:
//! `tls-ciphers` (OpenSSL's TLS 1.2 cipher strings: rustls offers only its safe
//! suites), `tls-dh-params-file` (rustls uses ECDHE only), the session cache settings;
//! `tls-cluster` (no cluster).
//!
//! The other way, for a replica's link to its master (`tls-replication yes`):
//! [`build_client`], with `tls-client-cert-file` / `tls-client-key-file` (else
//! `tls-cert-file` / `tls-key-file`) as the certificate this server shows, and the same
//! CAs for the master's. As Redis 7.0, the master's certificate is checked against the
//! CAs but not against the host name the replica was given (Sentinel hands out IP
//! addresses, which certificates seldom name).

use std::io::{Read, Write};
use std::sync::Arc;

use parking_lot::RwLock;
use rustls::pki_types::pem::PemObject;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, ServerConnection, SignatureScheme};

/// The TLS parameters, as configured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub cert_file: String,
    pub key_file: String,
    pub ca_cert_file: String,
    pub ca_cert_dir: String,
    /// `yes`, `optional` or `no`.
    pub auth_clients: String,
    /// Space-separated `TLSv1.2` / `TLSv1.3`; empty for both.
    pub protocols: String,
    /// Colon-separated TLS 1.3 suite names; empty for rustls's.
    pub ciphersuites: String,
    /// The certificate and key shown as a client (a replica to its master); empty for
    /// `cert_file` / `key_file`.
    pub client_cert_file: String,
    pub client_key_file: String,
}

/// Builds the rustls configuration, or says what is wrong (logged by the caller).
pub fn build(s: &Settings) -> Result<Arc<ServerConfig>, String> {
    if s.cert_file.is_empty() || s.key_file.is_empty() {
        return Err("tls-cert-file and tls-key-file are needed for TLS".into());
    }
    let (certs, key) = cert_and_key(&s.cert_file, &s.key_file)?;
    let (provider, versions) = provider_and_versions(s)?;
    let builder = ServerConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&versions)
        .map_err(|e| format!("TLS protocols: {e}"))?;
    let auth = s.auth_clients.to_ascii_lowercase();
    let builder = if auth == "no" {
        builder.with_no_client_auth()
    } else {
        let roots = ca_roots(s)?;
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        );
        let verifier = if auth == "optional" { verifier.allow_unauthenticated() } else { verifier };
        builder.with_client_cert_verifier(verifier.build().map_err(|e| format!("Client certificate verifier: {e}"))?)
    };
    let config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Failed to use the certificate and key: {e}"))?;
    Ok(Arc::new(config))
}

/// Builds the configuration of a TLS client (a replica's link to its master), or says
/// what is wrong: the CAs are needed (Redis's words), a certificate is shown when one
/// is configured.
pub fn build_client(s: &Settings) -> Result<Arc<ClientConfig>, String> {
    let roots = Arc::new(ca_roots(s)?);
    let (provider, versions) = provider_and_versions(s)?;
    let provider = Arc::new(provider);
    let chain = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| format!("Server certificate verifier: {e}"))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| format!("TLS protocols: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainOnly(chain)));
    let (cert_file, key_file) = if s.client_cert_file.is_empty() {
        (&s.cert_file, &s.key_file)
    } else {
        (&s.client_cert_file, &s.client_key_file)
    };
    let config = if cert_file.is_empty() || key_file.is_empty() {
        builder.with_no_client_auth()
    } else {
        let (certs, key) = cert_and_key(cert_file, key_file)?;
        builder
            .with_client_auth_cert(certs, key)
            .map_err(|e| format!("Failed to use the client certificate and key: {e}"))?
    };
    Ok(Arc::new(config))
}

/// A certificate chain and its private key, from PEM files.
fn cert_and_key(cert_file: &str, key_file: &str) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .and_then(|it| it.collect())
        .map_err(|e| format!("Failed to load certificate: {cert_file}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("Failed to load certificate: {cert_file}: no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| format!("Failed to load private key: {key_file}: {e}"))?;
    Ok((certs, key))
}

/// The crypto provider with `tls-ciphersuites`' suites, and `tls-protocols`' versions.
fn provider_and_versions(s: &Settings) -> Result<(rustls::crypto::CryptoProvider, Vec<&'static rustls::SupportedProtocolVersion>), String> {
    let mut provider = rustls::crypto::ring::default_provider();
    if !s.ciphersuites.is_empty() {
        let wanted: Vec<&str> = s.ciphersuites.split(':').filter(|w| !w.is_empty()).collect();
        provider.cipher_suites.retain(|cs| {
            // TLS 1.2 suites are kept (tls-ciphers governs those in Redis).
            cs.version() == &rustls::version::TLS12
                || wanted.iter().any(|w| format!("{:?}", cs.suite()).eq_ignore_ascii_case(w))
        });
        if !provider.cipher_suites.iter().any(|cs| cs.version() == &rustls::version::TLS13) {
            return Err(format!("Failed to configure ciphersuites: '{}'", s.ciphersuites));
        }
    }
    let mut versions: Vec<&'static rustls::SupportedProtocolVersion> = Vec::new();
    for word in s.protocols.split_whitespace() {
        match word.to_ascii_lowercase().as_str() {
            "tlsv1.2" => versions.push(&rustls::version::TLS12),
            "tlsv1.3" => versions.push(&rustls::version::TLS13),
            // Redis accepts the older names; rustls does not speak them.
            "tlsv1" | "tlsv1.1" => {}
            _ => return Err(format!("Invalid tls-protocols specified: {word}")),
        }
    }
    if versions.is_empty() {
        versions = vec![&rustls::version::TLS12, &rustls::version::TLS13];
    }
    Ok((provider, versions))
}

/// Checks a master's certificate chain against the CAs, its validity dates and its
/// use, but not the name in it (see the module's header): webpki checks the name
/// last, once the chain is good, so that error alone is let through.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName))
            | Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForNameContext { .. })) => {
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The CA certificates of `tls-ca-cert-file` and the `.pem`/`.crt` files of
/// `tls-ca-cert-dir`.
fn ca_roots(s: &Settings) -> Result<RootCertStore, String> {
    let mut files = Vec::new();
    if !s.ca_cert_file.is_empty() {
        files.push(std::path::PathBuf::from(&s.ca_cert_file));
    }
    if !s.ca_cert_dir.is_empty() {
        let dir = std::fs::read_dir(&s.ca_cert_dir).map_err(|e| format!("Failed to configure CA certificate(s) file/directory: {e}"))?;
        files.extend(dir.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()));
    }
    if files.is_empty() {
        return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!".into());
    }
    let mut roots = RootCertStore::empty();
    for f in files {
        let certs = CertificateDer::pem_file_iter(&f)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("Failed to configure CA certificate(s) file/directory: {}: {e}", f.display()))?;
        for c in certs {
            roots.add(c).map_err(|e| format!("Bad CA certificate in {}: {e}", f.display()))?;
        }
    }
    Ok(roots)
}

/// The configuration new TLS connections get (None: no TLS port).
#[derive(Default)]
pub struct Context {
    current: RwLock<Option<Arc<ServerConfig>>>,
}

impl Context {
    pub fn get(&self) -> Option<Arc<ServerConfig>> {
        self.current.read().clone()
    }

    pub fn set(&self, config: Arc<ServerConfig>) {
        *self.current.write() = Some(config);
    }
}

/// One connection's TLS session.
pub struct Session {
    conn: ServerConnection,
}

/// The session failed (a bad record, a refused certificate): the connection closes.
#[derive(Debug)]
pub struct Failed(pub String);

impl Session {
    pub fn new(config: Arc<ServerConfig>) -> Result<Session, Failed> {
        let mut conn = ServerConnection::new(config).map_err(|e| Failed(e.to_string()))?;
        // The connection's output bounds what waits (backpressure, output limits).
        conn.set_buffer_limit(None);
        Ok(Session { conn })
    }

    /// Takes bytes received from the socket and appends the plaintext they carry to
    /// `plain`. Handshake records may leave bytes to send ([`Session::wants_write`]).
    pub fn receive(&mut self, mut bytes: &[u8], plain: &mut Vec<u8>) -> Result<(), Failed> {
        while !bytes.is_empty() {
            self.conn.read_tls(&mut bytes).map_err(|e| Failed(e.to_string()))?;
            let state = match self.conn.process_new_packets() {
                Ok(state) => state,
                Err(e) => {
                    // The alert that says why is sent before the close, as OpenSSL does.
                    return Err(Failed(e.to_string()));
                }
            };
            let mut n = state.plaintext_bytes_to_read();
            while n > 0 {
                let start = plain.len();
                plain.resize(start + n, 0);
                let got = self.conn.reader().read(&mut plain[start..]).map_err(|e| Failed(e.to_string()))?;
                plain.truncate(start + got);
                if got == 0 {
                    break;
                }
                n -= got;
            }
        }
        Ok(())
    }

    /// Encrypts `plain` (replies) and appends every record waiting to be sent, the
    /// handshake's included, to `out`.
    pub fn send(&mut self, plain: &[u8], out: &mut Vec<u8>) -> Result<(), Failed> {
        if !plain.is_empty() {
            self.conn.writer().write_all(plain).map_err(|e| Failed(e.to_string()))?;
        }
        while self.conn.wants_write() {
            self.conn.write_tls(out).map_err(|e| Failed(e.to_string()))?;
        }
        Ok(())
    }

    /// Records are waiting to be sent (the handshake's, an alert).
    pub fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// The handshake is still going on.
    pub fn handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }
}
