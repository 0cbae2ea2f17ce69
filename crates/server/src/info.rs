//! INFO: renders the sections with Redis 7.0's field names, so that dashboards and
//! exporters that read Redis read Basalt. Fields of features not built yet (persistence,
//! replication) report Redis's values for "off". Also owns the per-second sampler behind
//! `instantaneous_ops_per_sec` and the memory readings.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use parking_lot::Mutex;

use crate::command::table::CommandTable;
use crate::shared::Shared;

/// Samples of (time ms, commands, input bytes, output bytes), taken every 100 ms, for
/// the instantaneous rates.
#[derive(Default)]
pub struct Sampler {
    samples: std::collections::VecDeque<(i64, u64, u64, u64)>,
    pub peak_memory: u64,
}

static SAMPLER: Mutex<Sampler> = Mutex::new(Sampler {
    samples: std::collections::VecDeque::new(),
    peak_memory: 0,
});

/// Takes one sample; called by the main thread every 100 ms.
pub fn sample(shared: &Shared) {
    let now = store::Clock::System.now_ms();
    let cmds = shared.sum(|t| &t.total_commands);
    let inb = shared.sum(|t| &t.net_input_bytes);
    let outb = shared.sum(|t| &t.net_output_bytes);
    let used = crate::allocator::allocated_bytes();
    let mut s = SAMPLER.lock();
    s.samples.push_back((now, cmds, inb, outb));
    while s.samples.len() > 16 {
        s.samples.pop_front();
    }
    s.peak_memory = s.peak_memory.max(used);
}

/// Per-second rates over the sampled window: (ops, input kbps, output kbps).
fn rates() -> (u64, f64, f64) {
    let s = SAMPLER.lock();
    match (s.samples.front(), s.samples.back()) {
        (Some(a), Some(b)) if b.0 > a.0 => {
            let secs = (b.0 - a.0) as f64 / 1000.0;
            // CONFIG RESETSTAT zeroes the counters between two samples: a window that
            // spans it reads 0, not a wrapped difference (it panicked in debug builds).
            (
                (b.1.saturating_sub(a.1) as f64 / secs) as u64,
                b.2.saturating_sub(a.2) as f64 / secs / 1024.0,
                b.3.saturating_sub(a.3) as f64 / secs / 1024.0,
            )
        }
        _ => (0, 0.0, 0.0),
    }
}

/// The most bytes allocated at any sample (INFO used_memory_peak, MEMORY STATS).
pub fn peak_allocated() -> u64 {
    SAMPLER.lock().peak_memory
}

/// Resident set size of the process, from /proc/self/statm.
pub fn rss_bytes() -> u64 {
    let page = 4096u64;
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        .map_or(0, |pages| pages * page)
}

fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        })
        .map_or(0, |kb| kb * 1024)
}

/// Redis's bytesToHuman.
pub fn human(n: u64) -> String {
    let n_f = n as f64;
    if n < 1024 {
        format!("{n}B")
    } else if n < 1024 * 1024 {
        format!("{:.2}K", n_f / 1024.0)
    } else if n < 1024 * 1024 * 1024 {
        format!("{:.2}M", n_f / (1024.0 * 1024.0))
    } else if n < 1024u64.pow(4) {
        format!("{:.2}G", n_f / (1024.0 * 1024.0 * 1024.0))
    } else {
        format!("{:.2}T", n_f / 1024f64.powi(4))
    }
}

/// (system, user) CPU seconds of the process or thread (`who`: RUSAGE_SELF, RUSAGE_THREAD).
pub(crate) fn rusage(who: i32) -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass; who is RUSAGE_SELF/THREAD.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut ru) } != 0 {
        return (0.0, 0.0);
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    (t(ru.ru_stime), t(ru.ru_utime))
}

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];

/// Renders INFO for the requested section names (lower case; empty = default).
pub fn render(shared: &Shared, table: &CommandTable, requested: &[String]) -> String {
    let mut wanted: Vec<&str> = Vec::new();
    if requested.is_empty() || requested.iter().any(|s| s == "default") {
        wanted.extend(DEFAULT_SECTIONS);
    }
    if requested.iter().any(|s| s == "all" || s == "everything") {
        wanted.extend(DEFAULT_SECTIONS);
        wanted.push("commandstats");
        wanted.push("latencystats");
    }
    for s in requested {
        if !matches!(s.as_str(), "default" | "all" | "everything") {
            wanted.push(s.as_str());
        }
    }
    let mut out = String::with_capacity(4096);
    let mut done: Vec<&str> = Vec::new();
    for section in wanted {
        if done.contains(&section) {
            continue;
        }
        done.push(section);
        let before = out.len();
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let len_with_sep = out.len();
        let known = write_section(shared, table, section, &mut out);
        if !known {
            out.truncate(before);
        } else if out.len() == len_with_sep {
            out.truncate(before);
        }
    }
    out
}

fn write_section(shared: &Shared, table: &CommandTable, section: &str, o: &mut String) -> bool {
    let cfg = shared.config.read().clone();
    let now_ms = store::Clock::System.now_ms();
    let uptime = shared.started.elapsed().as_secs();
    match section {
        "server" => {
            let _ = write!(
                o,
                "# Server\r\nredis_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\nmultiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\ngcc_version:0.0.0\r\nprocess_id:{}\r\nprocess_supervised:no\r\nrun_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:{}\r\nconfigured_hz:{}\r\nlru_clock:{}\r\nexecutable:{}\r\nconfig_file:{}\r\nio_threads_active:0\r\nbasalt_version:{}\r\nbasalt_threads:{}\r\nbasalt_io_engine:{}\r\nbasalt_shards_per_db:{}\r\n",
                crate::version::REDIS_VERSION,
                std::env::consts::OS,
                std::env::consts::ARCH,
                std::process::id(),
                shared.run_id,
                cfg.port,
                now_ms * 1000,
                uptime,
                uptime / 86_400,
                cfg.hz,
                cfg.hz,
                // Redis's: seconds, 24 bits.
                (now_ms / 1000) & 0xff_ffff,
                std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
                cfg.config_file.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
                crate::VERSION,
                cfg.threads,
                shared.io_engine.get().copied().unwrap_or("none"),
                shared.keyspace.shards_per_db(),
            );
            shared.loops.render_info(o);
        }
        "clients" => {
            let _ = write!(
                o,
                "# Clients\r\nconnected_clients:{}\r\ncluster_connections:0\r\nmaxclients:{}\r\nclient_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\nblocked_clients:{}\r\ntracking_clients:{}\r\nclients_in_timeout_table:0\r\n",
                shared.connected_clients.load(Ordering::Relaxed),
                cfg.maxclients,
                shared.blocked_count.load(Ordering::Relaxed),
                shared.tracking.stats().0
            );
        }
        "memory" => {
            let used = crate::allocator::allocated_bytes();
            let rss = rss_bytes();
            let peak = SAMPLER.lock().peak_memory.max(used);
            let (active, resident) = crate::allocator::active_resident();
            let total = total_system_memory();
            let frag = if used > 0 { rss as f64 / used as f64 } else { 0.0 };
            let (lazy_pending, lazy_freed) = (shared.lazyfree.pending(), shared.lazyfree.freed());
            let lua = crate::script::engine::used_memory();
            let (scripts, script_bytes) = shared.scripts.usage();
            let _ = write!(
                o,
                "# Memory\r\nused_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\nused_memory_rss_human:{}\r\nused_memory_peak:{peak}\r\nused_memory_peak_human:{}\r\nused_memory_peak_perc:{:.2}%\r\nused_memory_overhead:0\r\nused_memory_startup:0\r\nused_memory_dataset:{used}\r\nused_memory_dataset_perc:100.00%\r\nallocator_allocated:{used}\r\nallocator_active:{active}\r\nallocator_resident:{resident}\r\ntotal_system_memory:{total}\r\ntotal_system_memory_human:{}\r\nused_memory_lua:{lua}\r\nused_memory_vm_eval:{lua}\r\nused_memory_lua_human:{}\r\nused_memory_scripts_eval:{script_bytes}\r\nnumber_of_cached_scripts:{scripts}\r\nnumber_of_functions:0\r\nnumber_of_libraries:0\r\nused_memory_vm_functions:0\r\nused_memory_vm_total:{lua}\r\nused_memory_vm_total_human:{}\r\nused_memory_functions:0\r\nused_memory_scripts:{script_bytes}\r\nused_memory_scripts_human:{}\r\nmaxmemory:{}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{}\r\nallocator_frag_ratio:{:.2}\r\nallocator_frag_bytes:{}\r\nallocator_rss_ratio:{:.2}\r\nallocator_rss_bytes:{}\r\nrss_overhead_ratio:1.00\r\nrss_overhead_bytes:0\r\nmem_fragmentation_ratio:{frag:.2}\r\nmem_fragmentation_bytes:{}\r\nmem_not_counted_for_evict:0\r\nmem_replication_backlog:0\r\nmem_total_replication_buffers:0\r\nmem_clients_slaves:0\r\nmem_clients_normal:0\r\nmem_cluster_links:0\r\nmem_aof_buffer:0\r\nmem_allocator:jemalloc-5.3.0\r\nactive_defrag_running:0\r\nlazyfree_pending_objects:{lazy_pending}\r\nlazyfreed_objects:{lazy_freed}\r\n",
                human(used),
                human(rss),
                human(peak),
                if peak > 0 { used as f64 * 100.0 / peak as f64 } else { 0.0 },
                human(total),
                human(lua as u64),
                human(lua as u64),
                human(script_bytes as u64),
                cfg.maxmemory,
                human(cfg.maxmemory),
                cfg.maxmemory_policy,
                if used > 0 { active as f64 / used as f64 } else { 0.0 },
                active.saturating_sub(used),
                if active > 0 { resident as f64 / active as f64 } else { 0.0 },
                resident.saturating_sub(active),
                rss as i64 - used as i64,
            );
        }
        "persistence" => {
            let snap = &shared.snapshots;
            let changes = shared.sum(|t| &t.writes).saturating_sub(snap.writes_at_save.load(Ordering::Relaxed));
            let rdb_status = if snap.last_ok.load(Ordering::Relaxed) { "ok" } else { "err" };
            let saves = snap.saves.load(Ordering::Relaxed);
            let in_bg = snap.bg_in_progress.load(Ordering::Relaxed);
            let bg = u8::from(in_bg);
            let bg_last = snap.bg_last_time_s.load(Ordering::Relaxed);
            let bg_current = if in_bg {
                (store::Clock::System.now_ms() - snap.bg_started_ms.load(Ordering::Relaxed)) / 1000
            } else {
                -1
            };
            // Bytes held for shards that commands reached before the snapshot thread
            // (Basalt's counterpart of the copy-on-write pages of a fork).
            let cow = if in_bg { shared.keyspace.capture_pending_bytes() } else { 0 };
            let loaded = snap.loaded_keys.load(Ordering::Relaxed);
            let loaded_expired = snap.loaded_expired.load(Ordering::Relaxed);
            let aof = shared.aof.as_ref();
            // (A rewrite's figures stay once the log is turned off, as Redis's.)
            let rw = Some(&shared.aof.object().rewrite);
            let rw_in_progress = rw.is_some_and(|r| r.in_progress.load(Ordering::Relaxed));
            let rw_in = u8::from(rw_in_progress);
            let rw_sched = u8::from(rw.is_some_and(|r| r.scheduled.load(Ordering::Relaxed)));
            let rw_last = rw.map_or(-1, |r| r.last_time_s.load(Ordering::Relaxed));
            let rw_current = match rw {
                Some(r) if rw_in_progress => (store::Clock::System.now_ms() - r.started_ms.load(Ordering::Relaxed)) / 1000,
                _ => -1,
            };
            let rw_status = if rw.is_none_or(|r| r.last_ok.load(Ordering::Relaxed)) { "ok" } else { "err" };
            let rw_count = rw.map_or(0, |r| r.rewrites.load(Ordering::Relaxed));
            let rw_fail = rw.map_or(0, |r| r.consecutive_failures.load(Ordering::Relaxed));
            let (aof_enabled, write_status) = match aof {
                Some(a) if !a.write_ok.load(Ordering::Relaxed) => (1, "err"),
                Some(_) => (1, "ok"),
                None => (0, "ok"),
            };
            let load = shared.loading.figures().filter(|_| shared.replica.is_loading());
            let admit = shared.replica.admit_bits();
            let loading = u8::from(load.is_some() && admit & crate::replication::role::LOADING != 0);
            let async_loading = u8::from(load.is_some() && admit & crate::replication::role::ASYNC_LOADING != 0);
            let _ = write!(
                o,
                "# Persistence\r\nloading:{loading}\r\nasync_loading:{async_loading}\r\ncurrent_cow_peak:0\r\ncurrent_cow_size:{cow}\r\ncurrent_cow_size_age:0\r\ncurrent_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\nrdb_changes_since_last_save:{changes}\r\nrdb_bgsave_in_progress:{bg}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{rdb_status}\r\nrdb_last_bgsave_time_sec:{bg_last}\r\nrdb_current_bgsave_time_sec:{bg_current}\r\nrdb_saves:{saves}\r\nrdb_last_cow_size:0\r\nrdb_last_load_keys_expired:{loaded_expired}\r\nrdb_last_load_keys_loaded:{loaded}\r\naof_enabled:{aof_enabled}\r\naof_rewrite_in_progress:{rw_in}\r\naof_rewrite_scheduled:{rw_sched}\r\naof_last_rewrite_time_sec:{rw_last}\r\naof_current_rewrite_time_sec:{rw_current}\r\naof_last_bgrewrite_status:{rw_status}\r\naof_rewrites:{rw_count}\r\naof_rewrites_consecutive_failures:{rw_fail}\r\naof_last_write_status:{write_status}\r\naof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n",
                snap.last_save_s.load(Ordering::Relaxed)
            );
            if let Some(a) = aof {
                // Redis adds these while the log is on.
                let current = a.current_size();
                let _ = write!(
                    o,
                    "aof_current_size:{current}\r\naof_base_size:{}\r\naof_pending_rewrite:0\r\naof_buffer_length:{}\r\naof_pending_bio_fsync:0\r\naof_delayed_fsync:{}\r\n",
                    a.base_size.load(Ordering::Relaxed),
                    a.buffered(),
                    a.delayed_fsync.load(Ordering::Relaxed),
                );
                // Basalt's own: the durable writes (loop commits and writer fsyncs).
                let s = &a.syncs;
                let _ = write!(
                    o,
                    "basalt_aof_syncs:{}\r\nbasalt_aof_sync_usec:{}\r\nbasalt_aof_sync_max_usec:{}\r\nbasalt_aof_synced_bytes:{}\r\n",
                    s.count.load(Ordering::Relaxed),
                    s.usec.load(Ordering::Relaxed),
                    s.max_usec.load(Ordering::Relaxed),
                    s.bytes.load(Ordering::Relaxed),
                );
                let (in_flight, peak) = a.commit_pipeline();
                let _ = write!(
                    o,
                    "basalt_aof_commits_in_flight:{in_flight}\r\nbasalt_aof_commits_in_flight_peak:{peak}\r\nbasalt_aof_writer_rounds_inline:{}\r\n",
                    a.writer_rounds_inline.load(Ordering::Relaxed)
                );
            }
            if let Some(l) = load {
                // Redis adds these while it loads (after the log's fields).
                let (started, total, read, used_mem) = (l.started_ms, l.total, l.read, l.rdb_used_mem);
                // Redis's estimate: whole seconds, 1 until a second has passed.
                let elapsed_s = (store::Clock::System.now_ms() / 1000 - started / 1000).max(0);
                let perc = if total > 0 { read as f64 * 100.0 / total as f64 } else { 0.0 };
                let remaining = if total > 0 { (total - read).max(0) } else { 1 };
                let eta = if elapsed_s == 0 { 1 } else { elapsed_s.saturating_mul(remaining) / (read + 1) };
                let _ = write!(
                    o,
                    "loading_start_time:{}\r\nloading_total_bytes:{total}\r\nloading_rdb_used_mem:{used_mem}\r\nloading_loaded_bytes:{read}\r\nloading_loaded_perc:{perc:.2}\r\nloading_eta_seconds:{eta}\r\n",
                    started / 1000
                );
            }
        }
        "stats" => {
            let (ops, inkbps, outkbps) = rates();
            let ks = shared.keyspace.stats();
            // One lock, released before formatting (a second lock in the same
            // expression would deadlock).
            let (channels, patterns, shard_channels) = {
                let ps = shared.pubsub.lock();
                (ps.channels.len(), ps.patterns.len(), ps.shard_channels.len())
            };
            let (_, tracking_keys, tracking_items, tracking_prefixes) = shared.tracking.stats();
            let evicted = shared.sum(|t| &t.evicted_keys);
            let sync_full = shared.snapshots.syncs_full.load(Ordering::Relaxed);
            let _ = write!(
                o,
                "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ninstantaneous_ops_per_sec:{ops}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\ntotal_net_repl_input_bytes:0\r\ntotal_net_repl_output_bytes:0\r\ninstantaneous_input_kbps:{inkbps:.2}\r\ninstantaneous_output_kbps:{outkbps:.2}\r\ninstantaneous_input_repl_kbps:0.00\r\ninstantaneous_output_repl_kbps:0.00\r\nrejected_connections:{}\r\nsync_full:{sync_full}\r\nsync_partial_ok:{}\r\nsync_partial_err:{}\r\nexpired_keys:{}\r\nexpired_stale_perc:0.00\r\nexpired_time_cap_reached_count:0\r\nexpire_cycle_cpu_milliseconds:0\r\nevicted_keys:{evicted}\r\nevicted_clients:0\r\ntotal_eviction_exceeded_time:0\r\ncurrent_eviction_exceeded_time:0\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\npubsubshard_channels:{shard_channels}\r\nlatest_fork_usec:0\r\ntotal_forks:0\r\nmigrate_cached_sockets:0\r\nslave_expires_tracked_keys:0\r\nactive_defrag_hits:0\r\nactive_defrag_misses:0\r\nactive_defrag_key_hits:0\r\nactive_defrag_key_misses:0\r\ntotal_active_defrag_time:0\r\ncurrent_active_defrag_time:0\r\ntracking_total_keys:{tracking_keys}\r\ntracking_total_items:{tracking_items}\r\ntracking_total_prefixes:{tracking_prefixes}\r\nunexpected_error_replies:0\r\ntotal_error_replies:{}\r\ndump_payload_sanitizations:0\r\ntotal_reads_processed:0\r\ntotal_writes_processed:0\r\nio_threaded_reads_processed:0\r\nio_threaded_writes_processed:0\r\nreply_buffer_shrinks:0\r\nreply_buffer_expands:0\r\n",
                shared.sum(|t| &t.connections_received),
                shared.sum(|t| &t.total_commands),
                shared.sum(|t| &t.net_input_bytes),
                shared.sum(|t| &t.net_output_bytes),
                shared.sum(|t| &t.rejected_connections),
                shared.snapshots.syncs_partial_ok.load(Ordering::Relaxed),
                shared.snapshots.syncs_partial_err.load(Ordering::Relaxed),
                ks.expired_keys,
                shared.sum(|t| &t.keyspace_hits),
                shared.sum(|t| &t.keyspace_misses),
                channels,
                patterns,
                shared.sum(|t| &t.total_error_replies),
            );
        }
        "replication" => {
            let r = shared.repl.info();
            let now_ms = store::Clock::System.now_ms();
            let link = shared.replica.link();
            let mut offset = r.offset;
            if let Some(l) = &link {
                // Redis 7.0's replica fields, in its order.
                let up = l.state() == crate::replication::replica::LinkState::Connected;
                let last_io = l.last_io_ms.load(Ordering::Relaxed);
                let last_io_s = if last_io == 0 { -1 } else { (now_ms - last_io).max(0) / 1000 };
                let applied = l.offset().max(0);
                offset = applied as u64;
                let syncing = l.state() == crate::replication::replica::LinkState::Sync;
                let _ = write!(
                    o,
                    "# Replication\r\nrole:slave\r\nmaster_host:{}\r\nmaster_port:{}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{last_io_s}\r\nmaster_sync_in_progress:{}\r\nslave_read_repl_offset:{applied}\r\nslave_repl_offset:{applied}\r\n",
                    l.host,
                    l.port,
                    if up { "up" } else { "down" },
                    u8::from(syncing),
                );
                if syncing {
                    // The snapshot's transfer, as Redis 7.0 shows it (size -1: a
                    // disk-less `$EOF:` transfer, whose size is known at its end).
                    let (size, read) = l.transfer();
                    let perc = if size > 0 { read as f64 / size as f64 * 100.0 } else { 0.0 };
                    let _ = write!(
                        o,
                        "master_sync_total_bytes:{size}\r\nmaster_sync_read_bytes:{read}\r\nmaster_sync_left_bytes:{}\r\nmaster_sync_perc:{perc:.2}\r\nmaster_sync_last_io_seconds_ago:{}\r\n",
                        size - read as i64,
                        if last_io == 0 { -1 } else { (now_ms - last_io).max(0) / 1000 },
                    );
                }
                if !up {
                    let since = l.down_since_ms.load(Ordering::Relaxed);
                    let _ = write!(o, "master_link_down_since_seconds:{}\r\n", if since == 0 { -1 } else { (now_ms - since).max(0) / 1000 });
                }
                let (priority, read_only, announced) = {
                    let c = shared.config.read();
                    let get = |k: &str, d: &str| c.recorded.get(k).cloned().unwrap_or_else(|| d.to_string());
                    (get("replica-priority", "100"), get("replica-read-only", "yes"), get("replica-announced", "yes"))
                };
                let _ = write!(
                    o,
                    "slave_priority:{priority}\r\nslave_read_only:{}\r\nreplica_announced:{}\r\nconnected_slaves:{}\r\n",
                    u8::from(read_only == "yes"),
                    u8::from(announced == "yes"),
                    r.replicas.len()
                );
            } else {
                let _ = write!(o, "# Replication\r\nrole:master\r\nconnected_slaves:{}\r\n", r.replicas.len());
            }
            for (i, (ip, port, state, offset, ack_ms)) in r.replicas.iter().enumerate() {
                let lag = (now_ms - ack_ms).max(0) / 1000;
                let _ = write!(o, "slave{i}:ip={ip},port={port},state={},offset={offset},lag={lag}\r\n", state.name());
            }
            let (first, histlen) = if r.backlog_active { (r.backlog_first_byte, r.backlog_histlen) } else { (0, 0) };
            let _ = write!(
                o,
                "master_failover_state:{}\r\nmaster_replid:{}\r\nmaster_replid2:{}\r\nmaster_repl_offset:{}\r\nsecond_repl_offset:{}\r\nrepl_backlog_active:{}\r\nrepl_backlog_size:{}\r\nrepl_backlog_first_byte_offset:{first}\r\nrepl_backlog_histlen:{histlen}\r\n",
                shared.failover.state_name(),
                r.replid,
                r.replid2.as_ref().map_or("0000000000000000000000000000000000000000", |(id, _)| id.as_str()),
                offset,
                r.replid2.as_ref().map_or(-1, |(_, upto)| *upto as i64 + 1),
                u8::from(r.backlog_active),
                r.backlog_size,
            );
        }
        "cpu" => {
            let (sys, user) = rusage(libc::RUSAGE_SELF);
            let (csys, cuser) = rusage(libc::RUSAGE_CHILDREN);
            let _ = write!(
                o,
                "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\nused_cpu_sys_children:{csys:.6}\r\nused_cpu_user_children:{cuser:.6}\r\nused_cpu_sys_main_thread:{sys:.6}\r\nused_cpu_user_main_thread:{user:.6}\r\n"
            );
        }
        "modules" => o.push_str("# Modules\r\n"),
        "errorstats" => {
            o.push_str("# Errorstats\r\n");
            // Every code seen, in byte order as Redis's radix tree lists them.
            let mut counts: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
            for t in shared.thread_stats.iter() {
                for (i, code) in crate::shared::ERROR_CODES.iter().enumerate() {
                    *counts.entry((*code).to_string()).or_default() += t.errors[i].load(Ordering::Relaxed);
                }
                for (code, n) in t.other_errors.lock().iter() {
                    *counts.entry(code.clone()).or_default() += n;
                }
            }
            for (code, n) in counts.into_iter().filter(|&(_, n)| n > 0) {
                let _ = write!(o, "errorstat_{code}:count={n}\r\n");
            }
        }
        "cluster" => o.push_str("# Cluster\r\ncluster_enabled:0\r\n"),
        "latencystats" => {
            o.push_str("# Latencystats\r\n");
            let percentiles = shared.config.read().latency_tracking_info_percentiles.clone();
            for (i, e) in table.entries.iter().enumerate() {
                let Some(m) = crate::latency::Merged::of(shared.thread_stats.iter().map(|s| &s.latency), i) else {
                    continue;
                };
                let values: Vec<String> = percentiles
                    .iter()
                    .map(|&p| format!("p{}={:.3}", crate::latency::format_percentile(p), m.percentile(p) as f64 / 1000.0))
                    .collect();
                let _ = write!(o, "latency_percentiles_usec_{}:{}\r\n", e.fullname, values.join(","));
            }
        }
        "keyspace" => {
            o.push_str("# Keyspace\r\n");
            for db in 0..shared.keyspace.databases() {
                let (keys, expires) = shared.keyspace.db_counts(db);
                if keys > 0 {
                    let _ = write!(o, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
                }
            }
        }
        "commandstats" => {
            o.push_str("# Commandstats\r\n");
            let t = table;
            for (i, e) in t.entries.iter().enumerate() {
                let sum = |f: fn(&crate::shared::CommandStats) -> &std::sync::atomic::AtomicU64| -> u64 {
                    shared.thread_stats.iter().map(|ts| f(&ts.commands[i]).load(Ordering::Relaxed)).sum()
                };
                let calls = sum(|c| &c.calls);
                let rejected = sum(|c| &c.rejected_calls);
                if calls == 0 && rejected == 0 {
                    continue;
                }
                let usec = sum(|c| &c.usec);
                let per = if calls > 0 { usec as f64 / calls as f64 } else { 0.0 };
                let _ = write!(
                    o,
                    "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per:.2},rejected_calls={rejected},failed_calls={}\r\n",
                    e.fullname,
                    sum(|c| &c.failed_calls)
                );
            }
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_sizes_match_redis() {
        assert_eq!(super::human(872), "872B");
        assert_eq!(super::human(1024), "1.00K");
        assert_eq!(super::human(1_100_000), "1.05M");
    }
}
