//! Per-command latency tracking: INFO latencystats, LATENCY HISTOGRAM, and the
//! `latency-tracking*` parameters. Timings differ between servers and runs, so the tests
//! check the formats, the counts and the invariants (cumulative buckets, percentiles in
//! order); every reply that does not hold a timing is Redis 7.0.15's byte for byte.

use crate::assert_bytes;
use crate::harness::*;

/// LATENCY HISTOGRAM's (bucket microseconds, cumulative count) pairs for one command,
/// with its calls.
fn histogram(c: &mut RawConn, command: &str) -> Option<(i64, Vec<(i64, i64)>)> {
    let r = parse(&c.cmd(&["LATENCY", "HISTOGRAM", command]));
    let items = r.items();
    if items.is_empty() {
        return None;
    }
    assert_eq!(items.len(), 2, "one command: {r:?}");
    let body = items[1].items();
    assert_eq!(body[0].text(), "calls");
    assert_eq!(body[2].text(), "histogram_usec");
    let flat: Vec<i64> = body[3].items().iter().map(Resp::int).collect();
    Some((
        body[1].int(),
        flat.chunks(2).map(|p| (p[0], p[1])).collect(),
    ))
}

fn latencystats_line(c: &mut RawConn, command: &str) -> Option<String> {
    let info = parse(&c.cmd(&["INFO", "latencystats"])).text();
    let prefix = format!("latency_percentiles_usec_{command}:");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
}

#[test]
fn histograms_count_every_call() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert!(histogram(&mut c, "echo").is_none());
    for _ in 0..50 {
        assert_bytes!(c.cmd(&["ECHO", "x"]), b"$1\r\nx\r\n");
    }
    let (calls, buckets) = histogram(&mut c, "echo").expect("echo ran");
    assert_eq!(calls, 50);
    // Buckets are powers of two (as hdr reports them), the counts cumulative.
    assert!(!buckets.is_empty());
    assert!(
        buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1),
        "{buckets:?}"
    );
    assert_eq!(buckets.last().map(|b| b.1), Some(50));
    // INFO: p50, p99, p99.9 in microseconds, three decimals, in order.
    let line = latencystats_line(&mut c, "echo").expect("a latencystats line for echo");
    let values: Vec<f64> = line
        .split(',')
        .zip(["p50=", "p99=", "p99.9="])
        .map(|(part, name)| {
            let v = part.strip_prefix(name).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(v.split('.').nth(1).map(str::len), Some(3), "{line}");
            v.parse().expect("a number")
        })
        .collect();
    assert_eq!(values.len(), 3, "{line}");
    assert!(values[0] <= values[1] && values[1] <= values[2], "{line}");
    // A container's name gives its subcommands.
    let r = parse(&c.cmd(&["LATENCY", "HISTOGRAM", "config"]));
    let names: Vec<String> = r.items().iter().step_by(2).map(Resp::text).collect();
    assert_eq!(names, ["config|resetstat"]);
    assert_bytes!(c.cmd(&["LATENCY", "HISTOGRAM", "nosuch"]), b"*0\r\n");
    // RESETSTAT clears them; with tracking off nothing is counted.
    assert_bytes!(c.cmd(&["CONFIG", "RESETSTAT"]), b"+OK\r\n");
    assert!(histogram(&mut c, "echo").is_none());
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "latency-tracking", "no"]),
        b"+OK\r\n"
    );
    c.cmd(&["ECHO", "x"]);
    assert!(histogram(&mut c, "echo").is_none());
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "latency-tracking", "yes"]),
        b"+OK\r\n"
    );
    c.cmd(&["ECHO", "x"]);
    assert_eq!(histogram(&mut c, "echo").map(|h| h.0), Some(1));
}

#[test]
fn percentiles_parameter() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["CONFIG", "GET", "latency-tracking-info-percentiles"]),
        b"*2\r\n$33\r\nlatency-tracking-info-percentiles\r\n$10\r\n50 99 99.9\r\n"
    );
    assert_bytes!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "latency-tracking-info-percentiles",
            "50 99.99 100"
        ]),
        b"+OK\r\n"
    );
    c.cmd(&["ECHO", "x"]);
    let line = latencystats_line(&mut c, "echo").expect("a line");
    let names: Vec<&str> = line
        .split(',')
        .map(|p| p.split('=').next().unwrap_or_default())
        .collect();
    assert_eq!(names, ["p50", "p99.99", "p100"], "{line}");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", "abc"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - Invalid latency-tracking-info-percentiles parameters\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", "101"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - latency-tracking-info-percentiles parameters should sit between [0.0,100.0]\r\n"
    );
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", ""]),
        b"+OK\r\n"
    );
    assert_eq!(latencystats_line(&mut c, "echo").as_deref(), Some(""));
}

/// The latency monitor: off by default; with a threshold, a command that ran longer is
/// a `command` event (DEBUG SLEEP: not a FAST command), one sample per second, and
/// RESET drops series by name, case-insensitively.
#[test]
fn monitor_records_slow_commands_over_the_threshold() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["CONFIG", "GET", "latency-monitor-threshold"]), b"*2\r\n$25\r\nlatency-monitor-threshold\r\n$1\r\n0\r\n");
    let off = parse(&c.cmd(&["LATENCY", "DOCTOR"])).text();
    assert!(off.starts_with("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance."), "{off}");
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0.12"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "LATEST"]), b"*0\r\n");
    assert_bytes!(
        c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "-1"]),
        b"-ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 and 9223372036854775807 inclusive\r\n"
    );
    assert_bytes!(c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0.05"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "LATEST"]), b"*0\r\n");
    let quiet = parse(&c.cmd(&["LATENCY", "DOCTOR"])).text();
    assert!(quiet.starts_with("Dave, no latency spike was observed during the lifetime of this Redis instance"), "{quiet}");
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0.15"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0.25"]), b"+OK\r\n");
    let after = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let latest = parse(&c.cmd(&["LATENCY", "LATEST"]));
    assert_eq!(latest.items().len(), 1, "{latest:?}");
    let row = latest.items()[0].items();
    assert_eq!(row[0].text(), "command");
    let (time, last, max) = (row[1].int(), row[2].int(), row[3].int());
    assert!((before..=after).contains(&time), "{time} not in {before}..={after}");
    assert!((150..2000).contains(&last) && (250..2000).contains(&max) && last <= max, "{row:?}");
    // One or two seconds saw these two sleeps: one sample each, the second's worst.
    let history = parse(&c.cmd(&["LATENCY", "HISTORY", "command"]));
    let pairs: Vec<(i64, i64)> = history.items().iter().map(|p| (p.items()[0].int(), p.items()[1].int())).collect();
    assert!(!pairs.is_empty() && pairs.len() <= 2, "{pairs:?}");
    assert_eq!(pairs.last(), Some(&(time, last)));
    assert!(pairs.iter().all(|&(t, ms)| (before..=after).contains(&t) && (150..2000).contains(&ms)), "{pairs:?}");
    assert_bytes!(c.cmd(&["LATENCY", "HISTORY", "fast-command"]), b"*0\r\n");
    // GRAPH: a title, a rule, four rows with one column per sample (the latest one,
    // the highest, reaching the top when there are two), a blank line and the labels.
    let graph = parse(&c.cmd(&["LATENCY", "GRAPH", "command"])).text();
    let lines: Vec<&str> = graph.split('\n').collect();
    let (low, high) = (pairs.iter().map(|p| p.1).min().unwrap(), pairs.iter().map(|p| p.1).max().unwrap());
    assert_eq!(lines[0], format!("command - high {high} ms, low {low} ms (all time high {max} ms)"), "{graph}");
    assert_eq!(lines[1], "-".repeat(80));
    assert!(lines[2..6].iter().all(|l| l.len() == pairs.len()), "{graph}");
    assert_eq!(lines[6], " ".repeat(pairs.len()));
    assert!(lines[7].ends_with('s') || lines[8].ends_with('s'), "{graph}");
    assert!(graph.ends_with("s\n"), "{graph:?}");
    assert_bytes!(c.cmd(&["LATENCY", "GRAPH", "nope"]), b"-ERR No samples available for event 'nope'\r\n");
    // DOCTOR: Redis's opening and statistics line (the advice after it is each server's
    // own).
    let report = parse(&c.cmd(&["LATENCY", "DOCTOR"])).text();
    let sum: i64 = pairs.iter().map(|p| p.1).sum();
    let avg = sum / pairs.len() as i64;
    let mad = pairs.iter().map(|p| (p.1 - avg).abs()).sum::<i64>() / pairs.len() as i64;
    let head = format!(
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n\
         1. command: {} latency spikes (average {avg}ms, mean deviation {mad}ms, period ",
        pairs.len()
    );
    assert!(report.starts_with(&head), "{report}");
    assert!(report.contains(&format!(" sec). Worst all time event {max}ms.\n\nI have a few advices for you:\n\n- ")), "{report}");
    assert_bytes!(c.cmd(&["LATENCY", "RESET", "nope"]), b":0\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "RESET", "COMMAND"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "LATEST"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["DEBUG", "SLEEP", "0.15"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "RESET"]), b":1\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "HISTORY", "command"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "0"]), b"+OK\r\n");
}

#[test]
fn monitor_subcommands_and_help() {
    let t = shared();
    let mut c = t.raw_conn();
    // No latency events (the latency monitor is off, Redis's default; the test above
    // turns it on only on a server of its own).
    assert_bytes!(c.cmd(&["LATENCY", "LATEST"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "HISTORY", "command"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "RESET"]), b":0\r\n");
    assert_bytes!(
        c.cmd(&["LATENCY", "FOO"]),
        b"-ERR unknown subcommand 'FOO'. Try LATENCY HELP.\r\n"
    );
    assert_bytes!(
        c.cmd(&["LATENCY"]),
        b"-ERR wrong number of arguments for 'latency' command\r\n"
    );
    let help = parse(&c.cmd(&["LATENCY", "HELP"]));
    let lines: Vec<String> = help.items().iter().map(Resp::text).collect();
    assert_eq!(lines.len(), 17);
    assert_eq!(
        lines[0],
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    );
    assert_eq!(lines[16], "    Prints this help.");
}
