//! Client-side caching (CLIENT TRACKING): invalidations in the default mode (once per
//! read, after the reply for the client's own write, not at all with NOLOOP), BCAST
//! prefixes, OPTIN with CLIENT CACHING, REDIRECT to a RESP2 subscriber and its loss,
//! FLUSHALL, expiry, the table's limit, and what CLIENT TRACKINGINFO, GETREDIR, LIST and
//! INFO report. The whole command set's invalidations are compared with Redis's by the
//! differential test (`tests/py/test_differential.py`).
//!
//! Tracking is server-wide state (INFO counts, the table), so every test has a server
//! of its own.

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

/// A RESP3 connection with tracking on (extra options after ON).
fn tracker(srv: &Srv, options: &[&str]) -> RawConn {
    let mut t = srv.raw_conn();
    assert!(t.cmd(&["HELLO", "3"]).starts_with(b"%"));
    let mut args = vec!["CLIENT", "TRACKING", "ON"];
    args.extend_from_slice(options);
    assert_bytes!(t.cmd(&args), b"+OK\r\n");
    t
}

/// The RESP3 invalidation push of `keys`.
fn invalidate(keys: &[&str]) -> Vec<u8> {
    let mut out = format!(">2\r\n$10\r\ninvalidate\r\n*{}\r\n", keys.len());
    for k in keys {
        out.push_str(&format!("${}\r\n{k}\r\n", k.len()));
    }
    out.into_bytes()
}

#[test]
fn options_are_checked_and_reported_as_redis_does() {
    let srv = exclusive();
    let mut c = srv.raw_conn();
    assert_bytes!(c.cmd(&["CLIENT", "GETREDIR"]), b":-1\r\n");
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKINGINFO"]),
        b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n"
    );
    for (args, error) in [
        (&["CLIENT", "TRACKING", "maybe"][..], "ERR syntax error"),
        (&["CLIENT", "TRACKING", "on", "foo"], "ERR syntax error"),
        (&["CLIENT", "TRACKING", "on", "redirect", "x"], "ERR value is not an integer or out of range"),
        (&["CLIENT", "TRACKING", "on", "REDIRECT", "999999"], "ERR The client ID you want redirect to does not exist"),
        (&["CLIENT", "TRACKING", "on", "prefix", "a"], "ERR PREFIX option requires BCAST mode to be enabled"),
        (&["CLIENT", "TRACKING", "on", "optin", "optout"], "ERR You can't specify both OPTIN mode and OPTOUT mode"),
        (
            &["CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "ab"],
            "ERR Prefix 'a' overlaps with another provided prefix 'ab'. Prefixes for a single client must not overlap.",
        ),
        (
            &["CLIENT", "CACHING", "yes"],
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled",
        ),
    ] {
        assert_bytes!(c.cmd(args), format!("-{error}\r\n").into_bytes());
    }
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "on", "optin"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "GETREDIR"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKINGINFO"]),
        b"*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$5\r\noptin\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "CACHING", "no"]),
        b"-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKING", "on", "optout"]),
        b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n"
    );
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "off"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "on", "bcast"]), b"+OK\r\n");
    // BCAST without PREFIX is every key: the empty prefix.
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKINGINFO"]),
        b"*6\r\n$5\r\nflags\r\n*2\r\n$2\r\non\r\n$5\r\nbcast\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*1\r\n$0\r\n\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKING", "on", "bcast", "prefix", "b"]),
        b"-ERR Prefix 'b' overlaps with an existing prefix ''. Prefixes for a single client must not overlap.\r\n"
    );
}

/// Redis's order of the checks: options as they are read (one REDIRECT), ON or OFF,
/// then PREFIX without BCAST, a BCAST switch, OPTIN/OPTOUT with BCAST, both, an
/// OPTIN/OPTOUT switch, and last the prefixes (one registered again overlaps itself).
/// CLIENT CACHING in the default mode names the mode it needs; flags read `tRB`.
#[test]
fn checks_come_in_redis_order() {
    let srv = exclusive();
    let mut c = srv.raw_conn();
    let mut other = srv.raw_conn();
    let oid = parse(&other.cmd(&["CLIENT", "ID"])).int().to_string();
    for (args, error) in [
        (&["CLIENT", "TRACKING", "maybe", "REDIRECT", "999999"][..], "ERR The client ID you want redirect to does not exist"),
        (&["CLIENT", "TRACKING", "on", "REDIRECT", &oid, "REDIRECT", &oid], "ERR A client can only redirect to a single other client"),
        (&["CLIENT", "TRACKING", "on", "BCAST", "OPTIN", "PREFIX", "a", "PREFIX", "ab"], "ERR OPTIN and OPTOUT are not compatible with BCAST"),
        (&["CLIENT", "TRACKING", "on", "BCAST", "OPTIN", "OPTOUT"], "ERR OPTIN and OPTOUT are not compatible with BCAST"),
    ] {
        assert_bytes!(c.cmd(args), format!("-{error}\r\n").into_bytes());
    }
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "on"]), b"+OK\r\n");
    for (args, error) in [
        (&["CLIENT", "CACHING", "yes"][..], "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."),
        (&["CLIENT", "CACHING", "no"], "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."),
        (&["CLIENT", "CACHING", "maybe"], "ERR syntax error"),
    ] {
        assert_bytes!(c.cmd(args), format!("-{error}\r\n").into_bytes());
    }
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "off"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "REDIRECT", &oid]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKING", "on", "PREFIX", "b"]),
        b"-ERR PREFIX option requires BCAST mode to be enabled\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a"]),
        b"-ERR Prefix 'a' overlaps with an existing prefix 'a'. Prefixes for a single client must not overlap.\r\n"
    );
    // The redirect client goes: the next invalidation finds it gone.
    drop(other);
    assert!(wait_until(Duration::from_secs(5), || {
        !parse(&c.cmd(&["CLIENT", "LIST"])).text().contains(&format!("id={oid} "))
    }));
    let mut w = srv.raw_conn();
    w.cmd(&["SET", "a1", "1"]);
    assert!(wait_until(Duration::from_secs(5), || {
        parse(&c.cmd(&["CLIENT", "LIST"])).text().lines().any(|l| l.contains(" flags=tRB "))
    }));
}

/// Inside MULTI/EXEC a write then a read of one key: the write's invalidation comes
/// (after EXEC's reply), and the read tracks the key again, so a later change is told
/// too; a change before a FLUSHALL is told before the flush; the same with the
/// append-only log, where the transaction's changes reach the table at its end.
#[test]
fn a_read_after_a_write_in_exec_tracks_the_key_again() {
    let plain = exclusive();
    let logged = exclusive_with_args(&["--appendonly", "yes", "--appendfsync", "always"]);
    for srv in std::iter::once(&plain).chain(logged.as_ref()) {
        let mut t = tracker(srv, &[]);
        let mut w = srv.raw_conn();
        t.cmd(&["GET", "xk"]);
        assert_bytes!(t.cmd(&["MULTI"]), b"+OK\r\n");
        assert_bytes!(t.cmd(&["SET", "xk", "v"]), b"+QUEUED\r\n");
        assert_bytes!(t.cmd(&["GET", "xk"]), b"+QUEUED\r\n");
        assert_bytes!(t.cmd(&["EXEC"]), b"*2\r\n+OK\r\n$1\r\nv\r\n");
        assert_bytes!(t.read_reply(), invalidate(&["xk"]));
        w.cmd(&["SET", "xk", "2"]);
        assert_bytes!(t.read_reply(), invalidate(&["xk"]));
        t.expect_silence(Duration::from_millis(100));
        // A key changed before a FLUSHALL of the same transaction is told before it.
        t.cmd(&["GET", "xa"]);
        assert_bytes!(w.cmd(&["MULTI"]), b"+OK\r\n");
        w.cmd(&["SET", "xa", "1"]);
        w.cmd(&["FLUSHALL"]);
        w.cmd(&["SET", "xb", "1"]);
        assert_bytes!(w.cmd(&["EXEC"]), b"*3\r\n+OK\r\n+OK\r\n+OK\r\n");
        assert_bytes!(t.read_reply(), invalidate(&["xa"]));
        assert_bytes!(t.read_reply(), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
        t.expect_silence(Duration::from_millis(100));
    }
}

#[test]
fn a_read_key_is_invalidated_once_when_another_client_changes_it() {
    let srv = exclusive();
    let mut w = srv.raw_conn();
    w.cmd(&["SET", "k1", "v"]);
    let mut t = tracker(&srv, &[]);
    assert_bytes!(t.cmd(&["GET", "k1"]), b"$1\r\nv\r\n");
    // A missing key read is tracked too.
    assert_bytes!(t.cmd(&["MGET", "k1", "k2"]), b"*2\r\n$1\r\nv\r\n_\r\n");
    w.cmd(&["SET", "k1", "x"]);
    assert_bytes!(t.read_reply(), invalidate(&["k1"]));
    // Not read again: no second message.
    w.cmd(&["SET", "k1", "y"]);
    w.cmd(&["SET", "k2", "y"]);
    assert_bytes!(t.read_reply(), invalidate(&["k2"]));
    // Keys are tracked by name, whatever the database.
    assert_bytes!(t.cmd(&["GET", "k3"]), b"_\r\n");
    w.cmd(&["SELECT", "1"]);
    w.cmd(&["SET", "k3", "1"]);
    assert_bytes!(t.read_reply(), invalidate(&["k3"]));
    t.expect_silence(Duration::from_millis(100));
}

#[test]
fn the_clients_own_write_is_invalidated_after_its_reply_unless_noloop() {
    let srv = exclusive();
    let mut t = tracker(&srv, &[]);
    t.cmd(&["GET", "own"]);
    t.send(&encode(&["SET", "own", "1"]));
    assert_bytes!(t.read_reply(), b"+OK\r\n");
    assert_bytes!(t.read_reply(), invalidate(&["own"]));
    let mut n = tracker(&srv, &["NOLOOP"]);
    let mut w = srv.raw_conn();
    n.cmd(&["GET", "nl"]);
    assert_bytes!(n.cmd(&["SET", "nl", "1"]), b"+OK\r\n");
    n.cmd(&["GET", "nl"]);
    w.cmd(&["SET", "nl", "2"]);
    assert_bytes!(n.read_reply(), invalidate(&["nl"]));
}

#[test]
fn bcast_reports_every_change_under_the_prefixes() {
    let srv = exclusive();
    let mut b = tracker(&srv, &["BCAST", "PREFIX", "user:", "PREFIX", "item:"]);
    let mut w = srv.raw_conn();
    w.cmd(&["SET", "user:1", "x"]);
    assert_bytes!(b.read_reply(), invalidate(&["user:1"]));
    w.cmd(&["SET", "other", "y"]);
    w.cmd(&["DEL", "item:9", "other"]);
    w.cmd(&["SET", "item:2", "z"]);
    assert_bytes!(b.read_reply(), invalidate(&["item:2"]));
    // The keys one command changed come in one message per prefix, prefixes and keys
    // in byte order (Redis: those of one pass of its event loop).
    w.cmd(&["MSET", "user:2", "a", "other", "b", "item:3", "c", "user:1", "d"]);
    assert_bytes!(b.read_reply(), invalidate(&["item:3"]));
    assert_bytes!(b.read_reply(), invalidate(&["user:1", "user:2"]));
    b.expect_silence(Duration::from_millis(100));
}

#[test]
fn optin_tracks_only_the_command_after_client_caching_yes() {
    let srv = exclusive();
    let mut o = tracker(&srv, &["OPTIN"]);
    let mut w = srv.raw_conn();
    o.cmd(&["GET", "oi1"]);
    assert_bytes!(o.cmd(&["CLIENT", "CACHING", "yes"]), b"+OK\r\n");
    o.cmd(&["GET", "oi2"]);
    o.cmd(&["GET", "oi3"]);
    w.cmd(&["MSET", "oi1", "1", "oi2", "2", "oi3", "3"]);
    assert_bytes!(o.read_reply(), invalidate(&["oi2"]));
    o.expect_silence(Duration::from_millis(100));
    // CLIENT's own subcommands leave the answer for the next command, and a
    // transaction is one command: every read EXEC runs is tracked, none after it.
    assert_bytes!(o.cmd(&["CLIENT", "CACHING", "yes"]), b"+OK\r\n");
    assert!(o.cmd(&["CLIENT", "TRACKINGINFO"]).starts_with(b"%3"));
    o.cmd(&["GET", "oi4"]);
    assert_bytes!(o.cmd(&["CLIENT", "CACHING", "yes"]), b"+OK\r\n");
    assert_bytes!(o.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(o.cmd(&["GET", "oi5"]), b"+QUEUED\r\n");
    assert_bytes!(o.cmd(&["GET", "oi6"]), b"+QUEUED\r\n");
    assert_bytes!(o.cmd(&["EXEC"]), b"*2\r\n_\r\n_\r\n");
    o.cmd(&["GET", "oi7"]);
    for key in ["oi4", "oi5", "oi6", "oi7"] {
        w.cmd(&["SET", key, "1"]);
    }
    for key in ["oi4", "oi5", "oi6"] {
        assert_bytes!(o.read_reply(), invalidate(&[key]));
    }
    o.expect_silence(Duration::from_millis(100));
}

#[test]
fn redirected_invalidations_reach_a_resp2_subscriber_and_a_lost_redirect_is_reported() {
    let srv = exclusive();
    let mut r = srv.raw_conn();
    let rid = parse(&r.cmd(&["CLIENT", "ID"])).int().to_string();
    assert!(r.cmd(&["SUBSCRIBE", "__redis__:invalidate"]).starts_with(b"*3\r\n$9\r\nsubscribe"));
    let mut t = srv.raw_conn();
    assert_bytes!(t.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", &rid]), b"+OK\r\n");
    assert_bytes!(t.cmd(&["CLIENT", "GETREDIR"]), format!(":{rid}\r\n").into_bytes());
    t.cmd(&["GET", "rk"]);
    let mut w = srv.raw_conn();
    w.cmd(&["SET", "rk", "1"]);
    assert_bytes!(r.read_reply(), b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$2\r\nrk\r\n");
    // FLUSHALL: everything, as a null, written in the tracking client's protocol (a
    // RESP3 tracker's null reaches the RESP2 subscriber as `_`, as in Redis 7.0.15).
    w.cmd(&["FLUSHALL"]);
    assert_bytes!(r.read_reply(), b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n");
    let mut t3 = srv.raw_conn();
    assert!(t3.cmd(&["HELLO", "3"]).starts_with(b"%"));
    assert_bytes!(t3.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", &rid]), b"+OK\r\n");
    assert_bytes!(t.cmd(&["CLIENT", "TRACKING", "off"]), b"+OK\r\n");
    w.cmd(&["FLUSHALL"]);
    assert_bytes!(r.read_reply(), b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n_\r\n");
    drop(t3);
    // A RESP3 client whose redirect client goes away is told so instead (Redis 7.0.15
    // tells it at each invalidation; the first is checked here, since when Redis
    // notices the loss varies).
    let mut r3 = srv.raw_conn();
    let r3id = parse(&r3.cmd(&["CLIENT", "ID"])).int().to_string();
    let mut t3 = srv.raw_conn();
    assert!(t3.cmd(&["HELLO", "3"]).starts_with(b"%"));
    assert_bytes!(t3.cmd(&["CLIENT", "TRACKING", "on", "REDIRECT", &r3id]), b"+OK\r\n");
    t3.cmd(&["GET", "gone1"]);
    drop(r3);
    assert!(wait_until(Duration::from_secs(5), || {
        let list = parse(&w.cmd(&["CLIENT", "LIST"])).text();
        !list.contains(&format!("id={r3id} "))
    }));
    w.cmd(&["SET", "gone1", "1"]);
    assert_bytes!(t3.read_reply(), format!(">2\r\n$21\r\ntracking-redir-broken\r\n:{r3id}\r\n").into_bytes());
    let list = parse(&w.cmd(&["CLIENT", "LIST"])).text();
    assert!(list.lines().any(|l| l.contains(" flags=tR ")), "{list}");
}

#[test]
fn flushes_and_expiry_invalidate() {
    let srv = exclusive();
    let mut t = tracker(&srv, &[]);
    let mut w = srv.raw_conn();
    t.cmd(&["GET", "f"]);
    w.cmd(&["FLUSHDB"]);
    assert_bytes!(t.read_reply(), b">2\r\n$10\r\ninvalidate\r\n_\r\n");
    w.cmd(&["SET", "e", "1", "PX", "300"]);
    assert_bytes!(t.cmd(&["GET", "e"]), b"$1\r\n1\r\n");
    // Nobody reads it again: the active cycle's removal is a change.
    let r = t.try_read_reply(Duration::from_secs(5)).expect("the expiry invalidates");
    assert_bytes!(r, invalidate(&["e"]));
}

#[test]
fn client_list_and_info_show_tracking() {
    let srv = exclusive();
    let mut t = tracker(&srv, &[]);
    let _b = tracker(&srv, &["BCAST", "PREFIX", "p:"]);
    t.cmd(&["GET", "i1"]);
    t.cmd(&["MGET", "i1", "i2"]);
    let info = parse(&t.cmd(&["INFO"])).text();
    for field in ["tracking_clients:2", "tracking_total_keys:2", "tracking_total_items:2", "tracking_total_prefixes:1"] {
        assert!(info.contains(&format!("{field}\r\n")), "{field} in {info}");
    }
    let me = parse(&t.cmd(&["CLIENT", "INFO"])).text();
    assert!(me.contains(" flags=t ") && me.contains(" redir=0 "), "{me}");
    let list = parse(&t.cmd(&["CLIENT", "LIST"])).text();
    assert!(list.contains(" flags=tB "), "{list}");
    assert_bytes!(t.cmd(&["CLIENT", "TRACKING", "off"]), b"+OK\r\n");
    let me = parse(&t.cmd(&["CLIENT", "INFO"])).text();
    assert!(me.contains(" flags=N ") && me.contains(" redir=-1 "), "{me}");
    drop(_b);
    assert!(wait_until(Duration::from_secs(5), || parse(&t.cmd(&["INFO", "clients"])).text().contains("tracking_clients:0\r\n")));
}

#[test]
fn the_table_is_bounded_by_tracking_table_max_keys() {
    let srv = exclusive();
    let mut t = tracker(&srv, &[]);
    let mut c = srv.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "2"]), b"+OK\r\n");
    t.cmd(&["GET", "m1"]);
    t.cmd(&["GET", "m2"]);
    t.cmd(&["GET", "m3"]);
    // One key over the limit: one of them is dropped, its reader told (Redis does it
    // from its timer, Basalt at once).
    let r = t.try_read_reply(Duration::from_secs(5)).expect("an eviction from the table");
    assert!(r.starts_with(b">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\nm"), "{}", show(&r));
    assert!(wait_until(Duration::from_secs(5), || parse(&c.cmd(&["INFO", "stats"])).text().contains("tracking_total_keys:2\r\n")));
}

/// Issue 26, defect 7: a key read in default mode, then tracking turned off and on
/// again in BCAST mode: a change of that key reaches the client once, as the BCAST
/// message (Redis skips BCAST clients when it invalidates a key's readers); it got
/// the stale per-key message first.
#[test]
fn keys_read_before_a_switch_to_bcast_are_not_invalidated_twice() {
    let t = shared();
    let mut c = t.raw_conn();
    c.cmd(&["HELLO", "3"]);
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "ON"]), b"+OK\r\n");
    c.cmd(&["GET", "trk26:k"]);
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "OFF"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "trk26:"]), b"+OK\r\n");
    let mut w = t.raw_conn();
    assert_bytes!(w.cmd(&["SET", "trk26:k", "v"]), b"+OK\r\n");
    assert_bytes!(c.read_reply(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\ntrk26:k\r\n");
    c.expect_silence(Duration::from_millis(200));
    assert_bytes!(c.cmd(&["CLIENT", "TRACKING", "OFF"]), b"+OK\r\n");
    w.cmd(&["DEL", "trk26:k"]);
}
