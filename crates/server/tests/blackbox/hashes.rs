//! Hash commands (HSET, HGET, HGETALL, HINCRBY, HRANDFIELD, HSCAN, ...).
//!
//! Small hashes are listpack-encoded in Redis 7.0 and keep insertion order,
//! so HGETALL/HKEYS/HVALS of small hashes are asserted byte for byte;
//! hashtable-encoded hashes are compared as sets.

use std::collections::{BTreeMap, BTreeSet};

use crate::assert_bytes;
use crate::harness::*;

const NOT_FLOAT: &[u8] = b"-ERR value is not a valid float\r\n";


fn texts(r: &Resp) -> Vec<String> {
    r.items().iter().map(|x| x.text()).collect()
}

/// Field -> value of an HGETALL-like flat reply (RESP2) or map (RESP3).
fn as_map(r: &Resp) -> BTreeMap<String, String> {
    r.pairs()
        .into_iter()
        .map(|(k, v)| (k.text(), v.text()))
        .collect()
}

/// Every field/value of `key`, by a full HSCAN iteration (bounded).
fn hscan_all(c: &mut RawConn, key: &str, extra: &[&str]) -> Vec<(String, String)> {
    let mut cursor = "0".to_string();
    let mut out = Vec::new();
    for _ in 0..100_000 {
        let mut args = vec!["HSCAN", key, &cursor];
        args.extend_from_slice(extra);
        let r = parse(&c.cmd(&args));
        let items = r.items();
        for kv in items[1].items().chunks(2) {
            out.push((kv[0].text(), kv[1].text()));
        }
        cursor = items[0].text();
        if cursor == "0" {
            return out;
        }
    }
    panic!("HSCAN did not finish");
}

#[test]
fn hset_returns_number_of_new_fields() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_hset:h";
    assert_bytes!(c.cmd(&["HSET", k, "a", "1", "b", "2"]), b":2\r\n");
    // An existing field is updated, not counted; a repeated new field counts once.
    assert_bytes!(c.cmd(&["HSET", k, "a", "10", "c", "3", "c", "4"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "a"]), b"$2\r\n10\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "c"]), b"$1\r\n4\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "zz"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["HGET", "hash_hset:missing", "a"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["HLEN", k]), b":3\r\n");
    assert_bytes!(c.cmd(&["HLEN", "hash_hset:missing"]), b":0\r\n");
    assert_bytes!(c.cmd(&["TYPE", k]), b"+hash\r\n");
    // Empty field and value are fine; binary data too.
    assert_bytes!(c.cmd(&["HSET", k, "", ""]), b":1\r\n");
    assert_bytes!(c.cmd(&["HGET", k, ""]), b"$0\r\n\r\n");
    assert_bytes!(
        c.cmd(&[b"HSET".as_slice(), k.as_bytes(), b"\x00\xff", b"a\r\nb"]),
        b":1\r\n"
    );
    assert_bytes!(
        c.cmd(&[b"HGET".as_slice(), k.as_bytes(), b"\x00\xff"]),
        b"$4\r\na\r\nb\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hsetnx_and_hmset() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_hsetnx:h";
    assert_bytes!(c.cmd(&["HSETNX", k, "a", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HSETNX", k, "a", "2"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "a"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["HMSET", k, "a", "3", "b", "4"]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["HMGET", k, "a", "nope", "b"]),
        b"*3\r\n$1\r\n3\r\n$-1\r\n$1\r\n4\r\n"
    );
    assert_bytes!(
        c.cmd(&["HMGET", "hash_hsetnx:missing", "a", "b"]),
        b"*2\r\n$-1\r\n$-1\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hgetall_hkeys_hvals_keep_insertion_order_for_small_hashes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_order:h";
    assert_bytes!(c.cmd(&["HSET", k, "z", "1", "a", "2", "m", "3"]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["HGETALL", k]),
        b"*6\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nm\r\n$1\r\n3\r\n"
    );
    // Updating keeps the position; a field deleted and re-added goes last.
    assert_bytes!(c.cmd(&["HSET", k, "z", "9"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HDEL", k, "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HSET", k, "a", "7"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&["HGETALL", k]),
        b"*6\r\n$1\r\nz\r\n$1\r\n9\r\n$1\r\nm\r\n$1\r\n3\r\n$1\r\na\r\n$1\r\n7\r\n"
    );
    assert_bytes!(
        c.cmd(&["HKEYS", k]),
        b"*3\r\n$1\r\nz\r\n$1\r\nm\r\n$1\r\na\r\n"
    );
    assert_bytes!(
        c.cmd(&["HVALS", k]),
        b"*3\r\n$1\r\n9\r\n$1\r\n3\r\n$1\r\n7\r\n"
    );
    assert_bytes!(c.cmd(&["HGETALL", "hash_order:missing"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["HKEYS", "hash_order:missing"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["HVALS", "hash_order:missing"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

/// Basalt stores a small hash's fields with their common prefix once: fields that are
/// prefixes of each other, the empty field, a field shorter than the prefix, and a new
/// field that shrinks the prefix must all read back exactly.
#[test]
fn small_hash_fields_sharing_prefixes_read_back_exactly() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_prefix:h";
    assert_bytes!(
        c.cmd(&["HSET", k, "field:1", "a", "field:10", "b", "field:100", "c"]),
        b":3\r\n"
    );
    assert_bytes!(c.cmd(&["HGET", k, "field:10"]), b"$1\r\nb\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "field:"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "fie"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "field:1000"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["HEXISTS", k, "field:100"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HSTRLEN", k, "field:1"]), b":1\r\n");
    // A field with no common prefix, then the empty field.
    assert_bytes!(c.cmd(&["HSET", k, "other", "d", "", "e"]), b":2\r\n");
    assert_bytes!(c.cmd(&["HGET", k, ""]), b"$1\r\ne\r\n");
    assert_bytes!(c.cmd(&["HMGET", k, "field:100", "other", "field:1"]), b"*3\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["HDEL", k, "other", ""]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["HGETALL", k]),
        b"*6\r\n$7\r\nfield:1\r\n$1\r\na\r\n$8\r\nfield:10\r\n$1\r\nb\r\n$9\r\nfield:100\r\n$1\r\nc\r\n"
    );
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", k]), b"$8\r\nlistpack\r\n");
    // The same through a sorted set, whose members are stored the same way.
    let z = "hash_prefix:z";
    assert_bytes!(c.cmd(&["ZADD", z, "3", "member:1", "1.5", "member:12", "-2", "member:"]), b":3\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", z, "member:12"]), b"$3\r\n1.5\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", z, "member"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZMSCORE", z, "member:", "member:1", "x"]), b"*3\r\n$2\r\n-2\r\n$1\r\n3\r\n$-1\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", z, "0", "-1"]),
        b"*3\r\n$7\r\nmember:\r\n$9\r\nmember:12\r\n$8\r\nmember:1\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k, z]), b":2\r\n");
}

#[test]
fn hdel_counts_removed_fields_and_deletes_empty_hash() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_hdel:h";
    assert_bytes!(c.cmd(&["HSET", k, "a", "1", "b", "2", "c", "3"]), b":3\r\n");
    assert_bytes!(c.cmd(&["HDEL", k, "a", "zz", "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HDEL", k, "zz"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HDEL", "hash_hdel:missing", "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "1000"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HDEL", k, "b", "c"]), b":2\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["TYPE", k]), b"+none\r\n");
    // A new hash at the same name does not inherit the old TTL.
    assert_bytes!(c.cmd(&["HSET", k, "a", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hstrlen_and_hexists() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_strlen:h";
    assert_bytes!(
        c.cmd(&["HSET", k, "s", "hello", "n", "-12345", "e", ""]),
        b":3\r\n"
    );
    assert_bytes!(c.cmd(&["HSTRLEN", k, "s"]), b":5\r\n");
    // Integers stored compactly still report their string length.
    assert_bytes!(c.cmd(&["HSTRLEN", k, "n"]), b":6\r\n");
    assert_bytes!(c.cmd(&["HSTRLEN", k, "e"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HSTRLEN", k, "zz"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HSTRLEN", "hash_strlen:missing", "s"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HEXISTS", k, "e"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HEXISTS", k, "zz"]), b":0\r\n");
    assert_bytes!(c.cmd(&["HEXISTS", "hash_strlen:missing", "s"]), b":0\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hincrby() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_incr:h";
    assert_bytes!(c.cmd(&["HINCRBY", k, "n", "5"]), b":5\r\n");
    assert_bytes!(c.cmd(&["HINCRBY", k, "n", "-7"]), b":-2\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "n"]), b"$2\r\n-2\r\n");
    assert_bytes!(
        c.cmd(&["HSET", k, "max", "9223372036854775807", "min", "-9223372036854775808"]),
        b":2\r\n"
    );
    assert_bytes!(
        c.cmd(&["HINCRBY", k, "max", "1"]),
        b"-ERR increment or decrement would overflow\r\n"
    );
    assert_bytes!(
        c.cmd(&["HINCRBY", k, "min", "-1"]),
        b"-ERR increment or decrement would overflow\r\n"
    );
    assert_bytes!(c.cmd(&["HINCRBY", k, "max", "0"]), b":9223372036854775807\r\n");
    assert_bytes!(c.cmd(&["HINCRBY", k, "min", "9223372036854775807"]), b":-1\r\n");
    // The increment itself must be a 64-bit integer.
    assert_bytes!(c.cmd(&["HINCRBY", k, "n", "9223372036854775808"]), NOT_INT);
    assert_bytes!(c.cmd(&["HINCRBY", k, "n", "1.5"]), NOT_INT);
    assert_bytes!(c.cmd(&["HINCRBY", k, "n", "x"]), NOT_INT);
    // The stored value must be an integer.
    assert_bytes!(c.cmd(&["HSET", k, "s", "abc", "f", "1.5", "sp", " 1"]), b":3\r\n");
    for f in ["s", "f", "sp"] {
        assert_bytes!(
            c.cmd(&["HINCRBY", k, f, "1"]),
            b"-ERR hash value is not an integer\r\n",
            "field {f}"
        );
    }
    assert_bytes!(c.cmd(&["HGET", k, "s"]), b"$3\r\nabc\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hincrbyfloat() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_incrf:h";
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "f", "1.5"]), b"$3\r\n1.5\r\n");
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "f", "0.25"]), b"$4\r\n1.75\r\n");
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "f", "-1.75"]), b"$1\r\n0\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "f"]), b"$1\r\n0\r\n");
    assert_bytes!(c.cmd(&["HSET", k, "g", "10.50", "i", "5", "e", "5.0e3"]), b":3\r\n");
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "g", "0.1"]), b"$4\r\n10.6\r\n");
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "i", "2"]), b"$1\r\n7\r\n");
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "e", "1"]), b"$4\r\n5001\r\n");
    // The result is stored as a string, still usable by HINCRBY.
    assert_bytes!(c.cmd(&["HINCRBY", k, "e", "1"]), b":5002\r\n");
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "f", "x"]), NOT_FLOAT);
    assert_bytes!(
        c.cmd(&["HINCRBYFLOAT", k, "f", "inf"]),
        b"-ERR value is NaN or Infinity\r\n"
    );
    assert_bytes!(c.cmd(&["HSET", k, "s", "abc", "sp", " 1"]), b":2\r\n");
    for f in ["s", "sp"] {
        assert_bytes!(
            c.cmd(&["HINCRBYFLOAT", k, f, "1"]),
            b"-ERR hash value is not a float\r\n",
            "field {f}"
        );
    }
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hrandfield() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_rand:h";
    let all: BTreeMap<String, String> = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4"), ("e", "5")]
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    assert_bytes!(
        c.cmd(&["HSET", k, "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"]),
        b":5\r\n"
    );
    // Missing key.
    assert_bytes!(c.cmd(&["HRANDFIELD", "hash_rand:missing"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["HRANDFIELD", "hash_rand:missing", "3"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["HRANDFIELD", "hash_rand:missing", "-3", "WITHVALUES"]),
        b"*0\r\n"
    );
    // No count: one bulk field.
    for _ in 0..20 {
        let r = parse(&c.cmd(&["HRANDFIELD", k]));
        assert!(all.contains_key(&r.text()), "{r:?}");
    }
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "0"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "0", "WITHVALUES"]), b"*0\r\n");
    // Positive count: distinct fields, at most the hash size.
    for n in [1usize, 3, 5, 6, 100] {
        let got = texts(&parse(&c.cmd(&["HRANDFIELD", k, &n.to_string()])));
        assert_eq!(got.len(), n.min(5), "count {n}: {got:?}");
        let set: BTreeSet<_> = got.iter().cloned().collect();
        assert_eq!(set.len(), got.len(), "count {n} repeated a field: {got:?}");
        assert!(got.iter().all(|f| all.contains_key(f)), "{got:?}");
    }
    // Negative count: exactly |count| fields, repeats allowed.
    let got = texts(&parse(&c.cmd(&["HRANDFIELD", k, "-20"])));
    assert_eq!(got.len(), 20);
    assert!(got.iter().all(|f| all.contains_key(f)), "{got:?}");
    // WITHVALUES: flat field, value pairs that belong together.
    for n in ["3", "-8", "10"] {
        let r = parse(&c.cmd(&["HRANDFIELD", k, n, "WITHVALUES"]));
        let pairs = r.pairs();
        let want = match n {
            "3" => 3,
            "-8" => 8,
            _ => 5,
        };
        assert_eq!(pairs.len(), want, "count {n}");
        for (f, v) in pairs {
            assert_eq!(all.get(&f.text()), Some(&v.text()), "count {n}");
        }
    }
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "1", "foo"]), SYNTAX);
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "1", "WITHVALUES", "x"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["HRANDFIELD", k, "-9223372036854775808"]),
        b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"
    );
    assert_bytes!(
        c.cmd(&["HRANDFIELD", k, "-9223372036854775807", "WITHVALUES"]),
        b"-ERR value is out of range\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hrandfield_single_field_hash() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_rand1:h";
    assert_bytes!(c.cmd(&["HSET", k, "only", "v"]), b":1\r\n");
    assert_bytes!(c.cmd(&["HRANDFIELD", k]), b"$4\r\nonly\r\n");
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "1"]), b"*1\r\n$4\r\nonly\r\n");
    assert_bytes!(
        c.cmd(&["HRANDFIELD", k, "-3"]),
        b"*3\r\n$4\r\nonly\r\n$4\r\nonly\r\n$4\r\nonly\r\n"
    );
    assert_bytes!(
        c.cmd(&["HRANDFIELD", k, "-2", "WITHVALUES"]),
        b"*4\r\n$4\r\nonly\r\n$1\r\nv\r\n$4\r\nonly\r\n$1\r\nv\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn hscan_iterates_everything_and_matches() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_scan:h";
    // Small (listpack) hash: one call, cursor 0, everything in order.
    assert_bytes!(c.cmd(&["HSET", k, "a1", "x", "b1", "y", "a2", "z"]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["HSCAN", k, "0"]),
        b"*2\r\n$1\r\n0\r\n*6\r\n$2\r\na1\r\n$1\r\nx\r\n$2\r\nb1\r\n$1\r\ny\r\n$2\r\na2\r\n$1\r\nz\r\n"
    );
    assert_bytes!(
        c.cmd(&["HSCAN", k, "0", "MATCH", "a*"]),
        b"*2\r\n$1\r\n0\r\n*4\r\n$2\r\na1\r\n$1\r\nx\r\n$2\r\na2\r\n$1\r\nz\r\n"
    );
    assert_bytes!(
        c.cmd(&["HSCAN", "hash_scan:missing", "0"]),
        b"*2\r\n$1\r\n0\r\n*0\r\n"
    );
    assert_bytes!(c.cmd(&["HSCAN", k, "0", "COUNT", "0"]), SYNTAX);
    assert_bytes!(c.cmd(&["HSCAN", k, "x"]), b"-ERR invalid cursor\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");

    // Big (hashtable) hash: iterate with the cursor until 0.
    let big = "hash_scan:big";
    let mut args: Vec<String> = vec!["HSET".into(), big.into()];
    for i in 0..1000 {
        args.push(format!("f{i}"));
        args.push(format!("v{i}"));
    }
    assert_bytes!(c.cmd(&args), b":1000\r\n");
    let got = hscan_all(&mut c, big, &["COUNT", "50"]);
    let mut seen = BTreeMap::new();
    for (f, v) in got {
        assert_eq!(v, format!("v{}", &f[1..]));
        seen.insert(f, v);
    }
    assert_eq!(seen.len(), 1000);
    let matched: BTreeSet<String> = hscan_all(&mut c, big, &["MATCH", "f1?"])
        .into_iter()
        .map(|(f, _)| f)
        .collect();
    let want: BTreeSet<String> = (10..20).map(|i| format!("f{i}")).collect();
    assert_eq!(matched, want);
    let all = as_map(&parse(&c.cmd(&["HGETALL", big])));
    assert_eq!(all.len(), 1000);
    assert_eq!(all.get("f999").map(String::as_str), Some("v999"));
    assert_bytes!(c.cmd(&["DEL", big]), b":1\r\n");
}

#[test]
fn encoding_listpack_to_hashtable_by_entries() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "hash-max-listpack-entries", "4"]),
        b"+OK\r\n"
    );
    assert_bytes!(
        c.cmd(&["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"]),
        b":4\r\n"
    );
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "h"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["HSET", "h", "e", "5"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "h"]), b"$9\r\nhashtable\r\n");
    // No conversion back when shrinking.
    assert_bytes!(c.cmd(&["HDEL", "h", "e", "d"]), b":2\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "h"]), b"$9\r\nhashtable\r\n");
    let m = as_map(&parse(&c.cmd(&["HGETALL", "h"])));
    let want: BTreeMap<String, String> = [("a", "1"), ("b", "2"), ("c", "3")]
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    assert_eq!(m, want);
    // A single HSET with too many pairs converts at once.
    assert_bytes!(
        c.cmd(&["HSET", "h2", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5"]),
        b":5\r\n"
    );
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "h2"]), b"$9\r\nhashtable\r\n");
    // The old name is an alias.
    assert_bytes!(
        c.cmd(&["CONFIG", "GET", "hash-max-ziplist-entries"]),
        b"*2\r\n$24\r\nhash-max-ziplist-entries\r\n$1\r\n4\r\n"
    );
}

#[test]
fn encoding_listpack_to_hashtable_by_value_length() {
    let t = exclusive();
    let mut c = t.raw_conn();
    // Default is 64 bytes.
    let v64 = "x".repeat(64);
    let v65 = "x".repeat(65);
    assert_bytes!(c.cmd(&["HSET", "v", "a", &v64]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "v"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["HSET", "v", "b", &v65]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "v"]), b"$9\r\nhashtable\r\n");
    // A long field name converts too.
    assert_bytes!(c.cmd(&["HSET", "w", &v65, "x"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "w"]), b"$9\r\nhashtable\r\n");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "hash-max-listpack-value", "2"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["HSET", "y", "ab", "12"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "y"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["HSETNX", "y", "abc", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "y"]), b"$9\r\nhashtable\r\n");
    assert_bytes!(c.cmd(&["HGET", "y", "abc"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["HMSET", "z", "a", "123"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "z"]), b"$9\r\nhashtable\r\n");
}

#[test]
fn arity_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_arity:h";
    let cases: &[(&[&str], &str)] = &[
        (&["HSET", k], "hset"),
        (&["HSET", k, "a"], "hset"),
        (&["HSET", k, "a", "1", "b"], "hset"),
        (&["HSETNX", k, "a"], "hsetnx"),
        (&["HSETNX", k, "a", "1", "2"], "hsetnx"),
        (&["HMSET", k, "a"], "hmset"),
        (&["HMSET", k, "a", "1", "b"], "hmset"),
        (&["HGET", k], "hget"),
        (&["HGET", k, "a", "b"], "hget"),
        (&["HMGET", k], "hmget"),
        (&["HDEL", k], "hdel"),
        (&["HLEN"], "hlen"),
        (&["HLEN", k, "x"], "hlen"),
        (&["HSTRLEN", k], "hstrlen"),
        (&["HEXISTS", k], "hexists"),
        (&["HKEYS"], "hkeys"),
        (&["HVALS"], "hvals"),
        (&["HGETALL"], "hgetall"),
        (&["HINCRBY", k, "a"], "hincrby"),
        (&["HINCRBYFLOAT", k, "a"], "hincrbyfloat"),
        (&["HRANDFIELD"], "hrandfield"),
        (&["HSCAN", k], "hscan"),
    ];
    for (args, name) in cases {
        assert_bytes!(c.cmd(args), arity(name), "{args:?}");
    }
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
}

#[test]
fn wrongtype_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    let s = "hash_wt:s";
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    let cmds: &[&[&str]] = &[
        &["HSET", s, "a", "1"],
        &["HSETNX", s, "a", "1"],
        &["HMSET", s, "a", "1"],
        &["HGET", s, "a"],
        &["HMGET", s, "a"],
        &["HGETALL", s],
        &["HDEL", s, "a"],
        &["HLEN", s],
        &["HSTRLEN", s, "a"],
        &["HEXISTS", s, "a"],
        &["HKEYS", s],
        &["HVALS", s],
        &["HINCRBY", s, "a", "1"],
        &["HINCRBYFLOAT", s, "a", "1"],
        &["HRANDFIELD", s],
        &["HRANDFIELD", s, "2"],
        &["HSCAN", s, "0"],
    ];
    for args in cmds {
        assert_bytes!(c.cmd(args), WRONGTYPE, "{args:?}");
    }
    assert_bytes!(c.cmd(&["GET", s]), b"$1\r\nx\r\n");
    // And string commands on a hash.
    let h = "hash_wt:h";
    assert_bytes!(c.cmd(&["HSET", h, "a", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["GET", h]), WRONGTYPE);
    assert_bytes!(c.cmd(&["INCR", h]), WRONGTYPE);
    assert_bytes!(c.cmd(&["APPEND", h, "x"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["DEL", s, h]), b":2\r\n");
}

#[test]
fn resp3_shapes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_resp3:h";
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    assert_bytes!(c.cmd(&["HSET", k, "a", "1", "b", "2"]), b":2\r\n");
    // HGETALL is a map.
    assert_bytes!(
        c.cmd(&["HGETALL", k]),
        b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"
    );
    assert_bytes!(c.cmd(&["HGETALL", "hash_resp3:missing"]), b"%0\r\n");
    assert_bytes!(c.cmd(&["HGET", k, "zz"]), b"_\r\n");
    assert_bytes!(c.cmd(&["HMGET", k, "a", "zz"]), b"*2\r\n$1\r\n1\r\n_\r\n");
    // HINCRBYFLOAT stays a bulk string.
    assert_bytes!(c.cmd(&["HINCRBYFLOAT", k, "a", "0.5"]), b"$3\r\n1.5\r\n");
    // HRANDFIELD WITHVALUES is an array of [field, value] pairs.
    assert_bytes!(c.cmd(&["HDEL", k, "b"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&["HRANDFIELD", k, "1", "WITHVALUES"]),
        b"*1\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"
    );
    assert_bytes!(
        c.cmd(&["HRANDFIELD", k, "-2", "WITHVALUES"]),
        b"*2\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"
    );
    assert_bytes!(c.cmd(&["HRANDFIELD", k, "1"]), b"*1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn redis_rs_client_roundtrip() {
    let mut rc = conn();
    let k = "hash_rs:h";
    let n: i64 = q(&mut rc, &["HSET", k, "x", "1", "y", "2"]);
    assert_eq!(n, 2);
    let m: BTreeMap<String, String> = q(&mut rc, &["HGETALL", k]);
    assert_eq!(m.len(), 2);
    assert_eq!(m["y"], "2");
    let v: Vec<Option<String>> = q(&mut rc, &["HMGET", k, "x", "nope"]);
    assert_eq!(v, vec![Some("1".to_string()), None]);
    assert_eq!(
        qerr(&mut rc, &["HINCRBY", k, "x", "abc"]),
        "ERR value is not an integer or out of range"
    );
    let _: i64 = q(&mut rc, &["DEL", k]);
}

/// HRANDFIELD without a count on a hash held as a table (past the packed limits): every
/// field comes up about equally often, also after most fields were deleted.
#[test]
fn hrandfield_on_a_large_hash_is_uniform() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_random_large:h";
    let mut args = vec!["HSET".to_string(), k.to_string()];
    for i in 0..300 {
        args.push(format!("field-{i}"));
        args.push(format!("value-{i}"));
    }
    assert_bytes!(c.cmd(&args), b":300\r\n");
    // Leave 150 of them: the table thins out under the picks.
    let mut del = vec!["HDEL".to_string(), k.to_string()];
    del.extend((150..300).map(|i| format!("field-{i}")));
    assert_bytes!(c.cmd(&del), b":150\r\n");
    assert_uniform_picks(&mut c, &["HRANDFIELD", k], 15, 150);
    // Counted picks: distinct fields with their own values for a small positive count,
    // |count| pairs for a negative one.
    let r = c.cmd(&["HRANDFIELD", k, "20", "WITHVALUES"]);
    assert!(r.starts_with(b"*40\r\n"));
    let text = String::from_utf8_lossy(&r).into_owned();
    let items: Vec<&str> = text.split("\r\n").filter(|l| l.starts_with("field-") || l.starts_with("value-")).collect();
    assert_eq!(items.len(), 40);
    let fields: BTreeSet<&str> = items.iter().step_by(2).copied().collect();
    assert_eq!(fields.len(), 20, "distinct");
    for pair in items.chunks(2) {
        assert_eq!(pair[0]["field-".len()..], pair[1]["value-".len()..], "a field with its own value");
    }
    let r = c.cmd(&["HRANDFIELD", k, "-300"]);
    assert!(r.starts_with(b"*300\r\n"));
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

/// A large hash is walked a few elements per call, and every field present for the whole
/// walk is returned even while other fields are added (the table grows several times)
/// and then removed (it shrinks): Redis's SCAN guarantee, without one reply of the
/// whole collection (which on millions of elements would stall the server).
#[test]
fn hscan_walks_a_large_hash_in_steps_and_misses_nothing_while_it_changes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "hash_scan_churn:h";
    let mut args: Vec<String> = vec!["HSET".into(), k.into()];
    args.extend((0..2000).flat_map(|i| [format!("s{i}"), format!("v{i}")]));
    assert_bytes!(c.cmd(&args), b":2000\r\n");
    let (seen, largest) = scan_with_churn(&mut c, "HSCAN", k, 2, |c, call| scan_churn(c, call, k, "HSET", "HDEL", |n| vec![n, "x".into()]));
    assert!((0..2000).all(|i| seen.contains(&format!("s{i}"))), "a field present throughout was missed");
    assert!(largest <= 2 * 200, "one HSCAN reply carried {largest} items");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}
