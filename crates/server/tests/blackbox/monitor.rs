//! MONITOR. The lines are compared with Redis 7.0.15's after their timestamp and client
//! address (which differ run to run) are checked for form and removed.

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

/// Reads monitor lines until `n` arrived (bounded by the harness's timeout), each as
/// `[db] rest` after checking the `+<secs>.<6 digits> [<db> <addr>] ` prefix.
fn lines(m: &mut RawConn, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let raw = m.read_reply();
            let text = String::from_utf8_lossy(&raw).into_owned();
            let body = text
                .strip_prefix('+')
                .and_then(|t| t.strip_suffix("\r\n"))
                .unwrap_or_else(|| panic!("{text:?}"));
            let (stamp, rest) = body.split_once(" [").unwrap_or_else(|| panic!("{text:?}"));
            let (secs, micros) = stamp.split_once('.').unwrap_or_else(|| panic!("{text:?}"));
            assert!(
                secs.parse::<u64>().is_ok() && micros.len() == 6 && micros.parse::<u32>().is_ok(),
                "{text:?}"
            );
            let (client, args) = rest.split_once("] ").unwrap_or_else(|| panic!("{text:?}"));
            let (db, addr) = client.split_once(' ').unwrap_or_else(|| panic!("{text:?}"));
            assert!(addr.contains(':'), "{text:?}");
            format!("[{db}] {args}")
        })
        .collect()
}

#[test]
fn monitor_shows_commands_as_redis() {
    let t = exclusive();
    let mut m = t.raw_conn();
    let mut c = t.raw_conn();
    assert_bytes!(m.cmd(&["MONITOR"]), b"+OK\r\n");
    let key: &[u8] = b"k\x00\x01\"\\\n\r\t\x07\x08\xff";
    let mut req = Vec::new();
    for args in [
        &[b"SELECT".as_slice(), b"2"][..],
        &[b"SET", key, b"v"],
        &[b"MULTI"],
        &[b"INCR", b"n"],
        &[b"EXEC"],
        &[b"CONFIG", b"GET", b"port"],
        &[b"NOSUCH"],
        &[b"GET"],
        &[b"AUTH", b"pw"],
        &[b"HELLO", b"2", b"AUTH", b"default", b"pw"],
        &[b"SELECT", b"0"],
        &[b"ECHO", b"x"],
    ] {
        req.extend(encode(args));
    }
    c.send(&req);
    let _ = c.read_replies(12);
    let want = [
        r#"[2] "SELECT" "2""#,
        r#"[2] "SET" "k\x00\x01\"\\\n\r\t\a\b\xff" "v""#,
        r#"[2] "MULTI""#,
        r#"[2] "INCR" "n""#,
        r#"[2] "EXEC""#,
        r#"[2] "AUTH" "(redacted)""#,
        r#"[2] "HELLO" "2" "AUTH" "(redacted)" "(redacted)""#,
        r#"[0] "SELECT" "0""#,
        r#"[0] "ECHO" "x""#,
    ];
    assert_eq!(lines(&mut m, want.len()), want);
    // The monitor's own commands: keyspace ones refused, a second MONITOR ignored, and
    // its other commands shown right after their replies.
    assert_bytes!(
        m.cmd(&["GET", "a"]),
        b"-ERR Replica can't interact with the keyspace\r\n"
    );
    m.send(&encode(&["MONITOR"]));
    assert_bytes!(m.cmd(&["PING"]), b"+PONG\r\n");
    assert_eq!(lines(&mut m, 1), [r#"[0] "PING""#]);
    // RESET ends it.
    assert_bytes!(m.cmd(&["RESET"]), b"+RESET\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert!(
        m.try_read_reply(Duration::from_millis(300)).is_err(),
        "a line after RESET"
    );
    assert_bytes!(m.cmd(&["GET", "a"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["FLUSHALL"]), b"+OK\r\n");
}

#[test]
fn monitor_is_refused_inside_a_transaction() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MONITOR"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["EXEC"]),
        b"*1\r\n-ERR MONITOR isn't allowed for DENY BLOCKING client\r\n"
    );
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}
