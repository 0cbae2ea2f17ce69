//! A packed sequence of byte strings in one allocation: each item is a LEB128 length
//! followed by its bytes. It is Basalt's counterpart of Redis's listpack, used for small
//! hashes (field, value, field, value, ...) where one allocation and a byte or two of
//! overhead per item keep memory low. Every operation is a linear walk: the owners keep
//! it to small sizes (the `*-max-listpack-*` thresholds) and convert beyond them.
//!
//! Format: `[len: LEB128][bytes]` repeated; `count` items.

/// A packed sequence of byte strings.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Packed {
    buf: Vec<u8>,
    count: usize,
}

fn varint_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Reads the item at byte offset `at`: (item, offset of the next item).
fn read_at(buf: &[u8], at: usize) -> (&[u8], usize) {
    let mut n = 0usize;
    let mut shift = 0;
    let mut i = at;
    loop {
        let b = buf[i];
        n |= ((b & 0x7f) as usize) << shift;
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
    }
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

    /// Appends an item. Capacity grows exactly (as a listpack does): these sequences are
    /// small, and the allocator resizes within a size class in place.
    pub fn push(&mut self, item: &[u8]) {
        self.buf.reserve_exact(varint_len(item.len()) + item.len());
        put_varint(&mut self.buf, item.len());
        self.buf.extend_from_slice(item);
        self.count += 1;
    }

    /// Inserts an item at byte offset `at` (an item boundary from `iter`, or the end).
    pub fn insert_at(&mut self, at: usize, item: &[u8]) {
        let mut encoded = Vec::with_capacity(varint_len(item.len()) + item.len());
        put_varint(&mut encoded, item.len());
        encoded.extend_from_slice(item);
        self.buf.reserve_exact(encoded.len());
        self.buf.splice(at..at, encoded);
        self.count += 1;
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
        let mut encoded = Vec::with_capacity(varint_len(item.len()) + item.len());
        put_varint(&mut encoded, item.len());
        encoded.extend_from_slice(item);
        self.buf
            .reserve_exact(encoded.len().saturating_sub(next - at));
        self.buf.splice(at..next, encoded);
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
}
