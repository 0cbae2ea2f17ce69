//! MEMORY: what the server's memory holds, as Redis 7.0 reports it. USAGE (one key),
//! STATS (the breakdown INFO memory summarizes), DOCTOR (advice from those figures),
//! MALLOC-STATS (jemalloc's own report) and PURGE (jemalloc gives back dirty pages).
//!
//! Figures: jemalloc's counters (allocated, active, resident), the process's RSS, the
//! allocated bytes recorded once the server was ready (`startup.allocated`), the keys'
//! hash tables (6-byte slots and a control byte per bucket), the clients' buffers and
//! the log's unwritten tail. DOCTOR's advice is Basalt's own wording of Redis's checks.

use std::sync::atomic::Ordering;

use resp::encode;

use super::args::{self, is};
use super::flags::*;
use super::reply_help;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec};
use super::key_flags as kf;
use crate::info;

/// MEMORY USAGE key [SAMPLES count] — bytes the key and its value take (its allocations
/// plus its hash table slot), or nil.
fn memory_usage(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    // As Redis: SAMPLES may repeat (the last wins), 0 means every element, and a large
    // collection's members are otherwise estimated from the first 5 (so that MEMORY
    // USAGE of a big key does not walk it while holding its shard).
    let mut samples = Some(5);
    let mut i = 3;
    while i < a.len() {
        if !(is(a[i], "samples") && i + 1 < a.len()) {
            return Err(CommandError::Syntax);
        }
        samples = match args::int(a[i + 1])? {
            n if n < 0 => return Err(CommandError::Syntax),
            0 => None,
            n => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        };
        i += 2;
    }
    let ks = ctx.ks();
    let (h, shard) = ks.lock_key(ctx.client.db, a[2]);
    match shard.peek(h, a[2], ctx.now_ms) {
        // 7 bytes: the entry's 6-byte pointer and its control byte in the table.
        Some(e) => encode::integer(ctx.out, (e.heap_size(samples) + 7) as i64),
        None => encode::null(ctx.out, ctx.client.proto),
    }
    Ok(())
}

/// The figures MEMORY STATS and DOCTOR report.
struct Figures {
    peak: u64,
    total: u64,
    startup: u64,
    clients_normal: u64,
    aof_buffer: u64,
    /// Per database with keys: (db, its hash tables' bytes).
    dbs: Vec<(usize, u64)>,
    overhead: u64,
    keys: u64,
    allocator_allocated: u64,
    allocator_active: u64,
    allocator_resident: u64,
    rss: u64,
}

fn figures(ctx: &Ctx<'_>) -> Figures {
    let shared = ctx.shared;
    let total = crate::allocator::allocated_bytes();
    let peak = info::peak_allocated().max(total);
    let startup = shared.memory.startup_allocated();
    let clients_normal: u64 = shared
        .clients
        .lock()
        .values()
        .map(|c| (c.qbuf.load(Ordering::Relaxed) + c.obuf.load(Ordering::Relaxed)) as u64)
        .sum();
    let aof_buffer = shared.aof.as_ref().map_or(0, |a| a.buffered() as u64);
    let ks = &shared.keyspace;
    let mut keys = 0;
    let mut dbs = Vec::new();
    for db in 0..ks.databases() {
        let (n, _) = ks.db_counts(db);
        if n > 0 {
            keys += n as u64;
            dbs.push((db, ks.db_table_bytes(db) as u64));
        }
    }
    let overhead = startup + clients_normal + aof_buffer + dbs.iter().map(|d| d.1).sum::<u64>();
    let (allocator_active, allocator_resident) = crate::allocator::active_resident();
    Figures {
        peak,
        total,
        startup,
        clients_normal,
        aof_buffer,
        dbs,
        overhead,
        keys,
        allocator_allocated: total,
        allocator_active,
        allocator_resident,
        rss: info::rss_bytes(),
    }
}

/// A ratio as Redis computes it (in single precision) and prints it.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        f64::from(a as f32 / b as f32)
    }
}

/// MEMORY STATS — the breakdown of the memory in use, as Redis 7.0 lays it out (a map;
/// an array of names and values in RESP2).
fn memory_stats(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let f = figures(ctx);
    let proto = ctx.client.proto;
    let net = f.total.saturating_sub(f.startup);
    let dataset = f.total.saturating_sub(f.overhead);
    let out = &mut *ctx.out;
    encode::map_len(out, 27 + f.dbs.len(), proto);
    let int = |out: &mut Vec<u8>, name: &str, v: u64| {
        encode::bulk(out, name.as_bytes());
        encode::integer(out, i64::try_from(v).unwrap_or(i64::MAX));
    };
    int(out, "peak.allocated", f.peak);
    int(out, "total.allocated", f.total);
    int(out, "startup.allocated", f.startup);
    int(out, "replication.backlog", 0);
    int(out, "clients.slaves", 0);
    int(out, "clients.normal", f.clients_normal);
    int(out, "cluster.links", 0);
    int(out, "aof.buffer", f.aof_buffer);
    int(out, "lua.caches", 0);
    int(out, "functions.caches", 0);
    for &(db, table) in &f.dbs {
        encode::bulk(out, format!("db.{db}").as_bytes());
        encode::map_len(out, 3, proto);
        int(out, "overhead.hashtable.main", table);
        // Basalt keeps expiry times in the entries: no second table.
        int(out, "overhead.hashtable.expires", 0);
        int(out, "overhead.hashtable.slot-to-keys", 0);
    }
    int(out, "overhead.total", f.overhead);
    int(out, "keys.count", f.keys);
    int(out, "keys.bytes-per-key", net.checked_div(f.keys).unwrap_or(0));
    int(out, "dataset.bytes", dataset);
    let dbl = |out: &mut Vec<u8>, name: &str, v: f64| {
        encode::bulk(out, name.as_bytes());
        encode::double(out, v, proto);
    };
    dbl(out, "dataset.percentage", ratio(dataset, net) * 100.0);
    dbl(out, "peak.percentage", ratio(f.total, f.peak) * 100.0);
    int(out, "allocator.allocated", f.allocator_allocated);
    int(out, "allocator.active", f.allocator_active);
    int(out, "allocator.resident", f.allocator_resident);
    dbl(out, "allocator-fragmentation.ratio", ratio(f.allocator_active, f.allocator_allocated));
    int(out, "allocator-fragmentation.bytes", f.allocator_active.saturating_sub(f.allocator_allocated));
    dbl(out, "allocator-rss.ratio", ratio(f.allocator_resident, f.allocator_active));
    int(out, "allocator-rss.bytes", f.allocator_resident.saturating_sub(f.allocator_active));
    dbl(out, "rss-overhead.ratio", ratio(f.rss, f.allocator_resident));
    int(out, "rss-overhead.bytes", f.rss.saturating_sub(f.allocator_resident));
    dbl(out, "fragmentation", ratio(f.rss, f.total));
    int(out, "fragmentation.bytes", f.rss.saturating_sub(f.total));
    Ok(())
}

/// Below this much memory in use the doctor has nothing to say (as Redis's).
const DOCTOR_MIN_BYTES: u64 = 5 * 1024 * 1024;

/// MEMORY DOCTOR — advice about the memory in use: Redis's checks (a peak far above
/// what is used now, fragmentation, large client buffers), in Basalt's words.
fn memory_doctor(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let f = figures(ctx);
    let mut text = String::new();
    if f.total < DOCTOR_MIN_BYTES {
        // Redis's own words for an (almost) empty instance.
        text.push_str("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n");
    } else {
        let mut issues = Vec::new();
        if f.peak as f64 > f.total as f64 * 1.5 {
            issues.push(format!(
                " * Peak memory: at its peak {} bytes were in use, {:.2} times the {} used now. Memory the allocator does not give back to the system stays counted in RSS; MEMORY PURGE asks it to.",
                f.peak,
                f.peak as f64 / f.total as f64,
                f.total
            ));
        }
        if f.rss > 10 * 1024 * 1024 && ratio(f.rss, f.total) > 1.4 {
            issues.push(format!(
                " * High fragmentation: the process's resident memory is {:.2} times the memory in use ({} against {} bytes). Writes that free and allocate values of changing sizes cause it; a restart (the log reloads the data) compacts it.",
                ratio(f.rss, f.total),
                f.rss,
                f.total
            ));
        }
        if f.clients_normal > 200 * 1024 * 1024 {
            issues.push(format!(
                " * Big client buffers: clients hold {} bytes of unread replies and unparsed requests. Look for a client that pipelines without reading (CLIENT LIST's omem and qbuf); client-output-buffer-limit bounds it.",
                f.clients_normal
            ));
        }
        if issues.is_empty() {
            text.push_str("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n");
        } else {
            text.push_str("Sam, I detected a few issues in this Basalt instance memory implants:\n\n");
            text.push_str(&issues.join("\n\n"));
            text.push('\n');
        }
    }
    encode::verbatim(ctx.out, b"txt", text.as_bytes(), ctx.client.proto);
    Ok(())
}

/// MEMORY MALLOC-STATS — jemalloc's statistics report, as its malloc_stats_print writes it.
fn memory_malloc_stats(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    unsafe extern "C" fn append(opaque: *mut std::ffi::c_void, text: *const std::ffi::c_char) {
        // SAFETY: `opaque` is the String passed below, alive for the call; jemalloc hands
        // a NUL-terminated string.
        let (out, text) = unsafe { (&mut *opaque.cast::<String>(), std::ffi::CStr::from_ptr(text)) };
        out.push_str(&text.to_string_lossy());
    }
    let mut report = String::new();
    // SAFETY: the callback only appends to `report`, which outlives the call; no options.
    unsafe {
        tikv_jemalloc_sys::malloc_stats_print(
            Some(append),
            (&mut report as *mut String).cast(),
            std::ptr::null(),
        );
    }
    encode::verbatim(ctx.out, b"txt", report.as_bytes(), ctx.client.proto);
    Ok(())
}

/// MEMORY PURGE — OK; asks jemalloc to give its dirty pages back to the system (every
/// arena: MALLCTL_ARENAS_ALL, 4096).
fn memory_purge(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    // SAFETY: a NUL-terminated control name with no input and no output.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"arena.4096.purge".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
    ctx.ok();
    Ok(())
}

fn memory_help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    reply_help(
        ctx,
        "MEMORY",
        &[
            "DOCTOR",
            "    Return memory problems reports.",
            "MALLOC-STATS",
            "    Return internal statistics report from the memory allocator.",
            "PURGE",
            "    Attempt to purge dirty pages for reclamation by the allocator.",
            "STATS",
            "    Return information about the memory usage of the server.",
            "USAGE <key> [SAMPLES <count>]",
            "    Return memory in bytes used by <key> and its value. Nested values are",
            "    sampled up to <count> times (default: 5, 0 means sample all).",
        ],
    );
    Ok(())
}

#[rustfmt::skip]
pub static MEMORY_SUBCOMMANDS: &[CommandSpec] = &[
    spec("usage", -3, READONLY | READS_ANY_KEY, (2, 2, 1), &[], "server", "Estimates the memory usage of a key.", memory_usage).since("4.0.0").args(ARGS_MEMORY_USAGE).complexity("O(N)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(2), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("stats", 2, READS_ANY_KEY, (0, 0, 0), &[], "server", "Returns details about memory usage.", memory_stats).since("4.0.0").complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    spec("doctor", 2, 0, (0, 0, 0), &[], "server", "Outputs a memory problems report.", memory_doctor).since("4.0.0").complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    spec("malloc-stats", 2, 0, (0, 0, 0), &[], "server", "Returns the allocator statistics.", memory_malloc_stats).since("4.0.0").complexity("Depends on the allocator's state.").tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"]),
    spec("purge", 2, 0, (0, 0, 0), &[], "server", "Asks the allocator to release memory.", memory_purge).since("4.0.0").complexity("Depends on how much memory the allocator can give back.").tips(&["request_policy:all_shards", "response_policy:all_succeeded"]),
    spec("help", 2, LOADING | STALE, (0, 0, 0), &[], "server", "Returns helpful text about the different subcommands.", memory_help).since("4.0.0").complexity("O(1)"),
];


/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_MEMORY_USAGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("count", Integer).token("SAMPLES").optional()];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use crate::command::testing::Harness;

    #[test]
    fn memory_usage_reports_the_allocations() {
        let mut h = Harness::new();
        assert_eq!(h.text("MEMORY USAGE nokey"), "(nil)");
        h.text("SET key:1 value:1");
        let small: i64 = h.text("MEMORY USAGE key:1").parse().expect("integer");
        assert!((20..=64).contains(&small), "{small}");
        h.text(&format!("SET big {}", "x".repeat(1000)));
        let big: i64 = h.text("MEMORY USAGE big SAMPLES 0").parse().expect("integer");
        assert!(big > 1000, "{big}");
        assert_eq!(h.text("MEMORY USAGE big SAMPLE 1"), "ERR syntax error");
    }

    #[test]
    fn memory_stats_doctor_purge() {
        let mut h = Harness::new();
        h.text("SET a 1");
        let stats = h.text("MEMORY STATS");
        for field in ["peak.allocated", "total.allocated", "keys.count", "db.0", "overhead.hashtable.main", "fragmentation.bytes"] {
            assert!(stats.contains(field), "{field} in {stats}");
        }
        assert!(h.text("MEMORY DOCTOR").contains("Sam"));
        assert_eq!(h.text("MEMORY PURGE"), "OK");
        assert!(h.text("MEMORY MALLOC-STATS").contains("jemalloc"));
    }
}
