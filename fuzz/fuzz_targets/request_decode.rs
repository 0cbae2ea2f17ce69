//! Fuzzes the server-side request parser and the client-side reply decoder.
//!
//! The first three bytes choose the limits and the chunking; the rest is the input. Invariants:
//! * `RequestParser` never panics, every `Ok(Some(n))` has `1 <= n <= input.len()`, and feeding the
//!   bytes in random-sized chunks (resuming after `Ok(None)`) yields exactly the same requests and
//!   the same final outcome as feeding them all at once.
//! * `decode_frame` and `frame_len` agree, and a decoded frame re-encodes to bytes that decode to
//!   a frame that re-encodes to the same bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use resp::{decode_frame, encode, frame_len, Limits, ProtocolError, RequestParser};

type Requests = Vec<Vec<Vec<u8>>>;
type Outcome = (Requests, Result<usize, ProtocolError>);

fn limits_from(b: u8) -> Limits {
    Limits {
        max_inline_len: [4, 64, 1024, 64 * 1024][usize::from(b & 3)],
        max_bulk_len: [0, 16, 100_000, 512 << 20][usize::from((b >> 2) & 3)],
        unauthenticated: b & 16 != 0,
    }
}

fn collect(p: &RequestParser, input: &[u8]) -> Vec<Vec<u8>> {
    p.args(input).map(<[u8]>::to_vec).collect()
}

/// Parses all requests in `input`, making bytes available `next_chunk()` at a time.
fn parse(limits: &Limits, input: &[u8], mut next_chunk: impl FnMut() -> usize) -> Outcome {
    let mut p = RequestParser::new(limits.clone());
    let mut reqs = Vec::new();
    let mut off = 0;
    let mut avail = next_chunk().min(input.len());
    loop {
        let window = &input[off..avail];
        match p.parse(window) {
            Ok(Some(n)) => {
                assert!(n >= 1 && n <= window.len(), "n={n} len={}", window.len());
                reqs.push(collect(&p, window));
                off += n;
            }
            Ok(None) => {
                if let Some(h) = p.bytes_hint() {
                    assert!(h >= 1);
                }
                if avail == input.len() {
                    return (reqs, Ok(off));
                }
                avail = (avail + next_chunk()).min(input.len());
            }
            Err(e) => return (reqs, Err(e)),
        }
    }
}

fn check_decoder(input: &[u8], max: u64) {
    let len = frame_len(input, max);
    let decoded = decode_frame(input, max);
    let decoded_len = decoded
        .as_ref()
        .map(|o| o.as_ref().map(|(_, n)| *n))
        .map_err(Clone::clone);
    assert_eq!(len, decoded_len, "frame_len and decode_frame disagree");
    if let Ok(Some((frame, n))) = decoded {
        assert!(n >= 3 && n <= input.len());
        let mut wire = Vec::new();
        encode::frame(&mut wire, &frame);
        let again = decode_frame(&wire, max).expect("re-encoded frame decodes");
        let (frame2, n2) = again.expect("re-encoded frame is complete");
        assert_eq!(n2, wire.len());
        let mut wire2 = Vec::new();
        encode::frame(&mut wire2, &frame2);
        assert_eq!(wire, wire2, "encode(decode(encode(f))) differs");
    }
}

fuzz_target!(|data: &[u8]| {
    let [limit_byte, chunk_byte, seed, input @ ..] = data else {
        return;
    };
    let limits = limits_from(*limit_byte);

    let whole = parse(&limits, input, || input.len());

    // Chunk sizes from a small xorshift seeded by the control bytes.
    let max_chunk = usize::from(*chunk_byte % 32) + 1;
    let mut state = u32::from(*seed) << 8 | u32::from(*chunk_byte) | 1;
    let chunked = parse(&limits, input, || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state as usize % max_chunk) + 1
    });
    assert_eq!(
        whole, chunked,
        "chunked parsing differs from parsing at once"
    );

    check_decoder(input, limits.max_bulk_len);
});
