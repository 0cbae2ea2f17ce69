//! A precise one-shot timer for the open-loop schedule (`--rate`): a Linux timerfd that the
//! thread's mio poll watches.
//!
//! Why not the poll's own timeout: epoll takes whole milliseconds (mio rounds up), so a
//! request due in 200 us could go out up to a millisecond late, and open-loop latency runs
//! from the intended send time: the tool's lateness would be reported as the server's. A
//! relative timerfd fires within tens of microseconds. mio has no timer of its own, hence
//! the few libc calls here.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// A timerfd, non-blocking, registered for readability.
pub struct Timer {
    fd: OwnedFd,
}

impl Timer {
    pub fn new(registry: &Registry, token: Token) -> io::Result<Timer> {
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(Timer { fd })
    }

    /// Fires once, `after` from now (at least 1 ns: a zero value would disarm it).
    pub fn arm(&self, after: Duration) -> io::Result<()> {
        let after = after.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: after.as_secs() as libc::time_t,
                tv_nsec: after.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: valid fd and itimerspec; the old value is not wanted.
        let rc =
            unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes an expiry, so that the (edge-triggered) poll reports the next one.
    pub fn clear(&self) {
        let mut buf = [0u8; 8];
        // SAFETY: reading 8 bytes into a local buffer; EAGAIN when it has not fired.
        unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Events, Poll};
    use std::time::Instant;

    #[test]
    fn fires_once_after_the_delay_and_rearms() {
        let mut poll = Poll::new().unwrap();
        let timer = Timer::new(poll.registry(), Token(7)).unwrap();
        let mut events = Events::with_capacity(4);
        for _ in 0..3 {
            let start = Instant::now();
            timer.arm(Duration::from_millis(2)).unwrap();
            let mut fired = false;
            while !fired {
                poll.poll(&mut events, Some(Duration::from_secs(5)))
                    .unwrap();
                fired = events.iter().any(|e| e.token() == Token(7));
                assert!(
                    start.elapsed() < Duration::from_secs(5),
                    "the timer never fired"
                );
            }
            // Never early (an upper bound would be the scheduler's, not asserted).
            assert!(start.elapsed() >= Duration::from_millis(2));
            timer.clear();
        }
    }
}
