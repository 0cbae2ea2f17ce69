//! A packed sequence of byte strings in one allocation: each item is a LEB128 length
//! followed by its bytes. It is Basalt's counterpart of Redis's listpack, used for small
//! hashes (field, value, field, value, ...) where one allocation and a byte or two of
//! overhead per item keep memory low. Every operation is a linear walk: the owners keep
//! it to small sizes (the `*-max-listpack-*` thresholds) and convert beyond them.
//!
//! Format: `[len: LEB128][bytes]` repeated; `count` items.
//!
//! A small hash, sorted set or list also has a *compact form*, the bytes an entry stores
//! inline (`inline.rs`): the items alternate key, value (field/value, member/score;
//! [`Stride::Pairs`]) or are all keys (list elements; [`Stride::Items`]), and keys of one
//! collection usually share a prefix (`field:0`, `field:1`, ... or YCSB's `field0` ...
//! `field9`), so the compact form stores their longest common prefix once:
//!
//! ```text
//! [count: LEB128][prefix_len: LEB128][prefix bytes]
//! then each item: a key as [len - prefix_len: LEB128][bytes after the prefix],
//!                 a value (Pairs: odd index) as [len: LEB128][bytes]
//! ```
//!
//! Commands never work on the compact form: a command decodes it into a `Packed` (the
//! buffer comes from a small per-thread pool, [`take_buffer`] / [`recycle_buffer`]) and
//! the entry encodes the result back. Both are linear copies of a few hundred bytes at
//! most (the entry keeps only compact forms up to `entry::INLINE_MAX_BYTES` inline).

use crate::{size_class, varint};

/// A packed sequence of byte strings.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Packed {
    buf: Vec<u8>,
    count: usize,
}

/// Reads the item at byte offset `at`: (item, offset of the next item).
fn read_at(buf: &[u8], at: usize) -> (&[u8], usize) {
    let (n, i) = varint::read(buf, at);
    (&buf[i..i + n], i + n)
}

/// Iterator over the items with their byte offsets.
pub struct Iter<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (usize, &'a [u8]);
    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        if self.at >= self.buf.len() {
            return None;
        }
        let start = self.at;
        let (item, next) = read_at(self.buf, start);
        self.at = next;
        Some((start, item))
    }
}

impl Packed {
    pub fn new() -> Packed {
        Packed::default()
    }

    /// An empty sequence, usable in a `static`.
    pub const fn new_const() -> Packed {
        Packed { buf: Vec::new(), count: 0 }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Items in order, each with its byte offset (for `remove_at` / `replace_at`).
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            buf: &self.buf,
            at: 0,
        }
    }

    /// Items in order.
    pub fn items(&self) -> impl Iterator<Item = &[u8]> {
        self.iter().map(|(_, item)| item)
    }

    /// Appends an item. Capacity grows to the allocator's size class (`size_class.rs`):
    /// the memory a listpack's exact growth would get anyway, without a `realloc` per item.
    pub fn push(&mut self, item: &[u8]) {
        size_class::reserve(&mut self.buf, varint::len(item.len()) + item.len());
        varint::push(&mut self.buf, item.len());
        self.buf.extend_from_slice(item);
        self.count += 1;
    }

    /// Inserts an item at byte offset `at` (an item boundary from `iter`, or the end).
    pub fn insert_at(&mut self, at: usize, item: &[u8]) {
        self.splice_item(at, at, item);
        self.count += 1;
    }

    /// Replaces the bytes `at..end` with the encoded `item`, moving the tail once and
    /// allocating only when the buffer grows beyond its capacity (to the end of the
    /// allocator's size class, `size_class.rs`).
    fn splice_item(&mut self, at: usize, end: usize, item: &[u8]) {
        let mut len_bytes = [0u8; 10];
        let n = varint::write(&mut len_bytes, item.len());
        let new_len = n + item.len();
        let old_len = end - at;
        let total = self.buf.len() - old_len + new_len;
        if new_len > old_len {
            size_class::reserve(&mut self.buf, new_len - old_len);
            self.buf.resize(total, 0);
            self.buf.copy_within(end..total - (new_len - old_len), at + new_len);
        } else {
            self.buf.copy_within(end.., at + new_len);
            self.buf.truncate(total);
        }
        if n == 1 {
            // Items under 128 bytes: a store, not a `memcpy` call for one byte.
            self.buf[at] = len_bytes[0];
        } else {
            self.buf[at..at + n].copy_from_slice(&len_bytes[..n]);
        }
        self.buf[at + n..at + new_len].copy_from_slice(item);
    }

    /// The last item and its byte offset. Items carry their length in front only, so
    /// this walks the length prefixes; the loop reads nothing else (no item slices), and
    /// a one-byte prefix (items under 128 bytes) is a load and an add.
    pub fn last(&self) -> Option<(usize, &[u8])> {
        let buf = &self.buf;
        let mut at = 0;
        let mut last = None;
        while at < buf.len() {
            last = Some(at);
            at = match buf[at] {
                b @ 0..=0x7f => at + 1 + usize::from(b),
                _ => {
                    let (n, i) = varint::read(buf, at);
                    i + n
                }
            };
        }
        last.map(|at| (at, read_at(buf, at).0))
    }

    /// The item at byte offset `at` (an item boundary from `iter`).
    pub fn item_at(&self, at: usize) -> &[u8] {
        read_at(&self.buf, at).0
    }

    /// Byte length of the encoded items (the end offset).
    pub fn byte_len(&self) -> usize {
        self.buf.len()
    }

    /// Removes the item at byte offset `at` (from `iter`).
    pub fn remove_at(&mut self, at: usize) {
        let (_, next) = read_at(&self.buf, at);
        self.buf.drain(at..next);
        self.count -= 1;
    }

    /// Replaces the item at byte offset `at` with `item`.
    pub fn replace_at(&mut self, at: usize, item: &[u8]) {
        let (_, next) = read_at(&self.buf, at);
        self.splice_item(at, next, item);
    }

    /// The item after the one at byte offset `at`: (its offset, the item).
    pub fn next_after(&self, at: usize) -> Option<(usize, &[u8])> {
        let (_, next) = read_at(&self.buf, at);
        (next < self.buf.len()).then(|| (next, read_at(&self.buf, next).0))
    }

    /// Heap bytes held.
    pub fn heap_size(&self) -> usize {
        self.buf.capacity()
    }

    /// Releases spare capacity.
    pub fn shrink(&mut self) {
        self.buf.shrink_to_fit();
    }

    /// The buffer, for [`recycle_buffer`].
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// Length of the longest prefix that every key (every `stride`-th item) starts with,
    /// and whether some key's length needs more than one varint byte; 0 when there is no key.
    fn key_prefix(&self, stride: usize) -> (usize, bool) {
        let mut keys = self.items().step_by(stride);
        let Some(first) = keys.next() else { return (0, false) };
        let mut len = first.len();
        let mut long = first.len() >= 0x80;
        for key in keys {
            long |= key.len() >= 0x80;
            len = len.min(key.len());
            if first[..len] != key[..len] {
                len = first[..len].iter().zip(key).take_while(|(a, b)| a == b).count();
            }
        }
        (len, long)
    }

    /// The compact form's size and the key prefix it would use, for [`write_compact`]
    /// (the module header has the format).
    ///
    /// [`write_compact`]: Packed::write_compact
    pub fn compact_layout(&self, stride: Stride) -> CompactLayout {
        let stride = stride as usize;
        let (prefix_len, long_keys) = self.key_prefix(stride);
        let header = varint::len(self.count) + varint::len(prefix_len) + prefix_len;
        let keys = self.count.div_ceil(stride);
        let size = if long_keys {
            let mut size = header;
            for (i, item) in self.items().enumerate() {
                let stored = if i % stride == 0 { item.len() - prefix_len } else { item.len() };
                size += varint::len(stored) + stored;
            }
            size
        } else {
            // Every key's length is one varint byte before and after dropping the
            // prefix: each key item just loses the prefix's bytes.
            header + self.buf.len() - keys * prefix_len
        };
        CompactLayout { prefix_len, size, stride }
    }

    /// Writes the compact form into `out`, which is exactly `layout.size` bytes.
    pub fn write_compact(&self, layout: CompactLayout, out: &mut [u8]) {
        let prefix_len = layout.prefix_len;
        let mut at = varint::write(out, self.count);
        at += varint::write(&mut out[at..], prefix_len);
        let mut from = 0;
        let mut i = 0;
        while i < self.count {
            let (key_len, key_at) = varint::read(&self.buf, from);
            if i == 0 {
                out[at..at + prefix_len].copy_from_slice(&self.buf[key_at..key_at + prefix_len]);
                at += prefix_len;
            }
            at += varint::write(&mut out[at..], key_len - prefix_len);
            // The key's suffix and the value item after it are the same bytes in both forms.
            let mut end = key_at + key_len;
            if layout.stride == 2 && i + 1 < self.count {
                let (value_len, value_at) = varint::read(&self.buf, end);
                end = value_at + value_len;
            }
            let run = &self.buf[key_at + prefix_len..end];
            out[at..at + run.len()].copy_from_slice(run);
            at += run.len();
            from = end;
            i += layout.stride;
        }
        debug_assert_eq!(at, layout.size);
    }

    /// Number of items of a compact form, read from its header.
    pub fn compact_count(compact: &[u8]) -> usize {
        varint::read(compact, 0).0
    }

    /// Decodes a compact form (written by [`Packed::write_compact`] with `stride`) into
    /// `buf`'s storage.
    pub fn read_compact(compact: &[u8], mut buf: Vec<u8>, stride: Stride) -> Packed {
        let stride = stride as usize;
        buf.clear();
        let (count, at) = varint::read(compact, 0);
        let (prefix_len, mut at) = varint::read(compact, at);
        let prefix = &compact[at..at + prefix_len];
        at += prefix_len;
        buf.reserve(compact.len() - at + count.div_ceil(stride) * (prefix_len + 2));
        let mut i = 0;
        while i < count {
            let (suffix_len, suffix_at) = varint::read(compact, at);
            varint::push(&mut buf, prefix_len + suffix_len);
            buf.extend_from_slice(prefix);
            let mut end = suffix_at + suffix_len;
            if stride == 2 && i + 1 < count {
                let (value_len, value_at) = varint::read(compact, end);
                end = value_at + value_len;
            }
            buf.extend_from_slice(&compact[suffix_at..end]);
            at = end;
            i += stride;
        }
        Packed { buf, count }
    }

    /// The value (odd item) after `key` in a compact form of pairs ([`Stride::Pairs`]),
    /// found without decoding it.
    pub fn compact_value_of<'a>(compact: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
        let (count, at) = varint::read(compact, 0);
        let (prefix_len, mut at) = varint::read(compact, at);
        // Every key starts with the prefix, so a key that does not is in none of them.
        let suffix = key.strip_prefix(&compact[at..at + prefix_len])?;
        at += prefix_len;
        for _ in 0..count / 2 {
            let (len, item_at) = varint::read(compact, at);
            let (value_len, value_at) = varint::read(compact, item_at + len);
            if &compact[item_at..item_at + len] == suffix {
                return Some(&compact[value_at..value_at + value_len]);
            }
            at = value_at + value_len;
        }
        None
    }
}

/// What [`Packed::compact_layout`] computed: the key prefix and the size in bytes.
#[derive(Clone, Copy, Debug)]
pub struct CompactLayout {
    pub prefix_len: usize,
    pub size: usize,
    stride: usize,
}

/// Which items of a compact form are keys, whose common prefix is stored once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stride {
    /// Every item (a list's elements).
    Items = 1,
    /// Items alternate key, value (a hash's fields and values, a sorted set's members
    /// and scores): the keys.
    Pairs = 2,
}

/// Buffers kept per thread for decoded compact forms, so that a command on an inline
/// collection allocates nothing in steady state.
const POOL_BUFFERS: usize = 4;
/// A buffer that grew beyond this is freed rather than kept.
const POOL_BUFFER_MAX: usize = 16 * 1024;

thread_local! {
    static POOL: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty buffer, from this thread's pool when it has one.
pub fn take_buffer() -> Vec<u8> {
    POOL.with(|pool| pool.borrow_mut().pop()).unwrap_or_default()
}

/// Gives a buffer back to this thread's pool (or frees it).
pub fn recycle_buffer(buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > POOL_BUFFER_MAX {
        return;
    }
    POOL.with(|pool| {
        let mut pool = pool.borrow_mut();
        if pool.len() < POOL_BUFFERS {
            pool.push(buf);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_iterate_replace_remove() {
        let mut p = Packed::new();
        let long = vec![b'x'; 300];
        for item in [&b"a"[..], b"", &long, b"bc"] {
            p.push(item);
        }
        assert_eq!(p.len(), 4);
        let items: Vec<&[u8]> = p.items().collect();
        assert_eq!(items, vec![&b"a"[..], b"", &long[..], b"bc"]);
        let (at, _) = p.iter().nth(2).expect("third");
        p.replace_at(at, b"short");
        let (at, _) = p.iter().nth(0).expect("first");
        assert_eq!(
            p.next_after(at).map(|(_, i)| i.to_vec()),
            Some(b"".to_vec())
        );
        p.remove_at(at);
        let items: Vec<&[u8]> = p.items().collect();
        assert_eq!(items, vec![&b""[..], b"short", b"bc"]);
        assert_eq!(p.len(), 3);
    }

    #[test]
    fn last_matches_the_iterator_for_short_and_long_lengths() {
        assert_eq!(Packed::new().last(), None);
        let long = vec![b'x'; 300];
        let huge = vec![b'y'; 20_000];
        let mut p = Packed::new();
        for item in [&b"a"[..], b"", &long, &huge, b"bc", b"", &long] {
            p.push(item);
            assert_eq!(p.last(), p.iter().last());
        }
        while !p.is_empty() {
            let (at, _) = p.last().expect("an item");
            p.remove_at(at);
            assert_eq!(p.last(), p.iter().last());
        }
    }

    #[test]
    fn insert_and_replace_in_the_middle_grow_and_shrink_in_place() {
        let mut p = packed_of(&[b"a", b"bb", b"ccc"]);
        let (at, _) = p.iter().nth(1).expect("second");
        p.insert_at(at, &[b'x'; 200]); // a two-byte length
        let (at, _) = p.iter().nth(2).expect("third");
        p.replace_at(at, b"a longer bb");
        let (at, _) = p.iter().nth(1).expect("second");
        p.replace_at(at, b"y");
        let items: Vec<&[u8]> = p.items().collect();
        assert_eq!(items, vec![&b"a"[..], b"y", b"a longer bb", b"ccc"]);
        assert_eq!(p.len(), 4);
    }

    fn packed_of(items: &[&[u8]]) -> Packed {
        let mut p = Packed::new();
        for item in items {
            p.push(item);
        }
        p
    }

    #[test]
    fn compact_form_round_trips_and_shares_the_key_prefix() {
        let long = vec![b'v'; 200];
        let cases: Vec<Vec<&[u8]>> = vec![
            vec![],
            vec![b"only", b""],
            vec![b"field:0", b"a", b"field:1", &long, b"field:10", b"c"],
            vec![b"same", b"1", b"same-but-longer", b"2"],
            vec![b"abc", b"x", b"", b"y", b"abd", b"z"],
            vec![b"", b""],
            vec![&long[..], b"long key", b"short", &long[..100]],
            vec![b"odd", b"1", b"count"],
        ];
        for items in cases {
            let p = packed_of(&items);
            for stride in [Stride::Pairs, Stride::Items] {
                let layout = p.compact_layout(stride);
                let mut out = vec![0; layout.size];
                p.write_compact(layout, &mut out);
                assert_eq!(Packed::compact_count(&out), items.len());
                let back = Packed::read_compact(&out, take_buffer(), stride);
                assert_eq!(back, p, "{items:?} {stride:?}");
                recycle_buffer(back.into_buffer());
                if stride == Stride::Pairs {
                    for pair in items.chunks(2).filter(|pair| pair.len() == 2) {
                        assert_eq!(Packed::compact_value_of(&out, pair[0]), Some(pair[1]), "{items:?}");
                    }
                    assert_eq!(Packed::compact_value_of(&out, b"not-a-key"), None);
                }
            }
        }
        let p = packed_of(&[b"field:0", b"a", b"field:1", b"b"]);
        assert_eq!(p.compact_layout(Stride::Items).prefix_len, 0);
        let p = packed_of(&[b"item-1", b"item-22", b"item-333"]);
        assert_eq!(p.compact_layout(Stride::Items).prefix_len, 5);
        let p = packed_of(&[b"field:0", b"a", b"field:1", b"b"]);
        let layout = p.compact_layout(Stride::Pairs);
        assert_eq!(layout.prefix_len, 6);
        assert!(layout.size < p.byte_len(), "{} vs {}", layout.size, p.byte_len());
    }
}
