//! The hash table of large sets, hashes and sorted sets: a directory of hashbrown tables
//! (segments) by extendible hashing, so that no single insert ever rebuilds more than
//! one segment of at most [`SEGMENT_MAX`] elements.
//!
//! Why: one hashbrown table doubles in a single step, which for a set of 4,000,000
//! members held its event loop for ~0.3 s (`scripts/bench-growth.py`: the slow log),
//! where Redis's dictionaries rehash incrementally. Here a
//! segment that grows past [`SEGMENT_MAX`] splits in two by one more bit of the hash
//! (about 1 ms for 16,384 elements here), and a segment's own growth moves at most that
//! many: the cost of one insert is bounded by the segment size, not the collection.
//! Random hashes fill the segments evenly, so with one common limit they would all
//! split at about the same time (up to 5 splits in one 1,000-member SADD, ~10 ms); each
//! segment gets its own limit between half of [`SEGMENT_MAX`] and all of it instead.
//! Loading a 4,000,000-member set 1,000 members a command, the slowest SADD then took
//! ~7.6 ms against Redis's ~5.5 ms, where one table doubling took ~310 ms.
//!
//! Layout: 24 bits of each element's hash (bits 32..56, which hashbrown uses neither for
//! its bucket index nor for its control tags) choose the segment: the directory has
//! 2^depth slots indexed by the low `depth` of those bits, and a segment of local depth
//! `d` owns every slot that agrees with its pattern in the low `d` bits.
//!
//! SCAN order: read those 24 bits reversed (`k`), every segment owns one contiguous
//! range of `k`, and splits only cut ranges in two. A cursor is (range start `k`, bucket
//! position inside that segment, the segment's layout tag): every element whose `k` is
//! below the range start was returned, and a cursor whose segment has been rebuilt since
//! (split, grown, shrunk: a new tag) restarts just that segment's range. So an element
//! present for the whole walk is returned at least once, and a rebuild costs a walk the
//! redo of one segment, not of the collection.
//!
//! Cursor bits: 0..24 `k`, 24..46 the position, 46..62 the tag, 62 set (so that a cursor
//! that continues is never 0).

use std::hash::BuildHasher;

use hashbrown::raw::RawTable;

use super::small_bytes::{Alias, SmallBytes};

/// The most elements a segment holds before it splits (each gets its own limit between
/// half this and this, [`split_limit`]); splitting or growing one takes about 1 ms.
/// It is the capacity of a hashbrown table of 16,384 buckets (7/8 of them): a segment
/// never grows to 32,768 buckets only to split soon after (with a limit of 2^14 one
/// did, and a 1,000,000-member set used its buckets at ~40%).
pub const SEGMENT_MAX: usize = 16_384 / 8 * 7;
/// Hash bits that choose a segment.
const DIR_BITS: u32 = 24;
const POS_BITS: u32 = 22;
const TAG_BITS: u32 = 16;
const CONTINUING: u64 = 1 << 62;

/// An element of a [`SegTable`]: what it is found by.
pub trait Keyed {
    fn key(&self) -> &[u8];
}

impl Keyed for SmallBytes {
    fn key(&self) -> &[u8] {
        self
    }
}

impl<V> Keyed for (Alias, V) {
    fn key(&self) -> &[u8] {
        &self.0
    }
}

#[derive(Clone)]
struct Segment<T> {
    table: RawTable<T>,
    /// Local depth: the low `depth` directory bits every element here shares.
    depth: u32,
    /// Changes whenever this segment's elements may have moved (see the header).
    tag: u16,
    /// Elements from which this segment splits (see [`split_limit`]).
    limit: u32,
}

/// A new segment's split size, spread over `SEGMENT_MAX / 2 ..= SEGMENT_MAX` by its tag:
/// random hashes fill the segments evenly, and with one common limit they would all
/// split at about the same time (several splits in one command).
fn split_limit(tag: u16) -> u32 {
    let half = (SEGMENT_MAX / 2) as u32;
    let spread = (u32::from(tag).wrapping_mul(0x9e37_79b9) >> 16) % (half + 1);
    half + spread
}

/// A hash table of `T` keyed by [`Keyed::key`], grown a segment at a time.
#[derive(Clone)]
pub struct SegTable<T> {
    segments: Vec<Segment<T>>,
    /// Segment index by the low `depth` directory bits.
    dir: Vec<u32>,
    depth: u32,
    len: usize,
    next_tag: u16,
    hasher: foldhash::fast::RandomState,
}

impl<T> std::fmt::Debug for SegTable<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegTable")
            .field("len", &self.len)
            .field("segments", &self.segments.len())
            .finish()
    }
}

impl<T: Keyed> Default for SegTable<T> {
    fn default() -> Self {
        SegTable::with_capacity(0)
    }
}

/// The 24 directory bits of a hash.
fn dir_bits(hash: u64) -> u32 {
    ((hash >> 32) as u32) & ((1 << DIR_BITS) - 1)
}

/// `k`: the directory bits reversed (the SCAN order).
fn scan_key(bits: u32) -> u32 {
    bits.reverse_bits() >> (32 - DIR_BITS)
}

impl<T: Keyed> SegTable<T> {
    /// An empty table with room for `capacity` elements in its first segment.
    pub fn with_capacity(capacity: usize) -> Self {
        let first = Segment {
            table: RawTable::with_capacity(capacity.min(SEGMENT_MAX)),
            depth: 0,
            tag: 0,
            limit: SEGMENT_MAX as u32,
        };
        SegTable {
            segments: vec![first],
            dir: vec![0],
            depth: 0,
            len: 0,
            next_tag: 1,
            hasher: Default::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    fn segment_of(&self, hash: u64) -> usize {
        let slot = dir_bits(hash) & ((1 << self.depth) - 1);
        self.dir[slot as usize] as usize
    }

    fn new_tag(&mut self) -> u16 {
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1);
        tag
    }

    pub fn get(&self, key: &[u8]) -> Option<&T> {
        let hash = self.hash(key);
        self.segments[self.segment_of(hash)]
            .table
            .get(hash, |e| e.key() == key)
    }

    /// Adds an element whose key is absent (callers look it up first).
    pub fn insert_new(&mut self, value: T) {
        let hash = self.hash(value.key());
        self.insert_hashed(hash, value);
    }

    fn insert_hashed(&mut self, hash: u64, value: T) {
        let s = self.segment_of(hash);
        let hasher = &self.hasher;
        let seg = &mut self.segments[s];
        let room = seg.table.capacity() - seg.table.len();
        seg.table.insert(hash, value, |e| hasher.hash_one(e.key()));
        self.len += 1;
        if room == 0 {
            // No room was left: the insert rebuilt the segment (grew or rehashed it).
            self.segments[s].tag = self.new_tag();
        }
        let seg = &self.segments[s];
        if seg.table.len() > seg.limit as usize && seg.depth < DIR_BITS {
            self.split(s);
        }
    }

    /// Adds `make()` unless the key is present; true when it was added. One hash.
    pub fn get_or_insert_with(&mut self, key: &[u8], make: impl FnOnce() -> T) -> bool {
        self.update_or_insert(key, |_| {}, make)
    }

    /// Calls `update` on the element with this key (it must not change the key), or adds
    /// `make()` when there is none; true when it was added. One hash for both.
    pub fn update_or_insert(
        &mut self,
        key: &[u8],
        update: impl FnOnce(&mut T),
        make: impl FnOnce() -> T,
    ) -> bool {
        let hash = self.hash(key);
        let s = self.segment_of(hash);
        if let Some(found) = self.segments[s].table.get_mut(hash, |e| e.key() == key) {
            update(found);
            return false;
        }
        self.insert_hashed(hash, make());
        true
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<T> {
        let hash = self.hash(key);
        let s = self.segment_of(hash);
        let hasher = &self.hasher;
        let seg = &mut self.segments[s];
        let removed = seg.table.remove_entry(hash, |e| e.key() == key)?;
        self.len -= 1;
        if let Some(to) = super::random::shrink_if_sparse(seg.table.len(), seg.table.capacity()) {
            seg.table.shrink_to(to, |e| hasher.hash_one(e.key()));
            self.segments[s].tag = self.new_tag();
        }
        Some(removed)
    }

    /// Splits segment `s` by its next directory bit, doubling the directory if needed.
    fn split(&mut self, s: usize) {
        let depth = self.segments[s].depth;
        if depth == self.depth {
            self.dir.extend_from_within(..);
            self.depth += 1;
        }
        let bit = 1u32 << depth;
        let hasher = &self.hasher;
        // Both halves go into fresh tables sized for exactly what they get: erasing the
        // moved half from the old table would leave it full of tombstones (and its size)
        // until a rehash, and a margin for the split's imbalance would often double
        // the buckets of both halves (hashbrown's sizes are powers of two).
        let old = std::mem::replace(&mut self.segments[s].table, RawTable::new());
        let hashed: Vec<(u64, T)> = old.into_iter().map(|v| (hasher.hash_one(v.key()), v)).collect();
        let highs = hashed.iter().filter(|(hash, _)| dir_bits(*hash) & bit != 0).count();
        let mut low = RawTable::with_capacity(hashed.len() - highs);
        let mut high = RawTable::with_capacity(highs);
        for (hash, value) in hashed {
            let side = if dir_bits(hash) & bit != 0 {
                &mut high
            } else {
                &mut low
            };
            side.insert(hash, value, |e| hasher.hash_one(e.key()));
        }
        self.segments[s].table = low;
        let moved = high;
        let pattern = self.dir_pattern(s);
        let new_index = self.segments.len() as u32;
        let (tag_old, tag_new) = (self.new_tag(), self.new_tag());
        self.segments[s].depth = depth + 1;
        self.segments[s].tag = tag_old;
        self.segments[s].limit = split_limit(tag_old);
        self.segments.push(Segment {
            table: moved,
            depth: depth + 1,
            tag: tag_new,
            limit: split_limit(tag_new),
        });
        // Every slot with the old pattern and the new bit set now points at the new one.
        let mut slot = (pattern | bit) as usize;
        while slot < self.dir.len() {
            self.dir[slot] = new_index;
            slot += 1 << (depth + 1);
        }
    }

    /// The low `depth` directory bits segment `s` owns (from its first slot).
    fn dir_pattern(&self, s: usize) -> u32 {
        let mask = (1u32 << self.segments[s].depth) - 1;
        let slot = self.dir.iter().position(|&d| d as usize == s).unwrap_or(0);
        slot as u32 & mask
    }

    /// Every element, segment by segment.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        // SAFETY: buckets from each table's own iterator, read while `self` is borrowed.
        self.segments
            .iter()
            .flat_map(|s| unsafe { s.table.iter() }.map(|b| unsafe { b.as_ref() }))
    }

    /// A uniformly random element: a segment with probability proportional to its
    /// elements, then an element of it (`random.rs`). The segment comes from a uniform
    /// directory slot (a segment of depth `d` owns 2^(depth-d) of them) accepted with
    /// probability `len * 2^d / (SEGMENT_MAX * 2^depth)`: a couple of draws while the
    /// segments are balanced, as random hashes keep them; after 64 a walk decides.
    pub fn random(&self, rng: &mut fastrand::Rng) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        let bound = (SEGMENT_MAX as u64 + 1) << self.depth;
        for _ in 0..64 {
            let seg = &self.segments[self.dir[rng.usize(..self.dir.len())] as usize];
            let weight = (seg.table.len() as u64) << seg.depth;
            if rng.u64(..bound) < weight {
                return super::random::table_entry(&seg.table, rng);
            }
        }
        let mut r = rng.usize(..self.len);
        for seg in &self.segments {
            if r < seg.table.len() {
                return super::random::table_entry(&seg.table, rng);
            }
            r -= seg.table.len();
        }
        None
    }

    /// Buckets held (for memory estimates).
    pub fn buckets(&self) -> usize {
        self.segments
            .iter()
            .map(|s| s.table.buckets())
            .sum::<usize>()
            + self.dir.len()
    }

    /// One SCAN step from `cursor` (0 starts): visits elements until `count` were
    /// visited or `10 * count` buckets were looked at (Redis's bounds); returns the
    /// cursor to continue from, 0 once every range was walked.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&T)) -> u64 {
        let mut k = (cursor & ((1 << DIR_BITS) - 1)) as u32;
        let mut pos = ((cursor >> DIR_BITS) & ((1 << POS_BITS) - 1)) as usize;
        let tag = ((cursor >> (DIR_BITS + POS_BITS)) & ((1 << TAG_BITS) - 1)) as u16;
        let count = count.max(1);
        let mut budget = count.saturating_mul(10);
        let mut visited = 0;
        // The first segment continues from `pos` only if it is unchanged.
        let mut check_tag = cursor != 0;
        while k < (1 << DIR_BITS) {
            let slot = scan_key(k) & ((1 << self.depth) - 1);
            let s = self.dir[slot as usize] as usize;
            let seg = &self.segments[s];
            let span = 1u32 << (DIR_BITS - seg.depth);
            let lo = k & !(span - 1);
            if !check_tag || seg.tag != tag || lo != k {
                pos = 0;
            }
            check_tag = false;
            k = lo;
            let buckets = seg.table.buckets();
            while pos < buckets && budget > 0 && visited < count {
                // SAFETY: pos < buckets; read only a full bucket, while `self` is borrowed.
                if unsafe { seg.table.is_bucket_full(pos) } {
                    visit(unsafe { seg.table.bucket(pos).as_ref() });
                    visited += 1;
                }
                pos += 1;
                budget -= 1;
            }
            if pos < buckets {
                return CONTINUING
                    | u64::from(seg.tag) << (DIR_BITS + POS_BITS)
                    | (pos as u64) << DIR_BITS
                    | u64::from(k);
            }
            k = lo + span;
            pos = 0;
            if budget == 0 || visited >= count {
                break;
            }
        }
        if k >= 1 << DIR_BITS {
            0
        } else {
            CONTINUING | u64::from(k)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(v: u64) -> SmallBytes {
        SmallBytes::new(format!("m{v}").as_bytes())
    }

    fn filled(n: u64) -> SegTable<SmallBytes> {
        let mut t = SegTable::default();
        for v in 0..n {
            assert!(t.get_or_insert_with(&key(v), || key(v)));
        }
        t
    }

    #[test]
    fn splits_keep_every_element_findable_and_bound_segments() {
        let t = filled(200_000);
        assert_eq!(t.len(), 200_000);
        assert!(t.segments.len() >= 200_000 / SEGMENT_MAX);
        assert!(t.segments.iter().all(|s| s.table.len() <= SEGMENT_MAX));
        assert!((0..200_000).all(|v| t.get(&key(v)).is_some()));
        assert!(t.get(b"absent").is_none());
        assert_eq!(t.iter().count(), 200_000);
        // Every directory slot points at the segment whose pattern it has.
        for (slot, &s) in t.dir.iter().enumerate() {
            let depth = t.segments[s as usize].depth;
            assert_eq!(slot as u32 & ((1 << depth) - 1), t.dir_pattern(s as usize));
        }
    }

    #[test]
    fn removes_and_reinserts() {
        let mut t = filled(100_000);
        for v in (0..100_000).step_by(2) {
            assert!(t.remove(&key(v)).is_some());
        }
        assert!(t.remove(&key(0)).is_none());
        assert_eq!(t.len(), 50_000);
        assert!((0..100_000).all(|v| t.get(&key(v)).is_some() == (v % 2 == 1)));
        assert!(!t.get_or_insert_with(&key(1), || key(1)));
        assert!(t.get_or_insert_with(&key(0), || key(0)));
    }

    #[test]
    fn a_quiet_walk_returns_each_element_once_in_bounded_steps() {
        for n in [0, 5, 1000, 100_000] {
            let t = filled(n);
            let (mut seen, mut cursor, mut calls) = (Vec::new(), 0, 0);
            loop {
                let before = seen.len();
                cursor = t.scan(cursor, 10, |e| seen.push(e.clone()));
                assert!(seen.len() - before <= 10);
                calls += 1;
                if cursor == 0 {
                    break;
                }
            }
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len() as u64, n, "n = {n}");
            assert!(calls as u64 >= n / 10);
        }
    }

    #[test]
    fn elements_present_throughout_are_returned_while_the_table_splits_and_shrinks() {
        let mut t = filled(5000);
        let mut rng = fastrand::Rng::with_seed(5);
        let (mut seen, mut cursor, mut calls) = (std::collections::HashSet::new(), 0, 0u64);
        loop {
            cursor = t.scan(cursor, 10, |e| {
                seen.insert(e.clone());
            });
            calls += 1;
            if cursor == 0 {
                break;
            }
            assert!(calls < 1_000_000, "the walk must end");
            if calls < 200 {
                // Grow through several splits.
                for _ in 0..1000 {
                    let v = 1_000_000 + rng.u64(..10_000_000);
                    t.get_or_insert_with(&key(v), || key(v));
                }
            } else if calls < 400 {
                // Shrink back.
                let churn: Vec<SmallBytes> = t
                    .iter()
                    .filter(|e| e.len() > 7)
                    .take(1000)
                    .cloned()
                    .collect();
                for e in churn {
                    t.remove(&e);
                }
            }
        }
        assert!(
            (0..5000).all(|v| seen.contains(&key(v))),
            "an element present throughout was missed"
        );
    }

    #[test]
    fn random_picks_reach_every_segment_evenly() {
        let t = filled(4 * SEGMENT_MAX as u64);
        let mut rng = fastrand::Rng::with_seed(9);
        let mut low = 0;
        for _ in 0..20_000 {
            let e = t.random(&mut rng).expect("non-empty");
            let v: u64 = std::str::from_utf8(&e[1..]).unwrap().parse().unwrap();
            if v < 2 * SEGMENT_MAX as u64 {
                low += 1;
            }
        }
        // Half the elements are below the middle: about half the picks.
        assert!((9_000..11_000).contains(&low), "{low}");
        assert!(SegTable::<SmallBytes>::default().random(&mut rng).is_none());
    }

    #[test]
    fn random_picks_stay_uniform_when_one_segment_is_nearly_empty() {
        let mut t = filled(4 * SEGMENT_MAX as u64);
        // Leave 100 elements in the first segment; the others keep theirs.
        let first: Vec<SmallBytes> =
            unsafe { t.segments[0].table.iter().map(|b| b.as_ref().clone()) }.collect();
        let kept: std::collections::HashSet<SmallBytes> = first.iter().take(100).cloned().collect();
        for e in first.iter().skip(100) {
            t.remove(e);
        }
        let mut rng = fastrand::Rng::with_seed(11);
        let picks = 40_000;
        let hits = (0..picks)
            .filter(|_| kept.contains(t.random(&mut rng).expect("non-empty")))
            .count();
        let expected = picks * 100 / t.len();
        assert!(
            hits > expected / 2 && hits < expected * 2,
            "{hits} picks of the kept 100, expected about {expected}"
        );
    }
}
