//! Decoders for the compact blobs of older RDB files that Redis 7.0 still reads: the
//! ziplist (LIST_ZIPLIST, LIST_QUICKLIST nodes, ZSET_ZIPLIST, HASH_ZIPLIST; Redis 3.2
//! to 6.2) and the zipmap (HASH_ZIPMAP; before Redis 2.6). Basalt never writes them.
//!
//! Ziplist format:
//! ```text
//! [total bytes: u32 LE][offset of the last entry: u32 LE][count: u16 LE, 65535 = unknown]
//! entry* [0xFF]
//! entry = prevlen encoding data
//!   prevlen: 1 byte (< 254), or 0xFE + u32 LE: the previous entry's total length
//!   00xxxxxx                   string, length 0..63
//!   01xxxxxx yyyyyyyy          string, 14-bit length (big-endian)
//!   10000000 len:u32 BE        string
//!   11000000 i16 LE | 11010000 i32 LE | 11100000 i64 LE | 11110000 i24 LE | 11111110 i8
//!   1111xxxx (x in 1..=13)     the integer x - 1, no data
//! ```
//! Zipmap format:
//! ```text
//! [count: u8, 254 = unknown] (len field len value free value padding)* [0xFF]
//!   len: 1 byte (< 254), or 0xFE + u32 LE; free: 1 byte, unused bytes after the value
//! ```

use crate::entry::StrRef;

fn le_int(bytes: &[u8]) -> i64 {
    let mut word = [0u8; 8];
    word[8 - bytes.len()..].copy_from_slice(bytes);
    i64::from_le_bytes(word) >> (8 * (8 - bytes.len()))
}

fn u32_le(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[..4]);
    u32::from_le_bytes(w)
}

/// Decodes and validates a whole ziplist: header, prevlens, entries, count, last-entry
/// offset and end byte.
pub fn ziplist(blob: &[u8]) -> Result<Vec<StrRef<'_>>, &'static str> {
    const SHORT: &str = "ziplist entry runs past the end of the blob";
    if blob.len() < 11 {
        return Err("ziplist shorter than its header");
    }
    if usize::try_from(u32_le(blob)).ok() != Some(blob.len()) {
        return Err("ziplist header length does not match the blob");
    }
    let tail = usize::try_from(u32_le(&blob[4..])).map_err(|_| SHORT)?;
    let count = u16::from_le_bytes([blob[8], blob[9]]);
    let mut items = Vec::new();
    let mut at = 10;
    let mut prev_len = 0usize;
    let mut last = 10;
    loop {
        let first = *blob.get(at).ok_or("ziplist without its end byte")?;
        if first == 0xff {
            break;
        }
        let slice = |from: usize, n: usize| blob.get(at + from..at + from + n).ok_or(SHORT);
        let (prevlen, mut h) = if first < 254 {
            (usize::from(first), 1)
        } else {
            (usize::try_from(u32_le(slice(1, 4)?)).map_err(|_| SHORT)?, 5)
        };
        if prevlen != prev_len {
            return Err("ziplist entry with a wrong prevlen");
        }
        let enc = *blob.get(at + h).ok_or(SHORT)?;
        h += 1;
        let item = match enc >> 6 {
            0 => {
                let n = usize::from(enc & 0x3f);
                let s = slice(h, n)?;
                h += n;
                StrRef::Bytes(s)
            }
            1 => {
                let n = (usize::from(enc & 0x3f) << 8)
                    | usize::from(*slice(h, 1)?.first().ok_or(SHORT)?);
                h += 1;
                let s = slice(h, n)?;
                h += n;
                StrRef::Bytes(s)
            }
            2 if enc == 0x80 => {
                let mut w = [0u8; 4];
                w.copy_from_slice(slice(h, 4)?);
                let n = usize::try_from(u32::from_be_bytes(w)).map_err(|_| SHORT)?;
                h += 4;
                let s = slice(h, n)?;
                h += n;
                StrRef::Bytes(s)
            }
            2 => return Err("invalid ziplist string encoding"),
            _ => {
                let width = match enc {
                    0xc0 => 2,
                    0xd0 => 4,
                    0xe0 => 8,
                    0xf0 => 3,
                    0xfe => 1,
                    0xf1..=0xfd => 0,
                    _ => return Err("invalid ziplist integer encoding"),
                };
                let n = if width == 0 {
                    i64::from(enc & 0x0f) - 1
                } else {
                    le_int(slice(h, width)?)
                };
                h += width;
                StrRef::Int(n)
            }
        };
        items.push(item);
        last = at;
        prev_len = h;
        at += h;
    }
    if at + 1 != blob.len() {
        return Err("bytes after the ziplist end");
    }
    if tail != last {
        return Err("ziplist last-entry offset does not match its entries");
    }
    if count != u16::MAX && usize::from(count) != items.len() {
        return Err("ziplist count does not match its entries");
    }
    Ok(items)
}

/// Decodes a zipmap into field, value, field, value, ...
pub fn zipmap(blob: &[u8]) -> Result<Vec<&[u8]>, &'static str> {
    const SHORT: &str = "zipmap entry runs past the end of the blob";
    let count = *blob.first().ok_or(SHORT)?;
    let mut at = 1;
    let mut out = Vec::new();
    let read_len = |at: &mut usize| -> Result<Option<usize>, &'static str> {
        let b = *blob.get(*at).ok_or(SHORT)?;
        *at += 1;
        match b {
            0xff => Ok(None),
            0xfe => {
                let v = blob.get(*at..*at + 4).ok_or(SHORT)?;
                *at += 4;
                Ok(Some(usize::try_from(u32_le(v)).map_err(|_| SHORT)?))
            }
            n => Ok(Some(usize::from(n))),
        }
    };
    while let Some(flen) = read_len(&mut at)? {
        let field = blob.get(at..at + flen).ok_or(SHORT)?;
        at += flen;
        let vlen = read_len(&mut at)?.ok_or("zipmap field without a value")?;
        let free = usize::from(*blob.get(at).ok_or(SHORT)?);
        at += 1;
        let value = blob.get(at..at + vlen).ok_or(SHORT)?;
        at += vlen + free;
        out.push(field);
        out.push(value);
    }
    if at != blob.len() {
        return Err("bytes after the zipmap end");
    }
    if count < 254 && usize::from(count) != out.len() / 2 {
        return Err("zipmap count does not match its entries");
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests_support {
    /// A ziplist assembled from (encoding + data) pieces, prevlens and header added.
    pub fn hand_built(entries: &[&[u8]]) -> Vec<u8> {
        let mut blob = vec![0u8; 10];
        let mut prev = 0usize;
        let mut last = 10usize;
        for e in entries {
            last = blob.len();
            let start = blob.len();
            if prev < 254 {
                blob.push(prev as u8);
            } else {
                blob.push(0xfe);
                blob.extend_from_slice(&(prev as u32).to_le_bytes());
            }
            blob.extend_from_slice(e);
            prev = blob.len() - start;
        }
        blob.push(0xff);
        let total = blob.len() as u32;
        blob[..4].copy_from_slice(&total.to_le_bytes());
        blob[4..8].copy_from_slice(&(last as u32).to_le_bytes());
        blob[8..10].copy_from_slice(&(entries.len() as u16).to_le_bytes());
        blob
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::hand_built;
    use super::*;

    #[test]
    fn rdb_ziplist_decodes_every_encoding() {
        let s300 = vec![b'z'; 300];
        let mut str14 = vec![0x40 | 0x01, 0x2c];
        str14.extend_from_slice(&s300);
        let mut str32 = vec![0x80, 0, 0, 0x01, 0x2c];
        str32.extend_from_slice(&s300);
        let entries: Vec<&[u8]> = vec![
            &[0x02, b'h', b'i'],
            &str14,
            &str32,
            &[0xc0, 0x00, 0x80],
            &[0xd0, 0xff, 0xff, 0xff, 0x7f],
            &[0xe0, 0, 0, 0, 0, 0, 0, 0, 0x80],
            &[0xf0, 0x00, 0x00, 0x80],
            &[0xfe, 0xff],
            &[0xf1],
            &[0xfd],
        ];
        let blob = hand_built(&entries);
        let items: Vec<Vec<u8>> = ziplist(&blob)
            .expect("valid")
            .iter()
            .map(StrRef::to_vec)
            .collect();
        let want: Vec<Vec<u8>> = vec![
            b"hi".to_vec(),
            s300.clone(),
            s300,
            b"-32768".to_vec(),
            b"2147483647".to_vec(),
            i64::MIN.to_string().into_bytes(),
            b"-8388608".to_vec(),
            b"-1".to_vec(),
            b"0".to_vec(),
            b"12".to_vec(),
        ];
        assert_eq!(items, want);
        let mut bad = blob.clone();
        bad[4] ^= 1;
        assert!(ziplist(&bad).is_err(), "tail offset");
        let mut bad = blob.clone();
        bad[8] = 3;
        assert!(ziplist(&bad).is_err(), "count");
        let mut bad = blob.clone();
        bad[14] = 7;
        assert!(ziplist(&bad).is_err(), "prevlen of the second entry");
        assert!(ziplist(&blob[..blob.len() - 1]).is_err());
        assert_eq!(ziplist(&hand_built(&[])).expect("empty").len(), 0);
    }

    #[test]
    fn rdb_zipmap_decodes() {
        let mut blob = vec![2u8];
        blob.extend_from_slice(&[3, b'f', b'o', b'o', 3, 2, b'b', b'a', b'r', b'.', b'.']);
        blob.extend_from_slice(&[0xfe, 1, 0, 0, 0, b'k', 0xfe, 2, 0, 0, 0, 0, b'v', b'w']);
        blob.push(0xff);
        assert_eq!(
            zipmap(&blob).expect("valid"),
            vec![&b"foo"[..], b"bar", b"k", b"vw"]
        );
        let mut bad = blob.clone();
        bad[0] = 3;
        assert!(zipmap(&bad).is_err());
        assert!(zipmap(&blob[..blob.len() - 1]).is_err());
    }
}
