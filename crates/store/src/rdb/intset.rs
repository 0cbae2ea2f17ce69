//! Intsets as RDB files carry them (SET_INTSET): a sorted array of distinct integers, all
//! of one width.
//!
//! Format: `[width in bytes: u32 LE, 2 4 or 8][count: u32 LE][count integers, LE, ascending]`

/// Decodes and validates an intset: width, length, strictly ascending members.
pub fn decode(blob: &[u8]) -> Result<Vec<i64>, &'static str> {
    if blob.len() < 8 {
        return Err("intset shorter than its header");
    }
    let width = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    if !matches!(width, 2 | 4 | 8) {
        return Err("intset with an invalid integer width");
    }
    let count = u32::from_le_bytes([blob[4], blob[5], blob[6], blob[7]]) as usize;
    if count.checked_mul(width).and_then(|n| n.checked_add(8)) != Some(blob.len()) {
        return Err("intset length does not match the blob");
    }
    let mut out = Vec::with_capacity(count);
    for chunk in blob[8..].chunks_exact(width) {
        let n = match width {
            2 => i64::from(i16::from_le_bytes([chunk[0], chunk[1]])),
            4 => i64::from(i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])),
            _ => {
                let mut w = [0u8; 8];
                w.copy_from_slice(chunk);
                i64::from_le_bytes(w)
            }
        };
        if out.last().is_some_and(|&prev| prev >= n) {
            return Err("intset members not in strictly ascending order");
        }
        out.push(n);
    }
    Ok(out)
}

/// Encodes sorted distinct integers with the narrowest width that holds them all.
pub fn encode(sorted: &[i64], out: &mut Vec<u8>) {
    let fits = |lo: i64, hi: i64| {
        sorted.first().is_none_or(|&a| a >= lo) && sorted.last().is_none_or(|&b| b <= hi)
    };
    let width: usize = if fits(i64::from(i16::MIN), i64::from(i16::MAX)) {
        2
    } else if fits(i64::from(i32::MIN), i64::from(i32::MAX)) {
        4
    } else {
        8
    };
    out.clear();
    out.reserve(8 + width * sorted.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(sorted.len() as u32).to_le_bytes());
    for &n in sorted {
        out.extend_from_slice(&n.to_le_bytes()[..width]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdb_intset_every_width() {
        let mut blob = Vec::new();
        for (set, width) in [
            (vec![], 2usize),
            (vec![-32768, 0, 32767], 2),
            (vec![-32769, 5], 4),
            (vec![1, i64::from(i32::MAX)], 4),
            (vec![i64::MIN, -1, i64::MAX], 8),
            (vec![2_147_483_648], 8),
        ] {
            encode(&set, &mut blob);
            assert_eq!(blob[0] as usize, width, "{set:?}");
            assert_eq!(blob.len(), 8 + width * set.len());
            assert_eq!(decode(&blob).expect("valid"), set);
        }
        // Hand-built: width 2, members -2, 7.
        assert_eq!(
            decode(&[2, 0, 0, 0, 2, 0, 0, 0, 0xfe, 0xff, 7, 0]).expect("valid"),
            vec![-2, 7]
        );
    }

    #[test]
    fn rdb_intset_refuses_damage() {
        assert!(decode(&[3, 0, 0, 0, 0, 0, 0, 0]).is_err(), "width");
        assert!(decode(&[2, 0, 0, 0, 2, 0, 0, 0, 1, 0]).is_err(), "short");
        assert!(
            decode(&[2, 0, 0, 0, 2, 0, 0, 0, 7, 0, 7, 0]).is_err(),
            "duplicate"
        );
        assert!(
            decode(&[2, 0, 0, 0, 2, 0, 0, 0, 7, 0, 1, 0]).is_err(),
            "order"
        );
        assert!(
            decode(&[2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]).is_err(),
            "huge count"
        );
    }
}
