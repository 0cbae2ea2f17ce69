//! Validated configuration built from the parsed flags: everything that needs checking across
//! flags (URI, AUTH, limits redis-benchmark and memtier enforce) is decided here, with a clear
//! message for every rejection.

use crate::cli::RedisArgs;
use crate::driver::conn::{Handshake, Target};

/// A configuration error: printed as is, exit code 1.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// A value out of range or malformed.
    #[error("{0}")]
    Invalid(String),
}

fn bad(s: impl Into<String>) -> ConfigError {
    ConfigError::Invalid(s.into())
}

/// Validated redis-benchmark-mode configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RedisConfig {
    /// Server.
    pub target: Target,
    /// AUTH / SELECT / HELLO.
    pub handshake: Handshake,
    /// Connections.
    pub clients: usize,
    /// Total requests per test.
    pub requests: u64,
    /// Value size.
    pub datasize: usize,
    /// `-r`.
    pub keyspace: Option<u64>,
    /// `-P`.
    pub pipeline: usize,
    /// Output style flags.
    pub quiet: bool,
    /// `--csv`.
    pub csv: bool,
    /// `-l`.
    pub loop_forever: bool,
    /// `-t` names (lower-cased).
    pub tests: Option<Vec<String>>,
    /// `-I`.
    pub idle: bool,
    /// `--threads` (None = not given).
    pub threads: Option<usize>,
    /// HDR significant figures.
    pub precision: u8,
    /// Seed.
    pub seed: u64,
    /// Custom command (after -x, stdin appended).
    pub command: Option<Vec<Vec<u8>>>,
    /// Open-loop rate.
    pub rate: Option<f64>,
    /// Stall timeout, seconds.
    pub stall_timeout: f64,
    /// I/O engine of the load threads.
    pub io_engine: crate::driver::IoEngine,
    /// `--report FILE.html`.
    pub report: Option<std::path::PathBuf>,
    /// `--hdr-log FILE`.
    pub hdr_log: Option<std::path::PathBuf>,
}

/// Parses `redis://[user[:password]@]host[:port][/db]`.
pub fn parse_uri(uri: &str) -> Result<(Option<String>, Option<String>, String, Option<u16>, Option<u32>), ConfigError> {
    let rest = uri
        .strip_prefix("redis://")
        .or_else(|| uri.strip_prefix("valkey://"))
        .ok_or_else(|| {
            if uri.starts_with("rediss://") {
                bad("Invalid URI: TLS (rediss://) is not supported")
            } else {
                bad(format!("Invalid URI scheme in \"{uri}\""))
            }
        })?;
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    let (user, pass) = match auth {
        None => (None, None),
        Some(a) => match a.split_once(':') {
            Some((u, p)) => ((!u.is_empty()).then(|| u.to_string()), Some(p.to_string())),
            None => (None, Some(a.to_string())),
        },
    };
    let (hostport, db) = match hostpart.split_once('/') {
        Some((hp, d)) if !d.is_empty() => (hp, Some(d.parse().map_err(|_| bad(format!("Invalid database number \"{d}\" in URI")))?)),
        Some((hp, _)) => (hp, None),
        None => (hostpart, None),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), Some(p.parse().map_err(|_| bad(format!("Invalid port \"{p}\" in URI")))?)),
        None => (hostport.to_string(), None),
    };
    Ok((user, pass, host, port, db))
}

impl RedisConfig {
    /// Validates `a`; `stdin` supplies the last argument with -x.
    pub fn from_args(a: &RedisArgs, stdin: impl FnOnce() -> std::io::Result<Vec<u8>>) -> Result<Self, ConfigError> {
        let mut host = a.host.clone();
        let mut port = a.port;
        let mut user = a.user.clone();
        let mut pass = a.password.clone();
        let mut db = a.dbnum;
        if let Some(uri) = &a.uri {
            let (u, p, h, po, d) = parse_uri(uri)?;
            user = u.or(user);
            pass = p.or(pass);
            if !h.is_empty() {
                host = h;
            }
            port = po.unwrap_or(port);
            db = d.unwrap_or(db);
        }
        if user.is_some() && pass.is_none() {
            return Err(bad("--user needs a password (-a)"));
        }
        if a.clients == 0 {
            return Err(bad("Invalid number of clients (-c): must be at least 1"));
        }
        if a.pipeline == 0 {
            return Err(bad("Invalid pipeline (-P): must be at least 1"));
        }
        if a.keepalive != 1 {
            return Err(bad("-k 0 (reconnect after every request) is not supported by basalt-bench"));
        }
        if a.precision == 0 || a.precision > 4 {
            return Err(bad("--precision must be between 1 and 4 (HDR significant figures)"));
        }
        if a.keyspace == Some(0) {
            return Err(bad("Invalid keyspace length (-r): must be at least 1"));
        }
        if let Some(t) = a.threads {
            if t == 0 || t > 500 {
                return Err(bad("Invalid number of threads (--threads): 1..500"));
            }
        }
        if let Some(r) = a.rate {
            if !(r > 0.0 && r.is_finite()) {
                return Err(bad("--rate must be a positive number of requests per second"));
            }
        }
        if let Some(first) = a.command.first().filter(|c| c.starts_with('-')) {
            return Err(bad(format!("Invalid option \"{first}\" or option argument missing")));
        }
        let target = match &a.socket {
            Some(s) => Target::Unix(s.clone()),
            None => Target::Tcp(host, port),
        };
        let mut command: Option<Vec<Vec<u8>>> = (!a.command.is_empty())
            .then(|| a.command.iter().map(|s| s.as_bytes().to_vec()).collect());
        if a.stdin_arg {
            let data = stdin().map_err(|e| bad(format!("Could not read from stdin: {e}")))?;
            command.get_or_insert_with(Vec::new).push(data);
        }
        let seed = a.seed.unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            t ^ std::process::id() as u64
        });
        Ok(RedisConfig {
            target,
            handshake: Handshake { auth: pass.map(|p| (user, p)), db, resp3: a.resp3 },
            clients: a.clients,
            requests: a.requests,
            datasize: a.datasize.clamp(1, 1 << 30),
            keyspace: a.keyspace,
            pipeline: a.pipeline,
            quiet: a.quiet,
            csv: a.csv,
            loop_forever: a.loop_forever,
            tests: a.tests.as_ref().map(|t| {
                t.split(',').filter(|s| !s.is_empty()).map(|s| s.to_ascii_lowercase()).collect()
            }),
            idle: a.idle,
            threads: a.threads,
            precision: a.precision,
            seed,
            command,
            rate: a.rate,
            stall_timeout: a.stall_timeout.max(0.1),
            io_engine: crate::driver::IoEngine::parse(&a.io_engine).map_err(|e| bad(&e))?,
            report: a.report.clone(),
            hdr_log: a.hdr_log.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn cfg(args: &[&str]) -> Result<RedisConfig, ConfigError> {
        let mut v = vec!["basalt-bench"];
        v.extend_from_slice(args);
        let a = RedisArgs::try_parse_from(v).map_err(|e| bad(e.to_string()))?;
        RedisConfig::from_args(&a, || Ok(b"STDIN".to_vec()))
    }

    #[test]
    fn uri() {
        let (u, p, h, po, d) = parse_uri("redis://bob:secret@example:7000/3").expect("uri");
        assert_eq!((u.as_deref(), p.as_deref(), h.as_str(), po, d), (Some("bob"), Some("secret"), "example", Some(7000), Some(3)));
        assert!(parse_uri("http://x").is_err());
        assert!(parse_uri("rediss://x").is_err());
    }

    #[test]
    fn flags_like_redis_benchmark() {
        let c = cfg(&["-h", "10.0.0.1", "-p", "7000", "-c", "10", "-n", "5", "-P", "4", "-q", "-t", "SET,get", "-r", "100", "-3"]).expect("ok");
        assert_eq!(c.target, Target::Tcp("10.0.0.1".into(), 7000));
        assert_eq!((c.clients, c.requests, c.pipeline), (10, 5, 4));
        assert_eq!(c.tests, Some(vec!["set".into(), "get".into()]));
        assert!(c.handshake.resp3 && c.quiet);
        let c = cfg(&["-x", "-r", "10", "lpush", "mylist", "__rand_int__"]).expect("ok");
        assert_eq!(c.command.map(|v| v.len()), Some(4));
    }

    #[test]
    fn rejections() {
        assert!(cfg(&["-c", "0"]).is_err());
        assert!(cfg(&["-P", "0"]).is_err());
        assert!(cfg(&["-p", "70000"]).is_err());
        assert!(cfg(&["--precision", "9"]).is_err());
        assert!(cfg(&["--user", "bob"]).is_err());
        assert!(cfg(&["--bogus"]).is_err());
        assert!(cfg(&["-n"]).is_err());
    }
}
