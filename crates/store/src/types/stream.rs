//! The stream type: entries by ID, consumer groups with their pending entries, as Redis
//! 7.0 keeps them.
//!
//! Entries live in nodes as Redis's do: listpacks of up to `stream-node-max-entries`
//! entries and `stream-node-max-bytes` bytes, keyed by their first entry's ID, each
//! entry's ID a difference from it and its field names left out when they are the
//! node's first entry's (`stream_node.rs`). So a stream takes about the memory Redis's
//! takes, approximate trims (`MAXLEN ~`, `MINID ~`), which remove whole nodes only, keep
//! exactly the entries Redis keeps, and snapshots write the nodes as they are.
//!
//! IDs are (milliseconds, sequence) pairs, both u64, ordered as numbers.

use std::collections::{BTreeMap, BTreeSet};

pub use super::stream_id::StreamId;
use super::stream_node::{self as node, EntryRef};

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
    /// The nodes by their first entry's ID (Redis's radix tree keys).
    nodes: BTreeMap<StreamId, Vec<u8>>,
    /// Entries not deleted.
    len: u64,
    /// The ID of the last entry ever added (or set by XSETID).
    pub last_id: StreamId,
    /// The greatest ID deleted by XDEL.
    pub max_deleted_id: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
    /// By name, in byte order.
    pub groups: BTreeMap<Vec<u8>, Group>,
}

/// Entries from a start ID on, node after node, deleted ones left out.
pub struct Range<'a> {
    nodes: std::collections::btree_map::Range<'a, StreamId, Vec<u8>>,
    current: Option<node::Entries<'a>>,
    start: StreamId,
    end: StreamId,
}

impl<'a> Iterator for Range<'a> {
    type Item = EntryRef<'a>;
    fn next(&mut self) -> Option<EntryRef<'a>> {
        loop {
            if let Some(entries) = self.current.as_mut() {
                for e in entries.by_ref() {
                    if e.id > self.end {
                        self.current = None;
                        return None;
                    }
                    if !e.deleted && e.id >= self.start {
                        return Some(e);
                    }
                }
            }
            let (first, lp) = self.nodes.next()?;
            if *first > self.end {
                return None;
            }
            self.current = Some(node::entries(lp, *first));
        }
    }
}

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first live entry's ID, 0-0 when empty (Redis's `first_id`).
    pub fn first_id(&self) -> StreamId {
        self.first_entry().map_or(StreamId::MIN, |e| e.id)
    }

    pub fn first_entry(&self) -> Option<EntryRef<'_>> {
        self.range(StreamId::MIN, StreamId::MAX).next()
    }

    pub fn last_entry(&self) -> Option<EntryRef<'_>> {
        self.range_rev(StreamId::MIN, StreamId::MAX).next()
    }

    /// The node that would hold `id`: the last whose first ID is not above it.
    fn node_of(&self, id: StreamId) -> Option<StreamId> {
        self.nodes.range(..=id).next_back().map(|(k, _)| *k)
    }

    pub fn get(&self, id: StreamId) -> Option<EntryRef<'_>> {
        self.range(id, id).next()
    }

    /// Whether a live entry's ID is above `id` (read from the node that would hold the
    /// next one on, not from the end).
    pub fn has_entries_after(&self, id: StreamId) -> bool {
        id.next().is_some_and(|start| self.range(start, StreamId::MAX).next().is_some())
    }

    pub fn contains(&self, id: StreamId) -> bool {
        self.get(id).is_some()
    }

    /// Live entries with IDs in `start..=end`, ascending.
    pub fn range(&self, start: StreamId, end: StreamId) -> Range<'_> {
        let from = if start > end { StreamId::MAX } else { self.node_of(start).unwrap_or(start) };
        let to = if start > end { StreamId::MIN } else { end };
        let nodes = if from <= to { self.nodes.range(from..) } else { self.nodes.range(StreamId::MAX..StreamId::MAX) };
        Range { nodes, current: None, start, end }
    }

    /// Live entries with IDs in `start..=end`, descending (each node is read forward,
    /// at most `stream-node-max-entries` entries, then given backwards).
    pub fn range_rev(&self, start: StreamId, end: StreamId) -> impl Iterator<Item = EntryRef<'_>> {
        let empty = start > end;
        let nodes: Box<dyn Iterator<Item = (&StreamId, &Vec<u8>)>> =
            if empty { Box::new(std::iter::empty()) } else { Box::new(self.nodes.range(..=end).rev()) };
        nodes
            .map_while(move |(first, lp)| {
                let mut entries: Vec<EntryRef<'_>> = node::entries(lp, *first).filter(|e| !e.deleted && e.id >= start && e.id <= end).collect();
                entries.reverse();
                // Nodes wholly below `start` end the walk.
                (node::last_id(lp, *first) >= start).then_some(entries)
            })
            .flatten()
    }

    /// The nodes, by first ID, as listpacks (for the RDB writer and XINFO).
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = (&StreamId, &[u8])> {
        self.nodes.iter().map(|(k, v)| (k, v.as_slice()))
    }

    /// Appends an entry whose ID is greater than `last_id` (the caller checked), into
    /// the tail node or a new one as Redis's `streamAppendItem` decides.
    pub fn append(&mut self, id: StreamId, items: &[&[u8]], limits: NodeLimits) {
        let raw_len: usize = items.iter().map(|i| i.len()).sum();
        let max_bytes = if limits.max_bytes == 0 || limits.max_bytes > NODE_MAX_SIZE { NODE_MAX_SIZE } else { limits.max_bytes };
        let tail_full = match self.nodes.iter().next_back() {
            None => true,
            Some((_, tail)) => {
                let m = node::master(tail);
                tail.len() + raw_len >= max_bytes || (limits.max_entries > 0 && m.live + m.deleted >= limits.max_entries)
            }
        };
        let fresh = tail_full;
        if fresh {
            // The node's spare room goes before a new one starts (Redis's
            // lpShrinkToFit).
            if let Some((_, tail)) = self.nodes.iter_mut().next_back() {
                tail.shrink_to_fit();
            }
            self.nodes.insert(id, node::new_node(items));
        }
        let (&first, lp) = self.nodes.iter_mut().next_back().expect("a tail node");
        node::append(lp, first, id, items, fresh);
        self.len += 1;
        self.last_id = id;
        self.entries_added += 1;
    }

    /// Deletes an entry (XDEL): true when it existed. It stays in its node, flagged; the
    /// node goes with its last live entry.
    pub fn delete(&mut self, id: StreamId) -> bool {
        let Some(first) = self.node_of(id) else { return false };
        let lp = self.nodes.get_mut(&first).expect("node");
        let Some(e) = node::entries(lp, first).find(|e| e.id == id && !e.deleted) else { return false };
        let flags_at = e.flags_at;
        if node::master(lp).live <= 1 {
            self.nodes.remove(&first);
        } else {
            node::mark_deleted(lp, &[flags_at]);
        }
        self.len -= 1;
        if id > self.max_deleted_id {
            self.max_deleted_id = id;
        }
        true
    }

    /// Trims as Redis's `streamTrim`: whole nodes from the head while they can go, then
    /// (unless approximate) entries of the next node, marked deleted in it. Returns the
    /// entries removed.
    pub fn trim(&mut self, trim: Trim) -> u64 {
        let mut removed = 0u64;
        loop {
            if let TrimTo::MaxLen(max) = trim.to {
                if self.len <= max {
                    break;
                }
            }
            let Some((&first, lp)) = self.nodes.iter().next() else { break };
            let live = node::master(lp).live;
            if trim.limit > 0 && removed + live > trim.limit {
                break;
            }
            let whole = match trim.to {
                TrimTo::MaxLen(max) => self.len - live >= max,
                TrimTo::MinId(min) => node::last_id(lp, first) < min,
            };
            if whole {
                self.nodes.remove(&first);
                self.len -= live;
                removed += live;
                continue;
            }
            if trim.approx {
                break;
            }
            let lp = self.nodes.get_mut(&first).expect("node");
            let mut gone = Vec::new();
            let mut len = self.len;
            for e in node::entries(lp, first) {
                let stop = match trim.to {
                    TrimTo::MaxLen(max) => len <= max,
                    TrimTo::MinId(min) => e.id >= min,
                };
                if stop {
                    break;
                }
                if !e.deleted {
                    gone.push(e.flags_at);
                    len -= 1;
                }
            }
            node::mark_deleted(lp, &gone);
            let n = gone.len() as u64;
            self.len -= n;
            removed += n;
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
        if self.len == 0 || self.max_deleted_id.is_zero() {
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
        let len = self.len;
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

    /// Approximate heap bytes, for MEMORY USAGE (the nodes are counted whole).
    pub fn heap_size(&self, _samples: Option<usize>) -> usize {
        let nodes: usize = self.nodes.values().map(|lp| lp.capacity() + 64).sum();
        let groups: usize = self
            .groups
            .iter()
            .map(|(name, g)| name.len() + 96 + g.pel.values().map(|p| 64 + p.consumer.len()).sum::<usize>() + g.consumers.iter().map(|(n, c)| 64 + n.len() + c.pel.len() * 24).sum::<usize>())
            .sum();
        std::mem::size_of::<Stream>() + nodes + groups
    }

    /// Adds a node read from a file (checked by the loader with
    /// `stream_node::validate`), with its `live` entries; nodes come in ascending order.
    pub fn load_node(&mut self, first: StreamId, mut lp: Vec<u8>, live: u64) {
        lp.shrink_to_fit();
        self.nodes.insert(first, lp);
        self.len += live;
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
            let next = StreamId::new(s.last_id.ms + 1, 0);
            s.append(next, &[b"field", value], NodeLimits::default());
        }
    }

    fn live_counts(s: &Stream) -> Vec<(u64, u64)> {
        s.nodes().map(|(_, lp)| {
            let m = node::master(lp);
            (m.live, m.deleted)
        }).collect()
    }

    #[test]
    fn nodes_hold_at_most_max_entries() {
        let mut s = Stream::new();
        add(&mut s, 250, b"v");
        assert_eq!(live_counts(&s), vec![(100, 0), (100, 0), (50, 0)]);
        assert_eq!(s.len(), 250);
    }

    #[test]
    fn nodes_are_cut_by_bytes() {
        let mut s = Stream::new();
        add(&mut s, 20, &[b'x'; 500]);
        // Each entry is about 510 bytes: a node holds what fits below 4096 bytes.
        let counts: Vec<u64> = live_counts(&s).iter().map(|c| c.0).collect();
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
        // The node that lost 30 entries keeps them, marked deleted.
        assert_eq!(live_counts(&s)[0], (70, 30));
        assert_eq!(s.first_id(), id(131, 0));
        assert_eq!(s.range(StreamId::MIN, StreamId::MAX).count(), 120);
        assert_eq!(s.range_rev(StreamId::MIN, StreamId::MAX).map(|e| e.id).last(), Some(id(131, 0)));
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
    fn deleting_entries_flags_them_and_the_last_drops_the_node() {
        let mut s = Stream::new();
        s.append(id(1, 0), &[b"f", b"v"], NodeLimits::default());
        s.append(id(2, 0), &[b"f", b"w"], NodeLimits::default());
        assert!(s.delete(id(1, 0)));
        assert!(!s.delete(id(1, 0)));
        assert_eq!(live_counts(&s), vec![(1, 1)]);
        assert_eq!(s.get(id(2, 0)).map(|e| e.iter().map(|x| x.to_vec()).collect::<Vec<_>>()), Some(vec![b"f".to_vec(), b"w".to_vec()]));
        assert!(s.delete(id(2, 0)));
        assert_eq!(s.nodes().count(), 0);
        assert_eq!((s.len(), s.max_deleted_id, s.entries_added), (0, id(2, 0), 2));
    }

    #[test]
    fn ranges_both_ways_across_nodes() {
        let mut s = Stream::new();
        add(&mut s, 350, b"v");
        for k in [5u64, 100, 101, 250] {
            assert!(s.delete(id(k, 0)));
        }
        let fwd: Vec<StreamId> = s.range(id(90, 0), id(260, 0)).map(|e| e.id).collect();
        let mut rev: Vec<StreamId> = s.range_rev(id(90, 0), id(260, 0)).map(|e| e.id).collect();
        rev.reverse();
        assert_eq!(fwd, rev);
        assert_eq!(fwd.len(), 171 - 3);
        assert!(s.range(id(300, 0), id(200, 0)).next().is_none());
        assert_eq!(s.last_entry().map(|e| e.id), Some(id(350, 0)));
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
