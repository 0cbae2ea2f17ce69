//! Issue 26, defect 8: Basalt's append-only log is Redis's log. A user who hands
//! `appendonlydir` to Redis 7.0.15 gets what Basalt held: relative expiries were
//! logged as absolute times (not given a fresh TTL at load), and keys that expired and
//! were written again start from nothing (their expiry was logged as a DEL). Runs when
//! testing Basalt with /usr/bin/redis-server installed.

use std::path::Path;
use std::time::Duration;

use super::*;

/// A key's PTTL on a connection (-1: none, -2: absent).
fn pttl(c: &mut RawConn, key: &str) -> i64 {
    int(c, &["PTTL", key])
}

#[test]
fn redis_loads_basalts_log_with_the_same_keys_values_and_ttls() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else { return };
    let mut c = p.conn();
    let redis = Path::new("/usr/bin/redis-server");
    if !is_basalt(&mut c) || !redis.exists() {
        eprintln!("skipped: needs Basalt under test and /usr/bin/redis-server");
        return;
    }
    // Relative expiries of every kind, and keys that will expire before being written
    // again.
    ok(&mut c, &["SET", "short", "v", "PX", "300"]);
    ok(&mut c, &["SET", "long", "v", "EX", "1000"]);
    ok(&mut c, &["SET", "long-at", "v", "EXAT", "4000000000"]);
    ok(&mut c, &["SETEX", "setex", "1000", "v"]);
    ok(&mut c, &["PSETEX", "psetex", "1000000", "v"]);
    assert_eq!(int(&mut c, &["RPUSH", "list", "a"]), 1);
    assert_eq!(int(&mut c, &["PEXPIRE", "list", "300"]), 1);
    ok(&mut c, &["SET", "getex", "v"]);
    r(&mut c, &["GETEX", "getex", "EX", "1000"]);
    ok(&mut c, &["SET", "counter", "5", "PX", "300"]);
    ok(&mut c, &["SET", "expire", "v"]);
    assert_eq!(int(&mut c, &["EXPIRE", "expire", "1000", "NX"]), 1);
    ok(&mut c, &["SET", "gone", "v"]);
    assert_eq!(int(&mut c, &["EXPIREAT", "gone", "1"]), 1);
    r(&mut c, &["INCRBYFLOAT", "float", "1.1"]);
    r(&mut c, &["INCRBYFLOAT", "float", "2.2"]);
    assert_eq!(int(&mut c, &["HSET", "hash", "f", "1"]), 1);
    r(&mut c, &["HINCRBYFLOAT", "hash", "f", "0.5"]);
    let dump = bytes(&r(&mut c, &["DUMP", "long"]));
    ok(&mut c, &[b"RESTORE".as_slice(), b"restored", b"1000000", &dump]);
    std::thread::sleep(Duration::from_millis(500));
    // After their expiry: a list pushed again, a counter incremented again, a read.
    assert_eq!(int(&mut c, &["RPUSH", "list", "b"]), 1);
    assert_eq!(int(&mut c, &["INCR", "counter"]), 1);
    assert_eq!(c.cmd(&["GET", "short"]), b"$-1\r\n");
    let before = snapshot(&mut c, 0..1);
    let ttls: Vec<(&str, i64)> = ["long", "long-at", "setex", "psetex", "getex", "expire", "restored", "list", "counter"]
        .iter()
        .map(|&k| (k, pttl(&mut c, k)))
        .collect();
    // A clean stop (the file ends with its last record, as Redis writes it).
    let mut s = p.server.take().expect("server");
    c.send(&encode(&["SHUTDOWN"]));
    assert!(s.wait_exit(Duration::from_secs(10)).is_some(), "Basalt did not stop");

    // Redis 7.0.15 on the same directory.
    let rs = ServerProcess::spawn_in(redis, p.dir.path(), &["--appendonly", "yes"]);
    let mut rc = RawConn::connect(&rs.addr);
    let after = snapshot(&mut rc, 0..1);
    assert_same(&before, &after);
    for (key, ttl) in ttls {
        let got = pttl(&mut rc, key);
        if ttl < 0 {
            assert_eq!(got, ttl, "{key}: Basalt's PTTL {ttl}, Redis's {got}");
        } else {
            // The same absolute time: a little less left now, never more (a relative
            // time logged as sent would start again at load).
            assert!(got <= ttl && got > ttl - 30_000, "{key}: Basalt's PTTL {ttl}, Redis's {got}\n{}", rs.log());
        }
    }
}
