//! CRC-64 as Redis computes it over RDB files and DUMP payloads: the Jones polynomial
//! (0xad93d23594c935a9), input and output reflected, initial value 0, no final xor. Check
//! value: `crc64(0, b"123456789") == 0xe9c6d914c4b8d9ca`.
//!
//! Slice-by-8 (eight 256-entry tables built at compile time): snapshots of many
//! gigabytes go through this, one byte at a time would be the slowest part of a load.

/// The Jones polynomial, bit-reversed for the reflected (LSB-first) algorithm.
const POLY_REFLECTED: u64 = 0x95ac_9329_ac4b_c9b5;

const fn tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    // t[k][i]: the CRC of byte i followed by k zero bytes.
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 8 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            k += 1;
        }
        i += 1;
    }
    t
}

static TABLES: [[u64; 256]; 8] = tables();

/// Extends `crc` (0 to start) over `data`.
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let t = &TABLES;
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = crc ^ u64::from_le_bytes(word);
        crc = t[7][(v & 0xff) as usize]
            ^ t[6][((v >> 8) & 0xff) as usize]
            ^ t[5][((v >> 16) & 0xff) as usize]
            ^ t[4][((v >> 24) & 0xff) as usize]
            ^ t[3][((v >> 32) & 0xff) as usize]
            ^ t[2][((v >> 40) & 0xff) as usize]
            ^ t[1][((v >> 48) & 0xff) as usize]
            ^ t[0][(v >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time reference, straight from the definition.
    fn slow(data: &[u8]) -> u64 {
        let mut crc = 0u64;
        for &b in data {
            crc ^= u64::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ POLY_REFLECTED
                } else {
                    crc >> 1
                };
            }
        }
        crc
    }

    #[test]
    fn rdb_crc64_check_value() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc64(0, b""), 0);
    }

    #[test]
    fn rdb_crc64_incremental_matches_reference() {
        let data: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for split in [0, 1, 7, 8, 9, 100, 999, 1000] {
            let (a, b) = data.split_at(split);
            assert_eq!(crc64(crc64(0, a), b), slow(&data), "split at {split}");
        }
    }
}
