//! The replication backlog: the newest bytes of the stream, so that a replica whose
//! link broke can continue from its offset (`+CONTINUE`).
//!
//! It holds the stream's chunks themselves (`bytes::Bytes`, shared with the replicas'
//! outboxes, as Redis 7's shared replication buffer), not a copy: the stream is written
//! once, into the chunk being filled (`stream.rs`), and a sealed chunk is referenced by
//! the backlog and by every replica that has yet to receive it. (A ring the stream was
//! copied into, then into each outbox, cost two copies of every record into memory
//! that was cold by the next lap.) The oldest chunks go once the newer ones cover the
//! backlog's size, so it holds its size and at most one chunk more.

use std::collections::VecDeque;

use bytes::Bytes;

/// The newest chunks of the stream, covering at least `capacity` bytes when it has
/// seen that many.
pub struct Backlog {
    chunks: VecDeque<Bytes>,
    /// Bytes in `chunks`.
    held: usize,
    capacity: usize,
}

impl Backlog {
    /// An empty backlog of `capacity` bytes (at least 1).
    pub fn new(capacity: usize) -> Backlog {
        Backlog { chunks: VecDeque::new(), held: 0, capacity: capacity.max(1) }
    }

    /// Bytes it offers for a resync: the newest `capacity` at most.
    pub fn len(&self) -> usize {
        self.held.min(self.capacity)
    }

    pub fn is_empty(&self) -> bool {
        self.held == 0
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Appends a chunk; chunks no longer needed to cover the size go.
    pub fn push(&mut self, chunk: Bytes) {
        if chunk.is_empty() {
            return;
        }
        self.held += chunk.len();
        self.chunks.push_back(chunk);
        self.trim();
    }

    fn trim(&mut self) {
        while let Some(front) = self.chunks.front() {
            if self.held - front.len() < self.capacity {
                break;
            }
            self.held -= front.len();
            self.chunks.pop_front();
        }
    }

    /// The newest `n` bytes (`n` at most [`len`](Self::len)).
    pub fn newest(&self, n: usize) -> Vec<u8> {
        let n = n.min(self.len());
        let mut skip = self.held - n;
        let mut out = Vec::with_capacity(n);
        for chunk in &self.chunks {
            if skip >= chunk.len() {
                skip -= chunk.len();
                continue;
            }
            out.extend_from_slice(&chunk[skip..]);
            skip = 0;
        }
        out
    }

    pub fn clear(&mut self) {
        self.chunks.clear();
        self.held = 0;
    }

    /// A new size: the newest bytes that fit are kept.
    pub fn resize(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        self.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(b: &mut Backlog, s: &'static [u8]) {
        b.push(Bytes::from_static(s));
    }

    #[test]
    fn the_backlog_keeps_the_newest_bytes_across_chunks() {
        let mut b = Backlog::new(8);
        assert!(b.is_empty());
        push(&mut b, b"abcde");
        assert_eq!(b.newest(5), b"abcde");
        push(&mut b, b"fghij");
        assert_eq!(b.len(), 8);
        assert_eq!(b.newest(8), b"cdefghij");
        assert_eq!(b.newest(3), b"hij");
        push(&mut b, b"0123456789xyz");
        assert_eq!(b.newest(8), b"56789xyz");
        assert_eq!(b.chunks.len(), 1, "older chunks go once newer ones cover the size");
        b.resize(4);
        assert_eq!(b.newest(4), b"9xyz");
        b.resize(16);
        push(&mut b, b"!");
        assert_eq!(b.newest(5), b"9xyz!");
        b.clear();
        assert_eq!(b.len(), 0);
    }
}
