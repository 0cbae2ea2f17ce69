//! Log compaction (BGREWRITEAOF and `auto-aof-rewrite-*`), as Redis 7 does it: the log
//! continues in a new incremental file from the rewrite's point in time on, a new base
//! (an RDB snapshot of that same point in time) is written beside it, and the manifest
//! then names the new base and the new incremental file only.
//!
//! Crash safety at every step: the new incremental file is created and named in the
//! manifest (old base + old incr + new incr) before anything is written to it, so a
//! crash during the rewrite replays all three; the manifest is replaced atomically;
//! the old files are deleted only after the manifest that no longer names them is
//! durable. A failed rewrite leaves the three-file manifest, which is complete.
//!
//! The snapshot is the same fork-less capture as BGSAVE (`snapshot.rs`, `store::db`);
//! one capture runs at a time, so a rewrite asked for during a BGSAVE is scheduled.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

pub use super::files::Job;
use super::manifest::{self, FileEntry, Kind, Manifest};
use super::writer::Target;
use crate::shared::Shared;

/// What BGREWRITEAOF answers.
pub enum Started {
    Now,
    Scheduled,
}

/// Starts a rewrite: takes every loop's gate for an instant (the caller must not hold
/// its own), opens the next incremental file, names it in the manifest, switches the
/// writer to it at the current end of the log, and begins the capture.
pub fn begin(shared: &Shared, gates_held: bool) -> Result<Started, String> {
    let Some(aof) = shared.aof.as_ref() else {
        return Err("ERR the append-only log is off (appendonly no)".into());
    };
    if aof.rewrite.in_progress.load(Ordering::Acquire) {
        return Err("ERR Background append only file rewriting already in progress".into());
    }
    if shared.snapshots.bg_in_progress.load(Ordering::Acquire) {
        aof.rewrite.scheduled.store(true, Ordering::Release);
        return Ok(Started::Scheduled);
    }
    let _gates = shared.all_gates(gates_held);
    // Checked again under the gates: the snapshot thread may have begun a capture.
    if shared.snapshots.bg_in_progress.swap(true, Ordering::AcqRel) {
        aof.rewrite.scheduled.store(true, Ordering::Release);
        return Ok(Started::Scheduled);
    }
    match open_next(shared, aof) {
        Ok(job) => {
            aof.rewrite.in_progress.store(true, Ordering::Release);
            aof.rewrite.scheduled.store(false, Ordering::Release);
            aof.rewrite
                .started_ms
                .store(store::Clock::System.now_ms(), Ordering::Relaxed);
            crate::snapshot::begin_capture_locked(shared, crate::snapshot::Job::AofBase(job));
            crate::log::notice("Background append only file rewriting started (without fork)");
            Ok(Started::Now)
        }
        Err(e) => {
            shared
                .snapshots
                .bg_in_progress
                .store(false, Ordering::Release);
            failed(aof, &e);
            Err(format!(
                "ERR Background append only file rewriting failed: {e}"
            ))
        }
    }
}

/// Creates the next incremental file, persists a manifest that names it, and switches
/// the writer to it at the current end of the log. Every gate is held.
fn open_next(shared: &Shared, aof: &super::Aof) -> Result<Job, String> {
    let mut guard = aof.files.lock();
    let files = guard.as_mut().ok_or("the log's files are not open")?;
    let next_incr = files.manifest.incrs.last().map_or(1, |i| i.seq + 1);
    let next_base = files.manifest.base.as_ref().map_or(1, |b| b.seq + 1);
    let incr = FileEntry {
        name: format!("{}.{next_incr}.incr.aof", files.name),
        seq: next_incr,
        kind: Kind::Incr,
    };
    let base = FileEntry {
        name: format!("{}.{next_base}.base.rdb", files.name),
        seq: next_base,
        kind: Kind::Base,
    };
    let path = files.dir.join(&incr.name);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| format!("Can't create {}: {e}", path.display()))?;
    let mut m = files.manifest.clone();
    m.incrs.push(incr.clone());
    manifest::persist(&files.dir, &files.manifest_name(), &m)
        .map_err(|e| format!("Can't write the manifest: {e}"))?;
    files.manifest = m;
    let at = aof.end();
    aof.switch_to(
        at,
        Target {
            file,
            path,
            name: incr.name.clone(),
            len: 0,
        },
    );
    let _ = shared;
    Ok(Job { base, incr, at })
}

/// The base is written and durable: the manifest now names the new base and the new
/// incremental file only, and the files before them go.
pub fn finish(shared: &Shared, job: &Job, base_size: u64) -> Result<(), String> {
    let Some(aof) = shared.aof.as_ref() else {
        return Ok(());
    };
    let old = {
        let mut guard = aof.files.lock();
        let files = guard.as_mut().ok_or("the log's files are not open")?;
        let m = Manifest {
            base: Some(job.base.clone()),
            incrs: vec![job.incr.clone()],
            history: Vec::new(),
        };
        manifest::persist(&files.dir, &files.manifest_name(), &m)
            .map_err(|e| format!("Can't write the manifest: {e}"))?;
        let old: Vec<PathBuf> = files
            .manifest
            .base
            .iter()
            .chain(&files.manifest.incrs)
            .chain(&files.manifest.history)
            .filter(|e| e.name != job.incr.name && e.name != job.base.name)
            .map(|e| files.dir.join(&e.name))
            .collect();
        files.manifest = m;
        old
    };
    for path in old {
        if let Err(e) = std::fs::remove_file(&path) {
            crate::log::warning(&format!(
                "Can't remove the old AOF file {}: {e}",
                path.display()
            ));
        }
    }
    let r = &aof.rewrite;
    r.rewrites.fetch_add(1, Ordering::Relaxed);
    r.last_ok.store(true, Ordering::Relaxed);
    r.consecutive_failures.store(0, Ordering::Relaxed);
    aof.base_size.store(base_size, Ordering::Relaxed);
    // aof_current_size counts from the new base: it plus what the new file holds.
    aof.start_size.store(base_size, Ordering::Relaxed);
    aof.size_offset.store(job.at, Ordering::Relaxed);
    r.size_at_rewrite
        .store(aof.current_size(), Ordering::Relaxed);
    crate::log::notice("Background AOF rewrite finished successfully");
    Ok(())
}

/// A rewrite failed: the manifest still names the old base, the old incremental files
/// and the new one, which together hold everything.
pub fn failed(aof: &super::Aof, why: &str) {
    let r = &aof.rewrite;
    r.last_ok.store(false, Ordering::Relaxed);
    r.consecutive_failures.fetch_add(1, Ordering::Relaxed);
    crate::log::warning(&format!("Background AOF rewrite failed: {why}"));
}

/// The rewrite's capture ended (done or failed).
pub fn ended(aof: &super::Aof, elapsed_s: i64) {
    aof.rewrite.last_time_s.store(elapsed_s, Ordering::Relaxed);
    aof.rewrite.in_progress.store(false, Ordering::Release);
}

/// True when `auto-aof-rewrite-percentage` and `auto-aof-rewrite-min-size` call for a
/// rewrite now.
pub fn auto_due(shared: &Shared) -> bool {
    let Some(aof) = shared.aof.as_ref() else {
        return false;
    };
    if aof.rewrite.in_progress.load(Ordering::Acquire)
        || shared.snapshots.bg_in_progress.load(Ordering::Acquire)
    {
        return false;
    }
    if aof.rewrite.scheduled.load(Ordering::Acquire) {
        return true;
    }
    let (pct, min) = {
        let c = shared.config.read();
        (c.auto_aof_rewrite_percentage, c.auto_aof_rewrite_min_size)
    };
    if pct == 0 {
        return false;
    }
    let current = aof.current_size();
    let base = aof.rewrite.size_at_rewrite.load(Ordering::Relaxed).max(1);
    current > min && (current.saturating_sub(base)) * 100 / base >= pct
}
