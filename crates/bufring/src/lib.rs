//! The io_uring provided-buffer ring that multishot receives fill: `count` buffers of
//! `size` bytes registered as one buffer group; the kernel picks a free one for each
//! receive completion and names it in the completion's flags; the caller copies the bytes
//! out and gives the buffer back. Used by basalt-server's io_uring engine and by
//! basalt-bench's (`--io-engine uring`).
//!
//! Written by hand: the `io-uring` crate exposes the registration call and the entry
//! layout but no owner of the mapped ring and buffers.
//!
//! The ring must be dropped (which unregisters the group) before this value is: keep the
//! `IoUring` in a field declared before the `BufRing`.

use std::io;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::{types, IoUring};

/// A registered provided-buffer ring (see the crate header).
pub struct BufRing {
    /// Ring of buffer descriptors, shared with the kernel (page aligned, mmap'd).
    entries: *mut types::BufRingEntry,
    entries_len: usize,
    /// The buffers themselves (mmap'd).
    data: *mut u8,
    data_len: usize,
    count: u16,
    size: usize,
    tail: u16,
}

fn map(len: usize) -> io::Result<*mut u8> {
    // SAFETY: anonymous private mapping; checked for MAP_FAILED.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p.cast())
}

impl BufRing {
    /// Maps `count` (a power of two) buffers of `size` bytes and registers them with
    /// `ring` as buffer group `group`, all given to the kernel.
    pub fn new(ring: &IoUring, group: u16, count: u16, size: usize) -> io::Result<BufRing> {
        assert!(count.is_power_of_two(), "buffer count must be a power of two");
        let entries_len = count as usize * std::mem::size_of::<types::BufRingEntry>();
        let data_len = count as usize * size;
        let entries = map(entries_len)?.cast::<types::BufRingEntry>();
        let data = match map(data_len) {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: mapped just above with this length.
                unsafe { libc::munmap(entries.cast(), entries_len) };
                return Err(e);
            }
        };
        let mut br = BufRing { entries, entries_len, data, data_len, count, size, tail: 0 };
        // SAFETY: the entries mapping is page aligned, `count` entries long, and lives
        // until Drop, which the caller orders after the ring's (crate header).
        unsafe {
            ring.submitter().register_buf_ring_with_flags(entries as u64, count, group, 0)?;
        }
        for bid in 0..count {
            br.give(bid);
        }
        br.publish();
        Ok(br)
    }

    /// Queues buffer `bid` for the kernel (visible after [`publish`](Self::publish)).
    pub fn give(&mut self, bid: u16) {
        debug_assert!(bid < self.count);
        let idx = (self.tail & (self.count - 1)) as usize;
        // SAFETY: idx < count; the entry is ours to write until publish.
        let e = unsafe { &mut *self.entries.add(idx) };
        // SAFETY: bid < count so the address lies inside the data mapping.
        e.set_addr(unsafe { self.data.add(bid as usize * self.size) } as u64);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes given buffers visible to the kernel.
    pub fn publish(&self) {
        // SAFETY: the tail field lives inside the first entry of the ring; the kernel
        // reads it with acquire semantics.
        unsafe {
            let tail = types::BufRingEntry::tail(self.entries).cast_mut();
            (*(tail as *const AtomicU16)).store(self.tail, Ordering::Release);
        }
    }

    /// The bytes the kernel wrote into buffer `bid`.
    pub fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        assert!(bid < self.count, "buffer id out of range");
        // SAFETY: bid < count and the length is capped at the buffer size (the kernel
        // never writes more); the buffer is not handed back until after use.
        unsafe { std::slice::from_raw_parts(self.data.add(bid as usize * self.size), len.min(self.size)) }
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: both regions were mapped by `new` with these lengths.
        unsafe {
            libc::munmap(self.entries.cast(), self.entries_len);
            libc::munmap(self.data.cast(), self.data_len);
        }
    }
}
