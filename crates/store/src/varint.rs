//! LEB128 varints: the length prefixes of entries, packed sequences and compact forms,
//! and the deltas of inline intsets. Seven bits a byte, low bits first, the high bit set
//! on every byte but the last. (Small enough that a crate would be more than the code.)

/// Bytes `n` takes.
pub fn len_u64(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

/// Writes `n` at the start of `out`; returns the bytes written.
pub fn write_u64(out: &mut [u8], mut n: u64) -> usize {
    let mut i = 0;
    while n >= 0x80 {
        out[i] = (n as u8) | 0x80;
        n >>= 7;
        i += 1;
    }
    out[i] = n as u8;
    i + 1
}

/// Reads the varint at `at`: (value, offset after it).
#[inline]
pub fn read_u64(buf: &[u8], at: usize) -> (u64, usize) {
    if buf[at] < 0x80 {
        return (u64::from(buf[at]), at + 1);
    }
    let (mut n, mut shift, mut i) = (0u64, 0, at);
    loop {
        let b = buf[i];
        n |= u64::from(b & 0x7f) << shift;
        i += 1;
        if b & 0x80 == 0 {
            return (n, i);
        }
        shift += 7;
    }
}

/// [`len_u64`] for a length.
pub fn len(n: usize) -> usize {
    len_u64(n as u64)
}

/// [`write_u64`] for a length.
pub fn write(out: &mut [u8], n: usize) -> usize {
    write_u64(out, n as u64)
}

/// [`read_u64`] for a length.
#[inline]
pub fn read(buf: &[u8], at: usize) -> (usize, usize) {
    let (n, next) = read_u64(buf, at);
    (n as usize, next)
}

/// Appends `n` to `out`.
pub fn push(out: &mut Vec<u8>, n: usize) {
    let mut bytes = [0u8; 10];
    let used = write(&mut bytes, n);
    out.extend_from_slice(&bytes[..used]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_at_every_length() {
        for n in [0u64, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX), u64::MAX] {
            let mut buf = [0u8; 12];
            let used = write_u64(&mut buf[1..], n);
            assert_eq!(used, len_u64(n));
            assert_eq!(read_u64(&buf, 1), (n, 1 + used));
        }
        let mut v = Vec::new();
        push(&mut v, 300);
        assert_eq!(read(&v, 0), (300, 2));
    }
}
