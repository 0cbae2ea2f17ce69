//! Pure algorithms behind the string-family commands.
//!
//! This module owns the value-level semantics of the commands that operate on
//! string values: integer and float parsing (`string2ll`-style canonical
//! integers, `strtod`-style floats), INCR/INCRBY arithmetic (INCRBYFLOAT's is in
//! `long_double.rs`),
//! GETRANGE/SETRANGE, GETBIT/SETBIT, BITCOUNT, BITPOS, BITOP and LCS.
//!
//! Everything here is a plain function over byte slices and numbers: there is
//! no I/O, no RESP, no keyspace access and no error text. Command handlers
//! parse their arguments, look keys up, call into this module and format the
//! reply (including Redis's error messages and the "missing key" special
//! cases, which are documented on each function).
//!
//! Robustness rules every function follows:
//! * no panics for any input, including `i64::MIN`/`i64::MAX` indexes and
//!   offsets far beyond the end of the buffer;
//! * no allocation beyond what the result needs (growing SETRANGE/SETBIT
//!   buffers preallocate like Redis's sds: double below 1 MiB, else +1 MiB);
//!   functions that grow a buffer never grow it past [`MAX_STRING_LEN`] (a
//!   request that would is ignored, see each function) so a huge offset can
//!   never trigger a huge allocation even if the caller forgot its own limit
//!   check.
//!
//! Behaviour follows Redis 7.0; the unit tests at the bottom hold tables of
//! cases that were cross-checked against a real Redis 7.0.15 server.

use std::ops::Range;

/// Largest length (in bytes) any function in this module will grow a buffer
/// to: 512 MiB, Redis's default `proto-max-bulk-len` and the size implied by
/// the SETBIT offset limit (2^32 bits).
pub const MAX_STRING_LEN: usize = 512 * 1024 * 1024;

// ---------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------

/// Parses a strictly canonical decimal `i64`, like Redis's `string2ll`.
///
/// Accepts an optional `-` followed by digits with no leading zero (the
/// single string `"0"` is the only way to write zero). Rejects the empty
/// string, inputs longer than 20 bytes, `"-0"`, a leading `+`, any
/// whitespace, leading zeros and values outside the `i64` range.
/// `"-9223372036854775808"` is accepted.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut magnitude: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        if magnitude == 1u64 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(magnitude).ok().map(|v| -v)
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// True when `s` would be stored with Redis's `int` encoding: it is a
/// canonical `i64` per [`parse_i64`] (so formatting the parsed value gives
/// back exactly `s`). `"01"`, `"-0"`, `"+1"`, `" 1"` and 21-digit numbers are
/// not canonical.
pub fn is_canonical_i64(s: &[u8]) -> bool {
    parse_i64(s).is_some()
}

/// INCR/INCRBY/DECR arithmetic: `current + delta`, or `None` when the result
/// overflows `i64` (Redis: "increment or decrement would overflow").
///
/// DECRBY is `incr_by(current, -delta)`; note that Redis rejects a DECRBY
/// argument of `i64::MIN` up front with "decrement would overflow" (a
/// different message), which the caller must check before negating.
pub fn incr_by(current: i64, delta: i64) -> Option<i64> {
    current.checked_add(delta)
}

// ---------------------------------------------------------------------------
// Floats
// ---------------------------------------------------------------------------

/// Parses a float the way Redis parses string values and float arguments
/// (`strtod` in the C locale, then Redis's extra checks, as in `string2d`).
///
/// Accepted: an optional sign, then either decimal (`1`, `1.5`, `.5`, `5.`,
/// `00012`) with an optional exponent (`1e5`, `1E-2`, `1e+3`), a C99 hex
/// float (`0x10`, `0x1.8p1`, `0X.8`), or `inf`/`infinity` in any case.
/// Results are correctly rounded to nearest, ties to even.
///
/// Rejected (`None`): the empty string, leading or trailing whitespace, any
/// trailing garbage (including an embedded NUL), `nan` in any form, an
/// exponent marker without digits (`1e`, `0x1p`), a finite value that
/// overflows to infinity (`1e400`), and a non-zero value that underflows to
/// zero (`1e-400`). Subnormal results (`1e-310`) are accepted.
///
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let (negative, body) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        Some(_) => (false, s),
        None => return None,
    };
    let magnitude = if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        f64::INFINITY
    } else if body.len() >= 2 && body[0] == b'0' && (body[1] == b'x' || body[1] == b'X') {
        parse_hex_float(&body[2..])?
    } else {
        parse_decimal_float(body)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Unsigned decimal: `digits [. digits] | . digits`, optional exponent.
fn parse_decimal_float(s: &[u8]) -> Option<f64> {
    let mut i = 0;
    let mut mantissa_digits = 0usize;
    let mut nonzero = false;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        nonzero |= c != b'0';
        mantissa_digits += 1;
        i += 1;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&c) = s.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            nonzero |= c != b'0';
            mantissa_digits += 1;
            i += 1;
        }
    }
    if mantissa_digits == 0 {
        return None;
    }
    if let Some(b'e' | b'E') = s.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = s.get(i) {
            i += 1;
        }
        let exp_start = i;
        while s.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    if i != s.len() {
        return None;
    }
    // Validated above: only ASCII digits, '.', 'e'/'E' and an exponent sign,
    // a grammar Rust's (correctly rounded) parser accepts.
    let text = std::str::from_utf8(s).ok()?;
    let v: f64 = text.parse().ok()?;
    if v.is_infinite() || (v == 0.0 && nonzero) {
        return None; // ERANGE: overflow, or underflow to zero
    }
    Some(v)
}

/// Unsigned hex float after the `0x` prefix: `hex [. hex] | . hex`, optional
/// binary exponent `p[+-]digits`. Correctly rounded (ties to even).
fn parse_hex_float(s: &[u8]) -> Option<f64> {
    let mut mant: u64 = 0;
    let mut sticky = false;
    let mut exp2: i64 = 0;
    let mut digits = 0usize;
    let mut i = 0;
    let mut in_fraction = false;
    loop {
        match s.get(i) {
            Some(b'.') if !in_fraction => in_fraction = true,
            Some(&c) if c.is_ascii_hexdigit() => {
                let d = u64::from(hex_value(c));
                digits += 1;
                if mant < (1u64 << 60) {
                    mant = (mant << 4) | d;
                    if in_fraction {
                        exp2 -= 4;
                    }
                } else {
                    sticky |= d != 0;
                    if !in_fraction {
                        exp2 += 4;
                    }
                }
                // Keep exp2 bounded for absurdly long inputs.
                exp2 = exp2.clamp(-1_000_000_000, 1_000_000_000);
            }
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if let Some(b'p' | b'P') = s.get(i) {
        i += 1;
        let negative = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let exp_start = i;
        let mut e: i64 = 0;
        while let Some(&c) = s.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            e = (e * 10 + i64::from(c - b'0')).min(1_000_000_000);
            i += 1;
        }
        if i == exp_start {
            return None;
        }
        exp2 += if negative { -e } else { e };
    }
    if i != s.len() {
        return None;
    }
    if mant == 0 {
        return Some(0.0);
    }
    if sticky {
        mant |= 1; // mant >= 2^60 here, far below the rounding position
    }
    // value = mant * 2^exp2 = 1.f * 2^e with the leading 1 at bit 63 of `m`.
    let lz = mant.leading_zeros();
    let m = u128::from(mant << lz);
    let e = exp2 + 63 - i64::from(lz);
    if e > 1023 {
        return None;
    }
    // Number of low bits of `m` to drop: 11 for normal numbers, more for
    // subnormals.
    let shift = if e >= -1022 { 11 } else { 11 + (-1022 - e) };
    if shift > 127 {
        return None; // underflows to zero
    }
    let mut q = m >> shift;
    let rem = m & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    if rem > half || (rem == half && q & 1 == 1) {
        q += 1;
    }
    if e >= -1022 {
        let mut e = e;
        if q == 1u128 << 53 {
            q >>= 1;
            e += 1;
            if e > 1023 {
                return None;
            }
        }
        let bits = ((e + 1023) as u64) << 52 | (q as u64 & ((1u64 << 52) - 1));
        Some(f64::from_bits(bits))
    } else if q == 0 {
        None // non-zero value rounded to zero: ERANGE
    } else {
        // Subnormal (or the smallest normal when rounding carried into bit 52).
        Some(f64::from_bits(q as u64))
    }
}

fn hex_value(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

// ---------------------------------------------------------------------------
// Ranges
// ---------------------------------------------------------------------------

/// Normalises an inclusive `[start, end]` index pair against `total` units
/// the way GETRANGE/BITCOUNT/BITPOS do: negative indexes count from the end,
/// then both are clamped at 0 and `end` at `total - 1`. Returns `None` when
/// the resulting range is empty.
fn normalize_range(start: i64, end: i64, total: i128) -> Option<(usize, usize)> {
    let mut s = i128::from(start);
    let mut e = i128::from(end);
    if s < 0 {
        s += total;
    }
    if e < 0 {
        e += total;
    }
    s = s.max(0);
    e = e.max(0);
    if e >= total {
        e = total - 1;
    }
    if s > e {
        return None;
    }
    Some((usize::try_from(s).ok()?, usize::try_from(e).ok()?))
}

/// GETRANGE (SUBSTR): the byte range of a `len`-byte string selected by the
/// inclusive indexes `start`/`end`.
///
/// Negative indexes count from the end (-1 is the last byte). If both are
/// negative and `start > end` the result is empty; otherwise both are clamped
/// at 0 and `end` at `len - 1`. The result is empty (`0..0`) when the string
/// is empty or `start > end` after normalisation. Example from Redis 7.0 on
/// "Hello": `(0, -100)` gives "H", `(-100, -200)` gives "".
pub fn getrange(len: usize, start: i64, end: i64) -> Range<usize> {
    if start < 0 && end < 0 && start > end {
        return 0..0;
    }
    match normalize_range(start, end, len as i128) {
        Some((s, e)) => s..e + 1,
        None => 0..0,
    }
}

/// SETRANGE: overwrites `buf` at `offset` with `value`, zero-padding the gap
/// when `offset` is past the end, and returns the new length.
///
/// An empty `value` never modifies or pads the buffer (Redis replies with the
/// current length and creates nothing). The caller checks
/// `offset + value.len()` against `proto-max-bulk-len`; as a safety net a
/// write whose end would overflow or lie beyond [`MAX_STRING_LEN`] (and
/// beyond the current length) is ignored and the current length returned.
pub fn setrange(buf: &mut Vec<u8>, offset: usize, value: &[u8]) -> usize {
    if value.is_empty() {
        return buf.len();
    }
    let end = match offset.checked_add(value.len()) {
        Some(end) => end,
        None => return buf.len(),
    };
    if end > buf.len() {
        if end > MAX_STRING_LEN {
            return buf.len();
        }
        grow_zeroed(buf, end);
    }
    if let Some(dst) = buf.get_mut(offset..end) {
        dst.copy_from_slice(value);
    }
    buf.len()
}

/// Extends `buf` with zeros to `new_len` (> current length). Capacity grows
/// like Redis's sds greedy preallocation (double below 1 MiB, else +1 MiB),
/// capped at [`MAX_STRING_LEN`], so repeated small growth is amortised while
/// the slack stays bounded.
fn grow_zeroed(buf: &mut Vec<u8>, new_len: usize) {
    const MIB: usize = 1024 * 1024;
    if new_len > buf.capacity() {
        let target = if new_len < MIB {
            new_len * 2
        } else {
            new_len.saturating_add(MIB)
        };
        let target = target.min(MAX_STRING_LEN).max(new_len);
        buf.reserve_exact(target - buf.len());
    }
    buf.resize(new_len, 0);
}

// ---------------------------------------------------------------------------
// Single bits
// ---------------------------------------------------------------------------

/// GETBIT: the bit at `offset`, where bit 0 is the most significant bit of
/// byte 0. Offsets past the end read as 0.
pub fn getbit(buf: &[u8], offset: u64) -> u8 {
    let byte = match usize::try_from(offset >> 3) {
        Ok(b) => b,
        Err(_) => return 0,
    };
    match buf.get(byte) {
        Some(&b) => (b >> (7 - (offset & 7))) & 1,
        None => 0,
    }
}

/// SETBIT: sets (`on`) or clears the bit at `offset` (bit 0 = MSB of byte 0),
/// growing the buffer with zero bytes when needed (Redis grows it even when
/// clearing), and returns the previous bit.
///
/// The caller checks `offset < 2^32`. As a safety net, a bit whose byte lies
/// beyond the current length and at or beyond [`MAX_STRING_LEN`] is left
/// alone (nothing allocated) and 0 returned.
pub fn setbit(buf: &mut Vec<u8>, offset: u64, on: bool) -> u8 {
    let byte = match usize::try_from(offset >> 3) {
        Ok(b) => b,
        Err(_) => return 0,
    };
    if byte >= buf.len() {
        if byte >= MAX_STRING_LEN {
            return 0;
        }
        grow_zeroed(buf, byte + 1);
    }
    let mask = 0x80u8 >> (offset & 7);
    match buf.get_mut(byte) {
        Some(b) => {
            let old = u8::from(*b & mask != 0);
            if on {
                *b |= mask;
            } else {
                *b &= !mask;
            }
            old
        }
        None => 0,
    }
}

// ---------------------------------------------------------------------------
// BITCOUNT / BITPOS
// ---------------------------------------------------------------------------

/// Unit of BITCOUNT/BITPOS range indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitUnit {
    /// Indexes are byte offsets (the default).
    Byte,
    /// Indexes are bit offsets (bit 0 = MSB of byte 0).
    Bit,
}

/// Number of set bits in `bytes`, eight bytes at a time.
fn popcount(bytes: &[u8]) -> u64 {
    let mut total = 0u64;
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        let mut sum = 0u32;
        for word in chunk.chunks_exact(8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            sum += u64::from_ne_bytes(w).count_ones();
        }
        total += u64::from(sum);
    }
    let mut words = chunks.remainder().chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        total += u64::from(u64::from_ne_bytes(w).count_ones());
    }
    for &b in words.remainder() {
        total += u64::from(b.count_ones());
    }
    total
}

/// BITCOUNT: the number of set bits in `buf`, or in the inclusive
/// `range = (start, end)` counted in `unit`s.
///
/// Range rules (Redis 7.0): if both indexes are negative and `start > end`
/// the count is 0; otherwise negative indexes count from the end (of the
/// byte length, or of `8 * len` bits for [`BitUnit::Bit`]), both are clamped
/// at 0, `end` is clamped at the last unit, and an empty range counts 0.
/// A missing key counts 0 (same as an empty `buf`).
pub fn bitcount(buf: &[u8], range: Option<(i64, i64)>, unit: BitUnit) -> i64 {
    let (start, end) = match range {
        None => return popcount(buf) as i64,
        Some(r) => r,
    };
    if start < 0 && end < 0 && start > end {
        return 0;
    }
    let total = match unit {
        BitUnit::Byte => buf.len() as i128,
        BitUnit::Bit => buf.len() as i128 * 8,
    };
    let (s, e) = match normalize_range(start, end, total) {
        Some(r) => r,
        None => return 0,
    };
    let count = match unit {
        BitUnit::Byte => buf.get(s..=e).map_or(0, popcount),
        BitUnit::Bit => {
            let (first, last) = (s >> 3, e >> 3);
            let whole = buf.get(first..=last).map_or(0, popcount);
            // Bits of the first byte before `s`, and of the last byte after `e`.
            let head_mask = !bits_from(s);
            let tail_mask = !bits_through(e);
            let head = buf.get(first).map_or(0, |b| (b & head_mask).count_ones());
            let tail = buf.get(last).map_or(0, |b| (b & tail_mask).count_ones());
            whole - u64::from(head) - u64::from(tail)
        }
    };
    count as i64
}

/// Mask of the bits of a byte at or after bit `pos & 7` (MSB = bit 0).
fn bits_from(pos: usize) -> u8 {
    0xFF >> (pos & 7)
}

/// Mask of the bits of a byte at or before bit `pos & 7` (MSB = bit 0).
fn bits_through(pos: usize) -> u8 {
    0xFF << (7 - (pos & 7))
}

/// Index of the first byte in `bytes` that is not `skip`, scanning eight
/// bytes at a time.
fn first_byte_not(bytes: &[u8], skip: u8) -> Option<usize> {
    let pattern = u64::from_ne_bytes([skip; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        if u64::from_ne_bytes(w) != pattern {
            break;
        }
        base += 8;
    }
    bytes
        .get(base..)?
        .iter()
        .position(|&b| b != skip)
        .map(|p| base + p)
}

/// First bit equal to `bit` within the inclusive bit range `[s, e]` of `buf`
/// (both in bounds), as an absolute bit offset.
fn find_bit(buf: &[u8], bit: bool, s: usize, e: usize) -> Option<usize> {
    let (first, last) = (s >> 3, e >> 3);
    // Transform each byte so that we are always looking for a 1.
    let norm = |b: u8| if bit { b } else { !b };
    let head_keep = bits_from(s);
    let tail_keep = bits_through(e);
    let hit = |idx: usize, x: u8| idx * 8 + x.leading_zeros() as usize;

    let mut x = norm(*buf.get(first)?) & head_keep;
    if first == last {
        x &= tail_keep;
        return if x != 0 { Some(hit(first, x)) } else { None };
    }
    if x != 0 {
        return Some(hit(first, x));
    }
    let middle = buf.get(first + 1..last)?;
    if let Some(p) = first_byte_not(middle, if bit { 0x00 } else { 0xFF }) {
        let idx = first + 1 + p;
        return Some(hit(idx, norm(*buf.get(idx)?)));
    }
    let x = norm(*buf.get(last)?) & tail_keep;
    if x != 0 {
        Some(hit(last, x))
    } else {
        None
    }
}

/// BITPOS: the position (in bits from the start of the string) of the first
/// bit equal to `bit` (0, or 1 for any non-zero value) within the range.
///
/// * `start == None`: the whole string, as if no range was given.
/// * `start` given, `end == None`: from `start` to the end of the string.
/// * Indexes are in `unit`s (bytes by default); negative indexes count from
///   the end, then both are clamped at 0 and `end` at the last unit (unlike
///   BITCOUNT there is no special case for two negative indexes, so
///   `(-100, -200)` selects unit 0). An empty range gives -1.
/// * Not found: -1, except when looking for 0 without an explicit `end`: the
///   string is then treated as padded with zeros to the right and the result
///   is the first bit past the end (e.g. 24 for "\xff\xff\xff"). With an
///   explicit `end` the result is -1.
///
/// An existing empty string gives -1 for both bits; a MISSING key is the
/// caller's case (Redis replies 0 when looking for 0 and -1 for 1).
pub fn bitpos(buf: &[u8], bit: u8, start: Option<i64>, end: Option<i64>, unit: BitUnit) -> i64 {
    let bit = bit != 0;
    let (start, end, unit) = match start {
        Some(s) => (s, end, unit),
        None => (0, None, BitUnit::Byte),
    };
    let total = match unit {
        BitUnit::Byte => buf.len() as i128,
        BitUnit::Bit => buf.len() as i128 * 8,
    };
    let end_given = end.is_some();
    let end = end.unwrap_or(-1);
    let (s, e) = match normalize_range(start, end, total) {
        Some(r) => r,
        None => return -1,
    };
    // Inclusive bit range.
    let (sb, eb) = match unit {
        BitUnit::Byte => (s * 8, e * 8 + 7),
        BitUnit::Bit => (s, e),
    };
    match find_bit(buf, bit, sb, eb) {
        Some(pos) => pos as i64,
        // Redis searches whole bytes; when looking for a clear bit in an
        // open-ended range it reports the bit just after the last byte.
        None if !bit && !end_given => ((eb >> 3) as i64 + 1) * 8,
        None => -1,
    }
}

// ---------------------------------------------------------------------------
// BITOP
// ---------------------------------------------------------------------------

/// BITOP operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

/// BITOP: combines `sources` byte by byte. The result is as long as the
/// longest source; shorter (and missing, i.e. empty) sources count as zero
/// bytes, so AND with a shorter source gives zeros past its end.
///
/// NOT uses only the first source (the caller enforces "exactly one"). No
/// sources, or only empty ones, give an empty result (Redis then deletes the
/// destination and replies 0).
pub fn bitop(op: BitOp, sources: &[&[u8]]) -> Vec<u8> {
    let (first, rest) = match sources.split_first() {
        Some((f, r)) => (*f, r),
        None => return Vec::new(),
    };
    if op == BitOp::Not {
        return first.iter().map(|b| !b).collect();
    }
    let max_len = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(max_len);
    out.extend_from_slice(first);
    out.resize(max_len, 0);
    for src in rest {
        match op {
            BitOp::And => {
                for (o, b) in out.iter_mut().zip(src.iter()) {
                    *o &= b;
                }
                if let Some(tail) = out.get_mut(src.len()..) {
                    tail.fill(0);
                }
            }
            BitOp::Or => {
                for (o, b) in out.iter_mut().zip(src.iter()) {
                    *o |= b;
                }
            }
            BitOp::Xor => {
                for (o, b) in out.iter_mut().zip(src.iter()) {
                    *o ^= b;
                }
            }
            BitOp::Not => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------
// LCS
// ---------------------------------------------------------------------------

/// One matching run reported by `LCS ... IDX`: inclusive byte ranges in the
/// first (`a`) and second (`b`) string, and the run length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LcsMatch {
    pub a: (usize, usize),
    pub b: (usize, usize),
    pub len: usize,
}

/// Result of [`lcs`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LcsResult {
    /// The longest common subsequence itself.
    pub lcs: Vec<u8>,
    /// Its length (`LCS ... LEN` and the `len` field of `IDX`), independent
    /// of any MINMATCHLEN filter.
    pub len: usize,
    /// Matching runs in the order Redis prints them (from the end of the
    /// strings backwards), filtered by the minimum match length.
    pub matches: Vec<LcsMatch>,
}

/// Number of `u32` cells of the dynamic-programming table [`lcs`] allocates
/// for strings of these lengths (`(alen + 1) * (blen + 1)`), or `None` if
/// that overflows. Callers use it to enforce their own memory limit.
pub fn lcs_table_cells(alen: usize, blen: usize) -> Option<usize> {
    alen.checked_add(1)?.checked_mul(blen.checked_add(1)?)
}

/// LCS: the longest common subsequence of `a` and `b`, computed with the
/// same dynamic programming and backtracking as Redis so that the chosen
/// subsequence and the reported match runs are identical.
///
/// Backtracking starts at the ends of both strings; on equal bytes it steps
/// diagonally, otherwise it drops the last byte of `a` if that keeps a
/// strictly longer LCS, else the last byte of `b`. Each maximal diagonal run
/// is one match, emitted when the run ends; runs shorter than
/// `min_match_len` are left out (0 keeps all; Redis clamps negative
/// MINMATCHLEN to 0, which is the caller's job).
///
/// Uses a transient `(a.len()+1) * (b.len()+1)` table of `u32`; callers
/// limit sizes (see [`lcs_table_cells`]). If the table cannot be allocated
/// an empty result is returned; use [`try_lcs`] to tell that apart.
pub fn lcs(a: &[u8], b: &[u8], min_match_len: usize) -> LcsResult {
    try_lcs(a, b, min_match_len).unwrap_or_default()
}

/// [`lcs`], returning `None` instead of an empty result when the table size
/// overflows or its allocation fails.
pub fn try_lcs(a: &[u8], b: &[u8], min_match_len: usize) -> Option<LcsResult> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return Some(LcsResult::default());
    }
    if n.min(m) >= u32::MAX as usize {
        return None;
    }
    let cols = m + 1;
    let cells = lcs_table_cells(n, m)?;
    let mut table: Vec<u32> = Vec::new();
    table.try_reserve_exact(cells).ok()?;
    table.resize(cells, 0);

    // table[i * cols + j] = LCS length of a[..i] and b[..j].
    for i in 1..=n {
        let (done, rest) = table.split_at_mut(i * cols);
        let prev = done.get((i - 1) * cols..)?;
        let cur = rest.get_mut(..cols)?;
        let ai = a[i - 1];
        for j in 1..=m {
            cur[j] = if ai == b[j - 1] {
                prev[j - 1] + 1
            } else {
                prev[j].max(cur[j - 1])
            };
        }
    }
    let total = *table.get(n * cols + m)? as usize;

    let mut out = Vec::with_capacity(total);
    let mut matches = Vec::new();
    // Current run: (a_start, a_end, b_start, b_end), inclusive.
    let mut run: Option<(usize, usize, usize, usize)> = None;
    let mut emit = |run: &mut Option<(usize, usize, usize, usize)>| {
        if let Some((a0, a1, b0, b1)) = run.take() {
            let len = a1 - a0 + 1;
            if len >= min_match_len {
                matches.push(LcsMatch {
                    a: (a0, a1),
                    b: (b0, b1),
                    len,
                });
            }
        }
    };
    let (mut i, mut j) = (n, m);
    while i > 0 && j > 0 {
        if a[i - 1] == b[j - 1] {
            out.push(a[i - 1]);
            run = match run {
                // The previous step was diagonal, so the run is contiguous.
                Some((_, a1, _, b1)) => Some((i - 1, a1, j - 1, b1)),
                None => Some((i - 1, i - 1, j - 1, j - 1)),
            };
            i -= 1;
            j -= 1;
            if i == 0 || j == 0 {
                emit(&mut run);
            }
        } else {
            let up = table[(i - 1) * cols + j];
            let left = table[i * cols + j - 1];
            if up > left {
                i -= 1;
            } else {
                j -= 1;
            }
            emit(&mut run);
        }
    }
    out.reverse();
    Some(LcsResult {
        len: out.len(),
        lcs: out,
        matches,
    })
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

// Every expected value in the tables below was cross-checked against a real
// Redis 7.0.15 server (redis-cli against a scratch instance).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_i64_table() {
        let cases: &[(&[u8], Option<i64>)] = &[
            (b"0", Some(0)),
            (b"1", Some(1)),
            (b"-1", Some(-1)),
            (b"123", Some(123)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"-9223372036854775809", None),
            (b"18446744073709551616", None),
            (b"99999999999999999999", None),
            (b"123456789012345678901", None),
            (b"", None),
            (b"-", None),
            (b"-0", None),
            (b"+1", None),
            (b" 1", None),
            (b"1 ", None),
            (b"01", None),
            (b"00", None),
            (b"-01", None),
            (b"1.0", None),
            (b"1e3", None),
            (b"0x10", None),
            (b"12a", None),
            (b"1\x002", None),
            (b"--1", None),
        ];
        for &(input, want) in cases {
            assert_eq!(parse_i64(input), want, "input {:?}", input);
            assert_eq!(is_canonical_i64(input), want.is_some(), "input {:?}", input);
        }
    }

    #[test]
    fn incr_by_table() {
        // INCRBY/DECRBY results; None = "increment or decrement would overflow".
        let cases = [
            (0, 1, Some(1)),
            (i64::MAX, 1, None),
            (i64::MIN, -1, None),
            (-i64::MAX, -1, Some(i64::MIN)),
            (0, i64::MIN, Some(i64::MIN)),
            (i64::MAX, i64::MIN, Some(-1)),
        ];
        for (cur, delta, want) in cases {
            assert_eq!(incr_by(cur, delta), want, "{} + {}", cur, delta);
        }
    }

    #[test]
    fn parse_f64_table() {
        let cases: &[(&[u8], Option<f64>)] = &[
            (b"10.5", Some(10.5)),
            (b"0.1", Some(0.1)),
            (b".5", Some(0.5)),
            (b"5.", Some(5.0)),
            (b"-.5", Some(-0.5)),
            (b"+.5", Some(0.5)),
            (b"+1", Some(1.0)),
            (b"00012", Some(12.0)),
            (b"1e5", Some(1e5)),
            (b"1E-2", Some(0.01)),
            (b"3.0e3", Some(3000.0)),
            (b"1e+3", Some(1000.0)),
            (b"1.5e3", Some(1500.0)),
            (b"12.0", Some(12.0)),
            (b"9007199254740993", Some(9007199254740992.0)),
            (b"1e308", Some(1e308)),
            (b"1.7976931348623158e308", Some(f64::MAX)),
            (b"1e-310", Some(1e-310)),
            (b"2.4703282292062328e-324", Some(5e-324)),
            (b"0e-999", Some(0.0)),
            (b"0.0e5000", Some(0.0)),
            (b"0x10", Some(16.0)),
            (b"0x1p3", Some(8.0)),
            (b"0X.8", Some(0.5)),
            (b"0x1.8p1", Some(3.0)),
            (b"0x1p-1074", Some(5e-324)),
            (b"0x1.8p-1075", Some(5e-324)),
            (b"inf", Some(f64::INFINITY)),
            (b"-inf", Some(f64::NEG_INFINITY)),
            (b"+inf", Some(f64::INFINITY)),
            (b"INF", Some(f64::INFINITY)),
            (b"infinity", Some(f64::INFINITY)),
            (b"Infinity", Some(f64::INFINITY)),
            // Invalid ("value is not a valid float").
            (b"", None),
            (b"-", None),
            (b".", None),
            (b"infin", None),
            (b"infinityx", None),
            (b"nan", None),
            (b"NaN", None),
            (b" 1", None),
            (b"1 ", None),
            (b"1e", None),
            (b"1e+", None),
            (b"1_0", None),
            (b"0x", None),
            (b"1\x002", None),
            (b"1\x00", None),
            (b"1e400", None),
            (b"1e-400", None),
            (b"1.7976931348623159e308", None),
            (b"2.4703282292062327e-324", None),
            (b"0x1p-1075", None),
            (b"0x1p1024", None),
            (b"0x1.fffffffffffff8p1023", None),
        ];
        for &(input, want) in cases {
            let got = parse_f64(input);
            assert_eq!(
                got.map(f64::to_bits),
                want.map(f64::to_bits),
                "input {:?}: got {:?}, want {:?}",
                String::from_utf8_lossy(input),
                got,
                want
            );
        }
        assert_eq!(
            parse_f64(b"-0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
    }

    #[test]
    fn parse_hex_float_rounding() {
        // Our own checks of the hex path against known bit patterns.
        assert_eq!(parse_f64(b"0x1.fffffffffffffp1023"), Some(f64::MAX));
        assert_eq!(parse_f64(b"0x1p-1022"), Some(f64::MIN_POSITIVE));
        assert_eq!(
            parse_f64(b"0x0.fffffffffffff8p-1022"),
            Some(f64::MIN_POSITIVE)
        );
        assert_eq!(parse_f64(b"0x1.00000000000008p0"), Some(1.0)); // tie -> even
        assert_eq!(
            parse_f64(b"0x1.00000000000018p0"),
            Some(1.0 + 2.0 * f64::EPSILON)
        );
        assert_eq!(
            parse_f64(b"0x1.000000000000080000001p0"),
            Some(1.0 + f64::EPSILON)
        );
        assert_eq!(parse_f64(b"0x10000000000000000000p-76"), Some(1.0));
        assert_eq!(parse_f64(b"0x.00000000000000000001p80"), Some(1.0));
        assert_eq!(parse_f64(b"0x1p99999999999999999999999"), None);
        assert_eq!(parse_f64(b"0x1p-99999999999999999999999"), None);
        assert_eq!(parse_f64(b"0x0p99999999999999999999999"), Some(0.0));
        assert_eq!(parse_f64(b"0x1p"), None);
        assert_eq!(parse_f64(b"0x1.2.3"), None);
        assert_eq!(parse_f64(b"0x.p1"), None);
    }

    #[test]
    fn getrange_table() {
        const MIN: i64 = i64::MIN;
        const MAX: i64 = i64::MAX;
        let s = b"Hello";
        let cases: &[(i64, i64, &[u8])] = &[
            (0, -1, b"Hello"),
            (0, -100, b"H"),
            (-100, -200, b""),
            (-1, -5, b""),
            (10, 20, b""),
            (5, 5, b""),
            (4, 4, b"o"),
            (-3, -1, b"llo"),
            (3, 1, b""),
            (-100, 2, b"Hel"),
            (0, MAX, b"Hello"),
            (MIN, MAX, b"Hello"),
            (MIN, MIN, b"H"),
            (MAX, MAX, b""),
            (2, -100, b""),
            (-2, -100, b""),
            (-1, -100, b""),
            (-5, -6, b""),
            (-6, -5, b"H"),
        ];
        for &(start, end, want) in cases {
            let r = getrange(s.len(), start, end);
            assert_eq!(&s[r], want, "GETRANGE {} {}", start, end);
        }
        for &(start, end) in &[(0, -1), (0, 0), (-1, 0), (MIN, MAX), (MAX, MIN)] {
            assert_eq!(getrange(0, start, end), 0..0);
        }
    }

    #[test]
    fn setrange_cases() {
        let mut v = b"ab".to_vec();
        assert_eq!(setrange(&mut v, 10, b""), 2);
        assert_eq!(v, b"ab");
        assert_eq!(setrange(&mut v, 4, b"xy"), 6);
        assert_eq!(v, b"ab\0\0xy");
        assert_eq!(setrange(&mut v, 1, b"Z"), 6);
        assert_eq!(v, b"aZ\0\0xy");
        assert_eq!(setrange(&mut v, 5, b"123"), 8);
        assert_eq!(v, b"aZ\0\0x123");
        let mut e = Vec::new();
        assert_eq!(setrange(&mut e, 5, b""), 0);
        assert!(e.is_empty());
        assert_eq!(setrange(&mut e, 0, b"hi"), 2);
        assert_eq!(e, b"hi");
        // Safety net: absurd offsets are ignored without allocating.
        assert_eq!(setrange(&mut e, usize::MAX, b"x"), 2);
        assert_eq!(setrange(&mut e, MAX_STRING_LEN, b"x"), 2);
        assert_eq!(setrange(&mut e, usize::MAX - 1, b"xyz"), 2);
        assert_eq!(e, b"hi");
        assert!(e.capacity() < 1024);
    }

    #[test]
    fn bits_get_set() {
        let mut v = Vec::new();
        assert_eq!(setbit(&mut v, 13, true), 0);
        assert_eq!(v, [0x00, 0x04]);
        assert_eq!(getbit(&v, 13), 1);
        assert_eq!(getbit(&v, 12), 0);
        assert_eq!(getbit(&v, 100), 0);
        assert_eq!(getbit(&v, u64::MAX), 0);
        assert_eq!(setbit(&mut v, 13, false), 1);
        assert_eq!(v, [0x00, 0x00]);
        assert_eq!(setbit(&mut v, 0, true), 0);
        assert_eq!(v, [0x80, 0x00]);
        assert_eq!(setbit(&mut v, 0, true), 1);
        // Clearing past the end still grows (Redis: SETBIT k 100 0).
        assert_eq!(setbit(&mut v, 23, false), 0);
        assert_eq!(v.len(), 3);
        // Safety net: no growth beyond MAX_STRING_LEN.
        assert_eq!(setbit(&mut v, u64::MAX, true), 0);
        assert_eq!(setbit(&mut v, (MAX_STRING_LEN as u64) * 8, true), 0);
        assert_eq!(v.len(), 3);
    }

    #[test]
    fn bitcount_table() {
        const MIN: i64 = i64::MIN;
        const MAX: i64 = i64::MAX;
        let s = b"foobar";
        assert_eq!(bitcount(s, None, BitUnit::Byte), 26);
        let bytes: &[(i64, i64, i64)] = &[
            (0, 0, 4),
            (1, 1, 6),
            (0, -1, 26),
            (-1, -1, 4),
            (-2, -1, 7),
            (-100, -200, 0),
            (-200, -100, 4),
            (-100, 100, 26),
            (5, 3, 0),
            (0, -100, 4),
            (-1, -5, 0),
            (10, 20, 0),
            (MIN, MAX, 26),
            (MIN, MIN, 4),
        ];
        for &(start, end, want) in bytes {
            assert_eq!(
                bitcount(s, Some((start, end)), BitUnit::Byte),
                want,
                "{} {} BYTE",
                start,
                end
            );
        }
        let bits: &[(i64, i64, i64)] = &[
            (0, -1, 26),
            (5, 30, 17),
            (-1, -1, 0),
            (-8, -1, 4),
            (-9, -2, 5),
            (-100, -200, 0),
            (-200, -100, 0),
            (0, -100, 0),
            (47, 47, 0),
            (48, 100, 0),
            (-48, -48, 0),
            (-49, -49, 0),
            (1, 0, 0),
            (3, 3, 0),
            (1, 1, 1),
            (2, 2, 1),
            (0, 5, 3),
            (MIN, MAX, 26),
            (MIN, MIN, 0),
            (MAX, MAX, 0),
        ];
        for &(start, end, want) in bits {
            assert_eq!(
                bitcount(s, Some((start, end)), BitUnit::Bit),
                want,
                "{} {} BIT",
                start,
                end
            );
        }
        assert_eq!(bitcount(b"", None, BitUnit::Byte), 0);
        assert_eq!(bitcount(b"", Some((0, -1)), BitUnit::Bit), 0);
        assert_eq!(bitcount(b"", Some((MIN, MAX)), BitUnit::Byte), 0);
    }

    #[test]
    fn bitpos_table() {
        const MIN: i64 = i64::MIN;
        const MAX: i64 = i64::MAX;
        use BitUnit::{Bit, Byte};
        // (value, bit, start, end, unit, Redis reply)
        type Case = (&'static [u8], u8, Option<i64>, Option<i64>, BitUnit, i64);
        let ones: &[u8] = b"\xff\xff\xff";
        let zeros: &[u8] = b"\x00\x00\x00";
        let m: &[u8] = b"\xff\xf0\x00";
        let n: &[u8] = b"\x00\x0f\xff";
        let cases: &[Case] = &[
            (ones, 0, None, None, Byte, 24),
            (ones, 1, None, None, Byte, 0),
            (ones, 0, Some(0), None, Byte, 24),
            (ones, 0, Some(1), None, Byte, 24),
            (ones, 1, Some(1), None, Byte, 8),
            (ones, 0, Some(3), None, Byte, -1),
            (ones, 0, Some(0), Some(-1), Byte, -1),
            (ones, 0, Some(0), Some(2), Byte, -1),
            (ones, 0, Some(-1), None, Byte, 24),
            (ones, 1, Some(-1), Some(-1), Byte, 16),
            (ones, 0, Some(-100), Some(-200), Byte, -1),
            (ones, 1, Some(-100), Some(-200), Byte, 0),
            (ones, 1, Some(-200), Some(-100), Byte, 0),
            (ones, 1, Some(0), Some(-100), Byte, 0),
            (ones, 0, Some(0), Some(-1), Bit, -1),
            (ones, 1, Some(5), Some(10), Bit, 5),
            (ones, 1, Some(12), Some(23), Bit, 12),
            (ones, 0, Some(24), Some(30), Bit, -1),
            (ones, 1, Some(-1), Some(-1), Bit, 23),
            (ones, 1, Some(-100), Some(-200), Bit, 0),
            (ones, 0, Some(MAX), None, Byte, -1),
            (ones, 0, Some(MIN), None, Byte, 24),
            (ones, 1, Some(MIN), Some(MAX), Bit, 0),
            (ones, 0, Some(MIN), Some(MAX), Bit, -1),
            (ones, 0, Some(MIN), Some(MIN), Bit, -1),
            (ones, 0, Some(3), Some(2), Bit, -1),
            (zeros, 0, None, None, Byte, 0),
            (zeros, 1, None, None, Byte, -1),
            (zeros, 0, Some(1), None, Byte, 8),
            (zeros, 0, Some(2), None, Byte, 16),
            (zeros, 0, Some(-1), Some(-1), Byte, 16),
            (zeros, 0, Some(-100), Some(-200), Byte, 0),
            (zeros, 0, Some(5), Some(10), Bit, 5),
            (zeros, 0, Some(-1), Some(-1), Bit, 23),
            (zeros, 0, Some(9), Some(9), Bit, 9),
            (zeros, 0, Some(-12), Some(-1), Bit, 12),
            (zeros, 1, Some(MIN), Some(MAX), Bit, -1),
            (zeros, 0, Some(MIN), Some(MAX), Bit, 0),
            (m, 0, None, None, Byte, 12),
            (m, 1, Some(1), None, Byte, 8),
            (m, 0, Some(2), None, Byte, 16),
            (m, 1, Some(2), None, Byte, -1),
            (m, 0, Some(0), Some(1), Byte, 12),
            (m, 0, Some(-1), Some(-1), Byte, 16),
            (m, 1, Some(-1), Some(-1), Byte, -1),
            (m, 0, Some(-100), Some(-200), Byte, -1),
            (m, 1, Some(-100), Some(-200), Byte, 0),
            (m, 0, Some(5), Some(10), Bit, -1),
            (m, 1, Some(5), Some(10), Bit, 5),
            (m, 0, Some(12), Some(23), Bit, 12),
            (m, 1, Some(12), Some(23), Bit, -1),
            (m, 0, Some(9), Some(9), Bit, -1),
            (m, 1, Some(9), Some(9), Bit, 9),
            (m, 0, Some(-12), Some(-1), Bit, 12),
            (m, 1, Some(-12), Some(-1), Bit, -1),
            (n, 0, None, None, Byte, 0),
            (n, 1, None, None, Byte, 12),
            (n, 0, Some(1), None, Byte, 8),
            (n, 0, Some(2), None, Byte, 24),
            (n, 1, Some(2), None, Byte, 16),
            (n, 0, Some(-1), Some(-1), Byte, -1),
            (n, 1, Some(-1), Some(-1), Byte, 16),
            (n, 0, Some(12), Some(23), Bit, -1),
            (n, 1, Some(5), Some(10), Bit, -1),
            (n, 1, Some(-12), Some(-1), Bit, 12),
            (n, 0, Some(20), Some(20), Bit, -1),
            (n, 1, Some(20), Some(20), Bit, 20),
            (n, 1, Some(MIN), Some(MAX), Bit, 12),
            (b"", 0, None, None, Byte, -1),
            (b"", 1, None, None, Byte, -1),
            (b"", 0, Some(0), Some(-1), Bit, -1),
            (b"", 0, Some(MIN), Some(MAX), Bit, -1),
        ];
        for &(v, bit, start, end, unit, want) in cases {
            assert_eq!(
                bitpos(v, bit, start, end, unit),
                want,
                "BITPOS {:?} {} {:?} {:?} {:?}",
                v,
                bit,
                start,
                end,
                unit
            );
        }
    }

    #[test]
    fn bitpos_long_strings() {
        // Exercise the 8-byte skipping paths.
        let mut v = vec![0u8; 100];
        v[77] = 0x01;
        assert_eq!(bitpos(&v, 1, None, None, BitUnit::Byte), 77 * 8 + 7);
        assert_eq!(bitpos(&v, 1, Some(3), Some(76), BitUnit::Byte), -1);
        assert_eq!(bitpos(&v, 1, Some(9), Some(77 * 8 + 6), BitUnit::Bit), -1);
        assert_eq!(bitpos(&v, 1, Some(9), Some(77 * 8 + 7), BitUnit::Bit), 623);
        let mut w = vec![0xFFu8; 100];
        assert_eq!(bitpos(&w, 0, None, None, BitUnit::Byte), 800);
        assert_eq!(bitpos(&w, 0, Some(0), Some(-1), BitUnit::Byte), -1);
        w[64] = 0xFE;
        assert_eq!(bitpos(&w, 0, Some(1), None, BitUnit::Byte), 64 * 8 + 7);
        assert_eq!(bitcount(&w, None, BitUnit::Byte), 799);
        assert_eq!(bitcount(&w, Some((3, 517)), BitUnit::Bit), 515);
    }

    #[test]
    fn bitop_table() {
        let k3: &[u8] = b"\xff\xff\xff";
        let k1: &[u8] = b"\x0f";
        let e: &[u8] = b"";
        assert_eq!(bitop(BitOp::And, &[k3, k1]), b"\x0f\x00\x00");
        assert_eq!(bitop(BitOp::And, &[k1, e]), b"\x00");
        assert_eq!(bitop(BitOp::And, &[e, e]), b"");
        assert_eq!(bitop(BitOp::Or, &[k3, k1]), b"\xff\xff\xff");
        assert_eq!(bitop(BitOp::Or, &[k1, e]), b"\x0f");
        assert_eq!(bitop(BitOp::Xor, &[k3, k1]), b"\xf0\xff\xff");
        assert_eq!(bitop(BitOp::Xor, &[k1, e]), b"\x0f");
        assert_eq!(bitop(BitOp::Not, &[k1]), b"\xf0");
        assert_eq!(bitop(BitOp::Not, &[e]), b"");
        assert_eq!(bitop(BitOp::And, &[k3]), k3);
        assert_eq!(bitop(BitOp::And, &[k1, k3]), b"\x0f\x00\x00");
        assert_eq!(bitop(BitOp::Or, &[]), b"");
    }

    fn m(a: (usize, usize), b: (usize, usize), len: usize) -> LcsMatch {
        LcsMatch { a, b, len }
    }

    #[test]
    fn lcs_table() {
        let r = lcs(b"ohmytext", b"mynewtext", 0);
        assert_eq!(r.lcs, b"mytext");
        assert_eq!(r.len, 6);
        assert_eq!(r.matches, vec![m((4, 7), (5, 8), 4), m((2, 3), (0, 1), 2)]);
        let r = lcs(b"ohmytext", b"mynewtext", 4);
        assert_eq!(r.len, 6);
        assert_eq!(r.matches, vec![m((4, 7), (5, 8), 4)]);
        let r = lcs(b"ohmytext", b"mynewtext", 2);
        assert_eq!(r.matches.len(), 2);
        let r = lcs(b"ABCBDAB", b"BDCABA", 0);
        assert_eq!(r.lcs, b"BDAB");
        assert_eq!(r.matches, vec![m((5, 6), (3, 4), 2), m((3, 4), (0, 1), 2)]);
        let r = lcs(b"BDCABA", b"ABCBDAB", 0);
        assert_eq!(r.lcs, b"BCBA");
        assert_eq!(
            r.matches,
            vec![
                m((5, 5), (5, 5), 1),
                m((4, 4), (3, 3), 1),
                m((2, 2), (2, 2), 1),
                m((0, 0), (1, 1), 1)
            ]
        );
        let r = lcs(b"", b"ABCBDAB", 0);
        assert_eq!(r, LcsResult::default());
        let r = lcs(b"abc", b"xyz", 0);
        assert_eq!((r.len, r.lcs.len(), r.matches.len()), (0, 0, 0));
    }

    #[test]
    fn lcs_table_size() {
        assert_eq!(lcs_table_cells(2, 3), Some(12));
        assert_eq!(lcs_table_cells(usize::MAX, 1), None);
    }
}
