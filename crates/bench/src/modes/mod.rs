//! The three ways to run: redis-benchmark mode, memtier mode and compare. Each turns its flags
//! into a validated config, drives the load and prints its report.

pub mod compare;
pub mod memtier;
pub mod redis;
pub mod ycsb;
pub mod ycsb_matrix;

use std::io::IsTerminal;

use crate::driver::conn::{self, Handshake, Target};

/// Whether stdout is a terminal (progress lines are drawn only then).
pub fn stdout_is_tty() -> bool {
    std::io::stdout().is_terminal()
}

/// The warning an open-loop run prints when it did not reach its `--rate` (within 5%):
/// the schedule fell behind, so its latencies, counted from the intended send times,
/// grew for that reason (issue 25: asked 500,000/s, got 22,951/s, showed only as 6 s
/// latencies).
pub fn rate_shortfall(asked: f64, completed: u64, elapsed_s: f64) -> Option<String> {
    if asked <= 0.0 || elapsed_s <= 0.0 {
        return None;
    }
    let got = completed as f64 / elapsed_s;
    (got < asked * 0.95).then(|| {
        format!(
            "WARNING: --rate {asked} requests/s was not reached ({got:.0}/s, {:.0}% of it): the server or this client could not keep up, and the latencies count from the intended send times.",
            got / asked * 100.0
        )
    })
}

/// A server's name and version, and its persistence settings, from INFO server and
/// CONFIG GET (None when it cannot be read).
pub fn describe_server(target: &Target, handshake: &Handshake) -> Option<(String, String)> {
    let mut s = conn::connect(target, std::time::Duration::from_secs(5)).ok()?;
    conn::handshake(&mut s, handshake, target).ok()?;
    let info = conn::call(&mut s, &[b"INFO", b"server"], target).ok()?;
    let info = String::from_utf8_lossy(&info).to_string();
    let field = |name: &str| info.lines().find_map(|l| l.strip_prefix(&format!("{name}:"))).map(|v| v.trim().to_string());
    let server = match field("basalt_version") {
        Some(v) => format!("Basalt {v}, Redis {} compatible", field("redis_version").unwrap_or_default()),
        None => format!("Redis {}", field("redis_version").unwrap_or_else(|| "?".into())),
    };
    let mut get = |name: &str| -> String {
        conn::call(&mut s, &[b"CONFIG", b"GET", name.as_bytes()], target)
            .ok()
            .and_then(|r| resp::decode_frame(&r, u64::MAX).ok().flatten())
            .and_then(|(f, _)| match f {
                resp::frame::Frame::Array(v) => v.get(1).and_then(|x| x.as_bytes()).map(|b| String::from_utf8_lossy(b).into_owned()),
                _ => None,
            })
            .unwrap_or_else(|| "?".into())
    };
    let appendonly = get("appendonly");
    let persistence = if appendonly == "yes" {
        format!("appendonly yes, appendfsync {}, save \"{}\"", get("appendfsync"), get("save"))
    } else {
        format!("appendonly {appendonly}, save \"{}\"", get("save"))
    };
    Some((server, persistence))
}

/// The server's description as the HTML reports' rows (`server`, `persistence`);
/// none when it cannot be read.
pub fn server_rows(target: &Target, handshake: &Handshake) -> Vec<(String, String)> {
    describe_server(target, handshake)
        .map(|(name, persistence)| vec![("server".to_string(), name), ("persistence".to_string(), persistence)])
        .unwrap_or_default()
}

#[cfg(test)]
mod rate_tests {
    #[test]
    fn a_rate_not_reached_is_said() {
        assert!(super::rate_shortfall(1000.0, 990, 1.0).is_none());
        let w = super::rate_shortfall(500_000.0, 22_951, 1.0).expect("warning");
        assert!(w.contains("22951/s") && w.contains("5% of it"), "{w}");
    }
}
