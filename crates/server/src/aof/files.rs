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
}

impl Files {
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
