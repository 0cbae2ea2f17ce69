//! basalt-bench entry point: picks the mode (redis-benchmark flags by default, `memtier`,
//! `compare`), runs it, prints the report, and maps failures to exit code 1.

mod cli;
mod config;
mod driver;
mod modes;
mod report;
mod stats;
mod workload;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    driver::install_sigint();
    let code = match args.get(1).map(String::as_str) {
        Some("memtier") => modes::memtier::main(&args[2..]),
        Some("compare") => modes::compare::main(&args[2..]),
        Some("redis-benchmark") => modes::redis::main(&args[2..]),
        Some("ycsb") if args.get(2).map(String::as_str) == Some("matrix") => modes::ycsb_matrix::main(&args[3..]),
        Some("ycsb") => modes::ycsb::main(&args[2..]),
        _ => modes::redis::main(&args[1..]),
    };
    std::process::exit(match code {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e:#}");
            1
        }
    });
}
