//! When the allocator refuses memory (issue 26, defect 2: "never let an allocation
//! failure take the server down"): the client whose request asked for it is let go,
//! with a warning in the log, and the server goes on serving everyone else with its
//! data intact. Redis 7.0.15 aborts in the same place (zmalloc's out-of-memory
//! handler), so these tests run against Basalt only.
//!
//! The refusal is real: the server's address space is capped at run time with
//! `prlimit --as` a little above what it has mapped, so that growing one client's
//! query buffer is what the kernel refuses.

use std::io::{ErrorKind, Write};
use std::process::Command;
use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

/// The virtual size of process `pid`, in bytes.
fn virtual_size(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    let line = status.lines().find(|l| l.starts_with("VmSize:")).expect("VmSize line");
    let kb: u64 = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmSize value");
    kb * 1024
}

/// A client sending a 500 MB value to a server that may map only 192 MB more is closed
/// partway; the server answers the others and keeps its keys.
#[test]
fn a_query_buffer_the_allocator_refuses_closes_that_client_only() {
    if !is_basalt() {
        eprintln!("skipped: Redis aborts when an allocation fails");
        return;
    }
    let mut t = exclusive();
    let Some(process) = t.process() else {
        eprintln!("skipped: needs a server of its own to cap");
        return;
    };
    let pid = process.pid();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "keep", "v"]), b"+OK\r\n");
    let cap = virtual_size(pid) + (192 << 20);
    let status = Command::new("prlimit")
        .args([format!("--pid={pid}"), format!("--as={cap}:{cap}")])
        .status()
        .expect("run prlimit");
    assert!(status.success(), "prlimit --as failed");

    let mut big = t.raw_conn();
    big.stream.set_write_timeout(Some(Duration::from_secs(1))).expect("write timeout");
    big.send(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$500000000\r\n");
    let piece = vec![b'a'; 1 << 20];
    let mut sent_mb = 0;
    let ended = loop {
        if sent_mb == 500 {
            break None;
        }
        match big.stream.write_all(&piece) {
            Ok(()) => sent_mb += 1,
            Err(e) => break Some(e.kind()),
        }
    };
    // Let go at once: the write fails because the server closed the connection, not
    // because it stopped reading (io_uring's receive, shut down but not cancelled, kept
    // the connection open while the client waited).
    assert!(
        matches!(ended, Some(ErrorKind::BrokenPipe | ErrorKind::ConnectionReset)),
        "after {sent_mb} MB the client's write ended with {ended:?}, not a closed connection"
    );
    assert!(big.is_closed_within(Duration::from_secs(5)), "the client was not closed");

    let log = t.process().expect("own process").log();
    assert!(log.contains("no memory for its query buffer"), "no warning in the log:\n{log}");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(c.cmd(&["GET", "keep"]), b"$1\r\nv\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "big"]), b":0\r\n");
    let mut fresh = t.raw_conn();
    assert_bytes!(fresh.cmd(&["SET", "after", "1"]), b"+OK\r\n");
}
