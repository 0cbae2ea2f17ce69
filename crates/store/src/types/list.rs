//! The list type, as Redis's quicklist: a deque of packed chunks (`packed.rs`), each of at
//! most `CHUNK_ITEMS` elements or `CHUNK_BYTES` bytes, so an element costs its bytes
//! plus a length byte or two instead of a pointer and an allocation. Pushes and pops at
//! either end touch one chunk; access by index walks chunk counts. Redis 7.0 reports
//! every list as "quicklist", and so does Basalt.

use std::collections::VecDeque;

use super::packed::Packed;

const CHUNK_ITEMS: usize = 128;
const CHUNK_BYTES: usize = 8 * 1024;

/// A Redis list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List {
    chunks: VecDeque<Packed>,
    len: usize,
}

/// Which end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

fn full(c: &Packed) -> bool {
    c.len() >= CHUNK_ITEMS || c.byte_len() >= CHUNK_BYTES
}

impl List {
    pub fn new() -> List {
        List::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn encoding(&self) -> &'static str {
        "quicklist"
    }

    /// The only chunk of a list of at most one (an empty list gives an empty chunk): what
    /// an entry may store inline (`inline.rs`).
    pub(crate) fn single_chunk(&self) -> Option<&Packed> {
        static EMPTY: Packed = Packed::new_const();
        match self.chunks.len() {
            0 => Some(&EMPTY),
            1 => self.chunks.front(),
            _ => None,
        }
    }

    /// A list of one chunk, kept in `chunks` (an empty deque whose storage is reused).
    pub(crate) fn from_chunk(chunk: Packed, mut chunks: VecDeque<Packed>) -> List {
        chunks.clear();
        let len = chunk.len();
        if len > 0 {
            chunks.push_back(chunk);
        } else {
            super::packed::recycle_buffer(chunk.into_buffer());
        }
        List { chunks, len }
    }

    /// The chunks, for reuse of their storage.
    pub(crate) fn into_chunks(self) -> VecDeque<Packed> {
        self.chunks
    }

    /// Builds a list from items in order.
    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> List {
        let mut l = List::new();
        for item in items {
            l.push(End::Tail, item);
        }
        l
    }

    pub fn push(&mut self, end: End, item: &[u8]) {
        match end {
            End::Head => {
                if self.chunks.front().is_none_or(full) {
                    self.chunks.push_front(Packed::new());
                }
                if let Some(c) = self.chunks.front_mut() {
                    c.insert_at(0, item);
                }
            }
            End::Tail => {
                if self.chunks.back().is_none_or(full) {
                    self.chunks.push_back(Packed::new());
                }
                if let Some(c) = self.chunks.back_mut() {
                    c.push(item);
                }
            }
        }
        self.len += 1;
    }

    pub fn pop(&mut self, end: End) -> Option<Box<[u8]>> {
        self.pop_with(end, |item| Box::from(item))
    }

    /// Removes the element at `end`, handing it to `f` before it goes (LPOP and RPOP
    /// write it straight into the reply, without a copy of their own).
    pub fn pop_with<R>(&mut self, end: End, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let chunk = match end {
            End::Head => self.chunks.front_mut()?,
            End::Tail => self.chunks.back_mut()?,
        };
        let (at, item) = match end {
            End::Head => chunk.iter().next()?,
            End::Tail => chunk.last()?,
        };
        let item = f(item);
        chunk.remove_at(at);
        if chunk.is_empty() {
            match end {
                End::Head => self.chunks.pop_front(),
                End::Tail => self.chunks.pop_back(),
            };
        }
        self.len -= 1;
        Some(item)
    }

    /// Resolves a Redis index (negative from the tail) to a position.
    pub fn index(&self, i: i64) -> Option<usize> {
        let len = self.len as i64;
        let i = if i < 0 { len + i } else { i };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// Resolves a Redis start/end range (inclusive, negative from the tail) to
    /// positions; None when empty.
    pub fn range(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let len = self.len as i64;
        let mut s = if start < 0 { len + start } else { start };
        let mut e = if end < 0 { len + end } else { end };
        if s < 0 {
            s = 0;
        }
        if e >= len {
            e = len - 1;
        }
        (s <= e && s < len).then(|| (s as usize, e as usize))
    }

    /// (chunk, index within it) of a position, walking chunk counts from the nearer end.
    fn locate(&self, pos: usize) -> Option<(usize, usize)> {
        if pos >= self.len {
            return None;
        }
        if pos < self.len / 2 {
            let mut pos = pos;
            for (ci, c) in self.chunks.iter().enumerate() {
                if pos < c.len() {
                    return Some((ci, pos));
                }
                pos -= c.len();
            }
        } else {
            let mut from_end = self.len - 1 - pos;
            for (ci, c) in self.chunks.iter().enumerate().rev() {
                if from_end < c.len() {
                    return Some((ci, c.len() - 1 - from_end));
                }
                from_end -= c.len();
            }
        }
        None
    }

    /// Elements from position `start` on, in order (starts at the right chunk rather
    /// than walking the elements before it).
    pub fn iter_from(&self, start: usize) -> impl Iterator<Item = &[u8]> {
        let (ci, i) = self.locate(start).unwrap_or((self.chunks.len(), 0));
        self.chunks
            .range(ci..)
            .enumerate()
            .flat_map(move |(k, c)| c.items().skip(if k == 0 { i } else { 0 }))
    }

    /// The element at a position.
    pub fn get(&self, pos: usize) -> Option<&[u8]> {
        let (ci, i) = self.locate(pos)?;
        self.chunks[ci].items().nth(i)
    }

    /// Replaces the element at a position; false when out of range.
    pub fn set(&mut self, pos: usize, item: &[u8]) -> bool {
        let Some((ci, i)) = self.locate(pos) else {
            return false;
        };
        let Some((at, _)) = self.chunks[ci].iter().nth(i) else {
            return false;
        };
        self.chunks[ci].replace_at(at, item);
        true
    }

    /// Inserts an element so that it ends up at `pos` (`pos == len` appends).
    pub fn insert(&mut self, pos: usize, item: &[u8]) {
        if pos >= self.len {
            self.push(End::Tail, item);
            return;
        }
        let Some((ci, i)) = self.locate(pos) else {
            return;
        };
        let c = &mut self.chunks[ci];
        let at = c.iter().nth(i).map_or(c.byte_len(), |(at, _)| at);
        c.insert_at(at, item);
        self.len += 1;
        if c.len() > 2 * CHUNK_ITEMS || c.byte_len() > 2 * CHUNK_BYTES {
            // Split an overgrown chunk in two.
            let items: Vec<Vec<u8>> = c.items().map(<[u8]>::to_vec).collect();
            let half = items.len() / 2;
            let mut first = Packed::new();
            let mut second = Packed::new();
            for (k, it) in items.iter().enumerate() {
                if k < half {
                    first.push(it)
                } else {
                    second.push(it)
                }
            }
            self.chunks[ci] = first;
            self.chunks.insert(ci + 1, second);
        }
    }

    /// Elements in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.chunks.iter().flat_map(|c| c.items())
    }

    /// Keeps only the elements for which `keep` is true (LREM, LTRIM), in order.
    pub fn retain(&mut self, mut keep: impl FnMut(usize, &[u8]) -> bool) {
        let kept: Vec<Vec<u8>> = self
            .iter()
            .enumerate()
            .filter(|(i, it)| keep(*i, it))
            .map(|(_, it)| it.to_vec())
            .collect();
        *self = List::from_items(kept.iter().map(Vec::as_slice));
    }

    pub fn heap_size(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Packed>()
            + self.chunks.iter().map(Packed::heap_size).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_and_ranges_follow_redis() {
        let mut l = List::new();
        for x in [b"a", b"b", b"c"] {
            l.push(End::Tail, x);
        }
        assert_eq!(l.index(-1), Some(2));
        assert_eq!(l.index(3), None);
        assert_eq!(l.range(0, -1), Some((0, 2)));
        assert_eq!(l.range(-100, 100), Some((0, 2)));
        assert_eq!(l.range(2, 1), None);
        assert_eq!(l.range(5, 10), None);
        assert_eq!(l.pop(End::Head).as_deref(), Some(&b"a"[..]));
    }

    #[test]
    fn chunked_list_matches_a_deque() {
        // Pushes, pops, sets, inserts and removes across many chunks, checked against
        // VecDeque step by step (deterministic pseudo-random operations).
        let mut l = List::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        let mut rng = 0x2545f4914f6cdd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for step in 0..20_000u64 {
            let item = format!("item-{step}").into_bytes();
            match next() % 7 {
                0 | 1 => {
                    l.push(End::Head, &item);
                    model.push_front(item);
                }
                2 | 3 => {
                    l.push(End::Tail, &item);
                    model.push_back(item);
                }
                4 => assert_eq!(l.pop(End::Head).map(|b| b.to_vec()), model.pop_front()),
                5 => assert_eq!(l.pop(End::Tail).map(|b| b.to_vec()), model.pop_back()),
                _ => {
                    if !model.is_empty() {
                        let p = (next() as usize) % model.len();
                        if next() % 2 == 0 {
                            assert!(l.set(p, &item));
                            model[p] = item;
                        } else {
                            l.insert(p, &item);
                            model.insert(p, item);
                        }
                    }
                }
            }
            assert_eq!(l.len(), model.len());
        }
        assert!(l.iter().eq(model.iter().map(Vec::as_slice)));
        for p in [
            0,
            1,
            model.len() / 2,
            model.len().saturating_sub(2),
            model.len().saturating_sub(1),
        ] {
            assert_eq!(l.get(p), model.get(p).map(Vec::as_slice));
            assert!(
                l.iter_from(p).eq(model.iter().skip(p).map(Vec::as_slice)),
                "iter_from({p})"
            );
        }
        l.retain(|i, _| i % 2 == 0);
        let kept: Vec<&[u8]> = model
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, v)| v.as_slice())
            .collect();
        assert!(l.iter().eq(kept.into_iter()));
    }
}
