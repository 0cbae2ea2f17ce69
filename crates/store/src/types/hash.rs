//! The hash type: a packed sequence of field/value pairs while small (OBJECT ENCODING
//! "listpack", insertion order kept as Redis's listpack does), a hash table beyond
//! `hash-max-listpack-entries` pairs or once a field or value is longer than
//! `hash-max-listpack-value` bytes ("hashtable"). Conversion is one way, as in Redis.

use hashbrown::HashMap;

use super::packed::Packed;

/// Thresholds from `hash-max-listpack-entries` and `hash-max-listpack-value`.
#[derive(Clone, Copy, Debug)]
pub struct HashLimits {
    pub max_listpack_entries: usize,
    pub max_listpack_value: usize,
}

impl Default for HashLimits {
    fn default() -> HashLimits {
        HashLimits {
            max_listpack_entries: 512,
            max_listpack_value: 64,
        }
    }
}

type Table = HashMap<Box<[u8]>, Box<[u8]>, foldhash::fast::RandomState>;

/// A Redis hash.
#[derive(Clone, Debug)]
pub enum Hash {
    /// field, value, field, value, ... in insertion order.
    Packed(Packed),
    Table(Table),
}

impl PartialEq for Hash {
    fn eq(&self, other: &Hash) -> bool {
        self.len() == other.len() && self.iter().all(|(f, v)| other.get(f) == Some(v))
    }
}

impl Default for Hash {
    fn default() -> Hash {
        Hash::Packed(Packed::new())
    }
}

impl Hash {
    pub fn new() -> Hash {
        Hash::default()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        match self {
            Hash::Packed(p) => p.len() / 2,
            Hash::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OBJECT ENCODING's name.
    pub fn encoding(&self) -> &'static str {
        match self {
            Hash::Packed(_) => "listpack",
            Hash::Table(_) => "hashtable",
        }
    }

    /// Offset of the field's entry in the packed form.
    fn packed_find(p: &Packed, field: &[u8]) -> Option<usize> {
        let mut it = p.iter();
        while let Some((at, f)) = it.next() {
            if f == field {
                return Some(at);
            }
            it.next(); // skip the value
        }
        None
    }

    /// The value of a field.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            Hash::Packed(p) => {
                let at = Self::packed_find(p, field)?;
                p.next_after(at).map(|(_, v)| v)
            }
            Hash::Table(t) => t.get(field).map(|v| &**v),
        }
    }

    fn to_table(&mut self) {
        let table = match self {
            Hash::Packed(p) => {
                let mut t = Table::with_capacity_and_hasher(p.len() / 2 + 1, Default::default());
                let mut it = p.items();
                while let (Some(f), Some(v)) = (it.next(), it.next()) {
                    t.insert(f.into(), v.into());
                }
                t
            }
            Hash::Table(_) => return,
        };
        *self = Hash::Table(table);
    }

    /// Sets a field; true when the field is new.
    pub fn set(&mut self, field: &[u8], value: &[u8], limits: HashLimits) -> bool {
        if let Hash::Packed(p) = self {
            let fits = field.len() <= limits.max_listpack_value
                && value.len() <= limits.max_listpack_value;
            if fits {
                if let Some(at) = Self::packed_find(p, field) {
                    if let Some((vat, _)) = p.next_after(at) {
                        p.replace_at(vat, value);
                    }
                    return false;
                }
                if p.len() / 2 < limits.max_listpack_entries {
                    p.push(field);
                    p.push(value);
                    return true;
                }
            }
            self.to_table();
        }
        match self {
            // One lookup, and no allocation for the field when it exists; a value of the
            // same length is overwritten in place.
            Hash::Table(t) => match t.entry_ref(field) {
                hashbrown::hash_map::EntryRef::Occupied(mut slot) => {
                    let old = slot.get_mut();
                    if old.len() == value.len() {
                        old.copy_from_slice(value);
                    } else {
                        *old = value.into();
                    }
                    false
                }
                hashbrown::hash_map::EntryRef::Vacant(slot) => {
                    slot.insert(value.into());
                    true
                }
            },
            Hash::Packed(_) => false,
        }
    }

    /// Removes a field; true when it existed.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self {
            Hash::Packed(p) => match Self::packed_find(p, field) {
                Some(at) => {
                    p.remove_at(at); // the field; the value now sits at `at`
                    p.remove_at(at);
                    true
                }
                None => false,
            },
            Hash::Table(t) => t.remove(field).is_some(),
        }
    }

    /// Fields and values (insertion order for the packed form).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], &[u8])> + '_> {
        match self {
            Hash::Packed(p) => {
                let mut it = p.items();
                Box::new(std::iter::from_fn(move || Some((it.next()?, it.next()?))))
            }
            Hash::Table(t) => Box::new(t.iter().map(|(f, v)| (&**f, &**v))),
        }
    }

    /// Approximate heap bytes held.
    pub fn heap_size(&self) -> usize {
        match self {
            Hash::Packed(p) => p.heap_size(),
            Hash::Table(t) => {
                t.capacity() * (32 + 1) + t.iter().map(|(f, v)| f.len() + v.len()).sum::<usize>()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_until_a_limit_then_table() {
        let limits = HashLimits {
            max_listpack_entries: 3,
            max_listpack_value: 8,
        };
        let mut h = Hash::new();
        assert!(h.set(b"a", b"1", limits));
        assert!(h.set(b"b", b"2", limits));
        assert!(!h.set(b"a", b"10", limits));
        assert_eq!(h.get(b"a"), Some(&b"10"[..]));
        assert_eq!(h.encoding(), "listpack");
        let order: Vec<&[u8]> = h.iter().map(|(f, _)| f).collect();
        assert_eq!(order, vec![&b"a"[..], b"b"]);
        assert!(h.set(b"c", b"3", limits));
        assert!(h.set(b"d", b"4", limits));
        assert_eq!(h.encoding(), "hashtable");
        assert_eq!(h.len(), 4);
        assert_eq!(h.get(b"b"), Some(&b"2"[..]));
        let mut g = Hash::new();
        g.set(b"k", b"a value longer than 8", limits);
        assert_eq!(g.encoding(), "hashtable");
    }

    #[test]
    fn remove_from_both_forms() {
        let limits = HashLimits::default();
        let mut h = Hash::new();
        h.set(b"a", b"1", limits);
        h.set(b"b", b"2", limits);
        assert!(h.remove(b"a"));
        assert!(!h.remove(b"a"));
        assert_eq!(h.iter().collect::<Vec<_>>(), vec![(&b"b"[..], &b"2"[..])]);
        h.to_table();
        assert!(h.remove(b"b"));
        assert!(h.is_empty());
    }
}
