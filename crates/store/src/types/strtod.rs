//! SORT's numeric weights, parsed as Redis 7.0 parses them: `strtod` over the value up
//! to its first NUL, an error when it stops before that NUL, sets `ERANGE` (overflow or
//! underflow) or reads NaN.
//!
//! That differs from Rust's `f64` parser both ways: `strtod` takes leading white space,
//! hexadecimal (`0x10` is 16), `infinity` and the empty string (as 0), and stops at an
//! embedded NUL; it rejects `1e999` and `1e-400`, which Rust rounds to infinity and 0.
//! `c/strtod.c` calls the C library Redis uses (in the "C" numeric locale, as both
//! servers run), so SORT accepts and orders exactly the values Redis does.

use std::os::raw::{c_char, c_int};

extern "C" {
    fn basalt_sort_strtod(s: *const c_char, out: *mut f64) -> c_int;
}

/// Values up to this length are copied to the stack for their NUL terminator.
const STACK: usize = 64;

/// The value as SORT weighs it; None when Redis's SORT would reject it.
pub fn sort_weight(bytes: &[u8]) -> Option<f64> {
    let mut stack = [0u8; STACK];
    let mut heap = Vec::new();
    let buf: &[u8] = if bytes.len() < STACK {
        stack[..bytes.len()].copy_from_slice(bytes);
        &stack[..=bytes.len()]
    } else {
        heap.reserve_exact(bytes.len() + 1);
        heap.extend_from_slice(bytes);
        heap.push(0);
        &heap
    };
    let mut out = 0.0;
    // SAFETY: `buf` ends with a NUL, so strtod reads inside it; `out` is a valid f64.
    let ok = unsafe { basalt_sort_strtod(buf.as_ptr().cast::<c_char>(), &mut out) };
    (ok == 1).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::sort_weight;

    #[test]
    fn parses_as_c_strtod() {
        // Each case checked against Redis 7.0.15's SORT.
        assert_eq!(sort_weight(b"2"), Some(2.0));
        assert_eq!(sort_weight(b"-3.5"), Some(-3.5));
        assert_eq!(sort_weight(b""), Some(0.0));
        assert_eq!(sort_weight(b" 1"), Some(1.0));
        assert_eq!(sort_weight(b"0x10"), Some(16.0));
        assert_eq!(sort_weight(b"inf"), Some(f64::INFINITY));
        assert_eq!(sort_weight(b"-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(sort_weight(b"12\0abc"), Some(12.0));
        assert_eq!(sort_weight(b"1 "), None);
        assert_eq!(sort_weight(b"abc"), None);
        assert_eq!(sort_weight(b"nan"), None);
        assert_eq!(sort_weight(b"1e999"), None);
        assert_eq!(sort_weight(b"1e-400"), None);
        let long = format!("{}{}", "0".repeat(100), "7");
        assert_eq!(sort_weight(long.as_bytes()), Some(7.0));
        let long_bad = format!("{}x", "1".repeat(100));
        assert_eq!(sort_weight(long_bad.as_bytes()), None);
    }
}
