//! CLI tests against real servers: redis-server 7.0.15 when installed and target/debug/
//! basalt-server when built (each skipped with a message otherwise), plus rejections.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_basalt-bench");

/// A spawned server and its data directory (held only so that it lives as long as the server).
struct Server(Child, #[allow(dead_code)] tempfile::TempDir);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port for a test server: below the kernel's range of ephemeral ports (so that no
/// client socket of another test takes it between the check and the server's bind) and
/// distinct per test of this process (tests run in parallel); a taken one is skipped.
fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let base = 11000 + (std::process::id() % 400) as u16 * 50;
    loop {
        let port = base + NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 50;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn start(bin: &str) -> Option<(Server, u16)> {
    start_with(bin, &[])
}

/// Starts `bin` with `extra` flags on a port of its own; None when it is not installed
/// or could not bind.
fn start_with(bin: &str, extra: &[&str]) -> Option<(Server, u16)> {
    let port = free_port();
    let dir = tempfile::tempdir().ok()?;
    let child = Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--dir"])
        .arg(dir.path())
        .args(["--save", ""])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut s = Server(child, dir);
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) {
        // Ours only while it runs (a server that could not bind exits; what answered
        // would be another's).
        if !matches!(s.0.try_wait(), Ok(None)) {
            return None;
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            // What answered may be another test's server on the same free port, ours
            // failing to bind: a server that cannot bind exits at once, so one still
            // running a moment later holds the port. (A CI run once lost a test to
            // that race: "Connection refused" once the other server had stopped.)
            std::thread::sleep(Duration::from_millis(100));
            if !matches!(s.0.try_wait(), Ok(None)) {
                return None;
            }
            return Some((s, port));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn redis() -> Option<(Server, u16)> {
    let s = start("redis-server");
    if s.is_none() {
        eprintln!("SKIP: redis-server not installed");
    }
    s
}

fn basalt() -> Option<(Server, u16)> {
    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/debug/basalt-server");
    if !std::path::Path::new(p).exists() {
        eprintln!("SKIP: {p} not built (cargo build -p basalt-server -j 1)");
        return None;
    }
    start(p)
}

fn bench(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(BIN).args(args).output().expect("run basalt-bench");
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

fn check_quiet(port: u16) {
    let (code, out, err) = bench(&["-p", &port.to_string(), "-q", "-n", "2000", "-c", "10", "-t", "set,get,lpush,lrange_100"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.split('\n').collect();
    let titles: Vec<&str> = lines.iter().filter_map(|l| l.trim_start_matches(" \r").split(':').next()).filter(|t| !t.is_empty()).collect();
    assert_eq!(titles, vec!["SET", "GET", "LPUSH", "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)"], "{out}");
    for l in &lines[..5] {
        assert!(l.starts_with(" \r") && l.contains(" requests per second, p50=") && l.ends_with(" msec"), "{l:?}");
    }
    assert!(out.ends_with("msec\n\n"), "{out:?}");
}

#[test]
fn quiet_against_redis() {
    let Some((_s, port)) = redis() else { return };
    check_quiet(port);
}

#[test]
fn quiet_against_basalt() {
    let Some((_s, port)) = basalt() else { return };
    check_quiet(port);
}

#[test]
fn csv_and_full_against_redis() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    let (code, out, _) = bench(&["-p", &p, "--csv", "-n", "1000", "-t", "get"]);
    assert_eq!(code, 0);
    let l: Vec<&str> = out.lines().collect();
    assert_eq!(l[0], "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"");
    assert!(l[1].starts_with("\"GET\",\"") && l[1].matches("\",\"").count() == 7, "{}", l[1]);
    let (code, out, _) = bench(&["-p", &p, "-n", "1000", "-t", "set", "--threads", "2"]);
    assert_eq!(code, 0);
    for needle in ["====== SET ======", "  1000 requests completed in ", "  50 parallel clients", "  3 bytes payload", "  keep alive: 1", "  host configuration \"save\": ", "  multi-thread: yes", "  threads: 2", "Latency by percentile distribution:", "Cumulative distribution of latencies:", "  throughput summary: ", "          avg       min       p50       p95       p99       max"] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn exact_request_count_and_custom_command() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    let (code, out, err) = bench(&["-p", &p, "-q", "-n", "1000", "-P", "7", "-c", "3", "-r", "100", "rpush", "cnt", "__rand_int__"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rpush cnt __rand_int__: "), "{out}");
    let o = Command::new("redis-cli").args(["-p", &p, "llen", "cnt"]).output();
    if let Ok(o) = o {
        assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "1000");
    }
}

/// Both I/O engines send exactly `-n` requests and count every reply, pipelined or not.
#[test]
fn both_io_engines_send_and_count_exactly() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    for engine in ["epoll", "uring"] {
        for pipeline in ["1", "16"] {
            let key = format!("eng:{engine}:{pipeline}");
            let (code, out, err) =
                bench(&["-p", &p, "-q", "-n", "3001", "-P", pipeline, "-c", "7", "--io-engine", engine, "rpush", &key, "x"]);
            assert_eq!(code, 0, "{engine} -P {pipeline}: {err}");
            assert!(out.contains(&format!("rpush {key} x: ")), "{out}");
            let o = Command::new("redis-cli").args(["-p", &p, "llen", &key]).output();
            if let Ok(o) = o {
                assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "3001", "{engine} -P {pipeline}");
            }
        }
    }
    let (code, _, err) = bench(&["-p", &p, "-q", "-n", "10", "--io-engine", "kqueue"]);
    assert_eq!(code, 1);
    assert!(err.contains("--io-engine"), "{err}");
}

#[test]
fn error_replies_are_counted_not_completed() {
    let Some((_s, port)) = redis() else { return };
    let (code, out, err) = bench(&["-p", &port.to_string(), "-q", "-n", "100", "-c", "2", "nosuchcommand"]);
    assert_eq!(code, 1);
    assert!(err.contains("100 error replies") && err.contains("ERR: 100"), "{err}");
    assert!(out.contains("nosuchcommand: 0.00 requests per second"), "{out}");
}

#[test]
fn unreachable_server_exits_1() {
    let port = free_port();
    let (code, _, err) = bench(&["-p", &port.to_string(), "-q", "-n", "10"]);
    assert_eq!(code, 1);
    assert!(err.contains("Could not connect") && err.contains("refused"), "{err}");
}

#[test]
fn non_resp_server_is_reported() {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            use std::io::Write;
            let mut s = s;
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let (code, _, err) = bench(&["-p", &port.to_string(), "-q", "-n", "10", "--stall-timeout", "2"]);
    assert_eq!(code, 1);
    assert!(err.contains("not RESP"), "{err}");
}

#[test]
fn bad_flags_exit_1() {
    for args in [&["--bogus"][..], &["-c", "0"], &["-n"], &["-p", "99999"], &["-P", "0"]] {
        let (code, _, err) = bench(args);
        assert_eq!(code, 1, "{args:?}");
        assert!(!err.is_empty(), "{args:?}");
    }
}

#[test]
fn compare_two_redis() {
    let (Some((_a, pa)), Some((_b, pb))) = (redis(), redis()) else { return };
    let (code, out, err) = bench(&["compare", "--a", &format!("127.0.0.1:{pa}"), "--b", &format!("127.0.0.1:{pb}"), "--rounds", "2", "-n", "2000", "-t", "get"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("====== GET ======") && out.contains("rps ") && out.contains("b/a"), "{out}");
}

fn check_memtier(port: u16) {
    let dir = tempfile::tempdir().expect("tmp");
    let jf = dir.path().join("out.json");
    let (code, out, err) = bench(&[
        "memtier", "--server", "127.0.0.1", "--port", &port.to_string(), "--clients", "3", "--threads", "2",
        "--requests", "400", "--ratio", "1:3", "--pipeline", "4", "--data-size", "64", "--key-maximum", "500",
        "--key-pattern", "R:R", "--json-out-file", jf.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{err}");
    for l in ["2         Threads", "3         Connections per thread", "400       Requests per client", "ALL STATS",
        "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec ",
        "Request Latency Distribution"] {
        assert!(out.lines().any(|x| x == l), "missing {l:?} in\n{out}");
    }
    for row in ["Sets ", "Gets ", "Waits ", "Totals "] {
        let line = out.lines().find(|x| x.starts_with(row)).unwrap_or_else(|| panic!("{row} in {out}"));
        assert_eq!(line.len(), 124, "{line:?}");
    }
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&jf).expect("json file")).expect("valid JSON");
    let ri = &doc["run information"];
    assert_eq!(ri["Format version"].as_u64(), Some(2));
    assert_eq!((ri["Threads"].as_u64(), ri["Connections per thread"].as_u64(), ri["Requests per client"].as_u64()), (Some(2), Some(3), Some(400)));
    let cfg = &doc["configuration"];
    assert_eq!(cfg["ratio"].as_str(), Some("1:3"));
    assert_eq!(cfg["pipeline"].as_u64(), Some(4));
    assert!(cfg["server"].is_string() && cfg["port"].is_u64() && cfg["data_size"].is_u64());
    // As memtier 2.3: unset string options are null, integers are integers.
    assert!(cfg["unix socket"].is_null() && cfg["out_file"].is_null(), "{cfg}");
    assert_eq!(cfg["address family"].as_str(), Some("Unspecified"));
    assert!(cfg["rate_limit"].is_u64(), "{cfg}");
    let all = &doc["ALL STATS"];
    let rt = &all["Runtime"];
    assert!(rt["Start time"].is_u64() && rt["Finish time"].is_u64() && rt["Total duration"].is_u64());
    assert_eq!(rt["Time unit"].as_str(), Some("MILLISECONDS"));
    assert_eq!(rt["Interrupted"].as_str(), Some("false"));
    // 2 threads x 3 clients x 400 requests, 1 SET then 3 GETs per client: exactly 600 SETs.
    assert_eq!(all["Sets"]["Count"].as_u64(), Some(600));
    assert_eq!(all["Gets"]["Count"].as_u64(), Some(1800));
    assert_eq!(all["Waits"]["Count"].as_u64(), Some(0));
    assert_eq!(all["Totals"]["Count"].as_u64(), Some(2400));
    for t in ["Sets", "Gets", "Waits", "Totals"] {
        let k = &all[t];
        for f in ["Ops/sec", "Hits/sec", "Misses/sec", "Latency", "Average Latency", "Min Latency",
            "Max Latency", "KB/sec", "KB/sec RX/TX", "KB/sec RX", "KB/sec TX", "Connection Errors/sec"] {
            assert!(k[f].is_f64(), "{t}.{f} = {}", k[f]);
        }
        // Integers, as memtier 2.3's `%lld`.
        assert!(k["Count"].is_u64() && k["Connection Errors"].is_u64() && k["Accumulated Latency"].is_u64(), "{t}");
        let p = &k["Percentile Latencies"];
        for f in ["p50.00", "p99.00", "p99.90"] {
            assert!(p[f].is_f64(), "{t} {f}");
        }
        let c = p["Histogram log format"]["Compressed Histogram"].as_str().expect("compressed histogram");
        assert!(c.starts_with("HISTF"), "{t} {c}");
        assert!(k["Time-Serie"].is_object(), "{t}");
    }
    let ts = all["Totals"]["Time-Serie"].as_object().expect("time-serie");
    assert!(!ts.is_empty());
    let mut n = 0;
    for (sec, v) in ts {
        assert!(sec.parse::<u64>().is_ok());
        for f in ["Bytes RX", "Bytes TX", "Count", "Accumulated Latency"] {
            assert!(v[f].is_u64(), "{f}");
        }
        for f in ["Average Latency", "Min Latency", "Max Latency", "p50.00", "p99.00", "p99.90"] {
            assert!(v[f].is_f64(), "{f}");
        }
        n += v["Count"].as_u64().unwrap_or(0);
    }
    assert_eq!(n, 2400);
    assert!(all["Gets"]["Ops/sec"].as_f64().unwrap_or(0.0) > 0.0);
    for h in ["SET", "GET"] {
        let lines = all[h].as_array().expect("histogram lines");
        assert!(lines.iter().all(|l| l["<=msec"].is_f64() && l["percent"].is_f64()));
        assert_eq!(lines.last().and_then(|l| l["percent"].as_f64()), Some(100.0));
    }
}

#[test]
fn memtier_against_redis() {
    let Some((_s, port)) = redis() else { return };
    check_memtier(port);
}

#[test]
fn memtier_against_basalt() {
    let Some((_s, port)) = basalt() else { return };
    check_memtier(port);
}

#[test]
fn memtier_test_time_and_rejections() {
    let Some((_s, port)) = redis() else { return };
    let (code, out, err) = bench(&["memtier", "-s", "127.0.0.1", "-p", &port.to_string(), "-c", "2", "-t", "1", "--test-time", "1", "--hide-histogram"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("1         Threads\n2         Connections per thread\n1         Seconds\n"), "{out}");
    assert!(!out.contains("Request Latency Distribution"));
    let (code, _, err) = bench(&["memtier", "-p", &port.to_string(), "-n", "5", "--test-time", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("mutually exclusive"), "{err}");
}

#[test]
fn memtier_run_count_blocks() {
    let Some((_s, port)) = redis() else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let jf = dir.path().join("runs.json");
    let (code, out, err) = bench(&["memtier", "-s", "127.0.0.1", "-p", &port.to_string(), "-c", "2", "-t", "1", "-n", "100",
        "-x", "2", "--hide-histogram", "--json-out-file", jf.to_str().expect("utf8")]);
    assert_eq!(code, 0, "{err}");
    for t in ["BEST RUN RESULTS", "WORST RUN RESULTS", "AGGREGATED AVERAGE RESULTS (2 runs)"] {
        assert!(out.lines().any(|l| l == t), "{t} in {out}");
    }
    assert!(!out.contains("ALL STATS"));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&jf).expect("json")).expect("valid JSON");
    assert_eq!(doc["AGGREGATED AVERAGE RESULTS (2 runs)"]["Totals"]["Count"].as_u64(), Some(400));
    assert_eq!(doc["BEST RUN RESULTS"]["Totals"]["Count"].as_u64(), Some(200));
    assert_eq!(doc["run information"]["Format version"].as_u64(), Some(2));
}

/// Open loop in memtier mode: the JSON says so, and carries the service time beside the
/// latency from the intended send time (which can only be the larger of the two).
#[test]
fn memtier_open_loop_reports_service_time() {
    let Some((_s, port)) = redis() else { return };
    let dir = tempfile::tempdir().expect("tmp");
    let jf = dir.path().join("rate.json");
    let (code, _out, err) = bench(&["memtier", "-s", "127.0.0.1", "-p", &port.to_string(), "-c", "2", "-t", "1", "-n", "200",
        "--rate", "2000", "--hide-histogram", "--json-out-file", jf.to_str().expect("utf8")]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("open loop at 2000 rps: latency from intended send p50="), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&jf).expect("json")).expect("valid JSON");
    assert_eq!(doc["run information"]["Open loop rate"].as_f64(), Some(2000.0));
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"].as_u64(), Some(400));
    let service = &totals["Service Time"];
    let (svc_max, max) = (service["Max Latency"].as_f64().expect("service max"), totals["Max Latency"].as_f64().expect("max"));
    assert!(svc_max > 0.0 && svc_max <= max * 1.01 + 0.001, "service {svc_max} vs intended {max}");
    for p in ["p50.00", "p99.00", "p99.90"] {
        assert!(service[p].as_f64().is_some(), "{p} in {service}");
    }
    // Each second of the timeline has its service time too, never above that second's
    // intended-time maximum, and its counts add up to the run's.
    let series = totals["Time-Serie"].as_object().expect("Time-Serie");
    assert!(!series.is_empty());
    let mut count = 0;
    for (sec, s) in series {
        count += s["Count"].as_u64().expect("Count");
        let svc = &s["Service Time"];
        let svc_max = svc["Max Latency"].as_f64().unwrap_or_else(|| panic!("second {sec}: {s}"));
        assert!(svc_max <= s["Max Latency"].as_f64().expect("max") * 1.01 + 0.001, "second {sec}: {s}");
        assert!(svc["p99.00"].as_f64().is_some(), "second {sec}: {s}");
    }
    assert_eq!(count, 400);
    // A closed-loop run has neither.
    let (code, _, err) = bench(&["memtier", "-s", "127.0.0.1", "-p", &port.to_string(), "-c", "1", "-t", "1", "-n", "20",
        "--hide-histogram", "--json-out-file", jf.to_str().expect("utf8")]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&jf).expect("json")).expect("valid JSON");
    assert!(doc["ALL STATS"]["Totals"].get("Service Time").is_none());
    assert!(doc["ALL STATS"]["Totals"]["Time-Serie"]["0"].get("Service Time").is_none());
    assert!(doc["run information"].get("Open loop rate").is_none());
}

/// Issue 25, fault 1: a server that takes a while to answer the first command (here
/// paused by CLIENT PAUSE for 300 ms) must not make the default engine's run fail with
/// "Interrupted system call": the io_uring probe's signal interrupts the first blocking
/// read, which must simply read again.
#[test]
fn a_slow_first_reply_does_not_fail_the_run() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    for _ in 0..3 {
        let o = Command::new("redis-cli").args(["-p", &p, "CLIENT", "PAUSE", "300", "ALL"]).output();
        if o.is_err() {
            return;
        }
        let (code, out, err) = bench(&["-p", &p, "-q", "-n", "2000", "-t", "ping"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("PING_INLINE: ") || out.contains("PING_MBULK: "), "{out}");
    }
}

/// Issue 25, fault 6: a server that wants a password stops the run at its first
/// refusal, with redis-benchmark's message (said at the probe and at the refusal) and
/// exit 1; it sent all `-n` requests before.
#[test]
fn a_refused_authentication_stops_the_run() {
    let port = free_port();
    let Ok(child) = Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--requirepass", "pw"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        eprintln!("SKIP: redis-server not installed");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let _s = Server(child, dir);
    let p = port.to_string();
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, out, err) = bench(&["-p", &p, "-q", "-n", "200000", "-t", "set,get"]);
    assert_eq!(code, 1, "{out}{err}");
    let line = format!("Node 127.0.0.1:{port} replied with error:\nNOAUTH Authentication required.\n");
    assert_eq!(err, format!("{line}{line}"));
    assert!(!out.contains("requests per second"), "{out}");
    let o = Command::new("redis-cli").args(["-p", &p, "-a", "pw", "--no-auth-warning", "INFO", "commandstats"]).output();
    if let Ok(o) = o {
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let rejected: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("cmdstat_set:"))
            .and_then(|l| l.split(',').find_map(|f| f.strip_prefix("rejected_calls=")))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        assert!(rejected > 0 && rejected < 10_000, "{rejected} SETs sent after the first refusal\n{text}");
    }
}

/// Issue 25, fault 5: `-n allkeys` sends what memtier 2.3 sends: the key range's span
/// per client, or under P:P that span shared by every client (plus one each): 4 clients
/// over keys 1..10000 send 4 x (9999 / 4 + 1) = 10,000 SETs, not 40,000.
#[test]
fn memtier_allkeys_sends_memtiers_request_count() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    let (code, out, err) = bench(&[
        "memtier", "--port", &p, "--clients", "4", "--threads", "1", "--ratio", "1:0", "--key-pattern", "P:P",
        "--requests", "allkeys", "--key-minimum", "1", "--key-maximum", "10000", "--hide-histogram",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let o = Command::new("redis-cli").args(["-p", &p, "INFO", "commandstats"]).output();
    let Ok(o) = o else { return };
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("cmdstat_set:calls=10000,"), "{text}");
}

/// Issue 25, fault 5: in memtier mode `-h` is the host (help is `--help`), and a flag
/// given twice takes its last value, as memtier's getopt does.
#[test]
fn memtier_h_is_the_host_and_the_last_repeated_flag_wins() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    let (code, out, err) = bench(&[
        "memtier", "-h", "127.0.0.1", "-p", &p, "-c", "1", "-t", "1", "-n", "10", "-n", "20", "--ratio", "1:0",
        "--hide-histogram",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let o = Command::new("redis-cli").args(["-p", &p, "INFO", "commandstats"]).output();
    let Ok(o) = o else { return };
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(text.contains("cmdstat_set:calls=20,"), "{text}");
    let (code, out, _) = bench(&["memtier", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("Usage: basalt-bench memtier"), "{out}");
}

/// Issue 25, fault 4: compare says what it compares (servers, versions, persistence;
/// a warning when the persistence differs), takes -a for password-protected servers,
/// and Ctrl-C ends it once: the rounds that finished are reported, exit 130.
#[test]
fn compare_describes_the_servers_authenticates_and_stops_on_ctrl_c() {
    let Some((_r, rport)) = start_with("redis-server", &["--requirepass", "pw"]) else { return };
    let basalt = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/debug/basalt-server");
    if !std::path::Path::new(basalt).exists() {
        return;
    }
    let Some((_b, bport)) = start_with(basalt, &["--requirepass", "pw", "--appendonly", "yes"]) else { return };
    let (ra, rb) = (format!("127.0.0.1:{rport}"), format!("127.0.0.1:{bport}"));
    let (code, out, err) =
        bench(&["compare", "--a", &ra, "--b", &rb, "-a", "pw", "--rounds", "2", "-n", "2000", "-c", "5", "-t", "set"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("a: {ra} (Redis 7.")) && out.contains("appendonly no"), "{out}");
    assert!(out.contains(&format!("b: {rb} (Basalt ")) && out.contains("appendonly yes, appendfsync everysec"), "{out}");
    assert!(err.contains("WARNING: the servers' persistence settings differ"), "{err}");
    assert!(out.contains("====== SET ======"), "{out}");
    // Ctrl-C in the middle of a long comparison.
    let child = Command::new(BIN)
        .args(["compare", "--a", &ra, "--b", &rb, "-a", "pw", "--rounds", "1000", "-n", "20000", "-c", "5", "-t", "set,get"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn compare");
    std::thread::sleep(Duration::from_millis(1500));
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let o = child.wait_with_output().expect("compare output");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(130), "{out}{err}");
    assert_eq!(err.matches("Interrupted: ").count(), 1, "{err}");
    assert!(!out.contains("====== GET ======"), "the test after the interruption ran:\n{out}");
}

/// Issue 25, fault 6: a server that goes away in the middle of a run (CLIENT KILL of
/// every connection) leaves the figures of what completed, with an error and exit 1,
/// instead of nothing.
#[test]
fn a_run_cut_short_keeps_what_completed() {
    let Some((_s, port)) = redis() else { return };
    let p = port.to_string();
    let killer = {
        let p = p.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(700));
            let _ = Command::new("redis-cli").args(["-p", &p, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]).output();
        })
    };
    let (code, out, err) = bench(&["-p", &p, "-q", "-n", "50000000", "-c", "4", "-t", "set"]);
    let _ = killer.join();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("stopped early; its figures are those of the"), "{err}");
    assert!(out.contains("SET: ") && out.contains("requests per second"), "{out}");
}

/// `calls=` of `cmdstat_<name>` in INFO commandstats (0 when absent).
fn calls(port: u16, name: &str) -> u64 {
    let o = Command::new("redis-cli").args(["-p", &port.to_string(), "INFO", "commandstats"]).output().expect("redis-cli");
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{name}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A `[SERIES], Metric, value` line's value.
fn ycsb_value(out: &str, series: &str, metric: &str) -> Option<f64> {
    out.lines().find_map(|l| {
        let mut parts = l.split(", ");
        (parts.next() == Some(series) && parts.next() == Some(metric)).then(|| parts.next()?.trim().parse().ok())?
    })
}

/// Issue 25, YCSB mode: load then run sends what YCSB's Redis binding sends (a hash per
/// record, the `_indices` sorted set, HGETALL reads, HMSET updates, ZRANGEBYSCORE scans),
/// in the workload's proportions, and prints YCSB's text output.
fn check_ycsb(port: u16) {
    let p = format!("redis.port={port}");
    let (code, out, err) = bench(&["ycsb", "load", "--workload", "a", "-p", &p, "-p", "recordcount=300", "-threads", "3"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(ycsb_value(&out, "[INSERT]", "Operations"), Some(300.0), "{out}");
    assert_eq!(ycsb_value(&out, "[INSERT]", "Return=OK"), Some(300.0), "{out}");
    assert!(ycsb_value(&out, "[OVERALL]", "Throughput(ops/sec)").is_some_and(|t| t > 0.0), "{out}");
    assert_eq!((calls(port, "hmset"), calls(port, "zadd")), (300, 300));

    let (code, out, err) = bench(&[
        "ycsb", "run", "--workload", "a", "-p", &p, "-p", "recordcount=300", "-p", "operationcount=2000", "-threads", "4",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let reads = ycsb_value(&out, "[READ]", "Operations").unwrap_or(0.0);
    let updates = ycsb_value(&out, "[UPDATE]", "Operations").unwrap_or(0.0);
    assert_eq!(reads + updates, 2000.0, "{out}");
    assert!((800.0..1200.0).contains(&reads), "workload A is half reads: {out}");
    assert_eq!(ycsb_value(&out, "[READ]", "Return=OK"), Some(reads), "every record was loaded: {out}");
    assert_eq!(calls(port, "hgetall"), reads as u64);
    assert_eq!(calls(port, "hmset"), 300 + updates as u64);
    for metric in ["AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)", "95thPercentileLatency(us)", "99thPercentileLatency(us)"] {
        assert!(ycsb_value(&out, "[READ]", metric).is_some(), "{metric}: {out}");
    }

    // Workload E: scans through `_indices`, and inserts that extend it.
    let (code, out, err) = bench(&[
        "ycsb", "run", "--workload", "e", "-p", &p, "-p", "recordcount=300", "-p", "operationcount=300",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let scans = ycsb_value(&out, "[SCAN]", "Operations").unwrap_or(0.0);
    let inserts = ycsb_value(&out, "[INSERT]", "Operations").unwrap_or(0.0);
    assert_eq!(scans + inserts, 300.0, "{out}");
    assert_eq!(calls(port, "zrangebyscore"), scans as u64);
    assert_eq!(calls(port, "zadd"), 300 + inserts as u64);
}

#[test]
fn ycsb_against_redis() {
    let Some((_s, port)) = redis() else { return };
    check_ycsb(port);
}

#[test]
fn ycsb_against_basalt() {
    let Some((_s, port)) = basalt() else { return };
    check_ycsb(port);
}

#[test]
fn ycsb_refuses_what_it_cannot_do() {
    let (code, _, err) = bench(&["ycsb", "--workload", "a"]);
    assert_eq!(code, 1, "no phase: {err}");
    let (code, _, err) = bench(&["ycsb", "run", "--workload", "z"]);
    assert!(code == 1 && err.contains("Unknown stock workload"), "{err}");
    let (code, _, err) = bench(&["ycsb", "run", "--workload", "e", "-p", "basalt.indices=false"]);
    assert!(code == 1 && err.contains("_indices"), "{err}");
    let (code, _, err) = bench(&["ycsb", "run", "-p", "requestdistribution=pareto"]);
    assert!(code == 1 && err.contains("Unknown request distribution"), "{err}");
    let (code, out, _) = bench(&["ycsb", "--help"]);
    assert!(code == 0 && out.contains("basalt-bench ycsb load|run"), "{out}");
}

/// Issue 25, the whitepaper's data-type groups: `ycsb matrix` refuses to run without
/// `--flushall`, then loads and runs A and C for each type and size, sending each
/// type's commands, and prints one row per type and size.
fn check_ycsb_matrix(port: u16) {
    let p = format!("redis.port={port}");
    let (code, _, err) = bench(&["ycsb", "matrix", "-p", &p]);
    assert!(code == 1 && err.contains("--flushall"), "{err}");
    let (code, out, err) = bench(&[
        "ycsb", "matrix", "--flushall", "-p", &p, "-p", "recordcount=100", "-p", "operationcount=400",
        "--types", "string,list,zset", "--sizes", "128,1024",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("| string") || l.starts_with("| list") || l.starts_with("| zset")).collect();
    assert_eq!(rows.len(), 6, "{out}");
    for r in rows {
        let cells: Vec<&str> = r.split('|').map(str::trim).collect();
        // type, size, server, then ops/s, avg, p99 for load, A and C.
        assert_eq!(cells.len(), 14, "{r}");
        for qps in [cells[4], cells[7], cells[10]] {
            assert!(qps.parse::<f64>().is_ok_and(|q| q > 0.0), "{r}");
        }
    }
    // Loads of 100 records per type and size; reads and updates of each type's record.
    assert_eq!(calls(port, "rpush"), 200);
    assert_eq!(calls(port, "ltrim"), 200);
    assert!(calls(port, "lrange") > 0 && calls(port, "lset") > 0 && calls(port, "get") > 0);
    assert!(calls(port, "zpopmin") > 0 && calls(port, "zrange") > 0);
    assert_eq!(calls(port, "hmset") + calls(port, "hgetall"), 0, "no hash in this matrix");
}

#[test]
fn ycsb_matrix_against_redis() {
    let Some((_s, port)) = redis() else { return };
    check_ycsb_matrix(port);
}

#[test]
fn ycsb_matrix_against_basalt() {
    let Some((_s, port)) = basalt() else { return };
    check_ycsb_matrix(port);
}

/// Issue 25, fault 4: compare writes CSV (stdout holds the CSV alone) and JSON with the
/// servers, every round's figures and each metric's summary.
#[test]
fn compare_writes_csv_and_json() {
    let (Some((_a, pa)), Some((_b, pb))) = (redis(), redis()) else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let json = dir.path().join("cmp.json");
    let (code, out, err) = bench(&[
        "compare", "--a", &format!("127.0.0.1:{pa}"), "--b", &format!("127.0.0.1:{pb}"), "--rounds", "5", "-n", "1000",
        "-t", "set,get", "--csv", "--json-out-file", json.to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "test,metric,a_median,a_min,a_max,b_median,b_min,b_max,b_over_a,ci90_low,ci90_high", "{out}");
    assert_eq!(lines.len(), 1 + 2 * 5, "{out}");
    assert!(lines[1].starts_with("\"SET\",rps,") && lines[6].starts_with("\"GET\",rps,"), "{out}");
    // Five rounds: the 90% interval exists.
    assert!(lines[1].split(',').nth(10).is_some_and(|v| v.parse::<f64>().is_ok()), "{out}");
    assert!(err.contains("a: 127.0.0.1:") && err.contains("Redis 7"), "the description goes to stderr: {err}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("parse");
    assert_eq!(doc["tests"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc["tests"][0]["a"].as_array().map(Vec::len), Some(5));
    assert!(doc["tests"][1]["summary"][0]["b_over_a"].as_f64().is_some(), "{doc}");
    assert!(doc["a"]["server"].as_str().is_some_and(|s| s.starts_with("Redis ")), "{doc}");
    assert_eq!(doc["interrupted"], false);
}

/// Issue 25, fault 4: compare takes a custom command, as redis-benchmark mode does.
#[test]
fn compare_a_custom_command() {
    let (Some((_a, pa)), Some((_b, pb))) = (redis(), redis()) else { return };
    let (code, out, err) = bench(&[
        "compare", "--a", &format!("127.0.0.1:{pa}"), "--b", &format!("127.0.0.1:{pb}"), "--rounds", "2", "-n", "500",
        "-r", "100", "HSET", "h:__rand_int__", "f", "v",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("====== HSET h:__rand_int__ f v ======"), "{out}");
    assert_eq!(calls(pa, "hset"), 1000, "two rounds of 500 on a");
    assert_eq!(calls(pb, "hset"), 1000, "two rounds of 500 on b");
}

/// Issue 25, fault 4: compare runs a memtier workload (memtier mode's flags) on both
/// servers, the server and port being the comparison's.
#[test]
fn compare_a_memtier_workload() {
    let (Some((_a, pa)), Some((_b, pb))) = (redis(), redis()) else { return };
    let (code, out, err) = bench(&[
        "compare", "--a", &format!("127.0.0.1:{pa}"), "--b", &format!("127.0.0.1:{pb}"), "--rounds", "2",
        "--memtier", "--threads 1 --clients 2 --requests 100 --ratio 1:1 --key-maximum 50 --hide-histogram",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("====== memtier --threads 1"), "{out}");
    assert!(out.contains("rps ") && out.contains("b/a"), "{out}");
    // Two rounds of 2 clients x 100 requests, half SETs, on each server.
    for port in [pa, pb] {
        assert_eq!(calls(port, "set") + calls(port, "get"), 400, "port {port}");
    }
    let (code, _, err) = bench(&["compare", "--a", "127.0.0.1:1", "--b", "127.0.0.1:2", "--memtier", "--ratio x"]);
    assert!(code == 1 && err.contains("--memtier"), "{err}");
}

/// Issue 25, item 3 (memtier mode only so far): `--report FILE.html` writes a
/// self-contained page: three inline SVG charts whose series have one point per
/// percentile step (51) or per second, the server's version, no script.
#[test]
fn memtier_writes_an_html_report() {
    let Some((_s, port)) = redis() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("r.html");
    let (code, out, err) = bench(&[
        "memtier", "--port", &port.to_string(), "--threads", "1", "--clients", "4", "--test-time", "2", "--ratio", "1:1",
        "--hide-histogram", "--report", page.to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&page).expect("report");
    assert!(html.starts_with("<!DOCTYPE html>") && !html.contains("<script"), "self-contained, no script");
    assert_eq!(html.matches("<svg").count(), 3, "spectrum, throughput, latency timeline");
    assert!(html.contains("<td>Redis 7."), "the server's version");
    let counts: Vec<(String, usize)> = html
        .split("data-name=\"")
        .skip(1)
        .map(|rest| {
            let name = rest.split('"').next().unwrap_or_default().to_string();
            let n = rest.split("data-points=\"").nth(1).and_then(|v| v.split('"').next()).and_then(|v| v.parse().ok()).unwrap_or(0);
            (name, n)
        })
        .collect();
    assert_eq!(counts[0], ("SET".to_string(), 51), "{counts:?}");
    assert_eq!(counts[1], ("GET".to_string(), 51), "{counts:?}");
    let seconds = counts[2].1;
    assert!((2..=3).contains(&seconds), "one point per second of a 2 s run: {counts:?}");
    assert!(counts[3..].iter().all(|c| c.1 == seconds), "{counts:?}");
}

/// YCSB mode writes the same HTML report (`--report`, basalt-bench's own flag).
#[test]
fn ycsb_writes_an_html_report() {
    let Some((_s, port)) = start_with("redis-server", &["--requirepass", "sekret"]) else { return };
    let p = format!("redis.port={port}");
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("y.html");
    let pass = "redis.password=sekret";
    let (code, out, err) = bench(&["ycsb", "load", "--workload", "c", "-p", &p, "-p", pass, "-p", "recordcount=100"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = bench(&[
        "ycsb", "run", "--workload", "c", "-p", &p, "-p", "recordcount=100", "-p", "operationcount=500",
        "-p", pass, "--report", page.to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&page).expect("report");
    assert!(html.contains("data-name=\"READ\" data-points=\"51\""), "{html}");
    assert!(html.contains("data-name=\"requests/s\" data-points=\"1\""), "a run under a second: {html}");
    assert!(html.contains("<th>phase</th><td>run</td>") && html.contains("<td>Redis 7."), "{html}");
    assert!(!html.contains("sekret"), "the password is left out of the page");
}

/// Issue 25, fault 6 in YCSB mode: a connection closed mid-run ends the run, and the
/// report of what completed is still printed (exit status 1, the reason on stderr).
#[test]
fn a_ycsb_run_cut_short_keeps_what_completed() {
    let Some((_s, port)) = redis() else { return };
    let p = format!("redis.port={port}");
    let (code, out, err) = bench(&["ycsb", "load", "--workload", "c", "-p", &p, "-p", "recordcount=100"]);
    assert_eq!(code, 0, "{out}{err}");
    let child = Command::new(BIN)
        .args(["ycsb", "run", "--workload", "c", "-p", &p, "-p", "recordcount=100", "-p", "operationcount=100000000",
               "-p", "maxexecutiontime=20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("redis-cli").args(["-p", &port.to_string(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"]).output();
    assert!(killed.is_ok());
    let o = child.wait_with_output().expect("wait");
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(err.contains("The run stopped early"), "{err}");
    let reads = ycsb_value(&out, "[READ]", "Operations").unwrap_or(0.0);
    assert!(reads > 0.0 && reads < 100_000_000.0, "{out}");
}

/// Issue 25, item 3: compare's page puts both servers side by side: per test the
/// medians, b/a and its 90% interval, and a spectrum with a series for a and one for b.
#[test]
fn compare_writes_an_html_report() {
    let (Some((_a, pa)), Some((_b, pb))) = (redis(), redis()) else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("c.html");
    let (code, out, err) = bench(&[
        "compare", "--a", &format!("127.0.0.1:{pa}"), "--b", &format!("127.0.0.1:{pb}"), "--rounds", "5", "-n", "500",
        "-t", "set,get", "--report", page.to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(html.contains("<h2>SET</h2>") && html.contains("<h2>GET</h2>"), "{html}");
    assert_eq!(html.matches("data-name=\"a\" data-points=\"51\"").count(), 2, "{html}");
    assert_eq!(html.matches("data-name=\"b\" data-points=\"51\"").count(), 2, "{html}");
    assert!(html.contains("(Redis 7."), "both servers described: {html}");
    // Five rounds: the interval of b/a is given for every metric of both tests.
    assert!(!html.contains("n/a (under 5 rounds)"), "{html}");
    assert_eq!(html.matches("<tr><td>rps</td>").count(), 2, "{html}");
}

/// redis-benchmark mode's report: one spectrum series per test, the run's per-second
/// timeline (the tests one after another) and the load threads' CPU.
#[test]
fn redis_mode_writes_an_html_report() {
    let Some((_s, port)) = redis() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("b.html");
    let (code, out, err) = bench(&["-p", &port.to_string(), "-q", "-n", "2000", "-t", "set,get", "--report", page.to_str().expect("path")]);
    assert_eq!(code, 0, "{out}{err}");
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(html.contains("data-name=\"SET\" data-points=\"51\"") && html.contains("data-name=\"GET\" data-points=\"51\""), "{html}");
    assert_eq!(html.matches("<svg").count(), 3, "spectrum, throughput, latency timeline: {html}");
    assert!(html.contains("<h2>Client threads</h2>"), "the load threads' CPU: {html}");
    assert!(html.contains("<th>requests (-n)</th><td>2000</td>") && html.contains("<td>Redis 7."), "{html}");
}

/// Issue 25, item 3: `--hdr-log` writes HdrHistogram's interval log in every mode: a
/// header, one untagged interval per second, and one interval per kind tagged with its
/// name (memtier, ycsb); in redis-benchmark mode one per second of each test and one per
/// test; in compare one per test and server.
#[test]
fn every_mode_writes_an_hdr_interval_log() {
    let Some((_s, port)) = redis() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("m.hlog");
    let (code, out, err) = bench(&[
        "memtier", "--port", &port.to_string(), "--threads", "1", "--clients", "2", "--test-time", "2", "--ratio", "1:1",
        "--hide-histogram", "--hdr-log", log.to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("#[StartTime: ") && text.contains("#[BaseTime: "), "{text}");
    let intervals: Vec<&str> = text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("\"StartTimestamp\"")).collect();
    assert!(intervals.iter().any(|l| l.starts_with("Tag=SET,")) && intervals.iter().any(|l| l.starts_with("Tag=GET,")), "{text}");
    let seconds = intervals.iter().filter(|l| !l.starts_with("Tag=")).count();
    assert!((2..=3).contains(&seconds), "one interval per second: {text}");

    let ylog = dir.path().join("y.hlog");
    let p = format!("redis.port={port}");
    let (code, out, err) = bench(&["ycsb", "load", "--workload", "c", "-p", &p, "-p", "recordcount=50", "--hdr-log", ylog.to_str().expect("path")]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&ylog).expect("log");
    assert!(text.lines().any(|l| l.starts_with("Tag=INSERT,")), "{text}");

    // redis-benchmark mode: one interval per test; compare: one per test and server.
    let rlog = dir.path().join("r.hlog");
    let (code, out, err) = bench(&["-p", &port.to_string(), "-q", "-n", "500", "-t", "set,get", "--hdr-log", rlog.to_str().expect("path")]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&rlog).expect("log");
    let tags: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("Tag=")).map(|l| l.split(',').next().unwrap_or("")).collect();
    assert_eq!(tags, ["SET", "GET"], "{text}");
    let seconds = text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("\"StartTimestamp\"") && !l.starts_with("Tag=")).count();
    assert!(seconds >= 2, "an interval per second of each test: {text}");
    let clog = dir.path().join("c.hlog");
    let addr = format!("127.0.0.1:{port}");
    let (code, out, err) = bench(&["compare", "--a", &addr, "--b", &addr, "--rounds", "1", "-n", "500", "-t", "set", "--hdr-log", clog.to_str().expect("path")]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&clog).expect("log");
    let tags: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("Tag=")).map(|l| l.split(',').next().unwrap_or("")).collect();
    assert_eq!(tags, ["a:SET", "b:SET"], "{text}");
}

/// Every key path of a JSON document with its type (object keys that are numbers, the
/// seconds of a Time-Serie, read as `<n>`; array items as `[]`).
fn json_shape(v: &serde_json::Value, path: String, out: &mut std::collections::BTreeMap<String, &'static str>) {
    use serde_json::Value;
    let kind = match v {
        Value::Object(m) => {
            for (k, x) in m {
                let k = if k.chars().all(|c| c.is_ascii_digit()) { "<n>".to_string() } else { k.clone() };
                json_shape(x, format!("{path}/{k}"), out);
            }
            "object"
        }
        Value::Array(a) => {
            for x in a {
                json_shape(x, format!("{path}/[]"), out);
            }
            "array"
        }
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::String(_) => "string",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
    };
    out.insert(path, kind);
}

/// Issue 25, fault 2: memtier mode's JSON has every key path of memtier 2.3's with the
/// same type. The fixture is what memtier_benchmark 2.3.0 (built from its tag) wrote for
/// `-s 127.0.0.1 -p PORT --threads 1 --clients 2 --requests 200 --ratio 1:1
/// --hide-histogram --json-out-file F` against Redis 7.0.15; basalt-bench runs the same.
/// Our extra keys are named here: `Error Replies` (error replies per row), `seed` and
/// `distinct_client_seed` (our honest default, stated), `tls` (memtier writes it when
/// built with TLS).
#[test]
fn memtier_json_has_every_key_of_memtier_2_3() {
    let Some((_s, port)) = redis() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let ours = dir.path().join("ours.json");
    let (code, out, err) = bench(&[
        "memtier", "-s", "127.0.0.1", "-p", &port.to_string(), "--threads", "1", "--clients", "2", "--requests", "200",
        "--ratio", "1:1", "--hide-histogram", "--json-out-file", ours.to_str().expect("path"),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let theirs: serde_json::Value = serde_json::from_str(include_str!("fixtures/memtier-2.3.0-ratio-1-1.json")).expect("fixture");
    let ours: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ours).expect("ours")).expect("ours parses");
    let (mut a, mut b) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    json_shape(&theirs, String::new(), &mut a);
    json_shape(&ours, String::new(), &mut b);
    for (path, kind) in &a {
        assert_eq!(b.get(path), Some(kind), "{path}: memtier 2.3 writes a {kind}");
    }
    let ours_only = ["Error Replies", "/configuration/seed", "/configuration/distinct_client_seed", "/configuration/tls"];
    for path in b.keys().filter(|p| !a.contains_key(*p)) {
        assert!(ours_only.iter().any(|x| path.ends_with(x)), "{path}: not in memtier 2.3's JSON");
    }
}
