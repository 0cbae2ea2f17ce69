//! Blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
//! BZPOPMAX, BZMPOP.
//!
//! Tests that block a client and wake it use a server of their own, so that
//! `INFO clients` `blocked_clients` tells exactly when the server has parked
//! the client. Every wait is bounded.

use std::time::{Duration, Instant};

use crate::assert_bytes;
use crate::harness::*;

const NOT_FLOAT: &[u8] = b"-ERR timeout is not a float or out of range\r\n";
const NEGATIVE: &[u8] = b"-ERR timeout is negative\r\n";

#[test]
fn immediate_return_when_data_exists() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "blk_now:{a}l";
    let d = "blk_now:{a}d";
    let z = "blk_now:{a}z";
    let missing = "blk_now:{a}missing";
    assert_bytes!(c.cmd(&["RPUSH", l, "a", "b", "c", "d", "e", "f"]), b":6\r\n");
    assert_bytes!(c.cmd(&["BLPOP", l, "0"]), b"*2\r\n$12\r\nblk_now:{a}l\r\n$1\r\na\r\n");
    // The first non-empty key in argument order.
    assert_bytes!(
        c.cmd(&["BRPOP", missing, l, "0"]),
        b"*2\r\n$12\r\nblk_now:{a}l\r\n$1\r\nf\r\n"
    );
    assert_bytes!(c.cmd(&["BLMOVE", l, d, "LEFT", "RIGHT", "0"]), b"$1\r\nb\r\n");
    assert_bytes!(c.cmd(&["BRPOPLPUSH", l, d, "0"]), b"$1\r\ne\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", d, "0", "-1"]),
        b"*2\r\n$1\r\ne\r\n$1\r\nb\r\n"
    );
    assert_bytes!(
        c.cmd(&["BLMPOP", "0", "2", missing, l, "RIGHT", "COUNT", "5"]),
        b"*2\r\n$12\r\nblk_now:{a}l\r\n*2\r\n$1\r\nd\r\n$1\r\nc\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", l]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZADD", z, "1", "a", "2", "b", "3", "c", "4", "d"]), b":4\r\n");
    assert_bytes!(
        c.cmd(&["BZPOPMIN", z, "0"]),
        b"*3\r\n$12\r\nblk_now:{a}z\r\n$1\r\na\r\n$1\r\n1\r\n"
    );
    assert_bytes!(
        c.cmd(&["BZPOPMAX", missing, z, "0"]),
        b"*3\r\n$12\r\nblk_now:{a}z\r\n$1\r\nd\r\n$1\r\n4\r\n"
    );
    // BZMPOP replies with [member, score] pairs even in RESP2.
    assert_bytes!(
        c.cmd(&["BZMPOP", "0", "1", z, "MIN", "COUNT", "5"]),
        b"*2\r\n$12\r\nblk_now:{a}z\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", z]), b":0\r\n");
    assert_bytes!(c.cmd(&["DEL", d]), b":1\r\n");
}

#[test]
fn timeout_returns_null_array() {
    let t = shared();
    let mut c = t.raw_conn();
    let m = "blk_timeout:{a}missing";
    let d = "blk_timeout:{a}d";
    let cases: &[&[&str]] = &[
        &["BLPOP", m, "0.1"],
        &["BRPOP", m, "0.1"],
        &["BLMOVE", m, d, "LEFT", "LEFT", "0.1"],
        &["BRPOPLPUSH", m, d, "0.1"],
        &["BLMPOP", "0.1", "1", m, "LEFT"],
        &["BZPOPMIN", m, "0.1"],
        &["BZPOPMAX", m, "0.1"],
        &["BZMPOP", "0.1", "1", m, "MIN"],
        &["BLPOP", m, "1.5e-1"],
    ];
    for args in cases {
        let start = Instant::now();
        // Every one of them, BLMOVE included, answers a null array in RESP2.
        assert_bytes!(c.cmd(args), b"*-1\r\n", "{args:?}");
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(90) && took < Duration::from_secs(4),
            "{args:?} took {took:?}"
        );
    }
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
}

#[test]
fn timeout_returns_resp3_null() {
    let t = shared();
    let mut c = t.raw_conn();
    let m = "blk_timeout3:{a}missing";
    let d = "blk_timeout3:{a}d";
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    let cases: &[&[&str]] = &[
        &["BLPOP", m, "0.05"],
        &["BLMOVE", m, d, "LEFT", "LEFT", "0.05"],
        &["BLMPOP", "0.05", "1", m, "LEFT"],
        &["BZPOPMIN", m, "0.05"],
        &["BZMPOP", "0.05", "1", m, "MAX"],
    ];
    for args in cases {
        assert_bytes!(c.cmd(args), b"_\r\n", "{args:?}");
    }
    // Scores of BZPOP* and BZMPOP are doubles in RESP3.
    let z = "blk_timeout3:{a}z";
    assert_bytes!(c.cmd(&["ZADD", z, "1.5", "a", "3", "b"]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["BZPOPMIN", z, "0"]),
        b"*3\r\n$17\r\nblk_timeout3:{a}z\r\n$1\r\na\r\n,1.5\r\n"
    );
    assert_bytes!(
        c.cmd(&["BZMPOP", "0", "1", z, "MAX"]),
        b"*2\r\n$17\r\nblk_timeout3:{a}z\r\n*1\r\n*2\r\n$1\r\nb\r\n,3\r\n"
    );
}

#[test]
fn timeout_argument_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    let m = "blk_terr:{a}missing";
    let d = "blk_terr:{a}d";
    for bad in ["x", "nan", " 1", "1s", ""] {
        assert_bytes!(c.cmd(&["BLPOP", m, bad]), NOT_FLOAT, "BLPOP {bad:?}");
    }
    for neg in ["-1", "-0.1"] {
        assert_bytes!(c.cmd(&["BLPOP", m, neg]), NEGATIVE, "BLPOP {neg:?}");
    }
    // The timeout is the last argument of BLPOP/BRPOP.
    assert_bytes!(c.cmd(&["BLPOP", m, m, "0", "extra"]), NOT_FLOAT);
    let not_float: &[&[&str]] = &[
        &["BRPOP", m, "x"],
        &["BLMOVE", m, d, "LEFT", "LEFT", "x"],
        &["BRPOPLPUSH", m, d, "x"],
        &["BLMPOP", "x", "1", m, "LEFT"],
        &["BZPOPMIN", m, "x"],
        &["BZPOPMAX", m, "x"],
        &["BZMPOP", "x", "1", m, "MIN"],
    ];
    for args in not_float {
        assert_bytes!(c.cmd(args), NOT_FLOAT, "{args:?}");
    }
    let negative: &[&[&str]] = &[
        &["BRPOP", m, "-1"],
        &["BLMOVE", m, d, "LEFT", "LEFT", "-1"],
        &["BRPOPLPUSH", m, d, "-1"],
        &["BLMPOP", "-1", "1", m, "LEFT"],
        &["BZPOPMIN", m, "-1"],
        &["BZPOPMAX", m, "-1"],
        &["BZMPOP", "-1", "1", m, "MIN"],
    ];
    for args in negative {
        assert_bytes!(c.cmd(args), NEGATIVE, "{args:?}");
    }
    // Other argument errors of the multi-key forms.
    assert_bytes!(
        c.cmd(&["BLMPOP", "0", "0", m, "LEFT"]),
        b"-ERR numkeys should be greater than 0\r\n"
    );
    assert_bytes!(
        c.cmd(&["BZMPOP", "0", "1", m, "MIN", "COUNT", "0"]),
        b"-ERR count should be greater than 0\r\n"
    );
    assert_bytes!(c.cmd(&["BLMPOP", "0", "1", m, "UP"]), b"-ERR syntax error\r\n");
    assert_bytes!(
        c.cmd(&["BLPOP", m]),
        b"-ERR wrong number of arguments for 'blpop' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["BLMOVE", m, d, "LEFT", "0"]),
        b"-ERR wrong number of arguments for 'blmove' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["BZMPOP", "0", "1"]),
        b"-ERR wrong number of arguments for 'bzmpop' command\r\n"
    );
}

#[test]
fn wrongtype_on_existing_key() {
    let t = shared();
    let mut c = t.raw_conn();
    let s = "blk_wt:{a}s";
    let l = "blk_wt:{a}l";
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["BLPOP", s, "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BRPOP", s, "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BLMOVE", s, l, "LEFT", "LEFT", "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BLMPOP", "0", "1", s, "LEFT"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BZPOPMIN", s, "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BZMPOP", "0", "1", s, "MIN"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["RPUSH", l, "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["BZPOPMAX", l, "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["BLMOVE", l, s, "LEFT", "LEFT", "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["LLEN", l]), b":1\r\n");
    assert_bytes!(c.cmd(&["DEL", s, l]), b":2\r\n");
}

#[test]
fn blocking_pop_inside_multi_does_not_block() {
    let t = shared();
    let mut c = t.raw_conn();
    let m = "blk_multi:missing";
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["BLPOP", m, "0"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["BZPOPMIN", m, "0"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["BLMOVE", m, m, "LEFT", "LEFT", "0"]), b"+QUEUED\r\n");
    // Inside MULTI, BLMOVE answers like LMOVE (a nil bulk), unlike its
    // timeout reply (a null array).
    assert_bytes!(c.cmd(&["EXEC"]), b"*3\r\n*-1\r\n*-1\r\n$-1\r\n");
}

#[test]
fn push_from_another_connection_wakes_blpop() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BLPOP", "l", "0"]));
    wait_blocked(&mut ctl, 1);
    blocked.expect_silence(Duration::from_millis(100));
    // Push from a separate thread, on its own connection.
    let addr = t.addr.clone();
    let pusher = std::thread::spawn(move || {
        let mut p = RawConn::connect(&addr);
        p.cmd(&["RPUSH", "l", "hello"])
    });
    assert_bytes!(late_reply(&mut blocked), b"*2\r\n$1\r\nl\r\n$5\r\nhello\r\n");
    // The pusher saw the list with one element before the pop.
    assert_bytes!(pusher.join().expect("pusher thread"), b":1\r\n");
    assert_bytes!(ctl.cmd(&["EXISTS", "l"]), b":0\r\n");
    wait_blocked(&mut ctl, 0);
    // The connection is usable again.
    assert_bytes!(blocked.cmd(&["PING"]), b"+PONG\r\n");
}

#[test]
fn blpop_on_several_keys_wakes_on_any() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BRPOP", "k1", "k2", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["RPUSH", "k2", "a", "b"]), b":2\r\n");
    assert_bytes!(late_reply(&mut blocked), b"*2\r\n$2\r\nk2\r\n$1\r\nb\r\n");
    assert_bytes!(ctl.cmd(&["LRANGE", "k2", "0", "-1"]), b"*1\r\n$1\r\na\r\n");
}

#[test]
fn blocked_clients_are_served_in_fifo_order() {
    let t = exclusive();
    let mut first = t.raw_conn();
    let mut second = t.raw_conn();
    let mut ctl = t.raw_conn();
    first.send(&encode(&["BLPOP", "q", "0"]));
    wait_blocked(&mut ctl, 1);
    second.send(&encode(&["BLPOP", "q", "0"]));
    wait_blocked(&mut ctl, 2);
    assert_bytes!(ctl.cmd(&["RPUSH", "q", "one"]), b":1\r\n");
    assert_bytes!(late_reply(&mut first), b"*2\r\n$1\r\nq\r\n$3\r\none\r\n");
    second.expect_silence(Duration::from_millis(200));
    assert_bytes!(ctl.cmd(&["RPUSH", "q", "two"]), b":1\r\n");
    assert_bytes!(late_reply(&mut second), b"*2\r\n$1\r\nq\r\n$3\r\ntwo\r\n");
    // One push of two elements serves both waiters, in order.
    first.send(&encode(&["BLPOP", "q", "0"]));
    wait_blocked(&mut ctl, 1);
    second.send(&encode(&["BLPOP", "q", "0"]));
    wait_blocked(&mut ctl, 2);
    assert_bytes!(ctl.cmd(&["LPUSH", "q", "x", "y"]), b":2\r\n");
    assert_bytes!(late_reply(&mut first), b"*2\r\n$1\r\nq\r\n$1\r\ny\r\n");
    assert_bytes!(late_reply(&mut second), b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    assert_bytes!(ctl.cmd(&["EXISTS", "q"]), b":0\r\n");
}

#[test]
fn zero_timeout_blocks_until_woken() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BRPOP", "l", "0"]));
    wait_blocked(&mut ctl, 1);
    blocked.expect_silence(Duration::from_millis(500));
    assert_bytes!(ctl.cmd(&["LPUSH", "l", "v"]), b":1\r\n");
    assert_bytes!(late_reply(&mut blocked), b"*2\r\n$1\r\nl\r\n$1\r\nv\r\n");
}

#[test]
fn a_push_that_is_undone_in_the_same_transaction_does_not_wake() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BLPOP", "l", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(ctl.cmd(&["LPUSH", "l", "x"]), b"+QUEUED\r\n");
    assert_bytes!(ctl.cmd(&["DEL", "l"]), b"+QUEUED\r\n");
    assert_bytes!(ctl.cmd(&["EXEC"]), b"*2\r\n:1\r\n:1\r\n");
    blocked.expect_silence(Duration::from_millis(200));
    // A key of another type does not wake it either.
    assert_bytes!(ctl.cmd(&["SET", "l", "str"]), b"+OK\r\n");
    blocked.expect_silence(Duration::from_millis(200));
    assert_bytes!(ctl.cmd(&["DEL", "l"]), b":1\r\n");
    assert_bytes!(ctl.cmd(&["RPUSH", "l", "z"]), b":1\r\n");
    assert_bytes!(late_reply(&mut blocked), b"*2\r\n$1\r\nl\r\n$1\r\nz\r\n");
}

#[test]
fn a_disconnected_waiter_does_not_consume() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    {
        let mut gone = t.raw_conn();
        gone.send(&encode(&["BLPOP", "l", "0"]));
        wait_blocked(&mut ctl, 1);
    }
    wait_blocked(&mut ctl, 0);
    assert_bytes!(ctl.cmd(&["RPUSH", "l", "kept"]), b":1\r\n");
    assert_bytes!(ctl.cmd(&["LRANGE", "l", "0", "-1"]), b"*1\r\n$4\r\nkept\r\n");
}

#[test]
fn blmove_and_brpoplpush_wake() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["RPUSH", "src", "1", "2"]), b":2\r\n");
    assert_bytes!(late_reply(&mut blocked), b"$1\r\n2\r\n");
    assert_bytes!(ctl.cmd(&["LRANGE", "src", "0", "-1"]), b"*1\r\n$1\r\n1\r\n");
    assert_bytes!(ctl.cmd(&["LRANGE", "dst", "0", "-1"]), b"*1\r\n$1\r\n2\r\n");
    // A chain: the element moved by BRPOPLPUSH wakes a BLPOP on the destination.
    let mut second = t.raw_conn();
    blocked.send(&encode(&["BRPOPLPUSH", "s1", "s2", "0"]));
    wait_blocked(&mut ctl, 1);
    second.send(&encode(&["BLPOP", "s2", "0"]));
    wait_blocked(&mut ctl, 2);
    assert_bytes!(ctl.cmd(&["RPUSH", "s1", "q"]), b":1\r\n");
    assert_bytes!(late_reply(&mut blocked), b"$1\r\nq\r\n");
    assert_bytes!(late_reply(&mut second), b"*2\r\n$2\r\ns2\r\n$1\r\nq\r\n");
    assert_bytes!(ctl.cmd(&["EXISTS", "s1", "s2"]), b":0\r\n");
}

#[test]
fn blmpop_wakes_with_count() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["RPUSH", "m2", "1", "2", "3"]), b":3\r\n");
    assert_bytes!(
        late_reply(&mut blocked),
        b"*2\r\n$2\r\nm2\r\n*2\r\n$1\r\n3\r\n$1\r\n2\r\n"
    );
    assert_bytes!(ctl.cmd(&["LRANGE", "m2", "0", "-1"]), b"*1\r\n$1\r\n1\r\n");
}

#[test]
fn bzpopmin_bzpopmax_bzmpop_wake() {
    let t = exclusive();
    let mut blocked = t.raw_conn();
    let mut ctl = t.raw_conn();
    blocked.send(&encode(&["BZPOPMIN", "z", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["ZADD", "z", "2", "b", "1", "a"]), b":2\r\n");
    assert_bytes!(late_reply(&mut blocked), b"*3\r\n$1\r\nz\r\n$1\r\na\r\n$1\r\n1\r\n");
    blocked.send(&encode(&["BZPOPMAX", "z0", "z2", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["ZADD", "z2", "2.5", "b", "1", "a"]), b":2\r\n");
    assert_bytes!(late_reply(&mut blocked), b"*3\r\n$2\r\nz2\r\n$1\r\nb\r\n$3\r\n2.5\r\n");
    blocked.send(&encode(&["BZMPOP", "0", "1", "z3", "MAX", "COUNT", "10"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["ZADD", "z3", "2", "b", "1", "a"]), b":2\r\n");
    assert_bytes!(
        late_reply(&mut blocked),
        b"*2\r\n$2\r\nz3\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    );
    assert_bytes!(ctl.cmd(&["EXISTS", "z3"]), b":0\r\n");
}

#[test]
fn info_counts_blocked_clients() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    let info = parse(&ctl.cmd(&["INFO", "clients"])).text();
    assert!(info.contains("blocked_clients:0\r\n"), "{info}");
    let mut a = t.raw_conn();
    let mut b = t.raw_conn();
    a.send(&encode(&["BLPOP", "x", "0"]));
    b.send(&encode(&["BZPOPMIN", "y", "0"]));
    wait_blocked(&mut ctl, 2);
    assert_bytes!(ctl.cmd(&["RPUSH", "x", "1"]), b":1\r\n");
    assert_bytes!(late_reply(&mut a), b"*2\r\n$1\r\nx\r\n$1\r\n1\r\n");
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["ZADD", "y", "1", "m"]), b":1\r\n");
    assert_bytes!(late_reply(&mut b), b"*3\r\n$1\r\ny\r\n$1\r\nm\r\n$1\r\n1\r\n");
    wait_blocked(&mut ctl, 0);
}

/// WAIT without replicas (Basalt has no replication; Redis 7.0.15 with none answers the
/// same): 0 at once for 0 replicas or inside EXEC, else 0 after the timeout.
#[test]
fn wait_without_replicas() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["WAIT", "0", "0"]), b":0\r\n");
    assert_bytes!(c.cmd(&["WAIT", "-1", "0"]), b":0\r\n");
    let start = Instant::now();
    assert_bytes!(c.cmd(&["WAIT", "1", "100"]), b":0\r\n");
    assert!(start.elapsed() >= Duration::from_millis(90), "{:?}", start.elapsed());
    assert_bytes!(c.cmd(&["WAIT", "x", "0"]), b"-ERR value is not an integer or out of range\r\n");
    assert_bytes!(c.cmd(&["WAIT", "1", "x"]), b"-ERR timeout is not an integer or out of range\r\n");
    assert_bytes!(c.cmd(&["WAIT", "1", "1.5"]), b"-ERR timeout is not an integer or out of range\r\n");
    assert_bytes!(c.cmd(&["WAIT", "1", "-1"]), b"-ERR timeout is negative\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["WAIT", "1", "0"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n:0\r\n");
    // Forever (0) until the client goes: the server stays healthy.
    let mut forever = t.raw_conn();
    forever.send(&encode(&["WAIT", "1", "0"]));
    assert!(forever.try_read_reply(Duration::from_millis(300)).is_err(), "WAIT 1 0 answered");
    drop(forever);
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}

/// CLIENT UNBLOCK ends a wait with its timeout reply (a null, or WAIT's 0) or with the
/// UNBLOCKED error; 0 for a client that is not blocked.
#[test]
fn client_unblock() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    let mut waiter = t.raw_conn();
    let id = parse(&waiter.cmd(&["CLIENT", "ID"])).int().to_string();
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", &id]), b":0\r\n");
    waiter.send(&encode(&["BLPOP", "unblock:l", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", &id]), b":1\r\n");
    assert_bytes!(late_reply(&mut waiter), b"*-1\r\n");
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", &id]), b":0\r\n");
    waiter.send(&encode(&["BZPOPMIN", "unblock:z", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", &id, "error"]), b":1\r\n");
    assert_bytes!(late_reply(&mut waiter), b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n");
    waiter.send(&encode(&["WAIT", "1", "0"]));
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", &id, "TIMEOUT"]), b":1\r\n");
    assert_bytes!(late_reply(&mut waiter), b":0\r\n");
    wait_blocked(&mut ctl, 0);
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", "x", "foo"]), b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n");
    assert_bytes!(ctl.cmd(&["CLIENT", "UNBLOCK", "x"]), b"-ERR value is not an integer or out of range\r\n");
    assert_bytes!(waiter.cmd(&["PING"]), b"+PONG\r\n");
}

/// Issue 26, defect 7: a BRPOPLPUSH blocked while its destination holds a string is
/// answered with WRONGTYPE when the source gets an element (it was left waiting
/// forever), the element stays in the source, and the next waiter is served with it.
#[test]
fn a_blocked_move_whose_destination_has_the_wrong_type_gets_the_error() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "dst", "string"]), b"+OK\r\n");
    let mut first = t.raw_conn();
    first.send(&encode(&["BRPOPLPUSH", "src", "dst", "0"]));
    wait_blocked(&mut c, 1);
    let mut second = t.raw_conn();
    second.send(&encode(&["BLMOVE", "src", "dst2", "RIGHT", "LEFT", "0"]));
    wait_blocked(&mut c, 2);
    assert_bytes!(c.cmd(&["LPUSH", "src", "x"]), b":1\r\n");
    assert_bytes!(first.read_reply(), b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assert_bytes!(second.read_reply(), b"$1\r\nx\r\n");
    assert_bytes!(c.cmd(&["LRANGE", "dst2", "0", "-1"]), b"*1\r\n$1\r\nx\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "src"]), b":0\r\n");
    // Alone, the element stays in the source.
    first.send(&encode(&["BRPOPLPUSH", "src", "dst", "0"]));
    wait_blocked(&mut c, 1);
    assert_bytes!(c.cmd(&["LPUSH", "src", "y"]), b":1\r\n");
    assert_bytes!(first.read_reply(), b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
    assert_bytes!(c.cmd(&["LRANGE", "src", "0", "-1"]), b"*1\r\n$1\r\ny\r\n");
    assert_bytes!(first.cmd(&["PING"]), b"+PONG\r\n");
}

/// A blocked BRPOPLPUSH served by another client's push changes its destination:
/// a WATCH of the destination sees it (Redis signals both keys).
#[test]
fn a_served_blocked_move_touches_the_watched_destination() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let mut watcher = t.raw_conn();
    assert_bytes!(watcher.cmd(&["WATCH", "dst"]), b"+OK\r\n");
    let mut blocked = t.raw_conn();
    blocked.send(&encode(&["BRPOPLPUSH", "src", "dst", "0"]));
    wait_blocked(&mut c, 1);
    assert_bytes!(c.cmd(&["LPUSH", "src", "x"]), b":1\r\n");
    assert_bytes!(blocked.read_reply(), b"$1\r\nx\r\n");
    assert_bytes!(watcher.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(watcher.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(watcher.cmd(&["EXEC"]), b"*-1\r\n");
}
