//! The stream type: entries by ID, consumer groups with their pending entries, as Redis
//! 7.0 keeps them.
//!
//! Entries live in a B-tree by ID, each one's fields and values packed in one
//! allocation (a count, then length-prefixed items). Beside them the stream keeps a
//! model of Redis's nodes (the listpacks of its radix tree): each node's first ID, its
//! master fields, its live and deleted counts and its byte size, updated as Redis
//! updates its listpacks. The data never lives in those nodes; the model is there
//! because approximate trimming (`MAXLEN ~`, `MINID ~`) removes whole nodes only, and
//! a user (or a client library's test) sees how many entries stayed: with the same
//! node boundaries Basalt keeps the same entries as Redis does. Snapshots write the
//! nodes as Redis's listpacks (`rdb`), so a file keeps them across a restart.
//!
//! IDs are (milliseconds, sequence) pairs, both u64, ordered as numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::listpack_size::{entry_size, int_entry_size};
use crate::varint;

/// A stream entry's ID.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

impl StreamId {
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    pub const MAX: StreamId = StreamId { ms: u64::MAX, seq: u64::MAX };

    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The next ID up, None after the last possible one.
    pub fn next(self) -> Option<StreamId> {
        if self.seq < u64::MAX {
            Some(StreamId::new(self.ms, self.seq + 1))
        } else if self.ms < u64::MAX {
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            None
        }
    }

    /// The next ID down, None before 0-0.
    pub fn prev(self) -> Option<StreamId> {
        if self.seq > 0 {
            Some(StreamId::new(self.ms, self.seq - 1))
        } else if self.ms > 0 {
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            None
        }
    }

    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The 16 bytes Redis writes for an ID (RDB node keys, pending entries): both
    /// halves big-endian.
    pub fn to_be_bytes(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.ms.to_be_bytes());
        out[8..].copy_from_slice(&self.seq.to_be_bytes());
        out
    }

    pub fn from_be_bytes(b: &[u8; 16]) -> StreamId {
        let mut ms = [0u8; 8];
        let mut seq = [0u8; 8];
        ms.copy_from_slice(&b[..8]);
        seq.copy_from_slice(&b[8..]);
        StreamId::new(u64::from_be_bytes(ms), u64::from_be_bytes(seq))
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// An entry's fields and values, alternating, packed: a varint count of items, then
/// each item as a varint length and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fields(Box<[u8]>);

impl Fields {
    pub fn pack<'a>(items: impl ExactSizeIterator<Item = &'a [u8]> + Clone) -> Fields {
        let mut len = varint::len_u64(items.len() as u64);
        for item in items.clone() {
            len += varint::len_u64(item.len() as u64) + item.len();
        }
        let mut buf = vec![0u8; len];
        let mut at = varint::write_u64(&mut buf, items.len() as u64);
        for item in items {
            at += varint::write_u64(&mut buf[at..], item.len() as u64);
            buf[at..at + item.len()].copy_from_slice(item);
            at += item.len();
        }
        Fields(buf.into_boxed_slice())
    }

    /// Number of items (twice the number of fields).
    pub fn items(&self) -> usize {
        varint::read_u64(&self.0, 0).0 as usize
    }

    /// The items in order: field, value, field, value ...
    pub fn iter(&self) -> FieldsIter<'_> {
        let (count, at) = varint::read_u64(&self.0, 0);
        FieldsIter { buf: &self.0, at, left: count as usize }
    }

    /// The fields only (every other item).
    pub fn names(&self) -> impl Iterator<Item = &[u8]> {
        self.iter().step_by(2)
    }

    fn heap_size(&self) -> usize {
        self.0.len()
    }
}

pub struct FieldsIter<'a> {
    buf: &'a [u8],
    at: usize,
    left: usize,
}

impl<'a> Iterator for FieldsIter<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (len, at) = varint::read_u64(self.buf, self.at);
        let end = at + len as usize;
        self.at = end;
        Some(&self.buf[at..end])
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for FieldsIter<'_> {}

impl Clone for FieldsIter<'_> {
    fn clone(&self) -> Self {
        FieldsIter { buf: self.buf, at: self.at, left: self.left }
    }
}

/// One of Redis's nodes, as far as the stream needs to know it (see the module header).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The fields of the node's first entry (its "master entry").
    pub master_fields: Fields,
    /// Entries not deleted, and entries marked deleted, in the node.
    pub live: u64,
    pub deleted: u64,
    /// The ID of the node's last entry, deleted or not.
    pub last: StreamId,
    /// The listpack's bytes other than its header, end byte and the two counts.
    rest_bytes: usize,
}

impl Node {
    /// The listpack's size in bytes, as Redis's `lpBytes`.
    pub fn bytes(&self) -> usize {
        7 + int_entry_size(self.live as i64) + int_entry_size(self.deleted as i64) + self.rest_bytes
    }
}

/// A pending entry of a consumer group: delivered, not yet acknowledged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// Unix ms of the last delivery.
    pub delivery_time: i64,
    pub delivery_count: u64,
    pub consumer: Vec<u8>,
}

/// A consumer of a group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumer {
    /// Unix ms of the consumer's last read or claim.
    pub seen_time: i64,
    /// The IDs pending for it.
    pub pel: BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The last ID delivered to the group.
    pub last_id: StreamId,
    /// The group's logical read counter; None where it cannot be known (Redis's -1).
    pub entries_read: Option<u64>,
    pub pel: BTreeMap<StreamId, Pending>,
    /// By name, in byte order (as Redis's radix tree lists them).
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
}

impl Group {
    /// Removes a pending entry from the group and from its consumer.
    pub fn remove_pending(&mut self, id: StreamId) -> Option<Pending> {
        let p = self.pel.remove(&id)?;
        if let Some(c) = self.consumers.get_mut(&p.consumer) {
            c.pel.remove(&id);
        }
        Some(p)
    }
}

/// Redis's `stream-node-max-bytes` and `stream-node-max-entries`.
#[derive(Clone, Copy, Debug)]
pub struct NodeLimits {
    pub max_bytes: usize,
    pub max_entries: u64,
}

impl Default for NodeLimits {
    fn default() -> NodeLimits {
        NodeLimits { max_bytes: 4096, max_entries: 100 }
    }
}

/// The largest listpack Redis makes for a stream (`STREAM_LISTPACK_MAX_SIZE`).
pub const NODE_MAX_SIZE: usize = 1 << 30;

/// What to trim to: MAXLEN or MINID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimTo {
    MaxLen(u64),
    MinId(StreamId),
}

/// A trim as XADD and XTRIM ask for it.
#[derive(Clone, Copy, Debug)]
pub struct Trim {
    pub to: TrimTo,
    /// `~`: whole nodes only.
    pub approx: bool,
    /// At most this many entries removed (0: no limit).
    pub limit: u64,
}

/// A stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stream {
    entries: BTreeMap<StreamId, Fields>,
    nodes: BTreeMap<StreamId, Node>,
    /// The ID of the last entry ever added (or set by XSETID).
    pub last_id: StreamId,
    /// The greatest ID deleted by XDEL.
    pub max_deleted_id: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
    /// By name, in byte order.
    pub groups: BTreeMap<Vec<u8>, Group>,
}

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The first entry's ID, 0-0 when empty (Redis's `first_id`).
    pub fn first_id(&self) -> StreamId {
        self.entries.keys().next().copied().unwrap_or_default()
    }

    pub fn first_entry(&self) -> Option<(&StreamId, &Fields)> {
        self.entries.iter().next()
    }

    pub fn last_entry(&self) -> Option<(&StreamId, &Fields)> {
        self.entries.iter().next_back()
    }

    pub fn get(&self, id: StreamId) -> Option<&Fields> {
        self.entries.get(&id)
    }

    pub fn contains(&self, id: StreamId) -> bool {
        self.entries.contains_key(&id)
    }

    /// Entries with IDs in `start..=end`, ascending.
    pub fn range(&self, start: StreamId, end: StreamId) -> impl DoubleEndedIterator<Item = (&StreamId, &Fields)> {
        let empty = start > end;
        let (s, e) = if empty { (StreamId::MIN, StreamId::MIN) } else { (start, end) };
        self.entries.range(s..=e).filter(move |_| !empty)
    }

    /// The nodes, by first ID (for the RDB writer).
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = (&StreamId, &Node)> {
        self.nodes.iter()
    }

    /// The live entries of the node that starts at `first`.
    pub fn node_entries(&self, first: StreamId) -> impl Iterator<Item = (&StreamId, &Fields)> {
        let end = self.nodes.range((std::ops::Bound::Excluded(first), std::ops::Bound::Unbounded)).next().map(|(k, _)| *k);
        self.entries
            .range(first..)
            .take_while(move |(id, _)| end.map_or(true, |e| **id < e))
    }

    /// Appends an entry whose ID is greater than `last_id` (the caller checked), into
    /// the tail node or a new one as Redis's `streamAppendItem` decides.
    pub fn append(&mut self, id: StreamId, items: &[&[u8]], limits: NodeLimits) {
        let fields = Fields::pack(items.iter().copied());
        let field_count = items.len() / 2;
        let raw_len: usize = items.iter().map(|i| i.len()).sum();
        let max_bytes = if limits.max_bytes == 0 || limits.max_bytes > NODE_MAX_SIZE { NODE_MAX_SIZE } else { limits.max_bytes };
        let tail_full = match self.nodes.iter().next_back() {
            None => true,
            Some((_, tail)) => {
                tail.bytes() + raw_len >= max_bytes
                    || (limits.max_entries > 0 && tail.live + tail.deleted >= limits.max_entries)
            }
        };
        if tail_full {
            // A new node: its master entry is count, deleted, the number of fields, the
            // fields and a 0 terminator (the counts are outside `rest_bytes`).
            let rest = int_entry_size(field_count as i64)
                + items.iter().step_by(2).map(|f| entry_size(f)).sum::<usize>()
                + int_entry_size(0);
            let master_fields = Fields::pack(items.iter().step_by(2).copied());
            self.nodes.insert(id, Node { master_fields, live: 0, deleted: 0, last: id, rest_bytes: rest });
        }
        let (&master, node) = self.nodes.iter_mut().next_back().expect("a tail node");
        let same_fields = node.master_fields.items() == field_count
            && node.master_fields.iter().zip(items.iter().step_by(2)).all(|(a, b)| a == *b);
        let ms_diff = id.ms.wrapping_sub(master.ms) as i64;
        let seq_diff = id.seq.wrapping_sub(master.seq) as i64;
        let mut size = int_entry_size(if same_fields { 2 } else { 0 }) + int_entry_size(ms_diff) + int_entry_size(seq_diff);
        let lp_count = if same_fields {
            size += items.iter().skip(1).step_by(2).map(|v| entry_size(v)).sum::<usize>();
            field_count + 3
        } else {
            size += int_entry_size(field_count as i64) + items.iter().map(|i| entry_size(i)).sum::<usize>();
            2 * field_count + 4
        };
        size += int_entry_size(lp_count as i64);
        node.rest_bytes += size;
        node.live += 1;
        node.last = id;
        self.entries.insert(id, fields);
        self.last_id = id;
        self.entries_added += 1;
    }

    /// Deletes an entry (XDEL): Ok when it existed. Its node drops it, or goes when it
    /// was the node's last live entry.
    pub fn delete(&mut self, id: StreamId) -> bool {
        if self.entries.remove(&id).is_none() {
            return false;
        }
        self.unlink_from_node(id);
        if id > self.max_deleted_id {
            self.max_deleted_id = id;
        }
        true
    }

    fn node_of(&self, id: StreamId) -> Option<StreamId> {
        self.nodes.range(..=id).next_back().map(|(k, _)| *k)
    }

    fn unlink_from_node(&mut self, id: StreamId) {
        let Some(first) = self.node_of(id) else { return };
        let node = self.nodes.get_mut(&first).expect("node");
        if node.live <= 1 {
            self.nodes.remove(&first);
        } else {
            node.live -= 1;
            node.deleted += 1;
        }
    }

    /// Trims as Redis's `streamTrim`: whole nodes from the head while they can go, then
    /// (unless approximate) entries of the next node; Returns the entries removed.
    pub fn trim(&mut self, trim: Trim) -> u64 {
        let mut removed = 0u64;
        loop {
            let len = self.entries.len() as u64;
            if let TrimTo::MaxLen(max) = trim.to {
                if len <= max {
                    break;
                }
            }
            let Some((&first, node)) = self.nodes.iter().next() else { break };
            let live = node.live;
            if trim.limit > 0 && removed + live > trim.limit {
                break;
            }
            let whole = match trim.to {
                TrimTo::MaxLen(max) => len - live >= max,
                TrimTo::MinId(min) => node.last < min,
            };
            if whole {
                let end = self.nodes.range((std::ops::Bound::Excluded(first), std::ops::Bound::Unbounded)).next().map(|(k, _)| *k);
                let ids: Vec<StreamId> = self
                    .entries
                    .range(first..)
                    .take_while(|(id, _)| end.map_or(true, |e| **id < e))
                    .map(|(id, _)| *id)
                    .collect();
                for id in &ids {
                    self.entries.remove(id);
                }
                self.nodes.remove(&first);
                removed += live;
                continue;
            }
            if trim.approx {
                break;
            }
            // Entries from inside this node, marked deleted in it.
            let mut gone = 0u64;
            loop {
                let Some((&id, _)) = self.entries.iter().next() else { break };
                let stop = match trim.to {
                    TrimTo::MaxLen(max) => self.entries.len() as u64 <= max,
                    TrimTo::MinId(min) => id >= min,
                };
                if stop || self.node_of(id) != Some(first) {
                    break;
                }
                self.entries.remove(&id);
                gone += 1;
            }
            let node = self.nodes.get_mut(&first).expect("node");
            node.live -= gone;
            node.deleted += gone;
            removed += gone;
            break;
        }
        removed
    }

    /// The ID XADD `*` (or `ms-*`) makes: `ms` milliseconds with the next sequence when
    /// `seq` is None. None when no ID is left.
    pub fn next_id(&self, now_ms: u64) -> Option<StreamId> {
        if now_ms > self.last_id.ms {
            Some(StreamId::new(now_ms, 0))
        } else {
            self.last_id.next()
        }
    }

    /// Whether an XDEL'd ID may lie in `start..=end` (Redis's `streamRangeHasTombstones`).
    pub fn range_has_tombstones(&self, start: Option<StreamId>, end: Option<StreamId>) -> bool {
        if self.entries.is_empty() || self.max_deleted_id.is_zero() {
            return false;
        }
        if self.first_id() > self.max_deleted_id {
            return false;
        }
        let start = start.unwrap_or(StreamId::MIN);
        let end = end.unwrap_or(StreamId::MAX);
        start <= self.max_deleted_id && self.max_deleted_id <= end
    }

    /// The logical position of `id` counted from the first entry ever added, where it
    /// can be known (Redis's `streamEstimateDistanceFromFirstEverEntry`).
    pub fn estimate_distance(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        let len = self.entries.len() as u64;
        if len == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        match id.cmp(&self.last_id) {
            std::cmp::Ordering::Equal => return Some(self.entries_added),
            std::cmp::Ordering::Greater => return None,
            std::cmp::Ordering::Less => {}
        }
        let first = self.first_id();
        if self.max_deleted_id.is_zero() || self.max_deleted_id < first {
            if id < first {
                return Some(self.entries_added - len);
            } else if id == first {
                return Some(self.entries_added - len + 1);
            }
        }
        None
    }

    /// A group's lag (XINFO's `lag`), where it can be known: negative when the group
    /// was told (ENTRIESREAD) it read more than was added, as Redis subtracts.
    pub fn lag(&self, group: &Group) -> Option<i64> {
        let lag = |read: u64| (self.entries_added as i64).wrapping_sub(read as i64);
        if self.entries_added == 0 {
            return Some(0);
        }
        if let Some(read) = group.entries_read {
            if !self.range_has_tombstones(Some(group.last_id), None) {
                return Some(lag(read));
            }
        }
        self.estimate_distance(group.last_id).map(lag)
    }

    /// Advances a group past `id`, delivered now, keeping its read counter as Redis's
    /// XREADGROUP does.
    pub fn advance_group(&mut self, name: &[u8], id: StreamId) {
        let tombstones = self.range_has_tombstones(Some(id), None);
        let estimate = self.estimate_distance(id);
        let entries_added = self.entries_added;
        let Some(group) = self.groups.get_mut(name) else { return };
        if id <= group.last_id {
            return;
        }
        match group.entries_read {
            Some(n) if !tombstones => group.entries_read = Some(n + 1),
            _ if entries_added > 0 => group.entries_read = estimate,
            _ => {}
        }
        group.last_id = id;
    }

    /// Approximate heap bytes, for MEMORY USAGE (`samples` entries measured and scaled).
    pub fn heap_size(&self, samples: Option<usize>) -> usize {
        const PER_ENTRY: usize = 16 + 16 + 16;
        let entries = super::sampled_sum(self.entries.values().map(|f| f.heap_size() + PER_ENTRY), self.entries.len(), samples);
        let nodes: usize = self.nodes.values().map(|n| n.master_fields.heap_size() + 96).sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + 96 + g.pel.values().map(|p| 64 + p.consumer.len()).sum::<usize>() + g.consumers.iter().map(|(n, c)| 64 + n.len() + c.pel.len() * 24).sum::<usize>())
            .sum();
        std::mem::size_of::<Stream>() + entries + nodes + groups
    }

    /// Rebuilds a stream from Redis's nodes as an RDB file holds them: each node's
    /// first ID, master fields, live entries and size, then its entries. Used by the
    /// loader; entries must come in ascending order, after their node.
    pub fn load_node(&mut self, first: StreamId, master_fields: Fields, live: u64, deleted: u64, last: StreamId, lp_bytes: usize) {
        let rest = lp_bytes.saturating_sub(7 + int_entry_size(live as i64) + int_entry_size(deleted as i64));
        self.nodes.insert(first, Node { master_fields, live, deleted, last, rest_bytes: rest });
    }

    /// Adds a loaded entry (see [`Stream::load_node`]): not counted as added.
    pub fn load_entry(&mut self, id: StreamId, fields: Fields) {
        self.entries.insert(id, fields);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId::new(ms, seq)
    }

    fn add(s: &mut Stream, n: u64, value: &[u8]) {
        for _ in 0..n {
            let next = s.last_id.next().unwrap();
            s.append(next, &[b"field", value], NodeLimits::default());
        }
    }

    #[test]
    fn fields_pack_and_iterate() {
        let items: Vec<&[u8]> = vec![b"a", b"", b"ccc", &[0u8; 300]];
        let f = Fields::pack(items.iter().copied());
        assert_eq!(f.items(), 4);
        assert_eq!(f.iter().collect::<Vec<_>>(), items);
        assert_eq!(f.names().collect::<Vec<_>>(), vec![b"a".as_slice(), b"ccc"]);
    }

    #[test]
    fn nodes_hold_at_most_max_entries() {
        let mut s = Stream::new();
        add(&mut s, 250, b"v");
        let counts: Vec<u64> = s.nodes().map(|(_, n)| n.live).collect();
        assert_eq!(counts, vec![100, 100, 50]);
    }

    #[test]
    fn nodes_are_cut_by_bytes() {
        let mut s = Stream::new();
        add(&mut s, 20, &[b'x'; 500]);
        // Each entry is about 510 bytes: a node holds what fits below 4096 bytes.
        let counts: Vec<u64> = s.nodes().map(|(_, n)| n.live).collect();
        assert!(counts.iter().all(|&c| c <= 8), "{counts:?}");
        assert_eq!(counts.iter().sum::<u64>(), 20);
    }

    #[test]
    fn approximate_trim_removes_whole_nodes_only() {
        let mut s = Stream::new();
        add(&mut s, 250, b"v");
        let gone = s.trim(Trim { to: TrimTo::MaxLen(120), approx: true, limit: 10_000 });
        assert_eq!((gone, s.len()), (100, 150));
        let gone = s.trim(Trim { to: TrimTo::MaxLen(120), approx: false, limit: 0 });
        assert_eq!((gone, s.len()), (30, 120));
        // The node that lost 30 entries keeps them counted as deleted.
        let (_, first) = s.nodes().next().unwrap();
        assert_eq!((first.live, first.deleted), (70, 30));
    }

    #[test]
    fn limit_stops_before_a_node_that_would_pass_it() {
        let mut s = Stream::new();
        add(&mut s, 250, b"v");
        let gone = s.trim(Trim { to: TrimTo::MaxLen(0), approx: true, limit: 150 });
        assert_eq!(gone, 100);
    }

    #[test]
    fn minid_trim() {
        let mut s = Stream::new();
        for ms in 1..=10 {
            s.append(id(ms, 0), &[b"f", b"v"], NodeLimits::default());
        }
        assert_eq!(s.trim(Trim { to: TrimTo::MinId(id(4, 0)), approx: true, limit: 10_000 }), 0);
        assert_eq!(s.trim(Trim { to: TrimTo::MinId(id(4, 0)), approx: false, limit: 0 }), 3);
        assert_eq!(s.first_id(), id(4, 0));
    }

    #[test]
    fn deleting_a_nodes_last_entry_drops_the_node() {
        let mut s = Stream::new();
        s.append(id(1, 0), &[b"f", b"v"], NodeLimits::default());
        assert!(s.delete(id(1, 0)));
        assert!(!s.delete(id(1, 0)));
        assert_eq!(s.nodes().count(), 0);
        assert_eq!(s.max_deleted_id, id(1, 0));
        assert_eq!(s.entries_added, 1);
    }

    #[test]
    fn node_bytes_follow_listpack_sizes() {
        let mut s = Stream::new();
        s.append(id(1, 0), &[b"a", b"1"], NodeLimits::default());
        // Header 6 + end 1 + count 2 + deleted 2 + master (num 2, "a" 3, 0 2)
        // + entry (flags 2, ms 2, seq 2, value "1" 2, lp-count 2).
        assert_eq!(s.nodes().next().unwrap().1.bytes(), 7 + 2 + 2 + 7 + 10);
    }

    #[test]
    fn ids_order_and_step() {
        assert!(id(1, 5) < id(2, 0));
        assert_eq!(id(1, u64::MAX).next(), Some(id(2, 0)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(id(2, 0).prev(), Some(id(1, u64::MAX)));
        assert_eq!(StreamId::from_be_bytes(&id(7, 9).to_be_bytes()), id(7, 9));
        assert_eq!(id(7, 9).to_string(), "7-9");
    }
}
