//! Listpacks, Redis's packed sequences: as RDB files carry them (the blob of a
//! HASH_LISTPACK, ZSET_LISTPACK or packed LIST_QUICKLIST_2 node; `rdb`) and as a stream
//! keeps its nodes in memory (`stream.rs`, which also changes one in place): a strict
//! decoder, an element reader, an encoder, and the elements' sizes.
//!
//! Format:
//! ```text
//! [total bytes: u32 LE][count: u16 LE, 65535 = count unknown] entry* [0xFF]
//! entry = encoding (+ data) + backlen
//!   0xxxxxxx                      7-bit unsigned integer
//!   10xxxxxx  data                string, length 0..63
//!   110xxxxx  yyyyyyyy            13-bit signed integer (x high bits)
//!   1110xxxx  yyyyyyyy  data      string, length 0..4095 (x high bits)
//!   11110000  len:u32 LE  data    string
//!   11110001  i16 LE / 11110010 i24 LE / 11110011 i32 LE / 11110100 i64 LE
//! backlen = the byte length of encoding + data, 7 bits per byte, most significant
//!   first; every byte but the first has bit 7 set (it is read from the right).
//! ```
//! Integers stand for their decimal strings. The encoder stores a string as an integer
//! exactly when it is a canonical decimal (what Redis does, so that the same data gives
//! the same bytes).

use crate::str_ref::StrRef;
use crate::types::string::parse_i64;

/// Bytes of the header (total bytes u32 LE, count u16 LE).
pub const HEADER: usize = 6;
/// The end byte.
pub const END: u8 = 0xff;
/// Header count meaning "walk the entries to count them".
const COUNT_UNKNOWN: u16 = u16::MAX;

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
fn int_len(n: i64) -> usize {
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
fn str_header_len(n: usize) -> usize {
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

fn backlen(len: usize) -> ([u8; 5], usize) {
    let mut out = [0u8; 5];
    let n = backlen_len(len);
    for (k, slot) in out[..n].iter_mut().enumerate() {
        let shift = 7 * (n - 1 - k);
        let bits = ((len >> shift) & 0x7f) as u8;
        *slot = if k == 0 { bits } else { bits | 0x80 };
    }
    (out, n)
}

fn le_int(bytes: &[u8]) -> i64 {
    // Sign-extend a little-endian two's-complement integer of 1..=8 bytes.
    let mut word = [0u8; 8];
    word[8 - bytes.len()..].copy_from_slice(bytes);
    i64::from_le_bytes(word) >> (8 * (8 - bytes.len()))
}

/// Reads the entry at `at`: (the element, the length of encoding + data).
pub fn entry_at(blob: &[u8], at: usize) -> Result<(StrRef<'_>, usize), &'static str> {
    const SHORT: &str = "listpack entry runs past the end of the blob";
    let byte = |k: usize| blob.get(at + k).copied().ok_or(SHORT);
    let slice = |from: usize, n: usize| blob.get(at + from..at + from + n).ok_or(SHORT);
    let b = byte(0)?;
    Ok(match b {
        0x00..=0x7f => (StrRef::Int(i64::from(b)), 1),
        0x80..=0xbf => {
            let n = usize::from(b & 0x3f);
            (StrRef::Bytes(slice(1, n)?), 1 + n)
        }
        0xc0..=0xdf => {
            let u = (i64::from(b & 0x1f) << 8) | i64::from(byte(1)?);
            (StrRef::Int(if u >= 1 << 12 { u - (1 << 13) } else { u }), 2)
        }
        0xe0..=0xef => {
            let n = (usize::from(b & 0x0f) << 8) | usize::from(byte(1)?);
            (StrRef::Bytes(slice(2, n)?), 2 + n)
        }
        0xf0 => {
            let mut len = [0u8; 4];
            len.copy_from_slice(slice(1, 4)?);
            let n = usize::try_from(u32::from_le_bytes(len)).map_err(|_| SHORT)?;
            (StrRef::Bytes(slice(5, n)?), 5 + n)
        }
        0xf1 => (StrRef::Int(le_int(slice(1, 2)?)), 3),
        0xf2 => (StrRef::Int(le_int(slice(1, 3)?)), 4),
        0xf3 => (StrRef::Int(le_int(slice(1, 4)?)), 5),
        0xf4 => (StrRef::Int(le_int(slice(1, 8)?)), 9),
        _ => return Err("invalid listpack entry encoding"),
    })
}

/// Decodes and validates a whole listpack: header length, every entry and its backlen,
/// the count, the end byte with nothing after it.
pub fn decode(blob: &[u8]) -> Result<Vec<StrRef<'_>>, &'static str> {
    if blob.len() < HEADER + 1 {
        return Err("listpack shorter than its header");
    }
    let total = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]);
    if usize::try_from(total).ok() != Some(blob.len()) {
        return Err("listpack header length does not match the blob");
    }
    let count = u16::from_le_bytes([blob[4], blob[5]]);
    let mut items = Vec::new();
    let mut at = HEADER;
    loop {
        match blob.get(at) {
            None => return Err("listpack without its end byte"),
            Some(&END) => break,
            Some(_) => {}
        }
        let (item, len) = entry_at(blob, at)?;
        let (want, n) = backlen(len);
        if blob.get(at + len..at + len + n) != Some(&want[..n]) {
            return Err("listpack entry with a wrong backlen");
        }
        items.push(item);
        at += len + n;
    }
    if at + 1 != blob.len() {
        return Err("bytes after the listpack end");
    }
    if count != COUNT_UNKNOWN && usize::from(count) != items.len() {
        return Err("listpack count does not match its entries");
    }
    Ok(items)
}

/// Builds a listpack entry by entry.
pub struct Builder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            buf: vec![0; HEADER],
            count: 0,
        }
    }
}

impl Builder {
    /// Empties the builder for a new listpack, keeping its allocation.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.buf.resize(HEADER, 0);
        self.count = 0;
    }

    /// Appends an element, as an integer when it is a canonical decimal.
    pub fn push(&mut self, item: &[u8]) {
        push(&mut self.buf, item);
        self.count += 1;
    }

    /// Appends an integer element.
    pub fn push_int(&mut self, n: i64) {
        push_int(&mut self.buf, n);
        self.count += 1;
    }

    /// Appends a string element as a string, even when it looks like an integer.
    pub fn push_str(&mut self, s: &[u8]) {
        push_str(&mut self.buf, s);
        self.count += 1;
    }

    /// Bytes the finished listpack will take.
    #[cfg(test)]
    pub fn byte_len(&self) -> usize {
        self.buf.len() + 1
    }

    /// Completes the header and the end byte; the blob stays valid until the next push
    /// or clear.
    pub fn finish(&mut self) -> &[u8] {
        self.buf.push(END);
        let total = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let count = u16::try_from(self.count).unwrap_or(COUNT_UNKNOWN);
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        &self.buf
    }
}

/// Writes an element at the end of `b` (encoding, data, backlen), as an integer when it
/// is a canonical decimal. `b` is a listpack's bytes without their end byte.
pub fn push(b: &mut Vec<u8>, item: &[u8]) {
    match parse_i64(item) {
        Some(n) => push_int(b, n),
        None => push_str(b, item),
    }
}

/// Writes an integer element at the end of `b`.
pub fn push_int(b: &mut Vec<u8>, n: i64) {
    let start = b.len();
    match int_len(n) {
        1 => b.push(n as u8),
        2 => {
            let u = (n as u16) & 0x1fff;
            b.push(0xc0 | (u >> 8) as u8);
            b.push((u & 0xff) as u8);
        }
        3 => {
            b.push(0xf1);
            b.extend_from_slice(&(n as i16).to_le_bytes());
        }
        4 => {
            b.push(0xf2);
            b.extend_from_slice(&(n as i32).to_le_bytes()[..3]);
        }
        5 => {
            b.push(0xf3);
            b.extend_from_slice(&(n as i32).to_le_bytes());
        }
        _ => {
            b.push(0xf4);
            b.extend_from_slice(&n.to_le_bytes());
        }
    }
    finish_element(b, start);
}

/// Writes a string element at the end of `b`, even when it looks like an integer.
pub fn push_str(b: &mut Vec<u8>, s: &[u8]) {
    let start = b.len();
    match str_header_len(s.len()) {
        1 => b.push(0x80 | s.len() as u8),
        2 => {
            b.push(0xe0 | (s.len() >> 8) as u8);
            b.push((s.len() & 0xff) as u8);
        }
        _ => {
            b.push(0xf0);
            // Elements of 4 GiB and more never reach a listpack (the writer puts them in
            // plain quicklist nodes; streams refuse entries past 1 GiB).
            b.extend_from_slice(&(s.len() as u32).to_le_bytes());
        }
    }
    b.extend_from_slice(s);
    finish_element(b, start);
}

fn finish_element(b: &mut Vec<u8>, start: usize) {
    let (bl, n) = backlen(b.len() - start);
    b.extend_from_slice(&bl[..n]);
}

/// The element at `at` of a listpack known to be valid (built here, or checked by
/// [`decode`] when loaded) and the offset of the next one; None at the end byte (or,
/// defensively, on damage).
pub fn element(blob: &[u8], at: usize) -> Option<(StrRef<'_>, usize)> {
    if blob.get(at).is_none_or(|&b| b == END) {
        return None;
    }
    let (item, len) = entry_at(blob, at).ok()?;
    Some((item, at + len + backlen_len(len)))
}

/// Rewrites the header of a listpack held whole in `b` (end byte included): its total
/// bytes and its element count (65535: unknown, as Redis writes a count that large).
pub fn set_header(b: &mut [u8], count: usize) {
    let total = b.len() as u32;
    b[..4].copy_from_slice(&total.to_le_bytes());
    let count = u16::try_from(count).unwrap_or(COUNT_UNKNOWN);
    b[4..6].copy_from_slice(&count.to_le_bytes());
}

/// The element count in a listpack's header (None when unknown).
pub fn header_count(b: &[u8]) -> Option<usize> {
    let n = u16::from_le_bytes([b[4], b[5]]);
    (n != COUNT_UNKNOWN).then_some(usize::from(n))
}

/// Replaces the integer element at `at` with `n` (the bytes after it move when its size
/// changes) and rewrites the header's total; the element count stays.
pub fn replace_int(b: &mut Vec<u8>, at: usize, n: i64) {
    let Some((_, next)) = element(b, at) else { return };
    let mut enc = Vec::with_capacity(10);
    push_int(&mut enc, n);
    b.splice(at..next, enc);
    let total = b.len() as u32;
    b[..4].copy_from_slice(&total.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(items: &[StrRef<'_>]) -> Vec<Vec<u8>> {
        items.iter().map(StrRef::to_vec).collect()
    }

    /// A listpack assembled by hand from (encoding + data) pieces, backlens added.
    fn hand_built(entries: &[&[u8]]) -> Vec<u8> {
        let mut blob = vec![0u8; HEADER];
        for e in entries {
            blob.extend_from_slice(e);
            let (bl, n) = backlen(e.len());
            blob.extend_from_slice(&bl[..n]);
        }
        blob.push(END);
        let total = blob.len() as u32;
        blob[..4].copy_from_slice(&total.to_le_bytes());
        blob[4..6].copy_from_slice(&(entries.len() as u16).to_le_bytes());
        blob
    }

    #[test]
    fn rdb_listpack_decodes_every_encoding() {
        let s100 = [b's'; 100];
        let mut str12 = vec![0xe0, 100];
        str12.extend_from_slice(&s100);
        let s5000 = vec![b'L'; 5000];
        let mut str32 = vec![0xf0];
        str32.extend_from_slice(&5000u32.to_le_bytes());
        str32.extend_from_slice(&s5000);
        let entries: Vec<&[u8]> = vec![
            &[0x05],                                                 // 7-bit: 5
            &[0x7f],                                                 // 7-bit: 127
            &[0x83, b'a', b'b', b'c'],                               // 6-bit string
            &[0xc0 | 0x10, 0x00],                                    // 13-bit: -4096
            &[0xc0 | 0x0f, 0xff],                                    // 13-bit: 4095
            &str12,                                                  // 12-bit string
            &str32,                                                  // 32-bit string
            &[0xf1, 0x00, 0x80],                                     // i16: -32768
            &[0xf2, 0xff, 0xff, 0x7f],                               // i24: 8388607
            &[0xf2, 0x00, 0x00, 0x80],                               // i24: -8388608
            &[0xf3, 0x00, 0x00, 0x00, 0x80],                         // i32: i32::MIN
            &[0xf4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], // i64::MAX
            &[0xf4, 0, 0, 0, 0, 0, 0, 0, 0x80],                      // i64::MIN
            &[0x80],                                                 // empty string
        ];
        let blob = hand_built(&entries);
        let items = decode(&blob).expect("valid listpack");
        let want: Vec<Vec<u8>> = vec![
            b"5".to_vec(),
            b"127".to_vec(),
            b"abc".to_vec(),
            b"-4096".to_vec(),
            b"4095".to_vec(),
            s100.to_vec(),
            s5000.clone(),
            b"-32768".to_vec(),
            b"8388607".to_vec(),
            b"-8388608".to_vec(),
            i32::MIN.to_string().into_bytes(),
            i64::MAX.to_string().into_bytes(),
            i64::MIN.to_string().into_bytes(),
            b"".to_vec(),
        ];
        assert_eq!(owned(&items), want);
    }

    #[test]
    fn rdb_listpack_encoder_round_trips_and_matches_sizes() {
        let long = vec![b'q'; 70_000];
        let mid = vec![b'm'; 300];
        let values: Vec<Vec<u8>> = [
            "0",
            "127",
            "128",
            "-1",
            "-4096",
            "4095",
            "4096",
            "-4097",
            "32767",
            "-32768",
            "32768",
            "8388607",
            "-8388608",
            "8388608",
            "2147483647",
            "-2147483648",
            "2147483648",
            "9223372036854775807",
            "-9223372036854775808",
            "-0",
            "01",
            "+1",
            "",
            "x",
            "9223372036854775808",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .chain([long, mid])
        .collect();
        let mut b = Builder::default();
        let mut expected_size = HEADER + 1;
        for v in &values {
            b.push(v);
            expected_size += entry_size(v);
        }
        assert_eq!(b.byte_len(), expected_size);
        let blob = b.finish().to_vec();
        assert_eq!(blob.len(), expected_size);
        assert_eq!(owned(&decode(&blob).expect("valid")), values);
        // Canonical integers became integers, the rest strings.
        let items = decode(&blob).expect("valid");
        assert_eq!(items[0], StrRef::Int(0));
        assert_eq!(items[19], StrRef::Bytes(b"-0"));
        b.clear();
        assert_eq!(
            decode(b.finish()).expect("empty is valid"),
            Vec::<StrRef<'_>>::new()
        );
    }

    #[test]
    fn rdb_listpack_refuses_damage() {
        let good = hand_built(&[&[0x83, b'a', b'b', b'c'], &[0x05]]);
        assert!(decode(&good).is_ok());
        let mut bad = good.clone();
        bad[0] += 1;
        assert!(decode(&bad).is_err(), "total bytes");
        let mut bad = good.clone();
        bad[4] = 3;
        assert!(decode(&bad).is_err(), "count");
        let mut unknown = good.clone();
        unknown[4] = 0xff;
        unknown[5] = 0xff;
        assert_eq!(decode(&unknown).expect("unknown count").len(), 2);
        let mut bad = good.clone();
        bad[HEADER + 4] = 9;
        assert!(decode(&bad).is_err(), "backlen");
        let mut bad = good.clone();
        bad[HEADER] = 0x8f;
        assert!(decode(&bad).is_err(), "string past the end");
        let mut bad = good.clone();
        bad[HEADER] = 0xf7;
        assert!(decode(&bad).is_err(), "bad encoding");
        assert!(decode(&good[..good.len() - 1]).is_err());
    }
}
