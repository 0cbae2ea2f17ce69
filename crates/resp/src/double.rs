//! Floating-point text for the protocol: C's `%.17g` (what Redis 7.0 replies with for doubles),
//! a shortest round-trip form without exponent (INCRBYFLOAT replies), and Redis's
//! string-to-double rules for command arguments.

use std::fmt::Write as _;

/// A `fmt::Write` sink over a fixed stack buffer; fails (instead of allocating) when full.
struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> std::fmt::Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(std::fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes `d` exactly as C's `printf("%.17g", d)` does (glibc, round-half-even on the exact
/// binary value) into `buf` and returns the written prefix.
///
/// Finite values get 17 significant digits; with decimal exponent `X`, fixed notation is used when
/// `-4 <= X < 17` and scientific (`1.0000000000000001e+20`, exponent of at least two digits)
/// otherwise; trailing zeros and a trailing `.` are removed. `-0.0` gives `-0`. Infinities give
/// `inf` / `-inf` and NaN gives `nan` (`-nan` with its sign bit set, as glibc). The longest output is 24 bytes. Does not allocate.
pub fn format_g17(d: f64, buf: &mut [u8; 32]) -> &[u8] {
    if d.is_nan() {
        // As glibc's printf: the sign bit shows (0/0 on x86 makes a negative NaN, which
        // a Lua script's `0/0` passed to a command is: Redis stores "-nan").
        return put(buf, if d.is_sign_negative() { b"-nan" } else { b"nan" });
    }
    if d.is_infinite() {
        return put(buf, if d > 0.0 { b"inf" } else { b"-inf" });
    }
    // A whole number under 10^17 (at most 17 digits, so printed in full without an
    // exponent) is its integer text, as Redis's own double-to-string shortcut prints it.
    // Scores are mostly such numbers, and the exact 17-digit formatting below falls back
    // to a bignum algorithm for many of them: ZPOPMIN's reply cost ~2,800 instructions
    // a score that way. `-0.0` keeps its sign on the general path.
    if d.fract() == 0.0 && d.abs() < 1e17 && !(d == 0.0 && d.is_sign_negative()) {
        let mut int = itoa::Buffer::new();
        return put(buf, int.format(d as i64).as_bytes());
    }
    // Rust's `{:.16e}` rounds the exact value to 17 significant digits (half to even), giving
    // e.g. "-1.2345678901234567e-5". Split it into sign, 17 digits and the exponent.
    let mut sci = StackBuf::<40> {
        buf: [0; 40],
        len: 0,
    };
    if write!(sci, "{d:.16e}").is_err() {
        return put(buf, b"nan"); // unreachable: the text is at most 25 bytes
    }
    let text = &sci.buf[..sci.len];
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut digits = [b'0'; 17];
    let mut nd = 0;
    let mut exp: i32 = 0;
    let mut exp_negative = false;
    let mut in_exp = false;
    for &c in text {
        match c {
            b'e' => in_exp = true,
            b'-' if in_exp => exp_negative = true,
            b'0'..=b'9' if in_exp => exp = exp * 10 + i32::from(c - b'0'),
            b'0'..=b'9' if nd < 17 => {
                digits[nd] = c;
                nd += 1;
            }
            _ => {}
        }
    }
    if exp_negative {
        exp = -exp;
    }
    // Significant digits without trailing zeros (at least one).
    let mut sig = 17;
    while sig > 1 && digits[sig - 1] == b'0' {
        sig -= 1;
    }

    let mut len = 0;
    let mut push = |b: u8| {
        buf[len] = b;
        len += 1;
    };
    if negative {
        push(b'-');
    }
    if (-4..17).contains(&exp) {
        if exp >= 0 {
            let int_digits = exp as usize + 1;
            for &c in &digits[..int_digits] {
                push(c);
            }
            if sig > int_digits {
                push(b'.');
                for &c in &digits[int_digits..sig] {
                    push(c);
                }
            }
        } else {
            push(b'0');
            push(b'.');
            for _ in 0..(-exp - 1) {
                push(b'0');
            }
            for &c in &digits[..sig] {
                push(c);
            }
        }
    } else {
        push(digits[0]);
        if sig > 1 {
            push(b'.');
            for &c in &digits[1..sig] {
                push(c);
            }
        }
        push(b'e');
        push(if exp < 0 { b'-' } else { b'+' });
        let e = exp.unsigned_abs();
        if e >= 100 {
            push(b'0' + (e / 100) as u8);
        }
        push(b'0' + (e / 10 % 10) as u8);
        push(b'0' + (e % 10) as u8);
    }
    &buf[..len]
}

fn put<'a>(buf: &'a mut [u8; 32], s: &[u8]) -> &'a [u8] {
    buf[..s.len()].copy_from_slice(s);
    &buf[..s.len()]
}

/// Parses a command argument as a double with Redis's rules (`getDoubleFromObject`: C `strtod`
/// over the whole string), restricted to decimal notation.
///
/// Accepted: an optional `+`/`-`, then digits with an optional `.` (`1`, `-1.5`, `.5`, `5.`),
/// with an optional exponent (`1e5`, `2.5E-3`, `1e+2`); or `inf` / `infinity` in any letter case
/// with an optional sign. Rejected (`None`): the empty string, leading or trailing whitespace,
/// trailing garbage, any NaN spelling, hexadecimal floats (which `strtod` would take), values that
/// overflow to infinity (`1e400`), and non-zero values that underflow to zero (`1e-400`);
/// subnormal results are accepted.
pub fn parse_double(s: &[u8]) -> Option<f64> {
    let (first, _) = s.split_first()?;
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.' | b'i' | b'I')) {
        return None;
    }
    let text = std::str::from_utf8(s).ok()?;
    let v: f64 = text.parse().ok()?;
    if v.is_nan() {
        return None;
    }
    let unsigned = text.trim_start_matches(['+', '-']);
    if v.is_infinite() {
        // Only a spelled-out infinity may produce one; overflow is ERANGE for strtod.
        return if unsigned.starts_with(['i', 'I']) {
            Some(v)
        } else {
            None
        };
    }
    if v == 0.0 {
        // Underflow to zero is ERANGE for strtod: reject when the mantissa had a non-zero digit.
        let mantissa = unsigned.split(['e', 'E']).next().unwrap_or("");
        if mantissa.bytes().any(|c| matches!(c, b'1'..=b'9')) {
            return None;
        }
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::{format_g17, parse_double};

    fn g17(d: f64) -> String {
        let mut buf = [0u8; 32];
        String::from_utf8_lossy(format_g17(d, &mut buf)).into_owned()
    }

    /// Expected strings generated once with Python's `"%.17g" % x` (C printf semantics).
    #[test]
    fn g17_matches_c_printf_table() {
        let table: &[(f64, &str)] = &[
            (0.1, "0.10000000000000001"),
            (1.1, "1.1000000000000001"),
            (3.0, "3"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (1.5e-5, "1.5e-05"),
            (1e-4, "0.0001"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (-0.0, "-0"),
            (5e-324, "4.9406564584124654e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (100.0, "100"),
            (1e15, "1000000000000000"),
            (12345678901234567.0, "12345678901234568"),
            (1e-5, "1.0000000000000001e-05"),
            (0.00012345, "0.00012344999999999999"),
            (1234567890123456.0 + 0.25, "1234567890123456.2"), // a tie: half to even,
            (0.5, "0.5"),
            (2.5, "2.5"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (-1e-100, "-1e-100"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (std::f64::consts::PI, "3.1415926535897931"),
            (1e22, "1e+22"),
            (9007199254740993.0, "9007199254740992"),
            (0.3, "0.29999999999999999"),
            (1e-7, "9.9999999999999995e-08"),
            (123.456, "123.456"),
            (-123456789.125, "-123456789.125"),
            (1.0000000000000002, "1.0000000000000002"),
            (4.35, "4.3499999999999996"),
            (99999999999999999.0, "1e+17"),
            (99999999999999984.0, "99999999999999984"),
            (-99999999999999984.0, "-99999999999999984"),
            (-12345.0, "-12345"),
            (9007199254740992.0, "9007199254740992"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
        ];
        for (d, want) in table {
            assert_eq!(g17(*d), *want, "value {d:e}");
        }
    }

    /// Differential check against the C library's own `snprintf("%.17g")` over many bit
    /// patterns (std links libc on every platform this crate targets).
    #[test]
    fn g17_matches_libc_snprintf_on_random_bits() {
        extern "C" {
            fn snprintf(buf: *mut u8, n: usize, fmt: *const std::ffi::c_char, ...) -> i32;
        }
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..25_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let d = match i % 5 {
                0 => f64::from_bits(state),
                1 => (state >> 11) as f64 / 1000.0,
                2 => (state % 100_000) as f64 / 100.0,
                // Whole numbers on both sides of 10^17 (the integer shortcut's bound).
                3 => (state % 400_000_000_000_000_000) as f64 - 2e17,
                _ => f64::from_bits(state) % 1e20,
            };
            if !d.is_finite() {
                continue;
            }
            let mut c = [0u8; 64];
            // SAFETY: the buffer is 64 bytes, the format string is NUL-terminated and takes one
            // double argument.
            let n = unsafe { snprintf(c.as_mut_ptr(), c.len(), c"%.17g".as_ptr(), d) };
            let want = String::from_utf8_lossy(&c[..n as usize]).into_owned();
            assert_eq!(g17(d), want, "bits {:#x}", d.to_bits());
        }
    }

    #[test]
    fn parse_double_accepts_strtod_decimal_forms() {
        let ok: &[(&str, f64)] = &[
            ("1", 1.0),
            ("-1.5", -1.5),
            ("+2", 2.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("1e5", 1e5),
            ("2.5E-3", 2.5e-3),
            ("1e+2", 100.0),
            ("0", 0.0),
            ("-0", -0.0),
            ("0e400", 0.0),
            ("inf", f64::INFINITY),
            ("+inf", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("Infinity", f64::INFINITY),
            ("-INF", f64::NEG_INFINITY),
            ("4.9e-324", 5e-324),
            ("1.7976931348623157e308", f64::MAX),
        ];
        for (s, v) in ok {
            assert_eq!(parse_double(s.as_bytes()), Some(*v), "{s}");
        }
    }

    #[test]
    fn parse_double_rejects() {
        let bad = [
            "", " 1", "1 ", "\t1", "1\n", "abc", "1e", "e5", ".", "-", "+", "nan", "NaN", "-nan",
            "0x10", "1e400", "-1e400", "1e-400", "inf1", "infinit", "1,5", "1..2", "--1",
        ];
        for s in bad {
            assert_eq!(parse_double(s.as_bytes()), None, "{s:?}");
        }
        assert_eq!(parse_double(b"1\0"), None);
        assert_eq!(parse_double(b"\xff"), None);
    }
}
