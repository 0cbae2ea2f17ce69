//! A stream node's listpack, as Redis 7.0 lays it out in memory and in RDB files
//! (types 15 and 19): the writer builds one from a node's live entries, the loader
//! decodes and checks one.
//!
//! Format (every number a listpack integer, IDs as differences from the node's key):
//! ```text
//! master entry: count  deleted  num-fields  field_1 .. field_N  0
//! each entry:   flags  ms-diff  seq-diff  [num-fields  field value ..]  lp-count
//!               (flags: 1 deleted, 2 same fields as the master: values only)
//!               lp-count: the entry's elements before it (N + 3, or 2N + 4)
//! ```

use super::listpack;
use crate::entry::StrRef;
use crate::types::stream::{Fields, StreamId};

const FLAG_DELETED: i64 = 1;
const FLAG_SAME_FIELDS: i64 = 2;

/// Fills `lp` with the node that starts at `first` (Redis's master ID) holding
/// `entries` (live ones only: none is written as deleted).
pub(super) fn encode_node<'a>(
    lp: &mut listpack::Builder,
    first: StreamId,
    master_fields: &Fields,
    entries: impl Iterator<Item = (&'a StreamId, &'a Fields)>,
    live: u64,
) {
    lp.clear();
    lp.push_int(live as i64);
    lp.push_int(0);
    let master_count = master_fields.items();
    lp.push_int(master_count as i64);
    for f in master_fields.iter() {
        lp.push(f);
    }
    lp.push_int(0);
    for (id, fields) in entries {
        let n = fields.items() / 2;
        let same = n == master_count && fields.names().eq(master_fields.iter());
        lp.push_int(if same { FLAG_SAME_FIELDS } else { 0 });
        lp.push_int(id.ms.wrapping_sub(first.ms) as i64);
        lp.push_int(id.seq.wrapping_sub(first.seq) as i64);
        if same {
            for v in fields.iter().skip(1).step_by(2) {
                lp.push(v);
            }
            lp.push_int(n as i64 + 3);
        } else {
            lp.push_int(n as i64);
            for item in fields.iter() {
                lp.push(item);
            }
            lp.push_int(2 * n as i64 + 4);
        }
    }
}

/// A node read from a file.
pub(super) struct Decoded {
    pub master_fields: Fields,
    pub live: u64,
    pub deleted: u64,
    /// The last entry's ID, deleted or not.
    pub last: StreamId,
    /// The live entries, ascending.
    pub entries: Vec<(StreamId, Fields)>,
}

fn text(e: StrRef<'_>) -> Vec<u8> {
    match e {
        StrRef::Bytes(b) => b.to_vec(),
        StrRef::Int(n) => itoa::Buffer::new().format(n).as_bytes().to_vec(),
    }
}

/// Decodes the node whose key is `first`, checking it as Redis's deep integrity check
/// does: the master entry, every entry's shape and lp-count, the counts, IDs rising.
pub(super) fn decode_node(first: StreamId, blob: &[u8]) -> Result<Decoded, String> {
    let items = listpack::decode(blob).map_err(str::to_string)?;
    let mut rest = items.iter().copied();
    let mut next = || -> Result<StrRef<'_>, String> { rest.next().ok_or_else(|| "stream listpack ends inside an entry".to_string()) };
    fn int(e: StrRef<'_>) -> Result<i64, String> {
        match e {
            StrRef::Int(n) => Ok(n),
            StrRef::Bytes(_) => Err("stream listpack has a string where an integer belongs".into()),
        }
    }
    let count = int(next()?)?;
    let deleted = int(next()?)?;
    let master_count = int(next()?)?;
    if count < 0 || deleted < 0 || !(0..=1 << 20).contains(&master_count) {
        return Err("stream listpack master entry is invalid".into());
    }
    let mut master = Vec::with_capacity(master_count as usize);
    for _ in 0..master_count {
        master.push(text(next()?));
    }
    if int(next()?)? != 0 {
        return Err("stream listpack master entry terminator is not 0".into());
    }
    let (mut live, mut dead) = (0u64, 0u64);
    let mut last: Option<StreamId> = None;
    let mut entries = Vec::new();
    loop {
        let flags = match next() {
            Ok(f) => int(f)?,
            Err(_) => break,
        };
        if !(0..=3).contains(&flags) {
            return Err("stream entry with unknown flags".into());
        }
        let ms = first.ms.wrapping_add(int(next()?)? as u64);
        let seq = first.seq.wrapping_add(int(next()?)? as u64);
        let id = StreamId::new(ms, seq);
        if id < first || last.is_some_and(|l| id <= l) {
            return Err("stream entry IDs are not in order".into());
        }
        last = Some(id);
        let mut values: Vec<Vec<u8>> = Vec::new();
        let lp_count;
        if flags & FLAG_SAME_FIELDS != 0 {
            for f in &master {
                values.push(f.clone());
                values.push(text(next()?));
            }
            lp_count = master_count + 3;
        } else {
            let n = int(next()?)?;
            if !(0..=1 << 20).contains(&n) {
                return Err("stream entry with an invalid number of fields".into());
            }
            for _ in 0..2 * n {
                values.push(text(next()?));
            }
            lp_count = 2 * n + 4;
        }
        if int(next()?)? != lp_count {
            return Err("stream entry lp-count does not match it".into());
        }
        if flags & FLAG_DELETED != 0 {
            dead += 1;
        } else {
            live += 1;
            entries.push((id, Fields::pack(values.iter().map(Vec::as_slice))));
        }
    }
    if live != count as u64 || dead != deleted as u64 {
        return Err("stream listpack counts do not match its entries".into());
    }
    let Some(last) = last else {
        return Err("Empty listpack inside stream".into());
    };
    Ok(Decoded {
        master_fields: Fields::pack(master.iter().map(Vec::as_slice)),
        live,
        deleted: dead,
        last,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_round_trips_with_same_and_other_fields() {
        let first = StreamId::new(5, 1);
        let a = Fields::pack([b"a".as_slice(), b"1"].into_iter());
        let b = Fields::pack([b"b".as_slice(), b"x", b"c", b"12345678901"].into_iter());
        let c = Fields::pack([b"a".as_slice(), b"2"].into_iter());
        let ids = [StreamId::new(5, 1), StreamId::new(5, 2), StreamId::new(9, 0)];
        let entries = [(ids[0], a.clone()), (ids[1], b.clone()), (ids[2], c.clone())];
        let mut lp = listpack::Builder::default();
        let master = Fields::pack([b"a".as_slice()].into_iter());
        encode_node(&mut lp, first, &master, entries.iter().map(|(i, f)| (i, f)), 3);
        let blob = lp.finish().to_vec();
        let d = decode_node(first, &blob).unwrap();
        assert_eq!((d.live, d.deleted, d.last), (3, 0, ids[2]));
        assert_eq!(d.entries, entries.to_vec());
        // A wrong lp-count is refused.
        let mut bad = blob.clone();
        let n = bad.len();
        bad[n - 3] ^= 1;
        assert!(decode_node(first, &bad).is_err());
    }
}
