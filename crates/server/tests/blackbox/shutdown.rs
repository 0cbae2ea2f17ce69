//! Graceful shutdown: SIGTERM, SIGINT and SHUTDOWN end the server with exit code 0,
//! after replies already produced have been sent. Each test spawns its own server
//! (skipped against an external server, which must not be stopped).

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

const EXIT_WAIT: Duration = Duration::from_secs(10);

fn own_server() -> Option<Srv> {
    exclusive_with_args(&[])
}

#[test]
fn sigterm_exits_zero() {
    let Some(mut t) = own_server() else { return };
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "shutdown:k", "v"]), b"+OK\r\n");
    let p = t.process().expect("spawned");
    p.signal("TERM");
    assert_eq!(p.wait_exit(EXIT_WAIT), Some(0));
    assert!(c.is_closed_within(Duration::from_secs(2)));
}

#[test]
fn sigint_exits_zero() {
    let Some(mut t) = own_server() else { return };
    let p = t.process().expect("spawned");
    p.signal("INT");
    assert_eq!(p.wait_exit(EXIT_WAIT), Some(0));
}

#[test]
fn shutdown_nosave_closes_connections_then_exits_zero() {
    // Basalt also sends replies produced before SHUTDOWN in the same read (Redis 7.0
    // drops them); this test keeps to what both do.
    let Some(mut t) = own_server() else { return };
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    c.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
    assert!(c.is_closed_within(Duration::from_secs(5)));
    assert!(other.is_closed_within(Duration::from_secs(5)));
    let p = t.process().expect("spawned");
    assert_eq!(p.wait_exit(EXIT_WAIT), Some(0));
}

#[test]
fn shutdown_rejects_bad_options() {
    let Some(t) = own_server() else { return };
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SHUTDOWN", "SAVE", "NOSAVE"]), b"-ERR syntax error\r\n");
    assert_bytes!(c.cmd(&["SHUTDOWN", "BOGUS"]), b"-ERR syntax error\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}
