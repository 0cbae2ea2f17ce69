//! Waking an event loop from another thread: each loop's waker (mio's, or the eventfd
//! the io_uring loop polls), and the set of them by loop index, held by the loops'
//! shared state and by the append-only log (whose writer and commits wake the loops
//! whose replies they released).

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

use parking_lot::RwLock;

/// Wakes one event loop (CLIENT KILL, mail, released replies, shutdown).
pub enum LoopWaker {
    Mio(mio::Waker),
    /// An eventfd the io_uring loop polls.
    EventFd(OwnedFd),
}

impl LoopWaker {
    pub fn wake(&self) -> std::io::Result<()> {
        match self {
            LoopWaker::Mio(w) => w.wake(),
            LoopWaker::EventFd(fd) => {
                let one: u64 = 1;
                // SAFETY: writes 8 bytes from a valid u64 to an eventfd we own.
                let n = unsafe {
                    libc::write(fd.as_raw_fd(), (&one as *const u64).cast(), std::mem::size_of::<u64>())
                };
                if n < 0 {
                    let e = std::io::Error::last_os_error();
                    // EAGAIN: the counter is saturated, the loop will wake anyway.
                    if e.kind() != std::io::ErrorKind::WouldBlock {
                        return Err(e);
                    }
                }
                Ok(())
            }
        }
    }
}

/// Every loop's waker, by loop index (installed once the loops exist).
#[derive(Default)]
pub struct Wakers(RwLock<Vec<Arc<LoopWaker>>>);

impl Wakers {
    pub fn install(&self, wakers: Vec<Arc<LoopWaker>>) {
        *self.0.write() = wakers;
    }

    /// Wakes loop `index` (none before the loops exist).
    pub fn wake(&self, index: usize) {
        if let Some(w) = self.0.read().get(index) {
            let _ = w.wake();
        }
    }

    pub fn wake_all(&self) {
        for w in self.0.read().iter() {
            let _ = w.wake();
        }
    }
}
