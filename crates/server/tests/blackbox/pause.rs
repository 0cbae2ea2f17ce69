//! CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0.15 answers them: which commands a
//! pause postpones (WRITE: writes, PUBLISH, an EXEC of a queue with a write; ALL:
//! everything, CLIENT UNPAUSE included), that a postponed command runs when the pause
//! ends, in order with the rest of its connection's input, and Redis's errors.
//!
//! A pause stops every client of a server, so each test has a server of its own
//! (`exclusive`). Every wait is bounded; a pause is always lifted or short, and the
//! timed ones last seconds, so that a loaded machine cannot end them early.

use std::time::{Duration, Instant};

use crate::assert_bytes;
use crate::harness::*;

/// How long a postponed client must stay silent to count as postponed.
const SILENCE: Duration = Duration::from_millis(300);

#[test]
fn client_pause_errors() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE", "abc"]),
        b"-ERR timeout is not an integer or out of range\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE", "1.5"]),
        b"-ERR timeout is not an integer or out of range\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE", "-1"]),
        b"-ERR timeout is negative\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE", "100", "foo"]),
        b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE", "100", "write", "extra"]),
        b"-ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE"]),
        b"-ERR wrong number of arguments for 'client|pause' command\r\n"
    );
    assert_bytes!(
        c.cmd(&["CLIENT", "UNPAUSE", "x"]),
        b"-ERR wrong number of arguments for 'client|unpause' command\r\n"
    );
    // A timeout of 0 pauses nothing; one that overflows the clock neither (Redis adds it
    // unchecked, so it lands in the past).
    assert_bytes!(c.cmd(&["CLIENT", "PAUSE", "0"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(
        c.cmd(&["CLIENT", "PAUSE", "9223372036854775807"]),
        b"+OK\r\n"
    );
    assert_bytes!(c.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
}

#[test]
fn write_pause_postpones_writes_and_publish_not_reads() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    assert_bytes!(ctl.cmd(&["SET", "pause:k", "v"]), b"+OK\r\n");
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    // Reads, PING, INFO and CLIENT go on.
    let mut r = t.raw_conn();
    assert_bytes!(r.cmd(&["GET", "pause:k"]), b"$1\r\nv\r\n");
    assert_bytes!(r.cmd(&["PING"]), b"+PONG\r\n");
    assert_bytes!(r.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(r.cmd(&["GET", "pause:k"]), b"+QUEUED\r\n");
    assert_bytes!(r.cmd(&["EXEC"]), b"*1\r\n$1\r\nv\r\n");
    // A write waits, and so does the rest of its connection's input behind it.
    let mut w = t.raw_conn();
    w.send(
        &[
            encode(&["SET", "pause:k", "2"]),
            encode(&["GET", "pause:k"]),
        ]
        .concat(),
    );
    w.expect_silence(SILENCE);
    wait_blocked(&mut ctl, 1);
    // CLIENT LIST shows it blocked in its command.
    let list = parse(&ctl.cmd(&["CLIENT", "LIST"])).text();
    let line = list.lines().find(|l| l.contains(" cmd=set ")).expect("the postponed client");
    assert!(line.contains(" flags=b "), "{line}");
    let mut p = t.raw_conn();
    p.send(&encode(&["PUBLISH", "pause:ch", "m"]));
    p.expect_silence(SILENCE);
    wait_blocked(&mut ctl, 2);
    // A write inside MULTI waits at its queueing, as in Redis.
    let mut m = t.raw_conn();
    assert_bytes!(m.cmd(&["MULTI"]), b"+OK\r\n");
    m.send(&encode(&["INCR", "pause:n"]));
    m.expect_silence(SILENCE);
    wait_blocked(&mut ctl, 3);
    // Nothing was written meanwhile.
    assert_bytes!(r.cmd(&["GET", "pause:k"]), b"$1\r\nv\r\n");
    // CLIENT UNPAUSE from any client (not postponed in WRITE mode); the writes run.
    assert_bytes!(r.cmd(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_bytes!(late_reply(&mut w), b"+OK\r\n");
    assert_bytes!(late_reply(&mut w), b"$1\r\n2\r\n");
    assert_bytes!(late_reply(&mut p), b":0\r\n");
    assert_bytes!(late_reply(&mut m), b"+QUEUED\r\n");
    assert_bytes!(m.cmd(&["EXEC"]), b"*1\r\n:1\r\n");
    wait_blocked(&mut ctl, 0);
}

#[test]
fn write_pause_postpones_an_exec_that_writes() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    let mut m = t.raw_conn();
    assert_bytes!(m.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(m.cmd(&["SET", "pause:x", "1"]), b"+QUEUED\r\n");
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    m.send(&encode(&["EXEC"]));
    m.expect_silence(SILENCE);
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["EXISTS", "pause:x"]), b":0\r\n");
    assert_bytes!(ctl.cmd(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_bytes!(late_reply(&mut m), b"*1\r\n+OK\r\n");
    assert_bytes!(ctl.cmd(&["GET", "pause:x"]), b"$1\r\n1\r\n");
}

/// A script or function that declares `no-writes` is not a write to a WRITE pause (Redis
/// reads its flags): EVAL of such a script, EVALSHA of it, FCALL of such a function and
/// an EXEC of them run; EVAL of a script without a shebang is postponed (it may write).
#[test]
fn write_pause_lets_no_writes_scripts_and_functions_run() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    let reader = "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])";
    assert_bytes!(ctl.cmd(&["SET", "pause:s", "v"]), b"+OK\r\n");
    let sha = parse(&ctl.cmd(&["SCRIPT", "LOAD", reader])).text();
    assert_bytes!(
        ctl.cmd(&["FUNCTION", "LOAD", "#!lua name=pauselib\nredis.register_function{function_name='pauseread', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}"]),
        b"$8\r\npauselib\r\n"
    );
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    let mut r = t.raw_conn();
    assert_bytes!(r.cmd(&["EVAL", reader, "1", "pause:s"]), b"$1\r\nv\r\n");
    assert_bytes!(r.cmd(&["EVALSHA", &sha, "1", "pause:s"]), b"$1\r\nv\r\n");
    assert_bytes!(r.cmd(&["FCALL", "pauseread", "1", "pause:s"]), b"$1\r\nv\r\n");
    assert_bytes!(r.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(r.cmd(&["EVAL", reader, "1", "pause:s"]), b"+QUEUED\r\n");
    assert_bytes!(r.cmd(&["EXEC"]), b"*1\r\n$1\r\nv\r\n");
    let mut w = t.raw_conn();
    w.send(&encode(&["EVAL", "return redis.call('GET', KEYS[1])", "1", "pause:s"]));
    w.expect_silence(SILENCE);
    wait_blocked(&mut ctl, 1);
    assert_bytes!(ctl.cmd(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_bytes!(late_reply(&mut w), b"$1\r\nv\r\n");
    assert_bytes!(ctl.cmd(&["FUNCTION", "DELETE", "pauselib"]), b"+OK\r\n");
}

#[test]
fn all_pause_postpones_everything_until_its_time() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    let start = Instant::now();
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "3000", "ALL"]), b"+OK\r\n");
    let mut a = t.raw_conn();
    a.send(&encode(&["PING"]));
    // In mode ALL even CLIENT UNPAUSE waits: the pause ends only by its time.
    let mut u = t.raw_conn();
    u.send(&encode(&["CLIENT", "UNPAUSE"]));
    ctl.send(&encode(&["GET", "pause:missing"]));
    a.expect_silence(SILENCE);
    u.expect_silence(Duration::from_millis(50));
    ctl.expect_silence(Duration::from_millis(50));
    assert_bytes!(late_reply(&mut a), b"+PONG\r\n");
    assert!(
        start.elapsed() >= Duration::from_millis(2900),
        "the pause ended early: {:?}",
        start.elapsed()
    );
    assert_bytes!(late_reply(&mut u), b"+OK\r\n");
    assert_bytes!(late_reply(&mut ctl), b"$-1\r\n");
    wait_blocked(&mut ctl, 0);
}

#[test]
fn a_pause_is_only_made_longer_or_stricter() {
    let t = exclusive();
    let mut ctl = t.raw_conn();
    let start = Instant::now();
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "4000", "WRITE"]), b"+OK\r\n");
    // A shorter ALL pause makes it stricter (ALL) but not shorter (4 s).
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "200", "ALL"]), b"+OK\r\n");
    let mut r = t.raw_conn();
    r.send(&encode(&["PING"]));
    // Past the ALL pause's own 200 ms, a PING still waits.
    r.expect_silence(Duration::from_millis(600));
    assert_bytes!(late_reply(&mut r), b"+PONG\r\n");
    assert!(
        start.elapsed() >= Duration::from_millis(3900),
        "the pause ended early: {:?}",
        start.elapsed()
    );
    // A longer WRITE pause after it does not make ALL laxer while ALL lasts, and
    // UNPAUSE ends both.
    assert_bytes!(ctl.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    assert_bytes!(ctl.cmd(&["GET", "pause:k"]), b"$-1\r\n");
    assert_bytes!(ctl.cmd(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_bytes!(ctl.cmd(&["SET", "pause:k", "1"]), b"+OK\r\n");
}

#[test]
fn keys_do_not_expire_while_clients_are_paused() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "pause:ttl", "v", "PX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]), b"+OK\r\n");
    std::thread::sleep(Duration::from_millis(300));
    // Expired: it reads as absent, but it is not removed while the pause lasts.
    assert_bytes!(c.cmd(&["GET", "pause:ttl"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "pause:ttl"]), b":0\r\n");
    assert_bytes!(c.cmd(&["KEYS", "pause:*"]), b"*0\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":1\r\n");
    assert_bytes!(c.cmd(&["CLIENT", "UNPAUSE"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", "pause:ttl"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
}
