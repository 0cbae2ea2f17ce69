//! Key expiry: lazy (on access) and active (background). Tests that switch
//! active expiry off or count keys use `exclusive()`.

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

#[test]
fn key_with_px_expires() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "exp_px:k";
    assert_bytes!(c.cmd(&["SET", k, "v", "PX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\nv\r\n");
    let gone = wait_until(Duration::from_secs(3), || c.cmd(&["GET", k]) == b"$-1\r\n");
    assert!(gone, "key with PX 100 still there after 3 s");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-2\r\n");
    assert_bytes!(c.cmd(&["PTTL", k]), b":-2\r\n");
}

#[test]
fn ttl_counts_down() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "exp_countdown:k";
    assert_bytes!(c.cmd(&["SET", k, "v", "PX", "3000"]), b"+OK\r\n");
    let first = parse(&c.cmd(&["PTTL", k])).int();
    std::thread::sleep(Duration::from_millis(300));
    let second = parse(&c.cmd(&["PTTL", k])).int();
    assert!(first <= 3000 && second < first, "{first} then {second}");
    assert!(second >= 0);
}

#[test]
fn expire_then_access_after_deadline() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "exp_pexpire:k";
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PEXPIRE", k, "150"]), b":1\r\n");
    std::thread::sleep(Duration::from_millis(400));
    // Every read path must treat the key as missing.
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["STRLEN", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["TYPE", k]), b"+none\r\n");
    assert_bytes!(
        c.cmd(&["RENAME", k, "exp_pexpire:other"]),
        b"-ERR no such key\r\n"
    );
    // Writing an expired key starts from scratch.
    assert_bytes!(c.cmd(&["SET", k, "v", "PX", "100"]), b"+OK\r\n");
    std::thread::sleep(Duration::from_millis(300));
    assert_bytes!(c.cmd(&["APPEND", k, "new"]), b":3\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(
        c.cmd(&["SET", "exp_pexpire:n", "5", "PX", "100"]),
        b"+OK\r\n"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_bytes!(c.cmd(&["INCR", "exp_pexpire:n"]), b":1\r\n");
}

#[test]
fn set_exat_pxat_in_the_past() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "exp_past:a", "v", "EXAT", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "exp_past:a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", "exp_past:b", "v", "PXAT", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", "exp_past:b"]), b"$-1\r\n");
}

#[test]
fn persist_cancels_expiry() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "exp_persist:k";
    assert_bytes!(c.cmd(&["SET", k, "v", "PX", "200"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PERSIST", k]), b":1\r\n");
    std::thread::sleep(Duration::from_millis(400));
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\nv\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
}

#[test]
fn active_expiry_removes_keys_without_access() {
    let t = exclusive();
    let mut c = t.raw_conn();
    for i in 0..500 {
        assert_bytes!(
            c.cmd(&["SET", &format!("act:{i}"), "v", "PX", "100"]),
            b"+OK\r\n"
        );
    }
    assert_bytes!(c.cmd(&["SET", "keeper", "v"]), b"+OK\r\n");
    let drained = wait_until(Duration::from_secs(5), || c.cmd(&["DBSIZE"]) == b":1\r\n");
    assert!(
        drained,
        "DBSIZE still {} after 5 s",
        show(&c.cmd(&["DBSIZE"]))
    );
    let stats = parse(&c.cmd(&["INFO", "stats"])).text();
    let expired: i64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("expired_keys:"))
        .expect("expired_keys")
        .trim()
        .parse()
        .expect("int");
    assert!(expired >= 500, "expired_keys={expired}");
}

#[test]
fn lazy_expiry_with_active_expire_disabled() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), b"+OK\r\n");
    for i in 0..10 {
        assert_bytes!(
            c.cmd(&["SET", &format!("lazy:{i}"), "v", "PX", "50"]),
            b"+OK\r\n"
        );
    }
    std::thread::sleep(Duration::from_millis(400));
    // Expired but never accessed: still counted by DBSIZE.
    assert_bytes!(c.cmd(&["DBSIZE"]), b":10\r\n");
    // KEYS and SCAN do not report them (KEYS does not delete them either).
    assert_bytes!(c.cmd(&["KEYS", "*"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":10\r\n");
    // Accessing a key deletes it.
    assert_bytes!(c.cmd(&["GET", "lazy:0"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":9\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "lazy:1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":8\r\n");
    assert_bytes!(c.cmd(&["TTL", "lazy:2"]), b":-2\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":7\r\n");
    // Re-enabling active expiry removes the rest.
    assert_bytes!(c.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]), b"+OK\r\n");
    let drained = wait_until(Duration::from_secs(5), || c.cmd(&["DBSIZE"]) == b":0\r\n");
    assert!(drained, "DBSIZE still {}", show(&c.cmd(&["DBSIZE"])));
}

#[test]
fn info_keyspace_counts_volatile_keys() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "p", "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "v1", "v", "EX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "v2", "v", "EX", "100"]), b"+OK\r\n");
    let text = parse(&c.cmd(&["INFO", "keyspace"])).text();
    let want = format!("db{}:keys=3,expires=2,avg_ttl=", t.db);
    assert!(text.lines().any(|l| l.starts_with(&want)), "{text}");
    assert_bytes!(c.cmd(&["PERSIST", "v1"]), b":1\r\n");
    let text = parse(&c.cmd(&["INFO", "keyspace"])).text();
    let want = format!("db{}:keys=3,expires=1,avg_ttl=", t.db);
    assert!(text.lines().any(|l| l.starts_with(&want)), "{text}");
}
