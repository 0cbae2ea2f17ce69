//! memtier mode: memtier_benchmark's flags drive SET/GET in its deterministic `a:b` cycle (or
//! `--command`s in rotation) over the shared engine, in a sliding window of `--pipeline`
//! outstanding requests per connection; the report is memtier's text table and, with
//! `--json-out-file`, its JSON "Format version" 2.

use crate::cli::MemtierArgs;
use crate::driver::{self, conn, LoadMode, Live, RunSpec};
use crate::report::memtier::{aggregate, best_worst, json_blocks, parse_percentiles, MemtierResult};
use crate::stats::{self, cpu};
use crate::workload::memtier::{kind_name, parse_command, CmdKind, MemtierSpec, Pattern};
use crate::workload::Generator;
use clap::Parser;
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// memtier's default seed is a constant (runs are reproducible); `--randomize` uses the time.
const DEFAULT_SEED: u64 = 0x6d65_6d74_6965_7221;

/// A validated memtier run.
pub struct MemtierConfig {
    /// Engine spec parts.
    pub target: conn::Target,
    /// AUTH / SELECT / HELLO.
    pub handshake: conn::Handshake,
    /// Clients per thread.
    pub clients: usize,
    /// Threads.
    pub threads: usize,
    /// Requests per client (None with --test-time).
    pub requests: Option<u64>,
    /// Seconds.
    pub test_time: Option<u64>,
    /// Generator settings.
    pub spec: MemtierSpec,
    /// Row names.
    pub names: Vec<String>,
    /// Histogram names.
    pub hist_names: Vec<String>,
    /// SET/GET workload (hits/misses columns).
    pub set_get: bool,
    /// Percentiles to print.
    pub percentiles: Vec<f64>,
    /// Seed.
    pub seed: u64,
    /// Same seed for every client.
    pub same_seed: bool,
    /// I/O engine of the load threads.
    pub io_engine: driver::IoEngine,
}

fn parse_range(s: &str, what: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once(['-', ':']).ok_or_else(|| format!("Invalid {what} \"{s}\": expected MIN-MAX"))?;
    let a: u64 = a.trim().parse().map_err(|_| format!("Invalid {what} \"{s}\""))?;
    let b: u64 = b.trim().parse().map_err(|_| format!("Invalid {what} \"{s}\""))?;
    if a > b {
        return Err(format!("Invalid {what} \"{s}\": MIN above MAX"));
    }
    Ok((a, b))
}

fn pattern(s: &str) -> Result<Pattern, String> {
    Pattern::parse(s).ok_or_else(|| format!("Invalid key pattern \"{s}\": each side is one of S, R, G, Z, P"))
}

impl MemtierConfig {
    /// Validates the flags.
    pub fn from_args(a: &MemtierArgs) -> Result<Self, String> {
        if a.clients == 0 {
            return Err("Invalid --clients: must be at least 1".into());
        }
        if a.threads == 0 {
            return Err("Invalid --threads: must be at least 1".into());
        }
        if a.pipeline == 0 {
            return Err("Invalid --pipeline: must be at least 1".into());
        }
        if a.run_count == 0 {
            return Err("Invalid --run-count: must be at least 1".into());
        }
        let resp3 = match a.protocol.as_str() {
            "redis" | "resp2" => false,
            "resp3" => true,
            p => return Err(format!("Unsupported --protocol \"{p}\": redis, resp2 or resp3")),
        };
        let auth = a.authenticate.as_ref().map(|s| match s.split_once(':') {
            Some((u, p)) => (Some(u.to_string()), p.to_string()),
            None => (None, s.clone()),
        });
        let host = a.host.clone().unwrap_or_else(|| a.server.clone());
        let target = match &a.unix_socket {
            Some(p) => conn::Target::Unix(p.clone()),
            None => conn::Target::Tcp(host, a.port),
        };
        if a.key_minimum > a.key_maximum {
            return Err("--key-minimum is above --key-maximum".into());
        }
        if !(a.key_zipf_exp > 0.0 && a.key_zipf_exp < 5.0) {
            return Err("--key-zipf-exp must be in (0, 5)".into());
        }
        let (requests, test_time) = match (&a.requests, a.test_time) {
            (Some(_), Some(_)) => return Err("--requests and --test-time are mutually exclusive".into()),
            (None, Some(0)) => return Err("Invalid --test-time: must be at least 1".into()),
            (None, Some(t)) => (None, Some(t)),
            (None, None) => (Some(10_000), None),
            // As memtier 2.3: the key range's span per client, or under P:P (each
            // client its own slice) the span shared by every client, plus one; 0
            // falls back to the default.
            (Some(r), None) if r == "allkeys" => {
                let span = a.key_maximum - a.key_minimum;
                let conns = (a.clients as u64).saturating_mul(a.threads as u64).max(1);
                let per = if a.key_pattern == "P:P" { span / conns + 1 } else { span };
                (Some(if per == 0 { 10_000 } else { per }), None)
            }
            (Some(r), None) => (Some(r.parse::<u64>().map_err(|_| format!("Invalid --requests \"{r}\""))?), None),
        };
        if requests == Some(0) {
            return Err("Invalid --requests: must be at least 1".into());
        }
        let (size_min, size_max) = match &a.data_size_range {
            Some(r) => {
                let (lo, hi) = parse_range(r, "--data-size-range")?;
                (lo.max(1) as usize, hi.max(1) as usize)
            }
            None => (a.data_size.max(1), a.data_size.max(1)),
        };
        let size_seq = match a.data_size_pattern.as_str() {
            "R" => false,
            "S" => true,
            p => return Err(format!("Invalid --data-size-pattern \"{p}\": R or S")),
        };
        let expiry = a.expiry_range.as_ref().map(|r| parse_range(r, "--expiry-range")).transpose()?;
        let (kinds, names, hist_names, set_get) = if a.command.is_empty() {
            let (s, g) = a.ratio.split_once(':').ok_or_else(|| format!("Invalid --ratio \"{}\": expected SET:GET", a.ratio))?;
            let s: u32 = s.parse().map_err(|_| format!("Invalid --ratio \"{}\"", a.ratio))?;
            let g: u32 = g.parse().map_err(|_| format!("Invalid --ratio \"{}\"", a.ratio))?;
            if s == 0 && g == 0 {
                return Err("Invalid --ratio 0:0".into());
            }
            let (ps, pg) = a
                .key_pattern
                .split_once(':')
                .ok_or_else(|| format!("Invalid --key-pattern \"{}\": expected SET:GET", a.key_pattern))?;
            let (ps, pg) = (pattern(ps)?, pattern(pg)?);
            if (ps == Pattern::P) != (pg == Pattern::P) {
                return Err("--key-pattern P must be used on both sides (P:P)".into());
            }
            (
                vec![(CmdKind::Set, ps, s), (CmdKind::Get, pg, g)],
                vec!["Sets".to_string(), "Gets".to_string()],
                vec!["SET".to_string(), "GET".to_string()],
                true,
            )
        } else {
            let mut kinds = Vec::new();
            let mut names = Vec::new();
            let mut hist = Vec::new();
            for (i, c) in a.command.iter().enumerate() {
                let args = parse_command(c)?;
                let first = c.split_whitespace().next().unwrap_or("");
                let ratio = a.command_ratio.get(i).copied().unwrap_or(1);
                let pat = match a.command_key_pattern.get(i) {
                    Some(p) => pattern(p)?,
                    None => Pattern::R,
                };
                names.push(kind_name(first));
                hist.push(first.to_ascii_uppercase());
                kinds.push((CmdKind::Custom(args), pat, ratio));
            }
            if kinds.iter().all(|k| k.2 == 0) {
                return Err("Every --command-ratio is 0".into());
            }
            (kinds, names, hist, false)
        };
        let percentiles = parse_percentiles(&a.print_percentiles)?;
        let seed = if a.randomize {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
                ^ std::process::id() as u64
        } else {
            DEFAULT_SEED
        };
        if let Some(r) = a.rate {
            if !(r > 0.0 && r.is_finite()) {
                return Err("--rate must be a positive number of requests per second".into());
            }
        }
        let io_engine = driver::IoEngine::parse(&a.io_engine)?;
        Ok(MemtierConfig {
            io_engine,
            target,
            handshake: conn::Handshake { auth, db: a.select_db, resp3 },
            clients: a.clients,
            threads: a.threads,
            requests,
            test_time,
            spec: MemtierSpec {
                kinds,
                key_prefix: a.key_prefix.clone(),
                key_min: a.key_minimum,
                key_max: a.key_maximum,
                key_stddev: a.key_stddev,
                key_median: a.key_median,
                zipf_exp: a.key_zipf_exp,
                size_min,
                size_max: size_max.max(size_min),
                size_pattern_sequential: size_seq,
                expiry,
                random_data: !a.x_data,
            },
            names,
            hist_names,
            set_get,
            percentiles,
            seed,
            same_seed: a.same_client_seed,
        })
    }
}

/// The "configuration" object of the JSON file (memtier's key names).
pub fn config_json(a: &MemtierArgs, c: &MemtierConfig) -> Value {
    let host = a.host.clone().unwrap_or_else(|| a.server.clone());
    let mut v = json!({
        "server": host,
        "port": a.port,
        "uri": "",
        // null where memtier 2.3's option is unset (its JSON writer turns a NULL string
        // into null), as its parsers expect (issue 25).
        "unix socket": a.unix_socket.as_ref().map(|p| p.display().to_string()),
        "address family": "Unspecified",
        "protocol": a.protocol,
        "out_file": a.out_file.as_ref().map(|p| p.display().to_string()),
        "tls": "false",
        "client_stats": null,
        "run_count": a.run_count,
        "debug": 0,
        "requests": c.requests.unwrap_or(0),
        // memtier: `%u` (an integer of requests per second).
        "rate_limit": a.rate.unwrap_or(0.0).round() as u64,
        "clients": c.clients,
        "threads": c.threads,
        "test_time": c.test_time.unwrap_or(0),
        "ratio": a.ratio,
        "pipeline": a.pipeline,
        "data_size": a.data_size,
        "data_offset": 0,
        "random_data": if c.spec.random_data { "true" } else { "false" },
        "data_size_range": format!("{}:{}", if a.data_size_range.is_some() { c.spec.size_min } else { 0 }, if a.data_size_range.is_some() { c.spec.size_max } else { 0 }),
        "data_size_list": "",
        "data_size_pattern": a.data_size_pattern,
        "expiry_range": c.spec.expiry.map(|(l, h)| format!("{l}:{h}")).unwrap_or_else(|| "0:0".into()),
        "key_prefix": a.key_prefix,
        "key_minimum": a.key_minimum,
        "key_maximum": a.key_maximum,
        "key_pattern": a.key_pattern,
        "key_stddev": a.key_stddev.unwrap_or(0.0),
        "key_median": a.key_median.unwrap_or(0.0),
        "key_zipf_exp": a.key_zipf_exp,
        "authenticate": if a.authenticate.is_some() { "yes" } else { "" },
        "select-db": a.select_db,
        "distinct_client_seed": if c.same_seed { "false" } else { "true" },
        "seed": c.seed,
    });
    // memtier 2.3's options that basalt-bench does not have, as memtier writes them when
    // they are off, so that its parsers find every key (issue 25). Added apart: one json!
    // of them all passes the macro's recursion limit.
    let off = json!({
        "connection_timeout": 0,
        "data_import": null,
        "data_verify": "false",
        "generate_keys": "false",
        "multi_key_get": 0,
        "no-expiry": "false",
        "num-slaves": "0:0",
        "print-all-runs": if a.print_all_runs { "true" } else { "false" },
        "reconnect_interval": 0,
        "thread_conn_start_max_jitter_micros": 0,
        "thread_conn_start_min_jitter_micros": 0,
        "verify_only": "false",
        "wait-ratio": "0:0",
        "wait-timeout": "0-0",
    });
    if let (Value::Object(m), Value::Object(extra)) = (&mut v, off) {
        m.extend(extra);
    }
    v
}

/// Runs memtier mode with `args` (without the program name and `memtier`).
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let mut argv = vec!["basalt-bench memtier".to_string()];
    argv.extend_from_slice(args);
    let a = match MemtierArgs::try_parse_from(&argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return Ok(code);
        }
    };
    let cfg = match MemtierConfig::from_args(&a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    if let Some(o) = a.tls.then(|| crate::driver::tls::Options { ca_cert: a.cacert.clone(), ca_cert_dir: None, cert: a.cert.clone(), key: a.key.clone(), sni: a.sni.clone(), insecure: a.tls_skip_verify }) {
        if let Err(e) = crate::driver::tls::install(&o) {
            eprintln!("{e}");
            return Ok(1);
        }
    }
    let mut runs = Vec::new();
    for i in 0..a.run_count {
        let progress = std::io::stderr().is_terminal().then_some(i + 1);
        let result = match run(&cfg, a.pipeline, a.rate, a.stall_timeout, progress) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{e}");
                return Ok(1);
            }
        };
        let stop = result.interrupted;
        runs.push(result);
        if stop {
            break;
        }
    }
    let mut code = 0;
    for result in &runs {
        if result.stats.errors.total() > 0 {
            eprintln!(
                "ERROR: {} error replies (not counted as completed): {}",
                result.stats.errors.total(),
                result.stats.errors.summary()
            );
            code = 1;
        }
        for w in cpu::saturation_warnings(&result.stats.cpu) {
            eprintln!("{w}");
        }
        if let Some(rate) = result.rate {
            let totals = result.totals();
            let at = |h: &hdrhistogram::Histogram<u64>, p: f64| stats::value_at_percentile(h, p) as f64 / 1000.0;
            eprintln!(
                "open loop at {rate} rps: latency from intended send p50={:.3} p99={:.3} p99.9={:.3} ms; service time p50={:.3} p99={:.3} p99.9={:.3} ms",
                at(&totals.hist, 50.0),
                at(&totals.hist, 99.0),
                at(&totals.hist, 99.9),
                at(&totals.service, 50.0),
                at(&totals.service, 99.0),
                at(&totals.service, 99.9),
            );
            if let Some(w) = super::rate_shortfall(rate, totals.hist.len(), result.elapsed_s) {
                eprintln!("{w}");
            }
        }
    }
    let Some(result) = runs.first() else { return Ok(1) };
    // One run: "ALL STATS". Several: BEST, WORST and AGGREGATED AVERAGE blocks (and each run
    // with --print-all-runs), as memtier.
    let aggregated = aggregate(&runs);
    let mut blocks: Vec<(String, &MemtierResult)> = Vec::new();
    if runs.len() == 1 {
        blocks.push(("ALL STATS".into(), result));
    } else {
        if a.print_all_runs {
            for (i, r) in runs.iter().enumerate() {
                blocks.push((format!("RUN #{} RESULTS", i + 1), r));
            }
        }
        let (best, worst) = best_worst(&runs);
        blocks.push(("BEST RUN RESULTS".into(), &runs[best]));
        blocks.push(("WORST RUN RESULTS".into(), &runs[worst]));
        if let Some(ag) = &aggregated {
            blocks.push((format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()), ag));
        }
    }
    let mut text = result.header_text();
    for (i, (title, r)) in blocks.iter().enumerate() {
        if i > 0 {
            text.push_str("\n\n");
        }
        text.push_str(&r.block_text(title, a.hide_histogram));
    }
    match &a.out_file {
        Some(p) => std::fs::write(p, &text).map_err(|e| anyhow::anyhow!("Could not write {}: {e}", p.display()))?,
        None => {
            let mut out = std::io::stdout();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }
    if let Some(p) = &a.json_out_file {
        let doc = json_blocks(config_json(&a, &cfg), &blocks, a.hide_histogram);
        let s = serde_json::to_string_pretty(&doc)?;
        std::fs::write(p, s + "\n").map_err(|e| anyhow::anyhow!("Could not write {}: {e}", p.display()))?;
    }
    if let Some(p) = &a.report {
        // The last run (the only one, by default).
        let r = runs.last().unwrap_or(result);
        let config: Vec<(String, String)> = match config_json(&a, &cfg) {
            Value::Object(m) => m.into_iter().map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_string))).collect(),
            _ => Vec::new(),
        };
        let server = super::server_rows(&cfg.target, &cfg.handshake);
        let page = crate::report::html::Page {
            title: format!("basalt-bench memtier against {}", cfg.target),
            config,
            server,
            kinds: r.hist_names.iter().cloned().zip(r.stats.kinds.iter().map(|k| &k.hist)).collect(),
            seconds: &r.stats.timeline,
            cpu: &r.stats.cpu,
            open_loop: r.rate.is_some(),
        };
        std::fs::write(p, crate::report::html::render(&page)).map_err(|e| anyhow::anyhow!("Could not write {}: {e}", p.display()))?;
    }
    if let Some(p) = &a.hdr_log {
        let r = runs.last().unwrap_or(result);
        let kinds: Vec<(String, &hdrhistogram::Histogram<u64>)> =
            r.hist_names.iter().cloned().zip(r.stats.kinds.iter().map(|k| &k.hist)).collect();
        crate::report::hdr_log::write(p, r.start_ms, &kinds, &r.stats.timeline).map_err(|e| anyhow::anyhow!(e))?;
    }
    let result = runs.last().unwrap_or(result);
    if result.interrupted {
        // Ctrl-C: 130; a run stopped early by a failure (a closed or stalled
        // connection): 1.
        code = if driver::INTERRUPTED.load(Ordering::SeqCst) { 130 } else { 1 };
    }
    Ok(code)
}

/// Runs the load and returns the result (no printing).
pub fn run(cfg: &MemtierConfig, pipeline: usize, rate: Option<f64>, stall_timeout: f64, progress: Option<usize>) -> Result<MemtierResult, driver::DriverError> {
    let total = cfg.clients * cfg.threads;
    let generators: Vec<Generator> = (0..total)
        .map(|i| {
            let s = if cfg.same_seed { cfg.seed } else { cfg.seed.wrapping_add(i as u64) };
            let mut rng = fastrand::Rng::with_seed(s ^ 0x5eed);
            Generator::Memtier(Box::new(cfg.spec.for_client(i, total, &mut rng)))
        })
        .collect();
    let spec = RunSpec {
        target: cfg.target.clone(),
        handshake: cfg.handshake.clone(),
        clients: total,
        threads: cfg.threads,
        depth: pipeline,
        mode: match rate {
            Some(r) => LoadMode::Rate(r),
            None => LoadMode::Window,
        },
        total_requests: None,
        per_client_requests: cfg.requests,
        duration: cfg.test_time.map(Duration::from_secs),
        sigfig: 3,
        seed: cfg.seed,
        same_seed: cfg.same_seed,
        stall_timeout: Duration::from_secs_f64(stall_timeout.max(0.1)),
        generators,
        io_engine: cfg.io_engine,
    };
    let live = Arc::new(Live::default());
    let live2 = live.clone();
    let handle = std::thread::spawn(move || driver::run(spec, live2));
    if let Some(run_no) = progress {
        progress_loop(&handle, &live, cfg, total, run_no);
    }
    let out = match handle.join() {
        Ok(r) => r?,
        Err(_) => return Err(driver::DriverError::Io { target: cfg.target.to_string(), reason: "load thread panicked".into() }),
    };
    if let Some(e) = &out.stopped_by {
        eprintln!("ERROR: {e}: the run stopped early; the figures are those of the requests that completed (marked interrupted)");
    }
    Ok(MemtierResult {
        threads: cfg.threads,
        clients: cfg.clients,
        requests: cfg.requests,
        test_time: cfg.test_time,
        names: cfg.names.clone(),
        hist_names: cfg.hist_names.clone(),
        hits_misses: cfg.set_get,
        elapsed_s: out.elapsed.as_secs_f64(),
        start_ms: out.start_ms,
        interrupted: out.interrupted || out.stopped_by.is_some() || driver::INTERRUPTED.load(Ordering::SeqCst),
        stats: out.stats,
        percentiles: cfg.percentiles.clone(),
        sigfig: 3,
        rate,
    })
}

fn rate_text(bytes_per_sec: f64) -> String {
    if bytes_per_sec >= 1024.0 * 1024.0 {
        format!("{:.2}MB", bytes_per_sec / 1024.0 / 1024.0)
    } else {
        format!("{:.2}KB", bytes_per_sec / 1024.0)
    }
}

/// The live line on stderr, once a second, in memtier's layout.
fn progress_loop(
    handle: &std::thread::JoinHandle<Result<driver::RunOutput, driver::DriverError>>,
    live: &Live,
    cfg: &MemtierConfig,
    conns: usize,
    run_no: usize,
) {
    let t0 = std::time::Instant::now();
    let (mut last_n, mut last_sum, mut last_b, mut last_t) = (0u64, 0u64, 0u64, t0);
    let planned = cfg.requests.map(|r| r * conns as u64);
    while !handle.is_finished() {
        let step = std::time::Instant::now() + Duration::from_secs(1);
        while std::time::Instant::now() < step && !handle.is_finished() {
            std::thread::sleep(Duration::from_millis(20));
        }
        if handle.is_finished() {
            break;
        }
        let now = std::time::Instant::now();
        let (n, sum, b) = (
            live.finished.load(Ordering::Relaxed),
            live.latency_sum_us.load(Ordering::Relaxed),
            live.bytes.load(Ordering::Relaxed),
        );
        let el = now.duration_since(t0).as_secs_f64();
        let dt = now.duration_since(last_t).as_secs_f64().max(1e-9);
        let pct = match (planned, cfg.test_time) {
            (Some(p), _) if p > 0 => 100.0 * n as f64 / p as f64,
            (_, Some(t)) => 100.0 * el / t as f64,
            _ => 0.0,
        };
        let cur_lat = if n > last_n { (sum - last_sum) as f64 / (n - last_n) as f64 / 1000.0 } else { 0.0 };
        let avg_lat = if n > 0 { sum as f64 / n as f64 / 1000.0 } else { 0.0 };
        eprint!(
            "[RUN #{} {:.0}%, {:>3} secs] {:>2} threads {:>2} conns: {:>11} ops, {:>7} (avg: {:>7}) ops/sec, {}/sec (avg: {}/sec), {:>5.2} (avg: {:>5.2}) msec latency\r",
            run_no,
            pct.min(100.0),
            el as u64,
            cfg.threads,
            conns,
            n,
            ((n - last_n) as f64 / dt) as u64,
            (n as f64 / el.max(1e-9)) as u64,
            rate_text((b - last_b) as f64 / dt),
            rate_text(b as f64 / el.max(1e-9)),
            cur_lat,
            avg_lat,
        );
        (last_n, last_sum, last_b, last_t) = (n, sum, b, now);
    }
    eprintln!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(args: &[&str]) -> Result<MemtierConfig, String> {
        let mut v = vec!["basalt-bench memtier"];
        v.extend_from_slice(args);
        let a = MemtierArgs::try_parse_from(v).map_err(|e| e.to_string())?;
        MemtierConfig::from_args(&a)
    }

    #[test]
    fn flags() {
        let c = cfg(&["--server", "127.0.0.1", "--port", "7000", "-c", "3", "-t", "2", "-n", "5", "--ratio", "1:3"]).expect("ok");
        assert_eq!(c.target, conn::Target::Tcp("127.0.0.1".into(), 7000));
        assert_eq!((c.clients, c.threads, c.requests), (3, 2, Some(5)));
        assert_eq!(c.spec.kinds.iter().map(|k| k.2).collect::<Vec<_>>(), vec![1, 3]);
        assert!(c.spec.random_data && !c.same_seed);
        let c = cfg(&["--test-time", "2", "--x-data", "--same-client-seed"]).expect("ok");
        assert_eq!((c.requests, c.test_time), (None, Some(2)));
        assert!(!c.spec.random_data && c.same_seed);
        let c = cfg(&["--command", "HSET h __key__ __data__"]).expect("ok");
        assert_eq!(c.names, vec!["Hsets"]);
        assert!(cfg(&["-n", "5", "--test-time", "2"]).is_err());
        assert!(cfg(&["--ratio", "x"]).is_err());
        assert!(cfg(&["--key-pattern", "P:R"]).is_err());
        assert!(cfg(&["--protocol", "memcache_text"]).is_err());
    }
}
