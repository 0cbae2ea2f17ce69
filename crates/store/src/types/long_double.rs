//! INCRBYFLOAT and HINCRBYFLOAT arithmetic, as Redis does it: in C `long double`.
//!
//! Redis parses both operands with `strtold`, adds them in `long double` (80-bit
//! extended precision on x86-64) and prints the sum with `%.17Lf`, trailing zeros
//! removed. The printed digits show the binary rounding of values that have no exact
//! binary form (`SET k 869.1`, `INCRBYFLOAT k -0.1` gives "869.09999999999999998"), so
//! neither `f64` nor exact decimal arithmetic reproduces them (an earlier version of
//! this module added in decimal: right for small values only). Rust has no `long
//! double`; `c/long_double.c` does the three steps with the C library, the same
//! `strtold` and `printf` Redis uses, so the replies match byte for byte on the same
//! platform (on one whose `long double` is another format, Redis's differ in the same
//! way).

use std::os::raw::{c_char, c_int};

extern "C" {
    fn basalt_ld_check(s: *const c_char, len: usize, finite: *mut c_int) -> c_int;
    fn basalt_ld_add(
        cur: *const c_char,
        cur_len: usize,
        inc: *const c_char,
        inc_len: usize,
        out: *mut c_char,
        out_len: usize,
    ) -> c_int;
}

/// Redis's `MAX_LONG_DOUBLE_CHARS`: the C side's buffer for an operand and a sum.
const LD_CHARS: usize = 5 * 1024;

/// Why a sum could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// The current value is not a valid long double.
    Current,
    /// The increment is not a valid long double.
    Increment,
    /// The sum is NaN or infinite.
    NotFinite,
}

/// Whether `s` is a valid operand (Redis's `string2ld`), and then whether it is finite.
pub fn check(s: &[u8]) -> Option<bool> {
    let mut finite: c_int = 0;
    // SAFETY: the C function reads `s.len()` bytes from `s` (copying them into a
    // buffer of its own, length checked first) and writes one int.
    let ok = unsafe { basalt_ld_check(s.as_ptr().cast(), s.len(), &mut finite) };
    (ok == 1).then_some(finite == 1)
}

/// `current + increment` as Redis prints it.
pub fn add(current: &[u8], increment: &[u8]) -> Result<Vec<u8>, AddError> {
    let mut out = vec![0u8; LD_CHARS];
    // SAFETY: the C function reads exactly the given lengths from the two inputs and
    // writes at most `out.len()` bytes (snprintf's bound) into `out`.
    let n = unsafe {
        basalt_ld_add(
            current.as_ptr().cast(),
            current.len(),
            increment.as_ptr().cast(),
            increment.len(),
            out.as_mut_ptr().cast(),
            out.len(),
        )
    };
    match n {
        -1 => Err(AddError::Current),
        -2 => Err(AddError::Increment),
        n if n <= 0 => Err(AddError::NotFinite),
        n => {
            out.truncate(n as usize);
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(a: &str, b: &str) -> Result<String, AddError> {
        add(a.as_bytes(), b.as_bytes()).map(|v| String::from_utf8(v).expect("ascii"))
    }

    #[test]
    fn sums_match_redis_7_0_15() {
        // Redis 7.0.15's replies to SET k <a>; INCRBYFLOAT k <b> (x86-64).
        for (a, b, want) in [
            ("0.1", "0.2", "0.3"),
            ("10.50", "0.1", "10.6"),
            ("5.0e3", "2.0e2", "5200"),
            ("3", "-3", "0"),
            ("-1.25", "0.25", "-1"),
            ("0", "1e-18", "0"),
            ("0", "-1e-18", "0"),
            ("0", "5e-17", "0.00000000000000005"),
            ("0.1", "0.7", "0.8"),
            ("1", "0x10", "17"),
            ("1", "0X.8", "1.5"),
            ("1", "1E-2", "1.01"),
            ("100", "1e-20", "100"),
            ("869.1", "-0.1", "869"),
            ("869.2", "-0.1", "869.10000000000000003"),
            ("1099.8", "0", "1099.80000000000000004"),
            ("1000", "99.8", "1099.80000000000000004"),
            ("14117.5", "-0.1", "14117.40000000000000036"),
        ] {
            assert_eq!(sum(a, b).as_deref(), Ok(want), "{a} + {b}");
        }
        // Beyond f64, inside long double: Redis accepts it and prints every digit.
        let big = sum("1e400", "1").expect("finite");
        assert!(
            big.starts_with(
                "10000000000000000000281880683947586514586453433629052038625910693539685534"
            ),
            "{big}"
        );
        assert_eq!(big.len(), 401);
    }

    #[test]
    fn invalid_operands_and_infinite_sums() {
        assert_eq!(sum("x", "1"), Err(AddError::Current));
        assert_eq!(sum("1", " 1"), Err(AddError::Increment));
        assert_eq!(sum("1", "1 "), Err(AddError::Increment));
        assert_eq!(sum("1", "nan"), Err(AddError::Increment));
        assert_eq!(sum("1", ""), Err(AddError::Increment));
        // Every byte must be part of the number: an embedded NUL is not an end.
        assert_eq!(add(b"1", b"1\0x"), Err(AddError::Increment));
        assert_eq!(add(b"\0\0130", b"1"), Err(AddError::Current));
        assert_eq!(sum("1", "1e99999"), Err(AddError::Increment));
        assert_eq!(sum("1", "inf"), Err(AddError::NotFinite));
        assert_eq!(sum("inf", "-inf"), Err(AddError::NotFinite));
        assert_eq!(add(b"1", &[b'1'; LD_CHARS]), Err(AddError::Increment));
        assert_eq!(check(b"inf"), Some(false));
        assert_eq!(check(b"-2.5"), Some(true));
        assert_eq!(check(b"abc"), None);
    }
}
