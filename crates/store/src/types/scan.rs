//! Cursor walks over the hash tables of large sets, hashes and sorted sets (SSCAN,
//! HSCAN, ZSCAN), a few buckets per call as Redis walks its dictionaries, so that a
//! collection of millions of elements is never copied into one reply.
//!
//! A cursor is a bucket position plus the table's [`Layout`] count when it was handed
//! out. Entries of a hashbrown table move only when the table is rebuilt: it grows, is
//! rehashed in place (both only inside an insert that finds no room left), or shrinks.
//! The owners report those moments to the table's `Layout`; a cursor from an older
//! layout restarts the walk at position 0. So an element present for the whole
//! iteration is returned at least once (perhaps more often), as Redis promises, and a
//! growing table restarts a walk at most once per doubling.
//!
//! Known limit: under steady churn (removes and adds) hashbrown rehashes a table in
//! place each time the adds have used up its spare room, and a walk slower than that
//! restarts each time; a walk that never outpaces the churn never ends. Redis's walk
//! has no such limit.
//!
//! Cursor bits: 0..40 the position, 40..63 the layout count (mod 2^23). Cursor 0 starts
//! a walk and is returned when it ends.
//!
//! (A walk over home buckets in Redis's reverse-binary order would need no layout
//! count, but finding an element's home needs the table's control bytes, which
//! hashbrown does not expose.)

use hashbrown::raw::RawTable;

const POSITION_BITS: u32 = 40;
const LAYOUT_MASK: u64 = (1 << 23) - 1;

/// Counts the rebuilds of one table (see the module header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout(u32);

impl Layout {
    /// The table was rebuilt (shrunk, or grown or rehashed by an insert).
    pub fn changed(&mut self) {
        self.0 = self.0.wrapping_add(1);
    }

    /// Call with the table's length and capacity (`len + room left`) taken before an
    /// insert, and whether the insert added an entry: an insert that added one when
    /// no room was left rebuilt the table. (Reusing a deleted slot needs no rebuild
    /// and is counted too: a spare restart, never a missed change.)
    pub fn after_insert(&mut self, len_before: usize, capacity_before: usize, added: bool) {
        if added && len_before >= capacity_before {
            self.changed();
        }
    }
}

/// Visits the entries of `table` from `cursor` on, until `count` entries were visited
/// or `10 * count` buckets were looked at (Redis's bounds for one call); returns the
/// cursor to continue from, 0 when the walk is complete.
pub fn walk<T>(table: &RawTable<T>, layout: Layout, cursor: u64, count: usize, mut visit: impl FnMut(&T)) -> u64 {
    let tag = u64::from(layout.0) & LAYOUT_MASK;
    let mut pos = if cursor >> POSITION_BITS == tag { (cursor & ((1 << POSITION_BITS) - 1)) as usize } else { 0 };
    let buckets = table.buckets();
    let count = count.max(1);
    let mut budget = count.saturating_mul(10);
    let mut visited = 0;
    while pos < buckets && budget > 0 && visited < count {
        // SAFETY: pos < buckets, and the bucket is read only when it holds an entry;
        // `table` stays borrowed for the whole walk.
        if unsafe { table.is_bucket_full(pos) } {
            visit(unsafe { table.bucket(pos).as_ref() });
            visited += 1;
        }
        pos += 1;
        budget -= 1;
    }
    if pos >= buckets {
        0
    } else {
        tag << POSITION_BITS | pos as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(v: u64) -> u64 {
        v.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// A table with its layout count kept the way the collection types keep theirs.
    struct Counted {
        table: RawTable<u64>,
        layout: Layout,
    }

    impl Counted {
        fn new() -> Counted {
            Counted { table: RawTable::new(), layout: Layout::default() }
        }
        fn insert(&mut self, v: u64) {
            if self.table.find(mix(v), |x| *x == v).is_some() {
                return;
            }
            let (len, cap) = (self.table.len(), self.table.capacity());
            self.table.insert(mix(v), v, |x| mix(*x));
            self.layout.after_insert(len, cap, true);
        }
        fn remove(&mut self, v: u64) {
            self.table.remove_entry(mix(v), |x| *x == v);
            if let Some(to) = super::super::random::shrink_if_sparse(self.table.len(), self.table.capacity()) {
                self.table.shrink_to(to, |x| mix(*x));
                self.layout.changed();
            }
        }
        /// One SCAN call: the entries it returns and the next cursor.
        fn step(&self, cursor: u64, count: usize) -> (Vec<u64>, u64) {
            let mut got = Vec::new();
            let next = walk(&self.table, self.layout, cursor, count, |v| got.push(*v));
            (got, next)
        }
    }

    #[test]
    fn a_quiet_table_is_walked_exactly_once() {
        let mut t = Counted::new();
        for v in 0..5000 {
            t.insert(v);
        }
        let (mut seen, mut cursor, mut calls) = (Vec::new(), 0, 0);
        loop {
            let (got, next) = t.step(cursor, 10);
            assert!(got.len() <= 10);
            seen.extend(got);
            calls += 1;
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..5000).collect::<Vec<_>>());
        assert!(calls >= 500, "COUNT bounds each call: {calls} calls");
    }

    #[test]
    fn elements_present_throughout_are_returned_while_the_table_grows_and_shrinks() {
        // 1,000 stable elements; each call also inserts or removes a churn of others,
        // enough to grow the table several times and then shrink it.
        let mut t = Counted::new();
        for v in 0..1000 {
            t.insert(v);
        }
        let mut rng = fastrand::Rng::with_seed(3);
        let (mut seen, mut cursor, mut calls) = (std::collections::HashSet::new(), 0, 0);
        loop {
            let (got, next) = t.step(cursor, 10);
            seen.extend(got);
            cursor = next;
            calls += 1;
            if cursor == 0 {
                break;
            }
            assert!(calls < 100_000, "the walk must end");
            if calls < 300 {
                for _ in 0..50 {
                    t.insert(1_000_000 + rng.u64(..1_000_000));
                }
            } else {
                for _ in 0..200 {
                    t.remove(1_000_000 + rng.u64(..1_000_000));
                }
                if calls == 400 {
                    let churn: Vec<u64> = unsafe { t.table.iter().map(|b| *b.as_ref()) }.filter(|v| *v >= 1_000_000).collect();
                    for v in churn {
                        t.remove(v);
                    }
                }
            }
        }
        assert!((0..1000).all(|v| seen.contains(&v)), "a stable element was missed");
    }

    #[test]
    fn foreign_and_stale_cursors_restart_or_end() {
        let mut t = Counted::new();
        for v in 0..100 {
            t.insert(v);
        }
        let (first, next) = t.step(0, 5);
        assert_eq!(first.len(), 5);
        assert_ne!(next, 0);
        // A cursor of another layout restarts: the same first entries again.
        t.layout.changed();
        assert_eq!(t.step(next, 5).0, first);
        // A position past the end ends the walk.
        let tag = u64::from(t.layout.0) << POSITION_BITS;
        assert_eq!(t.step(tag | (1 << 39), 5), (vec![], 0));
        // An empty table ends at once.
        assert_eq!(Counted::new().step(0, 10), (vec![], 0));
    }
}
