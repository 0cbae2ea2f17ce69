//! The log writer thread: takes what the event loops appended, writes it at the end of
//! the current incremental file, fsyncs per `appendfsync`, publishes the offsets it
//! reached, and wakes the loops whose held replies may now leave.
//!
//! Group commit falls out of the loop: while one write+fsync runs, new records gather
//! in the tail, and the next round takes them all. `always` fsyncs every round;
//! `everysec` fsyncs when a second has passed since the last fsync (also when no new
//! record arrives); `no` never fsyncs.
//!
//! Faults: a failed or short write cuts the file back to where the round started and
//! retries the whole round; a failed fsync under `always` rewrites the bytes written
//! since the last good fsync before trying again (after an fsync error the kernel may
//! have dropped those pages). Until a round succeeds the log reports
//! `aof_last_write_status:err` and write commands get `-MISCONF`; replies already
//! waiting stay held (never an OK for a write that is not on disk), and everything
//! resumes by itself when the disk does.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::prealloc::Prealloc;
use super::Aof;
use crate::config::AppendFsync;

/// How long to wait before retrying after a disk error.
const RETRY: Duration = Duration::from_millis(200);

/// The page cache's unit of reads and writes.
const PAGE: u64 = 4096;
static ZERO_PAGE: [u8; PAGE as usize] = [0; PAGE as usize];

/// The end of the zeros [`write_log_bytes`] puts after `len` bytes written at `at`.
fn padded_end(at: u64, len: usize) -> u64 {
    let end = at + len as u64;
    if len == 0 || end & (PAGE - 1) == 0 {
        return end;
    }
    let last_page = (end - 1) / PAGE * PAGE;
    if last_page >= at {
        end.div_ceil(PAGE) * PAGE
    } else {
        end
    }
}

/// Writes the log's `bytes` at `at` with buffered I/O, followed, when the file ahead is
/// preallocated (`padded`), by zeros to the end of the last page when that page begins
/// inside this write.
///
/// Why: the file ahead of the log is zero-filled with direct I/O (`prealloc.rs`), so
/// its pages are not in the page cache, and a buffered write that covers only part of
/// a page not in the cache makes the kernel read that page from the disk first, while
/// the writer waits. Measured on a 16-core machine (issue 22, 8 loops, SET 512 bytes,
/// 48 connections): `appendfsync everysec` ran at 0.25x of no persistence, the loops
/// blocked in those reads (40 MB read from the disk in a 4 s run on the 2-vCPU
/// machine). A write that covers whole pages needs no read; the page holding `at` was
/// written by the write before, so it is in the cache. The zeros lie past the log's end
/// in space that is zeros already (or trimmed at a clean stop, and skipped as
/// preallocated space after a crash: `load.rs`); the next write overwrites them. Past
/// the end of a file that is not preallocated the kernel reads nothing: no zeros.
pub(super) fn write_log_bytes(file: &File, bytes: &[u8], at: u64, padded: bool) -> std::io::Result<()> {
    let pad = if padded { (padded_end(at, bytes.len()) - at - bytes.len() as u64) as usize } else { 0 };
    let mut parts = [bytes, &ZERO_PAGE[..pad]];
    let mut off = at;
    while parts.iter().any(|p| !p.is_empty()) {
        let iov = parts.map(|p| libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        });
        // SAFETY: both iovecs point into live slices of the given lengths.
        let n = unsafe { libc::pwritev(file.as_raw_fd(), iov.as_ptr(), 2, off as libc::off_t) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "wrote nothing"));
        }
        let mut n = n as usize;
        off += n as u64;
        for p in parts.iter_mut() {
            let k = n.min(p.len());
            *p = &p[k..];
            n -= k;
        }
    }
    Ok(())
}

/// The file the writer appends to.
pub struct Target {
    pub file: File,
    pub path: std::path::PathBuf,
    /// Its name, for messages.
    pub name: String,
    /// Its length when the writer starts.
    pub len: u64,
}

/// A pending switch to a new file (see `Aof::switch_to`).
pub struct Switch {
    pub at: u64,
    pub target: Target,
}

/// Starts the writer thread.
pub fn spawn(aof: Arc<Aof>, target: Target) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("aof-writer".into())
        .spawn(move || run(&aof, target))
}

fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The file being appended to, with its preallocation and fsync state.
///
/// The preallocation (`prealloc.rs`) runs only under `appendfsync always`, where it
/// halves the fdatasync every durable write waits for. Under everysec and no there is
/// one fdatasync a second, and the zeros would double what is written to the disk (on
/// a cloud volume of 125 MB/s, half the log's rate) and the pages copied by each write
/// (the padding). A policy changed to `always` starts it at the writer's next round;
/// once started it stays for that file (the pages ahead then hold zeros not in the
/// page cache, which only padded writes keep from being read).
pub struct Current {
    target: Target,
    prealloc: Option<(std::sync::Arc<Prealloc>, std::thread::JoinHandle<()>)>,
    /// The preallocation failed to start for this file (logged once; not tried again).
    prealloc_failed: bool,
    synced_len: u64,
    /// Bytes written since the last good fsync, kept under `always` so that a failed
    /// fsync can be answered by writing them again.
    unsynced: Vec<u8>,
    last_fsync: Instant,
    /// The file opened for direct I/O, for the loops' inline commits (`commit.rs`);
    /// None where the file system does not allow O_DIRECT.
    pub(super) direct: Option<super::commit::Direct>,
    /// The bytes of the file's last, partial direct-I/O block (a commit rewrites them
    /// before its records: `commit.rs`). Empty without `direct`.
    tail_block: Vec<u8>,
}

impl Current {
    pub(super) fn open(target: Target, policy: AppendFsync) -> Current {
        let direct = super::commit::Direct::open(&target.path);
        let tail_block = match &direct {
            Some(d) => {
                let keep = (target.len % d.align as u64) as usize;
                let mut b = vec![0u8; keep];
                match target.file.read_exact_at(&mut b, target.len - keep as u64) {
                    Ok(()) => b,
                    Err(_) => Vec::new(),
                }
            }
            None => Vec::new(),
        };
        // Without the partial block's bytes a commit cannot rewrite that block.
        let direct = direct.filter(|d| tail_block.len() as u64 == target.len % d.align as u64);
        let mut current = Current {
            synced_len: target.len,
            direct,
            tail_block,
            target,
            prealloc: None,
            prealloc_failed: false,
            unsynced: Vec::new(),
            last_fsync: Instant::now(),
        };
        current.preallocate_for(policy);
        current
    }

    /// Starts the preallocation if `policy` is `always` and it is not running (see the
    /// type's header).
    pub(super) fn preallocate_for(&mut self, policy: AppendFsync) {
        if policy != AppendFsync::Always || self.prealloc.is_some() || self.prealloc_failed {
            return;
        }
        match Prealloc::start(self.target.path.clone(), self.target.len) {
            Ok(p) => self.prealloc = Some(p),
            Err(e) => {
                self.prealloc_failed = true;
                crate::log::warning(&format!("Can't start the AOF preallocation thread: {e}"));
            }
        }
    }

    fn write(&mut self, aof: &Aof, bytes: &[u8], policy: AppendFsync, stop: bool) {
        if bytes.is_empty() {
            return;
        }
        if let Some((p, _)) = &self.prealloc {
            p.claim(padded_end(self.target.len, bytes.len()));
        }
        write_round(aof, &mut self.target, self.prealloc.as_ref().map(|(p, _)| &**p), bytes, stop);
        self.note_tail_block(bytes);
        if policy == AppendFsync::Always {
            self.unsynced.extend_from_slice(bytes);
        }
    }

    /// One write attempt, for an event loop writing inline: no retry, no sleep.
    pub(super) fn write_once(&mut self, aof: &Aof, bytes: &[u8]) -> std::io::Result<()> {
        if let Some((p, _)) = &self.prealloc {
            if !p.try_claim(padded_end(self.target.len, bytes.len())) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::WouldBlock,
                    "the preallocation is filling that region",
                ));
            }
        }
        let started = aof.latency.start();
        let written = write_log_bytes(&self.target.file, bytes, self.target.len, self.prealloc.is_some());
        aof.latency.observe_since("aof-write", started);
        match written {
            Ok(()) => {
                self.target.len += bytes.len() as u64;
                self.note_tail_block(bytes);
                Ok(())
            }
            Err(e) => {
                // Cut a partial record back (the writer thread retries the bytes), and
                // the preallocated zeros with it (see `write_round`).
                if let Some((p, _)) = &self.prealloc {
                    p.cut_back(self.target.len);
                }
                let _ = self.target.file.set_len(self.target.len);
                Err(e)
            }
        }
    }

    /// The file's length (where the next write goes).
    pub(super) fn len(&self) -> u64 {
        self.target.len
    }

    /// For an inline commit: claims the file up to `end` from the preallocation (false
    /// when the helper is filling that region).
    pub(super) fn claim_inline(&self, end: u64) -> bool {
        self.prealloc.as_ref().is_none_or(|(p, _)| p.try_claim(end))
    }

    /// The bytes of the file's last partial direct-I/O block.
    pub(super) fn tail_block(&self) -> &[u8] {
        &self.tail_block
    }

    /// `bytes` now follow what the file held: keeps the partial block's bytes current.
    fn note_tail_block(&mut self, bytes: &[u8]) {
        let Some(d) = &self.direct else { return };
        let keep = (self.target.len % d.align as u64) as usize;
        if bytes.len() >= keep {
            self.tail_block.clear();
            self.tail_block.extend_from_slice(&bytes[bytes.len() - keep..]);
        } else {
            self.tail_block.extend_from_slice(bytes);
            let cut = self.tail_block.len() - keep;
            self.tail_block.drain(..cut);
        }
    }

    /// An inline commit of `bytes` was submitted at the end of the file. It makes
    /// itself durable (its linked fdatasync): the writer has nothing to fsync for it.
    pub(super) fn advance_inline(&mut self, bytes: &[u8]) {
        self.target.len += bytes.len() as u64;
        self.note_tail_block(bytes);
        self.synced_len = self.target.len;
    }

    /// Writes a failed inline commit's blocks again and syncs them, retrying like the
    /// writer's own rounds. False if it gave up (stopping and the disk keeps failing).
    pub(super) fn rewrite_region(&mut self, aof: &Aof, off: u64, bytes: &[u8], stop: bool) -> bool {
        let mut attempts = 0;
        loop {
            let result = self
                .target
                .file
                .write_all_at(bytes, off)
                .and_then(|()| self.target.file.sync_data());
            match result {
                Ok(()) => {
                    recovered(aof);
                    return true;
                }
                Err(e) => failed(aof, &format!("Error writing to the AOF file {}", self.target.name), &e),
            }
            attempts += 1;
            if stop && attempts >= 25 {
                crate::log::warning("Giving up writing the AOF at shutdown: the disk keeps failing");
                return false;
            }
            std::thread::sleep(RETRY);
        }
    }

    fn needs_sync(&self) -> bool {
        self.synced_len < self.target.len
    }

    fn sync(&mut self, aof: &Aof, stop: bool) {
        let started = Instant::now();
        sync_round(
            aof,
            &mut self.target,
            &mut self.unsynced,
            self.synced_len,
            stop,
        );
        aof.syncs.record(started.elapsed(), self.target.len.saturating_sub(self.synced_len));
        if aof.policy() == AppendFsync::Always {
            aof.latency.observe("aof-fsync-always", started.elapsed());
        }
        self.synced_len = self.target.len;
        self.last_fsync = Instant::now();
        self.unsynced.clear();
    }

    /// Ends the preallocation and cuts its zeros off, so that the file ends with its
    /// last record (as Redis writes it, and can read it).
    fn close(self) {
        if let Some((p, handle)) = self.prealloc {
            p.stop();
            let _ = handle.join();
        }
        let t = &self.target;
        if let Err(e) = t.file.set_len(t.len).and_then(|()| t.file.sync_all()) {
            crate::log::warning(&format!(
                "Can't trim the preallocated end of {}: {}",
                t.name,
                strerror(&e)
            ));
        }
    }
}

fn run(aof: &Aof, target: Target) {
    let mut chunk: Vec<u8> = Vec::with_capacity(64 * 1024);
    *aof.current.lock() = Some(Current::open(target, aof.policy()));
    loop {
        let policy = aof.policy();
        let (needs_sync, last_fsync) = aof
            .current
            .lock()
            .as_ref()
            .map_or((false, Instant::now()), |c| (c.needs_sync(), c.last_fsync));
        {
            let mut t = aof.tail.lock();
            // With inline commits the loops take the tail; the writer acts when one
            // asks (`writer_wanted`), for a switch, at shutdown, or when the policy
            // changes.
            let inline = policy == AppendFsync::Always && aof.inline_commits.load(Ordering::Acquire);
            while (t.bytes.is_empty() || inline) && !t.writer_wanted && !t.stop && aof.switch.lock().is_empty() {
                // Under `always`, bytes written but not yet synced (by rounds under
                // everysec before a CONFIG SET appendfsync always) are synced now:
                // replies wait for them, and no later write may come to trigger it.
                if policy == AppendFsync::Always && needs_sync {
                    break;
                }
                let fsync_due = policy == AppendFsync::Everysec && needs_sync;
                t.writer_idle = true;
                if fsync_due {
                    let left = Duration::from_secs(1).saturating_sub(last_fsync.elapsed());
                    if left.is_zero() {
                        break;
                    }
                    aof.wake_writer.wait_for(&mut t, left);
                } else {
                    aof.wake_writer.wait_for(&mut t, Duration::from_secs(1));
                }
                t.writer_idle = false;
                if aof.policy() != policy {
                    break;
                }
            }
            t.writer_idle = false;
        }
        // The round runs under the file's lock, which an event loop writing inline
        // (`Aof::write_inline`) only ever tries: the two never interleave.
        if policy == AppendFsync::Always && aof.inline_commits.load(Ordering::Acquire) {
            aof.writer_rounds_inline.fetch_add(1, Ordering::Relaxed);
        }
        let mut guard = aof.current.lock();
        let Some(cur) = guard.as_mut() else { return };
        // The policy now, not the round's: CONFIG SET appendfsync always nudges the
        // writer once, and under inline commits it runs no other round.
        cur.preallocate_for(aof.policy());
        let stop_now = aof.tail.lock().stop;
        // The file is the writer's alone once the loops' commits have landed (their
        // failures written again); none starts while the writer holds it.
        aof.drain_commits(cur, stop_now);
        let (end, stop, open) = {
            let mut t = aof.tail.lock();
            let open = t.take(&mut chunk);
            t.writer_wanted = false;
            (t.end, t.stop, open)
        };
        // Sealed once the tail's lock is let go (loops append meanwhile).
        super::segment::seal_open(&mut chunk, open);
        // A log rewrite switched files at offset `at`: what came before goes to the
        // old file, made durable before it is closed; the rest to the new one (or, a
        // second switch pending, what lies between the two offsets).
        let mut from = 0;
        let start = end - chunk.len() as u64;
        loop {
            let pending = aof.switch.lock().first().map(|s| s.at);
            let Some(at) = pending.filter(|&at| at <= end) else { break };
            let split = usize::try_from(at.saturating_sub(start))
                .unwrap_or(0)
                .clamp(from, chunk.len());
            cur.write(aof, &chunk[from..split], policy, stop);
            if cur.needs_sync() {
                cur.sync(aof, stop);
            }
            let sw = aof.switch.lock().remove(0);
            let old = std::mem::replace(cur, Current::open(sw.target, policy));
            old.close();
            from = split;
        }
        cur.write(aof, &chunk[from..], policy, stop);
        if !chunk.is_empty() {
            chunk.clear();
            if chunk.capacity() > 16 * 1024 * 1024 {
                chunk.shrink_to(64 * 1024);
            }
            aof.written.fetch_max(end, Ordering::AcqRel);
        }
        let fsync_now = match policy {
            AppendFsync::Always => cur.needs_sync(),
            AppendFsync::Everysec => {
                cur.needs_sync() && cur.last_fsync.elapsed() >= Duration::from_secs(1)
            }
            AppendFsync::No => false,
        } || (stop && cur.needs_sync());
        if fsync_now {
            cur.sync(aof, stop);
        }
        // Whenever the current file holds nothing unsynced, everything written is
        // durable: a file the writer left for a rewrite's new one was synced first. (Set
        // only after an fsync of the current file, this missed the round in which a
        // switch took the last bytes: replies then waited for the next write.) Nothing
        // waits for an fsync under `no`.
        if !cur.needs_sync() || policy == AppendFsync::No {
            aof.durable.fetch_max(aof.written(), Ordering::AcqRel);
        }
        let finished = stop && aof.buffered() == 0;
        if finished {
            if let Some(cur) = guard.take() {
                cur.close();
            }
        }
        drop(guard);
        wake_released(aof);
        if finished {
            return;
        }
    }
}

/// Writes `chunk` at the end of the file, retrying until it succeeds (or, when
/// stopping, until a bounded number of attempts failed).
fn write_round(aof: &Aof, target: &mut Target, prealloc: Option<&Prealloc>, chunk: &[u8], stop: bool) {
    let mut attempts = 0;
    loop {
        // Timed with DEBUG AOF-FLUSH-SLEEP's delay, which stands for a slow disk.
        let started = aof.latency.start();
        let sleep_us = aof_debug_sleep_us(aof);
        if sleep_us > 0 {
            std::thread::sleep(Duration::from_micros(sleep_us));
        }
        let written = write_log_bytes(&target.file, chunk, target.len, prealloc.is_some());
        aof.latency.observe_since("aof-write", started);
        match written {
            Ok(()) => {
                target.len += chunk.len() as u64;
                recovered(aof);
                return;
            }
            Err(e) => {
                failed(
                    aof,
                    &format!("Error writing to the AOF file {}", target.name),
                    &e,
                );
                // Cut a partial record back, so the file never holds half a round (and
                // the preallocated zeros with it: on a full disk that space is the
                // log's, and the helper must not count it as filled).
                if let Some(p) = prealloc {
                    p.cut_back(target.len);
                }
                if let Err(t) = target.file.set_len(target.len) {
                    crate::log::warning(&format!(
                        "Could not remove the partial write from the AOF file {} ({}); Basalt may refuse to load it",
                        target.name,
                        strerror(&t)
                    ));
                }
            }
        }
        attempts += 1;
        if stop && attempts >= 25 {
            crate::log::warning("Giving up writing the AOF at shutdown: the disk keeps failing");
            return;
        }
        std::thread::sleep(RETRY);
    }
}

/// fdatasync, retrying until it succeeds. After a failure the bytes written since the
/// last good fsync are written again (`unsynced`, kept under `always`).
fn sync_round(aof: &Aof, target: &mut Target, unsynced: &mut [u8], synced_len: u64, stop: bool) {
    let mut attempts = 0;
    loop {
        match target.file.sync_data() {
            Ok(()) => {
                recovered(aof);
                return;
            }
            Err(e) => {
                failed(
                    aof,
                    &format!("Error syncing the AOF file {}", target.name),
                    &e,
                );
                attempts += 1;
                if stop && attempts >= 25 {
                    crate::log::warning(
                        "Giving up syncing the AOF at shutdown: the disk keeps failing",
                    );
                    return;
                }
                std::thread::sleep(RETRY);
                if !unsynced.is_empty() {
                    if let Err(e) = target.file.write_all_at(unsynced, synced_len) {
                        failed(
                            aof,
                            &format!("Error writing to the AOF file {}", target.name),
                            &e,
                        );
                    }
                }
            }
        }
    }
}

fn aof_debug_sleep_us(aof: &Aof) -> u64 {
    aof.debug_flush_sleep_us.load(Ordering::Relaxed)
}

/// Records a write failure (INFO, MISCONF); also for `commit.rs`.
pub(super) fn failed(aof: &Aof, what: &str, e: &std::io::Error) {
    let text = strerror(e);
    if aof.write_ok.swap(false, Ordering::AcqRel) {
        crate::log::warning(&format!("{what}: {text}"));
    }
    *aof.write_error.lock() = text;
}

fn recovered(aof: &Aof) {
    if !aof.write_ok.load(Ordering::Acquire) {
        aof.write_ok.store(true, Ordering::Release);
        crate::log::warning("AOF write error looks solved, Basalt can write again.");
    }
}

/// Wakes every loop with a held connection whose wait is over.
fn wake_released(aof: &Aof) {
    wake_released_except(aof, None);
}

/// The same, leaving out loop `except` (the caller, which releases its own).
pub(super) fn wake_released_except(aof: &Aof, except: Option<usize>) {
    let reached = aof.reached();
    for (i, w) in aof.waiting.iter().enumerate() {
        let need = w.load(Ordering::Acquire);
        if need != 0 && need <= reached && Some(i) != except {
            aof.wakers.wake(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_that_starts_a_page_is_padded_to_its_end_and_one_inside_the_tail_page_is_not() {
        // Inside the page that holds the start: that page is cached already.
        assert_eq!(padded_end(100, 50), 150);
        // Ends in a page that begins inside the write: zeros to that page's end.
        assert_eq!(padded_end(4000, 200), 8192);
        assert_eq!(padded_end(0, 10), 4096);
        assert_eq!(padded_end(4096, 1), 8192);
        // Ends on a page boundary, or writes nothing: no zeros.
        assert_eq!(padded_end(4000, 96), 4096);
        assert_eq!(padded_end(4000, 0), 4000);
    }

    #[test]
    fn the_padding_is_zeros_after_the_bytes_and_the_next_write_overwrites_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("log");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("open");
        write_log_bytes(&file, &[b'a'; 4000], 0, true).expect("write");
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), 4096);
        write_log_bytes(&file, &[b'b'; 200], 4000, true).expect("write");
        let data = std::fs::read(&path).expect("read");
        assert_eq!(data.len(), 8192);
        assert!(data[..4000].iter().all(|&c| c == b'a'));
        assert!(data[4000..4200].iter().all(|&c| c == b'b'));
        assert!(data[4200..].iter().all(|&c| c == 0));
    }

    #[test]
    fn a_file_that_is_not_preallocated_gets_no_padding() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("log");
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).expect("open");
        write_log_bytes(&file, &[b'a'; 4000], 0, false).expect("write");
        write_log_bytes(&file, &[b'b'; 200], 4000, false).expect("write");
        let data = std::fs::read(&path).expect("read");
        assert_eq!(data.len(), 4200);
        assert!(data[..4000].iter().all(|&b| b == b'a') && data[4000..].iter().all(|&b| b == b'b'));
    }
}
