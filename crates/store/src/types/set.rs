//! The set type: a sorted vector of integers while every member is a canonical integer
//! and there are at most `set-max-intset-entries` of them (OBJECT ENCODING "intset"),
//! a hash set otherwise ("hashtable"; Redis 7.0 has no listpack sets). Conversion is one
//! way, as in Redis.

use hashbrown::HashSet;

use super::string::parse_i64;

type Table = HashSet<Box<[u8]>, foldhash::fast::RandomState>;

/// A Redis set.
#[derive(Clone, Debug)]
pub enum Set {
    Ints(Vec<i64>),
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
            Set::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn encoding(&self) -> &'static str {
        match self {
            Set::Ints(_) => "intset",
            Set::Table(_) => "hashtable",
        }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        match self {
            Set::Ints(v) => parse_i64(member).is_some_and(|n| v.binary_search(&n).is_ok()),
            Set::Table(t) => t.contains(member),
        }
    }

    fn to_table(&mut self) {
        let table = match self {
            Set::Ints(v) => {
                let mut t = Table::with_capacity_and_hasher(v.len() + 1, Default::default());
                for n in v.iter() {
                    t.insert(itoa::Buffer::new().format(*n).as_bytes().into());
                }
                t
            }
            Set::Table(_) => return,
        };
        *self = Set::Table(table);
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
            }
            self.to_table();
        }
        match self {
            // One lookup, and no allocation when the member is there already.
            Set::Table(t) => {
                let before = t.len();
                t.get_or_insert_with(member, |m| Box::from(m));
                t.len() > before
            }
            Set::Ints(_) => false,
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
            Set::Table(t) => t.remove(member),
        }
    }

    /// All members as owned byte strings (ints formatted), in the set's order.
    pub fn members(&self) -> Vec<Vec<u8>> {
        match self {
            Set::Ints(v) => v
                .iter()
                .map(|n| itoa::Buffer::new().format(*n).as_bytes().to_vec())
                .collect(),
            Set::Table(t) => t.iter().map(|m| m.to_vec()).collect(),
        }
    }

    /// The member at position `i` of the set's iteration order (random picks).
    pub fn nth(&self, i: usize) -> Option<Vec<u8>> {
        match self {
            Set::Ints(v) => v
                .get(i)
                .map(|n| itoa::Buffer::new().format(*n).as_bytes().to_vec()),
            Set::Table(t) => t.iter().nth(i).map(|m| m.to_vec()),
        }
    }

    pub fn heap_size(&self) -> usize {
        match self {
            Set::Ints(v) => v.capacity() * 8,
            Set::Table(t) => t.capacity() * 17 + t.iter().map(|m| m.len()).sum::<usize>(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(s.contains(b"3") && s.contains(b"x"));
        assert!(s.remove(b"1"));
        assert_eq!(s.len(), 2);
        let mut t = Set::new();
        for i in 0..5 {
            t.add(i.to_string().as_bytes(), 4);
        }
        assert_eq!(t.encoding(), "hashtable");
        assert_eq!(t.len(), 5);
    }
}
