//! Start-up: a config file with an unknown directive or a bad value stops the server
//! with exit code 1 and a message that names the line, in Redis's format. Runs the
//! binary directly (skipped against an external server).

use std::process::Command;

use crate::harness::server_binary;

fn start_with_config(text: &str) -> (Option<i32>, String) {
    let bin = server_binary().expect("spawn mode");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("server.conf");
    std::fs::write(&path, text).expect("write config");
    // The port is never bound: the config is rejected before the server listens.
    let out = Command::new(bin).arg(&path).arg("--bind").arg("127.0.0.1").output().expect("run server");
    let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.code(), text)
}

#[test]
fn unknown_directive_names_the_line() {
    if server_binary().is_none() {
        return;
    }
    let (code, msg) = start_with_config("port 0\nbogus-directive yes\n");
    assert_eq!(code, Some(1), "{msg}");
    assert!(msg.contains("FATAL CONFIG FILE ERROR"), "{msg}");
    assert!(msg.contains("at line 2"), "{msg}");
    assert!(msg.contains(">>> 'bogus-directive yes'"), "{msg}");
    assert!(msg.contains("Bad directive or wrong number of arguments"), "{msg}");
}

#[test]
fn bad_value_names_the_line() {
    if server_binary().is_none() {
        return;
    }
    let (code, msg) = start_with_config("# comment\nport 70000\n");
    assert_eq!(code, Some(1), "{msg}");
    assert!(msg.contains("at line 2"), "{msg}");
    assert!(msg.contains(">>> 'port 70000'"), "{msg}");
}

/// A second server on a port that one already listens on stops with Redis's bind error
/// (Basalt's listeners use SO_REUSEPORT, which once let a second process join the first
/// one's port and take half of its connections).
#[test]
fn a_port_in_use_stops_the_start() {
    let Some(bin) = server_binary() else {
        return;
    };
    let first = crate::harness::ServerProcess::spawn(bin, &[]);
    let port = first.port.to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let failed = crate::harness::start_expect_exit(bin, dir.path(), &["--port", &port], std::time::Duration::from_secs(10));
    assert_eq!(failed.code, Some(1), "{}", failed.log);
    assert!(failed.log.contains("Address already in use"), "{}", failed.log);
}

/// The redis.conf that Debian's redis-server 7.0.15 package installs starts the server
/// unchanged (its daemon, file and address lines overridden on the command line, as a
/// test must): every directive in it is accepted, and CONFIG GET answers for them as
/// Redis does. Skipped with a message where that file is missing or unreadable.
#[test]
fn debians_stock_redis_conf_is_accepted() {
    let Some(bin) = server_binary() else {
        return;
    };
    let stock = std::path::Path::new("/etc/redis/redis.conf");
    let Ok(text) = std::fs::read_to_string(stock) else {
        eprintln!("skipped: {} is missing or unreadable (apt install redis-server)", stock.display());
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("redis.conf");
    std::fs::write(&conf, text).expect("write config");
    let port = crate::harness::free_port();
    let log = std::fs::File::create(dir.path().join("server.log")).expect("log");
    let mut child = Command::new(bin)
        .arg(&conf)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--daemonize", "no"])
        .args(["--logfile", "", "--pidfile", "", "--dir"])
        .arg(dir.path())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .spawn()
        .expect("spawn server");
    let _watchdog = crate::harness::spawn_watchdog(child.id());
    let addr = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut ready = false;
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if crate::harness::ping_ready(&addr) {
            ready = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap_or_default();
    if !ready {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server did not start from the stock redis.conf:\n{log}");
    }
    let mut c = crate::harness::RawConn::connect(&addr);
    let get = |c: &mut crate::harness::RawConn, name: &str| c.cmd(&["CONFIG", "GET", name]);
    crate::assert_bytes!(
        get(&mut c, "client-output-buffer-limit"),
        b"*2\r\n$26\r\nclient-output-buffer-limit\r\n$67\r\nnormal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60\r\n"
    );
    crate::assert_bytes!(get(&mut c, "stop-writes-on-bgsave-error"), b"*2\r\n$27\r\nstop-writes-on-bgsave-error\r\n$3\r\nyes\r\n");
    crate::assert_bytes!(get(&mut c, "repl-diskless-load"), b"*2\r\n$18\r\nrepl-diskless-load\r\n$8\r\ndisabled\r\n");
    crate::assert_bytes!(get(&mut c, "hll-sparse-max-bytes"), b"*2\r\n$20\r\nhll-sparse-max-bytes\r\n$4\r\n3000\r\n");
    crate::assert_bytes!(get(&mut c, "oom-score-adj-values"), b"*2\r\n$20\r\noom-score-adj-values\r\n$9\r\n0 200 800\r\n");
    crate::assert_bytes!(get(&mut c, "notify-keyspace-events"), b"*2\r\n$22\r\nnotify-keyspace-events\r\n$0\r\n\r\n");
    crate::assert_bytes!(c.cmd(&["SET", "k", "v"]), b"+OK\r\n");
    let _ = child.kill();
    let _ = child.wait();
}
