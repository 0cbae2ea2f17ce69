//! `basalt-bench ycsb matrix`: the Tair whitepaper's table (issue 25). For every data
//! type (string, hash, list, set, zset: `workload/ycsb_records.rs`) and value size
//! (128, 512, 1024, 4096 bytes by default), it empties the database, loads the records,
//! and runs YCSB's workloads A (50% reads, 50% updates) and C (reads only), then prints
//! the throughput, average and p99 latency of each phase. With `--compare HOST:PORT`
//! every cell runs on both servers, one after the other, and the table gives both and
//! the ratio.
//!
//! The database is emptied (FLUSHALL) before every cell, since the types share key
//! names: the mode refuses to run without `--flushall`, which says the user knows.

use crate::driver::conn;
use crate::modes::ycsb::{self, Config};
use crate::report::ycsb::{us_histogram, YcsbResult, SERIES};
use crate::workload::ycsb::{stock, Props};
use crate::workload::ycsb_records::{DataType, ALL};

const HELP: &str = "Usage: basalt-bench ycsb matrix --flushall [options]

For each data type and value size: FLUSHALL, load, workload A, workload C; then the
table of throughput, average and p99 latency per phase (the Tair whitepaper's matrix).

  --flushall             required: the database is emptied before every cell
  --types LIST           string,hash,list,set,zset (default: all)
  --sizes LIST           value sizes in bytes (default: 128,512,1024,4096)
  --compare HOST:PORT    run every cell on this server too, and give the ratio
  -p NAME=VALUE          YCSB properties for every run (redis.host, redis.port,
                         recordcount, operationcount, fieldcount, threadcount ...)
  -threads N             client threads (threadcount)
";

/// One phase's figures: operations per second, mean and p99 latency (us).
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    qps: f64,
    avg_us: f64,
    p99_us: u64,
}

fn cell(r: &YcsbResult) -> Cell {
    let mut h = us_histogram();
    for (name, (hist, _, _)) in SERIES.iter().zip(&r.series) {
        // A phase's operations: inserts (load), reads and updates (A, C).
        if matches!(*name, "READ" | "UPDATE" | "INSERT") {
            let _ = h.add(hist);
        }
    }
    let secs = r.runtime.as_secs_f64();
    Cell {
        qps: if secs > 0.0 { r.operations as f64 / secs } else { 0.0 },
        avg_us: if h.is_empty() { 0.0 } else { h.mean() },
        p99_us: if h.is_empty() { 0 } else { h.value_at_quantile(0.99) },
    }
}

fn flushall(props: &Props) -> Result<(), String> {
    let cfg = Config::from_props(props)?;
    let mut c = cfg.connect()?;
    let reply = conn::call(&mut c, &[b"FLUSHALL"], cfg.target()).map_err(|e| e.to_string())?;
    if reply.starts_with(b"-") {
        return Err(format!("FLUSHALL refused by {}: {}", cfg.target(), String::from_utf8_lossy(&reply).trim()));
    }
    Ok(())
}

/// Load, A and C for one type and size on the server `props` names.
fn one(props: &Props, dt: DataType, size: usize) -> Result<[Cell; 3], String> {
    flushall(props)?;
    let mut out = [Cell::default(); 3];
    for (i, (workload, load)) in [("a", true), ("a", false), ("c", false)].into_iter().enumerate() {
        let mut p = Props::default();
        p.load_text(stock(workload).unwrap_or_default());
        // The whitepaper's groups are the records alone: no `_indices` sorted set (A and
        // C send no scans), unless a -p asks for it.
        p.set("basalt.indices", "false");
        for (k, v) in &props.0 {
            p.set(k, v);
        }
        p.set("basalt.datatype", dt.name());
        p.set("fieldlength", &size.to_string());
        let cfg = Config::from_props(&p)?;
        let r = ycsb::run(&cfg, load, false)?;
        if let Some(e) = r.stopped_by {
            return Err(e);
        }
        out[i] = cell(&r);
    }
    Ok(out)
}

/// Entry point (`basalt-bench ycsb matrix ...`).
pub fn main(args: &[String]) -> anyhow::Result<i32> {
    let mut props = Props::default();
    let mut types: Vec<DataType> = ALL.to_vec();
    let mut sizes = vec![128usize, 512, 1024, 4096];
    let mut compare: Option<(String, String)> = None;
    let mut consent = false;
    let mut i = 0;
    let fail = |msg: String| -> anyhow::Result<i32> {
        eprintln!("{msg}\n\n{HELP}");
        Ok(1)
    };
    while i < args.len() {
        let next = args.get(i + 1).cloned();
        let need = |flag: &str| next.clone().ok_or_else(|| format!("Missing argument value for {flag}."));
        match args[i].as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(0);
            }
            "--flushall" => {
                consent = true;
                i += 1;
                continue;
            }
            "--types" => match need("--types").and_then(|v| v.split(',').map(DataType::parse).collect()) {
                Ok(t) => types = t,
                Err(e) => return fail(e),
            },
            "--sizes" => match need("--sizes").and_then(|v| {
                v.split(',').map(|s| s.trim().parse().map_err(|_| format!("Invalid size \"{s}\""))).collect()
            }) {
                Ok(s) => sizes = s,
                Err(e) => return fail(e),
            },
            "--compare" => match need("--compare") {
                Ok(v) => match v.rsplit_once(':') {
                    Some((h, p)) => compare = Some((h.to_string(), p.to_string())),
                    None => return fail(format!("--compare takes HOST:PORT, not \"{v}\"")),
                },
                Err(e) => return fail(e),
            },
            "-p" => match need("-p") {
                Ok(kv) => match kv.split_once('=') {
                    Some((k, v)) => props.set(k, v),
                    None => return fail(format!("Argument '-p' expected to be in key=value format: {kv}")),
                },
                Err(e) => return fail(e),
            },
            "-threads" => match need("-threads") {
                Ok(v) => props.set("threadcount", &v),
                Err(e) => return fail(e),
            },
            other => return fail(format!("Unknown option {other}")),
        }
        i += 2;
    }
    let a_name = format!("{}:{}", props.raw("redis.host").unwrap_or("127.0.0.1"), props.raw("redis.port").unwrap_or("6379"));
    if !consent {
        eprintln!("ycsb matrix empties the database (FLUSHALL) before every cell: pass --flushall to run it against {a_name}{}",
                  compare.as_ref().map(|(h, p)| format!(" and {h}:{p}")).unwrap_or_default());
        return Ok(1);
    }
    let b_props = compare.as_ref().map(|(h, p)| {
        let mut b = props.clone();
        b.set("redis.host", h);
        b.set("redis.port", p);
        b
    });
    let mut rows = Vec::new();
    for &dt in &types {
        for &size in &sizes {
            eprintln!("ycsb matrix: {} {size} B", dt.name());
            let a = match one(&props, dt, size) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("{e}");
                    return Ok(1);
                }
            };
            let b = match &b_props {
                Some(bp) => match one(bp, dt, size) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        eprintln!("{e}");
                        return Ok(1);
                    }
                },
                None => None,
            };
            rows.push((dt, size, a, b));
        }
    }
    print!("{}", table(&rows, &a_name, compare.as_ref().map(|(h, p)| format!("{h}:{p}"))));
    Ok(0)
}

type Row = (DataType, usize, [Cell; 3], Option<[Cell; 3]>);

fn table(rows: &[Row], a_name: &str, b_name: Option<String>) -> String {
    let mut out = String::new();
    let phases = ["load", "A (50% read, 50% update)", "C (read only)"];
    let mut head = "| type | size (B) | server |".to_string();
    let mut rule = "|---|---:|---|".to_string();
    for p in phases {
        head.push_str(&format!(" {p}: ops/s | avg us | p99 us |"));
        rule.push_str("---:|---:|---:|");
    }
    out.push_str(&head);
    out.push('\n');
    out.push_str(&rule);
    out.push('\n');
    for (dt, size, a, b) in rows {
        let line = |name: &str, cells: &[Cell; 3]| {
            let mut l = format!("| {} | {size} | {name} |", dt.name());
            for c in cells {
                l.push_str(&format!(" {:.0} | {:.0} | {} |", c.qps, c.avg_us, c.p99_us));
            }
            l
        };
        out.push_str(&line(a_name, a));
        out.push('\n');
        if let (Some(b), Some(bn)) = (b, &b_name) {
            out.push_str(&line(bn, b));
            out.push('\n');
            let mut l = format!("| {} | {size} | ratio |", dt.name());
            for (x, y) in a.iter().zip(b) {
                let r = if x.qps > 0.0 { y.qps / x.qps } else { f64::NAN };
                l.push_str(&format!(" {r:.2}x | | |"));
            }
            out.push_str(&l);
            out.push('\n');
        }
    }
    out
}
