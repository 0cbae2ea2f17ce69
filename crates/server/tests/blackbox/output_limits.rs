//! `client-output-buffer-limit`: a client whose unsent output passes its class's hard
//! limit, or stays over its soft limit for longer than the limit's seconds, is
//! disconnected without its pending output, and nothing else is lost. Classes as Redis
//! 7.0.15: pubsub while subscribed, normal otherwise (MONITOR included).

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

const LIMITS: &str = "client-output-buffer-limit";
const DEFAULT_LIMITS: &str = "normal 0 0 0 pubsub 33554432 8388608 60";

fn set_limits(c: &mut RawConn, value: &str) {
    assert_bytes!(c.cmd(&["CONFIG", "SET", LIMITS, value]), b"+OK\r\n");
}

/// Subscribers of `channel`, as PUBSUB NUMSUB counts them.
fn subscribers(c: &mut RawConn, channel: &str) -> i64 {
    parse(&c.cmd(&["PUBSUB", "NUMSUB", channel])).items()[1].int()
}

/// A subscriber of `ch` that does not read, on a server whose limits are `limits`; then
/// `messages` messages of 100 KB published to it.
fn flood_subscriber(t: &Srv, c: &mut RawConn, limits: &str, messages: usize) -> RawConn {
    set_limits(c, limits);
    let mut sub = t.raw_conn();
    sub.cmd(&["SUBSCRIBE", "ch"]);
    assert_eq!(subscribers(c, "ch"), 1);
    let payload = "m".repeat(100_000);
    for _ in 0..messages {
        c.cmd(&["PUBLISH", "ch", &payload]);
    }
    sub
}

/// Clients in CLIENT LIST whose flags are `flags`.
fn clients_flagged(c: &mut RawConn, flags: &str) -> usize {
    let list = parse(&c.cmd(&["CLIENT", "LIST"])).text();
    let want = format!(" flags={flags} ");
    list.lines().filter(|l| l.contains(&want)).count()
}

/// A reply larger than the normal hard limit closes the connection before any of it
/// is sent; the data and other clients are untouched.
#[test]
fn a_reply_over_the_normal_hard_limit_closes_the_client() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let big = "x".repeat(300_000);
    assert_bytes!(c.cmd(&["SET", "big", &big]), b"+OK\r\n");
    set_limits(&mut c, "normal 100kb 0 0");
    let mut reader = t.raw_conn();
    reader.send(&encode(&["GET", "big"]));
    let (got, closed) = reader.read_until_quiet(Duration::from_millis(500), READ_TIMEOUT);
    assert!(closed, "the client over its limit stays connected ({} bytes read)", got.len());
    assert!(got.len() < 300_000, "the whole reply left: {} bytes", got.len());
    // Small replies stay under the limit; the value is intact.
    assert_bytes!(c.cmd(&["STRLEN", "big"]), b":300000\r\n");
    set_limits(&mut c, DEFAULT_LIMITS);
    let mut again = t.raw_conn();
    assert_eq!(again.cmd(&["GET", "big"]).len(), 300_000 + 11);
}

/// A client that pipelines requests and never reads is cut off once its replies pass
/// the hard limit, and the rest of its pipeline does not run.
#[test]
fn a_pipeline_whose_replies_pile_up_is_cut_off_and_stops() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "v", &"y".repeat(100_000)]), b"+OK\r\n");
    set_limits(&mut c, "normal 1mb 0 0");
    let mut flood = t.raw_conn();
    let mut pipeline = Vec::new();
    for _ in 0..400 {
        pipeline.extend(encode(&["GET", "v"]));
        pipeline.extend(encode(&["INCR", "ran"]));
    }
    flood.send(&pipeline);
    let (got, closed) = flood.read_until_quiet(Duration::from_millis(500), Duration::from_secs(10));
    assert!(closed, "the flooding client stays connected ({} bytes read)", got.len());
    // What left before the cut is at most what the sockets' buffers took (a few MB).
    assert!(got.len() < 20_000_000, "{} of 40 MB of replies left", got.len());
    let ran = parse(&c.cmd(&["GET", "ran"])).text().parse::<usize>().unwrap_or(0);
    assert!(ran > 0 && ran < 100, "{ran} of 400 pipelined INCRs ran");
    set_limits(&mut c, DEFAULT_LIMITS);
}

/// A subscriber that does not read is disconnected at the pubsub hard limit; the
/// publisher and the server go on.
#[test]
fn a_slow_subscriber_is_disconnected_at_the_pubsub_hard_limit() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let mut sub = flood_subscriber(&t, &mut c, "pubsub 1mb 0 0", 200);
    assert!(
        wait_until(Duration::from_secs(5), || subscribers(&mut c, "ch") == 0),
        "the subscriber 20 MB behind is still subscribed"
    );
    assert!(sub.is_closed_within(READ_TIMEOUT), "the subscriber's connection stays open");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    set_limits(&mut c, DEFAULT_LIMITS);
}

/// Over the soft limit, a subscriber stays for the limit's seconds and is disconnected
/// after that, even with no further message.
#[test]
fn a_subscriber_over_the_soft_limit_is_disconnected_after_its_seconds() {
    let t = exclusive();
    let mut c = t.raw_conn();
    // 8 MB: well over the soft limit and what the sockets' buffers hold.
    let mut sub = flood_subscriber(&t, &mut c, "pubsub 0 1mb 1", 80);
    assert_eq!(subscribers(&mut c, "ch"), 1, "disconnected before its soft limit's seconds");
    // No more messages: the server's timer finds it over the limit for too long.
    assert!(
        wait_until(Duration::from_secs(5), || subscribers(&mut c, "ch") == 0),
        "the subscriber over its soft limit for seconds is still subscribed"
    );
    assert!(sub.is_closed_within(READ_TIMEOUT));
    set_limits(&mut c, DEFAULT_LIMITS);
}

/// CLIENT LIST shows what a subscriber that does not read has pending (`omem`), within
/// the limits, and nothing once it has read it all.
#[test]
fn client_list_shows_a_slow_subscribers_pending_output() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let mut sub = flood_subscriber(&t, &mut c, DEFAULT_LIMITS, 100);
    let omem = |c: &mut RawConn| -> usize {
        let list = parse(&c.cmd(&["CLIENT", "LIST"])).text();
        let line = list.lines().find(|l| l.contains(" flags=P ")).unwrap_or_else(|| panic!("{list}")).to_string();
        let field = line.split(' ').find_map(|f| f.strip_prefix("omem=")).unwrap_or_else(|| panic!("{line}"));
        field.parse().unwrap_or_else(|_| panic!("{line}"))
    };
    // 10 MB published (under the 8 MB soft limit once the sockets' buffers, up to about
    // 4 MB here, took their part, which is not counted).
    let pending = omem(&mut c);
    assert!(pending > 1_000_000, "omem={pending}");
    // The subscriber reads everything: nothing is pending any more.
    let mut got = 0;
    while got < 100 {
        let reply = sub.read_reply();
        assert!(reply.starts_with(b"*3\r\n$7\r\nmessage\r\n"));
        got += 1;
    }
    assert!(wait_until(Duration::from_secs(5), || omem(&mut c) == 0), "omem={}", omem(&mut c));
}

/// MONITOR clients are of the normal class: the pubsub limit leaves them alone, the
/// normal one cuts them off; a subscriber is not subject to the normal limit.
#[test]
fn monitor_clients_are_of_the_normal_class() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let value = "z".repeat(100_000);
    let load = |c: &mut RawConn| {
        for _ in 0..100 {
            assert_bytes!(c.cmd(&["SET", "k", &value]), b"+OK\r\n");
        }
    };

    set_limits(&mut c, "normal 0 0 0 pubsub 100kb 0 0");
    let mut m = t.raw_conn();
    assert_bytes!(m.cmd(&["MONITOR"]), b"+OK\r\n");
    load(&mut c);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(clients_flagged(&mut c, "O"), 1, "the monitor was cut by the pubsub limit");

    set_limits(&mut c, "normal 100kb 0 0 pubsub 0 0 0");
    let mut sub = t.raw_conn();
    sub.cmd(&["SUBSCRIBE", "ch"]);
    load(&mut c);
    for _ in 0..100 {
        c.cmd(&["PUBLISH", "ch", &value]);
    }
    assert!(
        wait_until(Duration::from_secs(5), || clients_flagged(&mut c, "O") == 0),
        "the monitor 10 MB behind is still connected"
    );
    assert!(m.is_closed_within(READ_TIMEOUT));
    assert_eq!(subscribers(&mut c, "ch"), 1, "the normal limit cut a subscriber");
    set_limits(&mut c, DEFAULT_LIMITS);
}

/// Resident memory of a process, from /proc (bytes).
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    kb * 1024
}

/// Issue 26, defect 2: with the default limits (normal 0 0 0), a client that
/// pipelines GETs of a large value and does not read must not make the server hold
/// all the replies (it aborted at 1.6 GB of them): its input waits until its output
/// drains, other clients are served meanwhile, and when it reads it gets every reply.
#[test]
fn a_client_that_does_not_read_is_held_back_not_buffered() {
    let mut t = exclusive();
    let mut c = t.raw_conn();
    let value = "v".repeat(100_000);
    assert_bytes!(c.cmd(&["SET", "big", &value]), b"+OK\r\n");
    let pid = t.process().map(|p| p.pid());
    let rss_before = pid.map_or(0, rss_bytes);
    // 1,500 GETs: 150 MB of replies.
    let n = 1500;
    let mut flood = t.raw_conn();
    let mut pipeline = Vec::new();
    for _ in 0..n {
        pipeline.extend(encode(&["GET", "big"]));
    }
    flood.send(&pipeline);
    // Let the server run what it will of the pipeline.
    std::thread::sleep(Duration::from_millis(1500));
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    if is_basalt() {
        if let Some(pid) = pid {
            let grew = rss_bytes(pid).saturating_sub(rss_before);
            assert!(grew < 64 << 20, "the server grew by {} MB for 150 MB of unread replies", grew >> 20);
        }
    }
    // The client reads: every reply is there, whole and in order.
    let head = format!("$100000\r\n{value}\r\n");
    for i in 0..n {
        let r = flood.read_reply();
        assert!(r == head.as_bytes(), "reply {i} of {n}: {} bytes", r.len());
    }
    assert_bytes!(flood.cmd(&["PING"]), b"+PONG\r\n");
}
