//! SORT and SORT_RO. Every expected reply is Redis 7.0.15's, byte for byte. Keys of
//! one test share a `{tag}` so that the tests also pass against a cluster-aware proxy
//! (BY/GET patterns carry the tag too).

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

/// The bulk strings of an array reply, nulls as "(nil)".
fn items(reply: &[u8]) -> Vec<String> {
    parse(reply)
        .items()
        .iter()
        .map(|x| match x {
            Resp::Nil => "(nil)".to_string(),
            other => other.text(),
        })
        .collect()
}

fn sort(c: &mut RawConn, args: &[&str]) -> Vec<String> {
    let mut full = vec!["SORT"];
    full.extend_from_slice(args);
    items(&c.cmd(&full))
}

fn del(c: &mut RawConn, keys: &[&str]) {
    let mut args = vec!["DEL"];
    args.extend_from_slice(keys);
    c.cmd(&args);
}

#[test]
fn numeric_and_alpha_orders() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "sort_num:{t}l";
    assert_bytes!(
        c.cmd(&["RPUSH", l, "10", "2", "-3.5", "2", "1e2", "0"]),
        b":6\r\n"
    );
    assert_eq!(sort(&mut c, &[l]), ["-3.5", "0", "2", "2", "10", "1e2"]);
    assert_eq!(
        sort(&mut c, &[l, "DESC"]),
        ["1e2", "10", "2", "2", "0", "-3.5"]
    );
    assert_eq!(
        sort(&mut c, &[l, "ALPHA"]),
        ["-3.5", "0", "10", "1e2", "2", "2"]
    );
    assert_eq!(
        sort(&mut c, &[l, "alpha", "desc"]),
        ["2", "2", "1e2", "10", "0", "-3.5"]
    );
    // Later options win over earlier ones.
    assert_eq!(
        sort(&mut c, &[l, "DESC", "ASC"]),
        ["-3.5", "0", "2", "2", "10", "1e2"]
    );
    // Numbers as C's strtod reads them: leading space, hexadecimal, the empty string as
    // 0, infinities; equal weights ordered by the elements' bytes ("0" < "0x0").
    let m = "sort_num:{t}m";
    assert_bytes!(
        c.cmd(&["RPUSH", m, "", " 1", "0x10", "inf", "2", "-3", "0x0", "-inf"]),
        b":8\r\n"
    );
    assert_eq!(
        sort(&mut c, &[m]),
        ["-inf", "-3", "", "0x0", " 1", "2", "0x10", "inf"]
    );
    // An element that is not a number fails the whole sort, wherever it is. (Out of
    // range values such as 1e999 fail too, in unit tests: Redis 7.0 does not reset
    // errno before its strtod, so after one of them its next SORTs of any numbers can
    // fail until something else clears errno; Basalt does not copy that.)
    for bad in ["abc", "1 ", "nan"] {
        let n = "sort_num:{t}bad";
        del(&mut c, &[n]);
        c.cmd(&["RPUSH", n, "1", bad, "2"]);
        assert_bytes!(
            c.cmd(&["SORT", n, "LIMIT", "0", "1"]),
            b"-ERR One or more scores can't be converted into double\r\n"
        );
        assert_eq!(sort(&mut c, &[n, "ALPHA", "LIMIT", "0", "1"]), ["1"]);
        del(&mut c, &[n]);
    }
    del(&mut c, &[l, m]);
}

#[test]
fn sets_and_sorted_sets() {
    let t = shared();
    let mut c = t.raw_conn();
    let s = "sort_types:{t}s";
    let z = "sort_types:{t}z";
    assert_bytes!(c.cmd(&["SADD", s, "5", "3", "9", "1"]), b":4\r\n");
    assert_eq!(sort(&mut c, &[s]), ["1", "3", "5", "9"]);
    assert_eq!(sort(&mut c, &[s, "DESC", "LIMIT", "1", "2"]), ["5", "3"]);
    assert_bytes!(c.cmd(&["SADD", s, "x"]), b":1\r\n");
    assert_eq!(sort(&mut c, &[s, "ALPHA"]), ["1", "3", "5", "9", "x"]);

    // A sorted set sorts its members, not its scores; SORT converts a listpack sorted
    // set to a skiplist (as Redis 7.0 does, even when the sort then fails).
    assert_bytes!(
        c.cmd(&["ZADD", z, "1", "30", "2", "10", "3", "20"]),
        b":3\r\n"
    );
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", z]), b"$8\r\nlistpack\r\n");
    assert_eq!(sort(&mut c, &[z]), ["10", "20", "30"]);
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", z]), b"$8\r\nskiplist\r\n");
    // BY without '*' does not sort: the sorted set's own order, DESC reversing it,
    // LIMIT taken from that order.
    assert_eq!(sort(&mut c, &[z, "BY", "nosort"]), ["30", "10", "20"]);
    assert_eq!(
        sort(&mut c, &[z, "BY", "nosort", "DESC"]),
        ["20", "10", "30"]
    );
    assert_eq!(
        sort(&mut c, &[z, "BY", "nosort", "LIMIT", "1", "5", "DESC"]),
        ["10", "30"]
    );
    assert_eq!(
        sort(&mut c, &[z, "BY", "nosort", "LIMIT", "1", "1"]),
        ["10"]
    );
    let y = "sort_types:{t}y";
    assert_bytes!(c.cmd(&["ZADD", y, "1", "a", "2", "b"]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["SORT", y]),
        b"-ERR One or more scores can't be converted into double\r\n"
    );
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", y]), b"$8\r\nskiplist\r\n");
    del(&mut c, &[s, z, y]);
}

#[test]
fn limit_edges() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "sort_limit:{t}l";
    c.cmd(&["RPUSH", l, "4", "1", "3", "2", "5"]);
    assert_eq!(sort(&mut c, &[l, "LIMIT", "1", "2"]), ["2", "3"]);
    assert_eq!(sort(&mut c, &[l, "LIMIT", "-5", "2"]), ["1", "2"]);
    assert_eq!(sort(&mut c, &[l, "LIMIT", "3", "-1"]), ["4", "5"]);
    assert_eq!(sort(&mut c, &[l, "LIMIT", "3", "100"]), ["4", "5"]);
    assert_bytes!(c.cmd(&["SORT", l, "LIMIT", "5", "1"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["SORT", l, "LIMIT", "0", "0"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&[
            "SORT",
            l,
            "LIMIT",
            "9223372036854775807",
            "9223372036854775807"
        ]),
        b"*0\r\n"
    );
    assert_eq!(
        sort(&mut c, &[l, "LIMIT", "4", "9223372036854775807"]),
        ["5"]
    );
    // A list that is not sorted: LIMIT reads its range, DESC from the tail.
    assert_eq!(sort(&mut c, &[l, "BY", "x", "LIMIT", "1", "2"]), ["1", "3"]);
    assert_eq!(
        sort(&mut c, &[l, "BY", "x", "LIMIT", "1", "2", "DESC"]),
        ["2", "3"]
    );
    assert_eq!(
        sort(&mut c, &[l, "BY", "x", "DESC"]),
        ["5", "2", "3", "1", "4"]
    );
    assert_bytes!(c.cmd(&["SORT", l, "BY", "x", "LIMIT", "7", "2"]), b"*0\r\n");
    // A missing key sorts as empty.
    assert_bytes!(
        c.cmd(&["SORT", "sort_limit:{t}none", "LIMIT", "0", "3"]),
        b"*0\r\n"
    );
    del(&mut c, &[l]);
}

#[test]
fn by_and_get_patterns() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "sort_pat:{t}l";
    c.cmd(&["RPUSH", l, "a", "b", "c", "d"]);
    c.cmd(&[
        "MSET",
        "sort_pat:{t}w_a",
        "3",
        "sort_pat:{t}w_b",
        "1",
        "sort_pat:{t}w_c",
        "2",
    ]);
    c.cmd(&["HSET", "sort_pat:{t}h_a", "f", "x", "g", "1"]);
    c.cmd(&["HSET", "sort_pat:{t}h_b", "f", "y"]);
    c.cmd(&["SADD", "sort_pat:{t}w_d", "wrong-type"]);
    // A missing (or wrong-type) weight is 0; ties by the element's bytes.
    assert_eq!(
        sort(&mut c, &[l, "BY", "sort_pat:{t}w_*"]),
        ["d", "b", "c", "a"]
    );
    assert_eq!(
        sort(
            &mut c,
            &[
                l,
                "BY",
                "sort_pat:{t}w_*",
                "GET",
                "#",
                "GET",
                "sort_pat:{t}w_*",
                "GET",
                "sort_pat:{t}h_*->f",
                "GET",
                "nostar"
            ]
        ),
        [
            "d", "(nil)", "(nil)", "(nil)", "b", "1", "y", "(nil)", "c", "2", "(nil)", "(nil)",
            "a", "3", "x", "(nil)"
        ]
    );
    // Hash fields as weights; ALPHA with a pattern sorts missing weights first.
    assert_eq!(
        sort(&mut c, &[l, "BY", "sort_pat:{t}h_*->g"]),
        ["b", "c", "d", "a"]
    );
    assert_eq!(
        sort(
            &mut c,
            &[
                l,
                "BY",
                "sort_pat:{t}h_*->f",
                "ALPHA",
                "LIMIT",
                "0",
                "2",
                "GET",
                "#"
            ]
        ),
        ["c", "d"]
    );
    assert_eq!(
        sort(
            &mut c,
            &[
                l,
                "BY",
                "sort_pat:{t}h_*->f",
                "ALPHA",
                "DESC",
                "LIMIT",
                "0",
                "2"
            ]
        ),
        ["b", "a"]
    );
    // "->" with nothing after it is part of the key name.
    c.cmd(&["SET", "sort_pat:{t}k_a->", "arrow"]);
    assert_eq!(
        sort(
            &mut c,
            &[l, "ALPHA", "LIMIT", "0", "1", "GET", "sort_pat:{t}k_*->"]
        ),
        ["arrow"]
    );
    // A weight that is not a number.
    c.cmd(&["SET", "sort_pat:{t}w_d", "nope"]);
    assert_bytes!(
        c.cmd(&["SORT", l, "BY", "sort_pat:{t}w_*"]),
        b"-ERR One or more scores can't be converted into double\r\n"
    );
    // The element is substituted once, at the first '*'.
    c.cmd(&["SET", "sort_pat:{t}a*", "star"]);
    assert_eq!(
        sort(
            &mut c,
            &[l, "ALPHA", "LIMIT", "0", "1", "GET", "sort_pat:{t}**"]
        ),
        ["star"]
    );
    del(
        &mut c,
        &[
            l,
            "sort_pat:{t}w_a",
            "sort_pat:{t}w_b",
            "sort_pat:{t}w_c",
            "sort_pat:{t}w_d",
            "sort_pat:{t}h_a",
            "sort_pat:{t}h_b",
            "sort_pat:{t}k_a->",
            "sort_pat:{t}a*",
        ],
    );
}

#[test]
fn store_replaces_the_destination_with_a_list() {
    let t = shared();
    let mut c = t.raw_conn();
    let s = "sort_store:{t}s";
    let d = "sort_store:{t}d";
    c.cmd(&["SADD", s, "b", "c", "a"]);
    c.cmd(&["SET", d, "old", "EX", "100"]);
    // A set that is not sorted is sorted ALPHA when stored.
    assert_bytes!(c.cmd(&["SORT", s, "BY", "nosort", "STORE", d]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", d, "0", "-1"]),
        b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    assert_bytes!(c.cmd(&["TTL", d]), b":-1\r\n");
    assert_bytes!(c.cmd(&["TYPE", d]), b"+list\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", d]), b"$9\r\nquicklist\r\n");
    // GETs of missing keys store empty strings; the reply counts every stored item.
    c.cmd(&["SET", "sort_store:{t}v_a", "A"]);
    assert_bytes!(
        c.cmd(&[
            "SORT",
            s,
            "ALPHA",
            "GET",
            "#",
            "GET",
            "sort_store:{t}v_*",
            "STORE",
            d
        ]),
        b":6\r\n"
    );
    assert_bytes!(
        c.cmd(&["LRANGE", d, "0", "-1"]),
        b"*6\r\n$1\r\na\r\n$1\r\nA\r\n$1\r\nb\r\n$0\r\n\r\n$1\r\nc\r\n$0\r\n\r\n"
    );
    // An empty result deletes the destination; storing into the source replaces it.
    assert_bytes!(
        c.cmd(&["SORT", s, "ALPHA", "LIMIT", "5", "1", "STORE", d]),
        b":0\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["SORT", s, "ALPHA", "DESC", "STORE", s]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", s, "0", "-1"]),
        b"*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"
    );
    // A failed sort stores nothing.
    c.cmd(&["SET", d, "kept"]);
    assert_bytes!(
        c.cmd(&["SORT", s, "STORE", d]),
        b"-ERR One or more scores can't be converted into double\r\n"
    );
    assert_bytes!(c.cmd(&["GET", d]), b"$4\r\nkept\r\n");
    del(&mut c, &[s, d, "sort_store:{t}v_a"]);
}

#[test]
fn errors_and_sort_ro() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "sort_err:{t}l";
    let str_key = "sort_err:{t}str";
    let h = "sort_err:{t}h";
    c.cmd(&["RPUSH", l, "2", "1"]);
    c.cmd(&["SET", str_key, "v"]);
    c.cmd(&["HSET", h, "f", "v"]);
    const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
    const NOT_INT: &[u8] = b"-ERR value is not an integer or out of range\r\n";
    const WRONGTYPE: &[u8] =
        b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    assert_bytes!(
        c.cmd(&["SORT"]),
        b"-ERR wrong number of arguments for 'sort' command\r\n"
    );
    assert_bytes!(c.cmd(&["SORT", l, "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT", l, "LIMIT", "1"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT", l, "BY"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT", l, "GET"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT", l, "STORE"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT", l, "LIMIT", "a", "1"]), NOT_INT);
    assert_bytes!(c.cmd(&["SORT", l, "LIMIT", "0", "1.5"]), NOT_INT);
    // Options are checked before the key's type, in the order given.
    assert_bytes!(c.cmd(&["SORT", str_key]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SORT", h, "ALPHA"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SORT", str_key, "LIMIT", "x", "1"]), NOT_INT);
    assert_bytes!(c.cmd(&["SORT", str_key, "LIMIT", "0", "1", "BAD"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT", l, "LIMIT", "x", "1", "BAD"]), NOT_INT);
    // SORT_RO has no STORE.
    assert_bytes!(c.cmd(&["SORT_RO", l]), b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["SORT_RO", l, "STORE", "sort_err:{t}d"]), SYNTAX);
    assert_bytes!(c.cmd(&["SORT_RO", str_key]), WRONGTYPE);
    assert_bytes!(c.cmd(&["EXISTS", "sort_err:{t}d"]), b":0\r\n");
    del(&mut c, &[l, str_key, h]);
}

#[test]
fn resp3_get_of_a_missing_key_is_null() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "sort_resp3:{t}l";
    c.cmd(&["RPUSH", l, "1"]);
    c.cmd(&["HELLO", "3"]);
    assert_bytes!(
        c.cmd(&["SORT", l, "GET", "#", "GET", "sort_resp3:{t}nokey_*"]),
        b"*2\r\n$1\r\n1\r\n_\r\n"
    );
    c.cmd(&["HELLO", "2"]);
    assert_bytes!(
        c.cmd(&["SORT", l, "GET", "#", "GET", "sort_resp3:{t}nokey_*"]),
        b"*2\r\n$1\r\n1\r\n$-1\r\n"
    );
    del(&mut c, &[l]);
}

#[test]
fn watch_sees_only_the_store_destination() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let l = "sort_watch:{t}l";
    let d = "sort_watch:{t}d";
    c.cmd(&["RPUSH", l, "2", "1"]);
    // SORT without STORE changes nothing: a WATCH on its key holds.
    assert_bytes!(c.cmd(&["WATCH", l]), b"+OK\r\n");
    assert_eq!(items(&other.cmd(&["SORT", l])), ["1", "2"]);
    c.cmd(&["MULTI"]);
    c.cmd(&["PING"]);
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+PONG\r\n");
    // SORT ... STORE writes its destination.
    assert_bytes!(c.cmd(&["WATCH", d]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SORT", l, "STORE", d]), b":2\r\n");
    c.cmd(&["MULTI"]);
    c.cmd(&["PING"]);
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    del(&mut c, &[l, d]);
}

#[test]
fn store_wakes_a_blocked_pop() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let mut blocked = t.raw_conn();
    let l = "sort_wake:{t}l";
    let d = "sort_wake:{t}d";
    c.cmd(&["RPUSH", l, "3", "1", "2"]);
    blocked.send(&encode(&["BLPOP", d, "5"]));
    // A server of its own, so that INFO's count is this test's client.
    let waiting = wait_until(Duration::from_secs(5), || {
        parse(&c.cmd(&["INFO", "clients"]))
            .text()
            .contains("blocked_clients:1\r\n")
    });
    assert!(waiting, "the BLPOP never blocked");
    assert_bytes!(c.cmd(&["SORT", l, "STORE", d]), b":3\r\n");
    assert_bytes!(
        blocked.read_reply(),
        b"*2\r\n$14\r\nsort_wake:{t}d\r\n$1\r\n1\r\n"
    );
    assert_bytes!(
        c.cmd(&["LRANGE", d, "0", "-1"]),
        b"*2\r\n$1\r\n2\r\n$1\r\n3\r\n"
    );
    del(&mut c, &[l, d]);
}
