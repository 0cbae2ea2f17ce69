//! Growth of packed buffers to the allocator's size classes.
//!
//! Packed sequences (list chunks, small hashes, sorted sets and sets) grow by a few
//! bytes per write. Growing them exactly, as a listpack does, costs one `realloc` call
//! per write even though jemalloc (the server's allocator) hands out memory in size
//! classes and resizes within a class in place: the call itself, with its size-class
//! lookup, was 13% of the instructions of a pipelined LPUSH. Reserving up to the end
//! of the class the buffer lands in uses exactly the memory the allocator would have
//! given anyway, and calls `realloc` only when the buffer crosses into the next class.
//!
//! The classes are jemalloc's with its default 16-byte quantum and 4 classes per
//! doubling (8, 16, 32, 48, ..., 128, 160, 192, 224, 256, 320, ...). With another
//! allocator the rounding costs at most a quarter of the buffer in slack.

/// The smallest jemalloc size class that holds `n` bytes (`n` itself for 0).
pub fn round_up(n: usize) -> usize {
    match n {
        0 => 0,
        1..=8 => 8,
        9..=128 => n.next_multiple_of(16),
        _ => {
            // Four classes between consecutive powers of two: (2^k, 2^(k+1)] is cut
            // into steps of 2^(k-2).
            let k = usize::BITS - 1 - (n - 1).leading_zeros();
            let step = 1usize << (k - 2);
            n.checked_next_multiple_of(step).unwrap_or(n)
        }
    }
}

/// Makes room for `additional` more bytes in `buf`; when it must grow, it grows to the
/// end of the size class that the new length falls in.
pub fn reserve(buf: &mut Vec<u8>, additional: usize) {
    let need = buf.len().saturating_add(additional);
    if need > buf.capacity() {
        buf.reserve_exact(round_up(need) - buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_jemallocs() {
        let cases = [
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (33, 48),
            (128, 128),
            (129, 160),
            (160, 160),
            (161, 192),
            (256, 256),
            (257, 320),
            (1000, 1024),
            (1025, 1280),
            (8192, 8192),
            (8193, 10240),
            (70_000, 81_920),
        ];
        for (n, class) in cases {
            assert_eq!(round_up(n), class, "n = {n}");
        }
    }

    #[test]
    fn class_is_never_smaller_and_at_most_a_quarter_more() {
        for n in 1..100_000usize {
            let c = round_up(n);
            assert!(c >= n);
            assert!(c <= 8 || c - n < c / 4 + 16, "n = {n}, class = {c}");
        }
    }

    #[test]
    fn reserve_grows_to_the_class_and_not_before_it_is_needed() {
        let mut buf: Vec<u8> = Vec::new();
        reserve(&mut buf, 130);
        assert_eq!(buf.capacity(), 160);
        buf.extend_from_slice(&[1; 150]);
        reserve(&mut buf, 10);
        assert_eq!(buf.capacity(), 160, "fits: no growth");
        reserve(&mut buf, 11);
        assert_eq!(buf.capacity(), 192);
    }
}
