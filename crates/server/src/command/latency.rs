//! LATENCY: HISTOGRAM reports the per-command latency histograms (`crate::latency`) as
//! Redis 7.0 does; LATEST, HISTORY and RESET read and clear the latency monitor's event
//! series (`crate::latency_monitor`, on when `latency-monitor-threshold` is set), and
//! GRAPH draws one as Redis's ASCII chart; DOCTOR reports on them in Redis's form, with
//! Basalt's own advice.

use resp::encode;

use super::flags::*;
use super::{container, spec, CommandError, CommandSpec, Ctx};
use crate::latency::Merged;

/// LATENCY HISTOGRAM [command ...] — per command: its calls and the cumulative
/// distribution of its run times (microsecond buckets, powers of two). A container
/// command names its subcommands; unknown names and commands never run are left out.
fn histogram(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let t = ctx.table;
    let wanted: Vec<usize> = if a.len() == 2 {
        (0..t.entries.len()).collect()
    } else {
        let mut v = Vec::new();
        for name in &a[2..] {
            let name = String::from_utf8_lossy(name).to_ascii_lowercase();
            for (i, e) in t.entries.iter().enumerate() {
                let parent = e.parent.map(|p| t.entries[p].fullname.as_str());
                if (e.fullname == name || parent == Some(name.as_str())) && !v.contains(&i) {
                    v.push(i);
                }
            }
        }
        v
    };
    let loops = || ctx.shared.thread_stats.iter().map(|s| &s.latency);
    let found: Vec<(usize, Merged)> = wanted
        .into_iter()
        .filter_map(|i| Merged::of(loops(), i).map(|m| (i, m)))
        .collect();
    let proto = ctx.client.proto;
    let out = &mut *ctx.out;
    encode::map_len(out, found.len(), proto);
    for (i, m) in found {
        encode::bulk(out, t.entries[i].fullname.as_bytes());
        encode::map_len(out, 2, proto);
        encode::bulk(out, b"calls");
        encode::integer(out, m.total() as i64);
        encode::bulk(out, b"histogram_usec");
        let cdf = m.cdf();
        encode::map_len(out, cdf.len(), proto);
        for (usec, count) in cdf {
            encode::integer(out, usec as i64);
            encode::integer(out, count as i64);
        }
    }
    Ok(())
}

/// LATENCY LATEST — per event: its name, the time (Unix seconds) and latency (ms) of its
/// latest sample, and its worst latency ever.
fn latest(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let rows = ctx.shared.latency_monitor.latest();
    encode::array_len(ctx.out, rows.len());
    for row in rows {
        encode::array_len(ctx.out, 4);
        encode::bulk(ctx.out, row.event.as_bytes());
        encode::integer(ctx.out, row.time);
        encode::integer(ctx.out, i64::try_from(row.latency_ms).unwrap_or(i64::MAX));
        encode::integer(ctx.out, i64::try_from(row.max_ms).unwrap_or(i64::MAX));
    }
    Ok(())
}

/// LATENCY HISTORY event — the event's samples, oldest first, as [time, latency] pairs
/// (none for an event never recorded).
fn history(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let samples = ctx.shared.latency_monitor.history(a[2]);
    encode::array_len(ctx.out, samples.len());
    for (time, ms) in samples {
        encode::array_len(ctx.out, 2);
        encode::integer(ctx.out, time);
        encode::integer(ctx.out, i64::try_from(ms).unwrap_or(i64::MAX));
    }
    Ok(())
}

/// LATENCY GRAPH event — the event's samples as Redis's ASCII chart (a verbatim string
/// on RESP3).
fn graph(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let now = crate::latency_monitor::unix_seconds();
    let Some(text) = ctx.shared.latency_monitor.graph(a[2], now) else {
        return Err(CommandError::Owned(format!(
            "ERR No samples available for event '{}'",
            String::from_utf8_lossy(a[2])
        )));
    };
    encode::verbatim(ctx.out, b"txt", text.as_bytes(), ctx.client.proto);
    Ok(())
}

/// LATENCY DOCTOR — a report on every event's spikes, and advice (a verbatim string on
/// RESP3).
fn doctor(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    let slowlog_us = ctx.shared.slowlog_threshold_us.load(std::sync::atomic::Ordering::Relaxed);
    let report = ctx.shared.latency_monitor.doctor(crate::latency_monitor::unix_seconds(), slowlog_us);
    encode::verbatim(ctx.out, b"txt", report.as_bytes(), ctx.client.proto);
    Ok(())
}

/// LATENCY RESET [event ...] — drops the named events' series (all without names) and
/// answers how many there were.
fn reset(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let n = ctx.shared.latency_monitor.reset(&a[2..]);
    encode::integer(ctx.out, n as i64);
    Ok(())
}

const HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
];

/// LATENCY HELP — Redis's text (its last line differs from the other containers').
fn help(ctx: &mut Ctx<'_>, _: &[&[u8]]) -> Result<(), CommandError> {
    super::reply_help_text(ctx, HELP);
    Ok(())
}

const NO_ACL: &[&str] = &[];

#[rustfmt::skip]
static SUBCOMMANDS: &[CommandSpec] = &[
    spec("histogram", -2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Returns the cumulative distribution of latencies of a subset or all commands.", histogram).since("7.0.0").args(ARGS_LATENCY_HISTOGRAM).complexity("O(N)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"]),
    spec("latest", 2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Returns the latest latency samples for all events.", latest).since("2.8.13").complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"]),
    spec("history", 3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Returns timestamp-latency samples for an event.", history).since("2.8.13").args(ARGS_LATENCY_HISTORY).complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"]),
    spec("reset", -2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Resets the latency data for one or more events.", reset).since("2.8.13").args(ARGS_LATENCY_RESET).complexity("O(1)").tips(&["request_policy:all_nodes", "response_policy:all_succeeded"]),
    spec("doctor", 2, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Returns a human-readable latency analysis report.", doctor).since("2.8.13").complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"]),
    spec("graph", 3, ADMIN | NOSCRIPT | LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Returns a latency graph for an event.", graph).since("2.8.13").args(ARGS_LATENCY_GRAPH).complexity("O(1)").tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"]),
    spec("help", 2, LOADING | STALE, (0, 0, 0), NO_ACL, "server", "Returns helpful text about the different subcommands.", help).since("2.8.13").complexity("O(1)"),
];

pub static COMMANDS: &[CommandSpec] = &[container(
    "latency",
    "server",
    "A container for latency diagnostics commands.",
    SUBCOMMANDS,
).since("2.8.13").complexity("Depends on the subcommand.")];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_LATENCY_HISTOGRAM: &[Arg] = &[arg("command", String).optional().multiple()];
    pub const ARGS_LATENCY_HISTORY: &[Arg] = &[arg("event", String)];
    pub const ARGS_LATENCY_RESET: &[Arg] = &[arg("event", String).optional().multiple()];
    pub const ARGS_LATENCY_GRAPH: &[Arg] = &[arg("event", String)];
}
use docs_args::*;
