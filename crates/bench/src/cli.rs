//! Flag spellings only (clap): redis-benchmark's flags, memtier_benchmark's flags, and compare's.
//! Validation and defaults that depend on other flags live in `config.rs`.

use clap::Parser;

/// Latency rule shared by every mode, shown in --help.
pub const LATENCY_NOTE: &str = "Latency is measured per request: from the write of its batch (open loop: from its intended send time) to the read that completed its reply. redis-benchmark records one first-byte time per batch P times; with -P > 1 our figures are per request and include the time to receive the whole batch.";

/// redis-benchmark's flags (`basalt-bench [OPTIONS] [COMMAND ARGS...]`).
#[derive(Parser, Debug, Clone)]
#[command(
    name = "basalt-bench",
    about = "basalt-bench: an honest, efficient RESP load generator (redis-benchmark mode).\nSubcommands: `basalt-bench memtier ...`, `basalt-bench compare ...`.",
    after_help = LATENCY_NOTE,
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct RedisArgs {
    /// Server hostname.
    #[arg(short = 'h', default_value = "127.0.0.1")]
    pub host: String,
    /// Server port.
    #[arg(short = 'p', default_value_t = 6379)]
    pub port: u16,
    /// Server socket (overrides host and port).
    #[arg(short = 's')]
    pub socket: Option<std::path::PathBuf>,
    /// Password for Redis Auth.
    #[arg(short = 'a')]
    pub password: Option<String>,
    /// Used to send ACL style 'AUTH username pass'. Needs -a.
    #[arg(long = "user")]
    pub user: Option<String>,
    /// TLS (redis-benchmark's flags).
    #[command(flatten)]
    pub tls: RedisTlsArgs,
    /// Server URI: redis://user:password@host:port/dbnum.
    #[arg(short = 'u')]
    pub uri: Option<String>,
    /// Number of parallel connections.
    #[arg(short = 'c', default_value_t = 50)]
    pub clients: usize,
    /// Total number of requests.
    #[arg(short = 'n', default_value_t = 100_000)]
    pub requests: u64,
    /// Data size of SET/GET value in bytes.
    #[arg(short = 'd', default_value_t = 3)]
    pub datasize: usize,
    /// SELECT the specified db number.
    #[arg(long = "dbnum", default_value_t = 0)]
    pub dbnum: u32,
    /// Start session in RESP3 protocol mode.
    #[arg(short = '3')]
    pub resp3: bool,
    /// Number of event-loop threads (default 1).
    #[arg(long)]
    pub threads: Option<usize>,
    /// 1=keep alive 0=reconnect (only 1 is supported).
    #[arg(short = 'k', default_value_t = 1)]
    pub keepalive: u8,
    /// Use random keys: __rand_int__ becomes 12 digits in 0..keyspacelen-1.
    #[arg(short = 'r')]
    pub keyspace: Option<u64>,
    /// Pipeline <numreq> requests.
    #[arg(short = 'P', default_value_t = 1)]
    pub pipeline: usize,
    /// Deprecated no-op kept for compatibility (errors are always reported, never counted).
    #[arg(short = 'e')]
    pub show_errors: bool,
    /// Quiet. Just show query/sec values.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Output in CSV format.
    #[arg(long = "csv")]
    pub csv: bool,
    /// Loop. Run the tests until Ctrl-C.
    #[arg(short = 'l')]
    pub loop_forever: bool,
    /// Only run the comma separated list of tests.
    #[arg(short = 't')]
    pub tests: Option<String>,
    /// Idle mode. Just open N idle connections and wait (until Ctrl-C).
    #[arg(short = 'I')]
    pub idle: bool,
    /// Read last argument from STDIN.
    #[arg(short = 'x')]
    pub stdin_arg: bool,
    /// HDR histogram significant figures (1..=4; default 3).
    #[arg(long, default_value_t = 3)]
    pub precision: u8,
    /// Seed for __rand_int__ (default: time and pid).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Open loop: this many requests per second over all connections; latency from the intended
    /// send time (coordinated omission corrected), service time printed beside it.
    #[arg(long)]
    pub rate: Option<f64>,
    /// Fail the run when no reply arrives for this many seconds.
    #[arg(long = "stall-timeout", default_value_t = 10.0)]
    pub stall_timeout: f64,
    /// I/O engine of the load threads: uring, epoll or auto (as the server's --io-engine).
    #[arg(long = "io-engine", default_value = "auto")]
    pub io_engine: String,
    /// Also write a self-contained HTML report (each test's latency spectrum, the
    /// configuration, the server's version and persistence). Not redis-benchmark's.
    #[arg(long = "report")]
    pub report: Option<std::path::PathBuf>,
    /// Also write the latencies as HdrHistogram's interval log (.hlog, microseconds):
    /// one interval per test, tagged with its name. Not redis-benchmark's.
    #[arg(long = "hdr-log")]
    pub hdr_log: Option<std::path::PathBuf>,
    /// Output this help and exit.
    #[arg(long = "help")]
    pub help: bool,
    /// Output version and exit.
    #[arg(long = "version", short = 'v')]
    pub version: bool,
    /// A custom command to benchmark instead of the default tests.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND ARGS")]
    pub command: Vec<String>,
}

/// redis-benchmark's TLS flags (redis-benchmark mode and compare).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RedisTlsArgs {
    /// Establish a secure TLS connection.
    #[arg(long = "tls")]
    pub tls: bool,
    /// Server name indication for TLS.
    #[arg(long = "sni")]
    pub sni: Option<String>,
    /// CA Certificate file to verify with.
    #[arg(long = "cacert")]
    pub cacert: Option<std::path::PathBuf>,
    /// Directory where trusted CA certificates are stored.
    #[arg(long = "cacertdir")]
    pub cacertdir: Option<std::path::PathBuf>,
    /// Allow insecure TLS connection by skipping cert validation.
    #[arg(long = "insecure")]
    pub insecure: bool,
    /// Client certificate to authenticate with.
    #[arg(long = "cert")]
    pub cert: Option<std::path::PathBuf>,
    /// Private key file to authenticate with.
    #[arg(long = "key")]
    pub key: Option<std::path::PathBuf>,
}

impl RedisTlsArgs {
    /// The TLS options, when `--tls` is given.
    pub fn options(&self) -> Option<crate::driver::tls::Options> {
        self.tls.then(|| crate::driver::tls::Options {
            ca_cert: self.cacert.clone(),
            ca_cert_dir: self.cacertdir.clone(),
            cert: self.cert.clone(),
            key: self.key.clone(),
            sni: self.sni.clone(),
            insecure: self.insecure,
        })
    }
}

/// `basalt-bench compare --a HOST:PORT --b HOST:PORT [workload options]`.
#[derive(Parser, Debug, Clone)]
#[command(
    name = "basalt-bench compare",
    about = "Runs the same workload against two servers in alternation (a,b then b,a), N rounds, and prints per metric both medians, the min-max spread and the ratio b/a.",
    after_help = LATENCY_NOTE
)]
pub struct CompareArgs {
    /// First server, HOST:PORT.
    #[arg(long = "a")]
    pub a: String,
    /// Second server, HOST:PORT.
    #[arg(long = "b")]
    pub b: String,
    /// Rounds (each runs a and b once).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Parallel connections.
    #[arg(short = 'c', long = "clients", default_value_t = 50)]
    pub clients: usize,
    /// Requests per test and server per round.
    #[arg(short = 'n', long = "requests", default_value_t = 100_000)]
    pub requests: u64,
    /// Value size.
    #[arg(short = 'd', long = "data-size", default_value_t = 3)]
    pub datasize: usize,
    /// Pipeline depth.
    #[arg(short = 'P', long = "pipeline", default_value_t = 1)]
    pub pipeline: usize,
    /// Tests (redis-benchmark names).
    #[arg(short = 't', long = "tests", default_value = "set,get")]
    pub tests: String,
    /// Key space for __rand_int__.
    #[arg(short = 'r', long = "keyspace")]
    pub keyspace: Option<u64>,
    /// Event-loop threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Open-loop rate (requests per second).
    #[arg(long)]
    pub rate: Option<f64>,
    /// I/O engine of the load threads: uring, epoll or auto.
    #[arg(long = "io-engine", default_value = "auto")]
    pub io_engine: String,
    /// Password for both servers (AUTH), as redis-benchmark's -a.
    #[arg(short = 'a', long = "auth")]
    pub password: Option<String>,
    /// User name for AUTH (with -a), as redis-benchmark's --user.
    #[arg(long = "user")]
    pub user: Option<String>,
    /// TLS to both servers (redis-benchmark's flags).
    #[command(flatten)]
    pub tls: RedisTlsArgs,
    /// Print each test's summary as CSV (test,metric,a_median,a_min,a_max,b_median,
    /// b_min,b_max,b_over_a,ci90_low,ci90_high) instead of the table.
    #[arg(long = "csv")]
    pub csv: bool,
    /// Also write the whole comparison as JSON: the servers compared, and per test every
    /// round's figures and each metric's summary.
    #[arg(long = "json-out-file")]
    pub json_out_file: Option<std::path::PathBuf>,
    /// Also write a self-contained HTML page: both servers, per test the medians side by
    /// side with b/a and its interval, and both servers' latency spectra.
    #[arg(long = "report")]
    pub report: Option<std::path::PathBuf>,
    /// Also write the latencies as HdrHistogram's interval log (.hlog, microseconds): per
    /// test, one interval for each server over its whole rounds, tagged `a:TEST` and
    /// `b:TEST`.
    #[arg(long = "hdr-log")]
    pub hdr_log: Option<std::path::PathBuf>,
    /// A memtier workload to compare instead of the -t tests: memtier mode's flags in one
    /// string (e.g. "--ratio 1:10 --key-pattern G:G --test-time 5"); the server, port
    /// and password are this comparison's.
    #[arg(long = "memtier", value_name = "MEMTIER FLAGS")]
    pub memtier: Option<String>,
    /// A custom command to compare instead of the -t tests (`__rand_int__` is replaced
    /// with -r, as in redis-benchmark mode).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "COMMAND ARGS")]
    pub command: Vec<String>,
}

/// memtier_benchmark's flags (`basalt-bench memtier ...`).
#[derive(Parser, Debug, Clone)]
#[command(
    name = "basalt-bench memtier",
    about = "memtier_benchmark-compatible mode. Honest defaults that differ from memtier: every client gets its own seed (memtier: all clients draw the same keys unless --distinct-client-seed; use --same-client-seed for its behaviour) and values are random bytes (memtier: 'x' bytes unless -R; use --x-data for its behaviour).",
    after_help = LATENCY_NOTE,
    disable_version_flag = true,
    // memtier's -h is --host (help is --help only), and a flag given twice takes its
    // last value, as getopt does there (issue 25).
    disable_help_flag = true,
    args_override_self = true
)]
pub struct MemtierArgs {
    /// Output this help and exit.
    #[arg(long = "help", action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Server address.
    #[arg(short = 's', long = "server", default_value = "localhost")]
    pub server: String,
    /// Alias of --server.
    #[arg(short = 'h', long = "host")]
    pub host: Option<String>,
    /// Server port.
    #[arg(short = 'p', long = "port", default_value_t = 6379)]
    pub port: u16,
    /// Unix socket.
    #[arg(short = 'S', long = "unix-socket")]
    pub unix_socket: Option<std::path::PathBuf>,
    /// Protocol: redis, resp2 or resp3.
    #[arg(short = 'P', long = "protocol", default_value = "redis")]
    pub protocol: String,
    /// Authenticate: PASSWORD or USER:PASSWORD.
    #[arg(short = 'a', long = "authenticate")]
    pub authenticate: Option<String>,
    /// Enable SSL/TLS transport security.
    #[arg(long = "tls")]
    pub tls: bool,
    /// Client certificate file.
    #[arg(long = "cert")]
    pub cert: Option<std::path::PathBuf>,
    /// Client private key file.
    #[arg(long = "key")]
    pub key: Option<std::path::PathBuf>,
    /// CA certificate file to verify the server with.
    #[arg(long = "cacert")]
    pub cacert: Option<std::path::PathBuf>,
    /// Skip verification of the server's certificate.
    #[arg(long = "tls-skip-verify")]
    pub tls_skip_verify: bool,
    /// SNI hostname to send.
    #[arg(long = "sni")]
    pub sni: Option<String>,
    /// Clients per thread.
    #[arg(short = 'c', long = "clients", default_value_t = 50)]
    pub clients: usize,
    /// Threads.
    #[arg(short = 't', long = "threads", default_value_t = 4)]
    pub threads: usize,
    /// Pipeline depth (outstanding requests per connection).
    #[arg(long = "pipeline", default_value_t = 1)]
    pub pipeline: usize,
    /// Requests per client, or `allkeys`.
    #[arg(short = 'n', long = "requests")]
    pub requests: Option<String>,
    /// Seconds to run.
    #[arg(long = "test-time")]
    pub test_time: Option<u64>,
    /// Set:Get ratio.
    #[arg(long = "ratio", default_value = "1:10")]
    pub ratio: String,
    /// Key pattern SET:GET, each of S, R, G, Z, P.
    #[arg(long = "key-pattern", default_value = "R:R")]
    pub key_pattern: String,
    /// Lowest key number.
    #[arg(long = "key-minimum", default_value_t = 0)]
    pub key_minimum: u64,
    /// Highest key number.
    #[arg(long = "key-maximum", default_value_t = 10_000_000)]
    pub key_maximum: u64,
    /// Key prefix.
    #[arg(long = "key-prefix", default_value = "memtier-")]
    pub key_prefix: String,
    /// Gaussian standard deviation (default range/6).
    #[arg(long = "key-stddev")]
    pub key_stddev: Option<f64>,
    /// Gaussian median (default centre of the range).
    #[arg(long = "key-median")]
    pub key_median: Option<f64>,
    /// Zipf exponent, in (0, 5).
    #[arg(long = "key-zipf-exp", default_value_t = 1.0)]
    pub key_zipf_exp: f64,
    /// Value size in bytes.
    #[arg(short = 'd', long = "data-size", default_value_t = 32)]
    pub data_size: usize,
    /// Value size range MIN-MAX.
    #[arg(long = "data-size-range")]
    pub data_size_range: Option<String>,
    /// Size pattern over the range: R (random) or S (follows the key).
    #[arg(long = "data-size-pattern", default_value = "R")]
    pub data_size_pattern: String,
    /// Expiry range MIN-MAX seconds (SETEX).
    #[arg(long = "expiry-range")]
    pub expiry_range: Option<String>,
    /// Accepted for compatibility: distinct client seeds are our default.
    #[arg(long = "distinct-client-seed")]
    pub distinct_client_seed: bool,
    /// memtier's default: every client uses the same seed (same key sequence).
    #[arg(long = "same-client-seed")]
    pub same_client_seed: bool,
    /// Random seed from the time instead of the constant default.
    #[arg(long = "randomize")]
    pub randomize: bool,
    /// Accepted for compatibility: random value bytes are our default.
    #[arg(short = 'R', long = "random-data")]
    pub random_data: bool,
    /// memtier's default value bytes ('x').
    #[arg(long = "x-data")]
    pub x_data: bool,
    /// Arbitrary command with __key__ and __data__ (repeatable).
    #[arg(long = "command")]
    pub command: Vec<String>,
    /// Times each --command is sent in a row (one per --command, in order).
    #[arg(long = "command-ratio")]
    pub command_ratio: Vec<u32>,
    /// Key pattern of each --command (S, R, G, Z, P).
    #[arg(long = "command-key-pattern")]
    pub command_key_pattern: Vec<String>,
    /// Number of full runs.
    #[arg(short = 'x', long = "run-count", default_value_t = 1)]
    pub run_count: usize,
    /// Percentiles to print.
    #[arg(long = "print-percentiles", default_value = "50,99,99.9")]
    pub print_percentiles: String,
    /// With --run-count > 1, also print each run's results.
    #[arg(long = "print-all-runs")]
    pub print_all_runs: bool,
    /// Do not print the latency histogram.
    #[arg(long = "hide-histogram")]
    pub hide_histogram: bool,
    /// JSON output file (memtier "Format version" 2).
    #[arg(long = "json-out-file")]
    pub json_out_file: Option<std::path::PathBuf>,
    /// Also write a self-contained HTML report (latency spectrum, per-second timeline,
    /// configuration, the server's version and persistence, client CPU).
    #[arg(long = "report")]
    pub report: Option<std::path::PathBuf>,
    /// Also write the latencies as HdrHistogram's interval log (.hlog, microseconds).
    #[arg(long = "hdr-log")]
    pub hdr_log: Option<std::path::PathBuf>,
    /// Text output file (default stdout).
    #[arg(short = 'o', long = "out-file")]
    pub out_file: Option<std::path::PathBuf>,
    /// Open loop: total requests per second over all connections.
    #[arg(long = "rate")]
    pub rate: Option<f64>,
    /// SELECT db.
    #[arg(long = "select-db", default_value_t = 0)]
    pub select_db: u32,
    /// Fail when no reply arrives for this many seconds.
    #[arg(long = "stall-timeout", default_value_t = 10.0)]
    pub stall_timeout: f64,
    /// I/O engine of the load threads: uring, epoll or auto.
    #[arg(long = "io-engine", default_value = "auto")]
    pub io_engine: String,
}
