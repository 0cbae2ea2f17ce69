//! RDB snapshots, server side: SAVE (and the save at SHUTDOWN), loading `dump.rdb` at
//! start, and the bookkeeping INFO persistence and LASTSAVE report. The file format
//! itself lives in `store::rdb`.
//!
//! SAVE is point in time because its caller holds every event loop's gate (as EXEC
//! does): no command runs anywhere while the keyspace is written out, which is what
//! Redis's SAVE promises too (it blocks the server). The file is written to
//! `temp-<pid>.rdb` in `dir`, fsynced, renamed over `dbfilename`, and the folder fsynced,
//! so a crash leaves the old file or the new one, never half of one.
//!
//! BGSAVE (and the `save <seconds> <changes>` rules) take a point-in-time capture
//! without fork: under every loop's gate (an instant), `Keyspace::begin_capture` starts
//! it in every shard; a command about to change an entry the capture does not have yet
//! first encodes that one entry as it was; the event loops walk the shards a slice at a
//! time (`walk.rs`) and the snapshot thread (`run_saver`) writes the finished shards in
//! order. No memory doubling from copy-on-write pages and no fork pause; the extra memory
//! is the entries changed ahead of the walk (see `store::capture`). The log rewrite's RDB
//! base is the same capture. FLUSHALL abandons a running save of `dbfilename`
//! (`abort_dump`), as Redis kills its RDB child.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::shared::Shared;
pub use crate::state::snapshots::{Job, SnapshotStats};

/// Redis's refusal of writes after a failed save (`stop-writes-on-bgsave-error`).
pub const MISCONF_RDB: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";

/// Whether writes are refused now: the last save failed, `stop-writes-on-bgsave-error`
/// is yes and save rules are set (as Redis's condition). Reads the configuration: for
/// the path after a failure only.
pub fn writes_refused(shared: &Shared) -> bool {
    if shared.snapshots.last_ok.load(Ordering::Relaxed) {
        return false;
    }
    let c = shared.config.read();
    c.stop_writes_on_bgsave_error && !c.save.trim().is_empty()
}

fn dump_path(shared: &Shared) -> PathBuf {
    let c = shared.config.read();
    c.dir.join(&c.dbfilename)
}

/// The encoding thresholds values are built with, from the server's config (loading a
/// file, RESTORE).
pub fn limits(shared: &Shared) -> store::rdb::Limits {
    let t = &shared.type_limits;
    store::rdb::Limits {
        hash: t.hash(),
        zset: t.zset(),
        set_intset: t.intset(),
    }
}

/// Writes the whole keyspace to `dbfilename`. The caller must hold every loop's gate
/// (or run before/after the loops) so that the file is one point in time.
pub fn save(shared: &Shared) -> Result<(), String> {
    save_from(shared, &mut |db, s, f| f(&shared.keyspace.lock(db, s)))
}

/// As [`save`], from shards the caller has locked (all of them): FLUSHALL's save, which
/// holds every shard instead of every gate.
pub fn save_locked(shared: &Shared, locked: &mut store::LockedShards<'_>) -> Result<(), String> {
    save_from(shared, &mut |db, s, f| f(locked.get_mut((db, s))))
}

/// Calls its last argument with shard (database, index); how depends on the caller's locks.
type ShardVisitor<'v> = dyn FnMut(usize, usize, &mut dyn FnMut(&store::Shard)) + 'v;

fn save_from(shared: &Shared, visit: &mut ShardVisitor<'_>) -> Result<(), String> {
    let started = Instant::now();
    let path = dump_path(shared);
    let result = write_file(shared, &path, visit);
    match &result {
        Ok((keys, _)) => {
            let now_s = store::Clock::System.now_ms() / 1000;
            shared.snapshots.last_save_s.store(now_s, Ordering::Relaxed);
            shared.snapshots.saves.fetch_add(1, Ordering::Relaxed);
            shared.snapshots.last_ok.store(true, Ordering::Relaxed);
            shared
                .snapshots
                .writes_at_save
                .store(shared.sum(|t| &t.writes), Ordering::Relaxed);
            crate::log::notice(&format!(
                "DB saved on disk: {keys} keys in {:.3} seconds",
                started.elapsed().as_secs_f64()
            ));
        }
        // As Redis's rdbSave: the caller hears of the failure; the status of the last
        // background save, and so MISCONF, stay as they were (a SAVE or a SHUTDOWN that
        // failed does not stop writes).
        Err(e) => crate::log::warning(&format!("Failed saving the DB: {e}")),
    }
    result.map(|_| ())
}

fn write_file(shared: &Shared, path: &Path, visit: &mut ShardVisitor<'_>) -> Result<(u64, u64), String> {
    let ks = &shared.keyspace;
    let now_ms = ks.now_ms();
    let key_delay_us = shared.snapshots.key_save_delay_us.load(Ordering::Relaxed);
    write_atomically(shared, path, now_ms, false, None, &shared.functions.codes(), |w| {
        let mut keys = 0u64;
        for db in 0..ks.databases() {
            let (mut n, mut volatile) = (0, 0);
            for s in 0..ks.shards_per_db() {
                visit(db, s, &mut |shard| {
                    n += shard.len();
                    volatile += shard.volatile();
                });
            }
            if n == 0 {
                continue;
            }
            w.select_db(db, n, volatile)?;
            for s in 0..ks.shards_per_db() {
                let mut err = None;
                visit(db, s, &mut |shard| {
                    shard.for_each_live(now_ms, |e| {
                        if err.is_none() {
                            match w.entry(e) {
                                Ok(()) => {
                                    keys += 1;
                                    crate::state::loading::debug_delay(key_delay_us);
                                }
                                Err(x) => err = Some(x),
                            }
                        }
                    })
                });
                if let Some(e) = err {
                    return Err(e);
                }
            }
        }
        Ok(keys)
    })
}

type FileWriter = store::rdb::RdbWriter<BufWriter<std::fs::File>>;

/// The AUX fields of an RDB Basalt writes, as Redis 7.0 writes them (with
/// `repl-stream-db` when the snapshot is for replicas of a replica: the database of the
/// master's stream it passes on).
fn rdb_aux(now_ms: i64, aof_base: bool, stream_db: Option<usize>) -> Vec<(&'static str, String)> {
    let mut aux = vec![
        ("redis-ver", crate::version::REDIS_VERSION.to_string()),
        ("redis-bits", "64".to_string()),
        ("ctime", (now_ms / 1000).to_string()),
        ("used-mem", crate::allocator::allocated_bytes().to_string()),
        ("aof-base", if aof_base { "1" } else { "0" }.to_string()),
    ];
    if let Some(db) = stream_db {
        aux.push(("repl-stream-db", db.to_string()));
    }
    aux
}

/// Writes an RDB file as `temp-<pid>.rdb` with `body` between the header and the
/// trailer, fsyncs it, renames it over `path` and fsyncs the folder. Returns (what
/// `body` returned, the file's size).
fn write_atomically(
    shared: &Shared,
    path: &Path,
    now_ms: i64,
    aof_base: bool,
    stream_db: Option<usize>,
    functions: &[std::sync::Arc<[u8]>],
    body: impl FnOnce(&mut FileWriter) -> std::io::Result<u64>,
) -> Result<(u64, u64), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = dir.join(format!("temp-{}.rdb", std::process::id()));
    let (compress, checksum) = {
        let c = shared.config.read();
        (c.rdbcompression, c.rdbchecksum)
    };
    let fail = |what: &str, e: std::io::Error| {
        let _ = std::fs::remove_file(&tmp);
        format!("{what} {}: {e}", tmp.display())
    };
    let file =
        std::fs::File::create(&tmp).map_err(|e| fail("Failed opening the temp RDB file", e))?;
    let aux = rdb_aux(now_ms, aof_base, stream_db);
    let aux: Vec<(&str, &[u8])> = aux.iter().map(|(k, v)| (*k, v.as_bytes())).collect();
    let mut w = store::rdb::RdbWriter::new(
        BufWriter::with_capacity(1 << 20, file),
        &aux,
        compress,
        checksum,
    )
    .map_err(|e| fail("Failed writing", e))?;
    for code in functions {
        w.function(code).map_err(|e| fail("Failed writing", e))?;
    }
    let keys = body(&mut w).map_err(|e| fail("Failed writing", e))?;
    let buf = w.finish().map_err(|e| fail("Failed writing", e))?;
    let file = buf
        .into_inner()
        .map_err(|e| fail("Failed writing", e.into_error()))?;
    file.sync_all().map_err(|e| fail("Failed syncing", e))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| fail("Failed renaming", e))?;
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("Failed syncing {}: {e}", dir.display()))?;
    Ok((keys, size))
}

/// At start with `appendonly no`: loads `dbfilename` if it exists. Keys whose time has
/// passed are dropped, as a Redis master does.
pub fn load_at_start(shared: &Shared) -> Result<(), String> {
    let path = dump_path(shared);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("Can't open the RDB file {}: {e}", path.display())),
    };
    let started = Instant::now();
    shared.loading.set_total(file.metadata().map_or(0, |m| m.len()));
    let (loaded, expired) = load_into(shared, shared.load_reader(std::io::BufReader::with_capacity(1 << 20, file)))
        .map_err(|e| format!("Can't load the RDB file {}: {e}", path.display()))?;
    shared
        .snapshots
        .loaded_keys
        .store(loaded, Ordering::Relaxed);
    shared
        .snapshots
        .loaded_expired
        .store(expired, Ordering::Relaxed);
    crate::log::notice(&format!(
        "Done loading RDB, keys loaded: {loaded}, keys expired: {expired}."
    ));
    crate::log::notice(&format!(
        "DB loaded from disk: {:.3} seconds",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Loads an RDB stream into the keyspace (which the caller has emptied or just made).
/// Returns (keys loaded, keys dropped because expired).
pub fn load_into(
    shared: &Shared,
    r: impl std::io::Read,
) -> Result<(u64, u64), store::rdb::RdbError> {
    load_with_info(shared, &shared.keyspace, r).map(|(loaded, expired, _)| (loaded, expired))
}

/// As [`load_into`], into `ks` (the server's keyspace, or one a replica fills aside:
/// `repl-diskless-load swapdb`), with what the file said besides its keys (its AUX
/// fields: a replica reads `repl-stream-db` there).
pub fn load_with_info(
    shared: &Shared,
    ks: &store::Keyspace,
    r: impl std::io::Read,
) -> Result<(u64, u64, store::rdb::LoadInfo), store::rdb::RdbError> {
    let now_ms = ks.now_ms();
    let dbs = ks.databases();
    let (mut loaded, mut expired) = (0u64, 0u64);
    let lru = store::clock::lru_clock(now_ms);
    let used_mem = |name: &[u8], value: &[u8]| {
        if name == b"used-mem" {
            if let Some(bytes) = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok()) {
                shared.loading.set_rdb_used_mem(bytes);
            }
        }
    };
    // A replica keeps keys whose time has passed by its clock, as Redis's: its master
    // decides (and sends DEL); the key is read as absent meanwhile.
    let keep_expired = shared.replica.is_replica();
    let info = store::rdb::load_with_aux(r, &limits(shared), used_mem, |db, mut entry| {
        entry.set_lru(lru);
        if db >= dbs {
            return Err(store::rdb::RdbError::Other(format!(
                "the file uses database {db}, but this server has {dbs} (raise 'databases')"
            )));
        }
        if !keep_expired && entry.is_expired(now_ms) {
            expired += 1;
            return Ok(());
        }
        {
            let (h, mut shard) = ks.lock_key(db, entry.key());
            shard.insert_loaded(h, entry);
        }
        loaded += 1;
        shared.loading.after_key();
        // A shutdown stops a load (its reader checks too, but reads a MiB at a time).
        if shared.load_stopped() {
            return Err(store::rdb::RdbError::Other(crate::state::loading::STOPPED.into()));
        }
        Ok(())
    })?;
    install_functions(shared, &info.functions).map_err(store::rdb::RdbError::Other)?;
    Ok((loaded, expired, info))
}

/// The file's function libraries replace the server's (as Redis's load does): each
/// checked by running its code; a library that fails stops the load.
fn install_functions(shared: &Shared, codes: &[Vec<u8>]) -> Result<(), String> {
    let generation = shared.scripts.generation();
    let mut libraries = Vec::with_capacity(codes.len());
    for code in codes {
        libraries.push(crate::script::functions::check_library(generation, code).map_err(|e| format!("Failed loading library from the RDB file: {e}"))?);
    }
    shared.functions.replace_all(libraries);
    Ok(())
}

/// Empties the keyspace and loads the file just saved (DEBUG RELOAD). The caller holds
/// every loop's gate.
pub fn save_and_reload(shared: &Shared) -> Result<(), String> {
    save(shared)?;
    let path = dump_path(shared);
    let ks = &shared.keyspace;
    for db in 0..ks.databases() {
        drop(ks.flush_db(db));
    }
    let file =
        std::fs::File::open(&path).map_err(|e| format!("Can't open {}: {e}", path.display()))?;
    load_into(shared, std::io::BufReader::new(file)).map_err(|e| e.to_string())?;
    Ok(())
}

/// Begins a background save: takes every loop's gate for an instant (the caller must
/// not hold its own) and starts the capture. Err with Redis's text if one runs.
pub fn begin_bgsave(shared: &Shared, gates_held: bool) -> Result<(), &'static str> {
    if shared.snapshots.bg_in_progress.swap(true, Ordering::AcqRel) {
        return Err("ERR Background save already in progress");
    }
    {
        let _gates = shared.all_gates(gates_held);
        // A replica's full sync replacing the data set began while this waited for the
        // gates: a save now would write half a data set over the last whole one.
        if shared.replica.is_loading() {
            shared.snapshots.bg_in_progress.store(false, Ordering::Release);
            return Err("LOADING Redis is loading the dataset in memory");
        }
        begin_capture_locked(shared, Job::Dump);
    }
    crate::log::notice("Background saving started (without fork)");
    Ok(())
}

/// Starts the capture for `job`. The caller holds every loop's gate and has set
/// `bg_in_progress` (one capture at a time).
pub fn begin_capture_locked(shared: &Shared, job: Job) {
    let snap = &shared.snapshots;
    let ks = &shared.keyspace;
    let now_ms = ks.now_ms();
    *snap.bg_counts.lock() = (0..ks.databases()).map(|db| ks.db_counts(db)).collect();
    *snap.bg_functions.lock() = shared.functions.codes();
    snap.bg_started_ms.store(now_ms, Ordering::Relaxed);
    snap.writes_at_bg
        .store(shared.sum(|t| &t.writes), Ordering::Relaxed);
    snap.dump_abort.store(false, Ordering::Release);
    snap.dump_running.store(matches!(job, Job::Dump), Ordering::Release);
    // A replica's snapshot keeps the keys past their time by its clock, as it keeps
    // them itself until its master's DEL: a replica of this one must hold them too (its
    // master may yet PERSIST one). Redis's snapshots hold them as well.
    let live_at = if shared.replica.is_replica() { i64::MIN } else { now_ms };
    ks.begin_capture(live_at, shared.config.read().rdbcompression);
    snap.repl_stream_db.store(shared.repl.proxied_db().map_or(-1, |db| db as i64), Ordering::Relaxed);
    if matches!(job, Job::Dump | Job::Replicas) {
        // Replicas waiting for a snapshot start their stream here, at its point in time
        // (every gate held: no write is half done). A dump serves them from its file; a
        // disk-less capture is sent to them directly.
        let mut waiters = if matches!(job, Job::Dump) { snap.sync_waiters.lock() } else { snap.diskless_waiters.lock() };
        for (owner, client_id, line) in shared.repl.snapshot_begins(matches!(job, Job::Replicas)) {
            if !line.is_empty() {
                shared.post_mail(owner, crate::shared::Mail::output(client_id, line.into()));
            }
            waiters.push((owner, client_id));
        }
    }
    let dbs = snap.bg_counts.lock().iter().enumerate().filter(|(_, c)| c.0 > 0).map(|(db, _)| db).collect();
    shared.walk.begin(dbs, ks.shards_per_db(), shared.thread_stats.len());
    let mut st = snap.state.lock();
    st.pending = Some(job);
    snap.wake.notify_all();
    drop(st);
    // The loops do the walk: wake those sleeping.
    shared.wake_all();
}

/// FLUSHALL's part, as Redis's killing of its RDB child: a running background save of
/// `dbfilename` is abandoned (written after the flush, it would bring the flushed keys
/// back at the next start). Returns once the snapshot thread has let go of it (bounded).
/// A log rewrite's capture is left alone, as in Redis.
pub fn abort_dump(shared: &Shared) {
    let snap = &shared.snapshots;
    if !snap.dump_running.load(Ordering::Acquire) {
        return;
    }
    snap.dump_abort.store(true, Ordering::Release);
    shared.walk.wake_writer();
    let deadline = Instant::now() + Duration::from_secs(10);
    while snap.dump_running.load(Ordering::Acquire) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Ends the running capture, written out or abandoned.
fn end_capture(shared: &Shared) {
    shared.walk.end();
    shared.keyspace.end_capture();
}

/// The snapshot thread: writes out captures that BGSAVE, BGREWRITEAOF, a due save rule
/// or a due automatic log rewrite began.
pub fn run_saver(shared: Arc<Shared>) {
    let snap = &shared.snapshots;
    // This thread only copies finished shards to the file (the event loops encode them):
    // on a machine with no idle core it should yield to the loops, not take turns with
    // them. Linux applies nice per thread. Best effort: an error changes nothing else.
    // SAFETY: plain syscalls on the calling thread.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
    loop {
        let job = {
            let mut st = snap.state.lock();
            if st.pending.is_none() && !st.stop {
                snap.wake.wait_for(&mut st, Duration::from_millis(100));
            }
            if st.stop {
                return;
            }
            st.pending.take()
        };
        match job {
            Some(job) => write_capture(&shared, job),
            // A replica loading its master's snapshot: nothing to save yet (and a
            // capture's start would wait for the load's end, holding a loop up).
            None if shared.replica.is_loading() => {}
            None => {
                let free = !snap.bg_in_progress.load(Ordering::Acquire);
                if free && diskless_due(&shared) {
                    begin_diskless(&shared);
                } else if free && snap.bg_scheduled.swap(false, Ordering::AcqRel) {
                    let _ = begin_bgsave(&shared, false);
                } else if crate::aof::rewrite::auto_due(&shared) {
                    if let Err(e) = crate::aof::rewrite::begin(&shared, false) {
                        crate::log::warning(&e);
                    }
                } else if rule_due(&shared) {
                    let _ = begin_bgsave(&shared, false);
                }
            }
        }
    }
}

/// Asks the snapshot thread to stop (after the save it is writing, if any).
pub fn stop_saver(shared: &Shared) {
    let mut st = shared.snapshots.state.lock();
    st.stop = true;
    shared.snapshots.wake.notify_all();
}

/// True when a `save <seconds> <changes>` rule is due.
fn rule_due(shared: &Shared) -> bool {
    let snap = &shared.snapshots;
    if snap.bg_in_progress.load(Ordering::Acquire) {
        return false;
    }
    let rules = shared.config.read().save.clone();
    let words: Vec<&str> = rules.split_whitespace().collect();
    if words.is_empty() {
        return false;
    }
    let now_ms = store::Clock::System.now_ms();
    if !snap.last_ok.load(Ordering::Relaxed)
        && now_ms - snap.bg_failed_ms.load(Ordering::Relaxed) < 5000
    {
        return false;
    }
    let changes = shared
        .sum(|t| &t.writes)
        .saturating_sub(snap.writes_at_save.load(Ordering::Relaxed));
    let since_s = now_ms / 1000 - snap.last_save_s.load(Ordering::Relaxed);
    words.chunks(2).any(|pair| {
        match (
            pair.first().and_then(|s| s.parse::<i64>().ok()),
            pair.get(1).and_then(|c| c.parse::<u64>().ok()),
        ) {
            (Some(secs), Some(min_changes)) => {
                changes >= min_changes && min_changes > 0 && since_s >= secs
            }
            _ => false,
        }
    })
}

fn write_capture(shared: &Arc<Shared>, job: Job) {
    let snap = &shared.snapshots;
    let started = Instant::now();
    match job {
        Job::Dump => {
            let path = dump_path(shared);
            let result = write_captured_file(shared, &path, false);
            end_capture(shared);
            let aborted = snap.dump_abort.swap(false, Ordering::AcqRel);
            snap.dump_running.store(false, Ordering::Release);
            snap.bg_last_time_s
                .store(started.elapsed().as_secs() as i64, Ordering::Relaxed);
            let for_waiters = match &result {
                Ok(_) => Ok(path),
                Err(e) => Err(e.clone()),
            };
            match result {
                // Stopped by FLUSHALL, as Redis's killed child: not a failed save.
                Err(_) if aborted => crate::log::notice("Background saving stopped by FLUSHALL"),
                Ok((keys, _)) => {
                    snap.last_save_s.store(
                        snap.bg_started_ms.load(Ordering::Relaxed) / 1000,
                        Ordering::Relaxed,
                    );
                    snap.saves.fetch_add(1, Ordering::Relaxed);
                    snap.last_ok.store(true, Ordering::Relaxed);
                    snap.writes_at_save
                        .store(snap.writes_at_bg.load(Ordering::Relaxed), Ordering::Relaxed);
                    crate::log::notice(&format!(
                        "Background saving terminated with success: {keys} keys in {:.3} seconds",
                        started.elapsed().as_secs_f64()
                    ));
                }
                Err(e) => {
                    snap.last_ok.store(false, Ordering::Relaxed);
                    snap.bg_failed_ms
                        .store(store::Clock::System.now_ms(), Ordering::Relaxed);
                    crate::log::warning(&format!("Background saving error: {e}"));
                }
            }
            snap.bg_in_progress.store(false, Ordering::Release);
            send_to_sync_waiters(shared, for_waiters);
            return;
        }
        Job::Replicas => {
            send_capture_to_replicas(shared);
            end_capture(shared);
        }
        Job::AofBase(job) => {
            // (The log's state, even if the log was turned off meanwhile: the capture must
            // end, and the rewrite's end finds it voided.)
            let aof = shared.aof.object();
            let dir = aof.files.lock().as_ref().map(|f| f.dir.clone());
            let result = match dir {
                Some(dir) => write_captured_file(shared, &dir.join(&job.base.name), true),
                None => Err("the log's files are not open".to_string()),
            };
            end_capture(shared);
            match result.and_then(|(_, size)| crate::aof::rewrite::finish(shared, &job, size)) {
                Ok(()) => {}
                Err(e) => crate::aof::rewrite::failed(aof, &e),
            }
            crate::aof::rewrite::ended(aof, started.elapsed().as_secs() as i64);
        }
    }
    snap.bg_in_progress.store(false, Ordering::Release);
}

/// SYNC, or PSYNC, of a client that asked for a snapshot only (`REPLCONF rdb-only 1`, as
/// `redis-cli --rdb` does): the client waits for the next save of `dbfilename`, started
/// now unless one is running (one after a running log rewrite), and receives the file
/// as Redis's disk-based sync sends it, `$<length>` then the RDB. The caller blocks the
/// client; [`send_to_sync_waiters`] sends the file a mebibyte at a time as the client
/// reads it (`stream_snapshot`), then unblocks it.
pub fn wait_for_sync_snapshot(shared: &Shared, owner: usize, client_id: u64, addr: &str) -> Result<(), &'static str> {
    let snap = &shared.snapshots;
    // Not held while a capture begins: that takes this lock too, for replicas.
    snap.sync_waiters.lock().push((owner, client_id));
    if !snap.bg_in_progress.load(Ordering::Acquire) {
        if begin_bgsave(shared, false).is_err() {
            // The snapshot thread began one meanwhile: it serves this client.
            snap.bg_scheduled.store(true, Ordering::Release);
        }
    } else if !snap.dump_running.load(Ordering::Acquire) {
        // A log rewrite's capture runs: the save starts when it ends.
        snap.bg_scheduled.store(true, Ordering::Release);
    }
    snap.syncs_full.fetch_add(1, Ordering::Relaxed);
    crate::log::notice(&format!("Replica {addr} asks for a snapshot (rdb-only): full sync from the next save"));
    Ok(())
}

/// A replica asks for a full sync (`replication::master`): it registered in the
/// replication stream as waiting for a snapshot, which begins now, or after the capture
/// running (a running save began before the replica's stream did, so it cannot serve
/// it). The replica receives `+FULLRESYNC` when its capture begins
/// ([`begin_capture_locked`]), then the file as [`wait_for_sync_snapshot`]'s clients do.
/// The caller holds every loop's gate.
pub fn begin_for_replicas(shared: &Shared, capa_eof: bool) {
    let snap = &shared.snapshots;
    snap.syncs_full.fetch_add(1, Ordering::Relaxed);
    let (diskless, delay_s) = {
        let c = shared.config.read();
        // A replica that cannot read the disk-less form (no `capa eof`) gets a file.
        let diskless = capa_eof && c.recorded.get("repl-diskless-sync").is_none_or(|v| v == "yes");
        let delay: i64 = c.recorded.get("repl-diskless-sync-delay").and_then(|v| v.parse().ok()).unwrap_or(5);
        (diskless, delay)
    };
    if diskless {
        // repl-diskless-sync (Redis's default): the capture goes to the replicas with
        // no file, after `repl-diskless-sync-delay` seconds so that others can join it
        // (the snapshot thread starts it), or after the capture running.
        let due = store::Clock::System.now_ms() + delay_s.max(0).saturating_mul(1000);
        if delay_s > 0 || snap.bg_in_progress.load(Ordering::Acquire) {
            let _ = snap.diskless_due_ms.compare_exchange(0, due, Ordering::AcqRel, Ordering::Relaxed);
            snap.wake.notify_all();
            return;
        }
        if snap.bg_in_progress.swap(true, Ordering::AcqRel) {
            let _ = snap.diskless_due_ms.compare_exchange(0, due, Ordering::AcqRel, Ordering::Relaxed);
            return;
        }
        begin_capture_locked(shared, Job::Replicas);
        crate::log::notice("Starting BGSAVE for SYNC with target: replicas sockets (without fork)");
        return;
    }
    // A save running (or one the snapshot thread is about to begin, waiting for the
    // gates this caller holds): another one after it. (One that has not begun its
    // capture yet serves the replica too; the second save then costs a save.)
    if begin_bgsave(shared, true).is_err() {
        snap.bg_scheduled.store(true, Ordering::Release);
    }
}

/// Client `id` as the log names it: a replica by its IP and listening port, as Redis;
/// a snapshot-only client by its address (its id once it is gone).
fn replica_name(shared: &Shared, id: u64) -> String {
    shared.repl.name(id).unwrap_or_else(|| shared.clients.lock().get(&id).map_or_else(|| format!("id={id}"), |c| c.addr.clone()))
}

/// After a save of `dbfilename`: its file (or why there is none) to every client waiting
/// for it (SYNC after `REPLCONF rdb-only 1`). The file is sent by a thread of its own,
/// so that the snapshot thread goes on with other saves.
fn send_to_sync_waiters(shared: &Arc<Shared>, saved: Result<PathBuf, String>) {
    let waiters = std::mem::take(&mut *shared.snapshots.sync_waiters.lock());
    if waiters.is_empty() {
        return;
    }
    let opened = saved.and_then(|path| {
        let file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        let len = file.metadata().map_err(|e| e.to_string())?.len();
        Ok((file, len))
    });
    let (file, len) = match opened {
        Ok(f) => f,
        Err(e) => {
            let reply: bytes::Bytes = format!("-ERR the snapshot for the sync could not be made: {e}\r\n").into_bytes().into();
            for (owner, client_id) in waiters {
                if shared.repl.remove(client_id) {
                    // A replica retries its sync from the start.
                    shared.kill_client(client_id);
                    continue;
                }
                shared.post_mail(owner, crate::shared::Mail::unblocking(client_id, reply.clone()));
            }
            return;
        }
    };
    let sender = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("sync-sender".into())
        .spawn(move || stream_snapshot(&sender, file, len, waiters));
    if let Err(e) = spawned {
        crate::log::warning(&format!("Can't start the thread that sends a snapshot: {e}"));
    }
}

/// Pending output past which the sender waits for a client to read (so a snapshot
/// costs the server about this much per client, not the whole file).
const SYNC_AHEAD_BYTES: usize = 8 << 20;
/// A client that reads nothing of its snapshot for this long is closed.
const SYNC_STALL: Duration = Duration::from_secs(60);

/// Sends `$<len>` and the file to each waiting client, a mebibyte at a time, each piece
/// once the client's pending output is under [`SYNC_AHEAD_BYTES`]; then unblocks it.
fn stream_snapshot(shared: &Shared, mut file: std::fs::File, len: u64, mut waiters: Vec<(usize, u64)>) {
    use std::io::Read;
    let post = |to: &(usize, u64), bytes: bytes::Bytes, unblock: bool| {
        shared.post_mail(to.0, crate::shared::Mail { unblock, ..crate::shared::Mail::output(to.1, bytes) });
    };
    let header: bytes::Bytes = format!("${len}\r\n").into_bytes().into();
    for w in &waiters {
        post(w, header.clone(), false);
    }
    let mut buf = vec![0u8; 1 << 20];
    let mut sent = 0u64;
    while sent < len && !waiters.is_empty() {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                crate::log::warning(&format!("Reading the snapshot being sent: {e}"));
                break;
            }
        };
        let piece = bytes::Bytes::copy_from_slice(&buf[..n]);
        waiters.retain(|w| wait_for_room(shared, w.1));
        for w in &waiters {
            post(w, piece.clone(), false);
        }
        sent += n as u64;
    }
    for w in &waiters {
        if sent == len {
            post(w, bytes::Bytes::new(), true);
            if shared.repl.is_replica(w.1) {
                crate::log::notice(&format!("Synchronization with replica {} succeeded", replica_name(shared, w.1)));
                // Its stream next, gathered since the snapshot's point in time.
                shared.repl.transfer_done(w.1, store::Clock::System.now_ms());
            } else {
                crate::log::notice(&format!("Synchronization with replica {} succeeded (snapshot only)", replica_name(shared, w.1)));
            }
        } else {
            // A short file would be taken for a whole one: close the client instead.
            shared.kill_client(w.1);
        }
    }
}

/// Waits until client `id`'s pending output is under [`SYNC_AHEAD_BYTES`]. False when it
/// is gone, or read nothing for [`SYNC_STALL`] (then it is closed).
fn wait_for_room(shared: &Shared, id: u64) -> bool {
    let started = Instant::now();
    loop {
        let Some(info) = shared.clients.lock().get(&id).cloned() else { return false };
        if info.killed.load(Ordering::SeqCst) {
            return false;
        }
        if info.obuf.load(Ordering::Relaxed) < SYNC_AHEAD_BYTES {
            return true;
        }
        if started.elapsed() > SYNC_STALL {
            crate::log::warning(&format!("Closing replica {id}: it read nothing of its snapshot for {} s", SYNC_STALL.as_secs()));
            shared.kill_client(id);
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether a disk-less sync is due now (some replica waits for it).
fn diskless_due(shared: &Shared) -> bool {
    let due = shared.snapshots.diskless_due_ms.load(Ordering::Acquire);
    if due == 0 {
        return false;
    }
    if store::Clock::System.now_ms() < due {
        // `repl-diskless-sync-max-replicas`: as many replicas as expected wait, the
        // transfer need not wait out the delay (Redis 7.0).
        let max: usize = shared.config.read().recorded.get("repl-diskless-sync-max-replicas").and_then(|v| v.parse().ok()).unwrap_or(0);
        if max == 0 || shared.repl.count_waiting_for_snapshot() < max {
            return false;
        }
    }
    if !shared.repl.waits_for_snapshot() {
        // They left (or a dump took them): nothing to send.
        shared.snapshots.diskless_due_ms.store(0, Ordering::Release);
        return false;
    }
    true
}

/// Begins the disk-less capture for the replicas waiting (the snapshot thread, free).
fn begin_diskless(shared: &Shared) {
    let snap = &shared.snapshots;
    let _gates = shared.all_gates(false);
    if snap.bg_in_progress.swap(true, Ordering::AcqRel) {
        return;
    }
    snap.diskless_due_ms.store(0, Ordering::Release);
    begin_capture_locked(shared, Job::Replicas);
    crate::log::notice("Starting BGSAVE for SYNC with target: replicas sockets (without fork)");
}

/// The end of a disk-less RDB: `$EOF:<mark>` announces it, the mark ends it.
fn eof_mark() -> String {
    (0..40).map(|_| char::from_digit(fastrand::u32(0..16), 16).unwrap_or('0')).collect()
}

/// Where a disk-less capture is written: pieces of about a mebibyte posted to each
/// replica once its pending output has room (`wait_for_room`); an error once no replica
/// is left, which stops the walk.
struct ReplicaSink<'a> {
    shared: &'a Shared,
    waiters: Vec<(usize, u64)>,
    buf: Vec<u8>,
    sent: u64,
}

impl ReplicaSink<'_> {
    fn post(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let shared = self.shared;
        self.waiters.retain(|w| wait_for_room(shared, w.1));
        if self.waiters.is_empty() {
            return Err(std::io::Error::other("no replica left to send the snapshot to"));
        }
        let piece = bytes::Bytes::copy_from_slice(bytes);
        for w in &self.waiters {
            shared.post_mail(w.0, crate::shared::Mail::output(w.1, piece.clone()));
        }
        self.sent += bytes.len() as u64;
        Ok(())
    }
}

impl std::io::Write for ReplicaSink<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= 1 << 20 {
            let piece = std::mem::take(&mut self.buf);
            self.post(&piece)?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            let piece = std::mem::take(&mut self.buf);
            self.post(&piece)?;
        }
        Ok(())
    }
}

/// A disk-less full sync: the running capture written straight to the replicas that
/// waited for it, as Redis's socket target sends it (`$EOF:<mark>`, the RDB, the mark),
/// then each goes online. A replica that fails or falls behind is closed (it syncs
/// again); no file is written.
fn send_capture_to_replicas(shared: &Shared) {
    let waiters = std::mem::take(&mut *shared.snapshots.diskless_waiters.lock());
    let mark = eof_mark();
    let header: bytes::Bytes = format!("$EOF:{mark}\r\n").into_bytes().into();
    for w in &waiters {
        shared.post_mail(w.0, crate::shared::Mail::output(w.1, header.clone()));
    }
    let started = Instant::now();
    let sink = ReplicaSink { shared, waiters: waiters.clone(), buf: Vec::with_capacity(1 << 20), sent: 0 };
    let result = write_capture_to(shared, sink, false).and_then(|(_, mut sink)| {
        sink.buf.extend_from_slice(mark.as_bytes());
        std::io::Write::flush(&mut sink)?;
        Ok(sink)
    });
    match result {
        Ok(sink) => {
            for w in &sink.waiters {
                shared.post_mail(w.0, crate::shared::Mail::unblocking(w.1, bytes::Bytes::new()));
                // Online at its first ACK: nothing may follow the mark before it read it.
                // (The unblock above lets its loop read that ACK, which may come before
                // the next line: then it goes online here.)
                let online = shared.repl.transfer_sent(w.1, store::Clock::System.now_ms());
                crate::log::notice(&format!("Streamed RDB transfer with replica {} succeeded: waiting for REPLCONF ACK from replica to enable streaming", replica_name(shared, w.1)));
                if online {
                    crate::log::notice(&format!("Synchronization with replica {} succeeded", replica_name(shared, w.1)));
                }
            }
            crate::log::notice(&format!(
                "Disk-less sync: {} bytes sent in {:.3} seconds",
                sink.sent,
                started.elapsed().as_secs_f64()
            ));
            // Those that fell behind or left were dropped by the sink.
            for w in waiters.iter().filter(|w| !sink.waiters.contains(w)) {
                shared.repl.remove(w.1);
                shared.kill_client(w.1);
            }
        }
        Err(e) => {
            crate::log::warning(&format!("Disk-less sync failed: {e}"));
            for w in &waiters {
                shared.repl.remove(w.1);
                shared.kill_client(w.1);
            }
        }
    }
}

/// Writes the running capture as an RDB to `out` (the shards in order as the event
/// loops finish them, each as it was at the capture): (keys, what `out` became).
fn write_capture_to<W: std::io::Write>(shared: &Shared, out: W, aof_base: bool) -> std::io::Result<(u64, W)> {
    let counts = shared.snapshots.bg_counts.lock().clone();
    let at_ms = shared.snapshots.bg_started_ms.load(Ordering::Relaxed);
    let stream_db = usize::try_from(shared.snapshots.repl_stream_db.load(Ordering::Relaxed)).ok().filter(|_| !aof_base);
    let (compress, checksum) = {
        let c = shared.config.read();
        (c.rdbcompression, c.rdbchecksum)
    };
    let aux = rdb_aux(at_ms, aof_base, stream_db);
    let aux: Vec<(&str, &[u8])> = aux.iter().map(|(k, v)| (*k, v.as_bytes())).collect();
    let mut w = store::rdb::RdbWriter::new(out, &aux, compress, checksum)?;
    let functions = shared.snapshots.bg_functions.lock().clone();
    for code in &functions {
        w.function(code)?;
    }
    let keys = write_captured_shards(shared, &mut w, &counts, aof_base)?;
    Ok((keys, w.finish()?))
}

/// The capture's shards into `w`, database by database, as the walk finishes them.
fn write_captured_shards<W: std::io::Write>(shared: &Shared, w: &mut store::rdb::RdbWriter<W>, counts: &[(usize, usize)], aof_base: bool) -> std::io::Result<u64> {
    let mut keys = 0u64;
    let mut db_now = None;
    let give_up = || {
        shared.shutdown.load(Ordering::Acquire) || (!aof_base && shared.snapshots.dump_abort.load(Ordering::Acquire))
    };
    let key_delay_us = shared.snapshots.key_save_delay_us.load(Ordering::Relaxed);
    let shards = shared.keyspace.shards_per_db().max(1) as u64;
    while let Some((db, bytes)) = shared.walk.next_shard(give_up).map_err(std::io::Error::other)? {
        if db_now != Some(db) {
            let (n, volatile) = counts[db];
            w.select_db(db, n, volatile)?;
            keys += n as u64;
            db_now = Some(db);
        }
        if key_delay_us != 0 {
            pause(save_delay(key_delay_us, counts[db].0 as u64) / shards as u32, &give_up)?;
        }
        w.raw(&bytes)?;
    }
    Ok(keys)
}

/// What `rdb-key-save-delay` adds to a save of `keys` keys: `us` each, or for a negative
/// -N one microsecond per N keys (what Redis's per-key chance adds on average). A
/// background save's keys come to the writer a shard at a time, already encoded by the
/// event loops; it pauses before each shard for the database's share, so that the save
/// takes as long as Redis's with the same setting, without slowing the loops' walk.
fn save_delay(us: i64, keys: u64) -> Duration {
    let total_us = if us > 0 { keys.saturating_mul(us.unsigned_abs()) } else { keys / us.unsigned_abs() };
    Duration::from_micros(total_us)
}

/// Sleeps for `d` in short naps, giving up when `give_up` says so (FLUSHALL, shutdown).
fn pause(d: Duration, give_up: &dyn Fn() -> bool) -> std::io::Result<()> {
    let until = Instant::now() + d;
    loop {
        if give_up() {
            return Err(std::io::Error::other("the save was stopped"));
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}

/// Writes the running capture: the shards in order as the event loops finish them
/// (`walk.rs`), each as it was at the capture. Returns (keys, file size).
fn write_captured_file(shared: &Shared, path: &Path, aof_base: bool) -> Result<(u64, u64), String> {
    let counts = shared.snapshots.bg_counts.lock().clone();
    let at_ms = shared.snapshots.bg_started_ms.load(Ordering::Relaxed);
    let stream_db = usize::try_from(shared.snapshots.repl_stream_db.load(Ordering::Relaxed)).ok().filter(|_| !aof_base);
    let functions = shared.snapshots.bg_functions.lock().clone();
    write_atomically(shared, path, at_ms, aof_base, stream_db, &functions, |w| write_captured_shards(shared, w, &counts, aof_base))
}

/// True when `save` rules are configured (SHUTDOWN without an argument then saves).
pub fn has_save_rules(shared: &Shared) -> bool {
    !shared.config.read().save.trim().is_empty()
}
