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
