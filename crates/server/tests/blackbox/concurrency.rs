//! Many clients on the same few keys at once, across event loops: pipelined writes on
//! hot keys (which Basalt runs with one shard lock per batch, see store's
//! `shard_lock.rs`) mixed with reads of the same keys, blocking pops, WATCH/MULTI/EXEC
//! and whole-keyspace reads, with and without the append-only log. Nothing may be lost
//! and nothing may hang: every reply is read with the harness's timeout, so a deadlock
//! fails the test instead of stalling it.

use crate::harness::*;

const WRITERS: usize = 6;
const PIPELINES: usize = 150;
/// Per pipeline: INCR, HINCRBY, ZINCRBY, SADD, RPUSH and an LPOP of the list (so it
/// stays short), repeated.
const REPEATS: usize = 8;
/// Clients reading the writers' keys.
const READERS: usize = 2;

/// The text of a bulk string reply.
fn bulk(reply: &[u8]) -> String {
    assert_eq!(reply[0], b'$', "bulk reply expected: {:?}", String::from_utf8_lossy(reply));
    String::from_utf8_lossy(reply).lines().nth(1).expect("bulk body").to_string()
}

fn int(reply: &[u8]) -> i64 {
    assert_eq!(reply[0], b':', "integer reply expected: {:?}", String::from_utf8_lossy(reply));
    std::str::from_utf8(&reply[1..reply.len() - 2]).expect("utf8").parse().expect("integer")
}

#[test]
fn hot_keys_across_loops_lose_nothing_and_never_hang() {
    hot_keys_workload(&[]);
}

/// The same with the append-only log on: every write then takes its keys' ordering
/// stripes before their shards, and every read looks at its keys' stripes after it ran.
/// A read that waited for a stripe while still keeping its shard's lock (lock
/// coalescing) deadlocked two loops against a write of the same key (seen as a CI
/// timeout; `redis-benchmark` GET and SET on one key froze the server at once).
/// `everysec`, not `always`: the lock order is the same, and the run stays short.
#[test]
fn hot_keys_with_the_log_on_never_hang() {
    hot_keys_workload(&["--appendonly", "yes", "--appendfsync", "everysec"]);
}

fn hot_keys_workload(server_args: &[&str]) {
    // On Basalt, two loops with balancing off, so that the kernel spreads the clients
    // over both (balancing would keep this light load on one).
    let t = if is_basalt() {
        let mut args = vec!["--threads", "2", "--loop-spread-busy", "0"];
        args.extend_from_slice(server_args);
        exclusive_with_args(&args).expect("spawned")
    } else {
        exclusive_with_args(server_args).unwrap_or_else(exclusive)
    };
    let addr = t.addr.clone();
    let mut handles = Vec::new();
    for w in 0..WRITERS {
        let addr = addr.clone();
        handles.push(std::thread::spawn(move || {
            let mut c = RawConn::connect(&addr);
            let member = format!("m{w}");
            for p in 0..PIPELINES {
                let mut req = Vec::new();
                for _ in 0..REPEATS {
                    req.extend(encode(&["INCR", "cc:counter"]));
                    req.extend(encode(&["HINCRBY", "cc:hash", "f", "1"]));
                    req.extend(encode(&["ZINCRBY", "cc:zset", "1", &member]));
                    req.extend(encode(&["SADD", "cc:set", &format!("{w}:{p}")]));
                    req.extend(encode(&["RPUSH", "cc:list", "x"]));
                    req.extend(encode(&["LPOP", "cc:list"]));
                }
                c.send(&req);
                for _ in 0..REPEATS * 6 {
                    let r = c.read_reply();
                    assert_ne!(r[0], b'-', "error reply: {:?}", String::from_utf8_lossy(&r));
                }
            }
        }));
    }
    // Transactions that watch the writers' counter (so most attempts are invalidated by
    // a writer's INCR and EXEC answers nil), retried until 20 commit.
    let tx = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            let mut c = RawConn::connect(&addr);
            let mut done = 0;
            let mut attempts = 0;
            while done < 20 && attempts < 2000 {
                attempts += 1;
                assert_eq!(c.cmd(&["WATCH", "cc:counter"]), b"+OK\r\n");
                let v = c.cmd(&["GET", "cc:tx"]);
                let n: i64 = if v.starts_with(b"$-1") { 0 } else { bulk(&v).parse().expect("number") };
                c.send(&[encode(&["MULTI"]), encode(&["SET", "cc:tx", &(n + 1).to_string()]), encode(&["INCR", "cc:counter"]), encode(&["EXEC"])].concat());
                let replies = c.read_replies(4);
                if !replies.ends_with(b"*-1\r\n") {
                    done += 1;
                }
            }
            done
        })
    };
    // Readers of the writers' keys, pipelined like the writers.
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut c = RawConn::connect(&addr);
                for _ in 0..PIPELINES {
                    let mut req = Vec::new();
                    for _ in 0..REPEATS {
                        req.extend(encode(&["GET", "cc:counter"]));
                        req.extend(encode(&["HGET", "cc:hash", "f"]));
                        req.extend(encode(&["ZSCORE", "cc:zset", "m0"]));
                        req.extend(encode(&["LLEN", "cc:list"]));
                    }
                    c.send(&req);
                    for _ in 0..REPEATS * 4 {
                        let r = c.read_reply();
                        assert_ne!(r[0], b'-', "error reply: {:?}", String::from_utf8_lossy(&r));
                    }
                }
            })
        })
        .collect();
    // A blocked client, woken by a push from another loop's client.
    let blocker = {
        let addr = addr.clone();
        std::thread::spawn(move || {
            let mut c = RawConn::connect(&addr);
            let mut got = 0;
            for _ in 0..10 {
                let r = c.cmd(&["BLPOP", "cc:queue", "4"]);
                assert!(r.starts_with(b"*2\r\n"), "BLPOP timed out or failed: {:?}", String::from_utf8_lossy(&r));
                got += 1;
            }
            got
        })
    };
    let mut pusher = RawConn::connect(&addr);
    let mut reader = RawConn::connect(&addr);
    for i in 0..10 {
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert!(int(&pusher.cmd(&["RPUSH", "cc:queue", &i.to_string()])) >= 1);
        // Whole-keyspace reads lock every shard in turn while the writers run.
        assert_eq!(reader.cmd(&["DBSIZE"])[0], b':');
        assert_eq!(reader.cmd(&["KEYS", "cc:*"])[0], b'*');
    }
    for h in handles {
        h.join().expect("writer");
    }
    for r in readers {
        r.join().expect("reader");
    }
    let tx_done = tx.join().expect("transactions");
    assert_eq!(blocker.join().expect("blocker"), 10);

    let writes = (WRITERS * PIPELINES * REPEATS) as i64;
    let mut c = RawConn::connect(&addr);
    assert_eq!(bulk(&c.cmd(&["GET", "cc:counter"])), (writes + tx_done).to_string());
    assert_eq!(bulk(&c.cmd(&["HGET", "cc:hash", "f"])), writes.to_string());
    assert_eq!(int(&c.cmd(&["SCARD", "cc:set"])), (WRITERS * PIPELINES) as i64);
    assert_eq!(int(&c.cmd(&["ZCARD", "cc:zset"])), WRITERS as i64);
    let per = (PIPELINES * REPEATS).to_string();
    for w in 0..WRITERS {
        assert_eq!(bulk(&c.cmd(&["ZSCORE", "cc:zset", &format!("m{w}")])), per);
    }
    assert_eq!(int(&c.cmd(&["LLEN", "cc:list"])), 0);
    assert!(tx_done > 0, "no transaction committed");
    assert_eq!(bulk(&c.cmd(&["GET", "cc:tx"])), tx_done.to_string());
}
