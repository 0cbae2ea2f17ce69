//! Pub/Sub: SUBSCRIBE, PSUBSCRIBE, UNSUBSCRIBE, PUNSUBSCRIBE, PUBLISH,
//! PUBSUB CHANNELS/NUMSUB/NUMPAT, the RESP2 subscribed-mode rule and RESP3
//! push frames.
//!
//! Channel and pattern names are unique per test, so that tests on the
//! shared server do not see each other's messages; tests that look at
//! server-wide state (PUBSUB ..., several patterns) get a server of their own.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

fn bulk(s: &str) -> String {
    format!("${}\r\n{}\r\n", s.len(), s)
}

/// A RESP2 subscribe-family frame: [kind, name, count].
fn frame(kind: &str, name: &str, count: i64) -> Vec<u8> {
    format!("*3\r\n{}{}:{count}\r\n", bulk(kind), bulk(name)).into_bytes()
}

/// The RESP3 form of [`frame`].
fn push(kind: &str, name: &str, count: i64) -> Vec<u8> {
    format!(">3\r\n{}{}:{count}\r\n", bulk(kind), bulk(name)).into_bytes()
}

fn message(channel: &str, payload: &str) -> Vec<u8> {
    format!("*3\r\n{}{}{}", bulk("message"), bulk(channel), bulk(payload)).into_bytes()
}

fn pmessage(pattern: &str, channel: &str, payload: &str) -> Vec<u8> {
    format!(
        "*4\r\n{}{}{}{}",
        bulk("pmessage"),
        bulk(pattern),
        bulk(channel),
        bulk(payload)
    )
    .into_bytes()
}

fn not_allowed(cmd: &str) -> Vec<u8> {
    format!(
        "-ERR Can't execute '{cmd}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"
    )
    .into_bytes()
}

/// Sends a command and reads `n` frames (bounded by the read timeout).
fn send_read(c: &mut RawConn, args: &[&str], n: usize) -> Vec<Vec<u8>> {
    c.send(&encode(args));
    (0..n).map(|_| c.read_reply()).collect()
}

fn texts(r: &Resp) -> Vec<String> {
    r.items().iter().map(|x| x.text()).collect()
}

#[test]
fn subscribe_and_psubscribe_reply_frames() {
    let t = shared();
    let mut c = t.raw_conn();
    let f = send_read(&mut c, &["SUBSCRIBE", "ps_frames:a", "ps_frames:b", "ps_frames:a"], 3);
    assert_bytes!(f[0], frame("subscribe", "ps_frames:a", 1));
    assert_bytes!(f[1], frame("subscribe", "ps_frames:b", 2));
    // Subscribing again answers again, with the same count.
    assert_bytes!(f[2], frame("subscribe", "ps_frames:a", 2));
    let f = send_read(&mut c, &["PSUBSCRIBE", "ps_frames:p*", "ps_frames:q?"], 2);
    // The count covers channels and patterns together.
    assert_bytes!(f[0], frame("psubscribe", "ps_frames:p*", 3));
    assert_bytes!(f[1], frame("psubscribe", "ps_frames:q?", 4));
    let f = send_read(&mut c, &["UNSUBSCRIBE", "ps_frames:a"], 1);
    assert_bytes!(f[0], frame("unsubscribe", "ps_frames:a", 3));
    // Unsubscribing from something not subscribed still answers.
    let f = send_read(&mut c, &["PUNSUBSCRIBE", "ps_frames:zz"], 1);
    assert_bytes!(f[0], frame("punsubscribe", "ps_frames:zz", 3));
    let f = send_read(&mut c, &["PUNSUBSCRIBE", "ps_frames:p*"], 1);
    assert_bytes!(f[0], frame("punsubscribe", "ps_frames:p*", 2));
    c.expect_silence(Duration::from_millis(100));
}

#[test]
fn unsubscribe_without_arguments() {
    let t = shared();
    let mut c = t.raw_conn();
    // Nothing subscribed: one frame with a nil name and count 0.
    assert_bytes!(c.cmd(&["UNSUBSCRIBE"]), b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n");
    assert_bytes!(c.cmd(&["PUNSUBSCRIBE"]), b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n");
    assert_bytes!(
        c.cmd(&["UNSUBSCRIBE", "ps_unsub:q"]),
        b"*3\r\n$11\r\nunsubscribe\r\n$10\r\nps_unsub:q\r\n:0\r\n"
    );
    // Not in subscribed mode after that.
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    // Several channels: one frame each, counts going down; order not defined.
    let names = ["ps_unsub:a", "ps_unsub:b", "ps_unsub:c"];
    let mut args = vec!["SUBSCRIBE"];
    args.extend_from_slice(&names);
    let _ = send_read(&mut c, &args, 3);
    let _ = send_read(&mut c, &["PSUBSCRIBE", "ps_unsub:p*", "ps_unsub:q*"], 2);
    let f = send_read(&mut c, &["UNSUBSCRIBE"], 3);
    let mut seen = BTreeSet::new();
    for (i, fr) in f.iter().enumerate() {
        let r = parse(fr);
        let v = r.items();
        assert_eq!(v[0].text(), "unsubscribe");
        seen.insert(v[1].text());
        assert_eq!(v[2].int(), 4 - i as i64, "{}", show(fr));
    }
    assert_eq!(seen, names.iter().map(|s| s.to_string()).collect());
    let f = send_read(&mut c, &["PUNSUBSCRIBE"], 2);
    let mut seen = BTreeSet::new();
    for (i, fr) in f.iter().enumerate() {
        let r = parse(fr);
        assert_eq!(r.items()[0].text(), "punsubscribe");
        seen.insert(r.items()[1].text());
        assert_eq!(r.items()[2].int(), 1 - i as i64);
    }
    assert_eq!(seen, ["ps_unsub:p*", "ps_unsub:q*"].iter().map(|s| s.to_string()).collect());
    // Back to normal mode.
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "ps_unsub:a"]), b":0\r\n");
}

#[test]
fn publish_delivers_to_subscribers_on_other_connections() {
    let t = shared();
    let mut sub1 = t.raw_conn();
    let mut sub2 = t.raw_conn();
    let mut p = t.raw_conn();
    let ch = "ps_deliver:ch";
    assert_bytes!(p.cmd(&["PUBLISH", ch, "nobody"]), b":0\r\n");
    let _ = send_read(&mut sub1, &["SUBSCRIBE", ch], 1);
    let _ = send_read(&mut sub2, &["SUBSCRIBE", ch, "ps_deliver:other"], 2);
    assert_bytes!(p.cmd(&["PUBLISH", ch, "hello"]), b":2\r\n");
    assert_bytes!(sub1.read_reply(), message(ch, "hello"));
    assert_bytes!(sub2.read_reply(), message(ch, "hello"));
    assert_bytes!(p.cmd(&["PUBLISH", "ps_deliver:other", "x"]), b":1\r\n");
    assert_bytes!(sub2.read_reply(), message("ps_deliver:other", "x"));
    sub1.expect_silence(Duration::from_millis(100));
    // Messages arrive in publish order; payloads are binary-safe.
    for i in 0..20 {
        assert_bytes!(p.cmd(&["PUBLISH", ch, &format!("m{i}")]), b":2\r\n");
    }
    assert_bytes!(
        p.cmd(&[b"PUBLISH".as_slice(), ch.as_bytes(), b"a\r\n\x00b"]),
        b":2\r\n"
    );
    for i in 0..20 {
        assert_bytes!(sub1.read_reply(), message(ch, &format!("m{i}")));
    }
    assert_bytes!(
        sub1.read_reply(),
        b"*3\r\n$7\r\nmessage\r\n$13\r\nps_deliver:ch\r\n$5\r\na\r\n\x00b\r\n"
    );
    // After UNSUBSCRIBE nothing more arrives.
    let _ = send_read(&mut sub1, &["UNSUBSCRIBE", ch], 1);
    assert_bytes!(p.cmd(&["PUBLISH", ch, "late"]), b":1\r\n");
    sub1.expect_silence(Duration::from_millis(150));
    // A subscriber that disconnects no longer counts.
    drop(sub2);
    let gone = wait_until(Duration::from_secs(5), || {
        p.cmd(&["PUBLISH", ch, "anyone"]) == b":0\r\n"
    });
    assert!(gone, "closed subscriber still counted");
}

#[test]
fn pattern_subscriptions_get_pmessage() {
    let t = shared();
    let mut sub = t.raw_conn();
    let mut p = t.raw_conn();
    let f = send_read(&mut sub, &["PSUBSCRIBE", "ps_pat:news.*", "ps_pat:h?llo", "ps_pat:[xy]z"], 3);
    assert_bytes!(f[2], frame("psubscribe", "ps_pat:[xy]z", 3));
    assert_bytes!(p.cmd(&["PUBLISH", "ps_pat:news.tech", "n1"]), b":1\r\n");
    assert_bytes!(sub.read_reply(), pmessage("ps_pat:news.*", "ps_pat:news.tech", "n1"));
    assert_bytes!(p.cmd(&["PUBLISH", "ps_pat:hallo", "h"]), b":1\r\n");
    assert_bytes!(sub.read_reply(), pmessage("ps_pat:h?llo", "ps_pat:hallo", "h"));
    assert_bytes!(p.cmd(&["PUBLISH", "ps_pat:yz", "y"]), b":1\r\n");
    assert_bytes!(sub.read_reply(), pmessage("ps_pat:[xy]z", "ps_pat:yz", "y"));
    assert_bytes!(p.cmd(&["PUBLISH", "ps_pat:heello", "no"]), b":0\r\n");
    assert_bytes!(p.cmd(&["PUBLISH", "ps_pat:news", "no"]), b":0\r\n");
    sub.expect_silence(Duration::from_millis(150));
    // A channel and a pattern subscription on the same connection: two deliveries.
    let _ = send_read(&mut sub, &["SUBSCRIBE", "ps_pat:news.sport"], 1);
    assert_bytes!(p.cmd(&["PUBLISH", "ps_pat:news.sport", "s"]), b":2\r\n");
    assert_bytes!(sub.read_reply(), message("ps_pat:news.sport", "s"));
    assert_bytes!(sub.read_reply(), pmessage("ps_pat:news.*", "ps_pat:news.sport", "s"));
}

#[test]
fn several_matching_patterns_each_deliver() {
    let t = exclusive();
    let mut sub = t.raw_conn();
    let mut p = t.raw_conn();
    let _ = send_read(&mut sub, &["SUBSCRIBE", "m1"], 1);
    let _ = send_read(&mut sub, &["PSUBSCRIBE", "m*", "*1"], 2);
    assert_bytes!(p.cmd(&["PUBLISH", "m1", "x"]), b":3\r\n");
    // The channel message comes first; the pattern messages in no set order.
    assert_bytes!(sub.read_reply(), message("m1", "x"));
    let got: BTreeSet<Vec<u8>> = (0..2).map(|_| sub.read_reply()).collect();
    let want: BTreeSet<Vec<u8>> = [pmessage("m*", "m1", "x"), pmessage("*1", "m1", "x")]
        .into_iter()
        .collect();
    assert_eq!(got, want);
    sub.expect_silence(Duration::from_millis(100));
}

#[test]
fn resp2_subscribed_mode_allows_only_some_commands() {
    let t = shared();
    let mut c = t.raw_conn();
    let _ = send_read(&mut c, &["SUBSCRIBE", "ps_mode:ch"], 1);
    assert_bytes!(c.cmd(&["GET", "x"]), not_allowed("get"));
    assert_bytes!(c.cmd(&["set", "x", "1"]), not_allowed("set"));
    assert_bytes!(c.cmd(&["ECHO", "hi"]), not_allowed("echo"));
    assert_bytes!(c.cmd(&["PUBLISH", "ps_mode:ch", "x"]), not_allowed("publish"));
    assert_bytes!(c.cmd(&["MULTI"]), not_allowed("multi"));
    // PING answers with a pong frame.
    assert_bytes!(c.cmd(&["PING"]), b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    assert_bytes!(c.cmd(&["PING", "hi"]), b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    // Subscribe-family commands keep working.
    assert_bytes!(c.cmd(&["PSUBSCRIBE", "ps_mode:p*"]), frame("psubscribe", "ps_mode:p*", 2));
    assert_bytes!(c.cmd(&["UNSUBSCRIBE", "ps_mode:ch"]), frame("unsubscribe", "ps_mode:ch", 1));
    assert_bytes!(c.cmd(&["GET", "x"]), not_allowed("get"));
    // Leaving the last subscription leaves subscribed mode.
    assert_bytes!(c.cmd(&["PUNSUBSCRIBE", "ps_mode:p*"]), frame("punsubscribe", "ps_mode:p*", 0));
    assert_bytes!(c.cmd(&["EXISTS", "ps_mode:none"]), b":0\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}

#[test]
fn reset_and_quit_in_subscribed_mode() {
    let t = shared();
    let mut p = t.raw_conn();
    let mut c = t.raw_conn();
    let _ = send_read(&mut c, &["SUBSCRIBE", "ps_reset:ch"], 1);
    assert_bytes!(c.cmd(&["RESET"]), b"+RESET\r\n");
    assert_bytes!(c.cmd(&["GET", "ps_reset:none"]), b"$-1\r\n");
    assert_bytes!(p.cmd(&["PUBLISH", "ps_reset:ch", "x"]), b":0\r\n");
    c.expect_silence(Duration::from_millis(100));
    let mut q = t.raw_conn();
    let _ = send_read(&mut q, &["SUBSCRIBE", "ps_reset:ch2"], 1);
    assert_bytes!(q.cmd(&["QUIT"]), b"+OK\r\n");
    assert!(q.is_closed_within(Duration::from_secs(5)), "QUIT did not close");
}

#[test]
fn resp3_push_frames() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut p = t.raw_conn();
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    let f = send_read(&mut c, &["SUBSCRIBE", "ps_r3:ch"], 1);
    assert_bytes!(f[0], push("subscribe", "ps_r3:ch", 1));
    let f = send_read(&mut c, &["PSUBSCRIBE", "ps_r3:p*"], 1);
    assert_bytes!(f[0], push("psubscribe", "ps_r3:p*", 2));
    assert_bytes!(p.cmd(&["PUBLISH", "ps_r3:ch", "m"]), b":1\r\n");
    assert_bytes!(
        c.read_reply(),
        b">3\r\n$7\r\nmessage\r\n$8\r\nps_r3:ch\r\n$1\r\nm\r\n"
    );
    assert_bytes!(p.cmd(&["PUBLISH", "ps_r3:pq", "n"]), b":1\r\n");
    assert_bytes!(
        c.read_reply(),
        b">4\r\n$8\r\npmessage\r\n$8\r\nps_r3:p*\r\n$8\r\nps_r3:pq\r\n$1\r\nn\r\n"
    );
    // In RESP3 every command works while subscribed, with its normal reply.
    assert_bytes!(c.cmd(&["GET", "ps_r3:none"]), b"_\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(c.cmd(&["ECHO", "e"]), b"$1\r\ne\r\n");
    assert_bytes!(c.cmd(&["UNSUBSCRIBE", "ps_r3:ch"]), push("unsubscribe", "ps_r3:ch", 1));
    assert_bytes!(c.cmd(&["PUNSUBSCRIBE"]), push("punsubscribe", "ps_r3:p*", 0));
    // Nothing subscribed: a RESP3 null name.
    assert_bytes!(c.cmd(&["UNSUBSCRIBE"]), b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n");
}

#[test]
fn pubsub_introspection() {
    let t = exclusive();
    let mut a = t.raw_conn();
    let mut b = t.raw_conn();
    let mut p = t.raw_conn();
    assert_bytes!(p.cmd(&["PUBSUB", "CHANNELS"]), b"*0\r\n");
    assert_bytes!(p.cmd(&["PUBSUB", "NUMPAT"]), b":0\r\n");
    assert_bytes!(p.cmd(&["PUBSUB", "NUMSUB"]), b"*0\r\n");
    let _ = send_read(&mut a, &["SUBSCRIBE", "news", "sport", "chat"], 3);
    let _ = send_read(&mut a, &["PSUBSCRIBE", "x*", "y*"], 2);
    let _ = send_read(&mut b, &["SUBSCRIBE", "news"], 1);
    let _ = send_read(&mut b, &["PSUBSCRIBE", "x*"], 1);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let chans: BTreeSet<String> = texts(&parse(&p.cmd(&["PUBSUB", "CHANNELS"]))).into_iter().collect();
    assert_eq!(chans, set(&["news", "sport", "chat"]));
    let chans: BTreeSet<String> =
        texts(&parse(&p.cmd(&["PUBSUB", "CHANNELS", "*o*"]))).into_iter().collect();
    assert_eq!(chans, set(&["sport"]));
    assert_bytes!(p.cmd(&["PUBSUB", "CHANNELS", "zz*"]), b"*0\r\n");
    // NUMSUB answers in argument order; patterns are not counted.
    assert_bytes!(
        p.cmd(&["PUBSUB", "NUMSUB", "news", "sport", "nope"]),
        b"*6\r\n$4\r\nnews\r\n:2\r\n$5\r\nsport\r\n:1\r\n$4\r\nnope\r\n:0\r\n"
    );
    // NUMPAT counts distinct patterns, not subscriptions.
    assert_bytes!(p.cmd(&["PUBSUB", "NUMPAT"]), b":2\r\n");
    // PUBLISH counts every receiving subscription.
    assert_bytes!(p.cmd(&["PUBLISH", "news", "n"]), b":2\r\n");
    assert_bytes!(p.cmd(&["PUBLISH", "xnews", "n"]), b":2\r\n");
    // A client that goes away drops its subscriptions.
    drop(a);
    let ok = wait_until(Duration::from_secs(5), || {
        p.cmd(&["PUBSUB", "NUMPAT"]) == b":1\r\n"
    });
    assert!(ok, "patterns of a closed client still counted");
    assert_bytes!(
        p.cmd(&["PUBSUB", "NUMSUB", "news", "sport"]),
        b"*4\r\n$4\r\nnews\r\n:1\r\n$5\r\nsport\r\n:0\r\n"
    );
    assert_bytes!(p.cmd(&["PUBSUB", "CHANNELS"]), b"*1\r\n$4\r\nnews\r\n");
    // RESP3: NUMSUB stays a flat array in Redis 7.0 (not a map).
    assert_eq!(parse(&p.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    assert_bytes!(p.cmd(&["PUBSUB", "NUMSUB", "news"]), b"*2\r\n$4\r\nnews\r\n:1\r\n");
    assert_bytes!(p.cmd(&["PUBSUB", "CHANNELS"]), b"*1\r\n$4\r\nnews\r\n");
    drop(b);
}

#[test]
fn argument_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["SUBSCRIBE"]),
        b"-ERR wrong number of arguments for 'subscribe' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["PSUBSCRIBE"]),
        b"-ERR wrong number of arguments for 'psubscribe' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["PUBLISH", "ch"]),
        b"-ERR wrong number of arguments for 'publish' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["PUBLISH", "ch", "a", "b"]),
        b"-ERR wrong number of arguments for 'publish' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["PUBSUB"]),
        b"-ERR wrong number of arguments for 'pubsub' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["PUBSUB", "FOO"]),
        b"-ERR unknown subcommand 'FOO'. Try PUBSUB HELP.\r\n"
    );
    assert_bytes!(
        c.cmd(&["PUBSUB", "NUMPAT", "x"]),
        b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["PUBSUB", "CHANNELS", "a", "b"]),
        b"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n"
    );
    // None of that entered subscribed mode.
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}

/// Issue 26, defect 7: under CLIENT REPLY OFF or SKIP, the subscribe and unsubscribe
/// confirmations are still sent (Redis 7.0.15 sends them as pushes, RESP2 and RESP3,
/// and clients wait for them); other replies are dropped as usual.
#[test]
fn subscribe_confirmations_are_sent_under_client_reply_off_and_skip() {
    let t = shared();
    let mut c = t.raw_conn();
    c.send(&encode(&["CLIENT", "REPLY", "OFF"]));
    c.send(&encode(&["PING"]));
    c.send(&encode(&["SUBSCRIBE", "roff:a", "roff:b"]));
    let mut want = frame("subscribe", "roff:a", 1);
    want.extend(frame("subscribe", "roff:b", 2));
    assert_bytes!(c.read_replies(2), &want);
    c.send(&encode(&["PSUBSCRIBE", "roff:p*"]));
    assert_bytes!(c.read_reply(), &frame("psubscribe", "roff:p*", 3));
    c.send(&encode(&["UNSUBSCRIBE", "roff:a"]));
    assert_bytes!(c.read_reply(), &frame("unsubscribe", "roff:a", 2));
    c.expect_silence(Duration::from_millis(100));

    let mut s = t.raw_conn();
    s.send(&encode(&["CLIENT", "REPLY", "SKIP"]));
    s.send(&encode(&["SUBSCRIBE", "roff:c"]));
    assert_bytes!(s.read_reply(), &frame("subscribe", "roff:c", 1));
    // The SKIP was spent on SUBSCRIBE: the next reply is sent.
    assert_bytes!(s.cmd(&["PING"]), b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");

    let mut r3 = t.raw_conn();
    r3.cmd(&["HELLO", "3"]);
    r3.send(&encode(&["CLIENT", "REPLY", "OFF"]));
    r3.send(&encode(&["SUBSCRIBE", "roff:d"]));
    assert_bytes!(r3.read_reply(), &push("subscribe", "roff:d", 1));
}
