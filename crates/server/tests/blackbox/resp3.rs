//! RESP3 replies after HELLO 3.

use crate::assert_bytes;
use crate::harness::*;

fn resp3_conn(t: &Srv) -> RawConn {
    let mut c = t.raw_conn();
    let r = c.cmd(&["HELLO", "3"]);
    assert!(r.starts_with(b"%7\r\n"), "{}", show(&r));
    c
}

#[test]
fn null_is_underscore() {
    let t = shared();
    let mut c = resp3_conn(&t);
    assert_bytes!(c.cmd(&["GET", "r3_null:none"]), b"_\r\n");
    assert_bytes!(c.cmd(&["GETDEL", "r3_null:none"]), b"_\r\n");
    assert_bytes!(c.cmd(&["GETEX", "r3_null:none"]), b"_\r\n");
    assert_bytes!(c.cmd(&["OBJECT", "ENCODING", "r3_null:none"]), b"_\r\n");
    assert_bytes!(c.cmd(&["SET", "r3_null:k", "v"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", "r3_null:k", "w", "NX"]), b"_\r\n");
    assert_bytes!(c.cmd(&["SET", "r3_null:new", "w", "GET"]), b"_\r\n");
    assert_bytes!(
        c.cmd(&["MGET", "r3_null:none", "r3_null:k"]),
        b"*2\r\n_\r\n$1\r\nv\r\n"
    );
    assert_bytes!(c.cmd(&["CLIENT", "GETNAME"]), b"_\r\n");
}

#[test]
fn incrbyfloat_is_still_bulk() {
    let t = shared();
    let mut c = resp3_conn(&t);
    assert_bytes!(c.cmd(&["SET", "r3_ibf:k", "1.5"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["INCRBYFLOAT", "r3_ibf:k", "1"]), b"$3\r\n2.5\r\n");
}

#[test]
fn scalars_are_unchanged() {
    let t = shared();
    let mut c = resp3_conn(&t);
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(c.cmd(&["INCR", "r3_scalar:n"]), b":1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "r3_scalar:n"]), b":1\r\n");
    assert_bytes!(c.cmd(&["GET", "r3_scalar:n"]), b"$1\r\n1\r\n");
    assert_bytes!(
        c.cmd(&["SET", "r3_scalar:n", "x", "NX", "XX"]),
        b"-ERR syntax error\r\n"
    );
    assert_bytes!(
        c.cmd(&["nosuch"]),
        b"-ERR unknown command 'nosuch', with args beginning with: \r\n"
    );
    let time = parse(&c.cmd(&["TIME"]));
    assert!(matches!(&time, Resp::Array(v) if v.len() == 2), "{time:?}");
}

#[test]
fn config_get_is_a_map() {
    let t = shared();
    let mut c = resp3_conn(&t);
    let port = t.port().to_string();
    let want = format!("%1\r\n$4\r\nport\r\n${}\r\n{}\r\n", port.len(), port);
    assert_bytes!(c.cmd(&["CONFIG", "GET", "port"]), want.as_bytes());
    assert_bytes!(c.cmd(&["CONFIG", "GET", "nosuchparam"]), b"%0\r\n");
    let r = parse(&c.cmd(&["CONFIG", "GET", "port", "databases"]));
    assert!(matches!(r, Resp::Map(ref m) if m.len() == 2), "{r:?}");
    assert_eq!(r.get("databases"), Some(Resp::Bulk(b"16".to_vec())));
}

#[test]
fn lcs_idx_and_command_docs_are_maps() {
    let t = shared();
    let mut c = resp3_conn(&t);
    assert_bytes!(
        c.cmd(&["MSET", "r3_lcs:a", "ohmytext", "r3_lcs:b", "mynewtext"]),
        b"+OK\r\n"
    );
    assert_bytes!(
        c.cmd(&["LCS", "r3_lcs:a", "r3_lcs:b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]),
        b"%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n"
    );
    let r = c.cmd(&["COMMAND", "DOCS", "get"]);
    assert!(r.starts_with(b"%1\r\n$3\r\nget\r\n%"), "{}", show(&r));
    let doc = parse(&r).get("get").expect("get");
    assert_eq!(doc.get("group"), Some(Resp::Bulk(b"string".to_vec())));
}

#[test]
fn info_and_client_info_are_verbatim_strings() {
    let t = shared();
    let mut c = resp3_conn(&t);
    let r = c.cmd(&["INFO", "server"]);
    assert!(r.starts_with(b"="), "{}", show(&r));
    match parse(&r) {
        Resp::Verbatim(fmt, body) => {
            assert_eq!(fmt, "txt");
            assert!(body.starts_with(b"# Server\r\n"));
        }
        other => panic!("{other:?}"),
    }
    let r = c.cmd(&["CLIENT", "INFO"]);
    match parse(&r) {
        Resp::Verbatim(fmt, body) => {
            assert_eq!(fmt, "txt");
            assert!(
                String::from_utf8_lossy(&body).contains(" resp=3"),
                "{}",
                show(&body)
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn hello_2_switches_back() {
    let t = shared();
    let mut c = resp3_conn(&t);
    assert_bytes!(c.cmd(&["GET", "r3_back:none"]), b"_\r\n");
    assert!(c.cmd(&["HELLO", "2"]).starts_with(b"*14\r\n"));
    assert_bytes!(c.cmd(&["GET", "r3_back:none"]), b"$-1\r\n");
    let port = t.port().to_string();
    let want = format!("*2\r\n$4\r\nport\r\n${}\r\n{}\r\n", port.len(), port);
    assert_bytes!(c.cmd(&["CONFIG", "GET", "port"]), want.as_bytes());
}

#[test]
fn redis_rs_resp3_client() {
    let t = shared();
    let mut c = t.conn_url(&format!("redis://{}/?protocol=resp3", t.addr));
    let v: redis::Value = q(&mut c, &["GET", "r3_rs:none"]);
    assert_eq!(v, redis::Value::Nil);
    let v: redis::Value = q(&mut c, &["CONFIG", "GET", "databases"]);
    assert!(matches!(v, redis::Value::Map(_)), "{v:?}");
    let _: () = q(&mut c, &["SET", "r3_rs:k", "v"]);
    let s: String = q(&mut c, &["GET", "r3_rs:k"]);
    assert_eq!(s, "v");
}
