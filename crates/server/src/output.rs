//! A connection's pending output: the replies produced and not yet taken by the kernel,
//! kept as a queue of chunks, with the replies that wait for the append-only log.
//!
//! Handlers write into [`Output::tail`] (through `Ctx::out`). Between commands the
//! request cycle calls [`Output::seal_if_full`]: a tail past `CHUNK_BYTES` joins the
//! queue of sealed chunks and a new tail begins. So the output pending for a client that
//! reads slowly (a deep pipeline, a subscriber behind its publishers) is a list of
//! chunks of about a mebibyte, never one buffer that doubles (copying all it holds) as it
//! grows: issue 26 saw a 1.6 GB doubling fail and abort the process. One reply larger
//! than a chunk still grows one buffer (handlers write a reply in one piece); the
//! backpressure in `conn.rs` bounds how many replies pile up.
//!
//! Positions are counted over the whole stream (bytes produced since the connection
//! opened), so a hold keeps its meaning while chunks before it are sent and dropped.

use std::collections::VecDeque;

/// A tail this long after a command is sealed. Large enough that an engine's send (one
/// chunk at a time) costs little beside copying the bytes; small enough that growing a
/// chunk never copies much.
pub const CHUNK_BYTES: usize = 1024 * 1024;

/// A new tail's capacity (one read's worth: most batches' replies fit).
const TAIL_START: usize = 16 * 1024;

pub struct Output {
    /// The chunk replies are written into now.
    pub tail: Vec<u8>,
    /// Full chunks ahead of `tail`, oldest first.
    sealed: VecDeque<Vec<u8>>,
    sealed_bytes: usize,
    /// Bytes of the front chunk (the oldest sealed one, else `tail`) already written.
    front_written: usize,
    /// Stream position of the front chunk's first byte.
    front_at: u64,
    /// Replies that may not leave yet because they reveal writes not yet on disk (see
    /// `aof`): (stream position where the held replies start, log offset they wait for),
    /// in output order with non-decreasing offsets. Everything from the first hold's
    /// position on waits.
    holds: VecDeque<(u64, u64)>,
    /// Output the engine took and has not sent yet (io_uring's send in flight), counted
    /// as pending.
    in_flight: usize,
}

impl Default for Output {
    fn default() -> Self {
        Output::new()
    }
}

impl Output {
    pub fn new() -> Output {
        Output {
            tail: Vec::with_capacity(TAIL_START),
            sealed: VecDeque::new(),
            sealed_bytes: 0,
            front_written: 0,
            front_at: 0,
            holds: VecDeque::new(),
            in_flight: 0,
        }
    }

    /// Stream position of the next byte written into the tail.
    pub fn end_at(&self) -> u64 {
        self.front_at + (self.sealed_bytes + self.tail.len()) as u64
    }

    /// Bytes produced and not yet handed to the kernel, held replies included.
    pub fn pending(&self) -> usize {
        self.sealed_bytes + self.tail.len() - self.front_written + self.in_flight
    }

    /// Seals the tail when it has grown past a chunk.
    #[inline]
    pub fn seal_if_full(&mut self) {
        if self.tail.len() >= CHUNK_BYTES {
            let full = std::mem::replace(&mut self.tail, Vec::with_capacity(TAIL_START));
            self.sealed_bytes += full.len();
            self.sealed.push_back(full);
        }
    }

    /// Appends bytes produced outside a command (mail: a blocked command's reply, a
    /// published message), sealing as a command's reply would be.
    pub fn append(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        self.seal_if_full();
    }

    fn front(&self) -> &[u8] {
        self.sealed.front().unwrap_or(&self.tail)
    }

    /// End of the part of the front chunk that may be written now.
    fn sendable_end(&self) -> usize {
        let front = self.front().len();
        match self.holds.front() {
            // A hold never starts before what was written (only written bytes advance
            // `front_at`, and held bytes are not written).
            Some(&(at, _)) => front.min((at - self.front_at) as usize),
            None => front,
        }
    }

    /// The bytes that may be written now, from the front chunk (the engine writes them,
    /// then says how many went with [`advance`](Self::advance)).
    pub fn sendable(&self) -> &[u8] {
        let end = self.sendable_end();
        &self.front()[self.front_written.min(end)..end]
    }

    /// True while output may be written now.
    #[inline]
    pub fn has_sendable(&self) -> bool {
        if self.sealed.is_empty() && self.holds.is_empty() {
            // The common case: one chunk, nothing held.
            return self.front_written < self.tail.len();
        }
        self.front_written < self.sendable_end()
    }

    /// True once every byte produced, held or not, has been written.
    pub fn all_written(&self) -> bool {
        self.sealed.is_empty() && self.front_written >= self.tail.len()
    }

    /// Marks `n` bytes of [`sendable`](Self::sendable) written; drops a chunk all written.
    pub fn advance(&mut self, n: usize) {
        self.front_written += n;
        if let Some(front) = self.sealed.front() {
            let len = front.len();
            if self.front_written >= len {
                self.sealed.pop_front();
                self.sealed_bytes -= len;
                self.front_written -= len;
                self.front_at += len as u64;
            }
        } else if self.front_written >= self.tail.len() {
            self.front_at += self.tail.len() as u64;
            self.front_written = 0;
            self.tail.clear();
            // Give back memory after a huge reply.
            if self.tail.capacity() > CHUNK_BYTES {
                self.tail.shrink_to(TAIL_START);
            }
        }
    }

    /// Hands what may be written now, from the front chunk, to an engine that keeps the
    /// bytes stable while the kernel sends them, in exchange for `spare` (empty).
    #[inline]
    pub fn take_sendable(&mut self, spare: &mut Vec<u8>) {
        debug_assert!(spare.is_empty() && self.front_written == 0);
        if self.sealed.is_empty() && self.holds.is_empty() {
            // The common case: the whole tail leaves.
            self.front_at += self.tail.len() as u64;
            std::mem::swap(&mut self.tail, spare);
            return;
        }
        self.take_held_or_sealed(spare);
    }

    /// [`take_sendable`](Self::take_sendable) with sealed chunks or held replies.
    fn take_held_or_sealed(&mut self, spare: &mut Vec<u8>) {
        let n = self.sendable_end();
        if n == 0 {
            return;
        }
        let front = self.sealed.front_mut().unwrap_or(&mut self.tail);
        if n == front.len() {
            std::mem::swap(front, spare);
        } else {
            spare.extend_from_slice(&front[..n]);
            front.drain(..n);
        }
        if !self.sealed.is_empty() {
            self.sealed_bytes -= n;
            if self.sealed.front().is_some_and(|c| c.is_empty()) {
                self.sealed.pop_front();
            }
        }
        self.front_at += n as u64;
    }

    /// Tells how many bytes the engine has taken and not sent yet.
    pub fn set_in_flight(&mut self, bytes: usize) {
        self.in_flight = bytes;
    }

    /// Holds the replies from stream position `at` on until the log reaches `need`.
    pub fn hold(&mut self, at: u64, need: u64) {
        self.holds.push_back((at, need));
    }

    /// Holds whatever is written next until the log reaches `need`.
    pub fn hold_from_here(&mut self, need: u64) {
        self.hold(self.end_at(), need);
    }

    pub fn has_holds(&self) -> bool {
        !self.holds.is_empty()
    }

    pub fn holds_len(&self) -> usize {
        self.holds.len()
    }

    /// Releases the holds whose offset the log has reached. Returns the offset the
    /// first remaining hold waits for, if any.
    pub fn release_holds(&mut self, reached: u64) -> Option<u64> {
        while self.holds.front().is_some_and(|h| h.1 <= reached) {
            self.holds.pop_front();
        }
        self.holds.front().map(|h| h.1)
    }

    /// The chunks' sizes, oldest first (tests).
    #[cfg(test)]
    pub fn chunk_lens(&self) -> Vec<usize> {
        self.sealed.iter().map(Vec::len).chain(std::iter::once(self.tail.len())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes everything sendable the way the epoll engine does, `step` bytes a write.
    fn drain(o: &mut Output, step: usize) -> Vec<u8> {
        let mut got = Vec::new();
        while o.has_sendable() {
            let s = o.sendable();
            let n = s.len().min(step);
            got.extend_from_slice(&s[..n]);
            o.advance(n);
        }
        got
    }

    /// Takes everything sendable the way the io_uring engine does.
    fn take_all(o: &mut Output) -> Vec<u8> {
        let mut got = Vec::new();
        loop {
            let mut spare = Vec::new();
            o.take_sendable(&mut spare);
            if spare.is_empty() {
                return got;
            }
            got.extend_from_slice(&spare);
        }
    }

    fn replies(o: &mut Output, count: usize, size: usize, first: u8) -> Vec<u8> {
        let mut all = Vec::new();
        for i in 0..count {
            let reply = vec![first.wrapping_add(i as u8); size];
            o.tail.extend_from_slice(&reply);
            o.seal_if_full();
            all.extend_from_slice(&reply);
        }
        all
    }

    #[test]
    fn output_is_sealed_in_chunks_and_written_in_order() {
        for engine in ["write", "take"] {
            let mut o = Output::new();
            let sent = replies(&mut o, 40, 100_000, 1);
            let lens = o.chunk_lens();
            assert!(lens.len() >= 3, "{lens:?}");
            assert!(lens.iter().all(|&l| l < CHUNK_BYTES + 100_000), "{lens:?}");
            assert_eq!(o.pending(), 4_000_000);
            let got = if engine == "write" { drain(&mut o, 300_000) } else { take_all(&mut o) };
            assert!(got == sent, "{engine}: bytes out of order or lost");
            assert!(o.all_written());
            assert_eq!(o.pending(), 0);
            assert_eq!(o.end_at(), 4_000_000);
        }
    }

    #[test]
    fn a_hold_stops_output_at_its_position_across_chunks() {
        for engine in ["write", "take"] {
            let mut o = Output::new();
            let before = replies(&mut o, 15, 100_000, 1);
            o.hold_from_here(7);
            let after = replies(&mut o, 15, 100_000, 50);
            let take = |o: &mut Output| if engine == "write" { drain(o, 64 * 1024) } else { take_all(o) };
            assert!(take(&mut o) == before, "{engine}: only the replies before the hold leave");
            assert!(!o.all_written());
            assert_eq!(o.release_holds(6), Some(7));
            assert!(!o.has_sendable());
            assert_eq!(o.release_holds(7), None);
            assert!(take(&mut o) == after, "{engine}");
            assert!(o.all_written());
        }
    }
}
