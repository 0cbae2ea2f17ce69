//! MULTI / EXEC / DISCARD / WATCH / UNWATCH.

use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

const EXECABORT: &[u8] = b"-EXECABORT Transaction discarded because of previous errors.\r\n";

#[test]
fn multi_exec_queues_and_runs_in_order() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_basic:k";
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["INCR", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["ECHO", "hi"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["EXEC"]),
        b"*5\r\n+OK\r\n:2\r\n$1\r\n2\r\n+PONG\r\n$2\r\nhi\r\n"
    );
    // After EXEC the connection is back to normal.
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\n2\r\n");
    // An empty transaction.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*0\r\n");
    // Lower case works.
    assert_bytes!(c.cmd(&["multi"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["incr", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["exec"]), b"*1\r\n:3\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

/// Subcommands named like a transaction's own commands are queued as any other:
/// SLOWLOG RESET and LATENCY RESET inside MULTI wait for EXEC (Basalt ran them at once,
/// taking them for RESET, and EXEC answered an empty array).
#[test]
fn subcommands_named_reset_are_queued() {
    let t = exclusive();
    let mut c = t.raw_conn();
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SLOWLOG", "RESET"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["LATENCY", "RESET"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*2\r\n+OK\r\n:0\r\n");
}

#[test]
fn queued_commands_are_not_visible_before_exec() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let k = "tx_isolated:k";
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "v"]), b"+QUEUED\r\n");
    assert_bytes!(other.cmd(&["EXISTS", k]), b":0\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+OK\r\n");
    assert_bytes!(other.cmd(&["GET", k]), b"$1\r\nv\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn discard() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_discard:k";
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "2"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["DISCARD", "x"]),
        b"-ERR wrong number of arguments for 'discard' command\r\n"
    );
    assert_bytes!(c.cmd(&["DISCARD"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"-ERR EXEC without MULTI\r\n");
    assert_bytes!(c.cmd(&["DISCARD"]), b"-ERR DISCARD without MULTI\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn exec_without_multi_and_nested_multi() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_nested:k";
    assert_bytes!(c.cmd(&["EXEC"]), b"-ERR EXEC without MULTI\r\n");
    assert_bytes!(c.cmd(&["DISCARD"]), b"-ERR DISCARD without MULTI\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+QUEUED\r\n");
    // A nested MULTI is refused but does not abort the transaction.
    assert_bytes!(c.cmd(&["MULTI"]), b"-ERR MULTI calls can not be nested\r\n");
    assert_bytes!(c.cmd(&["INCR", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*2\r\n+OK\r\n:2\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn queue_time_errors_abort_exec() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_abort:k";
    assert_bytes!(c.cmd(&["SET", k, "orig"]), b"+OK\r\n");
    // Unknown command.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["NOSUCHCMD", "x"]),
        b"-ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' \r\n"
    );
    assert_bytes!(c.cmd(&["SET", k, "2"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), EXECABORT);
    assert_bytes!(c.cmd(&["GET", k]), b"$4\r\norig\r\n");
    // Wrong arity.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["GET"]),
        b"-ERR wrong number of arguments for 'get' command\r\n"
    );
    assert_bytes!(c.cmd(&["EXEC"]), EXECABORT);
    assert_bytes!(c.cmd(&["GET", k]), b"$4\r\norig\r\n");
    // The connection left MULTI state.
    assert_bytes!(c.cmd(&["EXEC"]), b"-ERR EXEC without MULTI\r\n");
    // EXEC with arguments is itself an arity error that discards.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "3"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["EXEC", "x"]),
        b"-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"
    );
    assert_bytes!(c.cmd(&["EXEC"]), b"-ERR EXEC without MULTI\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$4\r\norig\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn runtime_errors_do_not_abort_the_others() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_runtime:k";
    let l = "tx_runtime:l";
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["LPUSH", k, "x"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["SET", k, "v", "FOO"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["INCR", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["RPUSH", l, "a"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["INCR", l]), b"+QUEUED\r\n");
    let mut want = b"*6\r\n+OK\r\n".to_vec();
    want.extend_from_slice(WRONGTYPE);
    want.extend_from_slice(b"-ERR syntax error\r\n:2\r\n:1\r\n");
    want.extend_from_slice(WRONGTYPE);
    assert_bytes!(c.cmd(&["EXEC"]), want);
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["LRANGE", l, "0", "-1"]), b"*1\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["DEL", k, l]), b":2\r\n");
}

#[test]
fn select_inside_multi_sticks() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let other_db = (t.db + 1).to_string();
    let k = "tx_select:k";
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SELECT", &other_db]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["SET", k, "other"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*2\r\n+OK\r\n+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$5\r\nother\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
    assert_bytes!(c.cmd(&["SELECT", &t.db.to_string()]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$-1\r\n");
}

#[test]
fn watch_invalidated_by_another_connection() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let k = "tx_watch:k";
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", k, "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "3"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"$1\r\n2\r\n");
    // Writing the same value still counts as a modification.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", k, "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    // A read by someone else does not.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["GET", k]), b"$1\r\n2\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n$1\r\n2\r\n");
    // The watching connection's own write invalidates too.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "9"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

/// A write invalidates the watches of the keys it changes, not of other keys: the
/// *MPOP commands pop from one of their keys, SORT ... STORE and ZUNIONSTORE write only
/// their destination. (Basalt invalidated every watched key of the database on an
/// *MPOP, even one on a missing key.)
#[test]
fn watch_sees_only_the_keys_a_write_changes() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let (x, l, m, z) = ("tx_wk:{t}x", "tx_wk:{t}l", "tx_wk:{t}m", "tx_wk:{t}z");
    c.cmd(&["SET", x, "1"]);
    c.cmd(&["RPUSH", l, "a", "b"]);
    c.cmd(&["RPUSH", m, "c"]);
    c.cmd(&["ZADD", z, "1", "a"]);
    let holds = |c: &mut RawConn, other: &mut RawConn, watch: &str, cmd: &[&str]| -> bool {
        assert_bytes!(c.cmd(&["WATCH", watch]), b"+OK\r\n");
        let r = other.cmd(cmd);
        assert_ne!(r[0], b'-', "{cmd:?}: {:?}", String::from_utf8_lossy(&r));
        c.cmd(&["MULTI"]);
        c.cmd(&["PING"]);
        match c.cmd(&["EXEC"]).as_slice() {
            b"*1\r\n+PONG\r\n" => true,
            b"*-1\r\n" => false,
            r => panic!("EXEC: {:?}", String::from_utf8_lossy(r)),
        }
    };
    // Pops elsewhere leave a watch on x alone.
    assert!(holds(&mut c, &mut other, x, &["LMPOP", "1", l, "LEFT"]));
    assert!(holds(&mut c, &mut other, x, &["ZMPOP", "1", "tx_wk:{t}missing", "MIN"]));
    assert!(holds(&mut c, &mut other, x, &["BLMPOP", "0", "1", m, "RIGHT"]));
    assert!(holds(&mut c, &mut other, x, &["ZUNIONSTORE", "tx_wk:{t}d", "1", z]));
    assert!(holds(&mut c, &mut other, z, &["ZUNIONSTORE", "tx_wk:{t}d", "1", z]));
    assert!(holds(&mut c, &mut other, z, &["ZRANGESTORE", "tx_wk:{t}d", z, "0", "-1"]));
    assert!(holds(&mut c, &mut other, x, &["BITOP", "OR", "tx_wk:{t}d", x]));
    c.cmd(&["SADD", "tx_wk:{t}s", "a"]);
    assert!(holds(&mut c, &mut other, "tx_wk:{t}s", &["SUNIONSTORE", "tx_wk:{t}d", "tx_wk:{t}s"]));
    assert!(!holds(&mut c, &mut other, "tx_wk:{t}d", &["SINTERSTORE", "tx_wk:{t}d", "tx_wk:{t}s"]));
    // Of an *MPOP's keys, the one popped from is changed, the others not.
    c.cmd(&["DEL", l, m]);
    c.cmd(&["RPUSH", l, "a"]);
    c.cmd(&["RPUSH", m, "c", "d"]);
    assert!(holds(&mut c, &mut other, m, &["LMPOP", "2", l, m, "LEFT"])); // pops l's only element
    assert!(!holds(&mut c, &mut other, m, &["LMPOP", "2", l, m, "LEFT"])); // l is gone: pops m
    assert!(!holds(&mut c, &mut other, z, &["BZMPOP", "0", "1", z, "MIN"]));
    assert!(!holds(&mut c, &mut other, "tx_wk:{t}d", &["SORT", m, "ALPHA", "STORE", "tx_wk:{t}d"]));
    // A BITFIELD of GETs reads; one with INCRBY writes.
    assert!(holds(&mut c, &mut other, x, &["BITFIELD", x, "GET", "u8", "0"]));
    assert!(!holds(&mut c, &mut other, x, &["BITFIELD", x, "INCRBY", "u8", "0", "1"]));
    // COPY changes its destination only, MOVE its key (in both databases).
    c.cmd(&["ZADD", z, "1", "a"]);
    assert!(holds(&mut c, &mut other, x, &["COPY", z, "tx_wk:{t}zc", "REPLACE"]));
    assert!(holds(&mut c, &mut other, x, &["MOVE", "tx_wk:{t}zc", "9"]));
    assert!(!holds(&mut c, &mut other, z, &["MOVE", z, "9"]));
    assert!(!holds(&mut c, &mut other, x, &["COPY", m, x, "REPLACE"]));
    c.cmd(&["DEL", x, l, m, z, "tx_wk:{t}d", "tx_wk:{t}s"]);
    c.cmd(&["SELECT", "9"]);
    c.cmd(&["DEL", z, "tx_wk:{t}zc"]);
}

#[test]
fn watch_covers_missing_keys_other_types_and_several_keys() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let missing = "tx_watch2:missing";
    // A missing key that gets created.
    assert_bytes!(c.cmd(&["WATCH", missing]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", missing, "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    assert_bytes!(other.cmd(&["DEL", missing]), b":1\r\n");
    // Deleting a missing key changes nothing.
    assert_bytes!(c.cmd(&["WATCH", missing]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["DEL", missing]), b":0\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+PONG\r\n");
    // Collection writes, EXPIRE, RENAME onto the key; any of several keys.
    let l = "tx_watch2:{x}l";
    let r = "tx_watch2:{x}r";
    let r2 = "tx_watch2:{x}r2";
    let e = "tx_watch2:{x}e";
    assert_bytes!(other.cmd(&["SET", r, "v"]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", e, "v"]), b"+OK\r\n");
    let writes: &[&[&str]] = &[
        &["LPUSH", l, "x"],
        &["EXPIRE", e, "100"],
        &["RENAME", r, r2],
    ];
    for w in writes {
        assert_bytes!(c.cmd(&["WATCH", "tx_watch2:{x}unrelated", l, e, r2]), b"+OK\r\n");
        let _ = other.cmd(w);
        assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
        assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n", "{w:?}");
    }
    assert_bytes!(c.cmd(&["WATCH"]), b"-ERR wrong number of arguments for 'watch' command\r\n");
    assert_bytes!(other.cmd(&["DEL", l, e, r2]), b":3\r\n");
}

#[test]
fn watch_in_another_database_is_separate() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    assert_bytes!(c.cmd(&["SET", "w", "1"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["WATCH", "w"]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SELECT", &(t.db + 1).to_string()]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", "w", "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+PONG\r\n");
    assert_bytes!(other.cmd(&["DEL", "w"]), b":1\r\n");
}

#[test]
fn watch_invalidated_by_expiry() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_watch_exp:k";
    assert_bytes!(c.cmd(&["SET", k, "1", "PX", "100"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    std::thread::sleep(Duration::from_millis(300));
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    assert_bytes!(c.cmd(&["EXISTS", k]), b":0\r\n");
}

#[test]
fn watch_invalidated_by_flushall_and_flushdb() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    for flush in ["FLUSHALL", "FLUSHDB"] {
        assert_bytes!(c.cmd(&["SET", "f", "1"]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["WATCH", "f"]), b"+OK\r\n");
        assert_bytes!(other.cmd(&[flush]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
        assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
        assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n", "{flush}");
    }
    // A watched key that did not exist is not touched by a flush.
    assert_bytes!(c.cmd(&["WATCH", "never"]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["FLUSHALL"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["PING"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+PONG\r\n");
}

#[test]
fn unwatch_and_exec_discard_clear_watches() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let k = "tx_unwatch:k";
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+OK\r\n");
    // UNWATCH.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", k, "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["UNWATCH"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n$1\r\n2\r\n");
    // DISCARD unwatches.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["DISCARD"]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", k, "3"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n$1\r\n3\r\n");
    // EXEC unwatches, whether it ran or not.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", k, "4"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    assert_bytes!(other.cmd(&["SET", k, "5"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n$1\r\n5\r\n");
    // So does an EXECABORT.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    let _ = c.cmd(&["NOSUCHCMD"]);
    assert_bytes!(c.cmd(&["EXEC"]), EXECABORT);
    assert_bytes!(other.cmd(&["SET", k, "6"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n$1\r\n6\r\n");
    // UNWATCH inside MULTI is queued.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["UNWATCH"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+OK\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn watch_inside_multi_is_an_error() {
    let t = shared();
    let mut c = t.raw_conn();
    let k = "tx_watch_in_multi:k";
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+QUEUED\r\n");
    assert_bytes!(
        c.cmd(&["WATCH", k]),
        b"-ERR WATCH inside MULTI is not allowed\r\n"
    );
    // It does not abort the transaction.
    assert_bytes!(c.cmd(&["EXEC"]), b"*1\r\n+OK\r\n");
    assert_bytes!(c.cmd(&["DEL", k]), b":1\r\n");
}

#[test]
fn resp3_exec_replies() {
    let t = shared();
    let mut c = t.raw_conn();
    let mut other = t.raw_conn();
    let k = "tx_resp3:{x}k";
    let h = "tx_resp3:{x}h";
    let z = "tx_resp3:{x}z";
    assert_eq!(parse(&c.cmd(&["HELLO", "3"])).get("proto"), Some(Resp::Int(3)));
    assert_bytes!(c.cmd(&["SET", k, "1"]), b"+OK\r\n");
    // Each reply keeps its RESP3 type inside EXEC.
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["HGETALL", h]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["ZADD", z, "1.5", "m"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", z, "m"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["GET", h]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*5\r\n$1\r\n1\r\n%0\r\n:1\r\n,1.5\r\n_\r\n");
    // An aborted EXEC is a RESP3 null.
    assert_bytes!(c.cmd(&["WATCH", k]), b"+OK\r\n");
    assert_bytes!(other.cmd(&["SET", k, "2"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["MULTI"]), b"+OK\r\n");
    assert_bytes!(c.cmd(&["GET", k]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"_\r\n");
    assert_bytes!(c.cmd(&["DEL", k, z]), b":2\r\n");
}

#[test]
fn redis_rs_atomic_pipeline() {
    let mut rc = conn();
    let k = "tx_rs:k";
    let (a, b): (i64, i64) = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg(k)
        .arg(10)
        .ignore()
        .cmd("INCRBY")
        .arg(k)
        .arg(5)
        .cmd("INCR")
        .arg(k)
        .query(&mut rc)
        .expect("atomic pipeline");
    assert_eq!((a, b), (15, 16));
    let _: i64 = q(&mut rc, &["DEL", k]);
}

#[test]
fn no_client_observes_half_of_an_exec() {
    // A writer increments two keys together in transactions while several readers
    // (spread over the server's event loops) read both at once; every read must see
    // them equal. Bounded: a fixed number of transactions and reads.
    let t = exclusive();
    let addr = t.addr.clone();
    let (a, b) = ("tx_atomic:{k}a", "tx_atomic:{k}b");
    let mut setup = t.raw_conn();
    assert_bytes!(setup.cmd(&["MSET", a, "0", b, "0"]), b"+OK\r\n");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Six readers: with two loops, the chance that all share the writer's loop is 1 in 64.
    let readers: Vec<_> = (0..6)
        .map(|_| {
            let stop = stop.clone();
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut c = RawConn::connect(&addr);
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && reads < 20_000 {
                    let r = parse(&c.cmd(&["MGET", a, b]));
                    let v = r.items();
                    assert_eq!(v[0], v[1], "saw half a transaction after {reads} reads");
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    let mut w = t.raw_conn();
    for _ in 0..2_000 {
        w.send(b"*1\r\n$5\r\nMULTI\r\n");
        w.send(&encode(&["INCR", a]));
        w.send(&encode(&["INCR", b]));
        w.send(b"*1\r\n$4\r\nEXEC\r\n");
        assert_bytes!(w.read_reply(), b"+OK\r\n");
        assert_bytes!(w.read_reply(), b"+QUEUED\r\n");
        assert_bytes!(w.read_reply(), b"+QUEUED\r\n");
        let r = parse(&w.read_reply());
        assert_eq!(r.items().len(), 2);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader thread") > 0);
    }
    assert_bytes!(setup.cmd(&["MGET", a, b]), b"*2\r\n$4\r\n2000\r\n$4\r\n2000\r\n");
}

/// Issue 26, defect 7: WATCH sees what Redis signals, and only that. SMOVE of a member
/// the destination already holds changes only the source; a SETBIT that leaves the
/// bit as it was and a BITFIELD of GETs or same-value SETs change nothing (nor count
/// as changes for `save`).
#[test]
fn watch_is_touched_only_by_real_changes() {
    let t = exclusive();
    let mut c = t.raw_conn();
    let exec_after = |c: &mut RawConn, watch: &str, write: &[&str]| -> Vec<u8> {
        let mut w = t.raw_conn();
        assert_bytes!(w.cmd(&["WATCH", watch]), b"+OK\r\n");
        c.cmd(write);
        assert_bytes!(w.cmd(&["MULTI"]), b"+OK\r\n");
        assert_bytes!(w.cmd(&["PING"]), b"+QUEUED\r\n");
        w.cmd(&["EXEC"])
    };
    let ran = b"*1\r\n+PONG\r\n";
    let aborted = b"*-1\r\n";
    assert_bytes!(c.cmd(&["SADD", "s1", "m", "n"]), b":2\r\n");
    assert_bytes!(c.cmd(&["SADD", "s2", "m"]), b":1\r\n");
    assert_bytes!(exec_after(&mut c, "s2", &["SMOVE", "s1", "s2", "m"]), ran);
    assert_bytes!(exec_after(&mut c, "s1", &["SMOVE", "s1", "s2", "n"]), aborted);
    assert_bytes!(exec_after(&mut c, "s2", &["SMOVE", "s2", "s2", "m"]), ran);
    assert_bytes!(c.cmd(&["SETBIT", "bits", "3", "1"]), b":0\r\n");
    let dirty = |c: &mut RawConn| -> i64 {
        let info = parse(&c.cmd(&["INFO", "persistence"])).text();
        let line = info.lines().find_map(|l| l.strip_prefix("rdb_changes_since_last_save:")).map(str::to_string);
        line.and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("{info}"))
    };
    let before = dirty(&mut c);
    assert_bytes!(exec_after(&mut c, "bits", &["SETBIT", "bits", "3", "1"]), ran);
    assert_bytes!(exec_after(&mut c, "bits", &["BITFIELD", "bits", "GET", "u8", "0"]), ran);
    assert_bytes!(exec_after(&mut c, "bits", &["BITFIELD", "bits", "SET", "u8", "0", "16"]), ran);
    assert_eq!(dirty(&mut c), before, "changes counted for writes that changed nothing");
    assert_bytes!(exec_after(&mut c, "bits", &["SETBIT", "bits", "3", "0"]), aborted);
    assert_eq!(dirty(&mut c), before + 1);
}
