//! Strict decimal integer parsing with Redis's `string2ll` rules, shared by the request parser,
//! the reply decoder and (re-exported) by command code that parses integer arguments.

/// Parses `s` as a signed 64-bit decimal integer the way Redis's `string2ll` does.
///
/// Accepted: `0`, or an optional `-` followed by a digit `1`-`9` and further digits, with a value
/// inside `i64`. Rejected (returns `None`): the empty string, `+`, spaces anywhere, leading
/// zeros (`01`, `-0`), any non-digit, overflow, and anything 21 bytes or longer.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    // Redis refuses strings of LONG_STR_SIZE (21) bytes or more up front.
    if s.is_empty() || s.len() >= 21 {
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
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        // i64::MIN's magnitude is i64::MAX + 1.
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::parse_i64;

    #[test]
    fn accepts_canonical_integers() {
        let ok: &[(&[u8], i64)] = &[
            (b"0", 0),
            (b"1", 1),
            (b"-1", -1),
            (b"10", 10),
            (b"1234567890", 1_234_567_890),
            (b"9223372036854775807", i64::MAX),
            (b"-9223372036854775808", i64::MIN),
        ];
        for (s, v) in ok {
            assert_eq!(parse_i64(s), Some(*v), "{}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn rejects_everything_else() {
        let bad: &[&[u8]] = &[
            b"",
            b"-",
            b"+1",
            b"01",
            b"00",
            b"-0",
            b"-01",
            b" 1",
            b"1 ",
            b"1a",
            b"a",
            b"1.0",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"99999999999999999999",
            b"000000000000000000001",
            b"18446744073709551616",
        ];
        for s in bad {
            assert_eq!(parse_i64(s), None, "{}", String::from_utf8_lossy(s));
        }
    }
}
