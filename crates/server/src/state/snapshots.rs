//! The snapshots' state that the loops, the snapshot thread and INFO share: counts,
//! the running background save, and the snapshot thread's queue. What saves and loads
//! is `snapshot.rs`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};

use parking_lot::{Condvar, Mutex};

/// What INFO persistence and LASTSAVE report about snapshots.
#[derive(Default)]
pub struct SnapshotStats {
    /// Unix seconds of the last successful save (start time before the first).
    pub last_save_s: AtomicI64,
    pub saves: AtomicU64,
    /// False after a failed save, until one succeeds.
    pub last_ok: AtomicBool,
    /// Write commands counted at the last save (rdb_changes_since_last_save).
    pub writes_at_save: AtomicU64,
    /// Write commands counted when the running background save began.
    pub writes_at_bg: AtomicU64,
    /// Keys loaded from / expired while loading the file at start.
    pub loaded_keys: AtomicU64,
    pub loaded_expired: AtomicU64,
    /// A background save is running (its capture has begun).
    pub bg_in_progress: AtomicBool,
    /// The running capture is a save of `dbfilename` (not a log rewrite's base).
    pub(crate) dump_running: AtomicBool,
    /// FLUSHALL asked the running save of `dbfilename` to stop (see `abort_dump`).
    pub(crate) dump_abort: AtomicBool,
    /// BGSAVE SCHEDULE during a log rewrite: starts when the capture is free.
    pub bg_scheduled: AtomicBool,
    /// Unix ms when the running background save began.
    pub bg_started_ms: AtomicI64,
    /// Seconds the last background save took (-1 before the first).
    pub bg_last_time_s: AtomicI64,
    /// Unix ms of the last failed background save (rules retry after 5 s, as Redis).
    pub bg_failed_ms: AtomicI64,
    /// Per database (keys, keys with an expiry) when the running capture began.
    pub(crate) bg_counts: Mutex<Vec<(usize, usize)>>,
    /// The function libraries' codes when the running capture began (written before
    /// its databases, as Redis writes them).
    pub(crate) bg_functions: Mutex<Vec<std::sync::Arc<[u8]>>>,
    /// Clients waiting for the next save of `dbfilename` to receive it (SYNC, PSYNC after
    /// `REPLCONF rdb-only 1`): (owning loop, client id).
    pub(crate) sync_waiters: Mutex<Vec<(usize, u64)>>,
    /// Full synchronizations served (INFO stats `sync_full`).
    pub syncs_full: AtomicU64,
    /// Partial resynchronizations accepted and refused (INFO stats `sync_partial_ok`,
    /// `sync_partial_err`).
    pub syncs_partial_ok: AtomicU64,
    pub syncs_partial_err: AtomicU64,
    /// The running capture's `repl-stream-db` (-1: none): the database of the master's
    /// stream a replica passes on, at the capture's start.
    pub repl_stream_db: AtomicI64,
    /// Replicas a disk-less capture sends to, (owning loop, client id), set when it
    /// begins.
    pub(crate) diskless_waiters: Mutex<Vec<(usize, u64)>>,
    /// When a disk-less sync for waiting replicas is due (unix ms; 0: none):
    /// `repl-diskless-sync-delay` after the first asks, or as soon as the capture
    /// running ends.
    pub diskless_due_ms: AtomicI64,
    /// `rdb-key-save-delay`, Redis's test hook: microseconds each key adds to a save (a
    /// negative -N: one microsecond for one key in N), so that tests can act while a
    /// save runs. 0 (the default) adds nothing.
    pub key_save_delay_us: AtomicI64,
    /// Wakes the snapshot thread (a capture to write out, or shutdown).
    pub(crate) wake: Condvar,
    pub(crate) state: Mutex<SaverState>,
}

#[derive(Default)]
pub(crate) struct SaverState {
    /// A capture has begun and waits for the snapshot thread to write it.
    pub(crate) pending: Option<Job>,
    pub(crate) stop: bool,
}

/// What a capture is for.
pub enum Job {
    /// BGSAVE or a save rule: `dbfilename`.
    Dump,
    /// BGREWRITEAOF: the append-only log's new base.
    AofBase(crate::aof::files::Job),
    /// A disk-less full sync: sent to the replicas waiting when it began, no file.
    Replicas,
}

impl SnapshotStats {
    pub fn new(start_s: i64) -> SnapshotStats {
        SnapshotStats {
            last_save_s: AtomicI64::new(start_s),
            last_ok: AtomicBool::new(true),
            bg_last_time_s: AtomicI64::new(-1),
            ..Default::default()
        }
    }
}
