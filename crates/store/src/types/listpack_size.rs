//! The sizes of listpack elements, as Redis lays them out in memory and in RDB files:
//! the RDB encoder (`rdb::listpack`) writes them, and streams (`stream.rs`) count them
//! to cut their nodes where Redis's fill up.

use super::string::parse_i64;

/// Bytes the backlen of an element of `len` bytes (encoding and data) takes.
pub fn backlen_len(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16_383 => 2,
        16_384..=2_097_151 => 3,
        2_097_152..=268_435_455 => 4,
        _ => 5,
    }
}

/// Bytes of an integer element's encoding and data.
pub fn int_len(n: i64) -> usize {
    match n {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32_768..=32_767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    }
}

/// Bytes of a string element's encoding header.
pub fn str_header_len(n: usize) -> usize {
    match n {
        0..=63 => 1,
        64..=4095 => 2,
        _ => 5,
    }
}

/// Bytes an element takes in a listpack (encoding, data and backlen): an integer when
/// it is a canonical decimal, as Redis stores it.
pub fn entry_size(item: &[u8]) -> usize {
    let len = match parse_i64(item) {
        Some(n) => int_len(n),
        None => str_header_len(item.len()) + item.len(),
    };
    len + backlen_len(len)
}

/// Bytes an integer element takes (its backlen is always one byte).
pub fn int_entry_size(n: i64) -> usize {
    int_len(n) + 1
}
