//! The list type: a double-ended queue of byte strings. Redis 7.0 reports every list as
//! "quicklist" (listpack lists arrived in 7.2), and so does Basalt. A chunked packed
//! representation, for memory, is future work (see docs/architecture.md).

use std::collections::VecDeque;

/// A Redis list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List {
    pub items: VecDeque<Box<[u8]>>,
}

/// Which end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

impl List {
    pub fn new() -> List {
        List::default()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn encoding(&self) -> &'static str {
        "quicklist"
    }

    pub fn push(&mut self, end: End, item: &[u8]) {
        match end {
            End::Head => self.items.push_front(item.into()),
            End::Tail => self.items.push_back(item.into()),
        }
    }

    pub fn pop(&mut self, end: End) -> Option<Box<[u8]>> {
        match end {
            End::Head => self.items.pop_front(),
            End::Tail => self.items.pop_back(),
        }
    }

    /// Resolves a Redis index (negative from the tail) to a position.
    pub fn index(&self, i: i64) -> Option<usize> {
        let len = self.items.len() as i64;
        let i = if i < 0 { len + i } else { i };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// Resolves a Redis start/end range (inclusive, negative from the tail) to
    /// positions; None when empty.
    pub fn range(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let len = self.items.len() as i64;
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

    pub fn heap_size(&self) -> usize {
        self.items.capacity() * 16 + self.items.iter().map(|i| i.len()).sum::<usize>()
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
}
