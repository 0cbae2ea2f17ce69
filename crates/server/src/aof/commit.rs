//! Durable commits issued by the event loops themselves (`appendfsync always`, io_uring
//! engine): Redis's order of work (write the batch's records, make them durable, then
//! reply) without a thread hop, and with a bound on how long a slow disk can hold a loop.
//!
//! Why: the writer thread's group commit (`writer.rs`) costs two thread switches per
//! round on a machine whose cores the clients also need, and while a round runs the loop
//! keeps waking for each new request, so rounds stay small. Measured on this project's
//! 2-vCPU machine (redis-benchmark SET -c 50 -d 128): the writer thread gave 0.55-0.7x
//! of the throughput without persistence; a loop that writes and syncs its own batch
//! gave 1.0x, because while it waits the next batch gathers.
//!
//! How: the loop that ends a batch takes the log's tail and writes it with one
//! `O_DIRECT` write linked to an `fdatasync` (`IORING_OP_FSYNC`) on a small ring of its
//! own (the file is zero-filled ahead by `prealloc.rs`, so no metadata needs a journal
//! commit: the fdatasync is the device's cache flush). It waits for the pair at most
//! `aof-commit-wait-us`: a fast disk completes within it and the loop goes on exactly
//! as Redis does after its fsync; a slow disk leaves the commit in flight, the loop
//! goes on serving (reads that need no durable state flow), and the completion wakes it
//! through its waker.
//!
//! Pipeline: up to [`MAX_IN_FLIGHT`] commits are in flight, their writes one at a time
//! and their fdatasyncs overlapping: the next commit starts (with everything gathered
//! meanwhile) as soon as the write before it completed. So the file is always a prefix
//! of the log plus at most one partly written commit, the torn tail that `load.rs` cuts
//! back, and a commit's fdatasync, which begins after its own write, covers every
//! earlier commit's blocks. With one commit at a time (until 2026-11-26) a 16-core
//! machine's `always` at 200 connections ran at 0.19x of no persistence: 155 us a
//! commit under load, ~60 SETs each, and nothing else moving meanwhile.
//!
//! Why not one `RWF_DSYNC` write (what this path did until 2026-11-26): the kernel
//! finishes an asynchronous direct write's sync on a worker bound to the CPU that took
//! the disk's interrupt. While that CPU was busy (measured with a third CPU-bound
//! process beside the client and the server on this 2-vCPU machine), each commit
//! waited for the scheduler to give the worker a turn there, while the loop waited
//! idle for the commit: 1.4-3.8 ms a commit instead of ~0.1 ms, and 6,500-23,000 SET/s
//! against Redis's 50,000-75,000 (redis-benchmark SET -c 50 -d 128). io_uring runs the
//! fdatasync on its own worker thread of this process, which can take whichever CPU
//! has room: 100-300 us a commit in the same runs, no collapse, and the same throughput
//! as before without the busy process (docs/benchmarks.md, 2026-11-26).
//!
//! Blocks: a direct write covers whole blocks, so a commit starts at the block that
//! holds the end of the file and rewrites that block's bytes (kept in memory,
//! `Current::tail_block`) before the new records; the rest of its last block is zeros,
//! which the next commit overwrites (and which the loader treats as preallocated space).
//! The file holds exactly the log's bytes, as Redis writes them.
//!
//! Torn commits: a commit of several blocks torn by a power loss so that a middle block
//! did not land while a later one did leaves zeros inside a record that may still
//! parse (the writer thread's buffered path has the same exposure, page by page). Each
//! commit is one segment of the log with its checksum line (`segment.rs`), and the
//! loader ends the log at the first segment whose checksum fails over a zero-filled
//! block (`load.rs`).
//!
//! Faults: a failed or short commit stops inline commits; the writer thread, which owns
//! the file, writes that commit's blocks again (buffered write + fdatasync, retried like
//! its own rounds), and everything resumes when it succeeds. Every case this path does
//! not take (a file system without O_DIRECT, a rewrite's file switch, the preallocation
//! filling the region, shutdown) is left to the writer thread. DEBUG AOF-FLUSH-SLEEP
//! delays a commit with a timeout linked before its write, so that tests of a slow disk
//! run this path. A failed write posts its own completion (its success, and the
//! cancelled fdatasync's, post none), which then ends the commit (`net/uring.rs`).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use super::Aof;

/// The file opened for direct I/O, with the alignment it requires.
pub struct Direct {
    pub file: File,
    /// Alignment of offsets, lengths and memory (a power of two).
    pub align: usize,
}

impl Direct {
    /// Opens `path` for O_DIRECT writes; None where the file system does not allow it.
    pub fn open(path: &std::path::Path) -> Option<Direct> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .ok()?;
        let align = dio_align(&file).unwrap_or(4096);
        Some(Direct { file, align })
    }
}

/// The direct-I/O alignment statx reports (offset and memory), at least 512 bytes.
fn dio_align(file: &File) -> Option<usize> {
    // SAFETY: statx fills the zeroed struct; the path is empty with AT_EMPTY_PATH.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut st,
        )
    };
    if rc != 0 || st.stx_mask & libc::STATX_DIOALIGN == 0 || st.stx_dio_offset_align == 0 {
        return None;
    }
    let a = (st.stx_dio_offset_align.max(st.stx_dio_mem_align) as usize).max(512);
    a.is_power_of_two().then_some(a)
}

/// A heap buffer aligned for direct I/O.
pub struct AlignedBuf {
    ptr: *mut u8,
    cap: usize,
    align: usize,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn new(cap: usize, align: usize) -> Option<AlignedBuf> {
        let layout = std::alloc::Layout::from_size_align(cap, align).ok()?;
        // SAFETY: cap is non-zero (a multiple of align >= 512).
        let ptr = unsafe { std::alloc::alloc(layout) };
        (!ptr.is_null()).then_some(AlignedBuf {
            ptr,
            cap,
            align,
            len: 0,
        })
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the first len bytes were written by `fill`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Holds `a` then `b`, then zeros to a multiple of the alignment.
    fn fill(&mut self, a: &[u8], b: &[u8]) {
        let n = a.len() + b.len();
        let padded = n.div_ceil(self.align) * self.align;
        assert!(padded <= self.cap, "commit buffer too small");
        // SAFETY: padded <= cap; the slices given are not ours, so nothing overlaps.
        let out = unsafe { std::slice::from_raw_parts_mut(self.ptr, padded) };
        out[..a.len()].copy_from_slice(a);
        out[a.len()..n].copy_from_slice(b);
        out[n..].fill(0);
        self.len = padded;
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if let Ok(layout) = std::alloc::Layout::from_size_align(self.cap, self.align) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { std::alloc::dealloc(self.ptr, layout) };
        }
    }
}

/// Commits in flight at most. Their writes go one at a time, their fdatasyncs overlap:
/// with a write of a few tens of us and a flush of the device's cache of about the
/// same, four keep the write slot busy while flushes run.
pub const MAX_IN_FLIGHT: usize = 4;

/// A commit in flight (or failed, waiting for the writer thread).
struct Commit {
    token: u64,
    /// Log offset of the end of its records.
    log_end: u64,
    /// Where its blocks go in the file.
    file_off: u64,
    buf: AlignedBuf,
    /// Its write completed (its fdatasync may still run): the next commit may start.
    written: bool,
    failed: bool,
    /// When it was taken, and how many bytes of records it holds (`SyncStats`).
    started: std::time::Instant,
    records: u64,
}

/// The event loops' commits in flight, oldest first.
#[derive(Default)]
pub struct Commits {
    in_flight: std::collections::VecDeque<Commit>,
    /// Buffers of finished commits, for reuse.
    spare: Vec<AlignedBuf>,
    next_token: u64,
    /// Counts every write completed and every commit ended, for loops that wait for
    /// another loop's commit to move (`Aof::wait_commit_progress`).
    progress: u64,
    /// The most commits in flight at once since start (INFO).
    pub peak: usize,
}

impl Commits {
    /// A new commit may start: no write in flight, none failed, room in the pipeline.
    fn can_start(&self) -> bool {
        self.in_flight.len() < MAX_IN_FLIGHT && self.in_flight.iter().all(|c| c.written && !c.failed)
    }

    /// Commits in flight now (INFO).
    fn len(&self) -> usize {
        self.in_flight.len()
    }

    /// Keeps a finished commit's buffer for the next (at most one per commit in flight).
    fn recycle(&mut self, buf: AlignedBuf) {
        if self.spare.len() < MAX_IN_FLIGHT {
            self.spare.push(buf);
        }
    }

    fn find(&mut self, token: u64) -> Option<&mut Commit> {
        self.in_flight.iter_mut().find(|c| c.token == token)
    }
}

/// What a loop submits: one write of `len` bytes at `ptr` to `fd` at `offset`. The
/// buffer stays valid until the commit is finished (`Aof::finish_commit`), or the
/// writer thread took it over (`Aof::drain_commits`).
pub struct CommitIo {
    pub token: u64,
    pub fd: i32,
    pub ptr: *const u8,
    pub len: u32,
    pub offset: u64,
}

impl Aof {
    /// For an io_uring loop at the end of its batch: takes the log's tail and returns
    /// the write that makes it durable, or None (nothing to write, a commit in flight,
    /// or a case left to the writer thread, which is then woken).
    pub fn start_commit(&self) -> Option<CommitIo> {
        if !self.commits_inline() {
            return None;
        }
        if self.tail.lock().bytes.is_empty() || !self.commits.lock().can_start() {
            return None;
        }
        let leave_to_writer = || {
            self.want_writer();
            None
        };
        if !self.write_ok.load(Ordering::Acquire) || !self.switch.lock().is_empty()
        {
            return leave_to_writer();
        }
        let Some(mut cur_guard) = self.current.try_lock() else {
            return leave_to_writer();
        };
        let cur = cur_guard.as_mut()?;
        let Some(direct) = cur.direct.as_ref() else {
            return leave_to_writer();
        };
        let (fd, align) = (direct.file.as_raw_fd(), direct.align);
        let mut commits = self.commits.lock();
        if !commits.can_start() {
            return None;
        }
        let mut t = self.tail.lock();
        if t.bytes.is_empty() {
            return None;
        }
        // A rewrite's switch set since the check above (see `Aof::write_inline`): the
        // tail may hold records for the new file.
        if !self.switch.lock().is_empty() {
            drop(t);
            return leave_to_writer();
        }
        t.seal();
        let prefix = cur.tail_block();
        let file_off = cur.len() - prefix.len() as u64;
        let n = prefix.len() + t.bytes.len();
        let padded = n.div_ceil(align) * align;
        let Ok(len32) = u32::try_from(padded) else {
            drop(t);
            return leave_to_writer();
        };
        if !cur.claim_inline(file_off + padded as u64) {
            drop(t);
            return leave_to_writer();
        }
        let mut buf = match commits.spare.pop() {
            Some(b) if b.cap >= padded && b.align == align => b,
            _ => match AlignedBuf::new(padded.max(64 * 1024).div_ceil(align) * align, align) {
                Some(b) => b,
                None => {
                    drop(t);
                    return leave_to_writer();
                }
            },
        };
        buf.fill(prefix, &t.bytes);
        let records = t.bytes.len() as u64;
        cur.advance_inline(&t.bytes);
        let log_end = t.end;
        t.bytes.clear();
        if t.bytes.capacity() > 16 * 1024 * 1024 {
            t.bytes.shrink_to(64 * 1024);
        }
        drop(t);
        let token = commits.next_token;
        commits.next_token += 1;
        let ptr = buf.ptr as *const u8;
        commits.in_flight.push_back(Commit {
            token,
            log_end,
            file_off,
            buf,
            written: false,
            failed: false,
            started: std::time::Instant::now(),
            records,
        });
        commits.peak = commits.peak.max(commits.in_flight.len());
        Some(CommitIo {
            token,
            fd,
            ptr,
            len: len32,
            offset: file_off,
        })
    }

    /// The write of a loop's commit completed with `res` (bytes written or -errno).
    /// A whole write lets the next commit start while this one's fdatasync runs; a
    /// failed or short one fails the commit.
    pub fn commit_written(&self, owner: usize, token: u64, res: i32) {
        let mut commits = self.commits.lock();
        let Some(c) = commits.find(token).filter(|c| !c.failed) else {
            return;
        };
        if res >= 0 && res as usize == c.buf.len {
            c.written = true;
            commits.progress += 1;
            drop(commits);
            self.commit_done.notify_all();
        } else {
            drop(commits);
            self.finish_commit(owner, token, res);
        }
    }

    /// A loop's commit completed with `res` (its length when its write and fdatasync
    /// both succeeded, else -errno or the write's short count): the log is durable up to
    /// its end, and the other loops whose held replies that releases are woken. A
    /// failure is handed to the writer thread.
    ///
    /// Why a later commit may publish its end while an earlier one's fdatasync still
    /// runs: the later commit's write started only after the earlier one's write had
    /// completed (`Commits::can_start`), and its fdatasync after its own write, so that
    /// fdatasync covers the earlier blocks too. Behind a failed commit nothing is
    /// published: the later one is marked failed as well, and the writer thread writes
    /// both again, in order.
    pub fn finish_commit(&self, owner: usize, token: u64, res: i32) {
        let reached = {
            let mut commits = self.commits.lock();
            let Some(pos) = commits.in_flight.iter().position(|c| c.token == token && !c.failed) else {
                return;
            };
            let len = commits.in_flight[pos].buf.len;
            let earlier_failed = commits.in_flight.iter().take(pos).any(|c| c.failed);
            commits.progress += 1;
            if res >= 0 && res as usize == len && !earlier_failed {
                let c = commits.in_flight.remove(pos).expect("in flight");
                self.syncs.record(c.started.elapsed(), c.records);
                self.latency.observe("aof-fsync-always", c.started.elapsed());
                commits.recycle(c.buf);
                self.commit_done.notify_all();
                Some(c.log_end)
            } else if !earlier_failed && self.durable() >= commits.in_flight[pos].log_end {
                // Its fdatasync failed after a later commit's succeeded: that one began
                // after this commit's write had completed, so these blocks are durable
                // already. Writing them again would put this commit's copy of the block
                // it shares with the later commit over the later records.
                let c = commits.in_flight.remove(pos).expect("in flight");
                crate::log::warning(&format!(
                    "An fdatasync of the AOF failed ({}) after a later one succeeded; nothing to write again",
                    if res < 0 { std::io::Error::from_raw_os_error(-res).to_string() } else { "short write".into() }
                ));
                commits.recycle(c.buf);
                self.commit_done.notify_all();
                return;
            } else {
                commits.in_flight[pos].failed = true;
                if !earlier_failed {
                    let e = if res < 0 {
                        std::io::Error::from_raw_os_error(-res)
                    } else {
                        std::io::Error::new(std::io::ErrorKind::WriteZero, "short write")
                    };
                    super::writer::failed(self, "Error writing to the AOF file", &e);
                }
                self.commit_done.notify_all();
                None
            }
        };
        match reached {
            Some(end) => {
                self.publish_durable(end);
                super::writer::wake_released_except(self, Some(owner));
            }
            None => self.want_writer(),
        }
    }

    /// The loops make the log durable themselves: io_uring loops, `appendfsync always`.
    pub fn commits_inline(&self) -> bool {
        self.inline_commits.load(Ordering::Acquire)
            && self.policy() == crate::config::AppendFsync::Always
    }

    /// For a loop with records to commit while other loops' commits are in flight:
    /// waits at most `timeout` for one of them to move (its write completed, so that a
    /// new commit may start, or it ended), so that this loop's batch goes out in the
    /// next commit as soon as possible (and its next requests gather meanwhile, as they
    /// do in a loop that waits for its own commit). False if nothing moved, or nothing
    /// is in flight that could (a failed commit waits for the writer thread).
    pub fn wait_commit_progress(&self, timeout: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut commits = self.commits.lock();
        let seen = commits.progress;
        while commits.progress == seen {
            if commits.in_flight.iter().all(|c| c.failed)
                || self.commit_done.wait_until(&mut commits, deadline).timed_out()
            {
                break;
            }
        }
        commits.progress != seen
    }

    /// The loops' commits in flight now, and the most there were at once (INFO).
    pub fn commit_pipeline(&self) -> (usize, usize) {
        let c = self.commits.lock();
        (c.len(), c.peak)
    }

    /// A commit is in flight (or failed and waiting for the writer thread).
    pub fn commit_in_flight(&self) -> bool {
        !self.commits.lock().in_flight.is_empty()
    }

    /// The log is written and durable up to `end` (monotonic).
    pub(super) fn publish_durable(&self, end: u64) {
        self.written.fetch_max(end, Ordering::AcqRel);
        self.durable.fetch_max(end, Ordering::AcqRel);
    }

    /// The writer thread must act (a case inline commits leave to it).
    fn want_writer(&self) {
        let mut t = self.tail.lock();
        t.writer_wanted = true;
        drop(t);
        self.wake_writer.notify_one();
    }

    /// For the writer thread, holding the file (so no new commit starts): waits for
    /// the loops' commits in flight, and writes the failed ones again, in order, so that
    /// the file is the writer's alone (at shutdown it gives up on a disk that keeps
    /// failing).
    pub(super) fn drain_commits(&self, cur: &mut super::writer::Current, stop: bool) {
        let started = std::time::Instant::now();
        loop {
            let mut commits = self.commits.lock();
            if commits.in_flight.is_empty() {
                return;
            }
            if stop && started.elapsed() > std::time::Duration::from_secs(2) {
                // A loop that stopped before its commit completed never reports it: write
                // the blocks again (the same bytes, so a late completion changes nothing).
                for c in commits.in_flight.iter_mut() {
                    c.failed = true;
                }
            }
            if commits.in_flight.iter().any(|c| !c.failed) {
                drop(commits);
                std::thread::sleep(std::time::Duration::from_micros(100));
                continue;
            }
            // A commit that a later commit's fdatasync already covered (only possible
            // here for one failed at shutdown) is not written again: its copy of the
            // block it shares with the later commit would overwrite the later records.
            let durable = self.durable();
            let failed: Vec<(u64, Vec<u8>, u64)> = commits
                .in_flight
                .iter()
                .filter(|c| c.log_end > durable)
                .map(|c| (c.file_off, c.buf.as_slice().to_vec(), c.log_end))
                .collect();
            drop(commits);
            let mut end = 0;
            for (off, bytes, log_end) in failed {
                if !cur.rewrite_region(self, off, &bytes, stop) {
                    return;
                }
                end = end.max(log_end);
            }
            let mut commits = self.commits.lock();
            commits.in_flight.clear();
            commits.progress += 1;
            drop(commits);
            self.commit_done.notify_all();
            self.publish_durable(end);
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_buffer_holds_the_block_prefix_the_records_and_zeros_to_the_block() {
        let mut b = AlignedBuf::new(4096, 512).expect("buffer");
        b.fill(b"abc", b"defg");
        assert_eq!(b.as_slice().len(), 512);
        assert_eq!(&b.as_slice()[..7], b"abcdefg");
        assert!(b.as_slice()[7..].iter().all(|&x| x == 0));
        b.fill(&[1u8; 300], &[2u8; 300]);
        assert_eq!(b.as_slice().len(), 1024);
        assert_eq!(b.ptr as usize % 512, 0);
    }

    /// Puts a commit of `len` bytes ending at log offset `log_end` in flight.
    fn push(aof: &Aof, log_end: u64, len: usize) -> u64 {
        let mut c = aof.commits.lock();
        assert!(c.can_start());
        let mut buf = AlignedBuf::new(4096, 512).expect("buffer");
        buf.fill(&vec![b'x'; len], b"");
        let token = c.next_token;
        c.next_token += 1;
        c.in_flight.push_back(Commit {
            token,
            log_end,
            file_off: 0,
            buf,
            written: false,
            failed: false,
            started: std::time::Instant::now(),
            records: len as u64,
        });
        c.peak = c.peak.max(c.in_flight.len());
        token
    }

    fn aof() -> Aof {
        Aof::new(1, crate::config::AppendFsync::Always, Default::default(), Default::default())
    }

    #[test]
    fn the_next_commit_starts_once_the_write_before_it_completed_and_a_later_one_publishes_first() {
        let aof = aof();
        let a = push(&aof, 100, 512);
        assert!(!aof.commits.lock().can_start(), "a write is in flight");
        aof.commit_written(0, a, 512);
        assert!(aof.commits.lock().can_start(), "its fdatasync may run beside the next write");
        let b = push(&aof, 200, 512);
        aof.commit_written(0, b, 512);
        assert_eq!(aof.commit_pipeline(), (2, 2));
        // The later commit's fdatasync covers the earlier blocks: it may publish first.
        aof.finish_commit(0, b, 512);
        assert_eq!(aof.durable(), 200);
        aof.finish_commit(0, a, 512);
        assert_eq!(aof.durable(), 200);
        assert_eq!(aof.commit_pipeline(), (0, 2));
    }

    #[test]
    fn nothing_is_published_behind_a_failed_commit_and_both_wait_for_the_writer() {
        let aof = aof();
        let a = push(&aof, 100, 512);
        aof.commit_written(0, a, 512);
        let b = push(&aof, 200, 512);
        aof.commit_written(0, b, 512);
        aof.finish_commit(0, a, -libc::EIO);
        assert!(!aof.write_ok.load(Ordering::Acquire));
        assert!(!aof.commits.lock().can_start(), "no commit starts behind a failed one");
        aof.finish_commit(0, b, 512);
        assert_eq!(aof.durable(), 0, "a commit behind a failed one publishes nothing");
        let c = aof.commits.lock();
        assert!(c.in_flight.iter().all(|c| c.failed) && c.in_flight.len() == 2);
    }

    #[test]
    fn a_failed_fdatasync_already_covered_by_a_later_one_is_not_written_again() {
        let aof = aof();
        let a = push(&aof, 100, 512);
        aof.commit_written(0, a, 512);
        let b = push(&aof, 200, 512);
        aof.commit_written(0, b, 512);
        aof.finish_commit(0, b, 512);
        // Writing `a` again would put its copy of the block it shares with `b` over b's records.
        aof.finish_commit(0, a, -libc::EIO);
        assert_eq!(aof.durable(), 200);
        assert_eq!(aof.commit_pipeline().0, 0);
        assert!(aof.commits.lock().can_start());
    }

    #[test]
    fn a_short_write_fails_its_commit() {
        let aof = aof();
        let a = push(&aof, 100, 512);
        aof.commit_written(0, a, 100);
        assert!(!aof.write_ok.load(Ordering::Acquire));
        assert!(aof.commits.lock().in_flight[0].failed);
        assert!(!aof.commits.lock().can_start());
    }

    /// At shutdown the writer gives up waiting for a commit that never completes (its
    /// loop stopped) and writes its block again, except a commit that a later commit's
    /// fdatasync already covered: its copy of the shared block is older, and writing it
    /// would overwrite the later records that are on disk.
    #[test]
    fn at_shutdown_a_stuck_commit_is_written_again_unless_a_later_one_covered_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        for covered in [true, false] {
            let aof = aof();
            let path = dir.path().join(format!("log-{covered}.aof"));
            let file = std::fs::OpenOptions::new().create(true).read(true).write(true).open(&path).expect("open");
            // A later commit of the same block wrote its records ('n') and completed.
            std::os::unix::fs::FileExt::write_all_at(&file, &[b'n'; 512], 0).expect("write");
            let target = super::super::writer::Target { file, path: path.clone(), name: "log.aof".into(), len: 512 };
            let mut cur = super::super::writer::Current::open(target, crate::config::AppendFsync::Always);
            // The earlier commit (its copy of the block: 'o', up to log offset 100) never
            // completes; the later one's fdatasync reached 200, or only 50.
            let older = push(&aof, 100, 512);
            {
                let mut c = aof.commits.lock();
                let stuck = c.in_flight.iter_mut().find(|c| c.token == older).expect("older");
                stuck.buf.fill(&[b'o'; 512], b"");
            }
            aof.publish_durable(if covered { 200 } else { 50 });
            let started = std::time::Instant::now();
            aof.drain_commits(&mut cur, true);
            assert!(started.elapsed() >= std::time::Duration::from_secs(2), "it waited for the commit first");
            assert!(aof.commits.lock().in_flight.is_empty());
            let bytes = std::fs::read(&path).expect("read");
            let want = if covered { b'n' } else { b'o' };
            assert_eq!(&bytes[..512], &[want; 512][..], "covered by a later fdatasync: {covered}");
        }
    }
}
