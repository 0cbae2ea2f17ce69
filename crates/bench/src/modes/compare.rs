//! compare mode: the same workload against two servers, alternating the order every round
//! (a,b then b,a) so drift on a noisy machine hits both sides alike; medians, spread, b/a.
//!
//! Before the rounds it says what it compares (each server's name and version, and its
//! persistence settings, warning when they differ: a server with its log on against one
//! without is rarely the comparison meant). Ctrl-C ends the whole comparison: the
//! current round is dropped (a half-measured round would dilute the medians), the
//! tables of the rounds that finished are printed, and the exit code is 130. On a
//! terminal a progress line on stderr says which test, round and server runs.

use std::sync::atomic::Ordering;

use crate::cli::CompareArgs;
use crate::config::RedisConfig;
use crate::driver::conn::{Handshake, Target};
use crate::report::compare::{self as compare_report, table, Figures};
use crate::stats;
use crate::workload::{self, Test};
use clap::Parser;

fn target(s: &str) -> Option<Target> {
    let (h, p) = s.rsplit_once(':')?;
    Some(Target::Tcp(h.to_string(), p.parse().ok()?))
}

/// Runs compare mode with `args` (without `compare`).
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let mut argv = vec!["basalt-bench compare".to_string()];
    argv.extend_from_slice(args);
    let a = match CompareArgs::try_parse_from(&argv) {
        Ok(a) => a,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            print!("{e}");
            return Ok(0);
        }
        Err(e) => {
            eprint!("{e}");
            return Ok(1);
        }
    };
    let (Some(ta), Some(tb)) = (target(&a.a), target(&a.b)) else {
        eprintln!("--a and --b must be HOST:PORT");
        return Ok(1);
    };
    if let Some(o) = a.tls.options() {
        if let Err(e) = crate::driver::tls::install(&o) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    if a.rounds == 0 || a.clients == 0 || a.pipeline == 0 {
        eprintln!("--rounds, -c and -P must be at least 1");
        return Ok(1);
    }
    let names: Vec<String> = a.tests.split(',').map(|s| s.to_ascii_lowercase()).collect();
    let data = workload::redis_benchmark_data(a.datasize);
    let custom: Option<Vec<Vec<u8>>> = (!a.command.is_empty()).then(|| a.command.iter().map(|w| w.clone().into_bytes()).collect());
    let tests: Vec<Test> = match &custom {
        Some(args) => vec![workload::custom_test(args)],
        None => workload::default_suite(Some(&names), &data, a.keyspace.is_some()),
    };
    if tests.is_empty() {
        eprintln!("no known test in -t {}", a.tests);
        return Ok(1);
    }
    let io_engine = match crate::driver::IoEngine::parse(&a.io_engine) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    let handshake = Handshake { auth: a.password.clone().map(|p| (a.user.clone(), p)), ..Handshake::default() };
    let cfg = |t: Target| RedisConfig {
        target: t,
        handshake: handshake.clone(),
        clients: a.clients,
        requests: a.requests,
        datasize: a.datasize,
        keyspace: a.keyspace,
        pipeline: a.pipeline,
        quiet: true,
        csv: false,
        loop_forever: false,
        tests: None,
        idle: false,
        threads: Some(a.threads),
        precision: 3,
        seed: 12345,
        command: custom.clone(),
        rate: a.rate,
        stall_timeout: 10.0,
        io_engine,
        report: None,
        hdr_log: None,
    };
    let (ca, cb) = (cfg(ta), cfg(tb));
    // What is compared (on stderr under --csv, so that stdout is the CSV alone).
    let describe = |name: &str, c: &RedisConfig| -> Option<(String, String)> {
        let (server, persistence) = super::describe_server(&c.target, &c.handshake)?;
        let line = format!("{name}: {} ({server}; {persistence})", if name == "a" { &a.a } else { &a.b });
        if a.csv {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
        Some((server, persistence))
    };
    let (da, db) = (describe("a", &ca), describe("b", &cb));
    match (&da, &db) {
        (Some((_, pa)), Some((_, pb))) if pa != pb => {
            eprintln!("WARNING: the servers' persistence settings differ ({pa} against {pb}): the comparison measures that too");
        }
        (None, _) | (_, None) => eprintln!("WARNING: could not read a server's INFO and CONFIG (not compared)"),
        _ => {}
    }
    if a.csv {
        println!("{}", compare_report::CSV_HEADER);
    } else {
        println!();
    }
    let server_json = |addr: &str, d: &Option<(String, String)>| {
        serde_json::json!({"address": addr, "server": d.as_ref().map(|x| &x.0), "persistence": d.as_ref().map(|x| &x.1)})
    };
    let mut json_tests = Vec::new();
    // A progress line on a terminal (stderr), erased before each table.
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut code = 0;
    // The workloads: the -t tests or a custom command (each measured as redis-benchmark
    // measures it), or one memtier workload (--memtier).
    let memtier = match &a.memtier {
        Some(flags) => match (memtier_side(&a, flags, &a.a), memtier_side(&a, flags, &a.b)) {
            (Ok(x), Ok(y)) => Some((format!("memtier {flags}"), x, y)),
            (Err(e), _) | (_, Err(e)) => {
                eprintln!("{e}");
                return Ok(1);
            }
        },
        None => None,
    };
    let mut workloads: Vec<(String, Box<Measure>)> = Vec::new();
    match memtier {
        Some((title, ma, mb)) => workloads.push((
            title,
            Box::new(move |is_a: bool| {
                let m = if is_a { &ma } else { &mb };
                let r = super::memtier::run(&m.0, m.1, m.2, m.3, None).map_err(|e| e.to_string())?;
                let t = r.totals();
                let errs = i32::from(r.stats.errors.total() > 0);
                Ok((figures(&t.hist, if r.elapsed_s > 0.0 { t.hist.len() as f64 / r.elapsed_s } else { 0.0 }), errs, t.hist))
            }),
        )),
        None => {
            for test in tests {
                let (ca, cb) = (ca.clone(), cb.clone());
                workloads.push((
                    test.title.clone(),
                    Box::new(move |is_a: bool| {
                        let (r, errs) = super::redis::measure(if is_a { &ca } else { &cb }, &test).map_err(|e| e.to_string())?;
                        Ok((figures(&r.hist, r.rps()), errs, r.hist))
                    }),
                ));
            }
        }
    }
    // For --report and --hdr-log: each test's summary, all its whole rounds' latencies
    // per side, and when the test ran.
    let mut pages = Vec::new();
    let start_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let started = std::time::Instant::now();
    for (title, mut measure) in workloads {
        let offset = started.elapsed();
        let mut fa = Vec::new();
        let mut fb = Vec::new();
        let (mut ha, mut hb) = (stats::new_histogram(3), stats::new_histogram(3));
        let mut interrupted = false;
        'rounds: for round in 0..a.rounds {
            let order = if round % 2 == 0 { [true, false] } else { [false, true] };
            let mut this_round = Vec::with_capacity(2);
            for is_a in order {
                if progress {
                    eprint!("\r\x1b[K{title}: round {} of {}, {}", round + 1, a.rounds, if is_a { "a" } else { "b" });
                }
                let (f, errs, h) = match measure(is_a) {
                    Ok(x) => x,
                    Err(e) => {
                        eprintln!("{e}");
                        return Ok(1);
                    }
                };
                if crate::driver::INTERRUPTED.load(Ordering::SeqCst) {
                    // The round in progress is dropped: only whole rounds count.
                    interrupted = true;
                    break 'rounds;
                }
                code = code.max(errs);
                this_round.push((is_a, f, h));
            }
            for (is_a, f, h) in this_round {
                if is_a {
                    fa.push(f);
                    let _ = ha.add(&h);
                } else {
                    fb.push(f);
                    let _ = hb.add(&h);
                }
            }
        }
        report(&title, &a, &fa, &fb);
        json_tests.push(test_json(&title, &fa, &fb));
        if !fa.is_empty() {
            pages.push((title.clone(), compare_report::summarize(&fa, &fb), ha, hb, offset, started.elapsed() - offset));
        }
        if interrupted {
            eprintln!("Interrupted: {} of {} rounds of {title} compared; the tests after it not run", fa.len(), a.rounds);
            code = 130;
            break;
        }
    }
    if let Some(path) = &a.report {
        let side = |addr: &str, d: &Option<(String, String)>| match d {
            Some((server, persistence)) => format!("{addr} ({server}; {persistence})"),
            None => addr.to_string(),
        };
        let servers = vec![("a".to_string(), side(&a.a, &da)), ("b".to_string(), side(&a.b, &db))];
        let tests: Vec<crate::report::html::CompareTest<'_>> = pages
            .iter()
            .map(|(title, summary, ha, hb, ..)| crate::report::html::CompareTest { title: title.clone(), summary: summary.clone(), a: ha, b: hb })
            .collect();
        let html = crate::report::html::render_compare(&format!("basalt-bench compare: a = {}, b = {}", a.a, a.b), &servers, a.rounds, &tests);
        if let Err(e) = std::fs::write(path, html) {
            eprintln!("Could not write {}: {e}", path.display());
            return Ok(1);
        }
    }
    if let Some(path) = &a.hdr_log {
        let mut intervals = Vec::new();
        for (title, _, ha, hb, offset, length) in &pages {
            for (side, hist) in [("a", ha), ("b", hb)] {
                intervals.push(crate::report::hdr_log::Interval { tag: Some(format!("{side}:{title}")), offset: *offset, length: *length, hist });
            }
        }
        if let Err(e) = crate::report::hdr_log::write_intervals(path, start_ms, &intervals) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    if let Some(path) = &a.json_out_file {
        let doc = serde_json::json!({
            "a": server_json(&a.a, &da),
            "b": server_json(&a.b, &db),
            "rounds asked": a.rounds,
            "interrupted": code == 130,
            "workload": {"clients": a.clients, "requests": a.requests, "data size": a.datasize,
                         "pipeline": a.pipeline, "threads": a.threads, "rate": a.rate},
            "tests": json_tests,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("Could not write {}: {e}", path.display());
            return Ok(1);
        }
    }
    Ok(code)
}

/// One round's figures from a latency histogram (us) and a rate.
fn figures(h: &hdrhistogram::Histogram<u64>, rps: f64) -> Figures {
    Figures {
        rps,
        avg: stats::mean(h) / 1000.0,
        p50: stats::value_at_percentile(h, 50.0) as f64 / 1000.0,
        p99: stats::value_at_percentile(h, 99.0) as f64 / 1000.0,
        p999: stats::value_at_percentile(h, 99.9) as f64 / 1000.0,
    }
}

/// A workload measured once on a (true) or b: its figures and whether error replies came.
type Measure = dyn FnMut(bool) -> Result<(Figures, i32, hdrhistogram::Histogram<u64>), String>;

/// A memtier run of `flags` against `addr`: its config and run options (pipeline, rate,
/// stall timeout), from memtier mode's own parser, with the server, port and password of
/// this comparison.
fn memtier_side(
    a: &CompareArgs,
    flags: &str,
    addr: &str,
) -> Result<(super::memtier::MemtierConfig, usize, Option<f64>, f64), String> {
    let words = crate::workload::memtier::split_args(flags)?;
    let (host, port) = addr.rsplit_once(':').ok_or("--a and --b must be HOST:PORT")?;
    let mut argv = vec!["basalt-bench memtier".to_string()];
    argv.extend(words);
    argv.extend(["--server".into(), host.into(), "--port".into(), port.into()]);
    if let Some(p) = &a.password {
        argv.extend(["--authenticate".into(), match &a.user {
            Some(u) => format!("{u}:{p}"),
            None => p.clone(),
        }]);
    }
    let m = crate::cli::MemtierArgs::try_parse_from(&argv).map_err(|e| format!("--memtier: {e}"))?;
    let cfg = super::memtier::MemtierConfig::from_args(&m).map_err(|e| format!("--memtier: {e}"))?;
    Ok((cfg, m.pipeline, m.rate, m.stall_timeout))
}

/// One test's rounds and summary, for --json-out-file (only whole rounds).
fn test_json(title: &str, fa: &[Figures], fb: &[Figures]) -> serde_json::Value {
    serde_json::json!({
        "test": title,
        "rounds": fa.len(),
        "a": fa,
        "b": fb,
        "summary": if fa.is_empty() { Vec::new() } else { compare_report::summarize(fa, fb) },
    })
}

fn report(title: &str, a: &CompareArgs, fa: &[Figures], fb: &[Figures]) {
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[K");
    }
    if fa.is_empty() {
        return;
    }
    if a.csv {
        print!("{}", compare_report::csv(title, fa, fb));
        return;
    }
    println!("====== {title} ======");
    print!("{}", table(&a.a, &a.b, fa, fb));
    println!();
}
