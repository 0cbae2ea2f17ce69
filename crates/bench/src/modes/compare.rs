//! compare mode: the same workload against two servers, alternating the order every round
//! (a,b then b,a) so drift on a noisy machine hits both sides alike; medians, spread, b/a.

use crate::cli::CompareArgs;
use crate::config::RedisConfig;
use crate::driver::conn::{Handshake, Target};
use crate::report::compare::{table, Figures};
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
    if a.rounds == 0 || a.clients == 0 || a.pipeline == 0 {
        eprintln!("--rounds, -c and -P must be at least 1");
        return Ok(1);
    }
    let names: Vec<String> = a.tests.split(',').map(|s| s.to_ascii_lowercase()).collect();
    let data = workload::redis_benchmark_data(a.datasize);
    let tests: Vec<Test> = workload::default_suite(Some(&names), &data, a.keyspace.is_some());
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
    let cfg = |t: Target| RedisConfig {
        target: t,
        handshake: Handshake::default(),
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
        command: None,
        rate: a.rate,
        stall_timeout: 10.0,
        io_engine,
    };
    let (ca, cb) = (cfg(ta), cfg(tb));
    let mut code = 0;
    for test in &tests {
        let mut fa = Vec::new();
        let mut fb = Vec::new();
        for round in 0..a.rounds {
            let order: [(&RedisConfig, bool); 2] = if round % 2 == 0 { [(&ca, true), (&cb, false)] } else { [(&cb, false), (&ca, true)] };
            for (c, is_a) in order {
                let (r, errs) = match super::redis::measure(c, test) {
                    Ok(x) => x,
                    Err(e) => {
                        eprintln!("{e}");
                        return Ok(1);
                    }
                };
                code = code.max(errs);
                let f = Figures {
                    rps: r.rps(),
                    avg: stats::mean(&r.hist) / 1000.0,
                    p50: stats::value_at_percentile(&r.hist, 50.0) as f64 / 1000.0,
                    p99: stats::value_at_percentile(&r.hist, 99.0) as f64 / 1000.0,
                    p999: stats::value_at_percentile(&r.hist, 99.9) as f64 / 1000.0,
                };
                if is_a { fa.push(f) } else { fb.push(f) }
            }
        }
        println!("====== {} ======", test.title);
        print!("{}", table(&a.a, &a.b, &fa, &fb));
        println!();
    }
    Ok(code)
}
