//! Set commands. Set order is not defined, so members are compared as sets.

use std::collections::BTreeSet;

use crate::assert_bytes;
use crate::harness::*;



fn texts(r: &Resp) -> Vec<String> {
    r.items().iter().map(|x| x.text()).collect()
}

fn set_of(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Members of a set-valued reply; panics on duplicates.
fn members(reply: &[u8]) -> BTreeSet<String> {
    distinct(&parse(reply))
}

/// Items of an aggregate reply as a set; panics on duplicates.
fn distinct(r: &Resp) -> BTreeSet<String> {
    let v = texts(r);
    let s: BTreeSet<String> = v.iter().cloned().collect();
    assert_eq!(s.len(), v.len(), "duplicates in {v:?}");
    s
}

fn smembers(c: &mut RawConn, k: &str) -> BTreeSet<String> {
    members(&c.cmd(&["SMEMBERS", k]))
}

fn sadd(c: &mut RawConn, k: &str, items: &[&str]) {
    let mut args = vec!["SADD", k];
    args.extend_from_slice(items);
    let n = parse(&c.cmd(&args)).int();
    assert_eq!(n as usize, set_of(items).len(), "SADD {k} {items:?}");
}

#[test]
fn sadd_srem_smembers_scard() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_basic:s";
    assert_bytes!(c.cmd(&["SADD", k, "a", "b", "c", "b"]), b":3\r\n");
    assert_bytes!(c.cmd(&["SADD", k, "a", "d"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SADD", k, "a"]), b":0\r\n");
    assert_eq!(smembers(&mut c, k), set_of(&["a", "b", "c", "d"]));
    assert_bytes!(c.cmd(&["SCARD", k]), b":4\r\n");
    assert_bytes!(c.cmd(&["TYPE", k]), b"+set\r\n");
    assert_bytes!(c.cmd(&["SREM", k, "a", "zz", "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SREM", "set_basic:missing", "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SMEMBERS", "set_basic:missing"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["SCARD", "set_basic:missing"]), b":0\r\n");
    // Binary-safe members, the empty string included.
    assert_bytes!(
        c.cmd(&[b"SADD".as_slice(), k.as_bytes(), b"\x00\r\n", b""]),
        b":2\r\n"
    );
    assert_bytes!(
        c.cmd(&[b"SISMEMBER".as_slice(), k.as_bytes(), b"\x00\r\n"]),
        b":1\r\n"
    );
    assert_bytes!(c.cmd(&["SISMEMBER", k, ""]), b":1\r\n");
    // Removing the last member deletes the key.
    assert_bytes!(c.cmd(&["EXPIRE", k, "1000"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&[b"SREM".as_slice(), k.as_bytes(), b"b", b"c", b"d", b"", b"\x00\r\n"]),
        b":5\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["SADD", k, "x"]), b":1\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn sismember_and_smismember() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_ismember:s";
    let missing = "set_ismember:missing";
    assert_bytes!(c.cmd(&["SADD", k, "1", "2", "a"]), b":3\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", k, "2"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", k, "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", k, "zz"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", missing, "a"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["SMISMEMBER", k, "2", "zz", "a", "2"]),
        b"*4\r\n:1\r\n:0\r\n:1\r\n:1\r\n"
    );
    assert_bytes!(c.cmd(&["SMISMEMBER", missing, "a", "b"]), b"*2\r\n:0\r\n:0\r\n");
    assert_bytes!(c.cmd(&["SMISMEMBER", k]), arity("smismember"));
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn spop() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_spop:s";
    let missing = "set_spop:missing";
    let all = set_of(&["a", "b", "c", "d", "e", "f"]);
    sadd(&mut c, k, &["a", "b", "c", "d", "e", "f"]);
    // Without count: one bulk member, removed.
    let first = parse(&c.cmd(&["SPOP", k])).text();
    assert!(all.contains(&first), "{first}");
    assert_bytes!(c.cmd(&["SISMEMBER", k, &first]), b":0\r\n");
    // With count: distinct members, removed.
    let two = members(&c.cmd(&["SPOP", k, "2"]));
    assert_eq!(two.len(), 2);
    assert!(!two.contains(&first));
    assert!(two.is_subset(&all));
    assert_bytes!(c.cmd(&["SCARD", k]), b":3\r\n");
    assert_bytes!(c.cmd(&["SPOP", k, "0"]), b"*0\r\n");
    // A count above the size pops everything and deletes the key.
    let rest = members(&c.cmd(&["SPOP", k, "10"]));
    assert_eq!(rest.len(), 3);
    let mut popped = rest.clone();
    popped.extend(two);
    popped.insert(first);
    assert_eq!(popped, all);
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    // Missing key: nil bulk without count, empty array with one.
    assert_bytes!(c.cmd(&["SPOP", missing]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["SPOP", missing, "2"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["SPOP", missing, "0"]), b"*0\r\n");
    // Errors.
    sadd(&mut c, k, &["a"]);
    assert_bytes!(
        c.cmd(&["SPOP", k, "-1"]),
        b"-ERR value is out of range, must be positive\r\n"
    );
    assert_bytes!(
        c.cmd(&["SPOP", k, "x"]),
        b"-ERR value is out of range, must be positive\r\n"
    );
    assert_bytes!(c.cmd(&["SPOP", k, "1", "2"]), SYNTAX);
    // An intset too.
    let ints = "set_spop:ints";
    sadd(&mut c, ints, &["1", "2", "3"]);
    let got = members(&c.cmd(&["SPOP", ints, "3"]));
    assert_eq!(got, set_of(&["1", "2", "3"]));
    assert_bytes!(c.cmd(&["EXISTS", ints]), b":0\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn srandmember_count_semantics() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_srand:s";
    let missing = "set_srand:missing";
    let all = set_of(&["a", "b", "c", "d", "e"]);
    sadd(&mut c, k, &["a", "b", "c", "d", "e"]);
    for _ in 0..20 {
        let m = parse(&c.cmd(&["SRANDMEMBER", k])).text();
        assert!(all.contains(&m), "{m}");
    }
    assert_bytes!(c.cmd(&["SRANDMEMBER", k, "0"]), b"*0\r\n");
    // Positive: distinct, at most the set size.
    for n in [1usize, 3, 5, 6, 100] {
        let got = members(&c.cmd(&["SRANDMEMBER", k, &n.to_string()]));
        assert_eq!(got.len(), n.min(5), "count {n}");
        assert!(got.is_subset(&all));
    }
    // Negative: exactly |count|, repeats allowed.
    let got = texts(&parse(&c.cmd(&["SRANDMEMBER", k, "-30"])));
    assert_eq!(got.len(), 30);
    assert!(got.iter().all(|m| all.contains(m)), "{got:?}");
    // Nothing was removed.
    assert_bytes!(c.cmd(&["SCARD", k]), b":5\r\n");
    // Missing key.
    assert_bytes!(c.cmd(&["SRANDMEMBER", missing]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["SRANDMEMBER", missing, "3"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["SRANDMEMBER", missing, "-3"]), b"*0\r\n");
    // Single-member set with a negative count repeats it.
    let one = "set_srand:one";
    sadd(&mut c, one, &["x"]);
    assert_bytes!(
        c.cmd(&["SRANDMEMBER", one, "-3"]),
        b"*3\r\n$1\r\nx\r\n$1\r\nx\r\n$1\r\nx\r\n"
    );
    // Errors.
    assert_bytes!(c.cmd(&["SRANDMEMBER", k, "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["SRANDMEMBER", k, "1", "2"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["SRANDMEMBER", k, "-9223372036854775808"]),
        b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k, one]), b":2\r\n");
}

#[test]
fn smove() {
    let t = shared();
    let mut c = t.raw_conn();
    let a = "set_smove:{x}a";
    let b = "set_smove:{x}b";
    let s = "set_smove:{x}str";
    let missing = "set_smove:{x}missing";
    sadd(&mut c, a, &["1", "2", "3"]);
    sadd(&mut c, b, &["3", "4"]);
    assert_bytes!(c.cmd(&["SMOVE", a, b, "1"]), b":1\r\n");
    assert_eq!(smembers(&mut c, a), set_of(&["2", "3"]));
    assert_eq!(smembers(&mut c, b), set_of(&["1", "3", "4"]));
    // Already in the destination: still removed from the source.
    assert_bytes!(c.cmd(&["SMOVE", a, b, "3"]), b":1\r\n");
    assert_eq!(smembers(&mut c, a), set_of(&["2"]));
    assert_eq!(smembers(&mut c, b), set_of(&["1", "3", "4"]));
    assert_bytes!(c.cmd(&["SMOVE", a, b, "zz"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SMOVE", missing, b, "1"]), b":0\r\n");
    // Same source and destination.
    assert_bytes!(c.cmd(&["SMOVE", a, a, "2"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SMOVE", a, a, "zz"]), b":0\r\n");
    assert_eq!(smembers(&mut c, a), set_of(&["2"]));
    // Moving the last member deletes the source, creates the destination.
    assert_bytes!(c.cmd(&["SMOVE", a, missing, "2"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", a]), b":0\r\n");
    assert_eq!(smembers(&mut c, missing), set_of(&["2"]));
    // Wrong types.
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SMOVE", b, s, "1"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SMOVE", s, b, "1"]), WRONGTYPE);
    // A missing source answers 0 before the destination's type is checked; an
    // existing source without the member does not.
    assert_bytes!(c.cmd(&["SMOVE", a, s, "1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SMOVE", b, s, "zz"]), WRONGTYPE);
    assert_eq!(smembers(&mut c, b), set_of(&["1", "3", "4"]));
    assert_bytes!(c.cmd(&["SMOVE", b, s]), arity("smove"));
    assert_bytes!(c.cmd(&["DEL", b, s, missing]), b":3\r\n");
}

#[test]
fn sinter_sunion_sdiff() {
    let t = shared();
    let mut c = t.raw_conn();
    let a = "set_algebra:{x}a";
    let b = "set_algebra:{x}b";
    let cc = "set_algebra:{x}c";
    let s = "set_algebra:{x}str";
    let missing = "set_algebra:{x}missing";
    sadd(&mut c, a, &["1", "2", "3", "x"]);
    sadd(&mut c, b, &["2", "3", "4", "x"]);
    sadd(&mut c, cc, &["3", "x", "9"]);
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_eq!(members(&c.cmd(&["SINTER", a, b, cc])), set_of(&["3", "x"]));
    assert_eq!(members(&c.cmd(&["SINTER", a])), set_of(&["1", "2", "3", "x"]));
    assert_bytes!(c.cmd(&["SINTER", a, missing]), b"*0\r\n");
    assert_bytes!(c.cmd(&["SINTER", missing, a]), b"*0\r\n");
    assert_eq!(
        members(&c.cmd(&["SUNION", a, missing, b])),
        set_of(&["1", "2", "3", "4", "x"])
    );
    assert_bytes!(c.cmd(&["SUNION", missing]), b"*0\r\n");
    assert_eq!(members(&c.cmd(&["SDIFF", a, b])), set_of(&["1"]));
    assert_eq!(members(&c.cmd(&["SDIFF", b, a, cc])), set_of(&["4"]));
    assert_eq!(members(&c.cmd(&["SDIFF", a, missing])), set_of(&["1", "2", "3", "x"]));
    assert_bytes!(c.cmd(&["SDIFF", missing, a]), b"*0\r\n");
    assert_bytes!(c.cmd(&["SDIFF", a, a]), b"*0\r\n");
    // A wrong-type key anywhere is an error, even after a missing key.
    for cmd in ["SINTER", "SUNION", "SDIFF"] {
        assert_bytes!(c.cmd(&[cmd, a, s]), WRONGTYPE, "{cmd}");
        assert_bytes!(c.cmd(&[cmd, missing, s]), WRONGTYPE, "{cmd}");
        assert_bytes!(c.cmd(&[cmd, s, missing]), WRONGTYPE, "{cmd}");
        assert_bytes!(c.cmd(&[cmd]), arity(&cmd.to_lowercase()), "{cmd}");
    }
    assert_bytes!(c.cmd(&["DEL", a, b, cc, s]), b":4\r\n");
}

#[test]
fn sintercard() {
    let t = shared();
    let mut c = t.raw_conn();
    let a = "set_icard:{x}a";
    let b = "set_icard:{x}b";
    let cc = "set_icard:{x}c";
    let s = "set_icard:{x}str";
    let missing = "set_icard:{x}missing";
    sadd(&mut c, a, &["1", "2", "3", "x"]);
    sadd(&mut c, b, &["2", "3", "4", "x"]);
    sadd(&mut c, cc, &["3", "x", "9"]);
    assert_bytes!(c.cmd(&["SINTERCARD", "3", a, b, cc]), b":2\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, b]), b":3\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "1", a]), b":4\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, b, "LIMIT", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, b, "limit", "2"]), b":2\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, b, "LIMIT", "10"]), b":3\r\n");
    // LIMIT 0 means no limit.
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, b, "LIMIT", "0"]), b":3\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "1", missing]), b":0\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, missing]), b":0\r\n");
    // Errors.
    let numkeys = b"-ERR numkeys should be greater than 0\r\n";
    assert_bytes!(c.cmd(&["SINTERCARD", "0", a]), numkeys);
    assert_bytes!(c.cmd(&["SINTERCARD", "-1", a]), numkeys);
    assert_bytes!(c.cmd(&["SINTERCARD", "x", a]), numkeys);
    assert_bytes!(
        c.cmd(&["SINTERCARD", "2", a]),
        b"-ERR Number of keys can't be greater than number of args\r\n"
    );
    assert_bytes!(
        c.cmd(&["SINTERCARD", "1", a, "LIMIT", "-1"]),
        b"-ERR LIMIT can't be negative\r\n"
    );
    assert_bytes!(
        c.cmd(&["SINTERCARD", "1", a, "LIMIT", "x"]),
        b"-ERR LIMIT can't be negative\r\n"
    );
    assert_bytes!(c.cmd(&["SINTERCARD", "1", a, "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["SINTERCARD", "1", a, "LIMIT"]), SYNTAX);
    assert_bytes!(c.cmd(&["SINTERCARD", "1"]), arity("sintercard"));
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SINTERCARD", "2", a, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SINTERCARD", "2", missing, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["DEL", a, b, cc, s]), b":4\r\n");
}

#[test]
fn store_commands() {
    let t = shared();
    let mut c = t.raw_conn();
    let a = "set_store:{x}a";
    let b = "set_store:{x}b";
    let d = "set_store:{x}d";
    let missing = "set_store:{x}missing";
    sadd(&mut c, a, &["1", "2", "3", "x"]);
    sadd(&mut c, b, &["2", "3", "4", "x"]);
    assert_bytes!(c.cmd(&["SINTERSTORE", d, a, b]), b":3\r\n");
    assert_eq!(smembers(&mut c, d), set_of(&["2", "3", "x"]));
    assert_bytes!(c.cmd(&["SUNIONSTORE", d, a, b]), b":5\r\n");
    assert_eq!(smembers(&mut c, d), set_of(&["1", "2", "3", "4", "x"]));
    assert_bytes!(c.cmd(&["SDIFFSTORE", d, b, a]), b":1\r\n");
    assert_eq!(smembers(&mut c, d), set_of(&["4"]));
    // The destination may be one of the sources.
    assert_bytes!(c.cmd(&["SUNIONSTORE", a, a, b]), b":5\r\n");
    assert_eq!(smembers(&mut c, a), set_of(&["1", "2", "3", "4", "x"]));
    // A destination of another type is overwritten, and loses its TTL.
    assert_bytes!(c.cmd(&["SET", d, "str", "EX", "1000"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SINTERSTORE", d, a, b]), b":4\r\n");
    assert_bytes!(c.cmd(&["TYPE", d]), b"+set\r\n");
    assert_bytes!(c.cmd(&["TTL", d]), b":-1\r\n");
    // An empty result deletes the destination, whatever its type.
    assert_bytes!(c.cmd(&["SINTERSTORE", d, a, missing]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", d, "str"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SDIFFSTORE", d, a, a]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["SADD", d, "m"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SUNIONSTORE", d, missing, missing]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    // Wrong-type source: error, destination untouched.
    assert_bytes!(c.cmd(&["SADD", d, "keep"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SET", missing, "str"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SINTERSTORE", d, a, missing]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SUNIONSTORE", d, a, missing]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SDIFFSTORE", d, a, missing]), WRONGTYPE);
    assert_eq!(smembers(&mut c, d), set_of(&["keep"]));
    assert_bytes!(c.cmd(&["SINTERSTORE", d]), arity("sinterstore"));
    assert_bytes!(c.cmd(&["DEL", a, b, d, missing]), b":4\r\n");
}

#[test]
fn sscan() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_sscan:s";
    sadd(&mut c, k, &["a1", "b1", "a2"]);
    let r = parse(&c.cmd(&["SSCAN", k, "0"]));
    assert_eq!(r.items()[0].text(), "0");
    assert_eq!(distinct(&r.items()[1]), set_of(&["a1", "b1", "a2"]));
    let r = parse(&c.cmd(&["SSCAN", k, "0", "MATCH", "a*"]));
    assert_eq!(r.items()[0].text(), "0");
    assert_eq!(distinct(&r.items()[1]), set_of(&["a1", "a2"]));
    assert_bytes!(
        c.cmd(&["SSCAN", "set_sscan:missing", "0"]),
        b"*2\r\n$1\r\n0\r\n*0\r\n"
    );
    assert_bytes!(c.cmd(&["SSCAN", k, "0", "COUNT", "0"]), SYNTAX);
    assert_bytes!(c.cmd(&["SSCAN", k, "0", "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["SSCAN", k, "x"]), b"-ERR invalid cursor\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
    // A big set: follow the cursor to 0; every member is seen.
    let big = "set_sscan:big";
    let mut args: Vec<String> = vec!["SADD".into(), big.into()];
    args.extend((0..1000).map(|i| format!("m{i}")));
    assert_bytes!(c.cmd(&args), b":1000\r\n");
    let mut seen = BTreeSet::new();
    let mut matched = BTreeSet::new();
    for (pattern, out) in [("*", &mut seen), ("m9?", &mut matched)] {
        let mut cursor = "0".to_string();
        let mut rounds = 0;
        loop {
            let r = parse(&c.cmd(&["SSCAN", big, &cursor, "MATCH", pattern, "COUNT", "37"]));
            out.extend(texts(&r.items()[1]));
            cursor = r.items()[0].text();
            rounds += 1;
            assert!(rounds < 100_000, "SSCAN did not finish");
            if cursor == "0" {
                break;
            }
        }
    }
    assert_eq!(seen.len(), 1000);
    let want: BTreeSet<String> = (90..100).map(|i| format!("m{i}")).collect();
    assert_eq!(matched, want);
    // Integer sets scan too.
    let ints = "set_sscan:ints";
    sadd(&mut c, ints, &["1", "2", "3"]);
    let r = parse(&c.cmd(&["SSCAN", ints, "0"]));
    assert_eq!(r.items()[0].text(), "0");
    assert_eq!(distinct(&r.items()[1]), set_of(&["1", "2", "3"]));
    assert_bytes!(c.cmd(&["DEL", big, ints]), b":2\r\n");
}

#[test]
fn encoding_intset_to_hashtable() {
    let t = exclusive();
    let mut c = t.raw_conn();
    sadd(&mut c, "ints", &["1", "2", "-3", "9223372036854775807", "-9223372036854775808"]);
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "ints"]), b"$6\r\nintset\r\n");
    // Anything that is not a canonical 64-bit integer converts.
    for (k, v) in [
        ("s1", "abc"),
        ("s2", "9223372036854775808"),
        ("s3", "01"),
        ("s4", " 1"),
        ("s5", "+1"),
        ("s6", "-0"),
        ("s7", "1.0"),
    ] {
        sadd(&mut c, k, &[v]);
        assert_bytes!(
            c.cmd(&["OBJECT", "ENCODING", k]),
            b"$9\r\nhashtable\r\n",
            "member {v:?}"
        );
    }
    assert_bytes!(c.cmd(&["SADD", "ints", "x"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "ints"]), b"$9\r\nhashtable\r\n");
    // No conversion back.
    assert_bytes!(c.cmd(&["SREM", "ints", "x"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "ints"]), b"$9\r\nhashtable\r\n");
    // By number of entries (default 512).
    let mut args: Vec<String> = vec!["SADD".into(), "many".into()];
    args.extend((0..512).map(|i| i.to_string()));
    assert_bytes!(c.cmd(&args), b":512\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "many"]), b"$6\r\nintset\r\n");
    assert_bytes!(c.cmd(&["SADD", "many", "512"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "many"]), b"$9\r\nhashtable\r\n");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "set-max-intset-entries", "4"]),
        b"+OK\r\n"
    );
    sadd(&mut c, "four", &["1", "2", "3", "4"]);
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "four"]), b"$6\r\nintset\r\n");
    assert_bytes!(c.cmd(&["SADD", "four", "5"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "four"]), b"$9\r\nhashtable\r\n");
    sadd(&mut c, "five", &["1", "2", "3", "4", "5"]);
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "five"]), b"$9\r\nhashtable\r\n");
    // Redis 7.0 has no listpack sets: small non-integer sets are hashtables.
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "s1"]), b"$9\r\nhashtable\r\n");
    // Store results of integers only are intsets.
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "set-max-intset-entries", "512"]),
        b"+OK\r\n"
    );
    sadd(&mut c, "i1", &["1", "2", "3"]);
    sadd(&mut c, "mixed", &["2", "3", "x"]);
    assert_bytes!(c.cmd(&["SINTERSTORE", "dst", "i1", "mixed"]), b":2\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "dst"]), b"$6\r\nintset\r\n");
    // A member moved into an intset converts it.
    assert_bytes!(c.cmd(&["SMOVE", "mixed", "i1", "x"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "i1"]), b"$9\r\nhashtable\r\n");
}

#[test]
fn wrongtype_and_arity() {
    let t = shared();
    let mut c = t.raw_conn();
    let s = "set_wt:{x}str";
    let other = "set_wt:{x}other";
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    let cmds: &[&[&str]] = &[
        &["SADD", s, "a"],
        &["SREM", s, "a"],
        &["SMEMBERS", s],
        &["SISMEMBER", s, "a"],
        &["SMISMEMBER", s, "a"],
        &["SCARD", s],
        &["SPOP", s],
        &["SPOP", s, "2"],
        &["SRANDMEMBER", s],
        &["SRANDMEMBER", s, "-2"],
        &["SMOVE", s, other, "a"],
        &["SSCAN", s, "0"],
        &["SINTERCARD", "1", s],
    ];
    for args in cmds {
        assert_bytes!(c.cmd(args), WRONGTYPE, "{args:?}");
    }
    assert_bytes!(c.cmd(&["GET", s]), b"$1\r\nv\r\n");
    assert_bytes!(c.cmd(&["SADD", other, "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["GET", other]), WRONGTYPE);
    let cases: &[(&[&str], &str)] = &[
        (&["SADD", other], "sadd"),
        (&["SREM", other], "srem"),
        (&["SMEMBERS"], "smembers"),
        (&["SISMEMBER", other], "sismember"),
        (&["SCARD"], "scard"),
        (&["SPOP"], "spop"),
        (&["SRANDMEMBER"], "srandmember"),
        (&["SSCAN", other], "sscan"),
        (&["SUNIONSTORE", other], "sunionstore"),
        (&["SDIFFSTORE", other], "sdiffstore"),
    ];
    for (args, name) in cases {
        assert_bytes!(c.cmd(args), arity(name), "{args:?}");
    }
    assert_bytes!(c.cmd(&["DEL", s, other]), b":2\r\n");
}

#[test]
fn resp3_shapes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_resp3:{x}s";
    let missing = "set_resp3:{x}missing";
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    assert_bytes!(c.cmd(&["SADD", k, "a"]), b":1\r\n");
    // SMEMBERS, SINTER, SUNION, SDIFF and SPOP with count are sets ('~').
    assert_bytes!(c.cmd(&["SMEMBERS", k]), b"~1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["SMEMBERS", missing]), b"~0\r\n");
    assert_bytes!(c.cmd(&["SINTER", k, k]), b"~1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["SUNION", k, missing]), b"~1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["SDIFF", k, missing]), b"~1\r\n$1\r\na\r\n");
    // SRANDMEMBER with count and SMISMEMBER stay arrays.
    assert_bytes!(c.cmd(&["SRANDMEMBER", k, "1"]), b"*1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["SMISMEMBER", k, "a", "b"]), b"*2\r\n:1\r\n:0\r\n");
    assert_bytes!(c.cmd(&["SRANDMEMBER", missing]), b"_\r\n");
    assert_bytes!(c.cmd(&["SPOP", missing]), b"_\r\n");
    assert_bytes!(c.cmd(&["SPOP", missing, "1"]), b"~0\r\n");
    assert_bytes!(c.cmd(&["SPOP", k, "1"]), b"~1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
}

/// Basalt keeps a small intset inline (as deltas between sorted members) and boxes it
/// past about 1 KiB: members spread over the whole i64 range, growing across that bound
/// and shrinking back, must all stay members, and a string member still converts it.
#[test]
fn an_intset_growing_and_shrinking_across_the_inline_bound_keeps_its_members() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "intset_bound:s";
    let mut model = BTreeSet::new();
    let mut x: i64 = -9_000_000_000_000_000_000 + 17;
    for i in 0..500 {
        x = x.wrapping_add(36_028_797_018_963_968 + i * 7_919); // ~2^55: large deltas
        let v = x.to_string();
        c.cmd(&["SADD", k, &v]);
        model.insert(v);
    }
    for extreme in [i64::MIN.to_string(), i64::MAX.to_string(), "0".into(), "-1".into()] {
        c.cmd(&["SADD", k, &extreme]);
        model.insert(extreme);
    }
    assert_eq!(smembers(&mut c, k), model);
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", k]), b"$6\r\nintset\r\n");
    let all: Vec<String> = model.iter().cloned().collect();
    for (i, m) in all.iter().enumerate() {
        if i % 5 != 0 {
            assert_bytes!(c.cmd(&["SREM", k, m]), b":1\r\n");
            model.remove(m);
        }
    }
    assert_eq!(smembers(&mut c, k), model);
    let first = model.iter().next().expect("members left").clone();
    assert_bytes!(c.cmd(&["SISMEMBER", k, &first]), b":1\r\n");
    assert_bytes!(c.cmd(&["SADD", k, "not-a-number"]), b":1\r\n");
    model.insert("not-a-number".into());
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", k]), b"$9\r\nhashtable\r\n");
    assert_eq!(smembers(&mut c, k), model);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

/// Basalt keeps a set of a few short strings packed (inline in the entry) and reports
/// "hashtable", as Redis 7.0 does for any set of strings: members, removal, random
/// picks and the set algebra must behave as for any set, across the packed limits.
#[test]
fn small_string_sets_behave_as_sets_across_the_packed_limits() {
    let t = shared();
    let mut c = t.raw_conn();
    let (a, b) = ("strset:a", "strset:b");
    sadd(&mut c, a, &["tag-1", "tag-2", "7", "tag-3"]);
    sadd(&mut c, b, &["7", "tag-3", "other"]);
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", a]), b"$9\r\nhashtable\r\n");
    assert_bytes!(c.cmd(&["SADD", a, "tag-1", "tag-4"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SCARD", a]), b":5\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", a, "7"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", a, "tag"]), b":0\r\n");
    assert_eq!(members(&c.cmd(&["SINTER", a, b])), set_of(&["7", "tag-3"]));
    assert_bytes!(c.cmd(&["SREM", a, "tag-2", "missing"]), b":1\r\n");
    assert_eq!(smembers(&mut c, a), set_of(&["tag-1", "7", "tag-3", "tag-4"]));
    let picked = members(&c.cmd(&["SRANDMEMBER", a, "10"]));
    assert_eq!(picked, set_of(&["tag-1", "7", "tag-3", "tag-4"]));
    // Past 128 members (and for a member over 64 bytes) it is a hash table inside; the
    // same answers.
    let many: Vec<String> = (0..200).map(|i| format!("member-{i}")).collect();
    let refs: Vec<&str> = many.iter().map(String::as_str).collect();
    sadd(&mut c, a, &refs);
    let long = "L".repeat(100);
    sadd(&mut c, b, &[&long]);
    assert_bytes!(c.cmd(&["SCARD", a]), b":204\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", b, &long]), b":1\r\n");
    assert_eq!(members(&c.cmd(&["SINTER", a, b])), set_of(&["7", "tag-3"]));
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", a]), b"$9\r\nhashtable\r\n");
    // SPOP empties a small set and the key goes away.
    assert_bytes!(c.cmd(&["SADD", "strset:c", "x", "y"]), b":2\r\n");
    assert_eq!(members(&c.cmd(&["SPOP", "strset:c", "5"])), set_of(&["x", "y"]));
    assert_bytes!(c.cmd(&["EXISTS", "strset:c"]), b":0\r\n");
    assert_bytes!(c.cmd(&["DEL", a, b]), b":2\r\n");
}

/// Single random picks from a set held as a hash table (past the packed limits): every
/// member comes up about equally often, and SPOP one at a time drains the set, each
/// member once, through the table shrinking under it.
#[test]
fn random_picks_from_a_large_set_are_uniform_and_spop_drains_it() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_random_large:s";
    let names: Vec<String> = (0..200).map(|i| format!("member-{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    sadd(&mut c, k, &refs);
    assert_uniform_picks(&mut c, &["SRANDMEMBER", k], 20, 200);
    // Counted picks on the same set: a small positive count gives distinct members, a
    // negative one |count| members that may repeat, a large positive one the whole set.
    let all: BTreeSet<String> = names.iter().cloned().collect();
    let ten = members(&c.cmd(&["SRANDMEMBER", k, "10"]));
    assert_eq!(ten.len(), 10);
    assert!(ten.is_subset(&all));
    let r = c.cmd(&["SRANDMEMBER", k, "-500"]);
    assert!(r.starts_with(b"*500\r\n"), "{:?}", String::from_utf8_lossy(&r[..20]));
    let drawn = texts(&parse(&r));
    assert_eq!(drawn.len(), 500);
    assert!(drawn.iter().all(|m| all.contains(m)));
    assert_eq!(members(&c.cmd(&["SRANDMEMBER", k, "150"])).len(), 150);
    assert_eq!(members(&c.cmd(&["SRANDMEMBER", k, "1000"])), all);
    let mut popped = BTreeSet::new();
    for _ in 0..200 {
        assert!(popped.insert(parse(&c.cmd(&["SPOP", k])).text()));
    }
    assert_eq!(popped, names.iter().cloned().collect::<BTreeSet<_>>());
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["SPOP", k]), b"$-1\r\n");
}

/// A large set is walked a few elements per call, and every member present for the whole
/// walk is returned even while other members are added (the table grows several times)
/// and then removed (it shrinks): Redis's SCAN guarantee, without one reply of the
/// whole collection (which on millions of elements would stall the server).
#[test]
fn sscan_walks_a_large_set_in_steps_and_misses_nothing_while_it_changes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "set_scan_churn:s";
    let mut args: Vec<String> = vec!["SADD".into(), k.into()];
    args.extend((0..2000).map(|i| format!("s{i}")));
    assert_bytes!(c.cmd(&args), b":2000\r\n");
    let (seen, largest) = scan_with_churn(&mut c, "SSCAN", k, 1, |c, call| scan_churn(c, call, k, "SADD", "SREM", |n| vec![n]));
    assert!((0..2000).all(|i| seen.contains(&format!("s{i}"))), "a member present throughout was missed");
    assert!(largest <= 200, "one SSCAN reply carried {largest} members");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}
