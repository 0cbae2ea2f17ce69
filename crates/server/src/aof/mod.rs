//! The append-only log (AOF): what every write adds to the log, in what order, and when
//! its reply may leave.
//!
//! - **Order.** Every write command runs while holding the ordering stripes of its
//!   keys (`crate::order`), and its record is appended before they are released, so
//!   two writes that touch a common key are logged in the order they ran.
//! - **Records.** A record is the command as RESP, the same bytes Redis writes for it
//!   (issue 26: Redis reads Basalt's log exactly as Basalt does). Commands whose effect
//!   is random, relative in time or deferred are logged as their effect, as Redis
//!   propagates them (the handler says so, `Ctx::propagate_as`; records reach the log
//!   only through `crate::propagate`): SPOP as SREM, a blocked pop served later as
//!   LPOP/LMOVE/ZPOPMIN..., SET EX/PX/EXAT and SETEX as `SET key value PXAT <ms>`,
//!   EXPIRE/PEXPIRE/EXPIREAT and GETEX as PEXPIREAT (a time already past as DEL), RESTORE with ABSTTL, INCRBYFLOAT as `SET ... KEEPTTL` and HINCRBYFLOAT as
//!   HSET of the value made; a write that changed nothing is not logged. An expired key
//!   that is removed is logged as `DEL key` (`crate::propagate::removal`). A `SELECT` is
//!   written when the database changes, and an annotation `#MS:<unix ms>` when the time
//!   changes, so that Basalt replays each command at the time it first ran (logs of
//!   older Basalt versions, with relative times, replay exactly too); Redis 7 skips
//!   lines that start with `#`.
//! - **Durability.** The writer thread (`writer.rs`) takes what was appended, writes it,
//!   and fsyncs per `appendfsync`. Under `always` with the io_uring engine the loops
//!   commit their batches themselves instead, with a bounded wait (`commit.rs`); under
//!   everysec and no a loop hands its batch to the kernel itself (`write_inline`). A reply that
//!   reveals a write waits until the log is `written` (everysec, no) or `durable`
//!   (always) up to that write: each ordering stripe remembers the log offset of the
//!   last write to its keys, so a read waits only when a key it read has a write not
//!   yet on disk, and reads of other keys flow while a disk is slow.
//! - **Files.** Redis 7's multi-part layout (`manifest.rs`): `appenddirname/` holds a
//!   base file, incremental files and a manifest; `load.rs` replays them at start.
//!
//! - **On and off at run time** (CONFIG SET appendonly, `switch.rs`): the log's state
//!   exists from the start ([`AofSlot`]); while it is off, everything reads it as
//!   absent.

pub mod commit;
pub mod files;
pub mod load;
pub mod manifest;
mod prealloc;
pub mod rewrite;
pub mod segment;
pub mod switch;
pub mod writer;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::config::AppendFsync;

/// Bytes appended but not yet written past which a connection whose replies wait for
/// the log stops having its input executed (a slow disk must not let clients that
/// pipeline writes grow the log's memory without bound); it resumes when its replies go.
pub const TAIL_LIMIT: u64 = 64 * 1024 * 1024;

/// The in-memory tail of the log, not yet taken by the writer.
struct Tail {
    bytes: Vec<u8>,
    /// Where in `bytes` the header of the segment being appended to lies (`segment.rs`):
    /// sealed when the bytes are taken (by the taker, after it lets the lock go: the
    /// checksum of a batch is microseconds that no other loop's append should wait
    /// for), and a new one opened by the next record.
    open_segment: Option<usize>,
    /// Log offset of the end of `bytes` (bytes appended since the log was opened).
    end: u64,
    /// Database of the last record (usize::MAX: none yet, write a SELECT).
    db: usize,
    /// Time annotation of the last record.
    ts_ms: i64,
    /// A transaction is being logged: MULTI is written before its first record.
    multi: MultiState,
    /// The writer is waiting for bytes (notify it on append).
    writer_idle: bool,
    /// An event loop left work to the writer thread (see `commit.rs`).
    writer_wanted: bool,
    stop: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MultiState {
    None,
    /// EXEC started; no record yet.
    Open,
    /// MULTI written; EXEC must close it.
    Written,
}

/// The log as the server holds it: its state, made at start whatever `appendonly`
/// says, and whether it is on. While it is off, [`AofSlot::as_ref`] answers None, so
/// that every write, reply and read acts as without a log; CONFIG SET appendonly turns
/// it on and off under every event loop's gate (`switch.rs`), so that a command sees
/// one answer from its start to its end. The rewrite's end, the loops' commit
/// completions and INFO's rewrite fields read the state itself ([`AofSlot::object`]):
/// those outlive a switch.
pub struct AofSlot {
    aof: Arc<Aof>,
    on: AtomicBool,
    /// The writer thread, once the log was first on (joined at exit).
    pub(crate) writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl AofSlot {
    pub fn new(aof: Arc<Aof>, on: bool) -> AofSlot {
        AofSlot { aof, on: AtomicBool::new(on), writer: Mutex::new(None) }
    }

    /// The log, while it is on.
    #[inline]
    pub fn as_ref(&self) -> Option<&Arc<Aof>> {
        self.on.load(Ordering::Acquire).then_some(&self.aof)
    }

    #[inline]
    pub fn as_deref(&self) -> Option<&Aof> {
        self.as_ref().map(|a| &**a)
    }

    #[inline]
    pub fn is_some(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    #[inline]
    pub fn is_none(&self) -> bool {
        !self.is_some()
    }

    /// The log's state, on or off.
    pub fn object(&self) -> &Arc<Aof> {
        &self.aof
    }

    /// Turns the log on or off (`switch.rs`, every gate held).
    pub(crate) fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Release);
    }
}

/// The log's shared state: the tail, the offsets reached on disk, and the
/// status INFO and MISCONF report.
pub struct Aof {
    tail: Mutex<Tail>,
    wake_writer: Condvar,
    /// Log offset handed to the kernel with write(2).
    written: AtomicU64,
    /// Log offset of the end of what was appended (the tail's `end`, readable without
    /// its lock).
    appended: AtomicU64,
    /// Log offset made durable with fdatasync.
    durable: AtomicU64,
    policy: AtomicU8,
    /// Per event loop: the smallest offset one of its held connections waits for
    /// (0 = none), so that the writer wakes only loops that have something to send.
    waiting: Box<[AtomicU64]>,
    /// The log is being replayed into the live keyspace (DEBUG LOADAOF / RELOAD): keys
    /// that expire meanwhile are not logged again.
    pub replaying: AtomicBool,
    /// False after a write or fsync error, until a write succeeds again.
    pub write_ok: AtomicBool,
    /// The last write error, as strerror would print it.
    pub write_error: Mutex<String>,
    pub delayed_fsync: AtomicU64,
    /// Rounds the writer thread took while the loops commit inline (`appendfsync
    /// always`, io_uring): each is a case `commit.rs` left to it (a race for the file, a
    /// failed commit, a rewrite's switch), and the slow path (INFO
    /// `basalt_aof_writer_rounds_inline`).
    pub writer_rounds_inline: AtomicU64,
    /// What making the log durable costs on this disk (INFO persistence `basalt_aof_sync*`).
    pub syncs: SyncStats,
    /// DEBUG AOF-FLUSH-SLEEP: each write of the log (a writer round, or a loop's commit
    /// through a linked timeout) is delayed this long (tests of a slow disk).
    pub debug_flush_sleep_us: AtomicU64,
    /// Log rewrites (or a replica's full sync, `rewrite::detach`) asked the writer to
    /// continue in a new file from these offsets on, in order: a second switch may come
    /// before the writer took the first, and each file gets the records between its
    /// offset and the next one's.
    switch: Mutex<Vec<writer::Switch>>,
    /// The server's latency monitor (events `aof-write`, `aof-fsync-always`).
    pub latency: Arc<crate::latency_monitor::LatencyMonitor>,
    /// The event loops' wakers: the log wakes the loops whose held replies it released.
    wakers: Arc<crate::waker::Wakers>,
    /// The file being appended to: the writer thread's, which an event loop may borrow
    /// (try_lock only) to write its batch's records itself under everysec/no.
    current: Mutex<Option<writer::Current>>,
    /// Under `always` with the io_uring engine the loops make the log durable themselves
    /// (`commit.rs`); these are their commits in flight.
    pub(crate) commits: Mutex<commit::Commits>,
    /// Notified when a loop's commit finishes (other loops wait for it: `commit.rs`).
    commit_done: Condvar,
    /// The loops run io_uring and may commit inline (set at start).
    pub inline_commits: AtomicBool,
    /// The manifest as last persisted, the folder and the base name (rewrite.rs).
    pub files: Mutex<Option<files::Files>>,
    pub rewrite: files::RewriteStats,
    /// Size in bytes of the files named in the manifest, at start plus what was
    /// written since (INFO aof_current_size / aof_base_size).
    pub base_size: AtomicU64,
    pub start_size: AtomicU64,
    /// The log offset at which the files counted in `start_size` end (the start of the
    /// newest incremental file after a rewrite).
    pub size_offset: AtomicU64,
}

/// Counts of the log's durable writes: a loop's direct commit (`commit.rs`) or the writer
/// thread's fdatasync (`writer.rs`), with the time each took from submission to
/// completion. For users sizing a disk for `appendfsync always`: the mean is the
/// latency every durable write waits for at least, and bytes over count the group
/// commit's batch.
#[derive(Default)]
pub struct SyncStats {
    pub count: AtomicU64,
    pub usec: AtomicU64,
    pub max_usec: AtomicU64,
    pub bytes: AtomicU64,
}

impl SyncStats {
    pub fn record(&self, took: std::time::Duration, bytes: u64) {
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.count.fetch_add(1, Ordering::Relaxed);
        self.usec.fetch_add(us, Ordering::Relaxed);
        self.max_usec.fetch_max(us, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
}

fn policy_code(p: AppendFsync) -> u8 {
    match p {
        AppendFsync::Always => 0,
        AppendFsync::Everysec => 1,
        AppendFsync::No => 2,
    }
}

impl Aof {
    pub fn new(
        loops: usize,
        policy: AppendFsync,
        latency: Arc<crate::latency_monitor::LatencyMonitor>,
        wakers: Arc<crate::waker::Wakers>,
    ) -> Aof {
        Aof {
            latency,
            wakers,
            tail: Mutex::new(Tail {
                bytes: Vec::with_capacity(64 * 1024),
                open_segment: None,
                end: 0,
                db: usize::MAX,
                ts_ms: i64::MIN,
                multi: MultiState::None,
                writer_idle: false,
                writer_wanted: false,
                stop: false,
            }),
            wake_writer: Condvar::new(),
            written: AtomicU64::new(0),
            appended: AtomicU64::new(0),
            durable: AtomicU64::new(0),
            policy: AtomicU8::new(policy_code(policy)),
            waiting: (0..loops.max(1)).map(|_| AtomicU64::new(0)).collect(),
            replaying: AtomicBool::new(false),
            write_ok: AtomicBool::new(true),
            write_error: Mutex::new(String::new()),
            delayed_fsync: AtomicU64::new(0),
            writer_rounds_inline: AtomicU64::new(0),
            syncs: SyncStats::default(),
            debug_flush_sleep_us: AtomicU64::new(0),
            switch: Mutex::new(Vec::new()),
            current: Mutex::new(None),
            commits: Mutex::new(commit::Commits::default()),
            commit_done: Condvar::new(),
            inline_commits: AtomicBool::new(false),
            files: Mutex::new(None),
            rewrite: files::RewriteStats::default(),
            base_size: AtomicU64::new(0),
            start_size: AtomicU64::new(0),
            size_offset: AtomicU64::new(0),
        }
    }

    pub fn policy(&self) -> AppendFsync {
        match self.policy.load(Ordering::Relaxed) {
            0 => AppendFsync::Always,
            1 => AppendFsync::Everysec,
            _ => AppendFsync::No,
        }
    }

    /// CONFIG SET appendfsync.
    pub fn set_policy(&self, p: AppendFsync) {
        self.policy.store(policy_code(p), Ordering::Relaxed);
        // A change to `no` or `everysec` may release replies waiting for an fsync.
        self.nudge_writer();
    }

    /// The offset up to which replies may leave under the current policy.
    pub fn reached(&self) -> u64 {
        match self.policy() {
            AppendFsync::Always => self.durable.load(Ordering::Acquire),
            _ => self.written.load(Ordering::Acquire),
        }
    }

    /// The end of what was appended (records not yet written included).
    pub fn appended(&self) -> u64 {
        self.appended.load(Ordering::Acquire)
    }

    /// The log offset made durable.
    pub fn durable(&self) -> u64 {
        self.durable.load(Ordering::Acquire)
    }

    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Acquire)
    }

    /// Bytes in the files the manifest names (INFO aof_current_size).
    pub fn current_size(&self) -> u64 {
        let offset = self.size_offset.load(Ordering::Relaxed);
        self.start_size.load(Ordering::Relaxed) + self.written().saturating_sub(offset)
    }

    /// True while more than [`TAIL_LIMIT`] bytes wait to be written.
    pub fn tail_over_limit(&self) -> bool {
        self.appended
            .load(Ordering::Acquire)
            .saturating_sub(self.written())
            > TAIL_LIMIT
    }

    /// Bytes appended but not yet taken by the writer (INFO aof_buffer_length).
    pub fn buffered(&self) -> usize {
        self.tail.lock().bytes.len()
    }

    /// Appends records, each a command's arguments, for database `db` at time `now_ms`.
    /// Returns the log offset of the end of the last record.
    pub fn append<A: AsRef<[u8]>>(&self, db: usize, now_ms: i64, records: &[&[A]]) -> u64 {
        let mut t = self.tail.lock();
        for rec in records {
            t.write_record(db, now_ms, rec);
        }
        self.after_append(t)
    }

    /// Appends one record (the common case).
    pub fn append_one<A: AsRef<[u8]>>(&self, db: usize, now_ms: i64, args: &[A]) -> u64 {
        let mut t = self.tail.lock();
        t.write_record(db, now_ms, args);
        self.after_append(t)
    }

    fn after_append(&self, t: MutexGuard<'_, Tail>) -> u64 {
        let end = t.end;
        self.appended.store(end, Ordering::Release);
        // Under everysec/no the event loop writes its records itself at the end of its
        // batch (`write_inline`): waking the writer for each would only cost a switch.
        // Under always with inline commits the loop that ends the batch commits it.
        let wake = t.writer_idle
            && self.policy() == AppendFsync::Always
            && !self.inline_commits.load(Ordering::Relaxed);
        drop(t);
        if wake {
            self.wake_writer.notify_one();
        }
        end
    }

    /// Under everysec and no, an event loop hands its batch's records to the kernel
    /// itself, as Redis does before it replies, instead of waiting for the writer
    /// thread: one write(2), no thread hop. Only when the file is free (never while the
    /// writer thread writes or fsyncs, so a slow fsync never stalls a loop), the log is
    /// healthy and no rewrite switch is pending; otherwise the writer thread does it.
    ///
    /// Several loops: the one holding the file writes everything appended so far, its
    /// own records and the others'; a loop that finds the file taken leaves its records
    /// to the holder, which looks at the tail again after letting the file go and writes
    /// what came meanwhile (at most `ROUNDS` times, then the writer thread takes over).
    /// Without that second look, records appended while another loop was writing
    /// waited for some loop's next batch, or for the writer thread's one-second tick.
    pub fn write_inline(&self, owner: usize) {
        const ROUNDS: usize = 8;
        let policy = self.policy();
        for _ in 0..ROUNDS {
            if policy == AppendFsync::Always
                || !self.write_ok.load(Ordering::Acquire)
                || !self.switch.lock().is_empty()
            {
                return;
            }
            let Some(mut guard) = self.current.try_lock() else {
                return;
            };
            let Some(cur) = guard.as_mut() else { return };
            let (mut bytes, open, end) = {
                let mut t = self.tail.lock();
                // The switch again, under the tail's lock: a rewrite may have switched
                // files since the check above, and records after its cut point must not
                // go to the old file. Its cut is taken (and the switch set) while no loop
                // runs, so any record appended after it is appended after the switch is
                // visible.
                if t.bytes.is_empty() || !self.switch.lock().is_empty() {
                    return;
                }
                let mut bytes = Vec::new();
                let open = t.take(&mut bytes);
                (bytes, open, t.end)
            };
            segment::seal_open(&mut bytes, open);
            match cur.write_once(self, &bytes) {
                Ok(()) => {
                    self.written.store(end, Ordering::Release);
                    if policy == AppendFsync::No {
                        self.durable.store(end, Ordering::Release);
                    }
                    let mut t = self.tail.lock();
                    if t.bytes.is_empty() {
                        // Give the buffer back for reuse.
                        let mut b = bytes;
                        b.clear();
                        t.bytes = b;
                    }
                }
                Err(_) => {
                    // Put the bytes back in front; the writer thread retries (and reports).
                    // (They are sealed segments; the one open after them moves along.)
                    let mut t = self.tail.lock();
                    let mut b = bytes;
                    let ahead = b.len();
                    b.extend_from_slice(&t.bytes);
                    t.bytes = b;
                    t.open_segment = t.open_segment.map(|p| p + ahead);
                    drop(t);
                    drop(guard);
                    self.nudge_writer();
                    return;
                }
            }
            drop(guard);
            // Other loops waiting for these bytes; the caller releases its own next.
            writer::wake_released_except(self, Some(owner));
            if self.tail.lock().bytes.is_empty() {
                return;
            }
        }
        // Records keep coming while this loop writes for the others: the writer thread
        // takes the rest, and this loop goes back to its own connections.
        self.nudge_writer();
    }

    /// An EXEC is starting (every loop's gate is held, so nothing else appends until it
    /// ends): its records are bracketed by MULTI and EXEC, written only if it has any.
    pub fn begin_exec(&self) {
        self.tail.lock().multi = MultiState::Open;
    }

    /// The EXEC ended; returns the offset of its EXEC record, if one was written.
    pub fn end_exec(&self) -> Option<u64> {
        let mut t = self.tail.lock();
        let written = t.multi == MultiState::Written;
        t.multi = MultiState::None;
        if !written {
            return None;
        }
        t.open();
        t.put_command(&[b"EXEC"]);
        Some(self.after_append(t))
    }

    /// Waits (bounded) until everything appended so far is written to the file.
    /// False on timeout.
    pub fn wait_written(&self, timeout: std::time::Duration) -> bool {
        let end = self.tail.lock().end;
        let deadline = std::time::Instant::now() + timeout;
        while self.written() < end {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            self.nudge_writer();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        true
    }

    /// The end of what has been appended, where a new file begins (under every gate:
    /// a rewrite's cut point). The open segment is sealed there, so that the cut falls
    /// between two segments (the file before it ends with a whole one), and the next
    /// record opens with its SELECT and its time, as Redis's new incremental file does:
    /// a file replayed after a base starts in database 0 at no time (without that, the
    /// first write after a BGREWRITEAOF in another database than 0 came back in 0).
    pub fn cut(&self) -> u64 {
        let mut t = self.tail.lock();
        t.seal();
        t.db = usize::MAX;
        t.ts_ms = i64::MIN;
        t.end
    }

    /// From offset `at` on, the writer appends to `target` (a log rewrite's new
    /// incremental file); everything before stays in the current file (or in the file
    /// of a switch still pending, at an earlier offset). The caller holds every gate, so
    /// `at` is the end of the log and no earlier than a pending switch's.
    pub fn switch_to(&self, at: u64, target: writer::Target) {
        self.switch.lock().push(writer::Switch { at, target });
        self.nudge_writer();
    }

    /// Wakes the writer whatever it is waiting for (policy change, shutdown), and has
    /// it take the tail even while the loops commit inline: a caller waiting for the
    /// log (`wait_written`) must not depend on a loop's next turn.
    pub fn nudge_writer(&self) {
        let mut t = self.tail.lock();
        t.writer_wanted = true;
        self.wake_writer.notify_one();
    }

    /// Asks the writer to write and sync what is buffered, then stop.
    pub fn stop(&self) {
        self.tail.lock().stop = true;
        self.wake_writer.notify_one();
    }

    /// Event loop `owner` has connections waiting for `need` (0 = none any more).
    pub fn set_waiting(&self, owner: usize, need: u64) {
        if let Some(w) = self.waiting.get(owner) {
            w.store(need, Ordering::Release);
        }
    }
}

impl Tail {
    /// Opens a segment (its header, to be filled in when sealed) unless one is open.
    fn open(&mut self) {
        if self.open_segment.is_none() {
            self.open_segment = Some(self.bytes.len());
            self.bytes.extend_from_slice(&segment::placeholder());
            self.end += segment::HEADER_LEN as u64;
        }
    }

    /// Seals the open segment, if any: what is in `bytes` may now be written as it is.
    fn seal(&mut self) {
        segment::seal_open(&mut self.bytes, self.open_segment.take());
    }

    /// Takes every byte appended, leaving `into`'s (emptied) buffer in its place;
    /// returns where the segment still to be sealed begins in them (the taker seals it,
    /// `segment::seal_open`, once the lock is let go).
    fn take(&mut self, into: &mut Vec<u8>) -> Option<usize> {
        into.clear();
        std::mem::swap(&mut self.bytes, into);
        self.open_segment.take()
    }

    fn write_record<A: AsRef<[u8]>>(&mut self, db: usize, now_ms: i64, args: &[A]) {
        self.open();
        if self.multi == MultiState::Open {
            self.multi = MultiState::Written;
            self.put_command(&[b"MULTI"]);
        }
        if now_ms != self.ts_ms {
            self.ts_ms = now_ms;
            let before = self.bytes.len();
            self.bytes.extend_from_slice(b"#MS:");
            self.bytes
                .extend_from_slice(itoa::Buffer::new().format(now_ms).as_bytes());
            self.bytes.extend_from_slice(b"\r\n");
            self.end += (self.bytes.len() - before) as u64;
        }
        if db != self.db {
            self.db = db;
            let mut n = itoa::Buffer::new();
            self.put_command(&[&b"SELECT"[..], n.format(db).as_bytes()]);
        }
        self.put_command(args);
    }

    fn put_command<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        let before = self.bytes.len();
        resp::encode::array_len(&mut self.bytes, args.len());
        for a in args {
            resp::encode::bulk(&mut self.bytes, a.as_ref());
        }
        self.end += (self.bytes.len() - before) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records appended since the last take, their segment's header checked and
    /// left off.
    fn take(aof: &Aof) -> String {
        let mut bytes = Vec::new();
        let open = aof.tail.lock().take(&mut bytes);
        segment::seal_open(&mut bytes, open);
        if bytes.is_empty() {
            return String::new();
        }
        let (len, crc) = segment::parse_header(&bytes[..segment::HEADER_LEN]).expect("a segment header first");
        let body = &bytes[segment::HEADER_LEN..];
        assert_eq!(len, body.len());
        assert!(segment::verify(body, crc));
        String::from_utf8(body.to_vec()).expect("utf8")
    }

    const H: u64 = segment::HEADER_LEN as u64;

    #[test]
    fn records_carry_select_and_time_only_when_they_change() {
        let aof = Aof::new(1, AppendFsync::Always, Default::default(), Default::default());
        let e1 = aof.append_one(0, 1000, &["SET", "a", "1"]);
        let e2 = aof.append_one(0, 1000, &["INCR", "a"]);
        let e3 = aof.append_one(3, 1001, &["DEL", "b"]);
        let text = take(&aof);
        assert_eq!(
            text,
            "#MS:1000\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n\
             *2\r\n$4\r\nINCR\r\n$1\r\na\r\n\
             #MS:1001\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*2\r\n$3\r\nDEL\r\n$1\r\nb\r\n"
        );
        assert_eq!(e3, H + text.len() as u64);
        assert!(e1 < e2 && e2 < e3);
    }

    #[test]
    fn a_transaction_is_bracketed_only_when_it_logged_something() {
        let aof = Aof::new(1, AppendFsync::Always, Default::default(), Default::default());
        aof.begin_exec();
        assert_eq!(aof.end_exec(), None);
        assert_eq!(take(&aof), "");
        aof.begin_exec();
        aof.append_one(0, 5, &["SET", "a", "1"]);
        let end = aof.end_exec().expect("EXEC written");
        let text = take(&aof);
        assert!(text.starts_with("*1\r\n$5\r\nMULTI\r\n#MS:5\r\n"), "{text}");
        assert!(text.ends_with("*1\r\n$4\r\nEXEC\r\n"), "{text}");
        assert_eq!(end, H + text.len() as u64);
    }

    #[test]
    fn each_take_is_one_segment_and_the_rewrite_cut_falls_between_two() {
        let aof = Aof::new(1, AppendFsync::Everysec, Default::default(), Default::default());
        aof.append_one(0, 1, &["SET", "a", "1"]);
        assert!(take(&aof).ends_with("$1\r\na\r\n$1\r\n1\r\n"));
        // A second segment, sealed by the rewrite's cut, then a third open one.
        aof.append_one(0, 1, &["SET", "b", "2"]);
        let cut = aof.cut();
        aof.append_one(0, 1, &["SET", "c", "3"]);
        let mut bytes = Vec::new();
        let open = aof.tail.lock().take(&mut bytes);
        segment::seal_open(&mut bytes, open);
        let (first, crc) = segment::parse_header(&bytes[..segment::HEADER_LEN]).expect("header");
        assert!(segment::verify(&bytes[segment::HEADER_LEN..segment::HEADER_LEN + first], crc));
        // The cut falls between the two.
        assert_eq!(cut + bytes.len() as u64 - aof.tail.lock().end, (segment::HEADER_LEN + first) as u64);
        let second = &bytes[segment::HEADER_LEN + first..];
        let (len, crc) = segment::parse_header(&second[..segment::HEADER_LEN]).expect("second header");
        assert_eq!(len, second.len() - segment::HEADER_LEN);
        assert!(segment::verify(&second[segment::HEADER_LEN..], crc));
        // The new file opens with its time and its database, though they did not change:
        // it is replayed after a base.
        let body = std::str::from_utf8(&second[segment::HEADER_LEN..]).expect("text");
        assert!(body.starts_with("#MS:1\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET"), "{body}");
    }
}
