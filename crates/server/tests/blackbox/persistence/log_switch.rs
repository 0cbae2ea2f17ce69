//! CONFIG SET appendonly yes|no on a running server, as Redis 7.0 does it: turned on,
//! the log starts from the data set of that instant (a rewrite writes its base) and
//! takes every write after; turned off, it keeps what it held, and writes after are not
//! in it. Each test restarts the server from its files with `--appendonly yes` after a
//! SIGKILL and compares what it holds. They pass against Redis 7.0.15 too.

use super::*;
use super::snapshots::wait_no_rewrite;

const NO_LOG: &[&str] = &["--appendonly", "no", "--save", ""];
const LOG: &[&str] = &["--appendonly", "yes", "--save", ""];

/// The way Redis's documentation gives to switch a running server from snapshots to
/// the log: CONFIG SET appendonly yes, wait for the rewrite; nothing written before or
/// after is lost.
#[test]
fn the_log_turned_on_at_run_time_holds_the_data_set_and_what_follows() {
    let Some(mut p) = Persisted::start(NO_LOG) else {
        return;
    };
    let mut c = p.conn();
    fill_all_types(&mut c);
    ok(&mut c, &["SELECT", "4"]);
    ok(&mut c, &["SET", "in-db-4", "v"]);
    ok(&mut c, &["SELECT", "0"]);
    let info = info_persistence(&mut c);
    assert_eq!(info_field(&info, "aof_enabled").as_deref(), Some("0"), "{info}");
    ok(&mut c, &["CONFIG", "SET", "appendonly", "yes"]);
    assert_bytes!(c.cmd(&["CONFIG", "GET", "appendonly"]), b"*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n");
    // Writes while the rewrite runs are in the log too.
    for i in 0..200 {
        int(&mut c, &["RPUSH", "during", &i.to_string()]);
    }
    let info = wait_no_rewrite(&mut c);
    assert_eq!(info_field(&info, "aof_enabled").as_deref(), Some("1"), "{info}");
    assert_eq!(info_field(&info, "aof_last_bgrewrite_status").as_deref(), Some("ok"), "{info}");
    ok(&mut c, &["SET", "after", "1"]);
    ok(&mut c, &["SELECT", "4"]);
    ok(&mut c, &["SET", "after-in-db-4", "v"]);
    let before = snapshot(&mut c, 0..15);
    p.kill();
    p.args = LOG.to_vec();
    p.restart();
    let mut c = p.conn();
    assert_same(&before, &snapshot(&mut c, 0..15));
    assert_eq!(int(&mut c, &["LLEN", "during"]), 200);
}

/// Turned off, the log keeps what it held: a restart from it has the writes before, not
/// those after. Turned on again, it starts from the data set then, the writes made while
/// it was off included.
#[test]
fn the_log_turned_off_keeps_what_it_held_and_on_again_takes_everything() {
    let Some(mut p) = Persisted::start(&["--appendonly", "yes", "--appendfsync", "always", "--save", ""]) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "while-on", "1"]);
    ok(&mut c, &["CONFIG", "SET", "appendonly", "no"]);
    let info = info_persistence(&mut c);
    assert_eq!(info_field(&info, "aof_enabled").as_deref(), Some("0"), "{info}");
    ok(&mut c, &["SET", "while-off", "2"]);
    p.kill();
    p.args = LOG.to_vec();
    p.restart();
    let mut c = p.conn();
    assert_eq!(int(&mut c, &["EXISTS", "while-on"]), 1);
    assert_eq!(int(&mut c, &["EXISTS", "while-off"]), 0);

    ok(&mut c, &["CONFIG", "SET", "appendonly", "no"]);
    ok(&mut c, &["SET", "off-again", "3"]);
    ok(&mut c, &["CONFIG", "SET", "appendonly", "yes"]);
    wait_no_rewrite(&mut c);
    ok(&mut c, &["SET", "on-again", "4"]);
    p.kill();
    p.restart();
    let mut c = p.conn();
    assert_eq!(int(&mut c, &["EXISTS", "while-on", "off-again", "on-again"]), 3);
}

/// The log turned off and on again and again while a client writes with `appendfsync
/// always`: every write is answered (turning the log off once waited, under every
/// event loop's gate, for commits only those loops could end: the server hung), and
/// after the last rewrite a restart from the log holds them all.
#[test]
fn the_log_switched_while_writes_go_on_answers_them_all_and_keeps_them() {
    let Some(mut p) = Persisted::start(&["--appendonly", "yes", "--appendfsync", "always", "--save", ""]) else {
        return;
    };
    let writes = 3000;
    let addr = p.server().addr.clone();
    let writer = std::thread::spawn(move || {
        let mut w = RawConn::connect(&addr);
        for chunk in 0..writes / 100 {
            let batch: Vec<u8> = (0..100).flat_map(|_| encode(&["INCR", "switched"])).collect();
            w.send(&batch);
            let replies = w.read_replies(100);
            assert!(!replies.is_empty(), "chunk {chunk}");
        }
    });
    let mut c = p.conn();
    for _ in 0..10 {
        ok(&mut c, &["CONFIG", "SET", "appendonly", "no"]);
        ok(&mut c, &["CONFIG", "SET", "appendonly", "yes"]);
    }
    writer.join().expect("the writer got every reply");
    assert_bytes!(c.cmd(&["GET", "switched"]), b"$4\r\n3000\r\n");
    wait_no_rewrite(&mut c);
    p.kill();
    p.args = LOG.to_vec();
    p.restart();
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "switched"]), b"$4\r\n3000\r\n");
}
