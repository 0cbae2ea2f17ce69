//! The hash type: a packed sequence of field/value pairs while small (OBJECT ENCODING
//! "listpack", insertion order kept as Redis's listpack does), a hash table beyond
//! `hash-max-listpack-entries` pairs or once a field or value is longer than
//! `hash-max-listpack-value` bytes ("hashtable"). Conversion is one way, as in Redis.
//!
//! In the table each field and its value share one allocation ([`Pair`]): an update
//! touches one heap block instead of two (the table is usually far larger than the CPU
//! caches, so that is one cache miss less per command) and a field costs one allocation.

use super::packed::Packed;
use super::segtable::{Keyed, SegTable};
use super::small_bytes::{self, SmallBytes};
use crate::varint;

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

/// A field and its value in one allocation: `[field length: LEB128][field][value]`,
/// inline in the table's slot when that is at most 15 bytes (`small_bytes.rs`: a
/// counter such as `u:17 -> 42`). The table finds it by its field ([`Keyed`]).
#[derive(Clone, Debug)]
pub struct Pair(SmallBytes);

impl Pair {
    fn new(field: &[u8], value: &[u8]) -> Pair {
        let mut len_bytes = [0u8; 10];
        let used = varint::write(&mut len_bytes, field.len());
        let total = used + field.len() + value.len();
        if total <= small_bytes::INLINE_MAX {
            // Assembled on the stack: no allocation at all.
            let mut bytes = [0u8; small_bytes::INLINE_MAX];
            bytes[..used].copy_from_slice(&len_bytes[..used]);
            bytes[used..used + field.len()].copy_from_slice(field);
            bytes[used + field.len()..total].copy_from_slice(value);
            return Pair(SmallBytes::new(&bytes[..total]));
        }
        let mut bytes = Vec::with_capacity(total);
        bytes.extend_from_slice(&len_bytes[..used]);
        bytes.extend_from_slice(field);
        bytes.extend_from_slice(value);
        Pair(SmallBytes::from(bytes))
    }

    /// Where the field starts and how long it is.
    fn field_span(&self) -> (usize, usize) {
        let (len, at) = varint::read(&self.0, 0);
        (at, len)
    }

    fn field(&self) -> &[u8] {
        let (at, len) = self.field_span();
        &self.0[at..at + len]
    }

    fn value(&self) -> &[u8] {
        let (at, len) = self.field_span();
        &self.0[at + len..]
    }

    /// Replaces the value: in place when the length is unchanged.
    fn set_value(&mut self, value: &[u8]) {
        let (at, len) = self.field_span();
        if self.0.len() - at - len == value.len() {
            self.0[at + len..].copy_from_slice(value);
        } else {
            *self = Pair::new(self.field(), value);
        }
    }
}

impl Keyed for Pair {
    fn key(&self) -> &[u8] {
        self.field()
    }
}

type Table = SegTable<Pair>;

/// A Redis hash.
#[derive(Clone, Debug)]
pub enum Hash {
    /// field, value, field, value, ... in insertion order.
    Packed(Packed),
    /// Grown a segment at a time (`segtable.rs`).
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
            Hash::Table(t) => t.get(field).map(Pair::value),
        }
    }

    fn to_table(&mut self) {
        let table = match self {
            Hash::Packed(p) => {
                let mut t = Table::with_capacity(p.len() / 2 + 1);
                let mut it = p.items();
                while let (Some(f), Some(v)) = (it.next(), it.next()) {
                    t.insert_new(Pair::new(f, v));
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
            // One lookup, and no allocation when the field exists and the value keeps
            // its length.
            // The value changes, the field (the key) does not.
            Hash::Table(t) => t.update_or_insert(field, |pair| pair.set_value(value), || Pair::new(field, value)),
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

    /// One HSCAN step: fields and values from `cursor` on, a few buckets of the table at
    /// a time (`segtable.rs`); the packed form gives all of them and cursor 0, as Redis does
    /// for a listpack.
    pub fn scan(&self, cursor: u64, count: usize, mut visit: impl FnMut(&[u8], &[u8])) -> u64 {
        match self {
            Hash::Packed(_) => {
                for (f, v) in self.iter() {
                    visit(f, v);
                }
                0
            }
            Hash::Table(t) => t.scan(cursor, count, |pair| visit(pair.field(), pair.value())),
        }
    }

    /// Whether [`random`](Self::random) takes constant time (the packed form walks its
    /// fields): counted random picks sample only then, and copy the hash otherwise.
    pub fn random_is_constant_time(&self) -> bool {
        matches!(self, Hash::Table(_))
    }

    /// A uniformly random field and its value, None when empty; constant expected time
    /// for a hash table (`random.rs`).
    pub fn random(&self, rng: &mut fastrand::Rng) -> Option<(&[u8], &[u8])> {
        match self {
            Hash::Packed(p) if p.is_empty() => None,
            Hash::Packed(_) => {
                let i = rng.usize(..self.len());
                self.iter().nth(i)
            }
            Hash::Table(t) => t.random(rng).map(|pair| (pair.field(), pair.value())),
        }
    }

    /// Fields and values (insertion order for the packed form).
    pub fn iter(&self) -> Box<dyn Iterator<Item = (&[u8], &[u8])> + '_> {
        match self {
            Hash::Packed(p) => {
                let mut it = p.items();
                Box::new(std::iter::from_fn(move || Some((it.next()?, it.next()?))))
            }
            Hash::Table(t) => Box::new(t.iter().map(|pair| (pair.field(), pair.value()))),
        }
    }

    /// Approximate heap bytes held.
    /// Heap bytes held; the pairs' out-of-line parts from `samples` of them (None: all),
    /// see `sampled_sum`.
    pub fn heap_size(&self, samples: Option<usize>) -> usize {
        match self {
            Hash::Packed(p) => p.heap_size(),
            Hash::Table(t) => {
                t.buckets() * (std::mem::size_of::<Pair>() + 1)
                    + super::sampled_sum(t.iter().map(|pair| pair.0.heap_len()), t.len(), samples)
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

    #[test]
    fn table_fields_and_values_share_one_allocation_and_update_in_place() {
        let limits = HashLimits { max_listpack_entries: 0, max_listpack_value: 64 };
        let mut h = Hash::new();
        let long_field = vec![b'f'; 300]; // a two-byte length
        assert!(h.set(b"a", b"1", limits));
        assert!(h.set(&long_field, b"long", limits));
        assert!(h.set(b"", b"empty field", limits));
        assert_eq!(h.encoding(), "hashtable");
        assert!(!h.set(b"a", b"2", limits), "same length: in place");
        assert!(!h.set(b"a", b"a longer value", limits));
        assert!(!h.set(b"a", b"", limits));
        assert_eq!(h.get(b"a"), Some(&b""[..]));
        assert_eq!(h.get(&long_field), Some(&b"long"[..]));
        assert_eq!(h.get(b""), Some(&b"empty field"[..]));
        assert_eq!(h.get(b"b"), None);
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect();
        all.sort();
        assert_eq!(all, vec![(vec![], b"empty field".to_vec()), (b"a".to_vec(), vec![]), (long_field.clone(), b"long".to_vec())]);
        assert!(h.remove(&long_field));
        assert_eq!(h.len(), 2);
        // Across the 15-byte inline limit of a pair (length byte, field, value).
        assert!(h.set(b"abcdefg", b"1234567", limits), "15 bytes: inline");
        assert!(!h.set(b"abcdefg", b"7654321", limits), "inline, in place");
        assert_eq!(h.get(b"abcdefg"), Some(&b"7654321"[..]));
        assert!(!h.set(b"abcdefg", b"12345678", limits), "16 bytes: heap");
        assert!(!h.set(b"abcdefg", b"87654321", limits), "heap, in place");
        assert_eq!(h.get(b"abcdefg"), Some(&b"87654321"[..]));
        assert!(!h.set(b"abcdefg", b"1", limits));
        assert_eq!(h.get(b"abcdefg"), Some(&b"1"[..]));
        assert_eq!(h.len(), 3);
    }
}
