//! HyperLogLog over Redis's string layout, as pure functions on a value's bytes.
//!
//! A HyperLogLog is an ordinary string value, laid out as Redis 7.0 lays it out, so that
//! a key written here reads the same in Redis (DUMP/RESTORE, replication both ways, RDB
//! files) and `GET` returns Redis's bytes:
//!
//! - a 16-byte header: `HYLL`, the encoding (0 dense, 1 sparse), three zero bytes, and
//!   the cached cardinality as 8 bytes little-endian, whose top bit set means "stale";
//! - 16,384 registers (the 14 low bits of an element's 64-bit MurmurHash64A pick the
//!   register; the run of zeros in the other 50 bits, plus one, is its candidate value):
//!   - **dense**: 6 bits each, packed from the lowest bit of each byte (12,288 bytes);
//!   - **sparse**: run-length opcodes: `00xxxxxx` a run of 1-64 zero registers,
//!     `01xxxxxx yyyyyyyy` a run of 1-16,384 zero registers, `1vvvvvxx` a run of 1-4
//!     registers of value 1-32.
//!
//! Updates of the sparse form split and merge opcodes exactly as Redis does, so the
//! bytes match Redis's after the same commands; a sparse value grows into the dense form
//! when a register exceeds 32 or the value would pass `hll-sparse-max-bytes`. The
//! estimator is Otmar Ertl's improved raw estimator ("New cardinality estimation
//! algorithms for HyperLogLog sketches", 2017), as Redis 4 and later compute it, in the
//! same floating-point steps, so counts match Redis's exactly.
//!
//! Nothing here trusts its input: a value restored from a client may hold any bytes.
//! Corrupt opcodes give [`Corrupt`], never a panic or a read out of bounds.

/// The header's length.
pub const HEADER: usize = 16;
/// Bits of the hash that pick the register.
const P: u32 = 14;
/// Registers.
pub const REGISTERS: usize = 1 << P;
/// Bits of the hash left for the run of zeros.
const Q: usize = 64 - P as usize;
/// Bits per dense register.
const BITS: usize = 6;
/// A dense register's largest value.
const REGISTER_MAX: u8 = (1 << BITS) - 1;
/// A dense value's length.
pub const DENSE_SIZE: usize = HEADER + (REGISTERS * BITS).div_ceil(8);

const ENCODING_DENSE: u8 = 0;
const ENCODING_SPARSE: u8 = 1;

/// Sparse opcodes' limits.
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;

/// A value whose opcodes do not describe exactly 16,384 registers (Redis's
/// `-INVALIDOBJ Corrupted HLL object detected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// A HyperLogLog value's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Dense,
    Sparse,
}

impl Encoding {
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Dense => "dense",
            Encoding::Sparse => "sparse",
        }
    }
}

/// The encoding of a string that is a HyperLogLog as Redis checks one (its magic, a
/// known encoding, a dense value's exact length), None for any other string.
pub fn encoding(v: &[u8]) -> Option<Encoding> {
    if v.len() < HEADER || &v[..4] != b"HYLL" {
        return None;
    }
    match v[4] {
        ENCODING_DENSE if v.len() == DENSE_SIZE => Some(Encoding::Dense),
        ENCODING_SPARSE => Some(Encoding::Sparse),
        _ => None,
    }
}

/// A new, empty HyperLogLog: sparse, one opcode for every register, cardinality 0
/// cached (Redis's createHLLObject).
pub fn new_sparse() -> Vec<u8> {
    let mut v = vec![0u8; HEADER];
    v[..4].copy_from_slice(b"HYLL");
    v[4] = ENCODING_SPARSE;
    let mut ops = [0u8; 2];
    set_xzero(&mut ops, REGISTERS);
    v.extend_from_slice(&ops);
    v
}

/// The cached cardinality, None when stale.
pub fn cached_count(v: &[u8]) -> Option<u64> {
    let card = u64::from_le_bytes(v[8..16].try_into().ok()?);
    (v[15] & 0x80 == 0).then_some(card)
}

/// Caches a computed cardinality in the header.
pub fn set_cached_count(v: &mut [u8], card: u64) {
    v[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Marks the cached cardinality stale (the registers changed).
pub fn invalidate_cache(v: &mut [u8]) {
    v[15] |= 0x80;
}

// --- Hashing -----------------------------------------------------------------------

/// MurmurHash64A by Austin Appleby, reading the tail and the 8-byte blocks as little-
/// endian on every host, as Redis's copy does. Written out here: the crates that offer
/// Murmur hashes implement MurmurHash3, whose values differ.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut blocks = data.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element lands in and its candidate value: the length of the run of
/// zeros after the register bits, plus one (1 to 51).
pub fn register_and_value(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    // The bit above the 50 left makes the run end by Q + 1.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// --- Dense registers ---------------------------------------------------------------

fn dense_get(regs: &[u8], index: usize) -> u8 {
    let bit = index * BITS;
    let (byte, shift) = (bit / 8, bit % 8);
    let b0 = u16::from(regs[byte]);
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> shift) | (b1 << (8 - shift))) & u16::from(REGISTER_MAX)) as u8
}

fn dense_put(regs: &mut [u8], index: usize, value: u8) {
    let bit = index * BITS;
    let (byte, shift) = (bit / 8, bit % 8);
    let v = u16::from(value);
    let mask = u16::from(REGISTER_MAX);
    regs[byte] = ((u16::from(regs[byte]) & !(mask << shift)) | (v << shift)) as u8;
    if let Some(next) = regs.get_mut(byte + 1) {
        let back = 8 - shift;
        *next = ((u16::from(*next) & !(mask >> back)) | (v >> back)) as u8;
    }
}

/// Raises a dense register to `value`: true when it was lower.
fn dense_raise(regs: &mut [u8], index: usize, value: u8) -> bool {
    if value > dense_get(regs, index) {
        dense_put(regs, index, value);
        true
    } else {
        false
    }
}

// --- Sparse opcodes ----------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    /// A run of zero registers, in a one-byte (ZERO) or two-byte (XZERO) opcode.
    Zero { len: usize, wide: bool },
    /// A run of 1-4 registers holding one value.
    Val { value: u8, len: usize },
}

impl Op {
    fn bytes(self) -> usize {
        match self {
            Op::Zero { wide: true, .. } => 2,
            _ => 1,
        }
    }
    fn len(self) -> usize {
        match self {
            Op::Zero { len, .. } | Op::Val { len, .. } => len,
        }
    }
}

/// The opcode at `ops[at]`. A wide opcode cut short reads its second byte as zero, as
/// Redis reads the string's terminator.
fn op_at(ops: &[u8], at: usize) -> Op {
    let b = ops[at];
    if b & 0x80 != 0 {
        Op::Val { value: ((b >> 2) & 0x1f) + 1, len: usize::from(b & 0x3) + 1 }
    } else if b & 0x40 == 0 {
        Op::Zero { len: usize::from(b & 0x3f) + 1, wide: false }
    } else {
        let low = ops.get(at + 1).copied().unwrap_or(0);
        Op::Zero { len: ((usize::from(b & 0x3f) << 8) | usize::from(low)) + 1, wide: true }
    }
}

fn val_byte(value: u8, len: usize) -> u8 {
    0x80 | ((value - 1) << 2) | (len as u8 - 1)
}

fn set_xzero(out: &mut [u8], len: usize) {
    let l = len - 1;
    out[0] = 0x40 | (l >> 8) as u8;
    out[1] = (l & 0xff) as u8;
}

/// Appends the opcode for a run of `len` zero registers (ZERO up to 64, else XZERO).
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        let mut two = [0u8; 2];
        set_xzero(&mut two, len);
        seq.extend_from_slice(&two);
    } else {
        seq.push((len - 1) as u8);
    }
}

/// Sets a sparse register to `value` if that raises it (Redis's hllSparseSet): Ok(true)
/// when the value changed. Turns the value dense first when `value` does not fit a
/// sparse opcode or the sparse form would pass `sparse_max` bytes.
fn sparse_raise(v: &mut Vec<u8>, index: usize, value: u8, sparse_max: usize) -> Result<bool, Corrupt> {
    if value > VAL_MAX_VALUE {
        return promote_and_raise(v, index, value);
    }
    // Find the opcode covering `index`, the one before it, and its first register.
    let (mut at, mut first, mut prev) = (HEADER, 0usize, None);
    let op = loop {
        if at >= v.len() {
            return Err(Corrupt);
        }
        let op = op_at(v, at);
        if index < first + op.len() {
            if at + op.bytes() > v.len() {
                return Err(Corrupt); // a wide opcode cut short
            }
            break op;
        }
        prev = Some(at);
        at += op.bytes();
        first += op.len();
    };
    let last = first + op.len() - 1;
    match op {
        // Already as high: nothing to do.
        Op::Val { value: old, .. } if old >= value => return Ok(false),
        // A run of one register: rewritten in place.
        Op::Val { len: 1, .. } | Op::Zero { len: 1, wide: false } => v[at] = val_byte(value, 1),
        _ => {
            // Split the run: what lies before the register, the register, what lies after.
            let mut seq = Vec::with_capacity(5);
            match op {
                Op::Zero { .. } => {
                    if index != first {
                        push_zeros(&mut seq, index - first);
                    }
                    seq.push(val_byte(value, 1));
                    if index != last {
                        push_zeros(&mut seq, last - index);
                    }
                }
                Op::Val { value: old, .. } => {
                    if index != first {
                        seq.push(val_byte(old, index - first));
                    }
                    seq.push(val_byte(value, 1));
                    if index != last {
                        seq.push(val_byte(old, last - index));
                    }
                }
            }
            let old_bytes = op.bytes();
            if seq.len() > old_bytes && v.len() + seq.len() - old_bytes > sparse_max {
                return promote_and_raise(v, index, value);
            }
            v.splice(at..at + old_bytes, seq);
        }
    }
    merge_adjacent_values(v, prev.unwrap_or(HEADER));
    invalidate_cache(v);
    Ok(true)
}

/// After an update, joins neighbouring VAL opcodes of equal value whose runs fit one
/// opcode, looking at up to five opcodes from `from` (Redis's step 4 of hllSparseSet).
fn merge_adjacent_values(v: &mut Vec<u8>, from: usize) {
    let mut p = from;
    let mut scan = 5;
    while p < v.len() && scan > 0 {
        scan -= 1;
        match op_at(v, p) {
            Op::Zero { wide, .. } => {
                p += if wide { 2 } else { 1 };
                continue;
            }
            Op::Val { value, len } => {
                if p + 1 < v.len() {
                    if let Op::Val { value: next_value, len: next_len } = op_at(v, p + 1) {
                        if next_value == value && len + next_len <= VAL_MAX_LEN {
                            v[p + 1] = val_byte(value, len + next_len);
                            v.remove(p);
                            // Try the merged run with the one on its right too.
                            continue;
                        }
                    }
                }
                p += 1;
            }
        }
    }
}

fn promote_and_raise(v: &mut Vec<u8>, index: usize, value: u8) -> Result<bool, Corrupt> {
    to_dense(v)?;
    // A promotion always comes with a raise (the register needed more than sparse
    // holds), so this reports a change, as Redis's does.
    dense_raise(&mut v[HEADER..], index, value);
    Ok(true)
}

/// Turns a sparse value dense, keeping its header's cached cardinality: Ok(true) when
/// it was sparse.
pub fn to_dense(v: &mut Vec<u8>) -> Result<bool, Corrupt> {
    if v.get(4) == Some(&ENCODING_DENSE) {
        return Ok(false);
    }
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HEADER].copy_from_slice(&v[..HEADER]);
    dense[4] = ENCODING_DENSE;
    let mut idx = 0usize;
    let mut at = HEADER;
    while at < v.len() {
        let op = op_at(v, at);
        if let Op::Val { value, len } = op {
            if idx + len > REGISTERS {
                return Err(Corrupt); // a run past the last register (Redis 7.0.15 too)
            }
            for i in idx..idx + len {
                dense_put(&mut dense[HEADER..], i, value);
            }
        }
        idx += op.len();
        at += op.bytes();
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    *v = dense;
    Ok(true)
}

// --- Commands' building blocks -----------------------------------------------------

/// Adds one element (Redis's hllAdd): Ok(true) when a register changed. The value must
/// have passed [`encoding`].
pub fn add(v: &mut Vec<u8>, element: &[u8], sparse_max: usize) -> Result<bool, Corrupt> {
    let (index, value) = register_and_value(element);
    raise(v, index, value, sparse_max)
}

/// Raises register `index` to `value` in either encoding: Ok(true) when it changed.
pub fn raise(v: &mut Vec<u8>, index: usize, value: u8, sparse_max: usize) -> Result<bool, Corrupt> {
    match encoding(v) {
        Some(Encoding::Dense) => Ok(dense_raise(&mut v[HEADER..], index, value)),
        Some(Encoding::Sparse) => sparse_raise(v, index, value, sparse_max),
        None => Err(Corrupt),
    }
}

/// Raises each of `max`'s registers to the value's (Redis's hllMerge).
pub fn merge_into(max: &mut [u8; REGISTERS], v: &[u8]) -> Result<(), Corrupt> {
    match encoding(v) {
        Some(Encoding::Dense) => {
            for (i, m) in max.iter_mut().enumerate() {
                *m = (*m).max(dense_get(&v[HEADER..], i));
            }
            Ok(())
        }
        Some(Encoding::Sparse) => {
            let (mut idx, mut at) = (0usize, HEADER);
            while at < v.len() {
                let op = op_at(v, at);
                if let Op::Val { value, len } = op {
                    if idx + len > REGISTERS {
                        return Err(Corrupt);
                    }
                    for m in &mut max[idx..idx + len] {
                        *m = (*m).max(value);
                    }
                }
                idx += op.len();
                at += op.bytes();
            }
            if idx == REGISTERS { Ok(()) } else { Err(Corrupt) }
        }
        None => Err(Corrupt),
    }
}

/// Every register's value, the value made dense first (PFDEBUG GETREG).
pub fn registers(v: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut max = [0u8; REGISTERS];
    merge_into(&mut max, v)?;
    Ok(max.to_vec())
}

/// The cardinality estimate of a value's registers (Redis's hllCount, which does not
/// look at the cache).
pub fn count(v: &[u8]) -> Result<u64, Corrupt> {
    let mut histogram = [0u32; 64];
    match encoding(v) {
        Some(Encoding::Dense) => {
            for i in 0..REGISTERS {
                histogram[usize::from(dense_get(&v[HEADER..], i))] += 1;
            }
        }
        Some(Encoding::Sparse) => {
            let (mut idx, mut at) = (0usize, HEADER);
            while at < v.len() {
                let op = op_at(v, at);
                let value = match op {
                    Op::Zero { .. } => 0,
                    Op::Val { value, .. } => usize::from(value),
                };
                histogram[value] = histogram[value].wrapping_add(op.len() as u32);
                idx += op.len();
                at += op.bytes();
            }
            if idx != REGISTERS {
                return Err(Corrupt);
            }
        }
        None => return Err(Corrupt),
    }
    Ok(estimate(&histogram))
}

/// The estimate from registers given one byte each (PFCOUNT of several keys).
pub fn count_registers(registers: &[u8; REGISTERS]) -> u64 {
    let mut histogram = [0u32; 64];
    for &r in registers.iter() {
        histogram[usize::from(r & 63)] += 1;
    }
    estimate(&histogram)
}

/// Ertl's improved raw estimator over the histogram of register values.
fn estimate(histogram: &[u32; 64]) -> u64 {
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7; // 1 / (2 ln 2)
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histogram[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(histogram[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histogram[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// A sparse value's opcodes as PFDEBUG DECODE prints them (`z:len`, `Z:len`,
/// `v:value,len`, space-separated).
pub fn decode_sparse(v: &[u8]) -> String {
    let mut words = Vec::new();
    let mut at = HEADER;
    while at < v.len() {
        let op = op_at(v, at);
        words.push(match op {
            Op::Zero { len, wide: false } => format!("z:{len}"),
            Op::Zero { len, wide: true } => format!("Z:{len}"),
            Op::Val { value, len } => format!("v:{value},{len}"),
        });
        at += op.bytes();
    }
    words.join(" ")
}

/// PFSELFTEST: every dense register stores and reads back values without disturbing its
/// neighbours, and a sparse and a dense value fed the same elements agree and stay within
/// five standard errors (5 x 1.04 / sqrt(16384), about 4%) of the true count. Err names
/// the first failure.
pub fn self_test() -> Result<(), String> {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut regs = vec![0u8; DENSE_SIZE - HEADER];
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..64 {
        for (i, e) in expected.iter_mut().enumerate() {
            *e = (next() % 64) as u8;
            dense_put(&mut regs, i, *e);
        }
        if let Some(i) = (0..REGISTERS).find(|&i| dense_get(&regs, i) != expected[i]) {
            return Err(format!("Register error at {i}"));
        }
    }
    let mut sparse = new_sparse();
    let mut dense = new_sparse();
    to_dense(&mut dense).map_err(|_| "conversion of an empty value failed".to_string())?;
    let bound = 5.0 * 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint = 1u64;
    for n in 1..=1_000_000u64 {
        let element = next().to_le_bytes();
        let a = add(&mut sparse, &element, 3000).map_err(|_| "sparse add failed".to_string())?;
        let b = add(&mut dense, &element, 3000).map_err(|_| "dense add failed".to_string())?;
        if a != b {
            return Err(format!("sparse and dense disagree on adding element {n}"));
        }
        if n == checkpoint {
            let (s, d) = (count(&sparse), count(&dense));
            if s != d || s.is_err() {
                return Err(format!("sparse ({s:?}) and dense ({d:?}) counts differ at {n}"));
            }
            let est = d.unwrap_or(0) as f64;
            let err = (est - n as f64).abs() / n as f64;
            // Small counts are exact to within one or two; the bound is relative.
            if (est - n as f64).abs() > 2.0 && err > bound {
                return Err(format!("approximation error {err:.4} at {n} elements (estimate {est})"));
            }
            checkpoint = if checkpoint < 10_000 { checkpoint + 1 + checkpoint / 8 } else { checkpoint * 2 };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPARSE_MAX: usize = 3000;

    #[test]
    fn elements_land_where_redis_puts_them() {
        // Register and value of each element in redis-server 7.0.15 (PFADD into an empty
        // key, then PFDEBUG DECODE): every tail length of the hash and a full block.
        let cases: [(&[u8], usize, u8); 6] = [
            (b"a", 12711, 2),
            (b"hello", 9216, 1),
            (b"foo", 7348, 5),
            (b"12345678", 10579, 3),
            (b"abcdefghijklmnopq", 4271, 1),
            (b"", 5938, 2),
        ];
        for (element, index, value) in cases {
            assert_eq!(register_and_value(element), (index, value), "{:?}", String::from_utf8_lossy(element));
        }
    }

    #[test]
    fn a_new_value_is_one_xzero_opcode_with_a_zero_count_cached() {
        let v = new_sparse();
        assert_eq!(v.len(), 18);
        assert_eq!(&v[16..], &[0x7f, 0xff]);
        assert_eq!(encoding(&v), Some(Encoding::Sparse));
        assert_eq!(cached_count(&v), Some(0));
        assert_eq!(count(&v), Ok(0));
        assert_eq!(decode_sparse(&v), "Z:16384");
    }

    #[test]
    fn dense_registers_hold_six_bits_each_without_touching_neighbours() {
        let mut regs = vec![0u8; DENSE_SIZE - HEADER];
        let mut expected = vec![0u8; REGISTERS];
        let mut seed = 12345u64;
        for round in 0..3 {
            for (i, e) in expected.iter_mut().enumerate() {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let value = ((seed >> 33) % 64) as u8;
                if (i + round) % 3 != 0 {
                    dense_put(&mut regs, i, value);
                    *e = value;
                }
            }
            for (i, e) in expected.iter().enumerate() {
                assert_eq!(dense_get(&regs, i), *e, "register {i}");
            }
        }
    }

    #[test]
    fn sparse_and_dense_agree_on_every_register_and_count() {
        let mut sparse = new_sparse();
        let mut dense = new_sparse();
        to_dense(&mut dense).expect("a valid value");
        for i in 0..2000u32 {
            let e = format!("element:{i}");
            let a = add(&mut sparse, e.as_bytes(), usize::MAX).expect("a valid value");
            let b = add(&mut dense, e.as_bytes(), usize::MAX).expect("a valid value");
            assert_eq!(a, b, "element {i}");
        }
        assert_eq!(encoding(&sparse), Some(Encoding::Sparse), "no register above 32 yet");
        assert_eq!(registers(&sparse).expect("a valid value"), registers(&dense).expect("a valid value"));
        assert_eq!(count(&sparse).expect("a valid value"), count(&dense).expect("a valid value"));
        let mut promoted = sparse.clone();
        to_dense(&mut promoted).expect("a valid value");
        assert_eq!(promoted[HEADER..], dense[HEADER..]);
    }

    #[test]
    fn estimates_stay_within_a_few_standard_errors() {
        // 0.81% standard error at 16,384 registers.
        let mut v = new_sparse();
        let mut next_check = 10u64;
        for i in 1..=200_000u64 {
            add(&mut v, &i.to_le_bytes(), SPARSE_MAX).expect("a valid value");
            if i == next_check {
                let est = count(&v).expect("a valid value") as f64;
                let err = (est - i as f64).abs() / i as f64;
                assert!(err < 0.05, "{i} elements estimated as {est}");
                next_check *= 10;
            }
        }
        assert_eq!(encoding(&v), Some(Encoding::Dense), "past hll-sparse-max-bytes");
    }

    #[test]
    fn the_sparse_limit_promotes_and_reports_a_change() {
        let mut v = new_sparse();
        let mut i = 0u64;
        while encoding(&v) == Some(Encoding::Sparse) {
            assert!(v.len() <= 100, "sparse value of {} bytes over its limit", v.len());
            i += 1;
            add(&mut v, &i.to_le_bytes(), 100).expect("a valid value");
        }
        assert_eq!(v.len(), DENSE_SIZE);
    }

    #[test]
    fn adjacent_equal_values_merge_into_one_opcode() {
        let mut v = new_sparse();
        for index in [10, 11, 12, 13] {
            sparse_raise(&mut v, index, 3, SPARSE_MAX).expect("a valid value");
        }
        assert_eq!(decode_sparse(&v), "z:10 v:3,4 Z:16370");
        // A fifth makes a new run: one opcode holds at most four.
        sparse_raise(&mut v, 14, 3, SPARSE_MAX).expect("a valid value");
        assert_eq!(decode_sparse(&v), "z:10 v:3,4 v:3,1 Z:16369");
        // Raising inside a run splits it; the merge then joins the run's tail with the
        // run after it.
        sparse_raise(&mut v, 11, 5, SPARSE_MAX).expect("a valid value");
        assert_eq!(decode_sparse(&v), "z:10 v:3,1 v:5,1 v:3,3 Z:16369");
        assert_eq!(sparse_raise(&mut v, 11, 4, SPARSE_MAX), Ok(false));
        assert_eq!(cached_count(&v), None, "a change makes the cache stale");
    }

    #[test]
    fn corrupt_values_are_errors_not_panics() {
        let mut v = new_sparse();
        v.truncate(17); // a wide opcode cut short: its second byte reads as zero
        assert_eq!(count(&v), Err(Corrupt));
        let _ = add(&mut v, b"x", SPARSE_MAX);
        let mut short = new_sparse();
        short.truncate(HEADER);
        assert_eq!(add(&mut short, b"x", SPARSE_MAX), Err(Corrupt));
        assert_eq!(to_dense(&mut short), Err(Corrupt));
        let mut long = new_sparse();
        long.extend_from_slice(&[0xff; 10]);
        assert_eq!(count(&long), Err(Corrupt));
        let mut max = [0u8; REGISTERS];
        assert_eq!(merge_into(&mut max, &long), Err(Corrupt));
        assert_eq!(to_dense(&mut long), Err(Corrupt));
        // Any byte string: no panic.
        let mut seed = 99u64;
        for len in 16..80 {
            let mut junk = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0".to_vec();
            for _ in HEADER..len {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                junk.push((seed >> 56) as u8);
            }
            let _ = count(&junk);
            let _ = add(&mut junk.clone(), b"a", SPARSE_MAX);
            let _ = merge_into(&mut max, &junk);
            let _ = decode_sparse(&junk);
        }
        assert_eq!(encoding(b"HYLL\0\0\0\0\0\0\0\0\0\0\0\0\0"), None, "dense of the wrong length");
        assert_eq!(encoding(b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\0\0"), None, "unknown encoding");
    }
}
