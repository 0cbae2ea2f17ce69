//! Fuzzes RESTORE's payload decoder (`store::rdb::restore`): the one RDB parser a client
//! reaches over the network. The input is a payload body; the target adds a valid
//! footer (RDB version 10 and the CRC-64), so that the fuzzer explores the value
//! decoding rather than the checksum. The first byte picks small or Redis-default
//! encoding thresholds. Invariants:
//! * no panic, and no allocation beyond what the input's bytes justify (libFuzzer's
//!   -rss_limit_mb catches the latter);
//! * whatever is accepted is written back by `dump_payload` (with and without LZF) into
//!   a payload that `restore` accepts again, and the uncompressed DUMPs of the value and
//!   of its copy have the same type byte and length (not the same bytes: a rebuilt hash
//!   table iterates in another order, and LZF's output depends on what came before).

#![no_main]

use libfuzzer_sys::fuzz_target;
use store::rdb::{crc64, dump_payload, restore, Limits};

fn with_footer(body: &[u8]) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&10u16.to_le_bytes());
    let crc = crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

fn limits(b: u8) -> Limits {
    let mut l = Limits::redis_defaults();
    if b & 1 == 1 {
        l.hash.max_listpack_entries = 4;
        l.hash.max_listpack_value = 8;
        l.zset.max_listpack_entries = 4;
        l.zset.max_listpack_value = 8;
        l.set_intset = 4;
    }
    l
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, body)) = data.split_first() else { return };
    let limits = limits(first);
    let payload = with_footer(body);
    let Ok(entry) = restore(&payload, b"key", None, 0, &limits) else { return };
    let again = dump_payload(&entry, first & 2 == 2);
    let copy = restore(&again, b"key", None, 0, &limits).expect("a DUMP of an accepted value is accepted");
    let (a, b) = (dump_payload(&entry, false), dump_payload(&copy, false));
    assert_eq!((a[0], a.len()), (b[0], b.len()), "the DUMP of the copy differs");
});
