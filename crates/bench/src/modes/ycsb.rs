//! `basalt-bench ycsb load|run`: YCSB's core workload against a RESP server, sending what
//! YCSB 0.17's Redis binding sends, and printing YCSB's text output so that scripts
//! written for YCSB read it (issue 25).
//!
//! The binding's mapping: a record is a hash (`HMSET key field0 v0 ...`); a read is
//! `HGETALL key` (or `HMGET key fieldN` with `readallfields=false`), an error when the
//! record is missing; an update is `HMSET` of one field (or all with
//! `writeallfields=true`); an insert is `HMSET` then `ZADD _indices <Java hashCode of
//! the key> key`; a scan is `ZRANGEBYSCORE _indices <hash> +inf LIMIT 0 <n>` then a
//! read of each key; a read-modify-write is a read then an update. `-p
//! basalt.indices=false` leaves the `_indices` set out (inserts are one HMSET; scans are
//! then refused). `-p basalt.datatype=string|list|set|zset` keeps records in another
//! type (`workload/ycsb_records.rs`); `ycsb matrix` (`ycsb_matrix.rs`) runs every type.
//!
//! Like YCSB, each of `threadcount` threads owns one connection and runs one operation
//! at a time. With `target` (operations per second over all threads) each thread
//! follows a fixed schedule and every latency counts from the operation's intended
//! start, so a stalled server shows as latency (coordinated omission corrected; YCSB's
//! default measures from the actual start and hides the stall).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use fastrand::Rng;
use hdrhistogram::Histogram;

use crate::driver::conn::{self, Blocking, Handshake, Target};
use crate::driver::INTERRUPTED;
use crate::report::ycsb::{us_histogram, YcsbResult, SERIES};
use crate::stats::{self, cpu, Second};
use crate::workload::ycsb::{self, InsertSequence, Op, Props, Workload};
use crate::workload::ycsb_records::{self as records, DataType, Write};

const HELP: &str = "Usage: basalt-bench ycsb load|run [options]
       basalt-bench ycsb matrix --flushall [options]   (basalt-bench ycsb matrix --help)

YCSB's core workload against a RESP server, as YCSB 0.17's Redis binding sends it,
with YCSB's text output.

  -P FILE            a workload property file (repeatable; later wins). The stock
                     workloads are built in: -P workloada .. workloadf (or a..f) when
                     no such file exists
  --workload NAME    a stock workload, a..f
  -p NAME=VALUE      set a property (repeatable; wins over files)
  -threads N         client threads, one connection each (threadcount)
  -target N          operations per second over all threads (target); latencies then
                     count from each operation's intended start
  -s                 status every 10 s on stderr
  --report FILE.html a self-contained HTML report (not YCSB's: basalt-bench's)
  --hdr-log FILE     the latencies as HdrHistogram's interval log (.hlog, microseconds)
  -db NAME           accepted for YCSB's command lines; only the Redis binding exists

Properties: YCSB's core workload (recordcount, operationcount, fieldcount, fieldlength,
fieldlengthdistribution, readallfields, writeallfields, readproportion, updateproportion,
insertproportion, scanproportion, readmodifywriteproportion, requestdistribution =
uniform|zipfian|latest|hotspot|sequential|exponential, insertorder, insertstart,
insertcount, zeropadding, minscanlength, maxscanlength, scanlengthdistribution,
hotspotdatafraction, hotspotopnfraction, maxexecutiontime), the binding's redis.host,
redis.port, redis.password, basalt.indices=false (no _indices sorted set), and
basalt.datatype=hash|string|list|set|zset (hash: YCSB's binding; the others keep a
record as that type, see docs/bench-tool.md).
";

fn series_index(name: &str) -> usize {
    SERIES.iter().position(|s| *s == name).unwrap_or(0)
}

/// Parsed command line.
struct YcsbArgs {
    load: bool,
    props: Props,
    status: bool,
    /// `--report FILE.html` (ours, not YCSB's).
    report: Option<std::path::PathBuf>,
    /// `--hdr-log FILE` (ours).
    hdr_log: Option<std::path::PathBuf>,
}

fn parse_args(args: &[String]) -> Result<Option<YcsbArgs>, String> {
    let mut props = Props::default();
    let mut overrides: Vec<(String, String)> = Vec::new();
    let mut phase = None;
    let mut status = false;
    let mut report = None;
    let mut hdr_log = None;
    let mut i = 0;
    let value = |i: usize, flag: &str| -> Result<String, String> {
        args.get(i + 1).cloned().ok_or_else(|| format!("Missing argument value for {flag}."))
    };
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "load" | "-load" => phase = Some(true),
            "run" | "-t" => phase = Some(false),
            "-h" | "--help" | "-help" => return Ok(None),
            "-s" => status = true,
            "--report" => {
                report = Some(std::path::PathBuf::from(value(i, a)?));
                i += 1;
            }
            "--hdr-log" => {
                hdr_log = Some(std::path::PathBuf::from(value(i, a)?));
                i += 1;
            }
            "-P" => {
                let f = value(i, a)?;
                match std::fs::read_to_string(&f) {
                    Ok(text) => props.load_text(&text),
                    Err(e) => match ycsb::stock(std::path::Path::new(&f).file_name().and_then(|n| n.to_str()).unwrap_or(&f)) {
                        Some(text) => props.load_text(text),
                        None => return Err(format!("Unable to open the properties file {f}: {e}")),
                    },
                }
                i += 1;
            }
            "--workload" => {
                let w = value(i, a)?;
                props.load_text(ycsb::stock(&w).ok_or_else(|| format!("Unknown stock workload \"{w}\" (a..f)"))?);
                i += 1;
            }
            "-p" => {
                let kv = value(i, a)?;
                let (k, v) = kv.split_once('=').ok_or_else(|| format!("Argument '-p' expected to be in key=value format: {kv}"))?;
                overrides.push((k.to_string(), v.to_string()));
                i += 1;
            }
            "-threads" => {
                overrides.push(("threadcount".into(), value(i, a)?));
                i += 1;
            }
            "-target" => {
                overrides.push(("target".into(), value(i, a)?));
                i += 1;
            }
            "-db" => {
                let db = value(i, a)?;
                if !db.to_ascii_lowercase().contains("redis") {
                    return Err(format!("Only the Redis binding is built in, not \"{db}\""));
                }
                i += 1;
            }
            other => return Err(format!("Unknown option {other}")),
        }
        i += 1;
    }
    for (k, v) in overrides {
        props.set(&k, &v);
    }
    let load = phase.ok_or("Say load or run (basalt-bench ycsb load|run ...)")?;
    Ok(Some(YcsbArgs { load, props, status, report, hdr_log }))
}

/// Entry point.
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let a = match parse_args(args) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{HELP}");
            return Ok(0);
        }
        Err(e) => {
            eprintln!("{e}\n\n{HELP}");
            return Ok(1);
        }
    };
    let cfg = match Config::from_props(&a.props) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return Ok(1);
        }
    };
    eprintln!(
        "basalt-bench ycsb {}: {} threads against {}{}",
        if a.load { "load" } else { "run" },
        cfg.threads,
        cfg.target,
        if cfg.ops_per_s > 0.0 { format!(", target {} ops/s", cfg.ops_per_s) } else { String::new() }
    );
    match run(&cfg, a.load, a.status) {
        Ok(r) => {
            print!("{}", crate::report::ycsb::text(&r));
            if let Some(path) = &a.report {
                let mut config: Vec<(String, String)> = a.props.0.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                config.sort();
                config.retain(|(k, _)| k != "redis.password");
                config.insert(0, ("phase".into(), if a.load { "load" } else { "run" }.into()));
                let server = super::server_rows(&cfg.target, &cfg.handshake());
                let page = crate::report::html::Page {
                    title: format!("basalt-bench ycsb {} against {}", if a.load { "load" } else { "run" }, cfg.target),
                    config,
                    server,
                    kinds: SERIES.iter().zip(&r.series).filter(|(_, s)| !s.0.is_empty()).map(|(n, s)| (n.to_string(), &s.0)).collect(),
                    seconds: &r.timeline,
                    cpu: &r.cpu,
                    open_loop: cfg.ops_per_s > 0.0,
                };
                if let Err(e) = std::fs::write(path, crate::report::html::render(&page)) {
                    eprintln!("Could not write {}: {e}", path.display());
                    return Ok(1);
                }
            }
            if let Some(path) = &a.hdr_log {
                let start_ms = std::time::SystemTime::now()
                    .checked_sub(r.runtime)
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_millis());
                let kinds: Vec<(String, &Histogram<u64>)> =
                    SERIES.iter().zip(&r.series).filter(|(_, s)| !s.0.is_empty()).map(|(n, s)| (n.to_string(), &s.0)).collect();
                if let Err(e) = crate::report::hdr_log::write(path, start_ms, &kinds, &r.timeline) {
                    eprintln!("{e}");
                    return Ok(1);
                }
            }
            let ops = r.operations.max(1) as f64;
            eprintln!(
                "basalt-bench ycsb: client CPU {:.1} us per operation ({:.2} s in all)",
                r.client_cpu_s * 1e6 / ops,
                r.client_cpu_s
            );
            if let Some(e) = &r.stopped_by {
                eprintln!("{e}\nThe run stopped early: the report covers the operations that completed.");
                return Ok(1);
            }
            Ok(if INTERRUPTED.load(Ordering::SeqCst) { 130 } else { 0 })
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(1)
        }
    }
}

/// A run's settings: the workload and the binding's.
pub struct Config {
    workload: Workload,
    target: Target,
    password: Option<String>,
    threads: usize,
    ops_per_s: f64,
    indices: bool,
    datatype: DataType,
}

impl Config {
    /// The connection set-up: AUTH with `redis.password`, as the binding.
    fn handshake(&self) -> Handshake {
        Handshake { auth: self.password.clone().map(|p| (None, p)), db: 0, resp3: false }
    }

    /// A connection to the server, set up as the binding sets it up.
    pub fn connect(&self) -> Result<Blocking, String> {
        let mut c = conn::connect(&self.target, Duration::from_secs(30)).map_err(|e| e.to_string())?;
        conn::handshake(&mut c, &self.handshake(), &self.target).map_err(|e| e.to_string())?;
        Ok(c)
    }

    /// The server.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// From properties.
    pub fn from_props(p: &Props) -> Result<Config, String> {
        let workload = Workload::from_props(p)?;
        let indices = p.get("basalt.indices", true)?;
        if !indices && workload.mix.iter().any(|m| m.1 == Op::Scan) {
            return Err("Scans need the _indices sorted set: basalt.indices=false leaves it out".into());
        }
        let threads: usize = p.get("threadcount", 1)?;
        if threads == 0 || threads > 10_000 {
            return Err(format!("threadcount must be 1 to 10000, not {threads}"));
        }
        Ok(Config {
            workload,
            target: Target::Tcp(p.raw("redis.host").unwrap_or("127.0.0.1").to_string(), p.get("redis.port", 6379)?),
            password: p.raw("redis.password").map(str::to_string),
            threads,
            ops_per_s: p.get("target", 0.0)?,
            indices,
            datatype: DataType::parse(p.raw("basalt.datatype").unwrap_or("hash"))?,
        })
    }
}

/// Shared by the threads of a run.
struct Shared {
    /// The load phase's next key number.
    load_next: AtomicI64,
    inserts: InsertSequence,
    done: AtomicU64,
    stop: AtomicBool,
}

/// Runs the load or run phase; every thread's results merged.
pub fn run(cfg: &Config, load: bool, status: bool) -> Result<YcsbResult, String> {
    let w = &cfg.workload;
    let total = if load { w.insertcount } else { w.operationcount };
    let shared = Arc::new(Shared {
        load_next: AtomicI64::new(w.insertstart),
        inserts: InsertSequence::new(w.recordcount),
        done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    });
    // Connect every thread's connection first, as YCSB's init does.
    let mut conns = Vec::new();
    for _ in 0..cfg.threads {
        conns.push(cfg.connect()?);
    }
    let barrier = Arc::new(Barrier::new(cfg.threads + 1));
    let mut handles = Vec::new();
    let threads = cfg.threads as i64;
    for (t, c) in conns.into_iter().enumerate() {
        // YCSB's split: total / threads each, the first (total % threads) one more.
        let mine = total / threads + i64::from((t as i64) < total % threads);
        let shared = shared.clone();
        let barrier = barrier.clone();
        let mut worker = Worker {
            conn: c,
            target: cfg.target.clone(),
            w: w.clone(),
            rng: Rng::with_seed(0x5eed ^ (t as u64) << 20),
            indices: cfg.indices,
            datatype: cfg.datatype,
            series: SERIES.iter().map(|_| (us_histogram(), 0, 0)).collect(),
            timeline: Vec::new(),
            key: Vec::new(),
            value: Vec::with_capacity(w.fieldlength.2 as usize),
        };
        let interval = (cfg.ops_per_s > 0.0).then(|| Duration::from_secs_f64(cfg.threads as f64 / cfg.ops_per_s));
        let deadline = (w.maxexecutiontime > 0).then(|| Duration::from_secs(w.maxexecutiontime));
        handles.push(
            std::thread::Builder::new()
                .name(format!("ycsb-{t}"))
                .spawn(move || {
                    barrier.wait();
                    let meter = cpu::CpuMeter::start();
                    let r = worker.run(&shared, load, mine, interval, deadline);
                    (r, worker.series, worker.timeline, meter.finish())
                })
                .map_err(|e| e.to_string())?,
        );
    }
    barrier.wait();
    let start = Instant::now();
    let status_thread = status.then(|| {
        let shared = shared.clone();
        std::thread::spawn(move || status_lines(&shared, start))
    });
    let mut series: Vec<(Histogram<u64>, u64, u64)> = SERIES.iter().map(|_| (us_histogram(), 0, 0)).collect();
    let mut first_err = None;
    let mut cpu = Vec::new();
    let mut timeline: Vec<Second> = Vec::new();
    for h in handles {
        let (r, s, t, c) = h.join().map_err(|_| "a client thread panicked".to_string())?;
        if let Err(e) = r {
            first_err.get_or_insert(e);
        }
        for (acc, one) in series.iter_mut().zip(s) {
            let _ = acc.0.add(&one.0);
            acc.1 += one.1;
            acc.2 += one.2;
        }
        for (i, sec) in t.iter().enumerate() {
            if timeline.len() <= i {
                timeline.resize_with(i + 1, Second::new);
            }
            timeline[i].merge(sec);
        }
        cpu.push(c);
    }
    let runtime = start.elapsed();
    shared.stop.store(true, Ordering::SeqCst);
    if let Some(t) = status_thread {
        let _ = t.join();
    }
    Ok(YcsbResult {
        stopped_by: first_err,
        runtime,
        operations: shared.done.load(Ordering::SeqCst),
        series,
        client_cpu_s: cpu.iter().map(|c| c.cpu_s).sum(),
        timeline,
        cpu,
    })
}

/// YCSB's status line every 10 s (`-s`), on stderr.
fn status_lines(shared: &Shared, start: Instant) {
    let mut last = 0;
    let mut next = Duration::from_secs(10);
    while !shared.stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        if start.elapsed() >= next {
            let done = shared.done.load(Ordering::SeqCst);
            eprintln!("{} sec: {done} operations; {:.1} current ops/sec;", next.as_secs(), (done - last) as f64 / 10.0);
            last = done;
            next += Duration::from_secs(10);
        }
    }
}

/// One client thread: its connection, its random source, its measurements.
struct Worker {
    conn: Blocking,
    target: Target,
    w: Workload,
    rng: Rng,
    indices: bool,
    datatype: DataType,
    series: Vec<(Histogram<u64>, u64, u64)>,
    /// Top-level operations per second since the start, with their latencies.
    timeline: Vec<Second>,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Worker {
    fn run(
        &mut self,
        shared: &Shared,
        load: bool,
        count: i64,
        interval: Option<Duration>,
        deadline: Option<Duration>,
    ) -> Result<(), String> {
        let start = Instant::now();
        for i in 0..count {
            if INTERRUPTED.load(Ordering::SeqCst)
                || shared.stop.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| start.elapsed() >= d)
            {
                break;
            }
            // Open loop: the operation's intended start; the latency counts from it.
            let intended = match interval {
                Some(iv) => {
                    let at = start + iv.mul_f64(i as f64);
                    if let Some(wait) = at.checked_duration_since(Instant::now()) {
                        std::thread::sleep(wait);
                    }
                    Some(at)
                }
                None => None,
            };
            let t0 = intended.unwrap_or_else(Instant::now);
            let done = if load {
                let keynum = shared.load_next.fetch_add(1, Ordering::SeqCst);
                self.insert(keynum, intended)
            } else {
                self.transaction(shared, intended)
            };
            if let Err(e) = done {
                // A closed or stalled connection ends the whole run; what completed is
                // reported (issue 25, fault 6).
                shared.stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
            shared.done.fetch_add(1, Ordering::Relaxed);
            let sec = start.elapsed().as_secs() as usize;
            if self.timeline.len() <= sec {
                self.timeline.resize_with(sec + 1, Second::new);
            }
            let s = &mut self.timeline[sec];
            s.count += 1;
            let us = t0.elapsed().as_micros() as u64;
            s.sum_us += us;
            stats::record(&mut s.hist, us, 1);
        }
        Ok(())
    }

    fn transaction(&mut self, shared: &Shared, intended: Option<Instant>) -> Result<(), String> {
        match self.w.next_op(&mut self.rng) {
            Op::Read => {
                let k = self.w.chooser.next_keynum(&shared.inserts, &mut self.rng);
                self.set_key(k);
                let field = self.pick_field();
                self.read(field, intended)?;
            }
            Op::Update => {
                let k = self.w.chooser.next_keynum(&shared.inserts, &mut self.rng);
                self.set_key(k);
                self.update(intended)?;
            }
            Op::Insert => {
                let k = shared.inserts.next();
                let r = self.insert(k, intended);
                shared.inserts.acknowledge(k);
                r?;
            }
            Op::Scan => {
                let k = self.w.chooser.next_keynum(&shared.inserts, &mut self.rng);
                let n = self.w.scan_len(&mut self.rng);
                self.set_key(k);
                let field = self.pick_field();
                self.scan(n, field, intended)?;
            }
            Op::ReadModifyWrite => {
                let k = self.w.chooser.next_keynum(&shared.inserts, &mut self.rng);
                self.set_key(k);
                let field = self.pick_field();
                let t0 = intended.unwrap_or_else(Instant::now);
                let ok = self.read(field, None)?;
                let ok = ok && self.update(None)?;
                self.note("READ-MODIFY-WRITE", t0, ok);
            }
        }
        Ok(())
    }

    fn set_key(&mut self, keynum: i64) {
        ycsb::key_name(keynum, self.w.zeropadding, self.w.ordered, &mut self.key);
    }

    /// The field a read of one field reads (None: every field).
    fn pick_field(&mut self) -> Option<usize> {
        (!self.w.readallfields).then(|| self.rng.usize(..self.w.fieldcount.max(1)))
    }

    fn note(&mut self, series: &str, t0: Instant, ok: bool) {
        let s = &mut self.series[series_index(series)];
        stats::record(&mut s.0, t0.elapsed().as_micros() as u64, 1);
        if ok {
            s.1 += 1;
        } else {
            s.2 += 1;
        }
    }

    fn call(&mut self, args: &[&[u8]]) -> Result<Vec<u8>, String> {
        conn::call(&mut self.conn, args, &self.target).map_err(|e| e.to_string())
    }

    /// Sends commands one after another; the last reply.
    fn send_all(&mut self, cmds: &[records::Command]) -> Result<Vec<u8>, String> {
        let mut last = Vec::new();
        for c in cmds {
            let args: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            last = self.call(&args)?;
            if last.starts_with(b"-") {
                break;
            }
        }
        Ok(last)
    }

    /// Reads the record at `self.key` (one field of a hash with `field`): found or not.
    fn read_record(&mut self, field: Option<usize>) -> Result<bool, String> {
        let name = field.map(|f| self.w.fieldnames[f].clone());
        let cmd = records::read(self.datatype, &self.key, name.as_deref());
        let reply = self.send_all(&[cmd])?;
        Ok(records::read_found(&reply))
    }

    /// A read; an error reply or a missing record is an ERROR, as in YCSB's binding.
    fn read(&mut self, field: Option<usize>, intended: Option<Instant>) -> Result<bool, String> {
        let t0 = intended.unwrap_or_else(Instant::now);
        let ok = self.read_record(field)?;
        self.note("READ", t0, ok);
        Ok(ok)
    }

    /// Writes the record at `self.key` with fresh random values (see `ycsb_records`).
    fn write_record(&mut self, kind: Write) -> Result<bool, String> {
        let count = match (kind, self.datatype) {
            (Write::One(_), _) | (_, DataType::String) => 1,
            _ => self.w.fieldcount,
        };
        let mut values = Vec::with_capacity(count);
        let mut scores = Vec::with_capacity(count);
        for _ in 0..count {
            let len = self.w.field_len(&mut self.rng);
            ycsb::random_value(len, &mut self.rng, &mut self.value);
            values.push(self.value.clone());
            scores.push(self.rng.u64(..1 << 32));
        }
        let cmds = records::write(self.datatype, &self.key, kind, &self.w.fieldnames, &values, &scores);
        let reply = self.send_all(&cmds)?;
        Ok(!reply.starts_with(b"-"))
    }

    /// An update of one value (all with `writeallfields`).
    fn write_update(&mut self, all: bool) -> Result<bool, String> {
        let kind = if all { Write::All } else { Write::One(self.rng.usize(..self.w.fieldcount.max(1))) };
        self.write_record(kind)
    }

    fn update(&mut self, intended: Option<Instant>) -> Result<bool, String> {
        let t0 = intended.unwrap_or_else(Instant::now);
        let ok = self.write_update(self.w.writeallfields)?;
        self.note("UPDATE", t0, ok);
        Ok(ok)
    }

    fn insert(&mut self, keynum: i64, intended: Option<Instant>) -> Result<(), String> {
        let t0 = intended.unwrap_or_else(Instant::now);
        self.set_key(keynum);
        let mut ok = self.write_record(Write::Insert)?;
        if ok && self.indices {
            let mut score = itoa::Buffer::new();
            let score = score.format(ycsb::java_hash(&self.key)).as_bytes().to_vec();
            let key = self.key.clone();
            let reply = self.call(&[b"ZADD", b"_indices", &score, &key])?;
            ok = !reply.starts_with(b"-");
        }
        self.note("INSERT", t0, ok);
        Ok(())
    }

    /// ZRANGEBYSCORE of `_indices` from the start key's hash, then a read of each key.
    fn scan(&mut self, n: i64, field: Option<usize>, intended: Option<Instant>) -> Result<(), String> {
        let t0 = intended.unwrap_or_else(Instant::now);
        let mut score = itoa::Buffer::new();
        let score = score.format(ycsb::java_hash(&self.key)).as_bytes().to_vec();
        let mut count = itoa::Buffer::new();
        let count = count.format(n).as_bytes().to_vec();
        let reply = self.call(&[b"ZRANGEBYSCORE", b"_indices", &score, b"+inf", b"LIMIT", b"0", &count])?;
        let keys = match resp::decode_frame(&reply, u64::MAX) {
            Ok(Some((resp::Frame::Array(items), _))) => {
                items.into_iter().filter_map(|f| f.as_bytes().map(<[u8]>::to_vec)).collect()
            }
            _ => Vec::new(),
        };
        let ok = !reply.starts_with(b"-");
        for k in keys {
            self.key = k;
            // The reads of a scan are the binding's own calls, not measured as READs
            // (YCSB measures only the DB interface's scan).
            self.read_record(field)?;
        }
        self.note("SCAN", t0, ok);
        Ok(())
    }
}
