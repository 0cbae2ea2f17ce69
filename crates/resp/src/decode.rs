//! Client-side reply decoding for every RESP2 and RESP3 type: [`frame_len`] validates the next
//! frame and returns its length without building anything (no allocation, no recursion), and
//! [`decode_frame`] builds the [`Frame`] tree.
//!
//! Rules (stricter than the server's request parser, since replies come from a server):
//! * Every line ends in `\r\n`; a bare `\r` or `\n` inside a line is an error. Bulk, verbatim and
//!   blob-error payloads must be followed by `\r\n`.
//! * Lengths and integers use Redis's strict integer syntax ([`crate::int::parse_i64`]). `$-1`
//!   and `*-1` decode as [`Frame::Null`]; other negative lengths are errors.
//! * Bulk, verbatim and blob-error lengths, and the length of `+`, `-` and `(` lines, are limited
//!   by `max_bulk_len`; other lines (numbers, headers) by [`MAX_SHORT_LINE`].
//! * Aggregates may nest [`MAX_DEPTH`] deep; beyond that is [`ProtocolError::NestingTooDeep`].
//! * A top-level `|` attribute is returned as its own [`Frame::Attribute`] (the frame it annotates
//!   follows separately); attributes nested in aggregates are validated, dropped, and not counted
//!   as elements.
//! * RESP3 streamed strings and aggregates (`$?`, `*?`) are not supported (Redis never sends
//!   them) and are reported as invalid lengths.
//!
//! Nothing is pre-allocated from a claimed length: [`decode_frame`] validates the whole frame
//! first, so every allocation is backed by bytes actually present in the input.

use bytes::Bytes;

use crate::error::ProtocolError;
use crate::frame::Frame;
use crate::int::parse_i64;

/// Deepest aggregate nesting accepted.
pub const MAX_DEPTH: usize = 512;
/// Longest content of a line that is not a `+`, `-` or `(` line (integers, doubles, lengths).
pub const MAX_SHORT_LINE: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AggKind {
    Array,
    Map,
    Set,
    Push,
    Attribute,
}

/// A range of the input.
type Span = (usize, usize);

#[derive(Clone, Copy, Debug)]
enum Scalar {
    Simple(Span),
    Error(Span),
    Integer(i64),
    Bulk(Span),
    Null,
    Double(f64),
    Boolean(bool),
    BigNumber(Span),
    Verbatim([u8; 3], Span),
}

#[derive(Clone, Copy, Debug)]
enum Item {
    Scalar(Scalar),
    /// An aggregate header; `frames` is the number of frames that follow (2 per map pair).
    Aggregate(AggKind, u64),
}

fn invalid(what: &'static str) -> ProtocolError {
    ProtocolError::InvalidFrame(what)
}

/// Finds the line starting at `start`: returns the index of its `\r` (followed by `\n`), `None`
/// if incomplete. The content may be at most `max` bytes.
fn find_line(input: &[u8], start: usize, max: usize) -> Result<Option<usize>, ProtocolError> {
    let limit = start.saturating_add(max).saturating_add(1);
    let window_end = input.len().min(limit);
    let window = input.get(start..window_end).unwrap_or(&[]);
    match memchr::memchr2(b'\r', b'\n', window) {
        Some(i) => {
            let cr = start + i;
            if input[cr] == b'\n' {
                return Err(invalid("bare LF in line"));
            }
            match input.get(cr + 1) {
                None => Ok(None),
                Some(b'\n') => Ok(Some(cr)),
                Some(_) => Err(invalid("CR not followed by LF")),
            }
        }
        None if window_end == limit => Err(invalid("line too long")),
        None => Ok(None),
    }
}

/// Reads a `<len>\r\n<payload>\r\n` body whose length line starts at `start`. Returns the payload
/// span (or `None` for a `-1` length when `allow_null`) and the index after the frame.
#[allow(clippy::type_complexity)]
fn read_blob(
    input: &[u8],
    start: usize,
    max_bulk_len: u64,
    allow_null: bool,
) -> Result<Option<(Option<Span>, usize)>, ProtocolError> {
    let Some(cr) = find_line(input, start, MAX_SHORT_LINE)? else {
        return Ok(None);
    };
    let len = match parse_i64(&input[start..cr]) {
        Some(-1) if allow_null => return Ok(Some((None, cr + 2))),
        Some(len) if len >= 0 => len as u64,
        _ => return Err(invalid("bad length")),
    };
    if len > max_bulk_len {
        return Err(invalid("bulk length over limit"));
    }
    let data = cr + 2;
    let Ok(len) = usize::try_from(len) else {
        return Err(invalid("bulk length over limit"));
    };
    let end = data.saturating_add(len);
    if end.saturating_add(2) > input.len() {
        return Ok(None);
    }
    if &input[end..end + 2] != b"\r\n" {
        return Err(invalid("payload not followed by CRLF"));
    }
    Ok(Some((Some((data, end)), end + 2)))
}

/// Reads one item (a scalar or an aggregate header) at `pos`; returns it and the index after it.
fn read_item(
    input: &[u8],
    pos: usize,
    max_bulk_len: u64,
) -> Result<Option<(Item, usize)>, ProtocolError> {
    let Some(&kind) = input.get(pos) else {
        return Ok(None);
    };
    let start = pos + 1;
    let long_line = usize::try_from(max_bulk_len).unwrap_or(usize::MAX);
    let line_max = match kind {
        b'+' | b'-' | b'(' => long_line,
        b':' | b',' | b'#' | b'_' | b'*' | b'%' | b'~' | b'>' | b'|' => MAX_SHORT_LINE,
        b'$' | b'!' | b'=' => {
            let Some((span, next)) = read_blob(input, start, max_bulk_len, kind == b'$')? else {
                return Ok(None);
            };
            let scalar = match (kind, span) {
                (b'$', None) => Scalar::Null,
                (b'$', Some(s)) => Scalar::Bulk(s),
                (b'!', Some(s)) => Scalar::Error(s),
                (_, Some((a, b))) => {
                    if b - a < 4 || input[a + 3] != b':' {
                        return Err(invalid("verbatim string without format"));
                    }
                    Scalar::Verbatim([input[a], input[a + 1], input[a + 2]], (a + 4, b))
                }
                (_, None) => return Err(invalid("bad length")),
            };
            return Ok(Some((Item::Scalar(scalar), next)));
        }
        other => return Err(ProtocolError::UnknownType(other)),
    };
    let Some(cr) = find_line(input, start, line_max)? else {
        return Ok(None);
    };
    let body = &input[start..cr];
    let next = cr + 2;
    let count = |allow_null: bool| -> Result<Option<u64>, ProtocolError> {
        match parse_i64(body) {
            Some(-1) if allow_null => Ok(None),
            Some(n) if n >= 0 => Ok(Some(n as u64)),
            _ => Err(invalid("bad aggregate length")),
        }
    };
    let item = match kind {
        b'+' => Item::Scalar(Scalar::Simple((start, cr))),
        b'-' => Item::Scalar(Scalar::Error((start, cr))),
        b':' => Item::Scalar(Scalar::Integer(
            parse_i64(body).ok_or(invalid("bad integer"))?,
        )),
        b',' => Item::Scalar(Scalar::Double(parse_double_line(body)?)),
        b'#' => Item::Scalar(Scalar::Boolean(match body {
            b"t" => true,
            b"f" => false,
            _ => return Err(invalid("bad boolean")),
        })),
        b'_' if body.is_empty() => Item::Scalar(Scalar::Null),
        b'_' => return Err(invalid("bad null")),
        b'(' => {
            let digits = body.strip_prefix(b"-").unwrap_or(body);
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(invalid("bad big number"));
            }
            Item::Scalar(Scalar::BigNumber((start, cr)))
        }
        b'*' => match count(true)? {
            None => Item::Scalar(Scalar::Null),
            Some(n) => Item::Aggregate(AggKind::Array, n),
        },
        b'~' => Item::Aggregate(AggKind::Set, count(false)?.unwrap_or(0)),
        b'>' => Item::Aggregate(AggKind::Push, count(false)?.unwrap_or(0)),
        // Counts are at most i64::MAX, so doubling fits in u64.
        b'%' => Item::Aggregate(AggKind::Map, count(false)?.unwrap_or(0) * 2),
        _ => Item::Aggregate(AggKind::Attribute, count(false)?.unwrap_or(0) * 2),
    };
    Ok(Some((item, next)))
}

/// Parses a RESP3 double line: decimal with optional exponent, `inf`, `-inf` or `nan` (any case).
fn parse_double_line(body: &[u8]) -> Result<f64, ProtocolError> {
    let ok = !body.is_empty()
        && body
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'));
    let text = std::str::from_utf8(body).ok().filter(|_| ok);
    text.and_then(|t| t.parse().ok())
        .ok_or(invalid("bad double"))
}

/// Validates the next whole frame at the start of `input` and returns its length, without
/// building it: no allocation, no recursion (a fixed 4.5 KiB stack of open aggregates).
///
/// `Ok(None)` means the input holds a valid but incomplete prefix. Errors are reported as soon as
/// the bytes that reveal them are present. Agrees with [`decode_frame`] on every input.
pub fn frame_len(input: &[u8], max_bulk_len: u64) -> Result<Option<usize>, ProtocolError> {
    // Fast path: a scalar or an empty aggregate needs no stack.
    match read_item(input, 0, max_bulk_len)? {
        None => Ok(None),
        Some((Item::Aggregate(_, frames), _)) if frames > 0 => nested_len(input, max_bulk_len),
        Some((_, next)) => Ok(Some(next)),
    }
}

/// [`frame_len`] for a frame that starts with a non-empty aggregate.
fn nested_len(input: &[u8], max_bulk_len: u64) -> Result<Option<usize>, ProtocolError> {
    // Frames still expected by each open aggregate, and whether it is an attribute.
    let mut remaining = [0u64; MAX_DEPTH];
    let mut is_attribute = [false; MAX_DEPTH];
    let mut depth = 0usize;
    let mut pos = 0usize;
    loop {
        let Some((item, next)) = read_item(input, pos, max_bulk_len)? else {
            return Ok(None);
        };
        pos = next;
        // Whether the frame that just completed is an attribute.
        let mut attribute = match item {
            Item::Aggregate(kind, frames) if frames > 0 => {
                if depth == MAX_DEPTH {
                    return Err(ProtocolError::NestingTooDeep);
                }
                remaining[depth] = frames;
                is_attribute[depth] = kind == AggKind::Attribute;
                depth += 1;
                continue;
            }
            Item::Aggregate(kind, _) => kind == AggKind::Attribute,
            Item::Scalar(_) => false,
        };
        loop {
            if depth == 0 {
                return Ok(Some(pos));
            }
            if attribute {
                // A nested attribute does not count as an element of its parent.
                break;
            }
            remaining[depth - 1] -= 1;
            if remaining[depth - 1] > 0 {
                break;
            }
            depth -= 1;
            attribute = is_attribute[depth];
        }
    }
}

/// Decodes the next whole frame at the start of `input`: `Ok(Some((frame, len)))` with the number
/// of bytes it used, or `Ok(None)` if the input holds only a valid prefix.
///
/// The frame is validated with [`frame_len`] before anything is built, so an incomplete or
/// malicious input costs no allocation, and the builder is iterative (no recursion).
pub fn decode_frame(
    input: &[u8],
    max_bulk_len: u64,
) -> Result<Option<(Frame, usize)>, ProtocolError> {
    let Some(len) = frame_len(input, max_bulk_len)? else {
        return Ok(None);
    };
    let frame = build(&input[..len], max_bulk_len)?;
    Ok(Some((frame, len)))
}

struct Open {
    kind: AggKind,
    remaining: u64,
    items: Vec<Frame>,
}

/// Builds the frame that [`frame_len`] validated as exactly `input`.
fn build(input: &[u8], max_bulk_len: u64) -> Result<Frame, ProtocolError> {
    let mut stack: Vec<Open> = Vec::new();
    let mut pos = 0usize;
    loop {
        // Unreachable after validation, but handled rather than unwrapped.
        let Some((item, next)) = read_item(input, pos, max_bulk_len)? else {
            return Err(invalid("truncated"));
        };
        pos = next;
        let mut frame = match item {
            Item::Aggregate(kind, frames) if frames > 0 => {
                // Validated: every announced frame is present and takes at least 3 bytes.
                let cap = usize::try_from(frames).unwrap_or(0).min(input.len() / 3);
                stack.push(Open {
                    kind,
                    remaining: frames,
                    items: Vec::with_capacity(cap),
                });
                continue;
            }
            Item::Aggregate(kind, _) => aggregate(kind, Vec::new()),
            Item::Scalar(s) => scalar(input, s),
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(frame);
            };
            if matches!(frame, Frame::Attribute(_)) {
                break; // nested attributes are dropped
            }
            top.items.push(frame);
            top.remaining -= 1;
            if top.remaining > 0 {
                break;
            }
            let Some(done) = stack.pop() else {
                return Err(invalid("truncated"));
            };
            frame = aggregate(done.kind, done.items);
        }
    }
}

fn bytes_at(input: &[u8], (a, b): Span) -> Bytes {
    Bytes::copy_from_slice(&input[a..b])
}

fn scalar(input: &[u8], s: Scalar) -> Frame {
    match s {
        Scalar::Simple(span) => Frame::Simple(bytes_at(input, span)),
        Scalar::Error(span) => Frame::Error(bytes_at(input, span)),
        Scalar::Integer(n) => Frame::Integer(n),
        Scalar::Bulk(span) => Frame::Bulk(bytes_at(input, span)),
        Scalar::Null => Frame::Null,
        Scalar::Double(d) => Frame::Double(d),
        Scalar::Boolean(b) => Frame::Boolean(b),
        Scalar::BigNumber(span) => Frame::BigNumber(bytes_at(input, span)),
        Scalar::Verbatim(format, span) => Frame::Verbatim {
            format,
            text: bytes_at(input, span),
        },
    }
}

fn pairs(items: Vec<Frame>) -> Vec<(Frame, Frame)> {
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    out
}

fn aggregate(kind: AggKind, items: Vec<Frame>) -> Frame {
    match kind {
        AggKind::Array => Frame::Array(items),
        AggKind::Set => Frame::Set(items),
        AggKind::Push => Frame::Push(items),
        AggKind::Map => Frame::Map(pairs(items)),
        AggKind::Attribute => Frame::Attribute(pairs(items)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode;
    use crate::error::ProtocolError as E;

    const MAX: u64 = 512 * 1024 * 1024;

    fn dec(input: &[u8]) -> Result<Option<(Frame, usize)>, E> {
        let d = decode_frame(input, MAX);
        let l = frame_len(input, MAX);
        let d_len = d
            .as_ref()
            .map(|o| o.as_ref().map(|(_, n)| *n))
            .map_err(Clone::clone);
        assert_eq!(d_len, l, "decode/len disagree");
        d
    }

    fn all_frames() -> Vec<Frame> {
        vec![
            Frame::simple("OK"),
            Frame::simple(""),
            Frame::error("ERR unknown command"),
            Frame::error("ERR multi\r\nline"),
            Frame::Integer(0),
            Frame::Integer(i64::MIN),
            Frame::Integer(i64::MAX),
            Frame::bulk(&b""[..]),
            Frame::bulk(&b"binary\r\n\0\xff"[..]),
            Frame::Null,
            Frame::Array(vec![]),
            Frame::Array(vec![Frame::Integer(1), Frame::bulk("two"), Frame::Null]),
            Frame::Map(vec![
                (Frame::simple("a"), Frame::Integer(1)),
                (Frame::bulk("b"), Frame::Array(vec![Frame::Boolean(false)])),
            ]),
            Frame::Map(vec![]),
            Frame::Set(vec![Frame::bulk("x"), Frame::bulk("y")]),
            Frame::Push(vec![
                Frame::bulk("message"),
                Frame::bulk("ch"),
                Frame::bulk("hi"),
            ]),
            Frame::Double(1.5),
            Frame::Double(0.1),
            Frame::Double(-1e300),
            Frame::Double(5e-324),
            Frame::Double(f64::INFINITY),
            Frame::Double(f64::NEG_INFINITY),
            Frame::Boolean(true),
            Frame::Boolean(false),
            Frame::BigNumber("3492890328409238509324850943850943825024385".into()),
            Frame::BigNumber("-1".into()),
            Frame::Verbatim {
                format: *b"txt",
                text: "Some string".into(),
            },
            Frame::Verbatim {
                format: *b"mkd",
                text: "".into(),
            },
            Frame::Attribute(vec![(Frame::simple("key-popularity"), Frame::Double(0.5))]),
            Frame::Array(vec![Frame::Array(vec![Frame::Set(vec![Frame::Map(
                vec![],
            )])])]),
        ]
    }

    #[test]
    fn round_trip_every_type() {
        for f in all_frames() {
            let mut wire = Vec::new();
            encode::frame(&mut wire, &f);
            assert_eq!(dec(&wire), Ok(Some((f.clone(), wire.len()))), "{f:?}");
            // With trailing bytes the length is still that of the first frame.
            wire.extend_from_slice(b"+next\r\n");
            assert_eq!(dec(&wire).unwrap().unwrap().1, wire.len() - 7);
        }
    }

    #[test]
    fn nan_round_trips_as_nan() {
        let (f, _) = dec(b",nan\r\n").unwrap().unwrap();
        assert!(matches!(f, Frame::Double(d) if d.is_nan()));
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let mut wire = Vec::new();
        for f in all_frames() {
            encode::frame(&mut wire, &f);
        }
        // Decode the whole stream frame by frame, and every strict prefix of each frame.
        let mut off = 0;
        let mut seen = 0;
        while off < wire.len() {
            let (_, n) = dec(&wire[off..]).unwrap().unwrap();
            for end in off..off + n {
                assert_eq!(
                    dec(&wire[off..end]),
                    Ok(None),
                    "prefix {} of frame {seen}",
                    end - off
                );
            }
            off += n;
            seen += 1;
        }
        assert_eq!(seen, all_frames().len());
    }

    #[test]
    fn resp2_forms() {
        assert_eq!(dec(b"$-1\r\n"), Ok(Some((Frame::Null, 5))));
        assert_eq!(dec(b"*-1\r\n"), Ok(Some((Frame::Null, 5))));
        let wire = b"*2\r\n$3\r\nfoo\r\n*-1\r\n";
        let want = Frame::Array(vec![Frame::bulk("foo"), Frame::Null]);
        assert_eq!(dec(wire), Ok(Some((want, wire.len()))));
    }

    #[test]
    fn attributes() {
        let wire = b"|1\r\n+ttl\r\n:5\r\n:42\r\n";
        let attr = Frame::Attribute(vec![(Frame::simple("ttl"), Frame::Integer(5))]);
        assert_eq!(dec(wire), Ok(Some((attr, 14))));
        assert_eq!(dec(&wire[14..]), Ok(Some((Frame::Integer(42), 5))));
        // Nested: dropped, not counted.
        let wire = b"*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n|0\r\n:2\r\n";
        let want = Frame::Array(vec![Frame::Integer(1), Frame::Integer(2)]);
        assert_eq!(dec(wire), Ok(Some((want.clone(), wire.len()))));
        let mut again = Vec::new();
        encode::frame(&mut again, &want);
        assert_eq!(dec(&again), Ok(Some((want, again.len()))));
        assert_eq!(dec(b"*1\r\n|1\r\n+a\r\n+b\r\n"), Ok(None));
    }

    #[test]
    fn malformed_replies() {
        let long_short_line = [b":".as_slice(), &[b'1'; MAX_SHORT_LINE + 1]].concat();
        let table: Vec<(&[u8], E)> = vec![
            (b"?x\r\n", E::UnknownType(b'?')),
            (b"\r\n", E::UnknownType(b'\r')),
            (b"+OK\n", E::InvalidFrame("bare LF in line")),
            (b"+OK\rX", E::InvalidFrame("CR not followed by LF")),
            (b":12a\r\n", E::InvalidFrame("bad integer")),
            (b":+1\r\n", E::InvalidFrame("bad integer")),
            (b"$-2\r\n", E::InvalidFrame("bad length")),
            (b"$abc\r\n", E::InvalidFrame("bad length")),
            (b"$?\r\n", E::InvalidFrame("bad length")),
            (
                b"$3\r\nfooXY",
                E::InvalidFrame("payload not followed by CRLF"),
            ),
            (b"*-2\r\n", E::InvalidFrame("bad aggregate length")),
            (b"%-1\r\n", E::InvalidFrame("bad aggregate length")),
            (b"*?\r\n", E::InvalidFrame("bad aggregate length")),
            (b"#x\r\n", E::InvalidFrame("bad boolean")),
            (b"_x\r\n", E::InvalidFrame("bad null")),
            (b",1.5x\r\n", E::InvalidFrame("bad double")),
            (b",\r\n", E::InvalidFrame("bad double")),
            (b"(12a\r\n", E::InvalidFrame("bad big number")),
            (b"(-\r\n", E::InvalidFrame("bad big number")),
            (
                b"=3\r\ntxt\r\n",
                E::InvalidFrame("verbatim string without format"),
            ),
            (
                b"=4\r\ntxt!\r\n",
                E::InvalidFrame("verbatim string without format"),
            ),
            (b"!-1\r\n", E::InvalidFrame("bad length")),
            (b"*2\r\n:1\r\n:x\r\n", E::InvalidFrame("bad integer")),
            (&long_short_line, E::InvalidFrame("line too long")),
        ];
        for (input, want) in table {
            assert_eq!(
                dec(input),
                Err(want),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        // Bulk limit.
        assert_eq!(
            decode_frame(b"$4\r\n", 3),
            Err(E::InvalidFrame("bulk length over limit"))
        );
        assert_eq!(
            frame_len(b"+abcd", 3),
            Err(E::InvalidFrame("line too long"))
        );
        assert_eq!(frame_len(b"+abc", 3), Ok(None));
    }

    #[test]
    fn nesting_limit() {
        let mut ok = "*1\r\n".repeat(MAX_DEPTH).into_bytes();
        ok.extend_from_slice(b":1\r\n");
        let (f, n) = dec(&ok).unwrap().unwrap();
        assert_eq!(n, ok.len());
        // Dropping a 512-deep frame is fine.
        drop(f);
        let mut deep = "*1\r\n".repeat(MAX_DEPTH + 1).into_bytes();
        deep.extend_from_slice(b":1\r\n");
        assert_eq!(dec(&deep), Err(E::NestingTooDeep));
        // Even when only the headers have arrived, and with millions of them.
        let huge = "*1\r\n".repeat(1_000_000).into_bytes();
        assert_eq!(dec(&huge), Err(E::NestingTooDeep));
        // Empty aggregates do not open a level.
        let mut flat = "*1\r\n".repeat(MAX_DEPTH).into_bytes();
        flat.extend_from_slice(b"*0\r\n");
        assert!(dec(&flat).unwrap().is_some());
    }

    #[test]
    fn huge_claimed_lengths_do_not_allocate() {
        assert_eq!(dec(b"*9223372036854775807\r\n:1\r\n"), Ok(None));
        assert_eq!(dec(b"%9223372036854775807\r\n"), Ok(None));
        assert_eq!(dec(b"$536870912\r\nabc"), Ok(None));
        assert_eq!(
            decode_frame(b"$9223372036854775807\r\n", u64::MAX),
            Ok(None),
            "a length near i64::MAX must not overflow"
        );
    }
}
