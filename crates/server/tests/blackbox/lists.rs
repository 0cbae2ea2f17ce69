//! List commands (non-blocking). Blocking pops are in `blocking.rs`.

use crate::assert_bytes;
use crate::harness::*;




fn lrange_all(c: &mut RawConn, k: &str) -> Vec<String> {
    parse(&c.cmd(&["LRANGE", k, "0", "-1"]))
        .items()
        .iter()
        .map(|x| x.text())
        .collect()
}

#[test]
fn lpush_rpush_and_lrange() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_push:l";
    assert_bytes!(c.cmd(&["LPUSH", k, "a", "b", "c"]), b":3\r\n");
    assert_bytes!(c.cmd(&["RPUSH", k, "d", "e"]), b":5\r\n");
    // LPUSH of several values inserts them one by one at the head.
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["c", "b", "a", "d", "e"]));
    assert_bytes!(c.cmd(&["LLEN", k]), b":5\r\n");
    assert_bytes!(c.cmd(&["TYPE", k]), b"+list\r\n");
    assert_bytes!(c.cmd(&["LLEN", "list_push:missing"]), b":0\r\n");
    // Duplicates and empty strings are kept.
    assert_bytes!(c.cmd(&["RPUSH", k, "e", ""]), b":7\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", k, "-3", "-1"]),
        b"*3\r\n$1\r\ne\r\n$1\r\ne\r\n$0\r\n\r\n"
    );
    assert_bytes!(
        c.cmd(&[b"RPUSH".as_slice(), k.as_bytes(), b"\x00\r\n\xff"]),
        b":8\r\n"
    );
    assert_bytes!(c.cmd(&["LINDEX", k, "-1"]), b"$4\r\n\x00\r\n\xff\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn pushx_only_on_existing_lists() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_pushx:l";
    assert_bytes!(c.cmd(&["LPUSHX", k, "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["RPUSHX", k, "a", "b"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["RPUSH", k, "m"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LPUSHX", k, "x", "y"]), b":3\r\n");
    assert_bytes!(c.cmd(&["RPUSHX", k, "z"]), b":4\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["y", "x", "m", "z"]));
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn lpop_rpop_with_and_without_count() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_pop:l";
    let missing = "list_pop:missing";
    assert_bytes!(c.cmd(&["RPUSH", k, "a", "b", "c", "d", "e", "f"]), b":6\r\n");
    assert_bytes!(c.cmd(&["LPOP", k]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["RPOP", k]), b"$1\r\nf\r\n");
    assert_bytes!(c.cmd(&["LPOP", k, "2"]), arr(&["b", "c"]));
    assert_bytes!(c.cmd(&["RPOP", k, "1"]), arr(&["e"]));
    // Count 0 on an existing list: empty array.
    assert_bytes!(c.cmd(&["LPOP", k, "0"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["RPOP", k, "0"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["LPOP", k, "-1"]),
        b"-ERR value is out of range, must be positive\r\n"
    );
    assert_bytes!(
        c.cmd(&["RPOP", k, "x"]),
        b"-ERR value is out of range, must be positive\r\n"
    );
    assert_bytes!(c.cmd(&["LPOP", k, "1", "2"]), arity("lpop"));
    // Missing key: nil bulk without count, null array with a count (even 0).
    assert_bytes!(c.cmd(&["LPOP", missing]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["RPOP", missing]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LPOP", missing, "2"]), b"*-1\r\n");
    assert_bytes!(c.cmd(&["RPOP", missing, "2"]), b"*-1\r\n");
    assert_bytes!(c.cmd(&["LPOP", missing, "0"]), b"*-1\r\n");
    // A count larger than the list pops everything and deletes the key.
    assert_bytes!(c.cmd(&["RPUSH", k, "x"]), b":2\r\n");
    assert_bytes!(c.cmd(&["RPOP", k, "100"]), arr(&["x", "d"]));
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["RPUSH", k, "only"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LPOP", k]), b"$4\r\nonly\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
}

#[test]
fn lrange_indexes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_range:l";
    assert_bytes!(c.cmd(&["RPUSH", k, "a", "b", "c", "d", "e"]), b":5\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "0"]), arr(&["a"]));
    assert_bytes!(c.cmd(&["LRANGE", k, "1", "2"]), arr(&["b", "c"]));
    assert_bytes!(c.cmd(&["LRANGE", k, "-2", "-1"]), arr(&["d", "e"]));
    assert_bytes!(c.cmd(&["LRANGE", k, "-100", "100"]), arr(&["a", "b", "c", "d", "e"]));
    assert_bytes!(c.cmd(&["LRANGE", k, "-100", "1"]), arr(&["a", "b"]));
    assert_bytes!(c.cmd(&["LRANGE", k, "3", "1"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "5", "10"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "-1", "-2"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-100"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LRANGE", "list_range:missing", "0", "-1"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "x", "1"]), NOT_INT);
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "1.5"]), NOT_INT);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn lindex_and_lset() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_index:l";
    assert_bytes!(c.cmd(&["RPUSH", k, "a", "b", "c", "d", "e"]), b":5\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "0"]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "-1"]), b"$1\r\ne\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "-5"]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "5"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "-6"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LINDEX", "list_index:missing", "0"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["LSET", k, "1", "B"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LSET", k, "-1", "E"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["a", "B", "c", "d", "E"]));
    assert_bytes!(c.cmd(&["LSET", k, "5", "x"]), b"-ERR index out of range\r\n");
    assert_bytes!(c.cmd(&["LSET", k, "-6", "x"]), b"-ERR index out of range\r\n");
    assert_bytes!(c.cmd(&["LSET", k, "x", "y"]), NOT_INT);
    assert_bytes!(
        c.cmd(&["LSET", "list_index:missing", "0", "x"]),
        b"-ERR no such key\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", "list_index:missing"]), b":0\r\n");
    // A longer value in the middle of the list.
    let long = "v".repeat(10_000);
    assert_bytes!(c.cmd(&["LSET", k, "2", &long]), b"+OK\r\n");
    assert_eq!(parse(&c.cmd(&["LINDEX", k, "2"])).text(), long);
    assert_bytes!(c.cmd(&["LINDEX", k, "3"]), b"$1\r\nd\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn linsert() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_insert:l";
    assert_bytes!(c.cmd(&["RPUSH", k, "a", "b", "c", "b", "a"]), b":5\r\n");
    // The first occurrence of the pivot, from the head.
    assert_bytes!(c.cmd(&["LINSERT", k, "BEFORE", "b", "X"]), b":6\r\n");
    assert_bytes!(c.cmd(&["LINSERT", k, "AFTER", "a", "Y"]), b":7\r\n");
    assert_bytes!(c.cmd(&["LINSERT", k, "after", "c", "Z"]), b":8\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", k, "0", "-1"]),
        arr(&["a", "Y", "X", "b", "c", "Z", "b", "a"])
    );
    assert_bytes!(c.cmd(&["LINSERT", k, "BEFORE", "zz", "X"]), b":-1\r\n");
    assert_bytes!(
        c.cmd(&["LINSERT", "list_insert:missing", "BEFORE", "a", "X"]),
        b":0\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", "list_insert:missing"]), b":0\r\n");
    assert_bytes!(c.cmd(&["LINSERT", k, "MIDDLE", "a", "X"]), SYNTAX);
    assert_bytes!(c.cmd(&["LINSERT", k, "BEFORE", "a"]), arity("linsert"));
    assert_bytes!(c.cmd(&["LLEN", k]), b":8\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn lrem() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_rem:l";
    assert_bytes!(
        c.cmd(&["RPUSH", k, "a", "b", "a", "c", "a", "b", "a"]),
        b":7\r\n"
    );
    // Positive: from the head.
    assert_bytes!(c.cmd(&["LREM", k, "2", "a"]), b":2\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["b", "c", "a", "b", "a"]));
    // Negative: from the tail.
    assert_bytes!(c.cmd(&["LREM", k, "-1", "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["b", "c", "a", "b"]));
    // Zero: all.
    assert_bytes!(c.cmd(&["LREM", k, "0", "b"]), b":2\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["c", "a"]));
    assert_bytes!(c.cmd(&["LREM", k, "0", "zz"]), b":0\r\n");
    assert_bytes!(c.cmd(&["LREM", k, "100", "c"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LREM", "list_rem:missing", "0", "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["LREM", k, "x", "a"]), NOT_INT);
    // Removing the last element deletes the key.
    assert_bytes!(c.cmd(&["LREM", k, "-5", "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
}

#[test]
fn ltrim() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_trim:l";
    assert_bytes!(c.cmd(&["RPUSH", k, "a", "b", "c", "d", "e"]), b":5\r\n");
    assert_bytes!(c.cmd(&["LTRIM", k, "1", "-2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["b", "c", "d"]));
    assert_bytes!(c.cmd(&["LTRIM", k, "-100", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["b", "c", "d"]));
    assert_bytes!(c.cmd(&["LTRIM", k, "0", "0"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "0", "-1"]), arr(&["b"]));
    assert_bytes!(c.cmd(&["LTRIM", k, "x", "1"]), NOT_INT);
    // An empty range deletes the key.
    assert_bytes!(c.cmd(&["LTRIM", k, "2", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["RPUSH", k, "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LTRIM", k, "5", "10"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["LTRIM", "list_trim:missing", "0", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "list_trim:missing"]), b":0\r\n");
}

#[test]
fn lpos() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_pos:l";
    let missing = "list_pos:missing";
    assert_bytes!(
        c.cmd(&["RPUSH", k, "a", "b", "c", "1", "2", "3", "c", "c"]),
        b":8\r\n"
    );
    assert_bytes!(c.cmd(&["LPOS", k, "c"]), b":2\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "1"]), b":3\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK", "2"]), b":6\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK", "-1"]), b":7\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK", "-2"]), b":6\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK", "9"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "zz"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LPOS", missing, "a"]), b"$-1\r\n");
    // COUNT: an array of positions; 0 means all.
    assert_bytes!(c.cmd(&["LPOS", k, "c", "COUNT", "2"]), b"*2\r\n:2\r\n:6\r\n");
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "COUNT", "0"]),
        b"*3\r\n:2\r\n:6\r\n:7\r\n"
    );
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "COUNT", "0", "RANK", "-1"]),
        b"*3\r\n:7\r\n:6\r\n:2\r\n"
    );
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "RANK", "2", "COUNT", "0"]),
        b"*2\r\n:6\r\n:7\r\n"
    );
    assert_bytes!(c.cmd(&["LPOS", k, "zz", "COUNT", "2"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LPOS", missing, "a", "COUNT", "1"]), b"*0\r\n");
    // MAXLEN: compare at most that many elements.
    assert_bytes!(c.cmd(&["LPOS", k, "c", "MAXLEN", "2"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "c", "MAXLEN", "3"]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "COUNT", "0", "MAXLEN", "7"]),
        b"*2\r\n:2\r\n:6\r\n"
    );
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK", "-1", "MAXLEN", "1"]), b":7\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "c", "MAXLEN", "0"]), b":2\r\n");
    // Errors.
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "RANK", "0"]),
        b"-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n"
    );
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "COUNT", "-1"]),
        b"-ERR COUNT can't be negative\r\n"
    );
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "COUNT", "x"]),
        b"-ERR COUNT can't be negative\r\n"
    );
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "MAXLEN", "-1"]),
        b"-ERR MAXLEN can't be negative\r\n"
    );
    assert_bytes!(
        c.cmd(&["LPOS", k, "c", "MAXLEN", "x"]),
        b"-ERR MAXLEN can't be negative\r\n"
    );
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK", "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["LPOS", k, "c", "FOO", "1"]), SYNTAX);
    assert_bytes!(c.cmd(&["LPOS", k, "c", "RANK"]), SYNTAX);
    assert_bytes!(c.cmd(&["LPOS", k]), arity("lpos"));
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn lmove_and_rpoplpush() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "list_move:{a}l";
    let d = "list_move:{a}d";
    let s = "list_move:{a}s";
    let missing = "list_move:{a}missing";
    assert_bytes!(c.cmd(&["RPUSH", l, "a", "b", "c"]), b":3\r\n");
    // Same list: rotation.
    assert_bytes!(c.cmd(&["LMOVE", l, l, "LEFT", "RIGHT"]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["LRANGE", l, "0", "-1"]), arr(&["b", "c", "a"]));
    assert_bytes!(c.cmd(&["LMOVE", l, l, "RIGHT", "LEFT"]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["LRANGE", l, "0", "-1"]), arr(&["a", "b", "c"]));
    assert_bytes!(c.cmd(&["RPOPLPUSH", l, l]), b"$1\r\nc\r\n");
    assert_bytes!(c.cmd(&["LRANGE", l, "0", "-1"]), arr(&["c", "a", "b"]));
    assert_bytes!(c.cmd(&["LMOVE", l, l, "LEFT", "LEFT"]), b"$1\r\nc\r\n");
    assert_bytes!(c.cmd(&["LRANGE", l, "0", "-1"]), arr(&["c", "a", "b"]));
    // To another list (created on demand).
    assert_bytes!(c.cmd(&["LMOVE", l, d, "LEFT", "LEFT"]), b"$1\r\nc\r\n");
    assert_bytes!(c.cmd(&["LMOVE", l, d, "right", "right"]), b"$1\r\nb\r\n");
    assert_bytes!(c.cmd(&["LRANGE", d, "0", "-1"]), arr(&["c", "b"]));
    assert_bytes!(c.cmd(&["RPOPLPUSH", l, d]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["EXISTS", l]), b":0\r\n");
    assert_bytes!(c.cmd(&["LRANGE", d, "0", "-1"]), arr(&["a", "c", "b"]));
    // Missing source: nil, nothing created.
    assert_bytes!(c.cmd(&["LMOVE", missing, d, "LEFT", "LEFT"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["RPOPLPUSH", missing, l]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", l]), b":0\r\n");
    assert_bytes!(c.cmd(&["LMOVE", d, l, "UP", "LEFT"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMOVE", d, l, "LEFT"]), arity("lmove"));
    // Wrong type destination: error and the source is untouched.
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["RPOPLPUSH", d, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["LMOVE", d, s, "LEFT", "LEFT"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["RPOPLPUSH", s, d]), WRONGTYPE);
    assert_bytes!(c.cmd(&["LRANGE", d, "0", "-1"]), arr(&["a", "c", "b"]));
    // A missing source is checked first.
    assert_bytes!(c.cmd(&["RPOPLPUSH", missing, s]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["DEL", d, s]), b":2\r\n");
    // Rotating a list of one element keeps the key, and so its TTL (the differential
    // test found Basalt deleting and re-creating it).
    assert_bytes!(c.cmd(&["RPUSH", l, "only"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIREAT", l, "4102444800"]), b":1\r\n");
    assert_bytes!(c.cmd(&["RPOPLPUSH", l, l]), b"$4\r\nonly\r\n");
    assert_bytes!(c.cmd(&["LMOVE", l, l, "LEFT", "RIGHT"]), b"$4\r\nonly\r\n");
    assert_bytes!(c.cmd(&["BLMOVE", l, l, "RIGHT", "LEFT", "0"]), b"$4\r\nonly\r\n");
    assert_bytes!(c.cmd(&["EXPIRETIME", l]), b":4102444800\r\n");
    assert_bytes!(c.cmd(&["DEL", l]), b":1\r\n");
}

#[test]
fn lmpop() {
    let t = shared();
    let mut c = t.raw_conn();
    let m = "list_mpop:{a}m";
    let d = "list_mpop:{a}d";
    let s = "list_mpop:{a}s";
    let missing = "list_mpop:{a}missing";
    assert_bytes!(c.cmd(&["RPUSH", d, "a", "b", "c"]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["LMPOP", "1", d, "LEFT"]),
        b"*2\r\n$14\r\nlist_mpop:{a}d\r\n*1\r\n$1\r\na\r\n"
    );
    // The first non-empty key wins; COUNT caps at the list size.
    assert_bytes!(
        c.cmd(&["LMPOP", "2", missing, d, "RIGHT", "COUNT", "5"]),
        b"*2\r\n$14\r\nlist_mpop:{a}d\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["LMPOP", "2", missing, d, "LEFT"]), b"*-1\r\n");
    assert_bytes!(c.cmd(&["RPUSH", m, "a", "b", "c", "d"]), b":4\r\n");
    assert_bytes!(
        c.cmd(&["LMPOP", "1", m, "left", "count", "2"]),
        b"*2\r\n$14\r\nlist_mpop:{a}m\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    );
    // Errors.
    let numkeys = b"-ERR numkeys should be greater than 0\r\n";
    let count = b"-ERR count should be greater than 0\r\n";
    assert_bytes!(c.cmd(&["LMPOP", "0", m, "LEFT"]), numkeys);
    assert_bytes!(c.cmd(&["LMPOP", "-1", m, "LEFT"]), numkeys);
    assert_bytes!(c.cmd(&["LMPOP", "x", m, "LEFT"]), numkeys);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "RIGHT", "COUNT", "0"]), count);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "RIGHT", "COUNT", "-1"]), count);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "RIGHT", "COUNT", "x"]), count);
    assert_bytes!(c.cmd(&["LMPOP", "2", m, "LEFT"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMPOP", "3", m, "LEFT"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "MIDDLE"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "LEFT", "COUNT"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "LEFT", "COUNT", "1", "COUNT", "2"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMPOP", "1", m, "LEFT", "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["LMPOP", "1", m]), arity("lmpop"));
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LMPOP", "2", s, m, "LEFT"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["LMPOP", "2", missing, s, "LEFT"]), WRONGTYPE);
    // Nothing was popped by the failed calls.
    assert_bytes!(c.cmd(&["LRANGE", m, "0", "-1"]), arr(&["c", "d"]));
    assert_bytes!(c.cmd(&["DEL", m, s]), b":2\r\n");
}

#[test]
fn object_encoding_is_quicklist() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_enc:small";
    assert_bytes!(c.cmd(&["RPUSH", k, "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", k]), b"$9\r\nquicklist\r\n");
    assert_bytes!(c.cmd(&["RPUSH", "list_enc:ints", "1", "2", "3"]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["OBJECT", "ENCODING", "list_enc:ints"]),
        b"$9\r\nquicklist\r\n"
    );
    let big = "list_enc:big";
    let mut args: Vec<String> = vec!["RPUSH".into(), big.into()];
    args.extend((0..2000).map(|i| format!("element-{i}")));
    assert_bytes!(c.cmd(&args), b":2000\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", big]), b"$9\r\nquicklist\r\n");
    assert_bytes!(c.cmd(&["DEL", k, "list_enc:ints", big]), b":3\r\n");
}

#[test]
fn long_list_operations() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_long:l";
    let n = 5000;
    let mut args: Vec<String> = vec!["RPUSH".into(), k.into()];
    args.extend((0..n).map(|i| i.to_string()));
    assert_bytes!(c.cmd(&args), format!(":{n}\r\n"));
    let all = lrange_all(&mut c, k);
    assert_eq!(all.len(), n);
    assert!(all.iter().enumerate().all(|(i, v)| *v == i.to_string()));
    assert_bytes!(c.cmd(&["LINDEX", k, "2500"]), b"$4\r\n2500\r\n");
    assert_bytes!(c.cmd(&["LINDEX", k, "-2500"]), b"$4\r\n2500\r\n");
    assert_bytes!(c.cmd(&["LRANGE", k, "2998", "3001"]), arr(&["2998", "2999", "3000", "3001"]));
    assert_bytes!(c.cmd(&["LSET", k, "4000", "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LPOS", k, "x"]), b":4000\r\n");
    assert_bytes!(c.cmd(&["LINSERT", k, "BEFORE", "x", "y"]), format!(":{}\r\n", n + 1));
    assert_bytes!(c.cmd(&["LINDEX", k, "4000"]), b"$1\r\ny\r\n");
    assert_bytes!(c.cmd(&["LREM", k, "0", "y"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LTRIM", k, "100", "-101"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LLEN", k]), format!(":{}\r\n", n - 200));
    assert_bytes!(c.cmd(&["LINDEX", k, "0"]), b"$3\r\n100\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn arity_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_arity:l";
    let cases: &[(&[&str], &str)] = &[
        (&["LPUSH", k], "lpush"),
        (&["RPUSH", k], "rpush"),
        (&["LPUSHX", k], "lpushx"),
        (&["RPUSHX", k], "rpushx"),
        (&["LPOP"], "lpop"),
        (&["RPOP", k, "1", "2"], "rpop"),
        (&["LLEN"], "llen"),
        (&["LRANGE", k, "0"], "lrange"),
        (&["LINDEX", k], "lindex"),
        (&["LSET", k, "0"], "lset"),
        (&["LINSERT", k, "BEFORE", "a"], "linsert"),
        (&["LREM", k, "0"], "lrem"),
        (&["LTRIM", k, "0"], "ltrim"),
        (&["LPOS", k], "lpos"),
        (&["LMOVE", k, k, "LEFT"], "lmove"),
        (&["RPOPLPUSH", k], "rpoplpush"),
        (&["LMPOP", "1"], "lmpop"),
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
    let s = "list_wt:{a}s";
    let l = "list_wt:{a}l";
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    let cmds: &[&[&str]] = &[
        &["LPUSH", s, "a"],
        &["RPUSH", s, "a"],
        &["LPUSHX", s, "a"],
        &["RPUSHX", s, "a"],
        &["LPOP", s],
        &["RPOP", s, "2"],
        &["LLEN", s],
        &["LRANGE", s, "0", "-1"],
        &["LINDEX", s, "0"],
        &["LSET", s, "0", "a"],
        &["LINSERT", s, "BEFORE", "a", "b"],
        &["LREM", s, "0", "a"],
        &["LTRIM", s, "0", "1"],
        &["LPOS", s, "a"],
        &["LMOVE", s, l, "LEFT", "LEFT"],
        &["RPOPLPUSH", s, l],
        &["LMPOP", "1", s, "LEFT"],
    ];
    for args in cmds {
        assert_bytes!(c.cmd(args), WRONGTYPE, "{args:?}");
    }
    assert_bytes!(c.cmd(&["GET", s]), b"$1\r\nx\r\n");
    assert_bytes!(c.cmd(&["EXISTS", l]), b":0\r\n");
    assert_bytes!(c.cmd(&["DEL", s]), b":1\r\n");
}

#[test]
fn resp3_nulls() {
    let t = shared();
    let mut c = t.raw_conn();
    let missing = "list_resp3:missing";
    let k = "list_resp3:l";
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    assert_bytes!(c.cmd(&["LPOP", missing]), b"_\r\n");
    assert_bytes!(c.cmd(&["LPOP", missing, "2"]), b"_\r\n");
    assert_bytes!(c.cmd(&["LINDEX", missing, "0"]), b"_\r\n");
    assert_bytes!(c.cmd(&["LPOS", missing, "a"]), b"_\r\n");
    assert_bytes!(c.cmd(&["LMPOP", "1", missing, "LEFT"]), b"_\r\n");
    assert_bytes!(c.cmd(&["LMOVE", missing, k, "LEFT", "LEFT"]), b"_\r\n");
    assert_bytes!(c.cmd(&["RPUSH", k, "a"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&["LMPOP", "1", k, "LEFT"]),
        b"*2\r\n$12\r\nlist_resp3:l\r\n*1\r\n$1\r\na\r\n"
    );
}

#[test]
fn emptied_list_disappears() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_empty:{a}l";
    let d = "list_empty:{a}d";
    let steps: &[(&[&str], &[u8])] = &[
        (&["LPOP", k], b"$1\r\na\r\n"),
        (&["RPOP", k], b"$1\r\na\r\n"),
        (&["LPOP", k, "5"], b"*1\r\n$1\r\na\r\n"),
        (&["LREM", k, "0", "a"], b":1\r\n"),
        (&["LTRIM", k, "1", "1"], b"+OK\r\n"),
        (&["RPOPLPUSH", k, d], b"$1\r\na\r\n"),
        (&["LMOVE", k, d, "LEFT", "RIGHT"], b"$1\r\na\r\n"),
        (
            &["LMPOP", "1", k, "LEFT"],
            b"*2\r\n$15\r\nlist_empty:{a}l\r\n*1\r\n$1\r\na\r\n",
        ),
    ];
    for (args, want) in steps {
        assert_bytes!(c.cmd(&["RPUSH", k, "a"]), b":1\r\n");
        assert_bytes!(c.cmd(args), want, "{args:?}");
        assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n", "{args:?}");
        assert_bytes!(c.cmd(&["TYPE", k]), b"+none\r\n", "{args:?}");
    }
    assert_bytes!(c.cmd(&["LLEN", d]), b":2\r\n");
    assert_bytes!(c.cmd(&["DEL", d]), b":1\r\n");
}

/// Basalt keeps a small list inline in its key's entry and boxes it once it grows past
/// about 1 KiB (and past one chunk): growing across that bound and shrinking back, with
/// edits in the middle, must keep every element and the order.
#[test]
fn a_list_growing_and_shrinking_across_the_inline_bound_keeps_its_elements() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "list_bound:l";
    let mut model: std::collections::VecDeque<String> = Default::default();
    for i in 0..300 {
        let v = format!("element-{i:04}");
        if i % 3 == 0 {
            c.cmd(&["LPUSH", k, &v]);
            model.push_front(v);
        } else {
            c.cmd(&["RPUSH", k, &v]);
            model.push_back(v);
        }
        if i % 50 == 0 || i == 299 {
            assert_eq!(lrange_all(&mut c, k), Vec::from(model.clone()), "after {} pushes", i + 1);
        }
    }
    assert_bytes!(c.cmd(&["LSET", k, "150", "changed"]), b"+OK\r\n");
    model[150] = "changed".into();
    assert_bytes!(c.cmd(&["LINSERT", k, "BEFORE", "changed", "inserted"]), b":301\r\n");
    model.insert(150, "inserted".into());
    assert_eq!(lrange_all(&mut c, k), Vec::from(model.clone()));
    while model.len() > 3 {
        c.cmd(&["RPOP", k]);
        model.pop_back();
        c.cmd(&["LPOP", k]);
        model.pop_front();
        if model.len() % 40 == 1 {
            assert_eq!(lrange_all(&mut c, k), Vec::from(model.clone()), "at {}", model.len());
        }
    }
    assert_eq!(lrange_all(&mut c, k), Vec::from(model.clone()));
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", k]), b"$9\r\nquicklist\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}
