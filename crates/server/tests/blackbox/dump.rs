//! DUMP and RESTORE. Replies are Redis 7.0.15's byte for byte; payloads are compared by
//! what they restore to (two servers may serialize one value differently: LZF matches,
//! hash table order), and payloads are made invalid in the ways RESTORE must refuse.
//! Restoring Redis's payloads into Basalt and back is `tests/py/test_dump_interop.py`.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::assert_bytes;
use crate::harness::*;

const OK: &[u8] = b"+OK\r\n";
const WRONG_FOOTER: &[u8] = b"-ERR DUMP payload version or checksum are wrong\r\n";
const BAD_DATA: &[u8] = b"-ERR Bad data format\r\n";

fn dump(c: &mut RawConn, key: &str) -> Vec<u8> {
    match parse(&c.cmd(&["DUMP", key])) {
        Resp::Bulk(b) => b,
        other => panic!("DUMP {key}: {other:?}"),
    }
}

fn restore(c: &mut RawConn, key: &str, ttl: &str, payload: &[u8], opts: &[&str]) -> Vec<u8> {
    let mut args: Vec<&[u8]> = vec![b"RESTORE", key.as_bytes(), ttl.as_bytes(), payload];
    args.extend(opts.iter().map(|o| o.as_bytes()));
    c.cmd(&args)
}

/// A payload's footer rebuilt over a changed body: version, then the CRC-64 of both.
fn with_footer(body: &[u8], version: u16) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&version.to_le_bytes());
    let crc = store::rdb::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

#[test]
fn round_trip_of_every_type() {
    let t = shared();
    let mut c = t.raw_conn();
    let p = "dump_rt:{t}";
    let big: Vec<String> = (0..700).map(|i| format!("member-{i}")).collect();
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    let k = |s: &str| format!("{p}{s}");
    c.cmd(&["SET", &k("str"), "hello"]);
    c.cmd(&["SET", &k("int"), "-12345"]);
    c.cmd(&["SET", &k("long"), &"abc".repeat(40)]);
    c.cmd(&[&["RPUSH", &k("list")][..], &big[..]].concat());
    c.cmd(&["SADD", &k("intset"), "3", "1", "2"]);
    c.cmd(&[&["SADD", &k("set")][..], &big[..]].concat());
    c.cmd(&["HSET", &k("hash"), "f", "v", "n", "1"]);
    let mut pairs = vec!["HSET".to_string(), k("bighash")];
    for m in &big {
        pairs.push(m.to_string());
        pairs.push(format!("value of {m}"));
    }
    c.cmd(&pairs.iter().map(String::as_str).collect::<Vec<_>>());
    c.cmd(&["ZADD", &k("zset"), "1.5", "a", "-inf", "b", "3", "c"]);
    let mut scored = vec!["ZADD".to_string(), k("bigzset")];
    for (i, m) in big.iter().enumerate() {
        scored.push(format!("{}", i as f64 / 3.0));
        scored.push(m.to_string());
    }
    c.cmd(&scored.iter().map(String::as_str).collect::<Vec<_>>());

    let reads: [(&str, &[&str]); 10] = [
        ("str", &["GET"]),
        ("int", &["GET"]),
        ("long", &["GET"]),
        ("list", &["LRANGE", "0", "-1"]),
        ("intset", &["SMEMBERS"]),
        ("set", &["SCARD"]),
        ("hash", &["HGETALL"]),
        ("bighash", &["HLEN"]),
        ("zset", &["ZRANGE", "0", "-1", "WITHSCORES"]),
        ("bigzset", &["ZRANGE", "0", "-1", "WITHSCORES"]),
    ];
    for (name, read) in reads {
        let (src, dst) = (k(name), k(&format!("{name}:copy")));
        let payload = dump(&mut c, &src);
        assert_bytes!(restore(&mut c, &dst, "0", &payload, &[]), OK);
        let ask = |c: &mut RawConn, key: &str| {
            let mut args = vec![read[0], key];
            args.extend_from_slice(&read[1..]);
            c.cmd(&args)
        };
        assert_eq!(ask(&mut c, &dst), ask(&mut c, &src), "{name}");
        assert_eq!(
            c.cmd(&["OBJECT", "ENCODING", &dst]),
            c.cmd(&["OBJECT", "ENCODING", &src]),
            "{name}"
        );
        assert_bytes!(c.cmd(&["TTL", &dst]), b":-1\r\n");
        // The copy's own DUMP restores to the same value again.
        let again = dump(&mut c, &dst);
        assert_bytes!(restore(&mut c, &dst, "0", &again, &["REPLACE"]), OK);
        assert_eq!(ask(&mut c, &dst), ask(&mut c, &src), "{name} twice");
    }
    // Sets' members compared whole.
    assert_eq!(
        c.cmd(&["SDIFF", &k("set"), &k("set:copy")]),
        b"*0\r\n".to_vec(),
        "set members differ"
    );
    assert_bytes!(c.cmd(&["DUMP", &k("missing")]), b"$-1\r\n");
    let keys: Vec<String> = reads
        .iter()
        .flat_map(|(n, _)| [k(n), k(&format!("{n}:copy"))])
        .collect();
    c.cmd(
        &[
            &["DEL"][..],
            &keys.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ]
        .concat(),
    );
}

#[test]
fn ttl_replace_and_idle_time() {
    let t = shared();
    let mut c = t.raw_conn();
    let src = "dump_ttl:{t}src";
    let dst = "dump_ttl:{t}dst";
    c.cmd(&["SET", src, "v"]);
    let payload = dump(&mut c, src);
    // A relative TTL in milliseconds.
    assert_bytes!(restore(&mut c, dst, "100000", &payload, &[]), OK);
    let pttl = parse(&c.cmd(&["PTTL", dst])).int();
    assert!((1..=100_000).contains(&pttl), "{pttl}");
    // An existing key needs REPLACE; the check comes before the TTL's.
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &[]),
        b"-BUSYKEY Target key name already exists.\r\n"
    );
    assert_bytes!(
        restore(&mut c, dst, "-1", b"junk", &[]),
        b"-BUSYKEY Target key name already exists.\r\n"
    );
    // An absolute time (ABSTTL).
    let at = now_ms() + 3_600_000;
    assert_bytes!(
        restore(
            &mut c,
            dst,
            &at.to_string(),
            &payload,
            &["REPLACE", "ABSTTL"]
        ),
        OK
    );
    assert_eq!(parse(&c.cmd(&["PEXPIRETIME", dst])).int(), at);
    // Already expired: OK, and no key (REPLACE removed the old one).
    assert_bytes!(
        restore(&mut c, dst, "1000", &payload, &["ABSTTL", "REPLACE"]),
        OK
    );
    assert_bytes!(c.cmd(&["EXISTS", dst]), b":0\r\n");
    // IDLETIME sets the idle time.
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["IDLETIME", "1000"]),
        OK
    );
    let idle = parse(&c.cmd(&["OBJECT", "IDLETIME", dst])).int();
    assert!((1000..1010).contains(&idle), "{idle}");
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["REPLACE", "FREQ", "100"]),
        OK
    );
    assert_bytes!(c.cmd(&["GET", dst]), b"$1\r\nv\r\n");
    c.cmd(&["DEL", src, dst]);
}

#[test]
fn restore_refuses_bad_arguments_and_payloads() {
    let t = shared();
    let mut c = t.raw_conn();
    let src = "dump_bad:{t}src";
    let dst = "dump_bad:{t}dst";
    c.cmd(&["RPUSH", src, "a", "b"]);
    let payload = dump(&mut c, src);
    const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
    assert_bytes!(
        restore(&mut c, dst, "-1", &payload, &[]),
        b"-ERR Invalid TTL value, must be >= 0\r\n"
    );
    assert_bytes!(
        restore(&mut c, dst, "x", &payload, &[]),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_bytes!(restore(&mut c, dst, "0", &payload, &["FOO"]), SYNTAX);
    assert_bytes!(restore(&mut c, dst, "0", &payload, &["IDLETIME"]), SYNTAX);
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["IDLETIME", "1", "FREQ", "1"]),
        SYNTAX
    );
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["FREQ", "1", "IDLETIME", "1"]),
        SYNTAX
    );
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["IDLETIME", "-1"]),
        b"-ERR Invalid IDLETIME value, must be >= 0\r\n"
    );
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["FREQ", "256"]),
        b"-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n"
    );
    assert_bytes!(
        restore(&mut c, dst, "0", &payload, &["IDLETIME", "x"]),
        b"-ERR value is not an integer or out of range\r\n"
    );
    // The footer: too short, a wrong checksum, a newer RDB version.
    assert_bytes!(restore(&mut c, dst, "0", b"", &[]), WRONG_FOOTER);
    assert_bytes!(restore(&mut c, dst, "0", &payload[..9], &[]), WRONG_FOOTER);
    let mut flipped = payload.clone();
    flipped[1] ^= 1;
    assert_bytes!(restore(&mut c, dst, "0", &flipped, &[]), WRONG_FOOTER);
    let body = &payload[..payload.len() - 10];
    assert_bytes!(
        restore(&mut c, dst, "0", &with_footer(body, 11), &[]),
        WRONG_FOOTER
    );
    // Older versions are accepted.
    assert_bytes!(restore(&mut c, dst, "0", &with_footer(body, 9), &[]), OK);
    assert_bytes!(
        c.cmd(&["LRANGE", dst, "0", "-1"]),
        b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    );
    // A valid footer over a bad body: an unknown type, a truncated value, nothing.
    let mut unknown = body.to_vec();
    unknown[0] = 99;
    assert_bytes!(
        restore(&mut c, dst, "0", &with_footer(&unknown, 10), &["REPLACE"]),
        BAD_DATA
    );
    assert_bytes!(
        restore(
            &mut c,
            dst,
            "0",
            &with_footer(&body[..body.len() - 1], 10),
            &["REPLACE"]
        ),
        BAD_DATA
    );
    assert_bytes!(
        restore(&mut c, dst, "0", &with_footer(b"", 10), &["REPLACE"]),
        BAD_DATA
    );
    // An empty set (type 2, no members) is refused, as Redis 7.0 refuses it.
    assert_bytes!(
        restore(&mut c, dst, "0", &with_footer(&[2, 0], 10), &["REPLACE"]),
        BAD_DATA
    );
    // Nothing of the failed attempts was stored.
    assert_bytes!(
        c.cmd(&["LRANGE", dst, "0", "-1"]),
        b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    );
    assert_bytes!(
        c.cmd(&["DUMP"]),
        b"-ERR wrong number of arguments for 'dump' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["RESTORE", dst, "0"]),
        b"-ERR wrong number of arguments for 'restore' command\r\n"
    );
    c.cmd(&["DEL", src, dst]);
}
