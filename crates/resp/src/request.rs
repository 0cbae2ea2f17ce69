//! Server-side request parsing: [`RequestParser`] turns the bytes a client sent into one request's
//! arguments at a time, for both multibulk (`*N\r\n$len\r\n...`) and inline (`SET a b\n`)
//! requests, with Redis 7.0's limits, quirks and error texts.
//!
//! The parser is resumable: when a request is incomplete it remembers how far it got, so a request
//! that arrives in many pieces is parsed in time linear in its size. Arguments of multibulk
//! requests are returned as slices of the caller's buffer (no copying); inline arguments, which
//! need unescaping, live in a scratch buffer the parser reuses. In steady state nothing is
//! allocated per request. A multibulk request already whole in the buffer, with short
//! length lines (nearly every request), is read in one pass without the resumable state
//! (`parse_whole`); anything else takes the general path, which reads it the same.
//!
//! Deliberate differences from Redis 7.0, all at the edges:
//! * Line-length limits are applied to the bytes of the line itself, not to whatever happens to be
//!   buffered: a `*N` / `$len` line whose `\r` is more than `max_inline_len` bytes after its start
//!   (or an inline line whose `\n` is) is an error even if the terminator arrived in the same read.
//!   Redis's outcome there depends on how the bytes were split into reads; ours is the outcome
//!   Redis gives when they trickle in, and it does not depend on chunking.
//! * A NUL byte is an ordinary byte. Redis scans with C string functions, so a NUL before the
//!   terminator makes it wait for more data, and a NUL inside an inline line ends the line.

use crate::error::ProtocolError;
use crate::int::parse_i64;

/// Default `proto-max-bulk-len`: 512 MiB.
pub const DEFAULT_MAX_BULK_LEN: u64 = 512 * 1024 * 1024;
/// Redis's `PROTO_INLINE_MAX_SIZE`: 64 KiB.
pub const DEFAULT_MAX_INLINE_LEN: usize = 64 * 1024;
/// Largest `*N` accepted before authentication.
pub const UNAUTHENTICATED_MAX_ARGS: i64 = 10;
/// Largest `$len` accepted before authentication.
pub const UNAUTHENTICATED_MAX_BULK_LEN: i64 = 16384;

/// After a request with more arguments than this, the argument table is shrunk back.
const SPANS_RETAIN: usize = 8192;

/// Limits applied by [`RequestParser`]; the server may change them between requests (e.g. after
/// AUTH or CONFIG SET) through [`RequestParser::limits_mut`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// `proto-max-bulk-len`: the largest `$len` accepted. Default 512 MiB.
    pub max_bulk_len: u64,
    /// The longest inline request line, and the longest `*N` / `$len` line. Default 64 KiB.
    pub max_inline_len: usize,
    /// When true (the connection must still authenticate), `*N` with `N > 10` fails with
    /// [`ProtocolError::UnauthenticatedMultibulkLength`] and `$len` with `len > 16384` with
    /// [`ProtocolError::UnauthenticatedBulkLength`].
    pub unauthenticated: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: DEFAULT_MAX_BULK_LEN,
            max_inline_len: DEFAULT_MAX_INLINE_LEN,
            unauthenticated: false,
        }
    }
}

/// Where the parser stopped inside the current (incomplete) request. All offsets are relative to
/// the start of `input`, which the caller keeps unchanged until the request completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No byte of the current request has been looked at.
    Idle,
    /// Inline request: no `\n` in `input[..scanned]`.
    Inline { scanned: usize },
    /// `*N` line: no `\r` in `input[1..scanned]`.
    Count { scanned: usize },
    /// Inside a multibulk request: `remaining` arguments to go, the next unparsed byte at `pos`.
    Args {
        pos: usize,
        remaining: u64,
        /// `Some(len)` once the `$len` line of the next argument has been parsed.
        bulk: Option<usize>,
        /// No `\r` in `input[pos..scanned]` (while `bulk` is `None`).
        scanned: usize,
    },
}

/// Outcome of looking for a line terminator.
enum Scan {
    Found(usize),
    /// Not found yet; everything before the offset has been searched.
    Pending(usize),
    TooLong,
}

/// The fast path for the short length lines that make up most requests (`*3\r\n`,
/// `$5\r\n`): the marker byte at `start`, then 1 to 18 digits with no leading zero (or a
/// lone `0`), then `\r` and one more byte (Redis needs the byte after the `\r` before it
/// goes on). Returns the value and the offset of the `\r`. Anything else, including a
/// line that is merely incomplete, returns None and takes the general path (`scan_line`
/// and `parse_i64`), which gives the same result for every line accepted here: this
/// only skips the `memchr` call and the second pass over the digits.
#[inline]
fn short_length(input: &[u8], start: usize, max_line: usize) -> Option<(i64, usize)> {
    // 18 digits cannot overflow; a line limit set below them sends every line the long way.
    const MAX_DIGITS: usize = 18;
    if max_line <= MAX_DIGITS + 1 {
        return None;
    }
    let line = input.get(start + 1..)?;
    // One or two digits (nearly every count and argument length): read directly, the
    // same checks as the loop below (no leading zero but a lone `0`, then `\r`, then
    // one more byte).
    if let [d0, b1, b2, rest @ ..] = line {
        let d0 = d0.wrapping_sub(b'0');
        if d0 <= 9 && *b1 == b'\r' {
            return Some((i64::from(d0), start + 2));
        }
        let d1 = b1.wrapping_sub(b'0');
        if (1..=9).contains(&d0) && d1 <= 9 && *b2 == b'\r' && !rest.is_empty() {
            return Some((i64::from(d0 * 10 + d1), start + 3));
        }
    }
    let mut value: i64 = 0;
    let mut digits = 0;
    for &c in line.iter().take(MAX_DIGITS) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        value = value * 10 + i64::from(d);
        digits += 1;
    }
    // Then the '\r' and one more byte; a leading zero only as the lone digit.
    let well_formed = digits > 0 && (digits == 1 || line[0] != b'0') && line.get(digits) == Some(&b'\r');
    (well_formed && digits + 1 < line.len()).then_some((value, start + 1 + digits))
}

/// A short length line's number for [`RequestParser::parse_whole`]: 1 to 9 digits at
/// `at` (no leading zero but a lone `0`), then `\r` and one more byte. Returns the
/// value and the offset after those two bytes; None for anything else.
#[inline(always)]
fn short_number(input: &[u8], at: usize) -> Option<(u64, usize)> {
    // One or two digits (nearly every count and argument length) read directly.
    let [c0, c1, c2, ..] = *input.get(at..)? else { return None };
    let d0 = c0.wrapping_sub(b'0');
    if d0 > 9 {
        return None;
    }
    if c1 == b'\r' {
        // c2 is the byte after the '\r'.
        return Some((u64::from(d0), at + 3));
    }
    let d1 = c1.wrapping_sub(b'0');
    if d0 == 0 || d1 > 9 {
        return None;
    }
    if c2 == b'\r' {
        return (input.len() > at + 3).then_some((u64::from(d0 * 10 + d1), at + 3 + 1));
    }
    short_number_long(input, at)
}

/// [`short_number`] for 3 to 9 digits.
fn short_number_long(input: &[u8], at: usize) -> Option<(u64, usize)> {
    let line = &input[at..];
    // No leading zero (Redis's string2ll refuses one: the general path's error).
    if line.first() == Some(&b'0') {
        return None;
    }
    let mut value = 0u64;
    let mut i = 0;
    while i < 9 {
        let d = line.get(i)?.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        value = value * 10 + u64::from(d);
        i += 1;
    }
    // A tenth digit, or anything but '\r', is not a short line; the byte after the '\r'
    // must be there too (Redis reads it before it goes on).
    (line.get(i) == Some(&b'\r') && i + 1 < line.len()).then_some((value, at + i + 2))
}

/// Looks for `needle` in the line starting at `start`, resuming at `from`. The terminator must be
/// at most `max` bytes after `start` (so the line's content is at most `max` bytes).
fn scan_line(input: &[u8], start: usize, from: usize, max: usize, needle: u8) -> Scan {
    let limit = start.saturating_add(max).saturating_add(1);
    let window_end = input.len().min(limit);
    let from = from.max(start);
    if from < window_end {
        if let Some(i) = memchr::memchr(needle, &input[from..window_end]) {
            return Scan::Found(from + i);
        }
    }
    if window_end == limit {
        Scan::TooLong
    } else {
        Scan::Pending(window_end.max(from))
    }
}

/// Resumable parser for the requests of one connection.
///
/// Usage: call [`parse`](Self::parse) with the unconsumed bytes. On `Ok(Some(n))` the request
/// occupies `input[..n]`; read its arguments with [`argc`](Self::argc) and [`arg`](Self::arg),
/// then drop `n` bytes. On `Ok(None)` read more and call again with the same start. On `Err`, reply
/// `-ERR Protocol error: {err}` and close the connection.
///
/// ```
/// use resp::{Limits, RequestParser};
///
/// let mut parser = RequestParser::new(Limits::default());
/// let mut buf = b"*2\r\n$3\r\nGET\r\n$1".to_vec();
/// assert_eq!(parser.parse(&buf), Ok(None)); // incomplete: read more, keep the same start
/// buf.extend_from_slice(b"\r\nk\r\nPING\r\n");
/// let n = parser.parse(&buf).unwrap().unwrap();
/// assert_eq!(parser.argc(), 2);
/// assert_eq!(parser.arg(&buf, 0), b"GET");
/// assert_eq!(parser.arg(&buf, 1), b"k");
/// buf.drain(..n); // consume the request, then parse the next one (inline here)
/// assert_eq!(parser.parse(&buf), Ok(Some(6)));
/// assert_eq!(parser.arg(&buf, 0), b"PING");
/// ```
#[derive(Debug)]
pub struct RequestParser {
    limits: Limits,
    state: State,
    /// Length of the input at the last `Ok(None)`, to detect a caller that restarted.
    seen: usize,
    /// `(start, end)` of each argument, in `input` (multibulk) or in `scratch` (inline).
    spans: Vec<(usize, usize)>,
    inline: bool,
    scratch: Vec<u8>,
    hint: Option<usize>,
    /// Of the last request parsed, when it was found whole by `parse_whole`: where its
    /// count line ends (0: not found so), for [`is_canonical`](Self::is_canonical).
    whole_count_end: usize,
}

impl RequestParser {
    /// A parser with the given limits and no request in progress.
    pub fn new(limits: Limits) -> Self {
        RequestParser {
            limits,
            state: State::Idle,
            seen: 0,
            spans: Vec::new(),
            inline: false,
            scratch: Vec::new(),
            hint: None,
            whole_count_end: 0,
        }
    }

    /// The limits in force; changes apply from the next [`parse`](Self::parse) call on.
    pub fn limits_mut(&mut self) -> &mut Limits {
        &mut self.limits
    }

    /// Parses the next request from `input`, which starts at the first byte the caller has not
    /// consumed.
    ///
    /// If the previous call returned `Ok(None)`, `input` must be the same bytes again with more
    /// appended (same start); the parser resumes where it stopped instead of rescanning. (If
    /// `input` is shorter than last time the parser assumes the caller started over.)
    ///
    /// * `Ok(Some(n))`: one complete request occupies `input[..n]` (`n >= 1`); its arguments are
    ///   readable through [`argc`](Self::argc) / [`arg`](Self::arg) until the next call. A request
    ///   may have zero arguments (a blank inline line, `*0\r\n`, `*-1\r\n`): just skip `n` bytes.
    /// * `Ok(None)`: the request is incomplete.
    /// * `Err(e)`: a protocol error; the parser is reset, the connection should be closed.
    pub fn parse(&mut self, input: &[u8]) -> Result<Option<usize>, ProtocolError> {
        if input.len() < self.seen {
            self.state = State::Idle;
        }
        self.hint = None;
        self.whole_count_end = 0;
        let result = match self.state {
            State::Idle => {
                let Some(&first) = input.first() else {
                    self.seen = 0;
                    return Ok(None);
                };
                self.begin_request();
                if first == b'*' {
                    match self.parse_whole(input) {
                        Some(end) => Ok(Some(end)),
                        None => {
                            self.spans.clear();
                            self.parse_count(input, 1)
                        }
                    }
                } else {
                    self.parse_inline(input, 0)
                }
            }
            State::Inline { scanned } => self.parse_inline(input, scanned),
            State::Count { scanned } => self.parse_count(input, scanned),
            State::Args {
                pos,
                remaining,
                bulk,
                scanned,
            } => self.parse_args(input, pos, remaining, bulk, scanned),
        };
        match result {
            Ok(Some(_)) | Err(_) => {
                self.state = State::Idle;
                self.seen = 0;
            }
            Ok(None) => self.seen = input.len(),
        }
        if result.is_err() {
            self.spans.clear();
        }
        result
    }

    /// Of a multibulk request in progress (the last [`parse`](Self::parse) returned
    /// `Ok(None)`): the bytes of it consumed so far (its count line, its complete
    /// arguments and the length line of the one being read) and the total length of its
    /// complete arguments. Redis's CLIENT LIST shows such a request as `qbuf` (the rest)
    /// and `argv-mem` (the arguments). (0, 0) otherwise.
    pub fn progress(&self) -> (usize, usize) {
        match self.state {
            State::Args { pos, .. } => (pos, self.spans.iter().map(|(s, e)| e - s).sum()),
            _ => (0, 0),
        }
    }

    /// Whether the last request parsed (`Ok(Some(_))`, from `input`) is a multibulk
    /// request whose bytes are exactly the canonical encoding of its arguments (`*<n>`,
    /// then `$<len>` and the data of each, every line ending in CRLF, no leading zeros),
    /// as clients send them: those bytes can then stand for the command in the
    /// replication stream. Answered for requests found whole in the buffer with short
    /// length lines (the common case), false for others; looked at only when asked, so
    /// that parsing pays nothing for it. (The numbers have no leading zero there; Redis
    /// skips the byte after each '\r' and the two after each argument unchecked: those
    /// are checked here.)
    pub fn is_canonical(&self, input: &[u8]) -> bool {
        let count_end = self.whole_count_end;
        count_end > 0
            && input.get(count_end - 1) == Some(&b'\n')
            && self.spans.iter().all(|&(data, end)| input.get(data - 1) == Some(&b'\n') && input.get(end..end + 2) == Some(&b"\r\n"[..]))
    }

    /// Number of arguments of the last complete request (meaningful after `Ok(Some(_))`).
    pub fn argc(&self) -> usize {
        self.spans.len()
    }

    /// Argument `i` of the last complete request: a slice of `input` (which must be the buffer
    /// passed to the `parse` call that returned `Ok(Some(_))`) for multibulk requests, or of the
    /// parser's scratch buffer for inline ones.
    ///
    /// # Panics
    /// If `i >= self.argc()`, or if `input` is shorter than the parsed request.
    pub fn arg<'a>(&'a self, input: &'a [u8], i: usize) -> &'a [u8] {
        let (start, end) = self.spans[i];
        if self.inline {
            &self.scratch[start..end]
        } else {
            &input[start..end]
        }
    }

    /// Iterates over the arguments of the last complete request (see [`arg`](Self::arg)).
    pub fn args<'a>(&'a self, input: &'a [u8]) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        (0..self.argc()).map(move |i| self.arg(input, i))
    }

    /// After `Ok(None)`: how many more bytes the current request needs at least, when known (while
    /// inside a bulk argument whose length has been read). A hint for buffer reservation.
    pub fn bytes_hint(&self) -> Option<usize> {
        self.hint
    }

    fn begin_request(&mut self) {
        if self.spans.capacity() > SPANS_RETAIN {
            self.spans = Vec::new();
        }
        self.spans.clear();
        self.scratch.clear();
        self.inline = false;
    }

    /// The fast path for a whole multibulk request already in `input` whose count and
    /// length lines are short (1 to 9 digits, no leading zero but a lone `0`) and within
    /// every limit: one pass with no state kept, returning the request's end. Anything
    /// else (an incomplete request, a long or odd line, a limit reached, `*0`) returns
    /// None, and the general path (`parse_count`), which gives the same result for every
    /// request accepted here, starts over. Nearly every request a client sends is whole
    /// in one read: this path costs about a third of the general one's instructions.
    #[inline]
    fn parse_whole(&mut self, input: &[u8]) -> Option<usize> {
        // The same condition as `short_length`'s: a line limit this low sends every line
        // the long way (the tests use it to compare the two paths).
        if self.limits.max_inline_len <= 19 {
            return None;
        }
        let (n, mut pos) = short_number(input, 1)?;
        let count_end = pos;
        let max_args = if self.limits.unauthenticated { UNAUTHENTICATED_MAX_ARGS as u64 } else { u64::MAX };
        let max_bulk = if self.limits.unauthenticated {
            self.limits.max_bulk_len.min(UNAUTHENTICATED_MAX_BULK_LEN as u64)
        } else {
            self.limits.max_bulk_len
        };
        if n == 0 || n > max_args {
            return None;
        }
        for _ in 0..n {
            if input.get(pos) != Some(&b'$') {
                return None;
            }
            let (len, data) = short_number(input, pos + 1)?;
            if len > max_bulk {
                return None;
            }
            let end = data + len as usize;
            // The data is followed by two bytes Redis skips without checking.
            if end + 2 > input.len() {
                return None;
            }
            self.spans.push((data, end));
            pos = end + 2;
        }
        self.whole_count_end = count_end;
        Some(pos)
    }

    fn parse_count(
        &mut self,
        input: &[u8],
        scanned: usize,
    ) -> Result<Option<usize>, ProtocolError> {
        let max = self.limits.max_inline_len;
        let (n, cr) = match short_length(input, 0, max) {
            Some(found) => found,
            None => {
                let cr = match scan_line(input, 0, scanned, max, b'\r') {
                    Scan::Found(i) => i,
                    Scan::Pending(s) => {
                        self.state = State::Count { scanned: s };
                        return Ok(None);
                    }
                    Scan::TooLong => return Err(ProtocolError::TooBigMultibulkCount),
                };
                // Redis needs one more byte (meant to be '\n', not checked) after the '\r'.
                if cr + 1 >= input.len() {
                    self.state = State::Count { scanned: cr };
                    return Ok(None);
                }
                (parse_i64(&input[1..cr]).ok_or(ProtocolError::InvalidMultibulkLength)?, cr)
            }
        };
        if n > i64::from(i32::MAX) {
            return Err(ProtocolError::InvalidMultibulkLength);
        }
        if self.limits.unauthenticated && n > UNAUTHENTICATED_MAX_ARGS {
            return Err(ProtocolError::UnauthenticatedMultibulkLength);
        }
        let pos = cr + 2;
        if n <= 0 {
            return Ok(Some(pos));
        }
        self.spans.reserve((n as usize).min(1024));
        self.parse_args(input, pos, n as u64, None, pos)
    }

    fn parse_args(
        &mut self,
        input: &[u8],
        mut pos: usize,
        mut remaining: u64,
        mut bulk: Option<usize>,
        mut scanned: usize,
    ) -> Result<Option<usize>, ProtocolError> {
        loop {
            match bulk {
                None => {
                    let max = self.limits.max_inline_len;
                    let fast = match input.get(pos) {
                        Some(b'$') => short_length(input, pos, max),
                        _ => None,
                    };
                    let (len, cr) = match fast {
                        Some(found) => found,
                        None => {
                            let cr = match scan_line(input, pos, scanned, max, b'\r') {
                                Scan::Found(i) => i,
                                Scan::Pending(s) => {
                                    self.state = State::Args {
                                        pos,
                                        remaining,
                                        bulk,
                                        scanned: s,
                                    };
                                    return Ok(None);
                                }
                                Scan::TooLong => return Err(ProtocolError::TooBigBulkCount),
                            };
                            if cr + 1 >= input.len() {
                                self.state = State::Args {
                                    pos,
                                    remaining,
                                    bulk,
                                    scanned: cr,
                                };
                                return Ok(None);
                            }
                            if input[pos] != b'$' {
                                return Err(ProtocolError::ExpectedDollar(input[pos]));
                            }
                            (parse_i64(&input[pos + 1..cr]).ok_or(ProtocolError::InvalidBulkLength)?, cr)
                        }
                    };
                    if len < 0 || len as u64 > self.limits.max_bulk_len {
                        return Err(ProtocolError::InvalidBulkLength);
                    }
                    if self.limits.unauthenticated && len > UNAUTHENTICATED_MAX_BULK_LEN {
                        return Err(ProtocolError::UnauthenticatedBulkLength);
                    }
                    let len = usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?;
                    pos = cr + 2;
                    bulk = Some(len);
                }
                Some(len) => {
                    // The data is followed by two bytes Redis skips without checking.
                    let end = pos.saturating_add(len);
                    let next = end.saturating_add(2);
                    if next > input.len() {
                        self.state = State::Args {
                            pos,
                            remaining,
                            bulk,
                            scanned: pos,
                        };
                        self.hint = Some(next - input.len());
                        return Ok(None);
                    }
                    self.spans.push((pos, end));
                    pos = next;
                    scanned = next;
                    bulk = None;
                    remaining -= 1;
                    if remaining == 0 {
                        return Ok(Some(pos));
                    }
                }
            }
        }
    }

    fn parse_inline(
        &mut self,
        input: &[u8],
        scanned: usize,
    ) -> Result<Option<usize>, ProtocolError> {
        let max = self.limits.max_inline_len;
        let lf = match scan_line(input, 0, scanned, max, b'\n') {
            Scan::Found(i) => i,
            Scan::Pending(s) => {
                self.state = State::Inline { scanned: s };
                return Ok(None);
            }
            Scan::TooLong => return Err(ProtocolError::TooBigInline),
        };
        let mut line = &input[..lf];
        if let Some((b'\r', rest)) = line.split_last() {
            line = rest;
        }
        self.inline = true;
        split_args(line, &mut self.scratch, &mut self.spans)?;
        Ok(Some(lf + 1))
    }
}

impl Default for RequestParser {
    fn default() -> Self {
        RequestParser::new(Limits::default())
    }
}

/// C's `isspace` in the "C" locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Double,
    Single,
}

/// Splits an inline request line into arguments with the rules of Redis's `sdssplitargs`,
/// appending their bytes to `scratch` and their `(start, end)` to `spans`.
///
/// * Arguments are separated by whitespace; leading whitespace is any C `isspace` byte, while an
///   unquoted argument ends only at space, tab, `\r` or `\n`.
/// * A `"` anywhere in an unquoted argument opens a double-quoted section: `\n \r \t \b \a`,
///   `\xHH` (two hex digits) and `\<any>` (that byte) are escapes.
/// * A `'` opens a single-quoted section where only `\'` is an escape.
/// * A closing quote must be followed by whitespace or the end of the line, and an unterminated
///   quote is an error; both give [`ProtocolError::UnbalancedQuotes`].
fn split_args(
    line: &[u8],
    scratch: &mut Vec<u8>,
    spans: &mut Vec<(usize, usize)>,
) -> Result<(), ProtocolError> {
    let n = line.len();
    let mut i = 0;
    loop {
        while i < n && is_space(line[i]) {
            i += 1;
        }
        if i >= n {
            return Ok(());
        }
        let start = scratch.len();
        let mut quote = Quote::None;
        loop {
            match quote {
                Quote::None => match line.get(i) {
                    None | Some(b' ' | b'\t' | b'\r' | b'\n') => break,
                    Some(b'"') => {
                        quote = Quote::Double;
                        i += 1;
                    }
                    Some(b'\'') => {
                        quote = Quote::Single;
                        i += 1;
                    }
                    Some(&c) => {
                        scratch.push(c);
                        i += 1;
                    }
                },
                Quote::Double => match line.get(i) {
                    None => return Err(ProtocolError::UnbalancedQuotes),
                    Some(b'\\') if i + 1 < n => {
                        let hex = match (line[i + 1], line.get(i + 2), line.get(i + 3)) {
                            (b'x', Some(&h), Some(&l)) => hex_value(h).zip(hex_value(l)),
                            _ => None,
                        };
                        if let Some((h, l)) = hex {
                            scratch.push(h << 4 | l);
                            i += 4;
                        } else {
                            scratch.push(match line[i + 1] {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 0x08,
                                b'a' => 0x07,
                                c => c,
                            });
                            i += 2;
                        }
                    }
                    Some(b'"') => {
                        close_quote(line, i)?;
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        scratch.push(c);
                        i += 1;
                    }
                },
                Quote::Single => match line.get(i) {
                    None => return Err(ProtocolError::UnbalancedQuotes),
                    Some(b'\\') if line.get(i + 1) == Some(&b'\'') => {
                        scratch.push(b'\'');
                        i += 2;
                    }
                    Some(b'\'') => {
                        close_quote(line, i)?;
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        scratch.push(c);
                        i += 1;
                    }
                },
            }
        }
        spans.push((start, scratch.len()));
    }
}

/// A closing quote at `i` must be followed by whitespace or the end of the line.
fn close_quote(line: &[u8], i: usize) -> Result<(), ProtocolError> {
    match line.get(i + 1) {
        Some(&c) if !is_space(c) => Err(ProtocolError::UnbalancedQuotes),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_request_is_canonical_only_in_the_form_clients_send() {
        let mut p = RequestParser::new(Limits::default());
        fn canonical(p: &mut RequestParser, raw: &[u8]) -> bool {
            assert_eq!(p.parse(raw).unwrap(), Some(raw.len()), "{raw:?}");
            p.is_canonical(raw)
        }
        assert!(canonical(&mut p, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"));
        assert!(canonical(&mut p, b"*1\r\n$100\r\n0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\r\n"));
        // (A length with a leading zero is a protocol error, as in Redis.)
        assert!(p.parse(b"*1\r\n$03\r\nGET\r\n").is_err());
        assert!(!canonical(&mut p, b"*1\r\n$3\r\nGETxx"), "data followed by other bytes");
        assert!(!canonical(&mut p, b"*1\r\n$3\rxGET\r\n"), "a length line not ended by CRLF");
        assert!(!canonical(&mut p, b"*1\rx$3\r\nGET\r\n"), "a count line not ended by CRLF");
        assert!(!canonical(&mut p, b"GET k\r\n"), "inline");
        assert!(canonical(&mut p, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"));
    }
    use super::*;
    use crate::error::ProtocolError as E;

    type Args = Vec<Vec<u8>>;

    fn args_of(p: &RequestParser, input: &[u8]) -> Args {
        p.args(input).map(<[u8]>::to_vec).collect()
    }

    /// Parses every request in `input` at once; returns the requests and how parsing ended.
    fn parse_all(limits: &Limits, input: &[u8]) -> (Vec<Args>, Result<usize, E>) {
        let mut p = RequestParser::new(limits.clone());
        let mut out = Vec::new();
        let mut off = 0;
        loop {
            match p.parse(&input[off..]) {
                Ok(Some(n)) => {
                    assert!(n >= 1 && n <= input.len() - off);
                    out.push(args_of(&p, &input[off..]));
                    off += n;
                }
                Ok(None) => return (out, Ok(off)),
                Err(e) => return (out, Err(e)),
            }
        }
    }

    /// Like `parse_all`, but the bytes become available `step` at a time.
    fn parse_chunked(limits: &Limits, input: &[u8], step: usize) -> (Vec<Args>, Result<usize, E>) {
        let mut p = RequestParser::new(limits.clone());
        let mut out = Vec::new();
        let mut off = 0;
        let mut avail = 0;
        loop {
            match p.parse(&input[off..avail]) {
                Ok(Some(n)) => {
                    out.push(args_of(&p, &input[off..avail]));
                    off += n;
                }
                Ok(None) if avail == input.len() => return (out, Ok(off)),
                Ok(None) => avail = (avail + step).min(input.len()),
                Err(e) => return (out, Err(e)),
            }
        }
    }

    fn one(input: &[u8]) -> Result<Option<(usize, Args)>, E> {
        let mut p = RequestParser::default();
        Ok(p.parse(input)?.map(|n| (n, args_of(&p, input))))
    }

    fn v(items: &[&str]) -> Args {
        items.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    #[test]
    fn multibulk_basic() {
        let input = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
        assert_eq!(
            one(input),
            Ok(Some((input.len(), v(&["SET", "key", "value"]))))
        );
    }

    #[test]
    fn multibulk_is_binary_safe() {
        let input = b"*2\r\n$3\r\nSET\r\n$6\r\na\r\n\0\xffb\r\n";
        let (n, args) = one(input).unwrap().unwrap();
        assert_eq!(n, input.len());
        assert_eq!(args, vec![b"SET".to_vec(), b"a\r\n\0\xffb".to_vec()]);
        // Empty argument.
        let input = b"*1\r\n$0\r\n\r\n";
        assert_eq!(one(input), Ok(Some((input.len(), v(&[""])))));
    }

    #[test]
    fn trailing_bytes_after_bulk_and_lines_are_not_checked() {
        // Like Redis: the 2 bytes after bulk data and the byte after '\r' are skipped unchecked.
        let input = b"*2\rX$1\r?a!!$1\r\nb\r\n";
        assert_eq!(one(input), Ok(Some((input.len(), v(&["a", "b"])))));
    }

    #[test]
    fn zero_arg_requests() {
        for input in [
            &b"*0\r\n"[..],
            b"*-1\r\n",
            b"*-5\r\n",
            b"\r\n",
            b"\n",
            b"   \t \r\n",
        ] {
            assert_eq!(one(input), Ok(Some((input.len(), vec![]))), "{input:?}");
        }
    }

    #[test]
    fn pipelined_requests() {
        let input =
            b"*1\r\n$4\r\nPING\r\nPING\r\n*0\r\n\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nECHO \"a b\"\n*1";
        let (reqs, end) = parse_all(&Limits::default(), input);
        assert_eq!(
            reqs,
            vec![
                v(&["PING"]),
                v(&["PING"]),
                v(&[]),
                v(&[]),
                v(&["GET", "k"]),
                v(&["ECHO", "a b"])
            ]
        );
        assert_eq!(end, Ok(input.len() - 2));
        for step in 1..8 {
            assert_eq!(
                parse_chunked(&Limits::default(), input, step),
                (reqs.clone(), end.clone())
            );
        }
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let streams: &[&[u8]] = &[
            b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\n0123456789\r\n",
            b"SET key \"va\\x41lue\" 'x'\r\n",
            b"*1\r\n$0\r\n\r\n",
            b"*0\r\n",
        ];
        for s in streams {
            let mut p = RequestParser::default();
            for end in 0..s.len() {
                assert_eq!(p.parse(&s[..end]), Ok(None), "prefix {end} of {s:?}");
            }
            assert_eq!(p.parse(s), Ok(Some(s.len())));
            // A fresh parser on each prefix agrees.
            for end in 0..s.len() {
                assert_eq!(RequestParser::default().parse(&s[..end]), Ok(None));
            }
        }
    }

    #[test]
    fn resume_gives_same_args_and_hint() {
        let input = b"*2\r\n$3\r\nGET\r\n$100\r\n";
        let mut full = input.to_vec();
        full.extend_from_slice(&[b'x'; 100]);
        full.extend_from_slice(b"\r\n");
        let mut p = RequestParser::default();
        assert_eq!(p.parse(input), Ok(None));
        assert_eq!(p.bytes_hint(), Some(102));
        assert_eq!(p.parse(&full[..full.len() - 1]), Ok(None));
        assert_eq!(p.bytes_hint(), Some(1));
        assert_eq!(p.parse(&full), Ok(Some(full.len())));
        assert_eq!(p.bytes_hint(), None);
        assert_eq!(p.arg(&full, 0), b"GET");
        assert_eq!(p.arg(&full, 1), &[b'x'; 100][..]);
    }

    #[test]
    fn caller_restarting_with_shorter_input_is_tolerated() {
        let mut p = RequestParser::default();
        assert_eq!(p.parse(b"*1\r\n$3\r\nfo"), Ok(None));
        assert_eq!(p.parse(b"PING\r\n"), Ok(Some(6)));
        assert_eq!(args_of(&p, b"PING\r\n"), v(&["PING"]));
    }

    #[test]
    fn big_multibulk_in_pieces_is_linear() {
        // 200k one-byte args fed 7 bytes at a time: quadratic rescanning would take minutes.
        let n = 200_000;
        let mut input = format!("*{n}\r\n").into_bytes();
        for _ in 0..n {
            input.extend_from_slice(b"$1\r\nx\r\n");
        }
        let (reqs, end) = parse_chunked(&Limits::default(), &input, 7);
        assert_eq!(end, Ok(input.len()));
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].len(), n);
        // A long inline line trickling in is linear as well.
        let mut line = vec![b'a'; 60_000];
        line.push(b'\n');
        let (reqs, _) = parse_chunked(&Limits::default(), &line, 1);
        assert_eq!(reqs[0][0].len(), 60_000);
    }

    #[test]
    fn malformed_requests() {
        let big_inline = vec![b'a'; DEFAULT_MAX_INLINE_LEN + 1];
        let mut big_count = b"*".to_vec();
        big_count.extend_from_slice(&[b'1'; DEFAULT_MAX_INLINE_LEN]);
        let mut big_bulk_line = b"*1\r\n$".to_vec();
        big_bulk_line.extend_from_slice(&[b'1'; DEFAULT_MAX_INLINE_LEN]);
        let table: Vec<(&[u8], E)> = vec![
            (b"*abc\r\n", E::InvalidMultibulkLength),
            (b"*\r\n", E::InvalidMultibulkLength),
            (b"*01\r\n", E::InvalidMultibulkLength),
            (b"*+1\r\n", E::InvalidMultibulkLength),
            (b"*1 \r\n", E::InvalidMultibulkLength),
            (b"*2147483648\r\n", E::InvalidMultibulkLength),
            (b"*99999999999999999999\r\n", E::InvalidMultibulkLength),
            (b"*1\r\n$-5\r\n", E::InvalidBulkLength),
            (b"*1\r\n$-1\r\n", E::InvalidBulkLength),
            (b"*1\r\n$abc\r\n", E::InvalidBulkLength),
            (b"*1\r\n$\r\n", E::InvalidBulkLength),
            (b"*1\r\n$536870913\r\n", E::InvalidBulkLength),
            (b"*1\r\n:3\r\n", E::ExpectedDollar(b':')),
            (b"*1\r\nfoo\r\n", E::ExpectedDollar(b'f')),
            (b"*2\r\n$1\r\na\r\n\r\n\r\n", E::ExpectedDollar(b'\r')),
            (&big_inline, E::TooBigInline),
            (&big_count, E::TooBigMultibulkCount),
            (&big_bulk_line, E::TooBigBulkCount),
            (b"SET a \"b\n", E::UnbalancedQuotes),
            (b"SET a \"b\"c\n", E::UnbalancedQuotes),
            (b"SET a 'b\r\n", E::UnbalancedQuotes),
            (b"SET a 'b'c\r\n", E::UnbalancedQuotes),
            (b"SET a \"b\\\"\n", E::UnbalancedQuotes),
        ];
        for (input, want) in table {
            let (_, got) = parse_all(&Limits::default(), input);
            assert_eq!(
                got,
                Err(want.clone()),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn line_limits_are_inclusive_at_max() {
        let limits = Limits {
            max_inline_len: 8,
            ..Limits::default()
        };
        let (reqs, end) = parse_all(&limits, b"abcd efg\n");
        assert_eq!((reqs, end), (vec![v(&["abcd", "efg"])], Ok(9)));
        assert_eq!(parse_all(&limits, b"abcd efgh\n").1, Err(E::TooBigInline));
        assert_eq!(parse_all(&limits, b"abcd efgh").1, Err(E::TooBigInline));
        assert_eq!(parse_all(&limits, b"abcd efg").1, Ok(0));
        // "*" plus 7 digits: '\r' at offset 8 is fine; one more digit is not.
        assert_eq!(
            parse_all(&limits, b"*0000000\r\n").1,
            Err(E::InvalidMultibulkLength)
        );
        assert_eq!(
            parse_all(&limits, b"*00000000\r\n").1,
            Err(E::TooBigMultibulkCount)
        );
        assert_eq!(
            parse_all(&limits, b"*1\r\n$0000000\r\n").1,
            Err(E::InvalidBulkLength)
        );
        assert_eq!(
            parse_all(&limits, b"*1\r\n$00000000\r\n").1,
            Err(E::TooBigBulkCount)
        );
        // The bulk data itself is not limited by max_inline_len.
        let (reqs, _) = parse_all(&limits, b"*1\r\n$20\r\n01234567890123456789\r\n");
        assert_eq!(reqs, vec![v(&["01234567890123456789"])]);
    }

    #[test]
    fn bulk_limit_is_configurable() {
        let limits = Limits {
            max_bulk_len: 3,
            ..Limits::default()
        };
        assert_eq!(
            parse_all(&limits, b"*1\r\n$3\r\nabc\r\n").0,
            vec![v(&["abc"])]
        );
        assert_eq!(
            parse_all(&limits, b"*1\r\n$4\r\nabcd\r\n").1,
            Err(E::InvalidBulkLength)
        );
        let mut p = RequestParser::new(limits);
        p.limits_mut().max_bulk_len = 4;
        assert_eq!(p.parse(b"*1\r\n$4\r\nabcd\r\n"), Ok(Some(14)));
    }

    #[test]
    fn unauthenticated_limits() {
        let limits = Limits {
            unauthenticated: true,
            ..Limits::default()
        };
        assert_eq!(
            parse_all(&limits, b"*11\r\n").1,
            Err(E::UnauthenticatedMultibulkLength)
        );
        assert_eq!(
            parse_all(&limits, b"*1\r\n$16385\r\n").1,
            Err(E::UnauthenticatedBulkLength)
        );
        // Invalid beats unauthenticated.
        assert_eq!(
            parse_all(&limits, b"*2147483648\r\n").1,
            Err(E::InvalidMultibulkLength)
        );
        assert_eq!(
            parse_all(&limits, b"*1\r\n$536870913\r\n").1,
            Err(E::InvalidBulkLength)
        );
        // At the limits it is fine.
        let mut input = b"*10\r\n$16384\r\n".to_vec();
        input.extend_from_slice(&[b'z'; 16384]);
        input.extend_from_slice(b"\r\n");
        for _ in 0..9 {
            input.extend_from_slice(b"$1\r\na\r\n");
        }
        let (reqs, end) = parse_all(&limits, &input);
        assert_eq!((reqs.len(), reqs[0].len(), end), (1, 10, Ok(input.len())));
        // Negative counts are not "too many".
        assert_eq!(parse_all(&limits, b"*-100\r\n").0, vec![v(&[])]);
        // After AUTH the server lifts the limit.
        let mut p = RequestParser::new(limits);
        p.limits_mut().unauthenticated = false;
        assert_eq!(p.parse(b"*11\r\n"), Ok(None));
    }

    #[test]
    fn inline_splitting() {
        let table: &[(&[u8], &[&[u8]])] = &[
            (b"GET / HTTP/1.1\r\n", &[b"GET", b"/", b"HTTP/1.1"]),
            (b"  set   a  b  \n", &[b"set", b"a", b"b"]),
            (b"set \"a b\" 'c d'\r\n", &[b"set", b"a b", b"c d"]),
            (
                b"\"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n",
                &[b"\n\r\t\x08\x07\\\"q"],
            ),
            (b"\"\\x41\\x7a\\xzz\\x4\"\n", &[b"Azxzzx4"]),
            (b"'it\\'s' '\\n'\n", &[b"it's", b"\\n"]),
            (b"ab\"c d\"\n", &[b"abc d"]),
            (b"a'b c'\n", &[b"ab c"]),
            (b"\"\" ''\n", &[b"", b""]),
            (b"a\x0bb\n", &[b"a\x0bb"]),
            (b"\x0b\x0ca\x0c\n", &[b"a\x0c"]),
            (b"\"a\"\x0bb\n", &[b"a", b"b"]),
            (b"a\rb\r\n", &[b"a", b"b"]),
            (b"\"a\rb\"\r\n", &[b"a\rb"]),
            (b"a\0b\n", &[b"a\0b"]),
            (b"\xff\xfe\n", &[b"\xff\xfe"]),
            (b"\"a\"\r\n", &[b"a"]),
        ];
        for (input, want) in table {
            let got = one(input);
            let want: Args = want.iter().map(|a| a.to_vec()).collect();
            assert_eq!(
                got,
                Ok(Some((input.len(), want))),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn inline_then_multibulk_reuses_buffers() {
        let mut p = RequestParser::default();
        let a = b"SET k v\r\n";
        assert_eq!(p.parse(a), Ok(Some(a.len())));
        assert_eq!(args_of(&p, a), v(&["SET", "k", "v"]));
        let b = b"*1\r\n$4\r\nPING\r\n";
        assert_eq!(p.parse(b), Ok(Some(b.len())));
        assert_eq!(args_of(&p, b), v(&["PING"]));
        let c = b"GET x\n";
        assert_eq!(p.parse(c), Ok(Some(c.len())));
        assert_eq!(args_of(&p, c), v(&["GET", "x"]));
    }

    #[test]
    fn short_length_agrees_with_the_general_path_on_every_short_line() {
        // Every line of up to five bytes over digits, CR, LF, '-' and a letter: whatever
        // the fast path accepts, the general path (find the CR, parse_i64) reads the same.
        let alphabet = b"0123456789\r\n-a";
        let mut accepted = 0;
        for len in 1..=5u32 {
            for mut code in 0..alphabet.len().pow(len) {
                let mut input = vec![b'$'];
                for _ in 0..len {
                    input.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                let Some((value, cr)) = short_length(&input, 0, 1024) else { continue };
                accepted += 1;
                let first_cr = input.iter().position(|&b| b == b'\r');
                assert_eq!(first_cr, Some(cr), "{input:?}");
                assert!(cr + 1 < input.len(), "{input:?}");
                assert_eq!(parse_i64(&input[1..cr]), Some(value), "{input:?}");
            }
        }
        assert!(accepted > 100, "{accepted}");
    }

    #[test]
    fn huge_claimed_count_does_not_preallocate() {
        let mut p = RequestParser::default();
        assert_eq!(p.parse(b"*2147483647\r\n$1\r\na\r\n"), Ok(None));
        assert!(p.spans.capacity() <= 1024);
        assert_eq!(p.argc(), 1);
    }

    /// The short-length fast path must agree with the general path on every line: the
    /// same requests, the same errors, the same "need more" at every prefix. A line limit
    /// of 19 bytes turns the fast path off, and every line here fits within it.
    #[test]
    fn short_length_fast_path_agrees_with_the_general_path() {
        let general = Limits { max_inline_len: 19, ..Limits::default() };
        let fast = Limits::default();
        let counts: &[&[u8]] = &[b"0", b"1", b"2", b"9", b"10", b"01", b"00", b"-1", b"-0", b"+1", b"", b"1x", b"x",
            b"2147483647", b"2147483648", b"999999999999999999", b" 1", b"1 "];
        // (Requests that end up inline, after `*0` or `*-1`, must stay under the 19-byte
        // limit themselves.)
        let lens: &[&[u8]] = &[b"0", b"1", b"3", b"03", b"00", b"-1", b"", b"3x", b"536870912", b"536870913", b"2 "];
        for count in counts {
            for len in lens {
                let mut req = Vec::new();
                req.extend_from_slice(b"*");
                req.extend_from_slice(count);
                req.extend_from_slice(b"\r\n$3\r\nGET\r\n$");
                req.extend_from_slice(len);
                req.extend_from_slice(b"\r\nabc\r\n*1\r\n$4\r\nPING\r\n");
                let want = parse_all(&general, &req);
                assert_eq!(parse_all(&fast, &req), want, "{}", String::from_utf8_lossy(&req));
                for step in [1, 2, 5] {
                    assert_eq!(parse_chunked(&fast, &req, step), want, "step {step}: {}", String::from_utf8_lossy(&req));
                }
            }
        }
    }

    /// The whole-request fast path must agree with the general path under every limit:
    /// requests of 0 to 12 arguments of 0 to 20,000 bytes, with and without
    /// authentication, with a `proto-max-bulk-len` below and above the arguments'.
    #[test]
    fn whole_request_fast_path_agrees_with_the_general_path() {
        let mut requests: Vec<Vec<u8>> = Vec::new();
        for argc in [0usize, 1, 2, 3, 10, 11, 12] {
            for size in [0usize, 1, 9, 10, 16384, 16385, 20000] {
                let mut req = format!("*{argc}\r\n").into_bytes();
                for i in 0..argc {
                    let len = if i == 0 { 3 } else { size };
                    req.extend_from_slice(format!("${len}\r\n").as_bytes());
                    req.extend(std::iter::repeat(b'a' + (i % 26) as u8).take(len));
                    req.extend_from_slice(b"\r\n");
                }
                req.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
                requests.push(req);
            }
        }
        for unauthenticated in [false, true] {
            for max_bulk_len in [2, 10, 16384, DEFAULT_MAX_BULK_LEN] {
                let fast = Limits { unauthenticated, max_bulk_len, ..Limits::default() };
                let general = Limits { max_inline_len: 19, ..fast.clone() };
                for req in &requests {
                    let want = parse_all(&general, req);
                    let what = || format!("{unauthenticated} {max_bulk_len} {}", String::from_utf8_lossy(&req[..req.len().min(40)]));
                    assert_eq!(parse_all(&fast, req), want, "{}", what());
                    assert_eq!(parse_chunked(&fast, req, 7), want, "{}", what());
                }
            }
        }
    }

    #[test]
    fn long_length_lines_take_the_general_path() {
        assert_eq!(one(b"*1\r\n$999999999999999999\r\n"), Err(E::InvalidBulkLength));
        assert_eq!(one(b"*1\r\n$9999999999999999999\r\n"), Err(E::InvalidBulkLength));
        assert_eq!(one(b"*99999999999999999999\r\n"), Err(E::InvalidMultibulkLength));
        assert_eq!(one(b"*0000000000000000001\r\n"), Err(E::InvalidMultibulkLength));
    }

    #[test]
    fn errors_reset_the_parser() {
        let mut p = RequestParser::default();
        assert_eq!(p.parse(b"*x\r\n"), Err(E::InvalidMultibulkLength));
        assert_eq!(p.argc(), 0);
        assert_eq!(p.parse(b"PING\n"), Ok(Some(5)));
    }
}
