//! Reply and request writers. Every function appends RESP bytes to a caller's `Vec<u8>` and
//! allocates nothing beyond growing it; numbers are formatted on the stack.
//!
//! Functions taking a [`Proto`] write the RESP3 type on RESP3 connections and Redis's RESP2
//! fallback otherwise. [`frame`] writes any [`Frame`] as RESP3 and [`command`] writes a request.

use crate::double::format_g17;
use crate::frame::Frame;
use crate::Proto;

const CRLF: &[u8] = b"\r\n";

/// Appends `prefix`, the decimal `n` and CRLF.
#[inline]
fn header(out: &mut Vec<u8>, prefix: u8, n: usize) {
    signed_header(out, prefix, false, n as u64);
}

/// "00", "01", .. "99" back to back.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Appends `prefix`, `-` when `negative`, the decimal `magnitude` and CRLF.
///
/// Room for the longest line (prefix, sign, 19 digits of `i64::MIN` or 20 of
/// `u64::MAX`, CRLF) is appended as 24 zero bytes, a fixed-size store the compiler
/// inlines, the digits are written in place and the rest cut off. Copying the digits
/// from itoa's buffer was a variable-length copy, a libc `memmove` call for every reply
/// header (1.5% of the server's CPU under pipelined LPUSH); building the line in a stack
/// array and copying it whole made the copy's 16-byte load wait on the digits' 2-byte
/// stores (a failed store forward: about half of this function's samples under pipelined
/// RPUSH).
#[inline]
fn signed_header(out: &mut Vec<u8>, prefix: u8, negative: bool, magnitude: u64) {
    let digits = magnitude.checked_ilog10().map_or(1, |d| d as usize + 1);
    let sign = usize::from(negative);
    let len = 1 + sign + digits + 2;
    let start = out.len();
    out.extend_from_slice(&[0u8; 24]);
    let line = &mut out[start..start + 24];
    line[0] = prefix;
    line[1] = b'-';
    let mut end = 1 + sign + digits;
    line[end] = b'\r';
    line[end + 1] = b'\n';
    // Two digits per division, from a table of "00".."99", as itoa does.
    let mut rest = magnitude;
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        end -= 2;
        line[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        line[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        line[end - 1] = b'0' + rest as u8;
    }
    out.truncate(start + len);
}

/// Appends `prefix`, `body` and CRLF.
#[inline]
fn line(out: &mut Vec<u8>, prefix: u8, body: &[u8]) {
    out.reserve(body.len() + 3);
    out.push(prefix);
    out.extend_from_slice(body);
    out.extend_from_slice(CRLF);
}

/// Appends `prefix` `len` CRLF `body` CRLF.
#[inline]
fn blob(out: &mut Vec<u8>, prefix: u8, body: &[u8]) {
    header(out, prefix, body.len());
    out.reserve(body.len() + 2);
    out.extend_from_slice(body);
    out.extend_from_slice(CRLF);
}

/// `+s\r\n`. `s` must not contain `\r` or `\n`.
pub fn simple(out: &mut Vec<u8>, s: &[u8]) {
    line(out, b'+', s);
}

/// `-msg\r\n`; `msg` includes its code, e.g. `b"ERR syntax error"`, and must not contain `\r`
/// or `\n`.
pub fn error(out: &mut Vec<u8>, msg: &[u8]) {
    line(out, b'-', msg);
}

/// `+OK\r\n`.
pub fn ok(out: &mut Vec<u8>) {
    out.extend_from_slice(b"+OK\r\n");
}

/// `:n\r\n`.
pub fn integer(out: &mut Vec<u8>, n: i64) {
    signed_header(out, b':', n < 0, n.unsigned_abs());
}

/// `$len\r\nb\r\n`.
pub fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    blob(out, b'$', b);
}

/// `n` in decimal as a bulk string (`$2\r\n42\r\n`), without allocating.
pub fn bulk_integer(out: &mut Vec<u8>, n: i64) {
    let mut buf = itoa::Buffer::new();
    bulk(out, buf.format(n).as_bytes());
}

/// A null bulk: RESP2 `$-1\r\n`, RESP3 `_\r\n`.
pub fn null(out: &mut Vec<u8>, proto: Proto) {
    out.extend_from_slice(match proto {
        Proto::Resp2 => b"$-1\r\n",
        Proto::Resp3 => b"_\r\n",
    });
}

/// A null array: RESP2 `*-1\r\n`, RESP3 `_\r\n`.
pub fn null_array(out: &mut Vec<u8>, proto: Proto) {
    out.extend_from_slice(match proto {
        Proto::Resp2 => b"*-1\r\n",
        Proto::Resp3 => b"_\r\n",
    });
}

/// `*n\r\n`; the caller then writes `n` elements.
pub fn array_len(out: &mut Vec<u8>, n: usize) {
    header(out, b'*', n);
}

/// Whether `raw` is exactly what [`array_len`] and [`bulk`] make of `args` (`*<n>`,
/// then `$<len>` and the data of each, every line ending in CRLF, no leading zeros):
/// then a request's own bytes can stand for the command's encoding (the replication
/// stream of a command propagated as sent) without encoding it again. `args` must be
/// the arguments parsed from `raw`: each is checked to lie where the encoding puts it.
pub fn is_command_encoding(raw: &[u8], args: &[&[u8]]) -> bool {
    /// `<prefix><n>\r\n` at `at`, `n` in canonical digits (no sign, no leading zero):
    /// `n` and where the line ends.
    #[inline]
    fn header(raw: &[u8], at: usize, prefix: u8) -> Option<(usize, usize)> {
        let line = raw.get(at..)?;
        if line.first() != Some(&prefix) {
            return None;
        }
        let mut n = 0usize;
        let mut i = 1;
        loop {
            let c = *line.get(i)?;
            if c == b'\r' {
                break;
            }
            let digit = c.wrapping_sub(b'0');
            if digit > 9 || i > 19 {
                return None;
            }
            n = n * 10 + usize::from(digit);
            i += 1;
        }
        let canonical = i > 1 && (line[1] != b'0' || i == 2);
        (canonical && line.get(i + 1) == Some(&b'\n')).then_some((n, at + i + 2))
    }
    let Some((argc, mut at)) = header(raw, 0, b'*') else { return false };
    if argc != args.len() {
        return false;
    }
    for arg in args {
        let Some((len, data)) = header(raw, at, b'$') else { return false };
        let end = data + len;
        if len != arg.len() || raw.get(data..end).map(<[u8]>::as_ptr) != Some(arg.as_ptr()) || raw.get(end..end + 2) != Some(&b"\r\n"[..]) {
            return false;
        }
        at = end + 2;
    }
    at == raw.len()
}

/// A map header: RESP3 `%pairs\r\n`, RESP2 `*<2*pairs>\r\n`; the caller writes key, value, ...
pub fn map_len(out: &mut Vec<u8>, pairs: usize, proto: Proto) {
    match proto {
        Proto::Resp2 => header(out, b'*', pairs.saturating_mul(2)),
        Proto::Resp3 => header(out, b'%', pairs),
    }
}

/// A set header: RESP3 `~n\r\n`, RESP2 `*n\r\n`.
pub fn set_len(out: &mut Vec<u8>, n: usize, proto: Proto) {
    header(out, if proto == Proto::Resp3 { b'~' } else { b'*' }, n);
}

/// A push header: RESP3 `>n\r\n`, RESP2 `*n\r\n`.
pub fn push_len(out: &mut Vec<u8>, n: usize, proto: Proto) {
    header(out, if proto == Proto::Resp3 { b'>' } else { b'*' }, n);
}

/// A double as `%.17g` (see [`format_g17`]): RESP3 `,<g17>\r\n`, RESP2 a bulk string of it.
/// Infinities are `inf` / `-inf` in both protocols.
pub fn double(out: &mut Vec<u8>, d: f64, proto: Proto) {
    let mut buf = [0u8; 32];
    let text = format_g17(d, &mut buf);
    match proto {
        Proto::Resp2 => bulk(out, text),
        Proto::Resp3 => line(out, b',', text),
    }
}

/// RESP3 `#t\r\n` / `#f\r\n`; RESP2 `:1\r\n` / `:0\r\n`.
pub fn boolean(out: &mut Vec<u8>, b: bool, proto: Proto) {
    out.extend_from_slice(match (proto, b) {
        (Proto::Resp3, true) => b"#t\r\n",
        (Proto::Resp3, false) => b"#f\r\n",
        (Proto::Resp2, true) => b":1\r\n",
        (Proto::Resp2, false) => b":0\r\n",
    });
}

/// RESP3 `=<len+4>\r\n<fmt>:<text>\r\n`; RESP2 a plain bulk string of `text`.
pub fn verbatim(out: &mut Vec<u8>, format: &[u8; 3], text: &[u8], proto: Proto) {
    match proto {
        Proto::Resp2 => bulk(out, text),
        Proto::Resp3 => {
            header(out, b'=', text.len() + 4);
            out.reserve(text.len() + 6);
            out.extend_from_slice(format);
            out.push(b':');
            out.extend_from_slice(text);
            out.extend_from_slice(CRLF);
        }
    }
}

/// RESP3 `(digits\r\n`; RESP2 a bulk string of the digits.
pub fn big_number(out: &mut Vec<u8>, digits: &[u8], proto: Proto) {
    match proto {
        Proto::Resp2 => bulk(out, digits),
        Proto::Resp3 => line(out, b'(', digits),
    }
}

/// Writes any [`Frame`] as RESP3 bytes (Null as `_`). Meant for tests and tools.
///
/// An `Error` containing `\r` or `\n` is written as a RESP3 blob error (`!len`). Inside an
/// Array, Set or Push, `Attribute` elements are not counted in the length (they prefix the next
/// element, as in RESP3). Recurses once per nesting level.
pub fn frame(out: &mut Vec<u8>, f: &Frame) {
    match f {
        Frame::Simple(s) => simple(out, s),
        Frame::Error(e) if memchr::memchr2(b'\r', b'\n', e).is_some() => blob(out, b'!', e),
        Frame::Error(e) => error(out, e),
        Frame::Integer(n) => integer(out, *n),
        Frame::Bulk(b) => bulk(out, b),
        Frame::Null => out.extend_from_slice(b"_\r\n"),
        Frame::Array(items) => sequence(out, b'*', items),
        Frame::Set(items) => sequence(out, b'~', items),
        Frame::Push(items) => sequence(out, b'>', items),
        Frame::Map(pairs) => pair_list(out, b'%', pairs),
        Frame::Attribute(pairs) => pair_list(out, b'|', pairs),
        Frame::Double(d) => double(out, *d, Proto::Resp3),
        Frame::Boolean(b) => boolean(out, *b, Proto::Resp3),
        Frame::BigNumber(digits) => big_number(out, digits, Proto::Resp3),
        Frame::Verbatim { format, text } => verbatim(out, format, text, Proto::Resp3),
    }
}

fn sequence(out: &mut Vec<u8>, prefix: u8, items: &[Frame]) {
    let counted = items
        .iter()
        .filter(|f| !matches!(f, Frame::Attribute(_)))
        .count();
    header(out, prefix, counted);
    for item in items {
        frame(out, item);
    }
}

fn pair_list(out: &mut Vec<u8>, prefix: u8, pairs: &[(Frame, Frame)]) {
    header(out, prefix, pairs.len());
    for (k, v) in pairs {
        frame(out, k);
        frame(out, v);
    }
}

/// A request as a multibulk: `*n\r\n` then `$len\r\narg\r\n` per argument.
pub fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    array_len(out, args.len());
    for arg in args {
        bulk(out, arg);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_request_is_its_command_encoding_only_when_canonical() {
        // `args`: where each argument starts in `raw`, and its length.
        fn check(raw: &[u8], args: &[(usize, usize)]) -> bool {
            let args: Vec<&[u8]> = args.iter().map(|&(at, len)| &raw[at..at + len]).collect();
            is_command_encoding(raw, &args)
        }
        assert!(check(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", &[(8, 3), (17, 1), (24, 0)]));
        assert!(check(b"*1\r\n$10\r\n0123456789\r\n", &[(9, 10)]));
        assert!(!check(b"*1\r\n$03\r\nGET\r\n", &[(9, 3)]), "a leading zero");
        assert!(!check(b"*1\r\n$+3\r\nGET\r\n", &[(9, 3)]), "a sign");
        assert!(!check(b"*1\r\n$3\r\nGETxx", &[(8, 3)]), "data not followed by CRLF");
        assert!(!check(b"*1\r\n$3\rxGET\r\n", &[(8, 3)]), "a header not ended by CRLF");
        assert!(!check(b"*1\r\n$3\r\nGET\r\nPING\r\n", &[(8, 3)]), "more after it");
        let raw = b"*1\r\n$3\r\nGET\r\n";
        let other = b"GET".to_vec();
        assert!(!is_command_encoding(raw, &[&other]), "arguments from elsewhere");
        assert!(!is_command_encoding(raw, &[]), "another count");
    }

    use super::*;
    use crate::Proto::{Resp2, Resp3};

    fn w(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = b"prefix".to_vec();
        f(&mut out);
        assert!(out.starts_with(b"prefix"), "functions must append");
        out.split_off(6)
    }

    #[test]
    fn scalars() {
        assert_eq!(w(|o| simple(o, b"PONG")), b"+PONG\r\n");
        assert_eq!(
            w(|o| error(o, b"ERR syntax error")),
            b"-ERR syntax error\r\n"
        );
        assert_eq!(w(ok), b"+OK\r\n");
        assert_eq!(w(|o| integer(o, 0)), b":0\r\n");
        assert_eq!(w(|o| integer(o, -42)), b":-42\r\n");
        assert_eq!(w(|o| integer(o, i64::MIN)), b":-9223372036854775808\r\n");
        assert_eq!(w(|o| bulk(o, b"")), b"$0\r\n\r\n");
        assert_eq!(w(|o| bulk(o, b"a\r\nb")), b"$4\r\na\r\nb\r\n");
        assert_eq!(w(|o| bulk_integer(o, 12345)), b"$5\r\n12345\r\n");
        assert_eq!(w(|o| bulk_integer(o, -1)), b"$2\r\n-1\r\n");
    }

    #[test]
    fn integer_lines_match_itoa_at_every_digit_boundary() {
        let mut values = vec![0, 1, -1, 9, -9, i64::MAX, i64::MIN, i64::MIN + 1];
        let mut p: i64 = 10;
        loop {
            values.extend([p - 1, p, p + 1, -(p - 1), -p, -(p + 1)]);
            match p.checked_mul(10) {
                Some(next) => p = next,
                None => break,
            }
        }
        for n in values {
            let expected = format!(":{}\r\n", itoa::Buffer::new().format(n));
            assert_eq!(w(|o| integer(o, n)), expected.as_bytes(), "{n}");
        }
        for n in [0usize, 9, 10, 99, 100, usize::MAX] {
            assert_eq!(w(|o| array_len(o, n)), format!("*{n}\r\n").as_bytes(), "{n}");
        }
    }

    #[test]
    fn proto_dependent() {
        assert_eq!(w(|o| null(o, Resp2)), b"$-1\r\n");
        assert_eq!(w(|o| null(o, Resp3)), b"_\r\n");
        assert_eq!(w(|o| null_array(o, Resp2)), b"*-1\r\n");
        assert_eq!(w(|o| null_array(o, Resp3)), b"_\r\n");
        assert_eq!(w(|o| array_len(o, 3)), b"*3\r\n");
        assert_eq!(w(|o| map_len(o, 2, Resp2)), b"*4\r\n");
        assert_eq!(w(|o| map_len(o, 2, Resp3)), b"%2\r\n");
        assert_eq!(w(|o| set_len(o, 5, Resp2)), b"*5\r\n");
        assert_eq!(w(|o| set_len(o, 5, Resp3)), b"~5\r\n");
        assert_eq!(w(|o| push_len(o, 3, Resp2)), b"*3\r\n");
        assert_eq!(w(|o| push_len(o, 3, Resp3)), b">3\r\n");
        assert_eq!(w(|o| double(o, 1.5, Resp3)), b",1.5\r\n");
        assert_eq!(
            w(|o| double(o, 0.1, Resp2)),
            b"$19\r\n0.10000000000000001\r\n"
        );
        assert_eq!(w(|o| double(o, f64::INFINITY, Resp2)), b"$3\r\ninf\r\n");
        assert_eq!(
            w(|o| double(o, f64::NEG_INFINITY, Resp2)),
            b"$4\r\n-inf\r\n"
        );
        assert_eq!(w(|o| double(o, f64::INFINITY, Resp3)), b",inf\r\n");
        assert_eq!(w(|o| double(o, f64::NEG_INFINITY, Resp3)), b",-inf\r\n");
        assert_eq!(w(|o| double(o, 1e20, Resp3)), b",1e+20\r\n");
        assert_eq!(w(|o| boolean(o, true, Resp3)), b"#t\r\n");
        assert_eq!(w(|o| boolean(o, false, Resp3)), b"#f\r\n");
        assert_eq!(w(|o| boolean(o, true, Resp2)), b":1\r\n");
        assert_eq!(w(|o| boolean(o, false, Resp2)), b":0\r\n");
        assert_eq!(
            w(|o| verbatim(o, b"txt", b"hi\r\n", Resp3)),
            b"=8\r\ntxt:hi\r\n\r\n"
        );
        assert_eq!(w(|o| verbatim(o, b"txt", b"hi", Resp2)), b"$2\r\nhi\r\n");
        assert_eq!(w(|o| big_number(o, b"-123", Resp3)), b"(-123\r\n");
        assert_eq!(w(|o| big_number(o, b"-123", Resp2)), b"$4\r\n-123\r\n");
    }

    #[test]
    fn command_is_a_multibulk() {
        assert_eq!(
            w(|o| command(o, &[b"SET", b"k", b"v\r\n"])),
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n"
        );
        assert_eq!(w(|o| command(o, &[])), b"*0\r\n");
    }

    #[test]
    fn frames_as_resp3() {
        let f = Frame::Array(vec![
            Frame::Null,
            Frame::Error("ERR a\r\nb".into()),
            Frame::Map(vec![(Frame::simple("k"), Frame::Integer(1))]),
            Frame::Set(vec![Frame::Boolean(true)]),
            Frame::Push(vec![]),
            Frame::Double(-0.0),
            Frame::BigNumber("1".into()),
            Frame::Verbatim {
                format: *b"mkd",
                text: "x".into(),
            },
        ]);
        assert_eq!(
            w(|o| frame(o, &f)),
            &b"*8\r\n_\r\n!8\r\nERR a\r\nb\r\n%1\r\n+k\r\n:1\r\n~1\r\n#t\r\n>0\r\n,-0\r\n(1\r\n\
               =5\r\nmkd:x\r\n"[..]
        );
        let with_attr = Frame::Array(vec![
            Frame::Attribute(vec![(Frame::simple("ttl"), Frame::Integer(3))]),
            Frame::Integer(1),
        ]);
        assert_eq!(
            w(|o| frame(o, &with_attr)),
            b"*1\r\n|1\r\n+ttl\r\n:3\r\n:1\r\n"
        );
    }
}
