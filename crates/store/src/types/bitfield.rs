//! BITFIELD's integer fields: reading and writing an unsigned (1 to 63 bits) or signed
//! (1 to 64 bits) integer at any bit offset of a string, most significant bit first (bit
//! 0 is the top bit of byte 0, as SETBIT counts), and Redis's overflow rules for SET and
//! INCRBY (WRAP, SAT, FAIL), reproduced operation for operation so that every reply and
//! every stored byte match Redis 7.0's.

/// What an out-of-range result does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Keeps the low bits (two's complement for signed fields).
    Wrap,
    /// Clamps to the type's minimum or maximum.
    Sat,
    /// Changes nothing; the reply is a null.
    Fail,
}

/// The unsigned value of `bits` bits at bit `offset`; bytes past `buf`'s end read as 0.
pub fn get_unsigned(buf: &[u8], offset: u64, bits: u32) -> u64 {
    let mut value = 0u64;
    for i in 0..u64::from(bits) {
        let at = offset + i;
        let byte = usize::try_from(at >> 3)
            .ok()
            .and_then(|b| buf.get(b))
            .copied()
            .unwrap_or(0);
        value = value << 1 | u64::from(byte >> (7 - (at & 7)) & 1);
    }
    value
}

/// The signed value of `bits` bits at bit `offset` (the top bit is the sign).
pub fn get_signed(buf: &[u8], offset: u64, bits: u32) -> i64 {
    let mut value = get_unsigned(buf, offset, bits) as i64;
    if bits < 64 && value & (1i64 << (bits - 1)) != 0 {
        value |= -1i64 << bits;
    }
    value
}

/// Writes the low `bits` bits of `value` at bit `offset`. `buf` must reach the field's
/// last bit.
pub fn set(buf: &mut [u8], offset: u64, bits: u32, value: u64) {
    for i in 0..u64::from(bits) {
        let at = offset + i;
        let bit = (value >> (u64::from(bits) - 1 - i)) & 1;
        let byte = &mut buf[(at >> 3) as usize];
        let shift = 7 - (at & 7);
        *byte = (*byte & !(1 << shift)) | ((bit as u8) << shift);
    }
}

/// The value an overflowing result takes: wrapped for WRAP, the limit for SAT (FAIL
/// ignores it).
fn resolve<T>(overflow: Overflow, limit: T, wrapped: impl FnOnce() -> T) -> T {
    if overflow == Overflow::Wrap {
        wrapped()
    } else {
        limit
    }
}

/// Whether `value + incr` leaves the unsigned `bits`-bit range, and if so the value WRAP
/// or SAT gives (FAIL ignores it). SET checks its value with `incr` 0.
pub fn unsigned_overflow(value: u64, incr: i64, bits: u32, overflow: Overflow) -> Option<u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = value.wrapping_neg() as i64;
    let wrapped = || {
        let mask = if bits >= 64 { 0 } else { u64::MAX << bits };
        value.wrapping_add(incr as u64) & !mask
    };
    let limit = if value > max || (incr > 0 && incr > max_incr) {
        max
    } else if incr < 0 && incr < min_incr {
        0
    } else {
        return None;
    };
    Some(resolve(overflow, limit, wrapped))
}

/// Whether `value + incr` leaves the signed `bits`-bit range, and if so the value WRAP
/// or SAT gives. The comparisons are Redis's, including those it makes in wrapping
/// arithmetic for 64-bit fields.
pub fn signed_overflow(value: i64, incr: i64, bits: u32, overflow: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let wrapped = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1u64 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    let limit = if value > max
        || (bits != 64 && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr)
    {
        max
    } else if value < min
        || (bits != 64 && incr < min_incr)
        || (value < 0 && incr < 0 && incr < min_incr)
    {
        min
    } else {
        return None;
    };
    Some(resolve(overflow, limit, wrapped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_at_any_offset() {
        let mut buf = vec![0u8; 10];
        set(&mut buf, 5, 12, 0xabc);
        assert_eq!(get_unsigned(&buf, 5, 12), 0xabc);
        assert_eq!(buf[..3], [0b0000_0101, 0b0101_1110, 0]);
        set(&mut buf, 0, 64, u64::MAX);
        assert_eq!(get_signed(&buf, 0, 64), -1);
        assert_eq!(get_signed(&buf, 3, 4), -1);
        assert_eq!(get_unsigned(&buf, 3, 4), 15);
        // Past the end reads zeros.
        assert_eq!(get_unsigned(&buf, 76, 8), 0);
        assert_eq!(get_unsigned(&[0xff], 4, 8), 0xf0);
    }

    #[test]
    fn overflow_as_redis() {
        // u8: 250 + 10 wraps to 4, saturates at 255; 3 - 5 wraps to 254, saturates at 0.
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Wrap), Some(4));
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Sat), Some(255));
        assert_eq!(unsigned_overflow(250, 5, 8, Overflow::Wrap), None);
        assert_eq!(unsigned_overflow(3, -5, 8, Overflow::Wrap), Some(254));
        assert_eq!(unsigned_overflow(3, -5, 8, Overflow::Sat), Some(0));
        // SET of -1 into u8 (value as u64 > max).
        assert_eq!(unsigned_overflow(u64::MAX, 0, 8, Overflow::Wrap), Some(255));
        // i8: 120 + 10 wraps to -126, saturates at 127; -120 - 10 to 126 and -128.
        assert_eq!(signed_overflow(120, 10, 8, Overflow::Wrap), Some(-126));
        assert_eq!(signed_overflow(120, 10, 8, Overflow::Sat), Some(127));
        assert_eq!(signed_overflow(-120, -10, 8, Overflow::Wrap), Some(126));
        assert_eq!(signed_overflow(-120, -10, 8, Overflow::Sat), Some(-128));
        assert_eq!(signed_overflow(-120, 10, 8, Overflow::Fail), None);
        // i64 at its ends.
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(
            signed_overflow(i64::MIN, -1, 64, Overflow::Sat),
            Some(i64::MIN)
        );
        assert_eq!(signed_overflow(i64::MIN, i64::MAX, 64, Overflow::Sat), None);
    }
}
