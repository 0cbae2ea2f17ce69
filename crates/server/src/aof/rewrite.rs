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
//!
//! A replica's full sync replaces the data set, which nothing in the log leads to
//! ([`detach`]). As Redis 7.0 stops its log then and starts it again with a rewrite
//! (`AOF_WAIT_REWRITE` and its temporary incremental file), the log goes on in files
//! the manifest does not name, and the manifest keeps naming the files of the data set
//! before, which are complete; the rewrite that follows (from the new data set) makes
//! its incremental file without naming it either, and names it in the same manifest
//! as its base. A crash before then restarts with the data set of before the sync (as
//! Redis's replica does), never with the master's records replayed over it; a full
//! sync follows. A rewrite running at the sync captured the old data set: its end
//! names nothing. A rewrite that fails then is tried again, with a growing delay.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

pub use super::files::Job;
use super::files::Files;
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
    // A replica's full sync replacing the data set (the snapshot thread saw no load
    // before it waited for the gates): a capture now would be of half a data set. The
    // sync's end starts the rewrite.
    if shared.replica.is_loading() {
        aof.rewrite.scheduled.store(true, Ordering::Release);
        return Ok(Started::Scheduled);
    }
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

/// Creates the next incremental file, names it in the manifest (unless the log is
/// [detached](Files::detached): then the rewrite's end names it), and switches the
/// writer to it at the current end of the log. Every gate is held.
fn open_next(shared: &Shared, aof: &super::Aof) -> Result<Job, String> {
    let mut guard = aof.files.lock();
    let files = guard.as_mut().ok_or("the log's files are not open")?;
    let next_base = files.manifest.base.as_ref().map_or(1, |b| b.seq + 1);
    let base = FileEntry {
        name: format!("{}.{next_base}.base.rdb", files.name),
        seq: next_base,
        kind: Kind::Base,
    };
    let (incr, target) = create_incr(files)?;
    if files.detached {
        files.unnamed.push(incr.name.clone());
    } else {
        let mut m = files.manifest.clone();
        m.incrs.push(incr.clone());
        manifest::persist(&files.dir, &files.manifest_name(), &m)
            .map_err(|e| format!("Can't write the manifest: {e}"))?;
        files.manifest = m;
    }
    // (A rewrite starts only once the one before ended: a void mark left after it is
    // not this one's.)
    files.rewrite_void = false;
    let at = aof.cut();
    aof.switch_to(at, target);
    let _ = shared;
    Ok(Job { base, incr, at })
}

/// Creates the next incremental file (empty), under a number no file made before took.
pub(super) fn create_incr(files: &mut Files) -> Result<(FileEntry, Target), String> {
    let seq = files.last_incr_seq + 1;
    let incr = FileEntry {
        name: format!("{}.{seq}.incr.aof", files.name),
        seq,
        kind: Kind::Incr,
    };
    let path = files.dir.join(&incr.name);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| format!("Can't create {}: {e}", path.display()))?;
    files.last_incr_seq = seq;
    let target = Target {
        file,
        path,
        name: incr.name.clone(),
        len: 0,
    };
    Ok((incr, target))
}

/// A replica's full sync is about to replace the data set (every gate held): from here
/// on the log goes to a file the manifest does not name, and the manifest keeps naming
/// the files of the data set before, until a rewrite from the new one names its own
/// (see the module's header). The caller starts that rewrite once the new data set is
/// loaded.
///
/// An error (the new file cannot be created: the folder refuses it, no file
/// descriptor left) changes nothing, and the caller must not replace the data set: the
/// log would go on in the named file, and a restart would replay the master's records
/// over the data set of before. (A sync through a temporary file fails the same way
/// when the folder refuses it; Redis 7.0 exits when it cannot restart its log after a
/// sync.)
pub fn detach(shared: &Shared) -> Result<(), String> {
    let Some(aof) = shared.aof.as_ref() else { return Ok(()) };
    let mut guard = aof.files.lock();
    let Some(files) = guard.as_mut() else { return Ok(()) };
    let (incr, target) = create_incr(files)?;
    files.detached = true;
    // The rewrite that follows must not wait out a pause of failed automatic rewrites
    // (up to an hour): until it ends a restart loads the data set of before the sync.
    aof.rewrite.retry_at_ms.store(0, Ordering::Relaxed);
    if aof.rewrite.in_progress.load(Ordering::Acquire) {
        files.rewrite_void = true;
    }
    files.unnamed.push(incr.name);
    aof.switch_to(aof.cut(), target);
    Ok(())
}

/// The base is written and durable: the manifest now names the new base and the new
/// incremental file only, and the files before them go.
pub fn finish(shared: &Shared, job: &Job, base_size: u64) -> Result<(), String> {
    // (The log may have been turned off meanwhile: then the rewrite is void, below.)
    let aof = shared.aof.object();
    let old = {
        let mut guard = aof.files.lock();
        let files = guard.as_mut().ok_or("the log's files are not open")?;
        if std::mem::take(&mut files.rewrite_void) {
            let base = files.dir.join(&job.base.name);
            drop(guard);
            let _ = std::fs::remove_file(base);
            crate::log::notice("Background AOF rewrite discarded: a sync with the master replaced the data set it captured");
            return Ok(());
        }
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
            .map(|e| &e.name)
            .chain(&files.unnamed)
            .filter(|name| **name != job.incr.name && **name != job.base.name)
            .map(|name| files.dir.join(name))
            .collect();
        files.manifest = m;
        files.unnamed.clear();
        files.detached = false;
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
    r.retry_at_ms.store(0, Ordering::Relaxed);
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
    let failures = r.consecutive_failures.fetch_add(1, Ordering::Relaxed) + 1;
    crate::log::warning(&format!("Background AOF rewrite failed: {why}"));
    // After a full sync the log is complete again only once a rewrite succeeds: tried
    // again after 1 s, 2 s, 4 s ... at most a minute.
    if aof.files.lock().as_ref().is_some_and(|f| f.detached) {
        let delay_ms = 1000i64 << failures.saturating_sub(1).min(6);
        r.retry_at_ms.store(store::Clock::System.now_ms() + delay_ms.min(60_000), Ordering::Relaxed);
        r.scheduled.store(true, Ordering::Release);
    } else if failures >= AUTO_LIMIT_AFTER {
        // The log grew past `auto-aof-rewrite-percentage` and stays so: without a pause
        // the snapshot thread would start a rewrite at each turn (ten a second), each
        // naming one more incremental file in the manifest. As Redis 7.0: after three
        // failures in a row, the automatic rewrite waits 1 minute, then 2, 4 ... at most
        // an hour; BGREWRITEAOF still runs at once.
        let minutes = (1i64 << (failures - AUTO_LIMIT_AFTER).min(6)).min(AUTO_LIMIT_MAX_MINUTES);
        r.retry_at_ms.store(store::Clock::System.now_ms() + minutes * 60_000, Ordering::Relaxed);
        crate::log::warning(&format!(
            "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {minutes} minutes"
        ));
    }
}

/// Consecutive failed rewrites after which the automatic rewrite pauses (Redis 7.0's).
const AUTO_LIMIT_AFTER: u64 = 3;
/// The longest of those pauses.
const AUTO_LIMIT_MAX_MINUTES: i64 = 60;

/// The rewrite's capture ended (done or failed).
pub fn ended(aof: &super::Aof, elapsed_s: i64) {
    aof.rewrite.last_time_s.store(elapsed_s, Ordering::Relaxed);
    aof.rewrite.in_progress.store(false, Ordering::Release);
}

/// With the log on, a rewrite from the data set now, or, one running (its point in
/// time is older) or none possible now, one scheduled after it (a replica's full sync:
/// the log must come to hold the data just loaded). `gates_held`: as for [`begin`].
pub fn begin_or_schedule(shared: &Shared, gates_held: bool) {
    let Some(aof) = shared.aof.as_ref() else { return };
    if aof.rewrite.in_progress.load(Ordering::Acquire) {
        aof.rewrite.scheduled.store(true, Ordering::Release);
        return;
    }
    if let Err(e) = begin(shared, gates_held) {
        crate::log::warning(&format!("Can't rewrite the append-only log now: {e}"));
        aof.rewrite.scheduled.store(true, Ordering::Release);
    }
}

/// A replica promoted with its log still detached (a full sync whose load failed, or
/// whose rewrite has not begun): the rewrite that names the log's files again is
/// scheduled (the snapshot thread starts it), so that the new master's writes do not
/// stay in files no manifest names.
pub fn schedule_if_detached(shared: &Shared) {
    let Some(aof) = shared.aof.as_ref() else { return };
    if aof.files.lock().as_ref().is_some_and(|f| f.detached) && !aof.rewrite.in_progress.load(Ordering::Acquire) {
        aof.rewrite.scheduled.store(true, Ordering::Release);
    }
}

/// The rewrite after a replica's full sync is running: until it ends, the log's files
/// lead to the data set of before the sync (Redis's "initial AOF", which its shutdown
/// waits for unless forced).
pub fn writing_initial(shared: &Shared) -> bool {
    shared.aof.as_ref().is_some_and(|aof| {
        aof.rewrite.in_progress.load(Ordering::Acquire) && aof.files.lock().as_ref().is_some_and(|f| f.detached)
    })
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
    // A failed rewrite's pause (see `failed`) holds for both kinds of retry.
    if store::Clock::System.now_ms() < aof.rewrite.retry_at_ms.load(Ordering::Relaxed) {
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
