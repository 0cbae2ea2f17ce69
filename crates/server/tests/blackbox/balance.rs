//! Connection balancing between Basalt's event loops (`net/balance.rs`): new connections
//! go to the first loop while it has room, idle connections on a second loop move to
//! the first, and a connection that moves keeps working: its pipelined requests are
//! answered in order with nothing lost. Basalt only (Redis has one event loop).

use std::time::Duration;

use crate::harness::*;

/// Per loop, from INFO server: (clients, moved_out).
fn loops(c: &mut RawConn) -> Vec<(usize, u64)> {
    let info = parse(&c.cmd(&["INFO", "server"])).text();
    let field = |line: &str, name: &str| -> u64 {
        line.split(',')
            .find_map(|kv| {
                kv.split_once('=')
                    .filter(|(k, _)| k.ends_with(name))
                    .map(|(_, v)| v.parse().unwrap_or(0))
            })
            .unwrap_or(0)
    };
    info.lines()
        .filter(|l| l.starts_with("basalt_loop") && l.contains("clients="))
        .map(|l| (field(l, "clients") as usize, field(l, "moved_out")))
        .collect()
}

/// Opens connections until one lands on loop `want` (balancing off: the kernel places
/// them); `total`: the server's connections so far. Returns it and the others it opened.
fn open_on_loop(
    t: &Srv,
    admin: &mut RawConn,
    want: usize,
    total: usize,
) -> (RawConn, Vec<RawConn>) {
    let mut others = Vec::new();
    for total in total.. {
        let mut before = Vec::new();
        let settled = wait_until(Duration::from_secs(3), || {
            before = loops(admin);
            before.iter().map(|l| l.0).sum::<usize>() == total
        });
        assert!(settled, "INFO counts {total} connections: {before:?}");
        if others.len() == 30 {
            break;
        }
        let c = t.raw_conn();
        let mut after = Vec::new();
        let counted = wait_until(Duration::from_secs(3), || {
            after = loops(admin);
            after.iter().map(|l| l.0).sum::<usize>() == total + 1
        });
        assert!(
            counted,
            "INFO counts the new connection: {before:?} -> {after:?}"
        );
        if after[want].0 == before[want].0 + 1 {
            return (c, others);
        }
        others.push(c);
    }
    panic!("no connection landed on loop {want} in 30 tries");
}

/// A Basalt server of its own with two event loops and `loop-spread-busy` set to
/// `spread_busy`; None (the test skipped) against another server.
fn two_loops(spread_busy: &str) -> Option<Srv> {
    if !is_basalt() {
        eprintln!("skipped: Basalt's event loops");
        return None;
    }
    exclusive_with_args(&["--threads", "2", "--loop-spread-busy", spread_busy])
}

fn int(reply: &[u8]) -> i64 {
    parse(reply).int()
}

#[test]
fn new_connections_go_to_the_first_loop_while_it_has_room() {
    let Some(t) = two_loops("85") else {
        return;
    };
    let mut admin = t.raw_conn();
    let mut conns: Vec<RawConn> = (0..12).map(|_| t.raw_conn()).collect();
    for (i, c) in conns.iter_mut().enumerate() {
        assert_eq!(c.cmd(&["SET", &format!("place:{i}"), "v"]), b"+OK\r\n");
    }
    // Loops publish their client counts on their tick (10 per second).
    let mut seen = Vec::new();
    let placed = wait_until(Duration::from_secs(5), || {
        seen = loops(&mut admin);
        seen.iter().map(|l| l.0).collect::<Vec<_>>() == [13, 0]
    });
    // (moved_out counts the connections loop 1 accepted and handed over at once.)
    assert!(placed, "every connection on loop 0: {seen:?}");
    assert!(parse(&admin.cmd(&["INFO", "server"]))
        .text()
        .contains("basalt_loop_spread_busy:85\r\n"));
}

#[test]
fn idle_connections_move_to_the_first_loop_and_keep_working() {
    // Balancing off at first: the kernel spreads the connections over both loops.
    let Some(t) = two_loops("0") else {
        return;
    };
    let mut admin = t.raw_conn();
    let mut conns: Vec<RawConn> = (0..16).map(|_| t.raw_conn()).collect();
    for (i, c) in conns.iter_mut().enumerate() {
        assert_eq!(
            c.cmd(&["SET", &format!("bal:{i}"), &i.to_string()]),
            b"+OK\r\n"
        );
    }
    let mut seen = Vec::new();
    let spread = wait_until(Duration::from_secs(5), || {
        seen = loops(&mut admin);
        seen.len() == 2 && seen[0].0 + seen[1].0 == 17 && seen[1].0 > 0
    });
    assert!(spread, "the kernel put connections on both loops: {seen:?}");

    // Connections that may not move: a subscriber, a blocked pop, a half-sent request.
    let mut sub = t.raw_conn();
    assert!(sub.cmd(&["SUBSCRIBE", "bal:ch"]).starts_with(b"*3\r\n"));
    let mut blocked = t.raw_conn();
    blocked.send(&encode(&["BLPOP", "bal:queue", "20"]));
    let mut partial = t.raw_conn();
    partial.send(b"*3\r\n$3\r\nSET\r\n$8\r\nbal:half\r\n");

    // A client pipelining while the moves happen, and reading slowly, so that its
    // large replies are often still being sent when its loop wants to move it: every
    // reply comes whole and in order.
    let big = "b".repeat(1 << 20);
    assert_eq!(admin.cmd(&["SET", "bal:big", &big]), b"+OK\r\n");
    let (mut c, _others) = open_on_loop(&t, &mut admin, 1, 20);
    let pumper = std::thread::spawn(move || {
        let mut expect = 1i64;
        let whole = [
            format!("${}\r\n", big.len()).into_bytes(),
            big.into_bytes(),
            b"\r\n".to_vec(),
        ]
        .concat();
        for _ in 0..30 {
            let mut batch = encode(&["INCR", "bal:n"]);
            for _ in 0..8 {
                batch.extend(encode(&["GET", "bal:big"]));
            }
            batch.extend(encode(&["INCR", "bal:n"]));
            c.send(&batch);
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(int(&c.read_reply()), expect, "replies in order, none lost");
            for _ in 0..8 {
                assert!(c.read_reply() == whole, "a large reply came whole");
            }
            assert_eq!(
                int(&c.read_reply()),
                expect + 1,
                "replies in order, none lost"
            );
            expect += 2;
        }
        expect - 1
    });

    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "loop-spread-busy", "85"]),
        b"+OK\r\n"
    );
    let packed = wait_until(Duration::from_secs(8), || {
        seen = loops(&mut admin);
        // Loop 1 keeps at most the three that may not move.
        seen.len() == 2 && seen[1].0 <= 3 && seen[1].1 > 0
    });
    assert!(
        packed,
        "loop 1's movable connections moved to loop 0: {seen:?}"
    );

    for (i, c) in conns.iter_mut().enumerate() {
        assert_eq!(
            parse(&c.cmd(&["GET", &format!("bal:{i}")])).text(),
            i.to_string()
        );
    }
    partial.send(b"$1\r\nv\r\n");
    assert_eq!(partial.read_reply(), b"+OK\r\n");
    assert_eq!(int(&admin.cmd(&["PUBLISH", "bal:ch", "hello"])), 1);
    assert_eq!(sub.read_reply(), arr(&["message", "bal:ch", "hello"]));
    assert_eq!(int(&admin.cmd(&["RPUSH", "bal:queue", "x"])), 1);
    assert_eq!(blocked.read_reply(), arr(&["bal:queue", "x"]));

    let sent = pumper.join().expect("pumper");
    assert_eq!(
        parse(&admin.cmd(&["GET", "bal:n"])).text(),
        sent.to_string()
    );
    // The moved connections are still themselves: CLIENT KILL finds them on their new
    // loop.
    let id = int(&conns[0].cmd(&["CLIENT", "ID"]));
    assert_eq!(
        int(&admin.cmd(&["CLIENT", "KILL", "ID", &id.to_string()])),
        1
    );
    assert!(conns[0].is_closed_within(Duration::from_secs(3)));
}
