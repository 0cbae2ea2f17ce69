//! Wire protocol, byte for byte: framing errors, inline commands, HTTP
//! probes, pipelining, error replies.

use std::time::{Duration, Instant};

use crate::assert_bytes;
use crate::harness::*;

const CLOSE_WAIT: Duration = Duration::from_secs(3);
const SILENCE: Duration = Duration::from_millis(300);

/// Sends `req` on a fresh connection; asserts the reply is exactly `want`
/// and that the server then closes the connection.
fn expect_fatal(t: &Srv, req: &[u8], want: &[u8]) {
    let mut c = t.raw_conn();
    c.send(req);
    let closed = c.is_closed_within(CLOSE_WAIT);
    assert_bytes!(c.pending().to_vec(), want, "request {}", show(req));
    assert!(closed, "connection not closed after {}", show(req));
}

#[test]
fn unknown_command_error_format() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["foo", "a", "b"]),
        b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"
    );
    assert_bytes!(
        c.cmd(&["foo"]),
        b"-ERR unknown command 'foo', with args beginning with: \r\n"
    );
    // The name keeps its case.
    assert_bytes!(
        c.cmd(&["FOO", "a"]),
        b"-ERR unknown command 'FOO', with args beginning with: 'a' \r\n"
    );
    // Inline form gives the same reply.
    assert_bytes!(
        c.req(b"foo a b\r\n"),
        b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"
    );
    // Empty command name.
    assert_bytes!(
        c.req(b"*1\r\n$0\r\n\r\n"),
        b"-ERR unknown command '', with args beginning with: \r\n"
    );
    // "container|sub" names are not commands.
    assert_bytes!(
        c.cmd(&["config|get", "maxmemory"]),
        b"-ERR unknown command 'config|get', with args beginning with: 'maxmemory' \r\n"
    );
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}

#[test]
fn unknown_command_args_are_capped_at_128_bytes() {
    let t = shared();
    let mut c = t.raw_conn();
    // A long argument is cut to 128 bytes.
    let long = "a".repeat(160);
    let want = format!(
        "-ERR unknown command 'foo', with args beginning with: '{}' \r\n",
        "a".repeat(128)
    );
    assert_bytes!(c.cmd(&["foo", &long, "b", "c"]), want.as_bytes());
    // Arguments are listed until the text reaches 128 bytes.
    let args: Vec<String> = (0..40)
        .map(|i| format!("{}", (b'a' + (i % 26) as u8) as char))
        .collect();
    let mut full = vec!["foo".to_string()];
    full.extend(args.iter().cloned());
    let listed: String = args.iter().take(32).map(|a| format!("'{a}' ")).collect();
    let want = format!("-ERR unknown command 'foo', with args beginning with: {listed}\r\n");
    assert_bytes!(c.cmd(&full), want.as_bytes());
    // A long command name is cut to 128 bytes as well.
    let name = "z".repeat(200);
    let want = format!(
        "-ERR unknown command '{}', with args beginning with: \r\n",
        "z".repeat(128)
    );
    assert_bytes!(c.cmd(&[name.as_str()]), want.as_bytes());
}

#[test]
fn unknown_command_newlines_in_args_become_spaces() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["foo", "a\nb", "c\r\nd"]),
        b"-ERR unknown command 'foo', with args beginning with: 'a b' 'c  d' \r\n"
    );
}

#[test]
fn wrong_arity_error_format() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.req(b"*1\r\n$3\r\nGET\r\n"),
        b"-ERR wrong number of arguments for 'get' command\r\n"
    );
    // Reported in lower case whatever the input case.
    assert_bytes!(
        c.cmd(&["GeT"]),
        b"-ERR wrong number of arguments for 'get' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["SET", "a"]),
        b"-ERR wrong number of arguments for 'set' command\r\n"
    );
    // Subcommands are named container|sub.
    assert_bytes!(
        c.cmd(&["CONFIG", "GET"]),
        b"-ERR wrong number of arguments for 'config|get' command\r\n"
    );
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
}

#[test]
fn bulk_length_over_limit_is_fatal() {
    let t = shared();
    expect_fatal(
        &t,
        b"*2\r\n$3\r\nget\r\n$536870913\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    );
}

#[test]
fn bulk_length_at_limit_waits_for_data() {
    // 512 MiB is allowed: the server waits for the payload.
    let t = shared();
    let mut c = t.raw_conn();
    c.send(b"*2\r\n$4\r\nECHO\r\n$536870912\r\n");
    c.expect_silence(SILENCE);
}

#[test]
fn bad_bulk_lengths_are_fatal() {
    let t = shared();
    let want: &[u8] = b"-ERR Protocol error: invalid bulk length\r\n";
    for req in [
        &b"*2\r\n$3\r\nget\r\n$-5\r\n"[..],
        b"*2\r\n$3\r\nget\r\n$abc\r\n",
        b"*1\r\n$\r\n",
        b"*1\r\n$-1\r\n",
        b"*1\r\n$ 4\r\nPING\r\n",
        b"*1\r\n$+4\r\nPING\r\n",
        b"*1\r\n$4\nPING\r\n",
    ] {
        expect_fatal(&t, req, want);
    }
}

#[test]
fn bad_multibulk_lengths_are_fatal() {
    let t = shared();
    let want: &[u8] = b"-ERR Protocol error: invalid multibulk length\r\n";
    for req in [
        &b"*abc\r\n"[..],
        b"*\r\n",
        b"* 1\r\n",
        b"*+1\r\n$4\r\nPING\r\n",
        b"*2147483648\r\n",
        b"*1\n$4\r\nPING\r\n",
    ] {
        expect_fatal(&t, req, want);
    }
}

#[test]
fn non_bulk_element_in_multibulk_is_fatal() {
    let t = shared();
    expect_fatal(
        &t,
        b"*1\r\n+PING\r\n",
        b"-ERR Protocol error: expected '$', got '+'\r\n",
    );
    expect_fatal(
        &t,
        b"*2\r\n$4\r\nECHO\r\n:1\r\n",
        b"-ERR Protocol error: expected '$', got ':'\r\n",
    );
}

#[test]
fn empty_and_negative_multibulk_are_ignored() {
    let t = shared();
    assert_bytes!(t.raw(b"*0\r\n*1\r\n$4\r\nPING\r\n"), b"+PONG\r\n");
    assert_bytes!(t.raw(b"*-1\r\n*1\r\n$4\r\nPING\r\n"), b"+PONG\r\n");
}

#[test]
fn unterminated_multibulk_waits_then_completes() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "proto_partial:k";
    let full = encode(&["SET", k, "value"]);
    // Every split point: header, inside a length, inside data, before CRLF.
    for cut in [1, 4, 7, 12, full.len() - 3, full.len() - 1] {
        c.send(&full[..cut]);
        c.expect_silence(Duration::from_millis(100));
        c.send(&full[cut..]);
        assert_bytes!(c.read_reply(), b"+OK\r\n", "cut at {cut}");
    }
    // A huge multibulk count is not an error: the server just waits.
    let mut c2 = t.raw_conn();
    c2.send(b"*1048577\r\n");
    c2.expect_silence(SILENCE);
    // A bulk waiting for its final CRLF.
    let mut c3 = t.raw_conn();
    c3.send(b"*1\r\n$4\r\nPING\n");
    c3.expect_silence(SILENCE);
}

#[test]
fn command_sent_one_byte_at_a_time() {
    let t = shared();
    let mut c = t.raw_conn();
    for b in encode(&["ECHO", "bytewise"]) {
        c.send(&[b]);
    }
    assert_bytes!(c.read_reply(), b"$8\r\nbytewise\r\n");
    for b in b"PING\r\n" {
        c.send(&[*b]);
    }
    assert_bytes!(c.read_reply(), b"+PONG\r\n");
}

#[test]
fn inline_too_big_is_fatal() {
    let t = shared();
    // More than 64 KiB without a newline.
    expect_fatal(
        &t,
        &vec![b'x'; 70_000],
        b"-ERR Protocol error: too big inline request\r\n",
    );
}

#[test]
fn inline_below_limit_works() {
    let t = shared();
    let mut c = t.raw_conn();
    let arg = "y".repeat(60_000);
    let reply = c.req(format!("ECHO {arg}\r\n").as_bytes());
    assert_bytes!(reply, format!("$60000\r\n{arg}\r\n").as_bytes());
}

#[test]
fn unbalanced_quotes_are_fatal() {
    let t = shared();
    expect_fatal(
        &t,
        b"set \"a b\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    );
    expect_fatal(
        &t,
        b"ECHO 'abc\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    );
    // A closing quote must be followed by a space or the end.
    expect_fatal(
        &t,
        b"ECHO \"a\"b\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    );
    expect_fatal(
        &t,
        b"ECHO 'a'b\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    );
}

#[test]
fn inline_commands_with_quotes_and_escapes() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.req(b"set \"proto inline:k\" \"c\\x41d\\n\"\r\n"),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["GET", "proto inline:k"]), b"$4\r\ncAd\n\r\n");
    assert_bytes!(c.req(b"ECHO 'it\\'s'\r\n"), b"$4\r\nit's\r\n");
    assert_bytes!(c.req(b"ECHO \"tab\\there\"\r\n"), b"$8\r\ntab\there\r\n");
    assert_bytes!(c.req(b"ECHO \"\"\r\n"), b"$0\r\n\r\n");
    assert_bytes!(c.req(b"ECHO \"a b\"\r\n"), b"$3\r\na b\r\n");
    // Single quotes do not interpret \x escapes.
    assert_bytes!(c.req(b"ECHO '\\x41'\r\n"), b"$4\r\n\\x41\r\n");
    // Whitespace handling: extra spaces, LF-only line ends, empty lines.
    assert_bytes!(c.req(b"  ECHO    spaced   \r\n"), b"$6\r\nspaced\r\n");
    assert_bytes!(c.req(b"PING\n"), b"+PONG\r\n");
    assert_bytes!(c.req(b"\r\n\r\nPING\r\n"), b"+PONG\r\n");
    assert_bytes!(c.req(b"ping\r\n"), b"+PONG\r\n");
}

#[test]
fn inline_lines_that_look_like_resp() {
    let t = shared();
    let mut c = t.raw_conn();
    // Only '*' starts a multibulk; anything else is an inline command.
    assert_bytes!(
        c.req(b"$4\r\n"),
        b"-ERR unknown command '$4', with args beginning with: \r\n"
    );
    assert_bytes!(
        c.req(b":1\r\n"),
        b"-ERR unknown command ':1', with args beginning with: \r\n"
    );
    assert_bytes!(c.req(b"PING\r\n"), b"+PONG\r\n");
}

#[test]
fn http_get_probe_is_dropped_silently() {
    let t = shared();
    let (bytes, closed) = t.raw_closed(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_bytes!(bytes, b"");
    assert!(closed, "connection must be closed");
}

#[test]
fn http_post_probe_is_dropped_silently() {
    let t = shared();
    let (bytes, closed) = t.raw_closed(b"POST / HTTP/1.1\r\n");
    assert_bytes!(bytes, b"");
    assert!(closed, "connection must be closed");
    let (bytes, closed) = t.raw_closed(b"post\r\n");
    assert_bytes!(bytes, b"");
    assert!(closed);
}

#[test]
fn http_host_header_closes_an_established_connection() {
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(c.req(b"PING\r\n"), b"+PONG\r\n");
    c.send(b"Host: example.com\r\n");
    assert!(c.is_closed_within(CLOSE_WAIT));
    assert_bytes!(c.pending().to_vec(), b"");
    // Lower case too.
    let mut c = t.raw_conn();
    c.send(b"host: x\r\n");
    assert!(c.is_closed_within(CLOSE_WAIT));
    assert_bytes!(c.pending().to_vec(), b"");
}

#[test]
fn http_get_line_alone_is_just_a_wrong_arity_get() {
    // Without a Host: line, "GET / HTTP/1.1" is an inline GET with 2 args.
    let t = shared();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.req(b"GET / HTTP/1.1\r\n"),
        b"-ERR wrong number of arguments for 'get' command\r\n"
    );
    assert_bytes!(c.req(b"PING\r\n"), b"+PONG\r\n");
}

#[test]
fn pipeline_of_1000_commands_in_one_write() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "proto_pipe:counter";
    let mut req = Vec::new();
    for _ in 0..1000 {
        req.extend(encode(&["INCR", k]));
    }
    c.send(&req);
    let mut want = Vec::new();
    for i in 1..=1000 {
        want.extend(format!(":{i}\r\n").as_bytes());
    }
    assert_bytes!(c.read_replies(1000), &want);
    // Mixed RESP and inline commands in one write.
    let mut req = encode(&["SET", "proto_pipe:a", "x"]);
    req.extend(b"GET proto_pipe:a\r\n");
    req.extend(encode(&["nosuch"]));
    req.extend(b"PING\r\n");
    c.send(&req);
    assert_bytes!(
        c.read_replies(4),
        b"+OK\r\n$1\r\nx\r\n-ERR unknown command 'nosuch', with args beginning with: \r\n+PONG\r\n"
    );
}

#[test]
fn pipeline_with_large_values() {
    let t = shared();
    let mut c = t.raw_conn();
    let big = vec![b'v'; 200_000];
    let mut req = Vec::new();
    for i in 0..20 {
        req.extend(encode(&[
            b"SET".as_slice(),
            format!("proto_bigpipe:{i}").as_bytes(),
            &big,
        ]));
    }
    for i in 0..20 {
        req.extend(encode(&["STRLEN", &format!("proto_bigpipe:{i}")]));
    }
    c.send(&req);
    let mut want = Vec::new();
    for _ in 0..20 {
        want.extend(b"+OK\r\n");
    }
    for _ in 0..20 {
        want.extend(b":200000\r\n");
    }
    assert_bytes!(c.read_replies(40), &want);
}

#[test]
fn large_bulk_argument_roundtrip() {
    let t = shared();
    let mut c = t.raw_conn();
    let v: Vec<u8> = (0..8 * 1024 * 1024u32)
        .map(|i| (i * 7 % 256) as u8)
        .collect();
    assert_bytes!(c.cmd(&[b"SET".as_slice(), b"proto_big:k", &v]), b"+OK\r\n");
    let reply = c.cmd(&["GET", "proto_big:k"]);
    assert_eq!(parse(&reply), Resp::Bulk(v));
    assert_bytes!(c.cmd(&["DEL", "proto_big:k"]), b":1\r\n");
}

#[test]
fn slow_glob_pattern_is_answered_quickly() {
    let t = shared();
    let mut c = t.raw_conn();
    let long = "a".repeat(300);
    assert_bytes!(
        c.cmd(&["SET", &format!("proto_glob:{long}"), "1"]),
        b"+OK\r\n"
    );
    let pattern = "proto_glob:a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
    let start = Instant::now();
    c.send(&encode(&["KEYS", pattern]));
    let reply = c.try_read_reply(Duration::from_secs(5));
    assert_eq!(
        reply.as_deref(),
        Ok(&b"*0\r\n"[..]),
        "KEYS with a pathological pattern did not answer within 5 s"
    );
    c.send(&encode(&[
        "SCAN",
        "0",
        "MATCH",
        "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
        "COUNT",
        "1000",
    ]));
    let reply = c.try_read_reply(Duration::from_secs(5));
    assert!(
        reply.is_ok(),
        "SCAN with a pathological pattern did not answer within 5 s"
    );
    eprintln!("pathological globs took {:?}", start.elapsed());
}

#[test]
fn connection_survives_non_fatal_errors() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "proto_survive:k";
    assert_bytes!(c.cmd(&["SET", k, "text"]), b"+OK\r\n");
    let errors: &[&[&str]] = &[
        &["nosuchcommand"],
        &["GET"],
        &["SET", k, "v", "NX", "XX"],
        &["INCR", k],
        &["INCRBYFLOAT", k, "1"],
        &["SELECT", "99"],
        &["EXPIRE", k, "x"],
        &["SETRANGE", k, "-1", "x"],
        &["SETBIT", k, "-1", "1"],
        &["HELLO", "4"],
        &["CONFIG", "SET", "nosuchparam", "1"],
        &["CLIENT", "NOSUCH"],
        &["OBJECT", "FREQ", k],
        &["RENAME", "proto_survive:none", "x"],
        &["AUTH", "x"],
    ];
    for args in errors {
        let r = c.cmd(args);
        assert!(r.starts_with(b"-"), "{args:?} should fail: {}", show(&r));
        assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n", "after {args:?}");
    }
    // Inline errors too.
    assert!(c
        .req(b"nosuch inline\r\n")
        .starts_with(b"-ERR unknown command"));
    assert_bytes!(c.req(b"PING\r\n"), b"+PONG\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$4\r\ntext\r\n");
}

#[test]
fn many_connections_at_once() {
    let t = shared();
    let mut conns: Vec<RawConn> = (0..50).map(|_| t.raw_conn()).collect();
    for (i, c) in conns.iter_mut().enumerate() {
        c.send(&encode(&["ECHO", &format!("conn-{i}")]));
    }
    for (i, c) in conns.iter_mut().enumerate() {
        let want = format!("conn-{i}");
        assert_eq!(parse(&c.read_reply()), Resp::Bulk(want.into_bytes()));
    }
}

/// A client whose query buffer passes `client-query-buffer-limit` is closed even while
/// it goes on sending: its writes fail within seconds, long before it has sent the
/// 500 MB it announced.
#[test]
fn a_client_over_the_query_buffer_limit_is_closed_while_it_sends() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1mb"]), b"+OK\r\n");
    let mut big = t.raw_conn();
    big.stream.set_write_timeout(Some(Duration::from_secs(2))).expect("write timeout");
    big.send(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$500000000\r\n");
    let piece = vec![b'a'; 1 << 20];
    let started = Instant::now();
    let mut sent_mb = 0;
    while sent_mb < 500 && started.elapsed() < Duration::from_secs(10) && std::io::Write::write_all(&mut big.stream, &piece).is_ok() {
        sent_mb += 1;
    }
    assert!(
        sent_mb < 100 && started.elapsed() < Duration::from_secs(5),
        "the client sent {sent_mb} MB in {:?} before the server let it go",
        started.elapsed()
    );
    assert!(big.is_closed_within(CLOSE_WAIT), "the client was not closed");
    assert_bytes!(c.cmd(&["EXISTS", "big"]), b":0\r\n");
    assert_bytes!(c.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1gb"]), b"+OK\r\n");
}
