//! The list type, as Redis's quicklist: a deque of packed chunks (`packed.rs`), each of at
//! most `CHUNK_ITEMS` elements or `CHUNK_BYTES` bytes, so an element costs its bytes
//! plus a length byte or two instead of a pointer and an allocation. Pushes and pops at
//! either end touch one chunk; access by index walks chunk counts. Redis 7.0 reports
//! every list as "quicklist", and so does Basalt.
//!
//! A chunk's items carry their length in front only, so its last item is found by a
//! walk over the length prefixes: a chain of dependent loads, ~10% of an RPOP's server
//! CPU on a 128-item chunk. A list that is popped from its tail keeps the byte offsets
//! of the back chunk's items (`tail_offsets`), built by one walk and then kept up to
//! date by RPUSH and RPOP, so that repeated tail pops are O(1) as with Redis's listpack
//! (which stores each entry's length behind it too, a byte an element that Basalt's
//! chunks do without). Any other change to the back chunk drops the offsets.

use std::collections::VecDeque;

use super::packed::Packed;

const CHUNK_ITEMS: usize = 128;
const CHUNK_BYTES: usize = 8 * 1024;
/// Back chunks of fewer items are walked rather than indexed (the walk is short, and
/// the offsets would cost more memory than they save time).
const TAIL_INDEX_MIN_ITEMS: usize = 16;

/// A Redis list.
#[derive(Clone, Debug, Default)]
pub struct List {
    chunks: VecDeque<Packed>,
    len: usize,
    /// Either empty (not known) or the byte offset of every item of the back chunk, in
    /// order (see the module header). Every change to the back chunk other than a tail
    /// push or pop clears it. A back chunk of 4 GiB or more (one huge item) is not
    /// indexed.
    tail_offsets: Vec<u32>,
}

/// Lists are equal when their chunks are; the tail offsets are a cache.
impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.len == other.len && self.chunks == other.chunks
    }
}

impl Eq for List {}

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
        List { chunks, len, tail_offsets: Vec::new() }
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
                if self.chunks.len() == 1 {
                    // The front chunk is the back one: its offsets all move.
                    self.tail_offsets.clear();
                }
                if let Some(c) = self.chunks.front_mut() {
                    c.insert_at(0, item);
                }
            }
            End::Tail => {
                if self.chunks.back().is_none_or(full) {
                    self.chunks.push_back(Packed::new());
                    self.tail_offsets.clear();
                }
                if let Some(c) = self.chunks.back_mut() {
                    if !self.tail_offsets.is_empty() {
                        match u32::try_from(c.byte_len()) {
                            Ok(at) => self.tail_offsets.push(at),
                            Err(_) => self.tail_offsets.clear(),
                        }
                    }
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
        let single_chunk = self.chunks.len() == 1;
        let chunk = match end {
            End::Head => self.chunks.front_mut()?,
            End::Tail => self.chunks.back_mut()?,
        };
        let (at, item) = match end {
            End::Head => {
                if single_chunk {
                    self.tail_offsets.clear();
                }
                chunk.iter().next()?
            }
            End::Tail => {
                debug_assert!(
                    self.tail_offsets.is_empty() || self.tail_offsets.len() == chunk.len(),
                    "tail offsets out of step with the back chunk"
                );
                if self.tail_offsets.is_empty()
                    && chunk.len() >= TAIL_INDEX_MIN_ITEMS
                    && u32::try_from(chunk.byte_len()).is_ok()
                {
                    // Every offset is below the byte length, so each fits too.
                    self.tail_offsets.extend(chunk.iter().map(|(at, _)| at as u32));
                }
                match self.tail_offsets.pop() {
                    Some(at) => {
                        let at = at as usize;
                        (at, chunk.item_at(at))
                    }
                    None => chunk.last()?,
                }
            }
        };
        let item = f(item);
        chunk.remove_at(at);
        if chunk.is_empty() {
            // No offsets are left: a tail pop took the last one, and a head pop from a
            // single chunk cleared them above.
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
        self.tail_offsets.clear();
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
        self.tail_offsets.clear();
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

    /// Heap bytes held: exact, from the chunks (a few per thousand elements).
    pub fn heap_size(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Packed>()
            + self.chunks.iter().map(Packed::heap_size).sum::<usize>()
            + self.tail_offsets.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// LSET (`set`) or LINSERT at position `p`, on the list and its model alike.
    fn set_or_insert(l: &mut List, model: &mut VecDeque<Vec<u8>>, p: usize, item: Vec<u8>, set: bool) {
        if set {
            assert!(l.set(p, &item));
            model[p] = item;
        } else {
            l.insert(p, &item);
            model.insert(p, item);
        }
    }

    /// Deterministic pseudo-random numbers for the model tests.
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

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
    fn tail_pops_stay_right_through_every_change_to_the_back_chunk() {
        // A queue-like mix around one to three chunks, so that head pushes and pops,
        // LSET and LINSERT often land in the back chunk while its offsets are known;
        // items of varied length make a stale offset read the wrong bytes.
        let mut l = List::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        let mut next = xorshift(0x9e3779b97f4a7c15);
        let mut tail_pops = 0;
        for step in 0..50_000u64 {
            let item = vec![b'a' + (step % 26) as u8; 1 + (next() % 20) as usize];
            let grow = model.len() < 200;
            match next() % 10 {
                0..=2 if grow || next() % 2 == 0 => {
                    l.push(End::Tail, &item);
                    model.push_back(item);
                }
                0..=5 => {
                    tail_pops += usize::from(!model.is_empty());
                    assert_eq!(l.pop(End::Tail).map(|b| b.to_vec()), model.pop_back(), "step {step}");
                }
                6 => {
                    l.push(End::Head, &item);
                    model.push_front(item);
                }
                7 => assert_eq!(l.pop(End::Head).map(|b| b.to_vec()), model.pop_front(), "step {step}"),
                _ if !model.is_empty() => {
                    // Mostly near the tail, where the offsets are.
                    let back = (next() as usize) % model.len().min(40);
                    let p = model.len() - 1 - back;
                    set_or_insert(&mut l, &mut model, p, item, next() % 2 == 0);
                }
                _ => {}
            }
            assert_eq!(l.len(), model.len());
        }
        assert!(tail_pops > 10_000);
        assert!(l.iter().eq(model.iter().map(Vec::as_slice)));
    }

    #[test]
    fn chunked_list_matches_a_deque() {
        // Pushes, pops, sets, inserts and removes across many chunks, checked against
        // VecDeque step by step (deterministic pseudo-random operations).
        let mut l = List::new();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        let mut next = xorshift(0x2545f4914f6cdd1d);
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
                        set_or_insert(&mut l, &mut model, p, item, next() % 2 == 0);
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
