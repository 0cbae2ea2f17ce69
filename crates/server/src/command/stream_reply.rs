//! How stream entries are written in replies, for the stream commands and for the
//! blocked reads served later (`stream_serve.rs`): IDs as "ms-seq" bulk strings, an
//! entry as its ID and its fields and values, a range, XREAD's per-key reply (an array
//! of [key, entries] pairs, a map in RESP3).

use resp::{encode, Proto};
use store::entry::StrRef;
use store::types::stream::{Stream, StreamId};
use store::types::stream_node::EntryRef;

/// An ID as text, "ms-seq".
pub(super) fn id_text(id: StreamId) -> Vec<u8> {
    let mut out = Vec::with_capacity(24);
    out.extend_from_slice(itoa::Buffer::new().format(id.ms).as_bytes());
    out.push(b'-');
    out.extend_from_slice(itoa::Buffer::new().format(id.seq).as_bytes());
    out
}

pub(super) fn reply_id(out: &mut Vec<u8>, id: StreamId) {
    encode::bulk(out, &id_text(id));
}

/// One entry as Redis replies it: its ID, then its fields and values.
pub(super) fn reply_entry(out: &mut Vec<u8>, e: &EntryRef<'_>) {
    encode::array_len(out, 2);
    reply_id(out, e.id);
    encode::array_len(out, e.items());
    for item in e.iter() {
        match item {
            StrRef::Bytes(b) => encode::bulk(out, b),
            StrRef::Int(n) => encode::bulk_integer(out, n),
        }
    }
}

/// Entries with IDs in `start..=end`, at most `count` (0: all), ascending or not:
/// the number written.
pub(super) fn reply_range(out: &mut Vec<u8>, s: &Stream, start: StreamId, end: StreamId, count: usize, rev: bool) -> usize {
    let mut body = Vec::new();
    let limit = if count == 0 { usize::MAX } else { count };
    let mut n = 0;
    let items: Box<dyn Iterator<Item = EntryRef<'_>>> = if rev { Box::new(s.range_rev(start, end)) } else { Box::new(s.range(start, end)) };
    for e in items.take(limit) {
        reply_entry(&mut body, &e);
        n += 1;
    }
    encode::array_len(out, n);
    out.extend_from_slice(&body);
    n
}

/// Writes XREAD's reply from per-key parts (key, entries written): an array of
/// [key, entries] pairs, in RESP3 a map; a null array when no key had anything.
pub(super) fn reply_read(out: &mut Vec<u8>, proto: Proto, served: &[(&[u8], Vec<u8>)]) {
    if served.is_empty() {
        encode::null_array(out, proto);
        return;
    }
    match proto {
        Proto::Resp2 => encode::array_len(out, served.len()),
        _ => encode::map_len(out, served.len(), proto),
    }
    for (key, body) in served {
        if proto == Proto::Resp2 {
            encode::array_len(out, 2);
        }
        encode::bulk(out, key);
        out.extend_from_slice(body);
    }
}

