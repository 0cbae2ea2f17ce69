//! The log's files as the rest of the log sees them: where they live, what the manifest
//! on disk says, and what INFO persistence reports about rewrites. State only: the
//! rewrite itself is `rewrite.rs`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};

use super::manifest::{FileEntry, Manifest};

/// Where the log's files live and what the manifest on disk says.
pub struct Files {
    pub dir: PathBuf,
    /// `appendfilename`.
    pub name: String,
    pub manifest: Manifest,
    /// Incremental files made since a replica's full sync replaced the data set
    /// ([`detached`](Self::detached)) that no manifest names: what was logged after
    /// the sync. Deleted once a rewrite from the new data set names its own files.
    pub unnamed: Vec<String>,
    /// The highest incremental file number made, named in the manifest or not: a new
    /// file never takes the name of one the writer may still be writing.
    pub last_incr_seq: u64,
    /// A replica's full sync replaced the data set (Redis 7.0's `AOF_WAIT_REWRITE`):
    /// the manifest still names the files of the data set before, and the log goes to
    /// unnamed files, until a rewrite from the new data set names its base and its
    /// incremental file together (`rewrite.rs`).
    pub detached: bool,
    /// The rewrite running when the data set was replaced captured the old one: its
    /// end names nothing.
    pub rewrite_void: bool,
}

impl Files {
    /// What the manifest `manifest`, read at start from `dir`, says of the log.
    pub fn new(dir: PathBuf, name: String, manifest: Manifest) -> Files {
        let last_incr_seq = manifest.incrs.iter().chain(&manifest.history).map(|e| e.seq).max().unwrap_or(0);
        Files { dir, name, manifest, unnamed: Vec::new(), last_incr_seq, detached: false, rewrite_void: false }
    }

    pub(super) fn manifest_name(&self) -> String {
        format!("{}.manifest", self.name)
    }
}

/// What INFO persistence reports about rewrites.
pub struct RewriteStats {
    pub in_progress: AtomicBool,
    /// Asked for while a BGSAVE ran: starts when it ends.
    pub scheduled: AtomicBool,
    pub rewrites: AtomicU64,
    pub last_ok: AtomicBool,
    pub consecutive_failures: AtomicU64,
    pub last_time_s: AtomicI64,
    pub started_ms: AtomicI64,
    /// aof_current_size when the last rewrite finished (auto-aof-rewrite-percentage).
    pub size_at_rewrite: AtomicU64,
    /// A rewrite after a replica's full sync failed: the next try, scheduled, waits
    /// until this time (unix ms), longer after each failure in a row.
    pub retry_at_ms: AtomicI64,
}

impl Default for RewriteStats {
    fn default() -> RewriteStats {
        RewriteStats {
            in_progress: AtomicBool::new(false),
            scheduled: AtomicBool::new(false),
            rewrites: AtomicU64::new(0),
            last_ok: AtomicBool::new(true),
            consecutive_failures: AtomicU64::new(0),
            last_time_s: AtomicI64::new(-1),
            started_ms: AtomicI64::new(0),
            size_at_rewrite: AtomicU64::new(0),
            retry_at_ms: AtomicI64::new(0),
        }
    }
}

/// The base file a running rewrite writes, and the incremental file that goes with it.
pub struct Job {
    pub base: FileEntry,
    pub incr: FileEntry,
    /// The log offset where the new incremental file begins.
    pub at: u64,
}
