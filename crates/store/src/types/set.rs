//! The set type: a sorted vector of integers while every member is a canonical integer
//! and there are at most `set-max-intset-entries` of them (OBJECT ENCODING "intset"),
//! else a packed sequence of members while there are at most [`PACKED_ENTRIES`] of at
//! most [`PACKED_VALUE`] bytes (Redis 7.2's listpack set and its default limits), else
//! a hash set. Conversion is one way, as in Redis. Redis 7.0 has no listpack sets, so
//! the packed form reports "hashtable", as 7.0 does for the same set, and is written to
//! RDB files as a plain set.

use super::packed::Packed;
use super::segtable::SegTable;
use super::small_bytes::SmallBytes;
use super::string::parse_i64;

/// Most members of a packed set (Redis 7.2's `set-max-listpack-entries` default).
pub const PACKED_ENTRIES: usize = 128;
/// Longest member of a packed set (Redis 7.2's `set-max-listpack-value` default).
pub const PACKED_VALUE: usize = 64;

type Table = SegTable<SmallBytes>;

/// A Redis set.
#[derive(Clone, Debug)]
pub enum Set {
    Ints(Vec<i64>),
    /// Members in insertion order (a set of a few short strings).
    Packed(Packed),
    /// Grown a segment at a time (`segtable.rs`).
    Table(Table),
}

impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        self.len() == other.len() && self.members().iter().all(|m| other.contains(m))
    }
}

impl Default for Set {
    fn default() -> Set {
        Set::Ints(Vec::new())
    }
}

impl Set {
    pub fn new() -> Set {
        Set::default()
    }

    pub fn len(&self) -> usize {
        match self {
            Set::Ints(v) => v.len(),
            Set::Packed(p) => p.len(),
            Set::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            Set::Ints(_) => "intset",
            Set::Packed(_) | Set::Table(_) => "hashtable",
        }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        match self {
            Set::Ints(v) => parse_i64(member).is_some_and(|n| v.binary_search(&n).is_ok()),
            Set::Packed(p) => p.items().any(|m| m == member),
            Set::Table(t) => t.get(member).is_some(),
        }
    }

    fn to_table(&mut self) {
        let mut t = Table::with_capacity(self.len() + 1);
        match self {
            Set::Ints(v) => {
                for n in v.iter() {
                    t.insert_new(itoa::Buffer::new().format(*n).as_bytes().into());
                }
            }
            Set::Packed(p) => {
                for m in p.items() {
                    t.insert_new(m.into());
                }
            }
            Set::Table(_) => return,
        }
        *self = Set::Table(t);
    }

    /// An intset given a member that is not an integer becomes packed when all of it
    /// fits the packed limits, a table otherwise.
    fn ints_to_packed_or_table(&mut self, member: &[u8]) {
        if let Set::Ints(v) = self {
            if v.len() < PACKED_ENTRIES && member.len() <= PACKED_VALUE {
                // Canonical i64s are at most 20 bytes: every one fits PACKED_VALUE.
                let mut p = Packed::new();
                for n in v.iter() {
                    p.push(itoa::Buffer::new().format(*n).as_bytes());
                }
                *self = Set::Packed(p);
                return;
            }
        }
        self.to_table();
    }

    /// Adds a member; true when it is new. `max_intset` is set-max-intset-entries.
    pub fn add(&mut self, member: &[u8], max_intset: usize) -> bool {
        if let Set::Ints(v) = self {
            if let Some(n) = parse_i64(member) {
                match v.binary_search(&n) {
                    Ok(_) => return false,
                    Err(pos) if v.len() < max_intset => {
                        v.insert(pos, n);
                        return true;
                    }
                    Err(_) => {}
                }
                // Past set-max-intset-entries: a table, as in Redis.
                self.to_table();
            } else {
                self.ints_to_packed_or_table(member);
            }
        }
        if let Set::Packed(p) = self {
            if p.items().any(|m| m == member) {
                return false;
            }
            if p.len() < PACKED_ENTRIES && member.len() <= PACKED_VALUE {
                p.push(member);
                return true;
            }
            self.to_table();
        }
        match self {
            // One lookup, and no allocation when the member is there already.
            Set::Table(t) => t.get_or_insert_with(member, || SmallBytes::new(member)),
            Set::Ints(_) | Set::Packed(_) => false,
        }
    }

    /// Removes a member; true when it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            Set::Ints(v) => match parse_i64(member).map(|n| v.binary_search(&n)) {
                Some(Ok(pos)) => {
                    v.remove(pos);
                    true
                }
                _ => false,
            },
            Set::Packed(p) => match p.iter().find(|(_, m)| *m == member) {
                Some((at, _)) => {
                    p.remove_at(at);
                    true
                }
                None => false,
            },
            Set::Table(t) => t.remove(member).is_some(),
        }
    }

    /// All members as owned byte strings (ints formatted), in the set's order.
    pub fn members(&self) -> Vec<Vec<u8>> {
        match self {
            Set::Ints(v) => v
                .iter()
                .map(|n| itoa::Buffer::new().format(*n).as_bytes().to_vec())
                .collect(),
            Set::Packed(p) => p.items().map(<[u8]>::to_vec).collect(),
            Set::Table(t) => t.iter().map(|m| m.to_vec()).collect(),
        }
    }

    /// One SSCAN step: members from `cursor` on, a few buckets of the table at a time
    /// (`segtable.rs`); an intset or packed set gives all of them and cursor 0, as Redis does
    /// for its compact encodings.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8])) -> u64 {
        match self {
            Set::Ints(v) => {
                for n in v {
                    visit(itoa::Buffer::new().format(*n).as_bytes());
                }
                0
            }
            Set::Packed(p) => {
                p.items().for_each(visit);
                0
            }
            Set::Table(t) => t.scan(cursor, count, |m| visit(m)),
        }
    }

    /// Whether [`random`](Self::random) takes constant time (the packed form walks its
    /// members): counted random picks sample only then, and copy the set otherwise.
    pub fn random_is_constant_time(&self) -> bool {
        !matches!(self, Set::Packed(_))
    }

    /// A uniformly random member, None when empty; constant expected time for a hash
    /// table (`random.rs`), at most a packed set's 128 steps otherwise.
    pub fn random(&self, rng: &mut fastrand::Rng) -> Option<Vec<u8>> {
        match self {
            Set::Ints(v) if v.is_empty() => None,
            Set::Ints(v) => Some(itoa::Buffer::new().format(v[rng.usize(..v.len())]).as_bytes().to_vec()),
            Set::Packed(p) if p.is_empty() => None,
            Set::Packed(p) => p.items().nth(rng.usize(..p.len())).map(<[u8]>::to_vec),
            Set::Table(t) => t.random(rng).map(|m| m.to_vec()),
        }
    }

    /// Heap bytes held; the members' out-of-line parts from `samples` of them (None:
    /// all), see `sampled_sum`.
    pub fn heap_size(&self, samples: Option<usize>) -> usize {
        match self {
            Set::Ints(v) => v.capacity() * 8,
            Set::Packed(p) => p.heap_size(),
            Set::Table(t) => t.buckets() * 17 + super::sampled_sum(t.iter().map(|m| m.heap_len()), t.len(), samples),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_holds_short_and_long_members() {
        // Members on both sides of SmallBytes's 15-byte inline limit.
        let member = |i: usize| format!("{}{i}", "s".repeat(i % 40)).into_bytes();
        let mut s = Set::new();
        for i in 0..2000 {
            assert!(s.add(&member(i), 512));
        }
        assert!(matches!(s, Set::Table(_)));
        for i in (0..2000).step_by(2) {
            assert!(s.remove(&member(i)));
        }
        let copy = s.clone();
        for i in 0..2000 {
            assert_eq!(copy.contains(&member(i)), i % 2 == 1, "member {i}");
        }
        let mut members = copy.members();
        members.sort();
        let mut want: Vec<Vec<u8>> = (1..2000).step_by(2).map(member).collect();
        want.sort();
        assert_eq!(members, want);
    }

    #[test]
    fn intset_until_a_string_or_the_limit() {
        let mut s = Set::new();
        assert!(s.add(b"3", 4));
        assert!(s.add(b"1", 4));
        assert!(!s.add(b"3", 4));
        assert_eq!(s.encoding(), "intset");
        assert_eq!(s.members(), vec![b"1".to_vec(), b"3".to_vec()]);
        assert!(s.contains(b"1"));
        assert!(!s.contains(b"01"));
        assert!(s.add(b"x", 4));
        assert_eq!(s.encoding(), "hashtable");
        assert!(matches!(s, Set::Packed(_)), "a few short strings stay packed");
        assert!(s.contains(b"3") && s.contains(b"x"));
        assert!(!s.add(b"x", 4) && !s.add(b"3", 4));
        assert!(s.remove(b"1"));
        assert!(!s.remove(b"1"));
        assert_eq!(s.len(), 2);
        let mut t = Set::new();
        for i in 0..5 {
            t.add(i.to_string().as_bytes(), 4);
        }
        assert_eq!(t.encoding(), "hashtable");
        assert!(matches!(t, Set::Table(_)), "past set-max-intset-entries: a table");
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn packed_until_its_limits_then_table() {
        let mut s = Set::new();
        for i in 0..PACKED_ENTRIES {
            assert!(s.add(format!("tag-{i}").as_bytes(), 512));
        }
        assert!(matches!(s, Set::Packed(_)));
        assert!(s.add(b"one more", 512));
        assert!(matches!(s, Set::Table(_)));
        assert_eq!(s.len(), PACKED_ENTRIES + 1);
        assert!(s.contains(b"tag-7") && s.contains(b"one more"));
        let mut long = Set::new();
        long.add(b"short", 512);
        long.add(&[b'x'; PACKED_VALUE + 1], 512);
        assert!(matches!(long, Set::Table(_)));
        assert_eq!(long.len(), 2);
        // An intset meeting a long string goes straight to a table.
        let mut ints = Set::new();
        ints.add(b"1", 512);
        ints.add(&[b'y'; PACKED_VALUE + 1], 512);
        assert!(matches!(ints, Set::Table(_)));
        assert_eq!(ints.members().len(), 2);
    }
}
