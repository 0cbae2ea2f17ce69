//! Keyspace notifications (`notify-keyspace-events`): the setting's letters, the
//! `__keyspace@<db>__` and `__keyevent@<db>__` messages and their order, `expired`
//! from a lookup and from the active cycle, events of blocked pops served by another
//! client's push, transactions, RESP3 push frames, and with the append-only log on.
//!
//! The setting is server-wide, so every test has a server of its own. The whole
//! command set is compared with Redis's event stream by the differential test
//! (`tests/py/test_differential.py`); these tests pin the cases it cannot reach.

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

fn bulk(s: &str) -> String {
    format!("${}\r\n{}\r\n", s.len(), s)
}

/// A subscriber to every keyspace and keyevent channel of the server.
fn subscriber(srv: &Srv) -> RawConn {
    let mut sub = srv.raw_conn();
    sub.send(&encode(&["PSUBSCRIBE", "__key*@*__:*"]));
    let confirm = sub.read_reply();
    assert!(confirm.starts_with(b"*3\r\n$10\r\npsubscribe"), "{}", show(&confirm));
    sub
}

/// The next `n` notifications as (channel, message) text pairs.
fn next(sub: &mut RawConn, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|_| {
            let r = parse(&sub.read_reply());
            let items = r.items();
            assert_eq!(items[0].text(), "pmessage");
            (items[2].text(), items[3].text())
        })
        .collect()
}

/// The keyspace and keyevent messages of events `(event, key)` in database `db`, in the
/// order Redis publishes them.
fn both(db: i64, events: &[(&str, &str)]) -> Vec<(String, String)> {
    events
        .iter()
        .flat_map(|(event, key)| {
            [
                (format!("__keyspace@{db}__:{key}"), event.to_string()),
                (format!("__keyevent@{db}__:{event}"), key.to_string()),
            ]
        })
        .collect()
}

#[test]
fn the_setting_reads_back_as_redis_writes_it_and_refuses_unknown_letters() {
    let srv = exclusive();
    let mut c = srv.raw_conn();
    for (set, shown) in [("KEA", "AKE"), ("Kx", "xK"), ("KEAmn", "AKEm"), ("Eg$lshzxetd", "AE"), ("mn", "nm"), ("", "")] {
        assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", set]), b"+OK\r\n", "{set}");
        let got = c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]);
        assert_bytes!(got, format!("*2\r\n{}{}", bulk("notify-keyspace-events"), bulk(shown)).into_bytes());
    }
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEq"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n"
    );
    // The refused value changed nothing.
    assert_bytes!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]),
        format!("*2\r\n{}{}", bulk("notify-keyspace-events"), bulk("")).into_bytes()
    );
}

#[test]
fn writes_publish_their_events_in_order_and_nothing_is_published_when_off() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    // Off by default: these produce nothing.
    c.cmd(&["SET", "n:off", "1"]);
    c.cmd(&["DEL", "n:off"]);
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]), b"+OK\r\n");
    c.cmd(&["SET", "n:a", "1", "EX", "100"]);
    c.cmd(&["RPUSH", "n:l", "x", "y"]);
    c.cmd(&["LMOVE", "n:l", "n:m", "LEFT", "RIGHT"]);
    c.cmd(&["LPOP", "n:l"]);
    c.cmd(&["RENAME", "n:a", "n:b"]);
    c.cmd(&["HSET", "n:h", "f", "1"]);
    c.cmd(&["HDEL", "n:h", "f"]);
    c.cmd(&["DEL", "n:b", "n:none", "n:m"]);
    let want = both(
        db,
        &[
            ("set", "n:a"),
            ("expire", "n:a"),
            ("rpush", "n:l"),
            // LMOVE: the destination's push, then the source's pop.
            ("rpush", "n:m"),
            ("lpop", "n:l"),
            ("lpop", "n:l"),
            ("del", "n:l"),
            ("rename_from", "n:a"),
            ("rename_to", "n:b"),
            ("hset", "n:h"),
            ("hdel", "n:h"),
            ("del", "n:h"),
            ("del", "n:b"),
            ("del", "n:m"),
        ],
    );
    assert_eq!(next(&mut sub, want.len()), want);
    sub.expect_silence(Duration::from_millis(100));
}

#[test]
fn only_the_configured_classes_and_channels_are_published() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    // Key-event channel only, lists and new keys only.
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Eln"]), b"+OK\r\n");
    c.cmd(&["SET", "c:s", "1"]);
    c.cmd(&["LPUSH", "c:l", "a"]);
    c.cmd(&["RPOP", "c:l"]);
    let want: Vec<(String, String)> = [("new", "c:s"), ("new", "c:l"), ("lpush", "c:l"), ("rpop", "c:l")]
        .iter()
        .map(|(e, k)| (format!("__keyevent@{db}__:{e}"), k.to_string()))
        .collect();
    assert_eq!(next(&mut sub, want.len()), want);
    sub.expect_silence(Duration::from_millis(100));
}

#[test]
fn expired_keys_are_reported_by_a_lookup_and_by_the_active_cycle() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KExm"]), b"+OK\r\n");
    c.cmd(&["SET", "x:read", "1", "PX", "30"]);
    std::thread::sleep(Duration::from_millis(60));
    // A read that finds the key expired: `expired`, then its miss.
    assert_eq!(c.cmd(&["GET", "x:read"]), b"$-1\r\n");
    assert_eq!(next(&mut sub, 4), both(db, &[("expired", "x:read"), ("keymiss", "x:read")]));
    // Nobody reads this one: the active cycle removes it (hz 10) and reports it.
    c.cmd(&["SET", "x:idle", "1", "PX", "30"]);
    let mut sub_slow = sub;
    let r = sub_slow.try_read_reply(Duration::from_secs(5)).expect("the active cycle reports the expiry");
    let items = parse(&r);
    assert_eq!(items.items()[2].text(), format!("__keyspace@{db}__:x:idle"));
    assert_eq!(items.items()[3].text(), "expired");
}

#[test]
fn a_served_blocked_pop_reports_its_pop_after_the_push_that_served_it() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]), b"+OK\r\n");
    let mut waiter = srv.raw_conn();
    waiter.send(&encode(&["BLPOP", "b:list", "5"]));
    wait_blocked(&mut c, 1);
    assert_eq!(c.cmd(&["RPUSH", "b:list", "v"]), b":1\r\n");
    assert_bytes!(waiter.read_reply(), arr(&["b:list", "v"]));
    assert_eq!(next(&mut sub, 6), both(db, &[("rpush", "b:list"), ("lpop", "b:list"), ("del", "b:list")]));
}

#[test]
fn a_transaction_reports_its_commands_events_in_order() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]), b"+OK\r\n");
    c.cmd(&["MULTI"]);
    c.cmd(&["SADD", "t:s", "a", "b"]);
    c.cmd(&["INCR", "t:n"]);
    c.cmd(&["SREM", "t:s", "a", "b"]);
    sub.expect_silence(Duration::from_millis(50));
    let exec = c.cmd(&["EXEC"]);
    assert_bytes!(exec, b"*3\r\n:2\r\n:1\r\n:2\r\n");
    let want = both(db, &[("sadd", "t:s"), ("incrby", "t:n"), ("srem", "t:s"), ("del", "t:s")]);
    assert_eq!(next(&mut sub, want.len()), want);
}

#[test]
fn a_resp3_subscriber_gets_push_frames() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = srv.raw_conn();
    assert!(sub.cmd(&["HELLO", "3"]).starts_with(b"%"));
    sub.send(&encode(&["SUBSCRIBE", &format!("__keyevent@{db}__:zadd")]));
    assert!(sub.read_reply().starts_with(b">3\r\n$9\r\nsubscribe"));
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Ez"]), b"+OK\r\n");
    c.cmd(&["ZADD", "r:z", "1", "m"]);
    let channel = format!("__keyevent@{db}__:zadd");
    assert_bytes!(sub.read_reply(), format!(">3\r\n{}{}{}", bulk("message"), bulk(&channel), bulk("r:z")).into_bytes());
}

#[test]
fn redis_rs_pubsub_receives_notifications() {
    let srv = exclusive();
    let db = srv.db;
    let mut c = srv.conn();
    let mut sub_conn = srv.conn();
    let mut sub = sub_conn.as_pubsub();
    sub.psubscribe(format!("__keyspace@{db}__:rs:*")).expect("psubscribe");
    let _: () = q(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "K$"]);
    let _: () = q(&mut c, &["SET", "rs:k", "v"]);
    let _: i64 = q(&mut c, &["APPEND", "rs:k", "w"]);
    let mut got = Vec::new();
    for _ in 0..2 {
        let msg = sub.get_message().expect("message");
        got.push((msg.get_channel_name().to_string(), msg.get_payload::<String>().expect("payload")));
    }
    let ch = format!("__keyspace@{db}__:rs:k");
    assert_eq!(got, [(ch.clone(), "set".to_string()), (ch, "append".to_string())]);
}

#[test]
fn with_the_log_on_notifications_still_arrive_in_order() {
    // Every write durable before its reply: the messages wait for the log as replies do.
    let Some(srv) = exclusive_with_args(&["--appendonly", "yes", "--appendfsync", "always"]) else { return };
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"]), b"+OK\r\n");
    let mut want = Vec::new();
    for i in 0..20 {
        let key = format!("a:{i}");
        c.cmd(&["SET", &key, "v"]);
        c.cmd(&["EXPIRE", &key, "100"]);
        want.extend(both(db, &[("set", &key), ("expire", &key)]));
    }
    c.cmd(&["MULTI"]);
    c.cmd(&["DEL", "a:0"]);
    c.cmd(&["LPUSH", "a:l", "x"]);
    c.cmd(&["EXEC"]);
    want.extend(both(db, &[("del", "a:0"), ("lpush", "a:l")]));
    assert_eq!(next(&mut sub, want.len()), want);
}

#[test]
fn keys_loaded_from_a_file_are_not_new() {
    // DEBUG RELOAD saves and loads the dataset: loading is not a command creating keys.
    let Some(srv) = exclusive_with_args(&["--enable-debug-command", "yes"]) else { return };
    let db = srv.db;
    let mut c = srv.raw_conn();
    let mut sub = subscriber(&srv);
    assert_eq!(c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEAn"]), b"+OK\r\n");
    c.cmd(&["SET", "r:k", "1"]);
    assert_eq!(next(&mut sub, 4), both(db, &[("new", "r:k"), ("set", "r:k")]));
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]), b"+OK\r\n");
    c.cmd(&["DEL", "r:k"]);
    assert_eq!(next(&mut sub, 2), both(db, &[("del", "r:k")]));
}
