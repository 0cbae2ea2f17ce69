//! A data set being loaded, at start (the append-only log or `dump.rdb`) or by a
//! replica from its master's snapshot: how far the load is, for INFO's `loading_*`
//! fields, and the reader that counts it. (The admission bit that answers `-LOADING`
//! meanwhile is the role's, `replication::role::LOADING`, in the one word the request
//! path reads.)

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// The load under way: its start (unix ms; 0 when none runs), the bytes to load (0 when
/// not known: a disk-less `$EOF:` transfer loaded as it arrives) and the bytes loaded;
/// and Redis's `key-load-delay`, a pause after each key a snapshot's load reads (for
/// tests, as in Redis: they make a load last long enough to watch).
#[derive(Default)]
pub struct LoadProgress {
    started_ms: AtomicI64,
    total: AtomicI64,
    read: AtomicI64,
    /// The RDB's `used-mem` AUX field: the memory of the server that wrote it (INFO's
    /// `loading_rdb_used_mem`; 0 until read, and for the log's text).
    rdb_used_mem: AtomicI64,
    key_delay_us: AtomicI64,
    /// A shutdown stops this load (the one at start: nothing is lost by it, as the
    /// files stay as they were; a replica's is let finish, see `begin`).
    stoppable: AtomicBool,
}

/// What INFO shows of a load.
#[derive(Clone, Copy, Debug)]
pub struct LoadFigures {
    pub started_ms: i64,
    pub total: i64,
    pub read: i64,
    pub rdb_used_mem: i64,
}

impl LoadProgress {
    /// A load begins at `now_ms`, of `total` bytes (0: not known yet); `stoppable`: a
    /// shutdown may stop it (not a replica's, whose data set half loaded is its only
    /// copy: an exit during it must not leave a half one for the final save to write).
    pub fn begin(&self, now_ms: i64, total: u64, stoppable: bool) {
        self.stoppable.store(stoppable, Ordering::Relaxed);
        self.total.store(i64::try_from(total).unwrap_or(i64::MAX), Ordering::Relaxed);
        self.read.store(0, Ordering::Relaxed);
        self.rdb_used_mem.store(0, Ordering::Relaxed);
        self.started_ms.store(now_ms.max(1), Ordering::Relaxed);
    }

    /// The snapshot being loaded said what memory its writer used (AUX `used-mem`).
    pub fn set_rdb_used_mem(&self, bytes: i64) {
        self.rdb_used_mem.store(bytes.max(0), Ordering::Relaxed);
    }

    /// The size, once the loader knows it (the log's files).
    pub fn set_total(&self, total: u64) {
        self.total.store(i64::try_from(total).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    pub fn add(&self, n: usize) {
        self.read.fetch_add(i64::try_from(n).unwrap_or(i64::MAX), Ordering::Relaxed);
    }

    pub fn end(&self) {
        self.started_ms.store(0, Ordering::Relaxed);
        self.stoppable.store(false, Ordering::Relaxed);
    }

    /// Whether a shutdown stops the load under way.
    pub fn stoppable(&self) -> bool {
        self.stoppable.load(Ordering::Relaxed)
    }

    /// `key-load-delay`: microseconds after each key; a negative -N, one microsecond
    /// after one key in N (Redis's debugDelay).
    pub fn set_key_delay(&self, us: i64) {
        self.key_delay_us.store(us, Ordering::Relaxed);
    }

    /// The pause after a key a snapshot's load read (none unless `key-load-delay` is set).
    #[inline]
    pub fn after_key(&self) {
        debug_delay(self.key_delay_us.load(Ordering::Relaxed));
    }

    /// The load under way; None when none runs.
    pub fn figures(&self) -> Option<LoadFigures> {
        let started_ms = self.started_ms.load(Ordering::Relaxed);
        (started_ms != 0).then(|| LoadFigures {
            started_ms,
            total: self.total.load(Ordering::Relaxed).max(0),
            read: self.read.load(Ordering::Relaxed).max(0),
            rdb_used_mem: self.rdb_used_mem.load(Ordering::Relaxed),
        })
    }
}

/// Redis's debugDelay, the pause of its per-key test hooks (`key-load-delay`,
/// `rdb-key-save-delay`): `us` microseconds; a negative -N, one microsecond with a
/// chance of one in N (a pause shorter than a microsecond, on average); 0, none.
#[inline]
pub fn debug_delay(us: i64) {
    if us == 0 {
        return;
    }
    let us = if us > 0 { us.unsigned_abs() } else { u64::from(fastrand::u64(..us.unsigned_abs()) == 0) };
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// A load's reader: its bytes count as loaded, and it fails once `stop` is set (a
/// shutdown asked for during the load: Redis too stops a load for SIGTERM or SHUTDOWN,
/// and exits without saving half a data set).
pub struct Counted<'a, R> {
    pub inner: R,
    pub progress: &'a LoadProgress,
    pub stop: Option<&'a AtomicBool>,
}

/// The error a [`Counted`] reader fails with once its `stop` is set.
pub const STOPPED: &str = "the load was stopped by a shutdown";

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(std::io::Error::other(STOPPED));
        }
        let n = self.inner.read(out)?;
        self.progress.add(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_it_reads_and_stops_when_told() {
        let progress = LoadProgress::default();
        assert!(progress.figures().is_none());
        progress.begin(1_000, 10, true);
        let stop = AtomicBool::new(false);
        let mut r = Counted { inner: &b"0123456789"[..], progress: &progress, stop: Some(&stop) };
        let mut buf = [0u8; 4];
        assert_eq!(r.read(&mut buf).unwrap(), 4);
        let f = progress.figures().unwrap();
        assert_eq!((f.started_ms, f.total, f.read), (1_000, 10, 4));
        stop.store(true, Ordering::Relaxed);
        assert_eq!(r.read(&mut buf).unwrap_err().to_string(), STOPPED);
        progress.end();
        assert!(progress.figures().is_none());
    }
}
