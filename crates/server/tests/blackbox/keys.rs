//! Generic key commands. Tests touching the whole keyspace (FLUSHDB,
//! FLUSHALL, DBSIZE, SWAPDB, KEYS *, RANDOMKEY) use `exclusive()`.

use std::collections::{BTreeSet, HashSet};

use crate::assert_bytes;
use crate::harness::*;


fn int(c: &mut RawConn, args: &[&str]) -> i64 {
    parse(&c.cmd(args)).int()
}

fn sorted_strings(r: &Resp) -> Vec<String> {
    let mut v: Vec<String> = r.items().iter().map(|x| x.text()).collect();
    v.sort();
    v
}

#[test]
fn del_and_unlink_count_removed_keys() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&[
            "MSET",
            "keys_del:a",
            "1",
            "keys_del:b",
            "2",
            "keys_del:c",
            "3"
        ]),
        b"+OK\r\n"
    );
    assert_bytes!(
        c.cmd(&["DEL", "keys_del:a", "keys_del:b", "keys_del:none"]),
        b":2\r\n"
    );
    assert_bytes!(c.cmd(&["DEL", "keys_del:a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["DEL", "keys_del:c", "keys_del:c"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&["MSET", "keys_del:a", "1", "keys_del:b", "2"]),
        b"+OK\r\n"
    );
    assert_bytes!(
        c.cmd(&["UNLINK", "keys_del:a", "keys_del:b", "keys_del:none"]),
        b":2\r\n"
    );
    assert_bytes!(c.cmd(&["UNLINK", "keys_del:a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "keys_del:a", "keys_del:b"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["DEL"]),
        b"-ERR wrong number of arguments for 'del' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["UNLINK"]),
        b"-ERR wrong number of arguments for 'unlink' command\r\n"
    );
}

#[test]
fn exists_counts_duplicates() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "keys_exists:a", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "keys_exists:a"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&[
            "EXISTS",
            "keys_exists:a",
            "keys_exists:a",
            "keys_exists:none",
            "keys_exists:a"
        ]),
        b":3\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", "keys_exists:none"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["EXISTS"]),
        b"-ERR wrong number of arguments for 'exists' command\r\n"
    );
}

#[test]
fn type_and_touch() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "keys_type:a", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["TYPE", "keys_type:a"]), b"+string\r\n");
    assert_bytes!(c.cmd(&["TYPE", "keys_type:none"]), b"+none\r\n");
    assert_bytes!(
        c.cmd(&["TOUCH", "keys_type:a", "keys_type:a", "keys_type:none"]),
        b":2\r\n"
    );
    assert_bytes!(c.cmd(&["TOUCH", "keys_type:none"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["TYPE"]),
        b"-ERR wrong number of arguments for 'type' command\r\n"
    );
}

#[test]
fn expire_ttl_persist() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_expire:k";
    assert_bytes!(c.cmd(&["EXPIRE", k, "100"]), b":0\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-2\r\n");
    assert_bytes!(c.cmd(&["PTTL", k]), b":-2\r\n");
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["PTTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "100"]), b":1\r\n");
    let ttl = int(&mut c, &["TTL", k]);
    assert!((99..=100).contains(&ttl), "ttl {ttl}");
    assert_bytes!(c.cmd(&["PEXPIRE", k, "50000"]), b":1\r\n");
    let pttl = int(&mut c, &["PTTL", k]);
    assert!((48_000..=50_000).contains(&pttl), "pttl {pttl}");
    assert_bytes!(c.cmd(&["PERSIST", k]), b":1\r\n");
    assert_bytes!(c.cmd(&["PERSIST", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["PERSIST", "keys_expire:none"]), b":0\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "abc"]), NOT_INT);
    assert_bytes!(
        c.cmd(&["EXPIRE", k]),
        b"-ERR wrong number of arguments for 'expire' command\r\n"
    );
}

#[test]
fn expireat_and_expiretime() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_expireat:k";
    assert_bytes!(c.cmd(&["EXPIRETIME", k]), b":-2\r\n");
    assert_bytes!(c.cmd(&["PEXPIRETIME", k]), b":-2\r\n");
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXPIRETIME", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["PEXPIRETIME", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["EXPIREAT", k, "33177600000"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIRETIME", k]), b":33177600000\r\n");
    assert_bytes!(c.cmd(&["PEXPIRETIME", k]), b":33177600000000\r\n");
    assert_bytes!(c.cmd(&["PEXPIREAT", k, "33177600000123"]), b":1\r\n");
    assert_bytes!(c.cmd(&["PEXPIRETIME", k]), b":33177600000123\r\n");
    assert_bytes!(c.cmd(&["EXPIRETIME", k]), b":33177600000\r\n");
    assert_bytes!(
        c.cmd(&["EXPIREAT", "keys_expireat:none", "33177600000"]),
        b":0\r\n"
    );
    let at = unix_now() + 500;
    assert_bytes!(c.cmd(&["EXPIREAT", k, &at.to_string()]), b":1\r\n");
    let ttl = int(&mut c, &["TTL", k]);
    assert!((498..=500).contains(&ttl), "ttl {ttl}");
}

#[test]
fn expire_in_the_past_deletes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_expire_past:k";
    for args in [
        ["EXPIRE", "-1"],
        ["PEXPIRE", "0"],
        ["EXPIREAT", "1"],
        ["PEXPIREAT", "1000"],
        ["EXPIRE", "0"],
    ] {
        assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
        assert_bytes!(c.cmd(&[args[0], k, args[1]]), b":1\r\n", "{args:?}");
        assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n", "{args:?}");
        assert_bytes!(c.cmd(&["GET", k]), b"$-1\r\n");
    }
}

#[test]
fn expire_nx_xx_gt_lt() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_expire_opts:k";
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
    // No TTL yet: XX and GT fail, NX and LT succeed (no TTL = infinite).
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "XX"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "GT"]), b":0\r\n");
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "LT"]), b":1\r\n");
    assert_bytes!(c.cmd(&["PERSIST", k]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "NX"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "200", "NX"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "200", "XX"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "300", "GT"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "GT"]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "50", "LT"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "500", "LT"]), b":0\r\n");
    let ttl = int(&mut c, &["TTL", k]);
    assert!((49..=50).contains(&ttl), "ttl {ttl}");
    assert_bytes!(c.cmd(&["EXPIRE", k, "500", "XX", "GT"]), b":1\r\n");
    assert_bytes!(c.cmd(&["PEXPIRE", k, "1000000", "lt"]), b":0\r\n");
    assert_bytes!(c.cmd(&["PEXPIRE", k, "1000", "lt"]), b":1\r\n");
    // Options are accepted by every variant.
    assert_bytes!(c.cmd(&["EXPIREAT", k, "33177600000", "NX"]), b":0\r\n");
    assert_bytes!(c.cmd(&["PEXPIREAT", k, "33177600000000", "GT"]), b":1\r\n");
    // Repeating the same flag is fine.
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "NX", "NX"]), b":0\r\n");
}

#[test]
fn expire_option_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_expire_opterr:k";
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
    let nx: &[u8] = b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n";
    let gtlt: &[u8] = b"-ERR GT and LT options at the same time are not compatible\r\n";
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "NX", "XX"]), nx);
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "NX", "GT"]), nx);
    assert_bytes!(c.cmd(&["EXPIRE", k, "100", "LT", "NX"]), nx);
    assert_bytes!(c.cmd(&["PEXPIRE", k, "100", "GT", "LT"]), gtlt);
    assert_bytes!(c.cmd(&["EXPIREAT", k, "100", "GT", "LT"]), gtlt);
    assert_bytes!(
        c.cmd(&["EXPIRE", k, "100", "FOO"]),
        b"-ERR Unsupported option FOO\r\n"
    );
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
}

#[test]
fn expire_overflow_is_invalid_expire_time() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_expire_of:k";
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+OK\r\n");
    for (cmd, v) in [
        ("EXPIRE", "9223372036854775807"),
        ("EXPIRE", "9223372036854775"),
        ("EXPIRE", "9223372036854774"),
        ("PEXPIRE", "9223372036854775807"),
        ("PEXPIRE", "9223372036854775806"),
        ("EXPIREAT", "9223372036854775807"),
    ] {
        let want = format!(
            "-ERR invalid expire time in '{}' command\r\n",
            cmd.to_lowercase()
        );
        assert_bytes!(c.cmd(&[cmd, k, v]), want.as_bytes(), "{cmd} {v}");
    }
    assert_bytes!(c.cmd(&["TTL", k]), b":-1\r\n");
    assert_bytes!(c.cmd(&["EXPIRE", k, "9223372036854775807999"]), NOT_INT);
    // Large but representable values are accepted.
    assert_bytes!(c.cmd(&["EXPIRE", k, "9223372036854"]), b":1\r\n");
    assert_bytes!(c.cmd(&["PEXPIRE", k, "9223372036854775"]), b":1\r\n");
}

#[test]
fn rename_moves_value_and_ttl() {
    let t = shared();
    let mut c = t.raw_conn();
    let (a, b) = ("keys_rename:a", "keys_rename:b");
    assert_bytes!(
        c.cmd(&["RENAME", "keys_rename:none", b]),
        b"-ERR no such key\r\n"
    );
    assert_bytes!(c.cmd(&["SET", a, "1", "EX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["RENAME", a, b]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXISTS", a]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", b]), b"$1\r\n1\r\n");
    assert!(int(&mut c, &["TTL", b]) > 0);
    // Renaming onto itself is OK.
    assert_bytes!(c.cmd(&["RENAME", b, b]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", b]), b"$1\r\n1\r\n");
    // Overwrites the destination, including its TTL.
    assert_bytes!(c.cmd(&["SET", a, "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["RENAME", a, b]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", b]), b"$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["TTL", b]), b":-1\r\n");
}

#[test]
fn renamenx() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["RENAMENX", "keys_rnx:none", "keys_rnx:x"]),
        b"-ERR no such key\r\n"
    );
    assert_bytes!(
        c.cmd(&["MSET", "keys_rnx:a", "1", "keys_rnx:b", "2"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["RENAMENX", "keys_rnx:a", "keys_rnx:b"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", "keys_rnx:b"]), b"$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["RENAMENX", "keys_rnx:a", "keys_rnx:c"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "keys_rnx:a"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", "keys_rnx:c"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["RENAMENX", "keys_rnx:c", "keys_rnx:c"]), b":0\r\n");
}

#[test]
fn copy_command() {
    let t = shared();
    let mut c = t.raw_conn();
    let (s, d) = ("keys_copy:src", "keys_copy:dst");
    assert_bytes!(c.cmd(&["COPY", "keys_copy:none", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", s, "v1", "EX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["COPY", s, d]), b":1\r\n");
    assert_bytes!(c.cmd(&["GET", d]), b"$2\r\nv1\r\n");
    // The TTL is copied too.
    assert!(int(&mut c, &["TTL", d]) > 0);
    assert_bytes!(c.cmd(&["SET", s, "v2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["COPY", s, d]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", d]), b"$2\r\nv1\r\n");
    assert_bytes!(c.cmd(&["COPY", s, d, "REPLACE"]), b":1\r\n");
    assert_bytes!(c.cmd(&["GET", d]), b"$2\r\nv2\r\n");
    assert_bytes!(c.cmd(&["TTL", d]), b":-1\r\n");
    // The source is unchanged, and the copy is independent.
    assert_bytes!(c.cmd(&["APPEND", d, "x"]), b":3\r\n");
    assert_bytes!(c.cmd(&["GET", s]), b"$2\r\nv2\r\n");
    assert_bytes!(
        c.cmd(&["COPY", s, s]),
        b"-ERR source and destination objects are the same\r\n"
    );
    assert_bytes!(
        c.cmd(&["COPY", s, d, "DB", "16"]),
        b"-ERR DB index is out of range\r\n"
    );
    assert_bytes!(c.cmd(&["COPY", s, d, "DB", "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["COPY", s, d, "DB"]), SYNTAX);
    assert_bytes!(c.cmd(&["COPY", s, d, "FOO"]), SYNTAX);
}

#[test]
fn copy_to_other_db() {
    let t = shared();
    let mut c = t.raw_conn();
    let (s, d) = ("keys_copydb:src", "keys_copydb:dst");
    assert_bytes!(c.cmd(&["SET", s, "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["COPY", s, d, "DB", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", d]), b":0\r\n");
    assert_bytes!(c.cmd(&["COPY", s, d, "DB", "1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["COPY", s, d, "DB", "1", "REPLACE"]), b":1\r\n");
    // Same name in another db is not "the same object".
    assert_bytes!(c.cmd(&["COPY", s, s, "DB", "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SELECT", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", d]), b"$1\r\nv\r\n");
    assert_bytes!(c.cmd(&["DEL", d, s]), b":2\r\n");
}

#[test]
fn move_command() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_move:k";
    assert_bytes!(c.cmd(&["MOVE", "keys_move:none", "1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", k, "v", "EX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MOVE", k, "1"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", k, "w"]), b"+OK\r\n");
    // Target exists: nothing moves.
    assert_bytes!(c.cmd(&["MOVE", k, "1"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\nw\r\n");
    assert_bytes!(
        c.cmd(&["MOVE", k, "0"]),
        b"-ERR source and destination objects are the same\r\n"
    );
    assert_bytes!(
        c.cmd(&["MOVE", k, "16"]),
        b"-ERR DB index is out of range\r\n"
    );
    assert_bytes!(
        c.cmd(&["MOVE", k, "-1"]),
        b"-ERR DB index is out of range\r\n"
    );
    assert_bytes!(c.cmd(&["MOVE", k, "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["SELECT", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\nv\r\n");
    // The TTL moves with the key.
    assert!(int(&mut c, &["TTL", k]) > 0);
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn keys_patterns() {
    let t = shared();
    let mut c = t.raw_conn();
    let p = "keys_pat:";
    let names = [
        "hello", "hallo", "hxllo", "hllo", "heeeello", "h[a]llo", "h*llo", "h?llo", "Hello",
    ];
    for n in names {
        assert_bytes!(c.cmd(&["SET", &format!("{p}{n}"), "1"]), b"+OK\r\n");
    }
    let keys = |c: &mut RawConn, pat: &str| -> Vec<String> {
        sorted_strings(&parse(&c.cmd(&["KEYS", &format!("{p}{pat}")])))
            .into_iter()
            .map(|k| k.strip_prefix(p).expect("prefix").to_string())
            .collect()
    };
    let mut all: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    all.sort();
    assert_eq!(keys(&mut c, "*"), all);
    assert_eq!(
        keys(&mut c, "h?llo"),
        ["h*llo", "h?llo", "hallo", "hello", "hxllo"]
    );
    assert_eq!(
        keys(&mut c, "h*llo"),
        ["h*llo", "h?llo", "h[a]llo", "hallo", "heeeello", "hello", "hllo", "hxllo"]
    );
    assert_eq!(keys(&mut c, "h[ae]llo"), ["hallo", "hello"]);
    assert_eq!(
        keys(&mut c, "h[^e]llo"),
        ["h*llo", "h?llo", "hallo", "hxllo"]
    );
    assert_eq!(keys(&mut c, "h[a-b]llo"), ["hallo"]);
    assert_eq!(keys(&mut c, "h\\*llo"), ["h*llo"]);
    assert_eq!(keys(&mut c, "h\\?llo"), ["h?llo"]);
    assert_eq!(keys(&mut c, "h\\[a\\]llo"), ["h[a]llo"]);
    assert_eq!(keys(&mut c, "[Hh]ello"), ["Hello", "hello"]);
    assert_eq!(keys(&mut c, "hello"), ["hello"]);
    assert_eq!(keys(&mut c, "nomatch*"), Vec::<String>::new());
    assert_bytes!(c.cmd(&["KEYS", "keys_pat:nothing-here"]), b"*0\r\n");
}

fn scan_all(c: &mut RawConn, extra: &[&str]) -> Vec<String> {
    let mut cursor = "0".to_string();
    let mut out = Vec::new();
    for _ in 0..100_000 {
        let mut args = vec!["SCAN", cursor.as_str()];
        args.extend_from_slice(extra);
        let r = parse(&c.cmd(&args));
        let items = r.items();
        assert_eq!(items.len(), 2, "{r:?}");
        let next = items[0].text();
        assert!(
            matches!(items[0], Resp::Bulk(_)),
            "cursor must be a bulk string"
        );
        out.extend(items[1].items().iter().map(|x| x.text()));
        cursor = next;
        if cursor == "0" {
            return out;
        }
    }
    panic!("SCAN did not finish");
}

#[test]
fn scan_full_iteration_returns_every_key() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut want = BTreeSet::new();
    for i in 0..300 {
        let k = format!("keys_scan:{i}");
        assert_bytes!(c.cmd(&["SET", &k, "v"]), b"+OK\r\n");
        want.insert(k);
    }
    let got: HashSet<String> = scan_all(&mut c, &["MATCH", "keys_scan:*", "COUNT", "17"])
        .into_iter()
        .collect();
    let got: BTreeSet<String> = got.into_iter().collect();
    assert_eq!(got, want);
    // Without MATCH, our keys are all there too.
    let everything: HashSet<String> = scan_all(&mut c, &[]).into_iter().collect();
    assert!(want.iter().all(|k| everything.contains(k)));
    // TYPE filter.
    let strings: HashSet<String> = scan_all(
        &mut c,
        &["MATCH", "keys_scan:*", "TYPE", "string", "COUNT", "100"],
    )
    .into_iter()
    .collect();
    assert_eq!(strings.len(), 300);
    let lists = scan_all(&mut c, &["MATCH", "keys_scan:*", "TYPE", "list"]);
    assert!(lists.is_empty());
}

#[test]
fn scan_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SCAN", "abc"]), b"-ERR invalid cursor\r\n");
    assert_bytes!(
        c.cmd(&["SCAN", "18446744073709551616"]),
        b"-ERR invalid cursor\r\n"
    );
    assert_bytes!(c.cmd(&["SCAN", "0", "COUNT", "0"]), SYNTAX);
    assert_bytes!(c.cmd(&["SCAN", "0", "COUNT", "-1"]), SYNTAX);
    assert_bytes!(c.cmd(&["SCAN", "0", "COUNT", "x"]), NOT_INT);
    assert_bytes!(c.cmd(&["SCAN", "0", "FOO"]), SYNTAX);
    assert_bytes!(c.cmd(&["SCAN", "0", "MATCH"]), SYNTAX);
    assert_bytes!(
        c.cmd(&["SCAN"]),
        b"-ERR wrong number of arguments for 'scan' command\r\n"
    );
}

#[test]
fn scan_on_empty_db_and_match_nothing() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SCAN", "0"]), b"*2\r\n$1\r\n0\r\n*0\r\n");
    assert_bytes!(c.cmd(&["SET", "a", "1"]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["SCAN", "0", "MATCH", "zzz*", "COUNT", "1000"]),
        b"*2\r\n$1\r\n0\r\n*0\r\n"
    );
    assert_bytes!(
        c.cmd(&["SCAN", "0", "COUNT", "1000"]),
        b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n"
    );
}

#[test]
fn dbsize_randomkey_keys_star() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
    assert_bytes!(c.cmd(&["RANDOMKEY"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["KEYS", "*"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["MSET", "a", "1", "b", "2", "c", "3"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":3\r\n");
    assert_eq!(
        sorted_strings(&parse(&c.cmd(&["KEYS", "*"]))),
        ["a", "b", "c"]
    );
    let mut seen = HashSet::new();
    for _ in 0..200 {
        let k = parse(&c.cmd(&["RANDOMKEY"])).text();
        assert!(["a", "b", "c"].contains(&k.as_str()), "{k}");
        seen.insert(k);
    }
    assert!(seen.len() >= 2, "RANDOMKEY always returned the same key");
    assert_bytes!(c.cmd(&["DEL", "a", "b"]), b":2\r\n");
    assert_bytes!(c.cmd(&["RANDOMKEY"]), b"$1\r\nc\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":1\r\n");
    assert_bytes!(
        c.cmd(&["DBSIZE", "x"]),
        b"-ERR wrong number of arguments for 'dbsize' command\r\n"
    );
}

#[test]
fn flushdb_only_touches_current_db() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let other = (t.db + 1).to_string();
    let me = t.db.to_string();
    assert_bytes!(c.cmd(&["SET", "a", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SELECT", &other]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["FLUSHDB"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "b", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SELECT", &me]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["FLUSHDB"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SELECT", &other]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":1\r\n");
    assert_bytes!(c.cmd(&["FLUSHDB", "ASYNC"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
    assert_bytes!(c.cmd(&["SET", "b", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["FLUSHDB", "sync"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
    assert_bytes!(c.cmd(&["FLUSHDB", "FOO"]), SYNTAX);
}

#[test]
fn flushall_empties_every_db() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let other = (t.db + 1).to_string();
    let me = t.db.to_string();
    for mode in [None, Some("ASYNC"), Some("SYNC")] {
        assert_bytes!(c.cmd(&["SET", "a", "1"]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["SELECT", &other]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["SET", "b", "1"]), b"+OK\r\n");
        let r = match mode {
            None => c.cmd(&["FLUSHALL"]),
            Some(m) => c.cmd(&["FLUSHALL", m]),
        };
        assert_bytes!(r, b"+OK\r\n");
        assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
        assert_bytes!(c.cmd(&["SELECT", &me]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
    }
    assert_bytes!(c.cmd(&["FLUSHALL", "FOO"]), SYNTAX);
}

#[test]
fn swapdb_swaps_contents() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let (me, other) = (t.db.to_string(), (t.db + 1).to_string());
    assert_bytes!(c.cmd(&["SELECT", &other]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["FLUSHDB"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "in-other", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SELECT", &me]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MSET", "x", "1", "y", "2"]), b"+OK\r\n");
    let mut watcher = t.raw_conn();
    assert_bytes!(c.cmd(&["SWAPDB", &me, &other]), b"+OK\r\n");
    // Connections stay on their db number and see the swapped data.
    assert_bytes!(c.cmd(&["DBSIZE"]), b":1\r\n");
    assert_bytes!(watcher.cmd(&["GET", "in-other"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["SELECT", &other]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":2\r\n");
    assert_bytes!(c.cmd(&["SWAPDB", &me, &me]), b"+OK\r\n");
    assert_bytes!(
        c.cmd(&["SWAPDB", &me, "16"]),
        b"-ERR DB index is out of range\r\n"
    );
    assert_bytes!(
        c.cmd(&["SWAPDB", "-1", &me]),
        b"-ERR DB index is out of range\r\n"
    );
    assert_bytes!(
        c.cmd(&["SWAPDB", "x", &me]),
        b"-ERR invalid first DB index\r\n"
    );
    assert_bytes!(
        c.cmd(&["SWAPDB", &me, "x"]),
        b"-ERR invalid second DB index\r\n"
    );
    assert_bytes!(
        c.cmd(&["SWAPDB", &me]),
        b"-ERR wrong number of arguments for 'swapdb' command\r\n"
    );
    assert_bytes!(c.cmd(&["FLUSHDB"]), b"+OK\r\n");
}

#[test]
fn object_encoding() {
    let t = shared();
    let mut c = t.raw_conn();
    let cases: &[(&str, &str, &[u8])] = &[
        ("int", "12345", b"$3\r\nint\r\n"),
        ("neg", "-5", b"$3\r\nint\r\n"),
        ("max", "9223372036854775807", b"$3\r\nint\r\n"),
        ("emb", "hello", b"$6\r\nembstr\r\n"),
        ("big", "123456789012345678901234", b"$6\r\nembstr\r\n"),
        ("lz", "01", b"$6\r\nembstr\r\n"),
        ("sp", " 1", b"$6\r\nembstr\r\n"),
        (
            "e44",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            b"$6\r\nembstr\r\n",
        ),
        (
            "r45",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            b"$3\r\nraw\r\n",
        ),
    ];
    for (name, val, want) in cases {
        let k = format!("keys_objenc:{name}");
        assert_bytes!(c.cmd(&["SET", &k, val]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["OBJECT", "ENCODING", &k]), want, "{val:?}");
    }
    // APPEND turns an embstr into raw.
    assert_bytes!(c.cmd(&["APPEND", "keys_objenc:emb", "x"]), b":6\r\n");
    assert_bytes!(
        c.cmd(&["OBJECT", "ENCODING", "keys_objenc:emb"]),
        b"$3\r\nraw\r\n"
    );
    assert_bytes!(
        c.cmd(&["OBJECT", "ENCODING", "keys_objenc:none"]),
        b"$-1\r\n"
    );
}

#[test]
fn object_idletime_refcount_freq() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_obj:k";
    assert_bytes!(c.cmd(&["SET", k, "hello"]), b"+OK\r\n");
    let idle = int(&mut c, &["OBJECT", "IDLETIME", k]);
    assert!((0..=2).contains(&idle), "idle {idle}");
    assert_bytes!(c.cmd(&["OBJECT", "IDLETIME", "keys_obj:none"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "REFCOUNT", k]), b":1\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "REFCOUNT", "keys_obj:none"]), b"$-1\r\n");
    assert_bytes!(
        c.cmd(&["OBJECT", "FREQ", k]),
        b"-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n"
    );
    assert_bytes!(
        c.cmd(&["OBJECT", "FOO", k]),
        b"-ERR unknown subcommand 'FOO'. Try OBJECT HELP.\r\n"
    );
    assert_bytes!(
        c.cmd(&["OBJECT"]),
        b"-ERR wrong number of arguments for 'object' command\r\n"
    );
    let help = parse(&c.cmd(&["OBJECT", "HELP"]));
    assert!(!help.items().is_empty());
}

#[test]
fn object_idletime_grows_and_resets_on_access() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "keys_obj_idle:k";
    assert_bytes!(c.cmd(&["SET", k, "hello"]), b"+OK\r\n");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let idle = int(&mut c, &["OBJECT", "IDLETIME", k]);
    assert!((1..=5).contains(&idle), "idle {idle}");
    // OBJECT itself does not touch the key, GET does.
    assert_bytes!(c.cmd(&["GET", k]), b"$5\r\nhello\r\n");
    let idle = int(&mut c, &["OBJECT", "IDLETIME", k]);
    assert!((0..=1).contains(&idle), "idle {idle}");
}

#[test]
fn redis_rs_keys_roundtrip() {
    let mut c = conn();
    let _: () = q(&mut c, &["SET", "keys_rs:a", "1"]);
    let n: i64 = q(&mut c, &["EXISTS", "keys_rs:a", "keys_rs:a"]);
    assert_eq!(n, 2);
    let ty: String = q(&mut c, &["TYPE", "keys_rs:a"]);
    assert_eq!(ty, "string");
    assert_eq!(
        qerr(&mut c, &["RENAME", "keys_rs:none", "keys_rs:b"]),
        "ERR no such key"
    );
    let ok: bool = q(&mut c, &["EXPIRE", "keys_rs:a", "100"]);
    assert!(ok);
    let ttl: i64 = q(&mut c, &["TTL", "keys_rs:a"]);
    assert!(ttl > 0);
}
