//! The sorted set type. Members are kept in (score, member) order in sorted chunks of at
//! most `CHUNK` entries: finding a position is two binary searches, a rank is a sum over
//! chunk lengths, and an insert moves at most one chunk's entries, so large sets stay
//! O(log n + CHUNK + n/CHUNK) per operation without an unsafe skiplist. While the set is
//! small (`zset-max-listpack-entries` members, none longer than
//! `zset-max-listpack-value`) a score lookup scans it (OBJECT ENCODING "listpack"); past
//! that a member -> score map is added ("skiplist"), one way, as in Redis.
//!
//! Scores are never NaN (callers reject it); 0.0 and -0.0 compare equal, as in Redis.

use std::cmp::Ordering;
use std::collections::VecDeque;

use super::packed::Packed;
use super::segtable::SegTable;
use super::small_bytes::{Alias, SmallBytes};

/// Thresholds from `zset-max-listpack-entries` and `zset-max-listpack-value`.
#[derive(Clone, Copy, Debug)]
pub struct ZLimits {
    pub max_listpack_entries: usize,
    pub max_listpack_value: usize,
}

impl Default for ZLimits {
    fn default() -> ZLimits {
        ZLimits {
            max_listpack_entries: 128,
            max_listpack_value: 64,
        }
    }
}

const CHUNK: usize = 256;

type Item = (f64, SmallBytes);

fn cmp(a: (f64, &[u8]), b: (f64, &[u8])) -> Ordering {
    a.0.partial_cmp(&b.0)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a.1.cmp(b.1))
}

/// Whether `item` orders before (score, member). The member's bytes are read only on
/// a score tie: each read of a `SmallBytes` decodes its form, and the searches below
/// compare about a dozen items per insert.
fn item_before(item: &Item, score: f64, member: &[u8]) -> bool {
    match item.0.partial_cmp(&score) {
        Some(Ordering::Less) => true,
        Some(Ordering::Greater) => false,
        _ => item.1.as_slice() < member,
    }
}

/// (score, member) pairs in order, in chunks. Each chunk is a ring (`VecDeque`): taking
/// the first item (ZPOPMIN, ZREMRANGEBYRANK 0 ..) costs no shift of the rest, and an
/// insert or removal inside moves the shorter side. With a `Vec` a ZPOPMIN moved the
/// chunk's other 255 items, ~870 instructions a pop.
#[derive(Clone, Debug, Default)]
struct Chunks {
    chunks: Vec<VecDeque<Item>>,
    len: usize,
}

impl Chunks {
    /// Chunk index for `key`: the first chunk whose last item is >= key (or the last).
    fn chunk_for(&self, key: (f64, &[u8])) -> usize {
        let i = self
            .chunks
            .partition_point(|c| c.back().is_some_and(|item| item_before(item, key.0, key.1)));
        i.min(self.chunks.len().saturating_sub(1))
    }

    fn insert(&mut self, score: f64, member: SmallBytes) {
        if self.chunks.is_empty() {
            self.chunks.push(VecDeque::new());
        }
        let ci = self.chunk_for((score, &member));
        let c = &mut self.chunks[ci];
        let pos = c.partition_point(|item| item_before(item, score, &member));
        if c.len() == c.capacity() {
            // A quarter more, not double: a chunk that got a few members after it split
            // would otherwise hold room for twice its length (a ring's growth), and
            // most chunks are such chunks. At most 512 items of 24 bytes are copied.
            c.reserve_exact((c.len() / 4).max(8));
        }
        c.insert(pos, (score, member));
        self.len += 1;
        if c.len() >= 2 * CHUNK {
            // Both halves at exactly their length: a ring grows by doubling, so left
            // alone the first half would keep the room for 1,024 items (24 KB for 256,
            // 96 bytes a member), and a set filled in score order never inserts into
            // a finished chunk again.
            let tail = c.split_off(CHUNK);
            c.shrink_to_fit();
            self.chunks.insert(ci + 1, tail);
        }
    }

    fn remove(&mut self, score: f64, member: &[u8]) -> bool {
        if self.chunks.is_empty() {
            return false;
        }
        let ci = self.chunk_for((score, member));
        let c = &mut self.chunks[ci];
        let pos = c.partition_point(|item| item_before(item, score, member));
        if pos < c.len() && c[pos].1.as_ref() == member {
            c.remove(pos);
            self.len -= 1;
            if c.is_empty() && self.chunks.len() > 1 {
                self.chunks.remove(ci);
            }
            return true;
        }
        false
    }

    /// Rank of the first item for which `before` is false (`before` must be true for
    /// a prefix of the order, false after).
    fn partition_point(&self, before: impl Fn(f64, &[u8]) -> bool) -> usize {
        let mut rank = 0;
        for c in &self.chunks {
            match c.back() {
                Some((s, m)) if before(*s, m) => rank += c.len(),
                _ => return rank + c.partition_point(|(s, m)| before(*s, m)),
            }
        }
        rank
    }

    fn at(&self, mut rank: usize) -> Option<&Item> {
        for c in &self.chunks {
            if rank < c.len() {
                return c.get(rank);
            }
            rank -= c.len();
        }
        None
    }

    /// Items with ranks in [start, end] (inclusive), ascending.
    fn range(&self, start: usize, end: usize) -> impl Iterator<Item = &Item> {
        // Whole chunks before `start` are skipped by their lengths, not item by item:
        // ZRANGE at a deep offset (and ZRANDMEMBER) walks len / 256 chunks at most.
        let (mut first, mut skip) = (0, start);
        while first < self.chunks.len() && skip >= self.chunks[first].len() {
            skip -= self.chunks[first].len();
            first += 1;
        }
        self.chunks[first..]
            .iter()
            .flatten()
            .skip(skip)
            .take((end + 1).saturating_sub(start))
    }
}

/// The large form: score order in chunks plus member -> score.
///
/// The chunks own the members; the table is keyed by aliases of them
/// (`small_bytes::Alias`), so a member longer than 15 bytes is stored once, as Redis's
/// skiplist and dict share one sds. The invariant this module's `unsafe` rests on:
/// every table entry aliases exactly one chunk item's member, and only `insert_new`
/// and `remove` below change either side (a removal takes the table entry out before
/// the chunk item, and its member, is dropped). `Clone` rebuilds the table over the
/// cloned chunks, and the table is declared first so that it drops first.
#[derive(Debug, Default)]
pub struct Large {
    /// Member -> score, grown a segment at a time (`segtable.rs`).
    scores: SegTable<(Alias, f64)>,
    order: Chunks,
}

impl Large {
    /// Adds a member that is absent.
    fn insert_new(&mut self, score: f64, member: &[u8]) {
        let owned = SmallBytes::new(member);
        // SAFETY: the alias goes into `scores`, which gives it up in `remove` before
        // the chunk item owning `owned` is dropped (the invariant above); moving
        // `owned` into its chunk does not move its heap bytes.
        let alias = unsafe { owned.alias() };
        self.order.insert(score, owned);
        self.scores.insert_new((alias, score));
    }

    /// Removes a member; true when it was there.
    fn remove(&mut self, member: &[u8]) -> bool {
        // The alias is dropped (a no-op) with the removed entry, before the owner goes.
        let Some((_, score)) = self.scores.remove(member) else {
            return false;
        };
        self.order.remove(score, member);
        true
    }
}

impl Clone for Large {
    fn clone(&self) -> Large {
        let order = self.order.clone();
        let mut scores = SegTable::with_capacity(order.len);
        for (score, member) in order.chunks.iter().flatten() {
            // SAFETY: aliases of the clone's own members, which live in `order` and
            // move with it into the new value (the invariant above).
            scores.insert_new((unsafe { member.alias() }, *score));
        }
        Large { scores, order }
    }
}

/// A Redis sorted set.
#[derive(Clone, Debug)]
pub enum ZSet {
    /// member, score, member, score ... in (score, member) order (OBJECT ENCODING
    /// "listpack"). Format of a score item: `[0][zigzag LEB128]` for a score that is an
    /// integer (exactly), `[1][f64 LE]` otherwise.
    Packed(Packed),
    /// "skiplist".
    Large(Box<Large>),
}

impl Default for ZSet {
    fn default() -> ZSet {
        ZSet::Packed(Packed::new())
    }
}

impl PartialEq for ZSet {
    fn eq(&self, other: &ZSet) -> bool {
        self.len() == other.len() && self.range(0, self.len()) == other.range(0, other.len())
    }
}

/// One end of a score or lex interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    pub value: f64,
    pub exclusive: bool,
}

/// One end of a lex interval: `-`, `+`, `[x` or `(x`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    Min,
    Max,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

fn encode_score(s: f64) -> Vec<u8> {
    // Integral scores in +/-2^53 are stored exactly as integers. -0.0 becomes 0, as in
    // Redis's listpack (its score string is written by the integer path): a small sorted
    // set answers ZSCORE with 0 where a large one keeps -0, in both servers.
    if s.fract() == 0.0 && s.abs() < 9_007_199_254_740_992.0 {
        let n = s as i64;
        let mut z = ((n << 1) ^ (n >> 63)) as u64;
        let mut out = vec![0u8];
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
        out
    } else {
        let mut out = vec![1u8];
        out.extend_from_slice(&s.to_le_bytes());
        out
    }
}

/// A score as the packed form stores it (see [`ZSet::Packed`]).
pub fn decode_score(b: &[u8]) -> f64 {
    match b.split_first() {
        Some((0, rest)) => {
            let mut z = 0u64;
            for (i, byte) in rest.iter().enumerate() {
                z |= u64::from(byte & 0x7f) << (7 * i);
            }
            (((z >> 1) as i64) ^ -((z & 1) as i64)) as f64
        }
        Some((_, rest)) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&rest[..8.min(rest.len())]);
            f64::from_le_bytes(a)
        }
        None => 0.0,
    }
}

/// (score, member, byte offset of the member) of a packed set, in order, without
/// collecting them (a command on a small sorted set allocates nothing for this).
fn packed_items(p: &Packed) -> impl Iterator<Item = (f64, &[u8], usize)> + '_ {
    let mut it = p.iter();
    std::iter::from_fn(move || {
        let (at, m) = it.next()?;
        let (_, s) = it.next()?;
        Some((decode_score(s), m, at))
    })
}

impl ZSet {
    pub fn new() -> ZSet {
        ZSet::default()
    }

    /// An empty set in the large form ("skiplist") whatever its size: where Redis builds
    /// a result as a skiplist (ZUNION, ZINTER), which keeps -0 where a listpack holds 0.
    pub fn new_large() -> ZSet {
        ZSet::Large(Box::default())
    }

    pub fn len(&self) -> usize {
        match self {
            ZSet::Packed(p) => p.len() / 2,
            ZSet::Large(l) => l.order.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            ZSet::Packed(_) => "listpack",
            ZSet::Large(_) => "skiplist",
        }
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            ZSet::Packed(p) => packed_items(p)
                .find(|(_, m, _)| *m == member)
                .map(|(s, _, _)| s),
            ZSet::Large(l) => l.scores.get(member).map(|&(_, s)| s),
        }
    }

    /// The listpack form of a set built large, when it fits the limits, as Redis converts
    /// a sorted set it built as a skiplist (ZUNIONSTORE's result, one loaded from a file
    /// or a DUMP): the listpack stores -0 as 0, a skiplist keeps -0.
    pub fn into_compact_if_fits(self, limits: ZLimits) -> ZSet {
        let fits = self.len() <= limits.max_listpack_entries
            && self.iter().all(|(_, m)| m.len() <= limits.max_listpack_value);
        if !fits || matches!(self, ZSet::Packed(_)) {
            return self;
        }
        let mut small = ZSet::new();
        for (s, m) in self.iter() {
            small.insert(m, s, limits);
        }
        small
    }

    /// Converts to the large form ("skiplist") whatever the size; ZADD past the limits,
    /// and SORT, which converts its input as Redis 7.0's does.
    pub fn to_large(&mut self) {
        let large = match self {
            ZSet::Packed(p) => {
                let mut l = Large::default();
                for (s, m, _) in packed_items(p) {
                    l.insert_new(s, m);
                }
                l
            }
            ZSet::Large(_) => return,
        };
        *self = ZSet::Large(Box::new(large));
    }

    /// Sets a member's score; true when the member is new.
    pub fn insert(&mut self, member: &[u8], score: f64, limits: ZLimits) -> bool {
        let old = self.score(member);
        if let Some(old) = old {
            // Numerically equal: no change, as Redis (`score != curscore`), so a large
            // set's -0 stays -0 under ZADD 0 and 0 stays 0 under ZADD -0.
            if old == score {
                return false;
            }
            self.remove(member);
        }
        if let ZSet::Packed(p) = self {
            let too_big = p.len() / 2 + 1 > limits.max_listpack_entries
                || member.len() > limits.max_listpack_value;
            if !too_big {
                let at = packed_items(p)
                    .find(|(s, m, _)| cmp((*s, m), (score, member)) == Ordering::Greater)
                    .map_or(p.byte_len(), |(_, _, at)| at);
                // Score first, then the member in front of it.
                p.insert_at(at, &encode_score(score));
                p.insert_at(at, member);
                return old.is_none();
            }
            self.to_large();
        }
        if let ZSet::Large(l) = self {
            // Absent here: an old score was removed above.
            l.insert_new(score, member);
        }
        old.is_none()
    }

    /// Removes a member; true when it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            ZSet::Packed(p) => {
                let Some(at) = packed_items(p)
                    .find(|(_, m, _)| *m == member)
                    .map(|(_, _, at)| at)
                else {
                    return false;
                };
                p.remove_at(at);
                p.remove_at(at);
                true
            }
            ZSet::Large(l) => l.remove(member),
        }
    }

    /// Whether [`random`](Self::random) takes constant time (the packed form walks its
    /// members): counted random picks sample only then, and copy the set otherwise.
    pub fn random_is_constant_time(&self) -> bool {
        matches!(self, ZSet::Large(_))
    }

    /// One ZSCAN step: members and scores from `cursor` on, a few buckets of the member
    /// table at a time (`segtable.rs`); the packed form gives all of them and cursor 0, as
    /// Redis does for a listpack.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8], f64)) -> u64 {
        match self {
            ZSet::Packed(p) => {
                for (s, m, _) in packed_items(p) {
                    visit(m, s);
                }
                0
            }
            ZSet::Large(l) => l.scores.scan(cursor, count, |(m, s)| visit(m, *s)),
        }
    }

    /// A uniformly random member and its score, None when empty; constant expected
    /// time for the large form (a pick from its member table, `random.rs`).
    pub fn random(&self, rng: &mut fastrand::Rng) -> Option<(f64, &[u8])> {
        match self {
            ZSet::Packed(p) if p.is_empty() => None,
            ZSet::Packed(p) => packed_items(p).nth(rng.usize(..p.len() / 2)).map(|(s, m, _)| (s, m)),
            ZSet::Large(l) => l.scores.random(rng).map(|(m, s)| (*s, &m[..])),
        }
    }

    /// Rank of the first item for which `before` is false (a prefix predicate).
    fn partition_point(&self, before: impl Fn(f64, &[u8]) -> bool) -> usize {
        match self {
            // Members are in order and `before` is a prefix predicate: its partition
            // point is the length of the prefix it holds for.
            ZSet::Packed(p) => packed_items(p).take_while(|(s, m, _)| before(*s, m)).count(),
            ZSet::Large(l) => l.order.partition_point(before),
        }
    }

    /// 0-based ascending rank of a member.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.partition_point(|s, m| cmp((s, m), (score, member)) == Ordering::Less))
    }

    /// The item at an ascending rank.
    pub fn at(&self, rank: usize) -> Option<(f64, &[u8])> {
        match self {
            ZSet::Packed(p) => packed_items(p).nth(rank).map(|(s, m, _)| (s, m)),
            ZSet::Large(l) => l.order.at(rank).map(|(s, m)| (*s, &**m)),
        }
    }

    /// (score, member) pairs in ascending order, without copying them (snapshots).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (f64, &[u8])> + '_> {
        match self {
            ZSet::Packed(p) => {
                let mut it = p.items();
                Box::new(std::iter::from_fn(move || {
                    let member = it.next()?;
                    Some((decode_score(it.next()?), member))
                }))
            }
            ZSet::Large(l) => Box::new(l.order.chunks.iter().flatten().map(|(s, m)| (*s, &**m))),
        }
    }

    /// Items with ascending ranks in [start, end] (inclusive).
    pub fn range(&self, start: usize, end: usize) -> Vec<(f64, Vec<u8>)> {
        match self {
            ZSet::Packed(p) => packed_items(p)
                .skip(start)
                .take((end + 1).saturating_sub(start))
                .map(|(s, m, _)| (s, m.to_vec()))
                .collect(),
            ZSet::Large(l) => l
                .order
                .range(start, end)
                .map(|(s, m)| (*s, m.to_vec()))
                .collect(),
        }
    }

    /// Ascending ranks [first, last) of members whose scores lie within the bounds.
    pub fn score_ranks(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
        let first = self.partition_point(|s, _| {
            if min.exclusive {
                s <= min.value
            } else {
                s < min.value
            }
        });
        let last = self.partition_point(|s, _| {
            if max.exclusive {
                s < max.value
            } else {
                s <= max.value
            }
        });
        (first, last.max(first))
    }

    /// Ascending ranks [first, last) of members within lex bounds (meaningful when all
    /// scores are equal, as Redis documents).
    pub fn lex_ranks(&self, min: &LexBound, max: &LexBound) -> (usize, usize) {
        let first = self.partition_point(|_, m| match min {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(x) => m < x.as_slice(),
            LexBound::Exclusive(x) => m <= x.as_slice(),
        });
        let last = self.partition_point(|_, m| match max {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(x) => m <= x.as_slice(),
            LexBound::Exclusive(x) => m < x.as_slice(),
        });
        (first, last.max(first))
    }

    /// Heap bytes held; the members' out-of-line parts from `samples` of them (None:
    /// all), see `sampled_sum`.
    pub fn heap_size(&self, samples: Option<usize>) -> usize {
        match self {
            ZSet::Packed(p) => p.heap_size(),
            ZSet::Large(l) => {
                let members = l.order.chunks.iter().flatten().map(|(_, m)| m.heap_len());
                let items = l.order.chunks.iter().map(|c| c.capacity() * 24).sum::<usize>()
                    + super::sampled_sum(members, l.order.len, samples);
                items + l.scores.buckets() * (std::mem::size_of::<(Alias, f64)>() + 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_form_keeps_short_and_long_members_in_order() {
        // Members on both sides of SmallBytes's 15-byte inline limit, in a set large
        // enough for several chunks, checked against a sorted model after inserts,
        // score updates and removals.
        let member = |i: usize| format!("{}{i}", "m".repeat(i % 40)).into_bytes();
        let mut z = ZSet::new();
        let mut model = std::collections::BTreeMap::new();
        for i in 0..3000 {
            let score = ((i * 7919) % 1000) as f64;
            z.insert(&member(i), score, ZLimits::default());
            model.insert(member(i), score);
        }
        for i in (0..3000).step_by(3) {
            assert!(z.remove(&member(i)));
            model.remove(&member(i));
        }
        for i in (1..3000).step_by(5) {
            z.insert(&member(i), -(i as f64), ZLimits::default());
            model.insert(member(i), -(i as f64));
        }
        assert_eq!(z.encoding(), "skiplist");
        let mut want: Vec<(f64, Vec<u8>)> = model.iter().map(|(m, s)| (*s, m.clone())).collect();
        want.sort_by(|a, b| cmp((a.0, &a.1), (b.0, &b.1)));
        assert_eq!(z.range(0, z.len() - 1), want);
        for (s, m) in &want {
            assert_eq!(z.score(m), Some(*s));
        }
        assert_eq!(z.score(&member(0)), None);
        // A clone's table keys alias the clone's own members: it stays whole when the
        // original is gone, and the original when the clone is changed.
        let mut copy = z.clone();
        assert_eq!(copy, z);
        for (s, m) in want.iter().take(500) {
            assert!(copy.remove(m));
            assert_eq!(z.score(m), Some(*s));
        }
        drop(copy);
        let copy = z.clone();
        drop(z);
        assert_eq!(copy.range(0, copy.len() - 1), want);
        for (s, m) in &want {
            assert_eq!(copy.score(m), Some(*s));
        }
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..100 {
            let (s, m) = copy.random(&mut rng).expect("not empty");
            assert_eq!(copy.score(m), Some(s));
        }
    }

    #[test]
    fn order_rank_and_ranges() {
        let mut z = ZSet::new();
        let l = ZLimits::default();
        assert!(z.insert(b"b", 2.0, l));
        assert!(z.insert(b"a", 1.0, l));
        assert!(z.insert(b"c", 2.0, l));
        assert!(!z.insert(b"a", 3.0, l));
        assert_eq!(
            z.range(0, 10)
                .into_iter()
                .map(|(_, m)| m)
                .collect::<Vec<_>>(),
            vec![b"b".to_vec(), b"c".to_vec(), b"a".to_vec()]
        );
        assert_eq!(z.rank(b"a"), Some(2));
        assert_eq!(z.score(b"c"), Some(2.0));
        let incl = |v| ScoreBound {
            value: v,
            exclusive: false,
        };
        assert_eq!(z.score_ranks(incl(2.0), incl(2.0)), (0, 2));
        assert_eq!(
            z.score_ranks(
                ScoreBound {
                    value: 2.0,
                    exclusive: true
                },
                incl(f64::INFINITY)
            ),
            (2, 3)
        );
        assert!(z.remove(b"b"));
        assert_eq!(z.len(), 2);
        assert_eq!(z.encoding(), "listpack");
    }

    #[test]
    fn large_sets_keep_order_across_chunks() {
        let mut z = ZSet::new();
        let l = ZLimits::default();
        let mut rng = 12345u64;
        for i in 0..5000u64 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            z.insert(format!("m{i}").as_bytes(), (rng >> 40) as f64, l);
        }
        assert_eq!(z.encoding(), "skiplist");
        assert_eq!(z.len(), 5000);
        let all = z.range(0, 4999);
        assert!(all
            .windows(2)
            .all(|w| cmp((w[0].0, &w[0].1), (w[1].0, &w[1].1)) == Ordering::Less));
        for r in [0, 1, 255, 256, 2500, 4999] {
            let (_, m) = z.at(r).expect("rank exists");
            let m = m.to_vec();
            assert_eq!(z.rank(&m), Some(r));
        }
        // Ranges at any offset (chunks are skipped whole) match the full order.
        for start in [0, 1, 255, 256, 511, 512, 513, 1000, 2047, 4990, 4999, 5000, 6000] {
            let want: Vec<_> = all.iter().skip(start).take(12).cloned().collect();
            assert_eq!(z.range(start, start + 11), want, "range at {start}");
        }
        for i in 0..2500u64 {
            assert!(z.remove(format!("m{i}").as_bytes()));
        }
        assert_eq!(z.len(), 2500);
        assert_eq!(z.range(0, 10_000).len(), 2500);
    }

    #[test]
    fn packed_scores_round_trip() {
        for s in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1e6,
            1.5,
            -2.25,
            9.0e15,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let d = decode_score(&encode_score(s));
            assert_eq!(d, s);
            // -0 is stored as 0, as Redis's listpack stores it.
            assert_eq!(d.is_sign_negative(), s.is_sign_negative() && s != 0.0, "{s}");
        }
        assert_eq!(encode_score(1_000_000.0).len(), 4);
    }

    #[test]
    fn lex_ranges() {
        let mut z = ZSet::new();
        for m in [b"a", b"b", b"c", b"d"] {
            z.insert(m, 0.0, ZLimits::default());
        }
        assert_eq!(
            z.lex_ranks(
                &LexBound::Inclusive(b"b".to_vec()),
                &LexBound::Exclusive(b"d".to_vec())
            ),
            (1, 3)
        );
        assert_eq!(z.lex_ranks(&LexBound::Min, &LexBound::Max), (0, 4));
        assert_eq!(
            z.lex_ranks(&LexBound::Exclusive(b"d".to_vec()), &LexBound::Max),
            (4, 4)
        );
    }
}
