//! redis-benchmark mode: the default suite or a custom command, each test a closed-loop (or
//! `--rate` open-loop) run, reported in redis-benchmark's formats.

use crate::cli::RedisArgs;
use crate::config::RedisConfig;
use crate::driver::{self, conn, LoadMode, Live, RunSpec};
use crate::report::redis::{progress_line, RedisReport, Style, TestResult};
use crate::report::Report;
use crate::stats::{self, cpu};
use crate::workload::{self, Generator, Test};
use clap::Parser;
use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs redis-benchmark mode with `args` (without the program name).
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let mut argv = vec!["basalt-bench".to_string()];
    argv.extend_from_slice(args);
    let parsed = match RedisArgs::try_parse_from(&argv) {
        Ok(a) => a,
        Err(e) => {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or("invalid arguments");
            eprintln!("Invalid option or option argument missing: {}", first.trim_start_matches("error: "));
            eprintln!("Try 'basalt-bench --help' for more information.");
            return Ok(1);
        }
    };
    if parsed.help {
        let mut cmd = <RedisArgs as clap::CommandFactory>::command();
        let _ = cmd.print_help();
        return Ok(0);
    }
    if parsed.version {
        println!("basalt-bench {} (redis-benchmark 7.0 compatible)", env!("CARGO_PKG_VERSION"));
        return Ok(0);
    }
    if let Some(o) = parsed.tls.options() {
        if let Err(e) = crate::driver::tls::install(&o) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    let cfg = match RedisConfig::from_args(&parsed, || {
        let mut v = Vec::new();
        std::io::stdin().read_to_end(&mut v).map(|_| v)
    }) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    run(&cfg)
}

/// Fetches `CONFIG GET name` on a fresh connection: Ok(None) if the server refuses.
fn config_get(c: &mut conn::Blocking, name: &str, target: &conn::Target) -> Result<Option<String>, driver::DriverError> {
    let reply = conn::call(c, &[b"CONFIG", b"GET", name.as_bytes()], target)?;
    if let Some(msg) = conn::error_message(&reply).filter(|m| conn::is_auth_error(m)) {
        return Err(driver::DriverError::AuthRefused {
            target: target.to_string(),
            reason: String::from_utf8_lossy(msg).into_owned(),
        });
    }
    Ok(match resp::decode_frame(&reply, u64::MAX) {
        Ok(Some((f, _))) => second_string(&f),
        _ => None,
    })
}

fn second_string(f: &resp::frame::Frame) -> Option<String> {
    use resp::frame::Frame;
    match f {
        Frame::Array(v) => v.get(1).and_then(|x| x.as_bytes()).map(|b| String::from_utf8_lossy(b).into_owned()),
        Frame::Map(v) => v.first().and_then(|(_, x)| x.as_bytes()).map(|b| String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// Runs every selected test; returns the exit code.
pub fn run(cfg: &RedisConfig) -> anyhow::Result<i32> {
    // Probe: reachability, AUTH, and the two settings redis-benchmark prints.
    let mut probe = match conn::connect(&cfg.target, Duration::from_secs(5)) {
        Ok(c) => c,
        Err(driver::DriverError::Connect { target, reason }) => {
            eprintln!("Could not connect to server at {target}: {reason}");
            return Ok(1);
        }
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    if let Err(e) = conn::handshake(&mut probe, &cfg.handshake, &cfg.target) {
        eprintln!("{e}");
        return Ok(1);
    }
    let save = config_get(&mut probe, "save", &cfg.target);
    let appendonly = config_get(&mut probe, "appendonly", &cfg.target);
    let mut auth_refused = false;
    let (save, appendonly) = match (save, appendonly) {
        (Ok(s), Ok(a)) => (s, a),
        // As redis-benchmark: said at the probe, then again when the first test's
        // first reply is refused, which ends the run (exit 1).
        (Err(e @ driver::DriverError::AuthRefused { .. }), _) => {
            eprintln!("{e}");
            auth_refused = true;
            (None, None)
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    if (save.is_none() || appendonly.is_none()) && !auth_refused {
        eprintln!("WARNING: Could not fetch server CONFIG");
    }
    drop(probe);

    if cfg.idle {
        return idle(cfg);
    }
    let data = workload::redis_benchmark_data(cfg.datasize);
    let tests: Vec<Test> = match &cfg.command {
        Some(args) => {
            if cfg.tests.is_some() {
                eprintln!("WARNING: Option -t is ignored when a command is given.");
            }
            vec![workload::custom_test(args)]
        }
        None => {
            if let Some(sel) = &cfg.tests {
                let unknown = workload::unknown_test_names(sel);
                if !unknown.is_empty() {
                    eprintln!("WARNING: unknown test name(s) ignored: {}", unknown.join(","));
                }
            }
            workload::default_suite(cfg.tests.as_deref(), &data, cfg.keyspace.is_some())
        }
    };
    let style = if cfg.csv {
        Style::Csv
    } else if cfg.quiet {
        Style::Quiet
    } else {
        Style::Full
    };
    let mut report = RedisReport::new(style);
    let tty = super::stdout_is_tty();
    let mut out = std::io::stdout();
    let _ = out.write_all(report.begin().as_bytes());
    let mut code = 0;
    // For --report and --hdr-log: each test's title, latencies, and when it ran.
    // (title, latencies, offset from the run's start, duration, its first second in `seconds`)
    let mut done: Vec<(String, hdrhistogram::Histogram<u64>, Duration, Duration, usize)> = Vec::new();
    // For --report: the run's per-second timeline (the tests' one after another) and
    // each load thread's CPU over all tests.
    let mut seconds: Vec<crate::stats::Second> = Vec::new();
    let mut cpu: Vec<crate::stats::cpu::ThreadCpu> = Vec::new();
    let start_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let started = Instant::now();
    'outer: loop {
        for test in &tests {
            let offset = started.elapsed();
            let payload = if cfg.command.is_some() { test.template.bytes.len() } else { cfg.datasize };
            match run_test(cfg, test, tty && style != Style::Csv, &mut report) {
                Ok((result, extra_code)) => {
                    let mut r = result;
                    r.payload = payload;
                    r.save = save.clone();
                    r.appendonly = appendonly.clone();
                    let _ = out.write_all(report.test(&r).as_bytes());
                    let _ = out.flush();
                    code = code.max(extra_code);
                    if cfg.report.is_some() || cfg.hdr_log.is_some() {
                        done.push((r.title.clone(), r.hist.clone(), offset, started.elapsed() - offset, seconds.len()));
                        seconds.extend(std::mem::take(&mut r.timeline));
                        for (i, c) in r.cpu.iter().enumerate() {
                            match cpu.get_mut(i) {
                                Some(t) => {
                                    t.cpu_s += c.cpu_s;
                                    t.wait_s += c.wait_s;
                                    t.wall_s += c.wall_s;
                                }
                                None => cpu.push(*c),
                            }
                        }
                    }
                }
                Err(e) => {
                    let _ = out.flush();
                    eprintln!("{e}");
                    return Ok(1);
                }
            }
            if driver::INTERRUPTED.load(Ordering::SeqCst) {
                eprintln!("Interrupted: partial report for {}", test.title);
                code = 130;
                break 'outer;
            }
        }
        if !cfg.loop_forever {
            break;
        }
    }
    let _ = out.write_all(report.end().as_bytes());
    let _ = out.flush();
    if let Some(path) = &cfg.report {
        let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |x| x.to_string());
        let config = vec![
            ("clients (-c)".to_string(), cfg.clients.to_string()),
            ("requests (-n)".to_string(), cfg.requests.to_string()),
            ("data size (-d)".to_string(), cfg.datasize.to_string()),
            ("pipeline (-P)".to_string(), cfg.pipeline.to_string()),
            ("keyspace (-r)".to_string(), opt(cfg.keyspace)),
            ("threads".to_string(), cfg.threads.map_or_else(|| "-".to_string(), |t| t.to_string())),
            ("rate".to_string(), cfg.rate.map_or_else(|| "-".to_string(), |r| r.to_string())),
        ];
        let server = super::server_rows(&cfg.target, &cfg.handshake);
        let page = crate::report::html::Page {
            title: format!("basalt-bench against {}", cfg.target),
            config,
            server,
            kinds: done.iter().map(|(t, h, ..)| (t.clone(), h)).collect(),
            seconds: &seconds,
            cpu: &cpu,
            open_loop: cfg.rate.is_some(),
        };
        if let Err(e) = std::fs::write(path, crate::report::html::render(&page)) {
            eprintln!("Could not write {}: {e}", path.display());
            return Ok(1);
        }
    }
    if let Some(path) = &cfg.hdr_log {
        use crate::report::hdr_log::Interval;
        // Each second of each test (untagged, from the test's start), then each test
        // over its whole run, tagged with its name.
        let mut intervals: Vec<Interval<'_>> = Vec::new();
        for (k, (_, _, offset, _, first)) in done.iter().enumerate() {
            let end = done.get(k + 1).map_or(seconds.len(), |next| next.4);
            for (i, s) in seconds[*first..end].iter().enumerate() {
                let at = *offset + Duration::from_secs(i as u64);
                intervals.push(Interval { tag: None, offset: at, length: Duration::from_secs(1), hist: &s.hist });
            }
        }
        intervals.extend(done.iter().map(|(title, hist, offset, length, _)| Interval {
            tag: Some(title.clone()),
            offset: *offset,
            length: *length,
            hist,
        }));
        if let Err(e) = crate::report::hdr_log::write_intervals(path, start_ms, &intervals) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    Ok(code)
}

fn idle(cfg: &RedisConfig) -> anyhow::Result<i32> {
    let mut conns = Vec::new();
    for _ in 0..cfg.clients {
        match conn::connect(&cfg.target, Duration::from_secs(5)) {
            Ok(mut c) => {
                if let Err(e) = conn::handshake(&mut c, &cfg.handshake, &cfg.target) {
                    eprintln!("{e}");
                    return Ok(1);
                }
                conns.push(c);
            }
            Err(e) => {
                eprintln!("{e}");
                return Ok(1);
            }
        }
        print!("clients: {}\r", conns.len());
    }
    let _ = std::io::stdout().flush();
    while !driver::INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    println!();
    Ok(0)
}

/// Runs one test without progress output (used by compare).
pub fn measure(cfg: &RedisConfig, test: &Test) -> Result<(TestResult, i32), driver::DriverError> {
    let mut r = RedisReport::new(Style::Quiet);
    run_test(cfg, test, false, &mut r)
}

/// Runs one test; the second value is 1 when error replies were seen.
fn run_test(cfg: &RedisConfig, test: &Test, progress: bool, report: &mut RedisReport) -> Result<(TestResult, i32), driver::DriverError> {
    let threads = cfg.threads.unwrap_or(1);
    let generators = (0..cfg.clients)
        .map(|_| Generator::Template { template: test.template.clone(), keyspace: cfg.keyspace })
        .collect();
    let spec = RunSpec {
        target: cfg.target.clone(),
        handshake: cfg.handshake.clone(),
        clients: cfg.clients,
        threads,
        depth: cfg.pipeline,
        mode: match cfg.rate {
            Some(r) => LoadMode::Rate(r),
            None => LoadMode::Batch,
        },
        total_requests: Some(cfg.requests),
        per_client_requests: None,
        duration: None,
        sigfig: cfg.precision,
        seed: cfg.seed,
        same_seed: false,
        stall_timeout: Duration::from_secs_f64(cfg.stall_timeout),
        generators,
        io_engine: cfg.io_engine,
    };
    let live = Arc::new(Live::default());
    let live2 = live.clone();
    let handle = std::thread::spawn(move || driver::run(spec, live2));
    if progress {
        let t0 = Instant::now();
        let (mut last_n, mut last_sum, mut last_t) = (0u64, 0u64, t0);
        while !handle.is_finished() {
            std::thread::sleep(Duration::from_millis(250));
            if handle.is_finished() {
                break;
            }
            let n = live.finished.load(Ordering::Relaxed);
            let sum = live.latency_sum_us.load(Ordering::Relaxed);
            let now = Instant::now();
            let dt = now.duration_since(last_t).as_secs_f64();
            let rps = (n - last_n) as f64 / dt;
            let overall = n as f64 / now.duration_since(t0).as_secs_f64();
            let avg = (sum - last_sum) as f64 / 1000.0 / (n - last_n) as f64;
            let oavg = sum as f64 / 1000.0 / n as f64;
            let line = progress_line(&test.title, rps, overall, avg, oavg);
            report.last_printed = line.len();
            print!("{line}");
            let _ = std::io::stdout().flush();
            (last_n, last_sum, last_t) = (n, sum, now);
        }
    }
    let out = match handle.join() {
        Ok(r) => r?,
        Err(_) => return Err(driver::DriverError::Io { target: cfg.target.to_string(), reason: "load thread panicked".into() }),
    };
    let total = out.stats.total(cfg.precision);
    let mut code = 0;
    if let Some(e) = &out.stopped_by {
        eprintln!(
            "ERROR: {e}: test {} stopped early; its figures are those of the {} requests that completed",
            test.title,
            total.hist.len()
        );
        code = 1;
    }
    if out.stats.errors.total() > 0 {
        eprintln!(
            "ERROR: {} error replies in test {} (not counted as completed): {}",
            out.stats.errors.total(),
            test.title,
            out.stats.errors.summary()
        );
        code = 1;
    }
    for w in cpu::saturation_warnings(&out.stats.cpu) {
        eprintln!("{w}");
    }
    if cfg.rate.is_some() {
        eprintln!(
            "{}: open loop at {} rps: latency from intended send p50={:.3} p99={:.3} ms; service time p50={:.3} p99={:.3} ms",
            test.title,
            cfg.rate.unwrap_or(0.0),
            stats::value_at_percentile(&total.hist, 50.0) as f64 / 1000.0,
            stats::value_at_percentile(&total.hist, 99.0) as f64 / 1000.0,
            stats::value_at_percentile(&total.service, 50.0) as f64 / 1000.0,
            stats::value_at_percentile(&total.service, 99.0) as f64 / 1000.0,
        );
        if let Some(w) = super::rate_shortfall(cfg.rate.unwrap_or(0.0), total.hist.len(), out.elapsed.as_secs_f64()) {
            eprintln!("{w}");
        }
    }
    Ok((
        TestResult {
            title: test.title.clone(),
            completed: total.hist.len(),
            elapsed_s: out.elapsed.as_secs_f64(),
            clients: cfg.clients,
            payload: cfg.datasize,
            keepalive: true,
            save: None,
            appendonly: None,
            threads: cfg.threads,
            hist: total.hist,
            timeline: out.stats.timeline.clone(),
            cpu: out.stats.cpu.clone(),
        },
        code,
    ))
}
