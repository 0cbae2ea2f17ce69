//! Exact decimal addition for INCRBYFLOAT.
//!
//! Redis adds in 80-bit `long double` and prints the sum with `%.17Lf`, trailing zeros
//! removed; so `0.1 + 0.2` is "0.3", where f64 arithmetic would give
//! "0.30000000000000004". Rust has no 80-bit float, so the sum is computed exactly in
//! decimal (i128 mantissa and a power of ten) and rounded to 17 fractional digits. This
//! agrees with Redis wherever the exact sum fits in long double's 64-bit mantissa
//! (about 19 significant digits), which covers ordinary counters; beyond that, and for
//! inputs outside i128 range, the caller falls back to f64 (documented difference).

/// A decimal value `mantissa * 10^exp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    pub mantissa: i128,
    pub exp: i32,
}

/// Parses a plain decimal: `[+-]digits[.digits][(e|E)[+-]digits]`. None for anything
/// else (inf, nan, hex, spaces) or when the digits do not fit an i128.
pub fn parse(s: &[u8]) -> Option<Decimal> {
    let (neg, mut rest) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let mut mantissa: i128 = 0;
    let mut digits = 0;
    let mut frac_digits: i32 = 0;
    let mut seen_dot = false;
    while let Some(&c) = rest.first() {
        match c {
            b'0'..=b'9' => {
                mantissa = mantissa
                    .checked_mul(10)?
                    .checked_add(i128::from(c - b'0'))?;
                digits += 1;
                if seen_dot {
                    frac_digits += 1;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        rest = &rest[1..];
    }
    if digits == 0 {
        return None;
    }
    let mut exp: i32 = 0;
    if let Some(&c) = rest.first() {
        if c != b'e' && c != b'E' {
            return None;
        }
        let e = &rest[1..];
        let (eneg, edigits) = match e.first()? {
            b'-' => (true, &e[1..]),
            b'+' => (false, &e[1..]),
            _ => (false, e),
        };
        if edigits.is_empty() || edigits.len() > 6 || !edigits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let v: i32 = std::str::from_utf8(edigits).ok()?.parse().ok()?;
        exp = if eneg { -v } else { v };
    }
    Some(Decimal {
        mantissa: if neg { -mantissa } else { mantissa },
        exp: exp - frac_digits,
    })
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// The exact sum, or None when it does not fit.
pub fn add(a: Decimal, b: Decimal) -> Option<Decimal> {
    let exp = a.exp.min(b.exp);
    let scale = |d: Decimal| {
        d.mantissa
            .checked_mul(pow10(u32::try_from(d.exp - exp).ok()?)?)
    };
    Some(Decimal {
        mantissa: scale(a)?.checked_add(scale(b)?)?,
        exp,
    })
}

/// Formats as `%.17Lf` with trailing zeros (and a trailing '.') removed. None when the
/// integer part would not fit.
pub fn format(d: Decimal) -> Option<String> {
    // Round to 17 fractional digits (half to even).
    let (mut m, mut exp) = (d.mantissa, d.exp);
    if exp < -17 {
        let drop = u32::try_from(-17 - exp).ok()?;
        let div = pow10(drop)?;
        let (q, r) = (m / div, m % div);
        let half = div / 2;
        let r_abs = r.abs();
        let round_up = r_abs > half || (r_abs == half && q % 2 != 0);
        m = if round_up { q + m.signum() } else { q };
        exp = -17;
    }
    if m == 0 {
        return Some("0".to_string());
    }
    let neg = m < 0;
    let digits = m.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + 24);
    if neg {
        out.push('-');
    }
    if exp >= 0 {
        out.push_str(&digits);
        for _ in 0..exp {
            out.push('0');
        }
        return Some(out);
    }
    let frac = usize::try_from(-exp).ok()?;
    let (int_part, frac_part) = if digits.len() > frac {
        digits.split_at(digits.len() - frac)
    } else {
        ("", digits.as_str())
    };
    out.push_str(if int_part.is_empty() { "0" } else { int_part });
    let mut fraction = "0".repeat(frac.saturating_sub(frac_part.len()));
    fraction.push_str(frac_part);
    let fraction = fraction.trim_end_matches('0');
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    Some(out)
}

/// `current + increment` as Redis's INCRBYFLOAT prints it, when both are plain decimals
/// whose exact sum fits; None otherwise (the caller uses f64).
pub fn add_text(current: &[u8], increment: &[u8]) -> Option<String> {
    format(add(parse(current)?, parse(increment)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_match_redis_long_double_output() {
        // Expected values are Redis 7.0.15's replies to SET k <a>; INCRBYFLOAT k <b>.
        for (a, b, want) in [
            ("0.1", "0.2", "0.3"),
            ("10.50", "0.1", "10.6"),
            ("10.6", "-5", "5.6"),
            ("5.0e3", "2.0e2", "5200"),
            ("0", "0", "0"),
            ("3", "-3", "0"),
            ("1", "1.5", "2.5"),
            ("-1.25", "0.25", "-1"),
            ("0", "1e-18", "0"),
            ("0", "5e-17", "0.00000000000000005"),
            ("123456789", "0.000000001", "123456789.000000001"),
        ] {
            assert_eq!(
                add_text(a.as_bytes(), b.as_bytes()).as_deref(),
                Some(want),
                "{a} + {b}"
            );
        }
    }

    #[test]
    fn non_decimals_and_overflow_fall_back() {
        assert_eq!(parse(b"inf"), None);
        assert_eq!(parse(b" 1"), None);
        assert_eq!(parse(b"1e"), None);
        assert_eq!(parse(b"."), None);
        assert_eq!(add_text(b"1e300", b"1e-300"), None);
        assert_eq!(
            parse(b"1.5e2"),
            Some(Decimal {
                mantissa: 15,
                exp: 1
            })
        );
    }
}
