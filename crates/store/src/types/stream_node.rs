//! One node of a stream: a listpack laid out as Redis 7.0 lays out its stream nodes, in
//! memory and in RDB files alike, read and changed in place.
//!
//! Layout (every number a listpack integer; IDs are differences from the node's key,
//! its first entry's ID):
//! ```text
//! master entry: count  deleted  num-fields  field_1 .. field_N  0
//! each entry:   flags  ms-diff  seq-diff  [num-fields  field value ..]  lp-count
//!               flags: 1 deleted, 2 same fields as the master entry (values only)
//!               lp-count: the entry's elements before it (N + 3, or 2N + 4)
//! ```
//! A deleted entry stays where it is, flagged, as in Redis; the node goes when its last
//! live entry does.

use super::listpack::{self, element, END, HEADER};
use super::stream_id::StreamId;
use crate::str_ref::StrRef;

pub const FLAG_DELETED: i64 = 1;
pub const FLAG_SAME_FIELDS: i64 = 2;

fn int(e: StrRef<'_>) -> i64 {
    match e {
        StrRef::Int(n) => n,
        StrRef::Bytes(_) => 0,
    }
}

/// Whether a listpack element reads as `b`.
fn same_text(e: StrRef<'_>, b: &[u8]) -> bool {
    match e {
        StrRef::Bytes(x) => x == b,
        StrRef::Int(n) => itoa::Buffer::new().format(n).as_bytes() == b,
    }
}

/// The master entry of a node.
pub struct Master {
    pub live: u64,
    pub deleted: u64,
    /// Offset of the first master field, and how many there are.
    pub fields_at: usize,
    pub field_count: usize,
    /// Offset of the first entry.
    pub entries_at: usize,
}

pub fn master(lp: &[u8]) -> Master {
    let (live, at) = element(lp, HEADER).unwrap_or((StrRef::Int(0), lp.len()));
    let (deleted, at) = element(lp, at).unwrap_or((StrRef::Int(0), lp.len()));
    let (n, fields_at) = element(lp, at).unwrap_or((StrRef::Int(0), lp.len()));
    let field_count = usize::try_from(int(n)).unwrap_or(0);
    let mut at = fields_at;
    for _ in 0..field_count {
        at = element(lp, at).map_or(lp.len(), |(_, next)| next);
    }
    // The master entry's 0 terminator.
    let entries_at = element(lp, at).map_or(lp.len(), |(_, next)| next);
    Master { live: int(live) as u64, deleted: int(deleted) as u64, fields_at, field_count, entries_at }
}

/// One entry of a node, read in place.
#[derive(Clone, Copy)]
pub struct EntryRef<'a> {
    pub id: StreamId,
    pub deleted: bool,
    lp: &'a [u8],
    /// The master fields (for an entry with the same fields) and the entry's own
    /// elements (fields and values, or values only).
    master_fields_at: usize,
    same_fields: bool,
    items_at: usize,
    field_count: usize,
    /// Offset of the flags element (to mark it deleted).
    pub(crate) flags_at: usize,
}

impl<'a> EntryRef<'a> {
    /// Number of items: fields and values.
    pub fn items(&self) -> usize {
        2 * self.field_count
    }

    /// Field, value, field, value ... (numbers as listpacks keep them).
    pub fn iter(&self) -> impl Iterator<Item = StrRef<'a>> + 'a {
        let lp = self.lp;
        let (mut own, mut master) = (self.items_at, self.master_fields_at);
        let same = self.same_fields;
        (0..self.items()).filter_map(move |k| {
            let from = if same && k % 2 == 0 { &mut master } else { &mut own };
            let (e, next) = element(lp, *from)?;
            *from = next;
            Some(e)
        })
    }
}

/// The entries of a node, deleted ones included, in ID order.
pub struct Entries<'a> {
    lp: &'a [u8],
    first: StreamId,
    master_fields_at: usize,
    master_count: usize,
    at: usize,
}

pub fn entries(lp: &[u8], first: StreamId) -> Entries<'_> {
    let m = master(lp);
    Entries { lp, first, master_fields_at: m.fields_at, master_count: m.field_count, at: m.entries_at }
}

impl<'a> Iterator for Entries<'a> {
    type Item = EntryRef<'a>;
    fn next(&mut self) -> Option<EntryRef<'a>> {
        let lp = self.lp;
        let flags_at = self.at;
        let (flags, at) = element(lp, flags_at)?;
        let (ms, at) = element(lp, at)?;
        let (seq, mut at) = element(lp, at)?;
        let flags = int(flags);
        let same_fields = flags & FLAG_SAME_FIELDS != 0;
        let field_count = if same_fields {
            self.master_count
        } else {
            let (n, next) = element(lp, at)?;
            at = next;
            usize::try_from(int(n)).unwrap_or(0)
        };
        let items_at = at;
        let own_items = if same_fields { field_count } else { 2 * field_count };
        for _ in 0..own_items {
            at = element(lp, at)?.1;
        }
        // lp-count.
        self.at = element(lp, at)?.1;
        let id = StreamId::new(self.first.ms.wrapping_add(int(ms) as u64), self.first.seq.wrapping_add(int(seq) as u64));
        Some(EntryRef {
            id,
            deleted: flags & FLAG_DELETED != 0,
            lp,
            master_fields_at: self.master_fields_at,
            same_fields,
            items_at,
            field_count,
            flags_at,
        })
    }
}

/// A new node whose first entry will be `items`: its master entry (a count of 1
/// already, as Redis writes it) with `items`' fields.
pub fn new_node(items: &[&[u8]]) -> Vec<u8> {
    let mut lp = vec![0u8; HEADER];
    listpack::push_int(&mut lp, 1);
    listpack::push_int(&mut lp, 0);
    listpack::push_int(&mut lp, (items.len() / 2) as i64);
    for f in items.iter().step_by(2) {
        listpack::push(&mut lp, f);
    }
    listpack::push_int(&mut lp, 0);
    lp.push(END);
    let count = 4 + items.len() / 2;
    listpack::set_header(&mut lp, count);
    lp
}

/// Appends an entry to `lp` (whose master count already counts it for a new node, or is
/// raised here for an existing one), as Redis's `streamAppendItem`.
pub fn append(lp: &mut Vec<u8>, first: StreamId, id: StreamId, items: &[&[u8]], fresh: bool) {
    let m = master(lp);
    let field_count = items.len() / 2;
    let same = m.field_count == field_count && {
        let mut at = m.fields_at;
        items.iter().step_by(2).all(|f| match element(lp, at) {
            Some((e, next)) => {
                at = next;
                same_text(e, f)
            }
            None => false,
        })
    };
    let elements_before = listpack::header_count(lp);
    lp.pop(); // the end byte
    listpack::push_int(lp, if same { FLAG_SAME_FIELDS } else { 0 });
    listpack::push_int(lp, id.ms.wrapping_sub(first.ms) as i64);
    listpack::push_int(lp, id.seq.wrapping_sub(first.seq) as i64);
    let added = if same {
        for v in items.iter().skip(1).step_by(2) {
            listpack::push(lp, v);
        }
        listpack::push_int(lp, field_count as i64 + 3);
        field_count + 4
    } else {
        listpack::push_int(lp, field_count as i64);
        for item in items {
            listpack::push(lp, item);
        }
        listpack::push_int(lp, 2 * field_count as i64 + 4);
        2 * field_count + 5
    };
    lp.push(END);
    let count = elements_before.map_or(usize::MAX, |n| n + added);
    listpack::set_header(lp, count);
    if !fresh {
        listpack::replace_int(lp, HEADER, m.live as i64 + 1);
    }
}

/// Marks the live entries whose flags elements are at `flags_at` deleted, and moves them
/// from the node's live count to its deleted count.
pub fn mark_deleted(lp: &mut Vec<u8>, flags_at: &[usize]) {
    for &at in flags_at {
        let Some((flags, _)) = element(lp, at) else { return };
        // Flags are 0..3: a one-byte integer, rewritten in place (no offset moves).
        lp[at] = (int(flags) | FLAG_DELETED) as u8;
    }
    let n = flags_at.len() as i64;
    let m = master(lp);
    listpack::replace_int(lp, HEADER, m.live as i64 - n);
    let deleted_at = element(lp, HEADER).map_or(HEADER, |(_, next)| next);
    listpack::replace_int(lp, deleted_at, m.deleted as i64 + n);
}

/// The last entry's ID, deleted or not (Redis's `lpGetEdgeStreamID` for the end).
pub fn last_id(lp: &[u8], first: StreamId) -> StreamId {
    entries(lp, first).last().map_or(first, |e| e.id)
}

/// Checks a node from a file as Redis's deep integrity check does: the master entry,
/// every entry's shape and lp-count, the counts, IDs rising from the node's key.
/// Ok((live, deleted, last ID)).
pub fn validate(lp: &[u8], first: StreamId) -> Result<(u64, u64, StreamId), String> {
    let items = listpack::decode(lp).map_err(str::to_string)?;
    let mut rest = items.iter().copied();
    let mut next = || rest.next().ok_or_else(|| "stream listpack ends inside an entry".to_string());
    let num = |e: StrRef<'_>| match e {
        StrRef::Int(n) => Ok(n),
        StrRef::Bytes(_) => Err("stream listpack has a string where an integer belongs".to_string()),
    };
    let count = num(next()?)?;
    let deleted = num(next()?)?;
    let master_count = num(next()?)?;
    if count < 0 || deleted < 0 || !(0..=1 << 20).contains(&master_count) {
        return Err("stream listpack master entry is invalid".into());
    }
    for _ in 0..master_count {
        next()?;
    }
    if num(next()?)? != 0 {
        return Err("stream listpack master entry terminator is not 0".into());
    }
    let (mut live, mut dead) = (0u64, 0u64);
    let mut last: Option<StreamId> = None;
    while let Ok(flags) = next() {
        let flags = num(flags)?;
        if !(0..=3).contains(&flags) {
            return Err("stream entry with unknown flags".into());
        }
        let id = StreamId::new(first.ms.wrapping_add(num(next()?)? as u64), first.seq.wrapping_add(num(next()?)? as u64));
        if id < first || last.is_some_and(|l| id <= l) {
            return Err("stream entry IDs are not in order".into());
        }
        last = Some(id);
        let lp_count = if flags & FLAG_SAME_FIELDS != 0 {
            for _ in 0..master_count {
                next()?;
            }
            master_count + 3
        } else {
            let n = num(next()?)?;
            if !(0..=1 << 20).contains(&n) {
                return Err("stream entry with an invalid number of fields".into());
            }
            for _ in 0..2 * n {
                next()?;
            }
            2 * n + 4
        };
        if num(next()?)? != lp_count {
            return Err("stream entry lp-count does not match it".into());
        }
        if flags & FLAG_DELETED != 0 {
            dead += 1;
        } else {
            live += 1;
        }
    }
    if live != count as u64 || dead != deleted as u64 {
        return Err("stream listpack counts do not match its entries".into());
    }
    let last = last.ok_or("Empty listpack inside stream")?;
    Ok((live, dead, last))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(e: &EntryRef<'_>) -> Vec<Vec<u8>> {
        e.iter().map(|x| x.to_vec()).collect()
    }

    #[test]
    fn a_node_appends_reads_and_deletes_in_place() {
        let first = StreamId::new(5, 1);
        let a: Vec<&[u8]> = vec![b"a", b"1"];
        let mut lp = new_node(&a);
        append(&mut lp, first, first, &a, true);
        append(&mut lp, first, StreamId::new(5, 2), &[b"b", b"x", b"c", b"12345678901"], false);
        append(&mut lp, first, StreamId::new(9, 0), &[b"a", b"2"], false);
        let (live, dead, last) = validate(&lp, first).expect("valid");
        assert_eq!((live, dead, last), (3, 0, StreamId::new(9, 0)));
        let all: Vec<_> = entries(&lp, first).collect();
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![first, StreamId::new(5, 2), StreamId::new(9, 0)]);
        assert_eq!(texts(&all[0]), vec![b"a".to_vec(), b"1".to_vec()]);
        assert_eq!(texts(&all[1]), vec![b"b".to_vec(), b"x".to_vec(), b"c".to_vec(), b"12345678901".to_vec()]);
        assert_eq!(texts(&all[2]), vec![b"a".to_vec(), b"2".to_vec()]);
        let at = all[1].flags_at;
        mark_deleted(&mut lp, &[at]);
        assert_eq!(validate(&lp, first).expect("valid"), (2, 1, StreamId::new(9, 0)));
        assert!(entries(&lp, first).nth(1).expect("valid").deleted);
        assert_eq!(lp.len(), u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]) as usize);
        // A count that grows past one byte moves the bytes after it.
        for k in 1..200u64 {
            append(&mut lp, first, StreamId::new(10, k), &[b"a", b"v"], false);
        }
        assert_eq!(validate(&lp, first).expect("valid").0, 201);
        assert_eq!(entries(&lp, first).filter(|e| !e.deleted).count(), 201);
    }

    #[test]
    fn damage_is_refused() {
        let first = StreamId::new(1, 0);
        let mut lp = new_node(&[b"f", b"v"]);
        append(&mut lp, first, first, &[b"f", b"v"], true);
        assert!(validate(&lp, first).is_ok());
        let n = lp.len();
        let mut bad = lp.clone();
        bad[n - 3] ^= 1; // the lp-count
        assert!(validate(&bad, first).is_err());
    }
}
