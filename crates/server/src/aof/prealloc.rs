//! Zero-filling the log file ahead of the writer, under `appendfsync always` only (the
//! writer's `Current` starts it; under everysec and no it would double the bytes sent to
//! the disk for one fdatasync a second).
//!
//! Why: on ext4 (and most journaling file systems) an fdatasync after a write that
//! grows the file must also commit the new size to the journal; after a write over
//! blocks that already hold data it need not. Measured on this project's machine under
//! continuous load: 500-830 us per fdatasync when appending, 210-260 us when
//! overwriting zero-filled space (fallocate's unwritten extents do not help: converting
//! them is a metadata change too). Group commit under `appendfsync always` does one
//! fdatasync per round, so this halves the time a durable write waits.
//!
//! How: a helper thread keeps the file zero-filled (real zero bytes, written with
//! O_DIRECT where the file system allows it, so they never sit dirty in the page cache
//! for the writer's fdatasync to flush) and made durable at least `LOW_WATER` bytes past
//! the writer's position. The file's logical end is where the writer stopped: a clean
//! stop truncates the zeros away (so Redis can read the file); after a crash the loader
//! skips NUL bytes between commands and cuts them off (`load.rs`).
//!
//! The disk's last space belongs to the log itself, never to zeros ahead of it: a step
//! is filled only while the file system keeps a reserve free after it (5% of its size,
//! at least two steps), a step that fails gives back what it took, and a writer that
//! cut the file back after a failed write (`writer.rs`) says so ([`Prealloc::cut_back`]).
//! So on a nearly full disk the log grows without preallocation, and when space comes
//! back after a disk-full error the writer, not the helper, gets it (issue 26: the
//! helper's retries took the freed space while the writer kept failing).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// Bytes zero-filled per step, and the room kept ahead of the writer.
const STEP: u64 = 16 * 1024 * 1024;
const LOW_WATER: u64 = 8 * 1024 * 1024;
const MARGIN: u64 = 1024 * 1024;
/// Size (and alignment) of each zero write.
const BLOCK: usize = 1024 * 1024;
const ALIGN: usize = 4096;

/// State shared by the writer and the helper.
pub struct Prealloc {
    /// The file is zero-filled and durable up to here.
    alloc_end: AtomicU64,
    /// The end of what the writer has written or is about to write (claimed before
    /// each write, so the helper never zero-fills over it).
    writer_at: AtomicU64,
    /// Start of the region the helper is filling now (u64::MAX: none).
    filling: AtomicU64,
    stop: AtomicBool,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Prealloc {
    /// Starts the helper for the file at `path`, whose current length is `len`.
    pub fn start(
        path: PathBuf,
        len: u64,
    ) -> std::io::Result<(Arc<Prealloc>, std::thread::JoinHandle<()>)> {
        let p = Arc::new(Prealloc {
            alloc_end: AtomicU64::new(len),
            writer_at: AtomicU64::new(len),
            filling: AtomicU64::new(u64::MAX),
            stop: AtomicBool::new(false),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        });
        let p2 = p.clone();
        let handle = std::thread::Builder::new()
            .name("aof-prealloc".into())
            .spawn(move || p2.run(&path))?;
        Ok((p, handle))
    }

    /// The writer is about to write up to `end`: claims it, waits if the helper is
    /// filling that very region (only when the writer outran it by a whole step), and
    /// wakes the helper when room ahead runs low.
    pub fn claim(&self, end: u64) {
        // Sequentially consistent with the helper's `filling` / `writer_at` pair: at
        // least one of the two sees the other's claim.
        self.writer_at.store(end, Ordering::SeqCst);
        let mut g = self.lock.lock();
        while end > self.filling.load(Ordering::SeqCst) {
            self.wake.wait_for(&mut g, Duration::from_millis(10));
        }
        if self.alloc_end.load(Ordering::Acquire) < end + LOW_WATER {
            self.wake.notify_all();
        }
    }

    /// `claim` for an event loop: never waits; false when the helper is filling that
    /// region (the writer thread then writes it).
    pub fn try_claim(&self, end: u64) -> bool {
        self.writer_at.store(end, Ordering::SeqCst);
        if end > self.filling.load(Ordering::SeqCst) {
            return false;
        }
        if self.alloc_end.load(Ordering::Acquire) < end + LOW_WATER {
            if let Some(_g) = self.lock.try_lock() {
                self.wake.notify_all();
            }
        }
        true
    }

    /// The writer cut the file back to `len` (its logical end) after a failed write:
    /// the zeros past it are gone.
    pub fn cut_back(&self, len: u64) {
        self.alloc_end.fetch_min(len, Ordering::AcqRel);
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _g = self.lock.lock();
        self.wake.notify_all();
    }

    fn run(&self, path: &PathBuf) {
        // O_DIRECT keeps the zeros out of the page cache; a file system without it
        // (tmpfs) gets buffered writes.
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .or_else(|_| OpenOptions::new().write(true).open(path));
        let Ok(file) = file else {
            crate::log::warning(&format!(
                "Can't open {} to preallocate it; the AOF grows without",
                path.display()
            ));
            return;
        };
        let Some(zeros) = AlignedZeros::new() else {
            return;
        };
        // A failure is logged once until a step succeeds again.
        let mut warned = false;
        loop {
            {
                let mut g = self.lock.lock();
                while !self.stop.load(Ordering::Acquire)
                    && self.alloc_end.load(Ordering::Acquire)
                        >= self.writer_at.load(Ordering::Acquire) + LOW_WATER
                {
                    self.wake.wait_for(&mut g, Duration::from_secs(1));
                }
            }
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            // A margin past the writer, so that it never has to wait for a fill that
            // starts right where it writes next.
            let at = (self.writer_at.load(Ordering::SeqCst) + MARGIN)
                .max(self.alloc_end.load(Ordering::Acquire));
            let from = at.div_ceil(ALIGN as u64) * ALIGN as u64;
            self.filling.store(from, Ordering::SeqCst);
            if self.writer_at.load(Ordering::SeqCst) > from {
                // The writer moved into the region meanwhile: start further on.
                self.filling.store(u64::MAX, Ordering::SeqCst);
                continue;
            }
            // Only with room to spare: the last free space is the log's.
            let result = if room_for_a_step(&file) {
                fill(&file, &zeros, from, STEP, &self.stop)
            } else {
                Ok(false)
            };
            match &result {
                Ok(true) => self.alloc_end.store(from + STEP, Ordering::Release),
                // Give back what a failed step took: the writer does not write past
                // `from` while `filling` says so.
                Err(_) => {
                    let _ = file.set_len(from.max(self.writer_at.load(Ordering::SeqCst)));
                }
                Ok(false) => {}
            }
            self.filling.store(u64::MAX, Ordering::SeqCst);
            {
                let _g = self.lock.lock();
                self.wake.notify_all();
            }
            match result {
                Ok(true) => warned = false,
                Ok(false) if self.stop.load(Ordering::Acquire) => return,
                Ok(false) => {
                    // Too little room: the writer appends without preallocation
                    // meanwhile; look again later.
                    std::thread::sleep(Duration::from_secs(1));
                }
                Err(e) => {
                    if !std::mem::replace(&mut warned, true) {
                        crate::log::warning(&format!(
                            "Preallocating the AOF {} failed: {e}; the log grows without it until there is room",
                            path.display()
                        ));
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
        }
    }
}

/// Whether the file system of `file` keeps at least its reserve free after one more
/// step: 5% of its size, and at least two steps. True when it cannot tell.
fn room_for_a_step(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: fstatvfs fills the zeroed struct we own, on a descriptor we hold open.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatvfs(file.as_raw_fd(), &mut st) } != 0 {
        return true;
    }
    let unit = st.f_frsize as u64;
    let free = (st.f_bavail as u64).saturating_mul(unit);
    let total = (st.f_blocks as u64).saturating_mul(unit);
    let reserve = (total / 20).max(2 * STEP);
    free >= STEP + reserve
}

/// Writes `len` zero bytes at `from` and makes them durable. False if stopped.
fn fill(
    file: &File,
    zeros: &AlignedZeros,
    from: u64,
    len: u64,
    stop: &AtomicBool,
) -> std::io::Result<bool> {
    let mut off = 0;
    while off < len {
        if stop.load(Ordering::Acquire) {
            return Ok(false);
        }
        file.write_all_at(zeros.as_slice(), from + off)?;
        off += BLOCK as u64;
    }
    file.sync_data()?;
    Ok(true)
}

/// A block of zeros aligned for O_DIRECT.
struct AlignedZeros {
    ptr: *mut u8,
}

// SAFETY: the buffer is only read after creation.
unsafe impl Send for AlignedZeros {}

impl AlignedZeros {
    fn new() -> Option<AlignedZeros> {
        let layout = std::alloc::Layout::from_size_align(BLOCK, ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedZeros { ptr })
    }

    fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr points to BLOCK initialized (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr, BLOCK) }
    }
}

impl Drop for AlignedZeros {
    fn drop(&mut self) {
        if let Ok(layout) = std::alloc::Layout::from_size_align(BLOCK, ALIGN) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { std::alloc::dealloc(self.ptr, layout) };
        }
    }
}
