//! Sorted set commands.
//!
//! Scores are printed as Redis 7.0 prints doubles: `%.17g` (so 1.1 reads
//! back as "1.1000000000000001"), integers without a fraction up to 1e17
//! exclusive, "inf" and "-inf"; RESP3 uses the double type (",1.5\r\n").

use std::collections::{BTreeMap, BTreeSet};

use crate::assert_bytes;
use crate::harness::*;

const NOT_FLOAT: &[u8] = b"-ERR value is not a valid float\r\n";
const NAN: &[u8] = b"-ERR resulting score is not a number (NaN)\r\n";
const MINMAX_FLOAT: &[u8] = b"-ERR min or max is not a float\r\n";
const MINMAX_LEX: &[u8] = b"-ERR min or max not valid string range item\r\n";
const POSITIVE: &[u8] = b"-ERR value is out of range, must be positive\r\n";



fn bulk(s: &str) -> Vec<u8> {
    format!("${}\r\n{}\r\n", s.len(), s).into_bytes()
}

fn texts(r: &Resp) -> Vec<String> {
    r.items().iter().map(|x| x.text()).collect()
}

/// Creates `k` (deleting it first) with score/member pairs.
fn zadd(c: &mut RawConn, k: &str, pairs: &[(&str, &str)]) {
    let _ = c.cmd(&["DEL", k]);
    let mut args = vec!["ZADD", k];
    for (s, m) in pairs {
        args.push(s);
        args.push(m);
    }
    let n = parse(&c.cmd(&args)).int();
    assert_eq!(n as usize, pairs.len(), "ZADD {k}");
}

fn abcde(c: &mut RawConn, k: &str) {
    zadd(c, k, &[("1", "a"), ("2", "b"), ("3", "c"), ("4", "d"), ("5", "e")]);
}

#[test]
fn negative_zero_scores_as_redis_keeps_them() {
    let t = shared();
    let mut c = t.raw_conn();
    let (small, large) = ("zset_negzero:small", "zset_negzero:large");
    let _ = c.cmd(&["DEL", small, large]);
    // A new member gets the increment itself: -0 in the reply.
    assert_bytes!(c.cmd(&["ZINCRBY", small, "-0", "m"]), b"$2\r\n-0\r\n");
    assert_bytes!(c.cmd(&["ZADD", small, "INCR", "-0", "n"]), b"$2\r\n-0\r\n");
    // A listpack stores -0 as 0; a numerically equal score changes nothing.
    assert_bytes!(c.cmd(&["ZSCORE", small, "m"]), b"$1\r\n0\r\n");
    assert_bytes!(c.cmd(&["ZADD", small, "CH", "-0", "m"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", small, "0", "m"]), b"$1\r\n0\r\n");
    // A skiplist keeps -0, and ZADD 0 over it is no change either.
    let mut args = vec!["ZADD".to_string(), large.to_string()];
    for i in 0..200 {
        args.extend([i.to_string(), format!("member-{i}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_bytes!(c.cmd(&args), b":200\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", large]), b"$8\r\nskiplist\r\n");
    assert_bytes!(c.cmd(&["ZADD", large, "-0", "m"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", large, "m"]), b"$2\r\n-0\r\n");
    assert_bytes!(c.cmd(&["ZADD", large, "CH", "0", "m"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", large, "m"]), b"$2\r\n-0\r\n");
    // ZRANGESTORE of more members than a listpack holds makes a skiplist from the start
    // (Redis's size hint): the -0 stays; of a few, a listpack: it becomes 0.
    let copy = "zset_negzero:copy";
    assert_bytes!(c.cmd(&["ZRANGESTORE", copy, large, "0", "-1"]), b":201\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", copy, "m"]), b"$2\r\n-0\r\n");
    assert_bytes!(c.cmd(&["ZRANGESTORE", copy, large, "-0", "0", "BYSCORE"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", copy, "m"]), b"$1\r\n0\r\n");
    assert_bytes!(c.cmd(&["DEL", small, large, copy]), b":3\r\n");
}

#[test]
fn zadd_basic_and_zscore() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_add:z";
    assert_bytes!(c.cmd(&["ZADD", k, "1", "a", "2", "b"]), b":2\r\n");
    // Updating a score is not counted without CH; a repeated member counts once.
    assert_bytes!(c.cmd(&["ZADD", k, "5", "a", "3", "c", "4", "c"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$1\r\n5\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "c"]), b"$1\r\n4\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "zz"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", "zset_add:missing", "a"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZCARD", k]), b":3\r\n");
    assert_bytes!(c.cmd(&["ZCARD", "zset_add:missing"]), b":0\r\n");
    assert_bytes!(c.cmd(&["TYPE", k]), b"+zset\r\n");
    assert_bytes!(
        c.cmd(&["ZMSCORE", k, "a", "zz", "b"]),
        b"*3\r\n$1\r\n5\r\n$-1\r\n$1\r\n2\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZMSCORE", "zset_add:missing", "a", "b"]),
        b"*2\r\n$-1\r\n$-1\r\n"
    );
    // Bad scores.
    assert_bytes!(c.cmd(&["ZADD", k, "x", "a"]), NOT_FLOAT);
    assert_bytes!(c.cmd(&["ZADD", k, "nan", "a"]), NOT_FLOAT);
    assert_bytes!(c.cmd(&["ZADD", k, " 1", "a"]), NOT_FLOAT);
    assert_bytes!(c.cmd(&["ZADD", k, "1e400", "a"]), NOT_FLOAT);
    assert_bytes!(c.cmd(&["ZADD", k, "1", "a", "2"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZADD", k, "FOO", "1", "a"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZADD", k, "1"]), arity("zadd"));
    assert_bytes!(c.cmd(&["ZADD", k]), arity("zadd"));
    assert_bytes!(c.cmd(&["ZADD", k, "XX"]), arity("zadd"));
    // A failed ZADD changed nothing.
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$1\r\n5\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zadd_nx_xx_gt_lt_ch() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_flags:z";
    zadd(&mut c, k, &[("1", "a"), ("2", "b")]);
    // NX: only new members.
    assert_bytes!(c.cmd(&["ZADD", k, "NX", "5", "a", "3", "c"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$1\r\n1\r\n");
    // XX: only existing members; never counts as added.
    assert_bytes!(c.cmd(&["ZADD", k, "XX", "5", "a", "4", "d"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$1\r\n5\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "d"]), b"$-1\r\n");
    // CH: changed members count too.
    assert_bytes!(c.cmd(&["ZADD", k, "XX", "CH", "6", "a", "4", "d"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "CH", "6", "a", "7", "b", "1", "e"]), b":2\r\n");
    // GT / LT: only update in that direction, but new members are added.
    assert_bytes!(c.cmd(&["ZADD", k, "GT", "1", "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$1\r\n6\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "GT", "CH", "1", "a", "10", "b"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "b"]), b"$2\r\n10\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "LT", "CH", "1", "a", "100", "b"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "b"]), b"$2\r\n10\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "GT", "5", "newgt"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "lt", "xx", "ch", "0", "newgt"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "newgt"]), b"$1\r\n0\r\n");
    // XX on a missing key does not create it.
    assert_bytes!(c.cmd(&["ZADD", "zset_flags:missing", "XX", "1", "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "zset_flags:missing"]), b":0\r\n");
    // Incompatible options.
    assert_bytes!(
        c.cmd(&["ZADD", k, "NX", "XX", "1", "a"]),
        b"-ERR XX and NX options at the same time are not compatible\r\n"
    );
    let gtltnx = b"-ERR GT, LT, and/or NX options at the same time are not compatible\r\n";
    assert_bytes!(c.cmd(&["ZADD", k, "NX", "GT", "1", "a"]), gtltnx);
    assert_bytes!(c.cmd(&["ZADD", k, "NX", "LT", "1", "a"]), gtltnx);
    assert_bytes!(c.cmd(&["ZADD", k, "GT", "LT", "1", "a"]), gtltnx);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zadd_incr_and_zincrby() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_incr:z";
    zadd(&mut c, k, &[("1", "a")]);
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "1", "a"]), b"$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "2.5", "new"]), b"$3\r\n2.5\r\n");
    // INCR with a condition that fails answers nil.
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "NX", "1", "a"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "XX", "1", "zz"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "GT", "-5", "a"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "LT", "-5", "a"]), b"$2\r\n-3\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "zset_incr:zz"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["ZADD", k, "INCR", "1", "a", "2", "b"]),
        b"-ERR INCR option supports a single increment-element pair\r\n"
    );
    // ZINCRBY.
    assert_bytes!(c.cmd(&["ZINCRBY", k, "4", "a"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", k, "0.1", "a"]), b"$18\r\n1.1000000000000001\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", k, "1", "a"]), b"$18\r\n2.1000000000000001\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", "zset_incr:new", "2.5", "m"]), b"$3\r\n2.5\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", k, "x", "a"]), NOT_FLOAT);
    assert_bytes!(c.cmd(&["ZINCRBY", k, "nan", "a"]), NOT_FLOAT);
    assert_bytes!(c.cmd(&["ZINCRBY", k, "1"]), arity("zincrby"));
    // Infinity is a valid score; inf + -inf is NaN and rejected.
    assert_bytes!(c.cmd(&["ZINCRBY", k, "inf", "a"]), b"$3\r\ninf\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", k, "-inf", "a"]), NAN);
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "-inf", "a"]), NAN);
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b"$3\r\ninf\r\n");
    // Overflowing to infinity is allowed.
    assert_bytes!(
        c.cmd(&["ZADD", k, "1.7976931348623157e308", "big"]),
        b":1\r\n"
    );
    assert_bytes!(c.cmd(&["ZINCRBY", k, "1e308", "big"]), b"$3\r\ninf\r\n");
    assert_bytes!(c.cmd(&["DEL", k, "zset_incr:new"]), b":2\r\n");
}

#[test]
fn score_formatting() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_fmt:z";
    let cases: &[(&str, &str)] = &[
        ("1.1", "1.1000000000000001"),
        ("0.1", "0.10000000000000001"),
        ("0.3", "0.29999999999999999"),
        ("1.5", "1.5"),
        ("-2.5", "-2.5"),
        ("3.0", "3"),
        ("100", "100"),
        ("1e2", "100"),
        ("12345.678", "12345.678"),
        ("123.456", "123.456"),
        ("33.333333333333336", "33.333333333333336"),
        ("-1.5e-5", "-1.5e-05"),
        ("1e-5", "1.0000000000000001e-05"),
        ("1e-7", "9.9999999999999995e-08"),
        ("1e15", "1000000000000000"),
        ("1e16", "10000000000000000"),
        ("9007199254740993", "9007199254740992"),
        ("99999999999999999", "1e+17"),
        ("1e17", "1e+17"),
        ("123456789012345678", "1.2345678901234568e+17"),
        ("1e20", "1e+20"),
        ("1.7976931348623157e308", "1.7976931348623157e+308"),
        ("5e-324", "4.9406564584124654e-324"),
        ("inf", "inf"),
        ("+inf", "inf"),
        ("-inf", "-inf"),
        ("INF", "inf"),
    ];
    for (i, (input, want)) in cases.iter().enumerate() {
        let m = format!("m{i}");
        assert_bytes!(c.cmd(&["ZADD", k, input, &m]), b":1\r\n", "{input}");
        assert_bytes!(c.cmd(&["ZSCORE", k, &m]), bulk(want), "ZSCORE of {input}");
        assert_bytes!(c.cmd(&["ZMSCORE", k, &m]), format!("*1\r\n{}", show_bulk(want)), "{input}");
    }
    // WITHSCORES uses the same format.
    zadd(&mut c, k, &[("1.1", "a"), ("-inf", "lo"), ("inf", "hi")]);
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "0", "-1", "WITHSCORES"]),
        b"*6\r\n$2\r\nlo\r\n$4\r\n-inf\r\n$1\r\na\r\n$18\r\n1.1000000000000001\r\n$2\r\nhi\r\n$3\r\ninf\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

fn show_bulk(s: &str) -> String {
    format!("${}\r\n{}\r\n", s.len(), s)
}

#[test]
fn zrem_zcard_and_empty_key_removal() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_rem:z";
    abcde(&mut c, k);
    assert_bytes!(c.cmd(&["ZREM", k, "a", "zz", "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZREM", "zset_rem:missing", "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZCARD", k]), b":4\r\n");
    assert_bytes!(c.cmd(&["ZREM", k, "b", "c", "d", "e"]), b":4\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZREM", k]), arity("zrem"));
}

#[test]
fn zrank_zrevrank_and_ties() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_rank:z";
    // Equal scores order by member, bytewise.
    zadd(&mut c, k, &[("1", "a"), ("2", "b"), ("3", "c2"), ("3", "c"), ("3", "C")]);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1"]), arr(&["a", "b", "C", "c", "c2"]));
    assert_bytes!(c.cmd(&["ZRANK", k, "a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZRANK", k, "c"]), b":3\r\n");
    assert_bytes!(c.cmd(&["ZREVRANK", k, "a"]), b":4\r\n");
    assert_bytes!(c.cmd(&["ZREVRANK", k, "c2"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZRANK", k, "zz"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZREVRANK", "zset_rank:missing", "a"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZRANK", k]), arity("zrank"));
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zcount_and_zlexcount() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_count:z";
    abcde(&mut c, k);
    assert_bytes!(c.cmd(&["ZCOUNT", k, "2", "4"]), b":3\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "(2", "4"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "(2", "(4"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "-inf", "+inf"]), b":5\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "4", "2"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "5", "5"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "(5", "5"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", "zset_count:missing", "0", "1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZCOUNT", k, "x", "1"]), MINMAX_FLOAT);
    assert_bytes!(c.cmd(&["ZCOUNT", k, "(x", "1"]), MINMAX_FLOAT);
    assert_bytes!(c.cmd(&["ZCOUNT", k, "nan", "1"]), MINMAX_FLOAT);
    let l = "zset_count:lex";
    zadd(&mut c, l, &[("0", "a"), ("0", "b"), ("0", "c"), ("0", "d"), ("0", "e")]);
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "[b", "[d"]), b":3\r\n");
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "(b", "[d"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "-", "+"]), b":5\r\n");
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "(a", "(a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "+", "-"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZLEXCOUNT", "zset_count:missing", "-", "+"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "x", "+"]), MINMAX_LEX);
    assert_bytes!(c.cmd(&["ZLEXCOUNT", l, "", "+"]), MINMAX_LEX);
    assert_bytes!(c.cmd(&["DEL", k, l]), b":2\r\n");
}

#[test]
fn zrange_by_rank() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_range:z";
    abcde(&mut c, k);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1"]), arr(&["a", "b", "c", "d", "e"]));
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "1", "2", "WITHSCORES"]),
        arr(&["b", "2", "c", "3"])
    );
    assert_bytes!(c.cmd(&["ZRANGE", k, "-2", "-1"]), arr(&["d", "e"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "-100", "100"]), arr(&["a", "b", "c", "d", "e"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "3", "1"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "5", "10"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1", "REV"]), arr(&["e", "d", "c", "b", "a"]));
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "0", "1", "REV", "WITHSCORES"]),
        arr(&["e", "5", "d", "4"])
    );
    assert_bytes!(
        c.cmd(&["ZREVRANGE", k, "0", "1", "WITHSCORES"]),
        arr(&["e", "5", "d", "4"])
    );
    assert_bytes!(c.cmd(&["ZREVRANGE", k, "-1", "-1"]), arr(&["a"]));
    assert_bytes!(c.cmd(&["ZRANGE", "zset_range:missing", "0", "-1"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "x", "1"]), NOT_INT);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "1", "FOO"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "0", "-1", "LIMIT", "0", "1"]),
        b"-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"
    );
    assert_bytes!(c.cmd(&["ZREVRANGE", k, "0", "1", "BYSCORE"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0"]), arity("zrange"));
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zrange_by_score() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_byscore:z";
    abcde(&mut c, k);
    assert_bytes!(c.cmd(&["ZRANGE", k, "2", "4", "BYSCORE"]), arr(&["b", "c", "d"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "(2", "4", "BYSCORE"]), arr(&["c", "d"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "(2", "(4", "BYSCORE"]), arr(&["c"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "5", "5", "BYSCORE"]), arr(&["e"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "(5", "5", "BYSCORE"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "inf", "-inf", "BYSCORE"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "-inf", "+inf", "BYSCORE", "LIMIT", "1", "2"]),
        arr(&["b", "c"])
    );
    // A negative count means all the rest; a negative offset means nothing.
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "-inf", "+inf", "BYSCORE", "LIMIT", "1", "-1"]),
        arr(&["b", "c", "d", "e"])
    );
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "-inf", "+inf", "BYSCORE", "LIMIT", "-1", "2"]),
        b"*0\r\n"
    );
    // REV takes max first.
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "0", "2", "WITHSCORES"]),
        arr(&["e", "5", "d", "4"])
    );
    assert_bytes!(c.cmd(&["ZRANGE", k, "4", "2", "BYSCORE", "REV"]), arr(&["d", "c", "b"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "2", "4", "BYSCORE", "REV"]), b"*0\r\n");
    // ZRANGEBYSCORE / ZREVRANGEBYSCORE.
    assert_bytes!(c.cmd(&["ZRANGEBYSCORE", k, "2", "4"]), arr(&["b", "c", "d"]));
    assert_bytes!(
        c.cmd(&["ZRANGEBYSCORE", k, "2", "4", "WITHSCORES", "LIMIT", "1", "1"]),
        arr(&["c", "3"])
    );
    assert_bytes!(c.cmd(&["ZRANGEBYSCORE", k, "-inf", "(2"]), arr(&["a"]));
    assert_bytes!(c.cmd(&["ZREVRANGEBYSCORE", k, "4", "2"]), arr(&["d", "c", "b"]));
    assert_bytes!(c.cmd(&["ZREVRANGEBYSCORE", k, "2", "4"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["ZREVRANGEBYSCORE", k, "+inf", "(3", "WITHSCORES"]),
        arr(&["e", "5", "d", "4"])
    );
    // Errors.
    assert_bytes!(c.cmd(&["ZRANGE", k, "x", "1", "BYSCORE"]), MINMAX_FLOAT);
    assert_bytes!(c.cmd(&["ZRANGE", k, "(x", "1", "BYSCORE"]), MINMAX_FLOAT);
    assert_bytes!(c.cmd(&["ZRANGE", k, "nan", "1", "BYSCORE"]), MINMAX_FLOAT);
    assert_bytes!(c.cmd(&["ZRANGEBYSCORE", k, "1", "x"]), MINMAX_FLOAT);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "1", "BYSCORE", "BYLEX"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "1", "BYSCORE", "LIMIT", "1"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "1", "BYSCORE", "LIMIT", "x", "1"]), NOT_INT);
    assert_bytes!(c.cmd(&["ZRANGEBYSCORE", k, "2", "4", "LIMIT"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZRANGEBYSCORE", k, "2", "4", "REV"]), SYNTAX);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zrange_by_lex() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_bylex:z";
    zadd(&mut c, k, &[("0", "a"), ("0", "b"), ("0", "c"), ("0", "d"), ("0", "e")]);
    assert_bytes!(c.cmd(&["ZRANGE", k, "[b", "[d", "BYLEX"]), arr(&["b", "c", "d"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "(b", "[d", "BYLEX"]), arr(&["c", "d"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "(b", "(d", "BYLEX"]), arr(&["c"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "-", "+", "BYLEX"]), arr(&["a", "b", "c", "d", "e"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "-", "[c", "BYLEX"]), arr(&["a", "b", "c"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "[c", "+", "BYLEX"]), arr(&["c", "d", "e"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "+", "-", "BYLEX"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "[a", "[a", "BYLEX"]), arr(&["a"]));
    assert_bytes!(c.cmd(&["ZRANGE", k, "-", "-", "BYLEX"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "-", "+", "BYLEX", "LIMIT", "1", "2"]),
        arr(&["b", "c"])
    );
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "+", "-", "BYLEX", "REV"]),
        arr(&["e", "d", "c", "b", "a"])
    );
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "[d", "[b", "BYLEX", "REV", "LIMIT", "0", "1"]),
        arr(&["d"])
    );
    // A range item is "-", "+", or starts with "[" or "(" (then the rest is the member).
    assert_bytes!(c.cmd(&["ZRANGEBYLEX", k, "[b", "+"]), arr(&["b", "c", "d", "e"]));
    assert_bytes!(c.cmd(&["ZRANGEBYLEX", k, "[", "+"]), arr(&["a", "b", "c", "d", "e"]));
    assert_bytes!(c.cmd(&["ZRANGEBYLEX", k, "-", "+", "LIMIT", "1", "1"]), arr(&["b"]));
    assert_bytes!(c.cmd(&["ZREVRANGEBYLEX", k, "+", "[d"]), arr(&["e", "d"]));
    assert_bytes!(c.cmd(&["ZREVRANGEBYLEX", k, "[b", "+"]), b"*0\r\n");
    // Errors.
    assert_bytes!(c.cmd(&["ZRANGE", k, "b", "d", "BYLEX"]), MINMAX_LEX);
    assert_bytes!(c.cmd(&["ZRANGE", k, "[b", "d", "BYLEX"]), MINMAX_LEX);
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1", "BYLEX"]), MINMAX_LEX);
    assert_bytes!(c.cmd(&["ZRANGEBYLEX", k, "", "+"]), MINMAX_LEX);
    let ws = b"-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n";
    assert_bytes!(c.cmd(&["ZRANGE", k, "-", "+", "WITHSCORES", "BYLEX"]), ws);
    assert_bytes!(c.cmd(&["ZRANGEBYLEX", k, "[b", "[d", "WITHSCORES"]), ws);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zrangestore() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_rstore:{x}z";
    let d = "zset_rstore:{x}d";
    let s = "zset_rstore:{x}s";
    abcde(&mut c, k);
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, k, "1", "2"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]), arr(&["b", "2", "c", "3"]));
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, k, "(1", "3", "BYSCORE"]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGESTORE", d, k, "3", "1", "BYSCORE", "REV", "LIMIT", "0", "1"]),
        b":1\r\n"
    );
    assert_bytes!(c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]), arr(&["c", "3"]));
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, k, "[b", "(d", "BYLEX"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", d, "0", "-1"]), arr(&["b", "c"]));
    // An empty result deletes the destination.
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, k, "10", "20"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", d, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, "zset_rstore:{x}missing", "0", "-1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    // A destination of another type is overwritten.
    assert_bytes!(c.cmd(&["SET", d, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, k, "0", "0"]), b":1\r\n");
    assert_bytes!(c.cmd(&["TYPE", d]), b"+zset\r\n");
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, k, "0", "-1", "WITHSCORES"]), SYNTAX);
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZRANGESTORE", d, s, "0", "0"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["DEL", k, d, s]), b":3\r\n");
}

#[test]
fn zremrangeby_rank_score_lex() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_remrange:z";
    abcde(&mut c, k);
    assert_bytes!(c.cmd(&["ZREMRANGEBYRANK", k, "0", "0"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZREMRANGEBYRANK", k, "-1", "-1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1"]), arr(&["b", "c", "d"]));
    assert_bytes!(c.cmd(&["ZREMRANGEBYRANK", k, "5", "10"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZREMRANGEBYSCORE", k, "(2", "3"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1"]), arr(&["b", "d"]));
    assert_bytes!(c.cmd(&["ZREMRANGEBYRANK", k, "x", "1"]), NOT_INT);
    assert_bytes!(c.cmd(&["ZREMRANGEBYSCORE", k, "x", "1"]), MINMAX_FLOAT);
    // Removing everything deletes the key.
    assert_bytes!(c.cmd(&["ZREMRANGEBYSCORE", k, "-inf", "+inf"]), b":2\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    zadd(&mut c, k, &[("0", "a"), ("0", "b"), ("0", "c")]);
    assert_bytes!(c.cmd(&["ZREMRANGEBYLEX", k, "[a", "(c"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "-1"]), arr(&["c"]));
    assert_bytes!(c.cmd(&["ZREMRANGEBYLEX", k, "a", "c"]), MINMAX_LEX);
    assert_bytes!(c.cmd(&["ZREMRANGEBYRANK", k, "0", "-1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    let m = "zset_remrange:missing";
    assert_bytes!(c.cmd(&["ZREMRANGEBYRANK", m, "0", "-1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZREMRANGEBYSCORE", m, "0", "1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZREMRANGEBYLEX", m, "-", "+"]), b":0\r\n");
}

#[test]
fn zpopmin_zpopmax() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_pop:z";
    let m = "zset_pop:missing";
    zadd(&mut c, k, &[("1", "a"), ("2", "b"), ("3", "c"), ("3", "c2")]);
    assert_bytes!(c.cmd(&["ZPOPMIN", k]), arr(&["a", "1"]));
    // Ties: ZPOPMAX takes the greatest member first.
    assert_bytes!(c.cmd(&["ZPOPMAX", k, "2"]), arr(&["c2", "3", "c", "3"]));
    assert_bytes!(c.cmd(&["ZPOPMIN", k, "0"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZPOPMIN", k, "-1"]), POSITIVE);
    assert_bytes!(c.cmd(&["ZPOPMAX", k, "x"]), POSITIVE);
    assert_bytes!(c.cmd(&["ZPOPMIN", k, "1", "2"]), SYNTAX);
    // Missing key: an empty array, with or without count.
    assert_bytes!(c.cmd(&["ZPOPMIN", m]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZPOPMAX", m, "2"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZPOPMAX", m, "0"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZPOPMAX", k, "10"]), arr(&["b", "2"]));
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
}

#[test]
fn zmpop() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_mpop:{x}z";
    let s = "zset_mpop:{x}s";
    let m = "zset_mpop:{x}missing";
    zadd(&mut c, k, &[("1", "a"), ("2", "b"), ("3", "c")]);
    // [key, [[member, score], ...]] even in RESP2.
    assert_bytes!(
        c.cmd(&["ZMPOP", "1", k, "MIN"]),
        b"*2\r\n$14\r\nzset_mpop:{x}z\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZMPOP", "2", m, k, "max", "count", "10"]),
        b"*2\r\n$14\r\nzset_mpop:{x}z\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["ZMPOP", "1", m, "MIN"]), b"*-1\r\n");
    zadd(&mut c, k, &[("1", "a")]);
    let numkeys = b"-ERR numkeys should be greater than 0\r\n";
    let count = b"-ERR count should be greater than 0\r\n";
    assert_bytes!(c.cmd(&["ZMPOP", "0", k, "MIN"]), numkeys);
    assert_bytes!(c.cmd(&["ZMPOP", "-1", k, "MIN"]), numkeys);
    assert_bytes!(c.cmd(&["ZMPOP", "1", k, "MIN", "COUNT", "0"]), count);
    assert_bytes!(c.cmd(&["ZMPOP", "1", k, "MIN", "COUNT", "-1"]), count);
    assert_bytes!(c.cmd(&["ZMPOP", "1", k, "MIDDLE"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZMPOP", "2", k, "MIN"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZMPOP", "1", k, "MIN", "COUNT"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZMPOP", "1", k]), arity("zmpop"));
    assert_bytes!(c.cmd(&["SET", s, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZMPOP", "1", s, "MIN"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["ZMPOP", "2", m, s, "MIN"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["ZCARD", k]), b":1\r\n");
    assert_bytes!(c.cmd(&["DEL", k, s]), b":2\r\n");
}

#[test]
fn zrandmember() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_rand:z";
    let m = "zset_rand:missing";
    zadd(&mut c, k, &[("1", "a"), ("2", "b"), ("3", "c"), ("4.5", "d")]);
    let all: BTreeMap<String, String> = [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4.5")]
        .iter()
        .map(|(m, s)| (m.to_string(), s.to_string()))
        .collect();
    assert_bytes!(c.cmd(&["ZRANDMEMBER", m]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["ZRANDMEMBER", m, "2"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZRANDMEMBER", m, "-2", "WITHSCORES"]), b"*0\r\n");
    for _ in 0..20 {
        let r = parse(&c.cmd(&["ZRANDMEMBER", k])).text();
        assert!(all.contains_key(&r), "{r}");
    }
    assert_bytes!(c.cmd(&["ZRANDMEMBER", k, "0"]), b"*0\r\n");
    for n in [1usize, 3, 4, 5, 50] {
        let got = texts(&parse(&c.cmd(&["ZRANDMEMBER", k, &n.to_string()])));
        assert_eq!(got.len(), n.min(4), "count {n}");
        let set: BTreeSet<_> = got.iter().cloned().collect();
        assert_eq!(set.len(), got.len(), "count {n} repeated: {got:?}");
        assert!(got.iter().all(|x| all.contains_key(x)));
    }
    let got = texts(&parse(&c.cmd(&["ZRANDMEMBER", k, "-25"])));
    assert_eq!(got.len(), 25);
    assert!(got.iter().all(|x| all.contains_key(x)));
    for (n, want) in [("2", 2usize), ("-9", 9), ("10", 4)] {
        let pairs = parse(&c.cmd(&["ZRANDMEMBER", k, n, "WITHSCORES"])).pairs();
        assert_eq!(pairs.len(), want, "count {n}");
        for (m, s) in pairs {
            assert_eq!(all.get(&m.text()), Some(&s.text()));
        }
    }
    assert_bytes!(c.cmd(&["ZRANDMEMBER", k, "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["ZRANDMEMBER", k, "1", "FOO"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["ZRANDMEMBER", k, "-9223372036854775808"]),
        b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZRANDMEMBER", k, "-9223372036854775807", "WITHSCORES"]),
        b"-ERR value is out of range\r\n"
    );
    assert_bytes!(c.cmd(&["ZCARD", k]), b":4\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn zunion_zinter_zdiff() {
    let t = shared();
    let mut c = t.raw_conn();
    let z = "zset_algebra:{x}z";
    let y = "zset_algebra:{x}y";
    let st = "zset_algebra:{x}set";
    let s = "zset_algebra:{x}str";
    let m = "zset_algebra:{x}missing";
    zadd(&mut c, z, &[("1", "a"), ("2", "b"), ("3", "c")]);
    zadd(&mut c, y, &[("10", "b"), ("20", "c"), ("30", "d")]);
    // Results are ordered by score, then member.
    assert_bytes!(c.cmd(&["ZUNION", "2", z, y]), arr(&["a", "b", "c", "d"]));
    assert_bytes!(
        c.cmd(&["ZUNION", "2", z, y, "WITHSCORES"]),
        arr(&["a", "1", "b", "12", "c", "23", "d", "30"])
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "2", z, y, "WEIGHTS", "2", "3", "WITHSCORES"]),
        arr(&["a", "2", "b", "34", "c", "66", "d", "90"])
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "2", z, y, "AGGREGATE", "MIN", "WITHSCORES"]),
        arr(&["a", "1", "b", "2", "c", "3", "d", "30"])
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "2", z, y, "aggregate", "max", "WITHSCORES"]),
        arr(&["a", "1", "b", "10", "c", "20", "d", "30"])
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "3", z, m, y, "AGGREGATE", "SUM"]),
        arr(&["a", "b", "c", "d"])
    );
    assert_bytes!(c.cmd(&["ZINTER", "2", z, y, "WITHSCORES"]), arr(&["b", "12", "c", "23"]));
    assert_bytes!(
        c.cmd(&["ZINTER", "2", z, y, "AGGREGATE", "MIN", "WITHSCORES"]),
        arr(&["b", "2", "c", "3"])
    );
    assert_bytes!(
        c.cmd(&["ZINTER", "2", z, y, "WEIGHTS", "1", "-1", "WITHSCORES"]),
        arr(&["c", "-17", "b", "-8"])
    );
    assert_bytes!(c.cmd(&["ZINTER", "2", z, m]), b"*0\r\n");
    assert_bytes!(c.cmd(&["ZDIFF", "2", z, y, "WITHSCORES"]), arr(&["a", "1"]));
    assert_bytes!(c.cmd(&["ZDIFF", "2", y, z]), arr(&["d"]));
    assert_bytes!(c.cmd(&["ZDIFF", "1", z]), arr(&["a", "b", "c"]));
    assert_bytes!(c.cmd(&["ZDIFF", "2", m, z]), b"*0\r\n");
    // Plain sets take part with score 1.
    assert_bytes!(c.cmd(&["SADD", st, "b", "c", "x"]), b":3\r\n");
    assert_bytes!(
        c.cmd(&["ZUNION", "2", z, st, "WITHSCORES"]),
        arr(&["a", "1", "x", "1", "b", "3", "c", "4"])
    );
    assert_bytes!(c.cmd(&["ZINTER", "2", z, st, "WITHSCORES"]), arr(&["b", "3", "c", "4"]));
    assert_bytes!(c.cmd(&["ZDIFF", "2", z, st]), arr(&["a"]));
    // inf + -inf aggregates to 0.
    let i = "zset_algebra:{x}i";
    let j = "zset_algebra:{x}j";
    zadd(&mut c, i, &[("1", "a")]);
    zadd(&mut c, j, &[("1", "a")]);
    assert_bytes!(
        c.cmd(&["ZUNION", "2", i, j, "WEIGHTS", "inf", "-inf", "WITHSCORES"]),
        arr(&["a", "0"])
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "2", i, j, "WEIGHTS", "inf", "0", "WITHSCORES"]),
        arr(&["a", "inf"])
    );
    // Errors.
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZUNION", "2", z, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["ZINTER", "2", m, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["ZDIFF", "2", z, s]), WRONGTYPE);
    assert_bytes!(
        c.cmd(&["ZUNION", "0", z]),
        b"-ERR at least 1 input key is needed for 'zunion' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZINTER", "0", z]),
        b"-ERR at least 1 input key is needed for 'zinter' command\r\n"
    );
    assert_bytes!(c.cmd(&["ZUNION", "x", z]), NOT_INT);
    assert_bytes!(c.cmd(&["ZUNION", "2", z]), SYNTAX);
    assert_bytes!(c.cmd(&["ZUNION", "1", z, "WEIGHTS", "1", "2"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["ZUNION", "1", z, "WEIGHTS", "x"]),
        b"-ERR weight value is not a float\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "2", z, y, "WEIGHTS", "1", "nan"]),
        b"-ERR weight value is not a float\r\n"
    );
    assert_bytes!(c.cmd(&["ZUNION", "1", z, "AGGREGATE", "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZUNION", "1", z, "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZDIFF", "1", z, "WEIGHTS", "1"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZDIFF", "1", z, "AGGREGATE", "SUM"]), SYNTAX);
    assert_bytes!(c.cmd(&["DEL", z, y, st, s, i, j]), b":6\r\n");
}

#[test]
fn zunionstore_zinterstore_zdiffstore() {
    let t = shared();
    let mut c = t.raw_conn();
    let z = "zset_store:{x}z";
    let y = "zset_store:{x}y";
    let d = "zset_store:{x}d";
    let s = "zset_store:{x}str";
    let m = "zset_store:{x}missing";
    zadd(&mut c, z, &[("1", "a"), ("2", "b"), ("3", "c")]);
    zadd(&mut c, y, &[("10", "b"), ("20", "c"), ("30", "d")]);
    assert_bytes!(c.cmd(&["ZUNIONSTORE", d, "2", z, y, "WEIGHTS", "1", "2"]), b":4\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]),
        arr(&["a", "1", "b", "22", "c", "43", "d", "60"])
    );
    assert_bytes!(c.cmd(&["ZINTERSTORE", d, "2", z, y, "AGGREGATE", "MAX"]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]),
        arr(&["b", "10", "c", "20"])
    );
    assert_bytes!(c.cmd(&["ZINTERSTORE", d, "2", z, y, "AGGREGATE", "MIN"]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]),
        arr(&["b", "2", "c", "3"])
    );
    assert_bytes!(c.cmd(&["ZINTERSTORE", d, "2", z, y]), b":2\r\n");
    assert_bytes!(
        c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]),
        arr(&["b", "12", "c", "23"])
    );
    assert_bytes!(c.cmd(&["ZDIFFSTORE", d, "2", z, y]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZRANGE", d, "0", "-1", "WITHSCORES"]), arr(&["a", "1"]));
    // The destination may be a source.
    assert_bytes!(c.cmd(&["ZUNIONSTORE", z, "2", z, y]), b":4\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", z, "c"]), b"$2\r\n23\r\n");
    // Empty results delete the destination, whatever it held.
    assert_bytes!(c.cmd(&["SET", d, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZINTERSTORE", d, "2", z, m]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    zadd(&mut c, d, &[("1", "q")]);
    assert_bytes!(c.cmd(&["ZDIFFSTORE", d, "2", z, z]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", d, "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZUNIONSTORE", d, "1", m]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    // Errors leave the destination alone.
    zadd(&mut c, d, &[("1", "keep")]);
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZUNIONSTORE", d, "2", z, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["ZINTERSTORE", d, "2", z, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["ZDIFFSTORE", d, "2", z, s]), WRONGTYPE);
    assert_bytes!(
        c.cmd(&["ZUNIONSTORE", d, "0", z]),
        b"-ERR at least 1 input key is needed for 'zunionstore' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZDIFFSTORE", d, "0", z]),
        b"-ERR at least 1 input key is needed for 'zdiffstore' command\r\n"
    );
    assert_bytes!(c.cmd(&["ZUNIONSTORE", d, "1", z, "WITHSCORES"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZRANGE", d, "0", "-1"]), arr(&["keep"]));
    assert_bytes!(c.cmd(&["ZUNIONSTORE", d, "1"]), arity("zunionstore"));
    assert_bytes!(c.cmd(&["DEL", z, y, d, s]), b":4\r\n");
}

#[test]
fn zunion_zinter_take_the_smallest_input_first() {
    // Redis aggregates the inputs smallest first: the first weighted score of an
    // element has NaN (0 x inf) as 0, the later ones do not, and MIN/MAX keep the
    // first of 0 and -0.
    let t = shared();
    let mut c = t.raw_conn();
    let (one, two) = ("zset_order:{x}one", "zset_order:{x}two");
    zadd(&mut c, one, &[("inf", "x")]);
    zadd(&mut c, two, &[("1", "x"), ("2", "y")]);
    let r = c.cmd(&["ZINTER", "2", two, one, "WEIGHTS", "1", "0", "WITHSCORES"]);
    assert_bytes!(r, b"*2\r\n$1\r\nx\r\n$1\r\n1\r\n");
    let r = c.cmd(&["ZUNION", "2", two, one, "WEIGHTS", "1", "0", "WITHSCORES"]);
    assert_bytes!(r, b"*4\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n2\r\n");
    // -0 survives only in a skiplist: `two` gets 200 more members.
    zadd(&mut c, one, &[("0", "x")]);
    let more: Vec<(String, String)> = (0..200).map(|i| ((i + 10).to_string(), format!("m{i}"))).collect();
    let mut pairs: Vec<(&str, &str)> = more.iter().map(|(s, m)| (s.as_str(), m.as_str())).collect();
    pairs.push(("-0", "x"));
    zadd(&mut c, two, &pairs);
    assert_bytes!(c.cmd(&["ZSCORE", two, "x"]), b"$2\r\n-0\r\n");
    for keys in [[one, two], [two, one]] {
        for agg in ["MIN", "MAX"] {
            let r = c.cmd(&["ZINTER", "2", keys[0], keys[1], "AGGREGATE", agg, "WITHSCORES"]);
            assert_bytes!(r, b"*2\r\n$1\r\nx\r\n$1\r\n0\r\n");
        }
    }
    // A weight of 0 on a negative score gives -0, kept in a reply.
    zadd(&mut c, one, &[("-3", "x")]);
    let r = c.cmd(&["ZUNION", "1", one, "WEIGHTS", "0", "WITHSCORES"]);
    assert_bytes!(r, b"*2\r\n$1\r\nx\r\n$2\r\n-0\r\n");
    assert_bytes!(c.cmd(&["DEL", one, two]), b":2\r\n");
}

#[test]
fn zintercard() {
    let t = shared();
    let mut c = t.raw_conn();
    let z = "zset_icard:{x}z";
    let y = "zset_icard:{x}y";
    let s = "zset_icard:{x}str";
    let m = "zset_icard:{x}missing";
    zadd(&mut c, z, &[("1", "a"), ("2", "b"), ("3", "c")]);
    zadd(&mut c, y, &[("10", "b"), ("20", "c"), ("30", "d")]);
    assert_bytes!(c.cmd(&["ZINTERCARD", "2", z, y]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZINTERCARD", "1", z]), b":3\r\n");
    assert_bytes!(c.cmd(&["ZINTERCARD", "2", z, y, "LIMIT", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["ZINTERCARD", "2", z, y, "LIMIT", "0"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZINTERCARD", "2", z, m]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["ZINTERCARD", "0", z]),
        b"-ERR at least 1 input key is needed for 'zintercard' command\r\n"
    );
    assert_bytes!(c.cmd(&["ZINTERCARD", "2", z]), SYNTAX);
    assert_bytes!(
        c.cmd(&["ZINTERCARD", "1", z, "LIMIT", "-1"]),
        b"-ERR LIMIT can't be negative\r\n"
    );
    assert_bytes!(c.cmd(&["ZINTERCARD", "1", z, "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["ZINTERCARD", "2", z, s]), WRONGTYPE);
    assert_bytes!(c.cmd(&["DEL", z, y, s]), b":3\r\n");
}

#[test]
fn zscan() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_scan:z";
    zadd(&mut c, k, &[("1", "a"), ("2.5", "b"), ("3", "c")]);
    // A small (listpack) zset answers in one call, in score order.
    assert_bytes!(
        c.cmd(&["ZSCAN", k, "0"]),
        b"*2\r\n$1\r\n0\r\n*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\n2.5\r\n$1\r\nc\r\n$1\r\n3\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZSCAN", k, "0", "MATCH", "b*"]),
        b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\nb\r\n$3\r\n2.5\r\n"
    );
    assert_bytes!(c.cmd(&["ZSCAN", "zset_scan:missing", "0"]), b"*2\r\n$1\r\n0\r\n*0\r\n");
    assert_bytes!(c.cmd(&["ZSCAN", k, "0", "COUNT", "0"]), SYNTAX);
    assert_bytes!(c.cmd(&["ZSCAN", k, "x"]), b"-ERR invalid cursor\r\n");
    // A big zset: follow the cursor; every member seen with its score.
    let big = "zset_scan:big";
    let mut args: Vec<String> = vec!["ZADD".into(), big.into()];
    for i in 0..1000 {
        args.push(format!("{i}.5"));
        args.push(format!("m{i}"));
    }
    assert_bytes!(c.cmd(&args), b":1000\r\n");
    let mut seen = BTreeMap::new();
    let mut cursor = "0".to_string();
    for round in 0.. {
        assert!(round < 100_000, "ZSCAN did not finish");
        let r = parse(&c.cmd(&["ZSCAN", big, &cursor, "COUNT", "40"]));
        for kv in r.items()[1].items().chunks(2) {
            seen.insert(kv[0].text(), kv[1].text());
        }
        cursor = r.items()[0].text();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 1000);
    assert_eq!(seen.get("m7").map(String::as_str), Some("7.5"));
    assert_eq!(seen.get("m999").map(String::as_str), Some("999.5"));
    assert_bytes!(c.cmd(&["DEL", k, big]), b":2\r\n");
}

#[test]
fn encoding_listpack_to_skiplist() {
    let t = exclusive();
    let mut c = t.raw_conn();
    // Defaults: 128 entries, 64 bytes.
    let mut args: Vec<String> = vec!["ZADD".into(), "big".into()];
    for i in 0..128 {
        args.push(i.to_string());
        args.push(format!("m{i}"));
    }
    assert_bytes!(c.cmd(&args), b":128\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "big"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["ZADD", "big", "1000", "one-more"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "big"]), b"$8\r\nskiplist\r\n");
    let v64 = "x".repeat(64);
    let v65 = "y".repeat(65);
    assert_bytes!(c.cmd(&["ZADD", "v", "1", &v64]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "v"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["ZADD", "v", "2", &v65]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "v"]), b"$8\r\nskiplist\r\n");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "3"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["ZADD", "z", "1", "a", "2", "b", "3", "c"]), b":3\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "z"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["ZADD", "z", "4", "d"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "z"]), b"$8\r\nskiplist\r\n");
    // No conversion back on removal.
    assert_bytes!(c.cmd(&["ZREM", "z", "d", "c"]), b":2\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "z"]), b"$8\r\nskiplist\r\n");
    // Everything still works the same on a skiplist.
    assert_bytes!(c.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]), arr(&["a", "1", "b", "2"]));
    assert_bytes!(c.cmd(&["ZRANK", "z", "b"]), b":1\r\n");
    // Store results are sized like any other zset.
    assert_bytes!(c.cmd(&["ZADD", "w", "1", "a", "2", "b", "3", "c", "4", "d"]), b":4\r\n");
    assert_bytes!(c.cmd(&["ZRANGESTORE", "small", "w", "0", "1"]), b":2\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "small"]), b"$8\r\nlistpack\r\n");
    assert_bytes!(c.cmd(&["ZUNIONSTORE", "u", "1", "w"]), b":4\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "u"]), b"$8\r\nskiplist\r\n");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "zset-max-listpack-value", "2"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["ZADD", "lv", "1", "abc"]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "lv"]), b"$8\r\nskiplist\r\n");
    // The old names are aliases.
    assert_bytes!(
        c.cmd(&["CONFIG", "GET", "zset-max-ziplist-entries"]),
        b"*2\r\n$24\r\nzset-max-ziplist-entries\r\n$1\r\n3\r\n"
    );
}

#[test]
fn resp3_shapes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_resp3:{x}z";
    let m = "zset_resp3:{x}missing";
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    zadd(&mut c, k, &[("1.5", "a"), ("2", "b"), ("1.1", "c")]);
    // Scores are RESP3 doubles.
    assert_bytes!(c.cmd(&["ZSCORE", k, "a"]), b",1.5\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "c"]), b",1.1000000000000001\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "zz"]), b"_\r\n");
    assert_bytes!(c.cmd(&["ZMSCORE", k, "a", "zz"]), b"*2\r\n,1.5\r\n_\r\n");
    assert_bytes!(c.cmd(&["ZINCRBY", k, "1", "b"]), b",3\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "1", "b"]), b",4\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "INCR", "NX", "1", "b"]), b"_\r\n");
    assert_bytes!(c.cmd(&["ZRANK", k, "zz"]), b"_\r\n");
    // WITHSCORES: an array of [member, score] pairs.
    assert_bytes!(
        c.cmd(&["ZRANGE", k, "0", "-1", "WITHSCORES"]),
        b"*3\r\n*2\r\n$1\r\nc\r\n,1.1000000000000001\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,4\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZRANGEBYSCORE", k, "1.2", "2", "WITHSCORES"]),
        b"*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZREVRANGE", k, "0", "0", "WITHSCORES"]),
        b"*1\r\n*2\r\n$1\r\nb\r\n,4\r\n"
    );
    assert_bytes!(
        c.cmd(&["ZUNION", "1", k, "WITHSCORES"]),
        b"*3\r\n*2\r\n$1\r\nc\r\n,1.1000000000000001\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,4\r\n"
    );
    // Without WITHSCORES: a flat array.
    assert_bytes!(c.cmd(&["ZRANGE", k, "0", "0"]), b"*1\r\n$1\r\nc\r\n");
    // ZSCAN scores stay bulk strings.
    assert_bytes!(
        c.cmd(&["ZSCAN", k, "0", "MATCH", "a"]),
        b"*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n"
    );
    // ZRANDMEMBER WITHSCORES: pairs too.
    let r = parse(&c.cmd(&["ZRANDMEMBER", k, "-2", "WITHSCORES"]));
    assert_eq!(r.items().len(), 2);
    for p in r.items() {
        assert_eq!(p.items().len(), 2, "{p:?}");
        assert!(matches!(p.items()[1], Resp::Double(_)), "{p:?}");
    }
    // ZPOPMIN without count: a flat [member, score]; with count: pairs.
    assert_bytes!(c.cmd(&["ZPOPMIN", k]), b"*2\r\n$1\r\nc\r\n,1.1000000000000001\r\n");
    assert_bytes!(c.cmd(&["ZPOPMAX", k, "1"]), b"*1\r\n*2\r\n$1\r\nb\r\n,4\r\n");
    assert_bytes!(c.cmd(&["ZPOPMIN", m]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["ZMPOP", "1", k, "MIN"]),
        b"*2\r\n$15\r\nzset_resp3:{x}z\r\n*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"
    );
    assert_bytes!(c.cmd(&["ZMPOP", "1", m, "MIN"]), b"_\r\n");
    assert_bytes!(c.cmd(&["ZADD", k, "inf", "hi", "-inf", "lo"]), b":2\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "hi"]), b",inf\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", k, "lo"]), b",-inf\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn wrongtype_and_arity() {
    let t = shared();
    let mut c = t.raw_conn();
    let s = "zset_wt:{x}str";
    let d = "zset_wt:{x}d";
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    let cmds: &[&[&str]] = &[
        &["ZADD", s, "1", "a"],
        &["ZINCRBY", s, "1", "a"],
        &["ZREM", s, "a"],
        &["ZCARD", s],
        &["ZCOUNT", s, "0", "1"],
        &["ZLEXCOUNT", s, "-", "+"],
        &["ZSCORE", s, "a"],
        &["ZMSCORE", s, "a"],
        &["ZRANK", s, "a"],
        &["ZREVRANK", s, "a"],
        &["ZRANGE", s, "0", "-1"],
        &["ZRANGEBYSCORE", s, "0", "1"],
        &["ZREVRANGEBYSCORE", s, "1", "0"],
        &["ZRANGEBYLEX", s, "-", "+"],
        &["ZREVRANGEBYLEX", s, "+", "-"],
        &["ZREVRANGE", s, "0", "-1"],
        &["ZREMRANGEBYRANK", s, "0", "-1"],
        &["ZREMRANGEBYSCORE", s, "0", "1"],
        &["ZREMRANGEBYLEX", s, "-", "+"],
        &["ZPOPMIN", s],
        &["ZPOPMAX", s, "2"],
        &["ZRANDMEMBER", s],
        &["ZSCAN", s, "0"],
        &["ZRANGESTORE", d, s, "0", "-1"],
    ];
    for args in cmds {
        assert_bytes!(c.cmd(args), WRONGTYPE, "{args:?}");
    }
    assert_bytes!(c.cmd(&["GET", s]), b"$1\r\nv\r\n");
    assert_bytes!(c.cmd(&["ZADD", d, "1", "a"]), b":1\r\n");
    assert_bytes!(c.cmd(&["GET", d]), WRONGTYPE);
    assert_bytes!(c.cmd(&["SADD", d, "a"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["LPUSH", d, "a"]), WRONGTYPE);
    let cases: &[(&[&str], &str)] = &[
        (&["ZCARD"], "zcard"),
        (&["ZSCORE", d], "zscore"),
        (&["ZMSCORE", d], "zmscore"),
        (&["ZCOUNT", d, "0"], "zcount"),
        (&["ZLEXCOUNT", d, "-"], "zlexcount"),
        (&["ZREVRANK", d], "zrevrank"),
        (&["ZRANGEBYSCORE", d, "0"], "zrangebyscore"),
        (&["ZRANGEBYLEX", d, "-"], "zrangebylex"),
        (&["ZREMRANGEBYRANK", d, "0"], "zremrangebyrank"),
        (&["ZPOPMIN"], "zpopmin"),
        (&["ZRANDMEMBER"], "zrandmember"),
        (&["ZSCAN", d], "zscan"),
        (&["ZUNION", "1"], "zunion"),
        (&["ZINTERCARD", "1"], "zintercard"),
        (&["ZRANGESTORE", d, d, "0"], "zrangestore"),
    ];
    for (args, name) in cases {
        assert_bytes!(c.cmd(args), arity(name), "{args:?}");
    }
    assert_bytes!(c.cmd(&["DEL", s, d]), b":2\r\n");
}

/// ZRANDMEMBER on a sorted set past the packed limits: single picks about equally often
/// for every member, counted picks distinct (small positive count), repeating (negative),
/// or the whole set (large positive), each member with its own score.
#[test]
fn zrandmember_on_a_large_sorted_set() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_random_large:z";
    let mut args = vec!["ZADD".to_string(), k.to_string()];
    for i in 0..200 {
        args.push(i.to_string());
        args.push(format!("m{i}"));
    }
    assert_bytes!(c.cmd(&args), b":200\r\n");
    assert_uniform_picks(&mut c, &["ZRANDMEMBER", k], 20, 200);
    let pairs = |reply: &[u8]| -> Vec<(String, String)> {
        let v = texts(&parse(reply));
        v.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect()
    };
    let ten = pairs(&c.cmd(&["ZRANDMEMBER", k, "10", "WITHSCORES"]));
    assert_eq!(ten.len(), 10);
    assert_eq!(ten.iter().map(|p| &p.0).collect::<BTreeSet<_>>().len(), 10, "distinct");
    assert!(ten.iter().all(|(m, s)| m[1..] == *s), "{ten:?}");
    let many = pairs(&c.cmd(&["ZRANDMEMBER", k, "-300", "WITHSCORES"]));
    assert_eq!(many.len(), 300);
    assert!(many.iter().all(|(m, s)| m[1..] == *s));
    let r = texts(&parse(&c.cmd(&["ZRANDMEMBER", k, "150"])));
    assert_eq!(r.iter().collect::<BTreeSet<_>>().len(), 150);
    let r = texts(&parse(&c.cmd(&["ZRANDMEMBER", k, "1000"])));
    assert_eq!(r.len(), 200);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

/// A large sorted set is walked a few elements per call, and every member present for the whole
/// walk is returned even while other members are added (the table grows several times)
/// and then removed (it shrinks): Redis's SCAN guarantee, without one reply of the
/// whole collection (which on millions of elements would stall the server).
#[test]
fn zscan_walks_a_large_sorted_set_in_steps_and_misses_nothing_while_it_changes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "zset_scan_churn:z";
    let mut args: Vec<String> = vec!["ZADD".into(), k.into()];
    args.extend((0..2000).flat_map(|i| [i.to_string(), format!("s{i}")]));
    assert_bytes!(c.cmd(&args), b":2000\r\n");
    let (seen, largest) = scan_with_churn(&mut c, "ZSCAN", k, 2, |c, call| scan_churn(c, call, k, "ZADD", "ZREM", |n| vec!["1.5".into(), n]));
    assert!((0..2000).all(|i| seen.contains(&format!("s{i}"))), "a member present throughout was missed");
    assert!(largest <= 2 * 200, "one ZSCAN reply carried {largest} items");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}
