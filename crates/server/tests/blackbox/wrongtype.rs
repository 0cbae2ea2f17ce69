//! WRONGTYPE behaviour of string commands against a non-string key. These
//! need a list (LPUSH), which Basalt does not have yet.

use crate::assert_bytes;
use crate::harness::*;


fn make_list(c: &mut RawConn, k: &str) {
    let _ = c.cmd(&["DEL", k]);
    assert_bytes!(c.cmd(&["LPUSH", k, "a", "b"]), b":2\r\n");
}

#[test]
fn string_commands_on_a_list_are_wrongtype() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "wt_cmds:list";
    make_list(&mut c, l);
    let cmds: &[&[&str]] = &[
        &["GET", l],
        &["APPEND", l, "x"],
        &["STRLEN", l],
        &["INCR", l],
        &["DECR", l],
        &["INCRBY", l, "2"],
        &["DECRBY", l, "2"],
        &["INCRBYFLOAT", l, "1.5"],
        &["SETRANGE", l, "0", "x"],
        &["GETRANGE", l, "0", "1"],
        &["SUBSTR", l, "0", "1"],
        &["SETBIT", l, "0", "1"],
        &["GETBIT", l, "0"],
        &["BITCOUNT", l],
        &["BITPOS", l, "1"],
        &["GETEX", l],
        &["GETDEL", l],
        &["GETSET", l, "x"],
        &["SET", l, "v", "GET"],
        &["SET", l, "v", "NX", "GET"],
        &["BITOP", "AND", "wt_cmds:dest", l],
    ];
    for args in cmds {
        assert_bytes!(c.cmd(args), WRONGTYPE, "{args:?}");
    }
    // Nothing above changed the list.
    assert_bytes!(c.cmd(&["TYPE", l]), b"+list\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", l, "0", "-1"]),
        b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", "wt_cmds:dest"]), b":0\r\n");
}

#[test]
fn list_commands_on_a_string_are_wrongtype() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "wt_rev:s", "x"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LPUSH", "wt_rev:s", "a"]), WRONGTYPE);
    assert_bytes!(c.cmd(&["GET", "wt_rev:s"]), b"$1\r\nx\r\n");
}

#[test]
fn lcs_on_a_list_has_its_own_error() {
    let t = shared();
    let mut c = t.raw_conn();
    make_list(&mut c, "wt_lcs:list");
    assert_bytes!(c.cmd(&["SET", "wt_lcs:s", "abc"]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["LCS", "wt_lcs:list", "wt_lcs:s"]),
        b"-ERR The specified keys must contain string values\r\n"
    );
}

#[test]
fn mget_returns_nil_for_non_strings() {
    let t = shared();
    let mut c = t.raw_conn();
    make_list(&mut c, "wt_mget:list");
    assert_bytes!(c.cmd(&["SET", "wt_mget:s", "x"]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["MGET", "wt_mget:list", "wt_mget:s"]),
        b"*2\r\n$-1\r\n$1\r\nx\r\n"
    );
}

#[test]
fn overwriting_commands_replace_a_list() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "wt_over:list";
    make_list(&mut c, l);
    assert_bytes!(c.cmd(&["SET", l, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["TYPE", l]), b"+string\r\n");
    make_list(&mut c, l);
    assert_bytes!(c.cmd(&["SET", l, "v", "NX"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["SET", l, "v", "XX"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["TYPE", l]), b"+string\r\n");
    make_list(&mut c, l);
    assert_bytes!(c.cmd(&["PSETEX", l, "100000", "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["TYPE", l]), b"+string\r\n");
    make_list(&mut c, l);
    assert_bytes!(c.cmd(&["MSET", l, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", l]), b"$1\r\nv\r\n");
    make_list(&mut c, l);
    assert_bytes!(c.cmd(&["SETNX", l, "v"]), b":0\r\n");
    assert_bytes!(c.cmd(&["MSETNX", l, "v", "wt_over:other", "v"]), b":0\r\n");
    assert_bytes!(c.cmd(&["TYPE", l]), b"+list\r\n");
}

#[test]
fn generic_key_commands_work_on_lists() {
    let t = shared();
    let mut c = t.raw_conn();
    let l = "wt_gen:list";
    make_list(&mut c, l);
    assert_bytes!(c.cmd(&["TYPE", l]), b"+list\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", l]), b"$9\r\nquicklist\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", l, "100"]), b":1\r\n");
    assert_bytes!(c.cmd(&["RENAME", l, "wt_gen:list2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["TYPE", "wt_gen:list2"]), b"+list\r\n");
    assert_bytes!(c.cmd(&["COPY", "wt_gen:list2", "wt_gen:list3"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", "wt_gen:list3", "0", "-1"]),
        b"*2\r\n$1\r\nb\r\n$1\r\na\r\n"
    );
    let r = parse(&c.cmd(&[
        "SCAN", "0", "MATCH", "wt_gen:*", "TYPE", "list", "COUNT", "100000",
    ]));
    let mut found: Vec<String> = r.items()[1].items().iter().map(|x| x.text()).collect();
    // One SCAN call may not cover everything; keep going (bounded).
    let mut cursor = r.items()[0].text();
    let mut rounds = 0;
    while cursor != "0" && rounds < 10_000 {
        let r = parse(&c.cmd(&[
            "SCAN", &cursor, "MATCH", "wt_gen:*", "TYPE", "list", "COUNT", "1000",
        ]));
        found.extend(r.items()[1].items().iter().map(|x| x.text()));
        cursor = r.items()[0].text();
        rounds += 1;
    }
    found.sort();
    found.dedup();
    assert_eq!(found, ["wt_gen:list2", "wt_gen:list3"]);
    assert_bytes!(c.cmd(&["DEL", "wt_gen:list2", "wt_gen:list3"]), b":2\r\n");
}
