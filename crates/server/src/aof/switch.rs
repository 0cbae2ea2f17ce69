//! CONFIG SET appendonly yes|no: the log turned on or off while the server runs, as
//! Redis 7.0 does it (`startAppendOnly`, `stopAppendOnly`). Both run with every event
//! loop's gate held, so that each command runs wholly with the log or wholly without.
//!
//! **On.** The log starts where the data set is now: records go to a new incremental
//! file from this instant, and a rewrite (the fork-less capture of this same instant)
//! writes the base. Until that rewrite ends the log is *detached*, as after a replica's
//! full sync (`rewrite.rs`): the manifest on disk still names what it named before (the
//! files of an earlier run, or nothing), and the new files are named, base and
//! incremental together, only when the base is complete. A crash before then restarts
//! as Redis's does after the same steps: with `appendonly yes` from the file, from the
//! manifest on disk (without the writes since CONFIG SET: no base held what came
//! before them yet); with `no` (CONFIG SET changes nothing on disk until CONFIG
//! REWRITE), from dump.rdb. So the way Redis's documentation gives to switch a running
//! server to the log (CONFIG SET appendonly yes, wait for `aof_rewrite_in_progress:0`,
//! CONFIG REWRITE) works here too. A BGSAVE running then makes the rewrite wait for it
//! (scheduled), as BGREWRITEAOF does.
//!
//! **Off.** The log reads as absent from then on, and a rewrite running is voided (its
//! end names nothing: Redis kills its child). What was appended before is still written
//! and synced (the writer is asked to), and the replies that wait for it leave only
//! then. Its files stay, as Redis leaves them; the writer thread stays too, idle, for
//! the next time the log is turned on.

use std::sync::Arc;

use super::files::Files;
use super::manifest::Manifest;
use crate::shared::Shared;

/// Turns the log on (every gate held). Err: why not, the log staying off.
pub fn turn_on(shared: &Shared) -> Result<(), String> {
    if shared.aof.is_some() {
        return Ok(());
    }
    let aof = Arc::clone(shared.aof.object());
    let (dir, dirname, filename) = {
        let c = shared.config.read();
        (c.dir.clone(), c.appenddirname.clone(), c.appendfilename.clone())
    };
    let aof_dir = dir.join(&dirname);
    std::fs::create_dir_all(&aof_dir).map_err(|e| format!("Can't create the append-only folder {}: {e}", aof_dir.display()))?;
    let target = {
        let mut guard = aof.files.lock();
        if guard.is_none() {
            // What a run before left: its files are another data set's, named until the
            // rewrite below names this one's (and then deleted).
            let manifest_name = format!("{filename}.manifest");
            let path = aof_dir.join(&manifest_name);
            let m = if path.exists() {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("Can't read the AOF manifest {}: {e}", path.display()))?;
                Manifest::parse(&text).map_err(|e| format!("{e} in the AOF manifest {}", path.display()))?
            } else {
                Manifest::default()
            };
            *guard = Some(Files::new(aof_dir.clone(), filename.clone(), m));
        }
        let files = guard.as_mut().ok_or("the log's files are not open")?;
        let (incr, target) = super::rewrite::create_incr(files)?;
        files.detached = true;
        files.unnamed.push(incr.name);
        target
    };
    let mut writer = shared.aof.writer.lock();
    match writer.as_ref() {
        // The log was on before: its writer waits, idle; it continues in the new file.
        Some(_) => aof.switch_to(aof.cut(), target),
        None => {
            aof.cut();
            *writer = Some(super::writer::spawn(Arc::clone(&aof), target).map_err(|e| format!("Can't start the log's writer: {e}"))?);
        }
    }
    drop(writer);
    // Counted from the files to come: the rewrite's end sets them.
    aof.rewrite.retry_at_ms.store(0, std::sync::atomic::Ordering::Relaxed);
    shared.aof.set_on(true);
    super::rewrite::begin_or_schedule(shared, true);
    crate::log::notice("Append-only log turned on: a rewrite writes its base from the data set now");
    Ok(())
}

/// Turns the log off (every gate held). Nothing waits here for the disk: the writer is
/// asked to write and sync what is appended (and the event loops' commits in flight end
/// once the gates go), while the replies held for those records keep waiting for them
/// (`net::release_held` reads the log's state, on or off), so no write is acknowledged
/// before it is durable, as with the log on. (Waiting here, under every gate, for the
/// writer deadlocked: it waited for commits that only the blocked loops can reap.)
pub fn turn_off(shared: &Shared) -> Result<(), String> {
    let Some(aof) = shared.aof.as_ref() else { return Ok(()) };
    {
        let mut guard = aof.files.lock();
        if let Some(files) = guard.as_mut() {
            // A rewrite running captured a data set the log no longer follows.
            if aof.rewrite.in_progress.load(std::sync::atomic::Ordering::Acquire) {
                files.rewrite_void = true;
            }
        }
    }
    aof.rewrite.scheduled.store(false, std::sync::atomic::Ordering::Release);
    shared.aof.set_on(false);
    aof.nudge_writer();
    crate::log::notice("Append-only log turned off");
    Ok(())
}
