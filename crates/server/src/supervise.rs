//! `supervised`: telling the service manager that the server is ready, as Redis 7.0
//! does, so that a unit written for Redis (Debian's `redis-server.service` is
//! `Type=notify` with `--supervised systemd`) runs Basalt unchanged. Under systemd the
//! notices go to `$NOTIFY_SOCKET` (a datagram socket, `@` for the abstract namespace):
//! "READY=1" once the data is loaded and the port listens, "STOPPING=1" at shutdown.
//! Under upstart (`UPSTART_JOB` set) the server stops itself with SIGSTOP once ready,
//! which upstart's `expect stop` waits for. `auto` picks systemd when `NOTIFY_SOCKET` is
//! set, else upstart when `UPSTART_JOB` is. Written here: one datagram, no crate needed.

use std::os::unix::net::UnixDatagram;

/// Who supervises the server, from `supervised` and the environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Supervisor {
    None,
    Systemd,
    Upstart,
}

/// The supervisor `supervised` names (`auto`: the one the environment shows).
pub fn from_setting(setting: &str) -> Supervisor {
    choose(setting, std::env::var_os("NOTIFY_SOCKET").is_some(), std::env::var_os("UPSTART_JOB").is_some())
}

fn choose(setting: &str, under_systemd: bool, under_upstart: bool) -> Supervisor {
    match setting {
        "systemd" => Supervisor::Systemd,
        "upstart" => Supervisor::Upstart,
        "auto" if under_systemd => Supervisor::Systemd,
        "auto" if under_upstart => Supervisor::Upstart,
        _ => Supervisor::None,
    }
}

/// The server is ready: loaded, and accepting connections.
pub fn ready(supervisor: Supervisor) {
    match supervisor {
        Supervisor::None => {}
        Supervisor::Systemd => {
            if notify_systemd("STATUS=Ready to accept connections\n").is_some() {
                let _ = notify_systemd("READY=1\n");
                crate::log::notice("supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.");
            }
        }
        Supervisor::Upstart => {
            if std::env::var_os("UPSTART_JOB").is_none() {
                crate::log::warning("upstart supervision requested, but UPSTART_JOB not found!");
                return;
            }
            crate::log::notice("supervised by upstart, will stop to signal readiness.");
            // SAFETY: raising a signal on this process has no preconditions; upstart
            // continues it.
            unsafe { libc::raise(libc::SIGSTOP) };
            // (Redis then unsets UPSTART_JOB; Basalt leaves the environment alone, which
            // other threads may read.)
        }
    }
}

/// The server is stopping.
pub fn stopping(supervisor: Supervisor) {
    if supervisor == Supervisor::Systemd {
        let _ = notify_systemd("STOPPING=1\n");
    }
}

/// Sends one notice to systemd; None (with a warning) when there is no socket to send
/// it to.
fn notify_systemd(text: &str) -> Option<()> {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        crate::log::warning("systemd supervision requested or auto-detected, but NOTIFY_SOCKET environment variable not found!");
        return None;
    };
    send(&path, text)
}

/// One datagram to systemd's socket `path`.
fn send(path: &std::ffi::OsStr, text: &str) -> Option<()> {
    let sock = UnixDatagram::unbound().ok()?;
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path);
    let sent = match bytes.strip_prefix(b"@") {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).ok()?;
            sock.send_to_addr(text.as_bytes(), &addr)
        }
        None => sock.send_to(text.as_bytes(), &path),
    };
    match sent {
        Ok(_) => Some(()),
        Err(e) => {
            crate::log::warning(&format!("Can't notify systemd at {}: {e}", path.to_string_lossy()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notices reach systemd's socket, by path and in the abstract namespace; `auto`
    /// picks what the environment shows.
    #[test]
    fn notices_reach_the_socket_and_auto_follows_the_environment() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notify");
        let listener = UnixDatagram::bind(&path).expect("bind");
        listener.set_read_timeout(Some(std::time::Duration::from_secs(5))).expect("timeout");
        let mut buf = [0u8; 64];
        for text in ["READY=1\n", "STOPPING=1\n"] {
            assert!(send(path.as_os_str(), text).is_some());
            let n = listener.recv(&mut buf).expect("a notice");
            assert_eq!(&buf[..n], text.as_bytes());
        }
        use std::os::linux::net::SocketAddrExt;
        let name = format!("basalt-test-{}", std::process::id());
        let abstract_listener = UnixDatagram::bind_addr(&std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("name")).expect("bind");
        assert!(send(std::ffi::OsStr::new(&format!("@{name}")), "READY=1\n").is_some());
        let n = abstract_listener.recv(&mut buf).expect("a notice");
        assert_eq!(&buf[..n], b"READY=1\n");
        assert_eq!(choose("auto", true, false), Supervisor::Systemd);
        assert_eq!(choose("auto", false, true), Supervisor::Upstart);
        assert_eq!(choose("auto", false, false), Supervisor::None);
        assert_eq!(choose("systemd", false, false), Supervisor::Systemd);
        assert_eq!(choose("no", true, true), Supervisor::None);
    }
}
