//! Random picks from hash tables in expected constant time (SPOP, SRANDMEMBER and
//! HRANDFIELD without a count), where walking the table's iterator to a random position
//! costs time in proportion to its size.
//!
//! A pick draws bucket positions until one is full: uniform over the entries, and
//! expected `buckets / len` draws. Tables shrink when removals leave them under an
//! eighth full ([`shrink_if_sparse`]), as Redis's dictionaries do, which bounds that to
//! about eight; a table that is sparser anyway (shrinking is skipped under 64 slots)
//! falls back, after [`MAX_DRAWS`], to the first full bucket after a random position.

use hashbrown::raw::RawTable;

/// Draws before the fallback walk.
pub const MAX_DRAWS: usize = 64;

/// A random entry of `table`, None when it is empty.
pub fn table_entry<'t, T>(table: &'t RawTable<T>, rng: &mut fastrand::Rng) -> Option<&'t T> {
    if table.is_empty() {
        return None;
    }
    let buckets = table.buckets();
    // SAFETY (both blocks): every index is below `buckets`, and a bucket is read only
    // once `is_bucket_full` said it holds an entry; `table` is borrowed for 't.
    for _ in 0..MAX_DRAWS {
        let i = rng.usize(..buckets);
        if unsafe { table.is_bucket_full(i) } {
            return Some(unsafe { table.bucket(i).as_ref() });
        }
    }
    let start = rng.usize(..buckets);
    (0..buckets)
        .map(|k| (start + k) & (buckets - 1))
        .find(|&i| unsafe { table.is_bucket_full(i) })
        .map(|i| unsafe { table.bucket(i).as_ref() })
}

/// Whether a table of `len` entries and `capacity` should shrink (under an eighth full,
/// and not tiny); shrink it to twice its length.
pub fn shrink_if_sparse(len: usize, capacity: usize) -> Option<usize> {
    (capacity > 64 && len * 8 < capacity).then_some(len * 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(v: u64) -> u64 {
        v.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    fn table(n: u64) -> RawTable<u64> {
        let mut t = RawTable::new();
        for v in 0..n {
            t.insert(mix(v), v, |x| mix(*x));
        }
        t
    }

    #[test]
    fn picks_are_uniform_over_the_entries() {
        let t = table(50);
        let mut rng = fastrand::Rng::with_seed(7);
        let mut seen = [0u32; 50];
        for _ in 0..50_000 {
            seen[*table_entry(&t, &mut rng).expect("non-empty") as usize] += 1;
        }
        // 1,000 expected each; a uniform pick stays well inside 800..1200.
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }

    #[test]
    fn empty_and_very_sparse_tables() {
        let mut rng = fastrand::Rng::with_seed(1);
        assert!(table_entry(&RawTable::<u64>::new(), &mut rng).is_none());
        let mut t = table(4096);
        for v in (0..4096u64).filter(|&v| v != 17) {
            assert!(t.remove_entry(mix(v), |x| *x == v).is_some());
        }
        assert_eq!(t.len(), 1);
        for _ in 0..10 {
            assert_eq!(table_entry(&t, &mut rng), Some(&17));
        }
    }

    #[test]
    fn shrink_rule() {
        assert_eq!(shrink_if_sparse(10, 1000), Some(20));
        assert_eq!(shrink_if_sparse(200, 1000), None);
        assert_eq!(shrink_if_sparse(1, 56), None);
    }
}
