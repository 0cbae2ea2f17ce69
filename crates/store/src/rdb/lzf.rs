//! LZF, the compression Redis applies to RDB strings (`rdbcompression yes`).
//!
//! Format: a sequence of runs, each opened by a control byte `c`:
//! ```text
//! c < 0x20            literal run: the next c + 1 bytes are copied
//! c >> 5 in 1..=6     back reference: length (c >> 5) + 2, then one byte o,
//!                     distance ((c & 0x1f) << 8 | o) + 1 back from the output's end
//! c >> 5 == 7         long back reference: one byte e, then o; length 7 + e + 2
//! ```
//! A reference may overlap the bytes it produces (a run of one repeated byte).
//!
//! Decompression trusts nothing: references before the start, runs past either end and
//! a total other than the declared length are errors. Compression is a greedy one-pass
//! matcher over a hash of the next three bytes; it gives up as soon as the output would
//! not save space.

/// Longest distance a reference can reach back.
const MAX_DISTANCE: usize = 1 << 13;
/// Longest match one reference can copy (7 + 255 + 2).
const MAX_MATCH: usize = 264;
/// Longest literal run.
const MAX_LITERAL: usize = 32;
/// Most bytes of output one byte of input can produce (a 3-byte long reference copies
/// 264 bytes), so that a declared length beyond this is refused before allocating.
pub const MAX_RATIO: usize = 88;

const HASH_BITS: u32 = 13;

/// Decompresses `input`, which must produce exactly `out_len` bytes. The caller bounds
/// `out_len` (at most `input.len() * MAX_RATIO`) before calling.
pub fn decompress(input: &[u8], out_len: usize) -> Result<Vec<u8>, &'static str> {
    if out_len > input.len().saturating_mul(MAX_RATIO) {
        return Err("LZF declared length is impossible for its compressed size");
    }
    let mut out = Vec::with_capacity(out_len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < MAX_LITERAL {
            let n = ctrl + 1;
            let lit = input
                .get(i..i + n)
                .ok_or("LZF literal run past the end of the input")?;
            if out.len() + n > out_len {
                return Err("LZF output longer than declared");
            }
            out.extend_from_slice(lit);
            i += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(
                    *input
                        .get(i)
                        .ok_or("LZF reference past the end of the input")?,
                );
                i += 1;
            }
            let low = usize::from(
                *input
                    .get(i)
                    .ok_or("LZF reference past the end of the input")?,
            );
            i += 1;
            let distance = ((ctrl & 0x1f) << 8) + low + 1;
            len += 2;
            if distance > out.len() {
                return Err("LZF reference before the start of the output");
            }
            if out.len() + len > out_len {
                return Err("LZF output longer than declared");
            }
            let start = out.len() - distance;
            if distance >= len {
                out.extend_from_within(start..start + len);
            } else {
                for k in start..start + len {
                    let b = out[k];
                    out.push(b);
                }
            }
        }
    }
    if out.len() != out_len {
        return Err("LZF output shorter than declared");
    }
    Ok(out)
}

/// A compressor that keeps its hash table between calls (one zeroed table per string
/// would cost more than compressing a short one). Stale positions left from an earlier
/// input are harmless: every candidate match is checked byte by byte. The table is
/// allocated on first use, so that a default (moved-out) compressor costs nothing.
#[derive(Default)]
pub struct Compressor {
    table: Vec<u32>,
    out: Vec<u8>,
}

fn hash3(a: u8, b: u8, c: u8) -> usize {
    let v = u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

impl Compressor {
    /// Compresses `input`; None when the result would be longer than `max_out` bytes.
    pub fn compress(&mut self, input: &[u8], max_out: usize) -> Option<&[u8]> {
        if self.table.is_empty() {
            self.table = vec![0; 1 << HASH_BITS];
        }
        let out = &mut self.out;
        out.clear();
        let mut literal_from = 0;
        let mut i = 0;
        while i + 2 < input.len() {
            let h = hash3(input[i], input[i + 1], input[i + 2]);
            let candidate = self.table[h] as usize;
            self.table[h] = i as u32;
            let found = candidate < i
                && i - candidate <= MAX_DISTANCE
                && input[candidate..candidate + 3] == input[i..i + 3];
            if !found {
                i += 1;
                continue;
            }
            let limit = MAX_MATCH.min(input.len() - i);
            let mut len = 3;
            while len < limit && input[candidate + len] == input[i + len] {
                len += 1;
            }
            push_literals(out, &input[literal_from..i]);
            let offset = i - candidate - 1;
            let code = len - 2;
            if code < 7 {
                out.push(((code << 5) | (offset >> 8)) as u8);
            } else {
                out.push(((7 << 5) | (offset >> 8)) as u8);
                out.push((code - 7) as u8);
            }
            out.push((offset & 0xff) as u8);
            if out.len() > max_out {
                return None;
            }
            i += len;
            literal_from = i;
        }
        push_literals(out, &input[literal_from..]);
        (out.len() <= max_out).then_some(out.as_slice())
    }
}

fn push_literals(out: &mut Vec<u8>, lit: &[u8]) {
    for run in lit.chunks(MAX_LITERAL) {
        out.push((run.len() - 1) as u8);
        out.extend_from_slice(run);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdb_lzf_round_trip() {
        let mut c = Compressor::default();
        let mut rng = fastrand::Rng::with_seed(7);
        let mut inputs: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"a".to_vec(),
            vec![b'x'; 10_000],
            b"abcabcabcabcabcabcabcabcabcabcabcabc".to_vec(),
            (0..20_000u32).map(|i| (i % 251) as u8).collect(),
        ];
        for _ in 0..50 {
            let len = rng.usize(0..3000);
            let alphabet = rng.u8(1..=255);
            inputs.push((0..len).map(|_| rng.u8(0..alphabet)).collect());
        }
        for input in &inputs {
            let compressed = c.compress(input, usize::MAX).expect("unbounded").to_vec();
            assert_eq!(decompress(&compressed, input.len()).expect("valid"), *input);
        }
        let long = vec![b'x'; 10_000];
        assert!(c.compress(&long, 200).expect("fits").len() < 200);
        let random: Vec<u8> = (0..100).map(|_| rng.u8(..)).collect();
        assert!(c.compress(&random, 96).is_none());
    }

    #[test]
    fn rdb_lzf_decodes_hand_built_runs() {
        // "ab" literal, then a reference of length 6 at distance 2 (overlapping), then a
        // long reference: length 7 + 3 + 2 = 12 at distance 1.
        let data = [0x01, b'a', b'b', 0x80, 0x01, 0xe0, 0x03, 0x00];
        let out = decompress(&data, 2 + 6 + 12).expect("valid");
        assert_eq!(
            &out,
            b"abababab"
                .iter()
                .chain(&[b'b'; 12])
                .copied()
                .collect::<Vec<u8>>()
                .as_slice()
        );
    }

    #[test]
    fn rdb_lzf_refuses_bad_input() {
        assert!(
            decompress(&[0x05, b'a'], 6).is_err(),
            "literal past the end"
        );
        assert!(
            decompress(&[0x20, 0x05], 3).is_err(),
            "reference before the start"
        );
        assert!(
            decompress(&[0x00, b'a'], 2).is_err(),
            "shorter than declared"
        );
        assert!(
            decompress(&[0x01, b'a', b'b'], 1).is_err(),
            "longer than declared"
        );
        assert!(
            decompress(&[0x00, b'a'], 1 << 40).is_err(),
            "impossible ratio"
        );
        assert!(
            decompress(&[0xe0], 100).is_err(),
            "truncated long reference"
        );
    }
}
