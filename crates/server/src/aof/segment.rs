//! The log's segments: every piece of the log handed to the kernel in one write starts
//! with a checksum line, `#SEG:<length>:<crc32>`, over the bytes that follow it, so that
//! the loader can tell a piece that did not reach the disk whole.
//!
//! Why: after a power loss the blocks of the writes in flight (up to four commits under
//! `appendfsync always`, a writer round's dirty pages) may have landed in any order, and
//! a block that did not land reads as the zeros the file held there. A hole that falls
//! inside a value leaves a command that still parses, with zeros in its value; replayed,
//! it would be a write that never happened. Nothing at or after such a hole was
//! acknowledged (a completed fdatasync made every earlier write durable), so the loader
//! ends the log at the first segment whose checksum fails (`load.rs`).
//!
//! Format: `#SEG:` and the length of the bytes after the line as ten decimal digits, `:`,
//! their CRC-32 (IEEE, as zlib's) as eight hexadecimal digits, CRLF: a fixed 26 bytes, so
//! that the line is reserved when a segment opens (its first record appended: the log's
//! offsets count it from then on) and filled in when the segment is sealed (taken to be
//! written). Redis 7 skips lines that start with `#`, so it reads the log as before; a
//! log without these lines (Redis's, or an older Basalt's) is read without checks.

/// The header line's length.
pub const HEADER_LEN: usize = 26;

const TAG: &[u8] = b"#SEG:";

/// The header line of a segment not sealed yet (its length and checksum left zero).
pub fn placeholder() -> [u8; HEADER_LEN] {
    let mut h = [b'0'; HEADER_LEN];
    h[..TAG.len()].copy_from_slice(TAG);
    h[15] = b':';
    h[24] = b'\r';
    h[25] = b'\n';
    h
}

/// Fills in the header at the start of `segment` for the bytes after it.
pub fn seal(segment: &mut [u8]) {
    let (header, body) = segment.split_at_mut(HEADER_LEN);
    // Digits written in place (no allocation: this runs for every write of the log).
    let mut len = body.len();
    for d in header[5..15].iter_mut().rev() {
        *d = b'0' + (len % 10) as u8;
        len /= 10;
    }
    let crc = crc32fast::hash(body);
    for (i, d) in header[16..24].iter_mut().enumerate() {
        *d = b"0123456789abcdef"[(crc >> (28 - 4 * i)) as usize & 0xf];
    }
}

/// Seals the segment that begins at `open` in `bytes` (taken from the tail), if any.
pub fn seal_open(bytes: &mut [u8], open: Option<usize>) {
    if let Some(at) = open {
        seal(&mut bytes[at..]);
    }
}

/// The length and checksum a header line (`line`, without its CRLF or with it) states;
/// None for any other line.
pub fn parse_header(line: &[u8]) -> Option<(usize, u32)> {
    let line = line.strip_suffix(b"\r\n").or_else(|| line.strip_suffix(b"\r")).unwrap_or(line);
    let rest = line.strip_prefix(TAG)?;
    if rest.len() != 19 || rest[10] != b':' {
        return None;
    }
    let len = std::str::from_utf8(&rest[..10]).ok()?.parse().ok()?;
    let crc = u32::from_str_radix(std::str::from_utf8(&rest[11..]).ok()?, 16).ok()?;
    Some((len, crc))
}

/// Whether `body` is what a header stating `crc` was sealed over.
pub fn verify(body: &[u8], crc: u32) -> bool {
    crc32fast::hash(body) == crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_header_states_the_length_and_checksum_of_what_follows() {
        let mut seg = placeholder().to_vec();
        assert_eq!(seg.len(), HEADER_LEN);
        assert_eq!(parse_header(&seg), Some((0, 0)));
        seg.extend_from_slice(b"*1\r\n$4\r\nPING\r\n");
        seal(&mut seg);
        let (len, crc) = parse_header(&seg[..HEADER_LEN]).expect("header");
        assert_eq!(len, 14);
        assert!(verify(&seg[HEADER_LEN..], crc));
        assert_eq!(&seg[..HEADER_LEN], format!("#SEG:0000000014:{:08x}\r\n", crc32fast::hash(b"*1\r\n$4\r\nPING\r\n")).as_bytes());
        // A block of zeros where the bytes were: caught.
        let mut torn = seg.clone();
        torn[HEADER_LEN + 4..HEADER_LEN + 8].fill(0);
        assert!(!verify(&torn[HEADER_LEN..], crc));
        // Other annotations are not headers.
        assert_eq!(parse_header(b"#MS:1700000000000"), None);
        assert_eq!(parse_header(b"#SEG:12:abc"), None);
    }
}
