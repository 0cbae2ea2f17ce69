//! Hostile input: seeded random mutations of valid commands, random bytes and truncated
//! frames, from many connections. Whatever each connection gets back (an error, a
//! close), the server must stay up, keep its data and keep answering other clients.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::assert_bytes;
use crate::harness::*;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SEEDS: &[&[&str]] = &[
    &["SET", "k", "v"],
    &["GET", "k"],
    &["HSET", "h", "f", "v"],
    &["LPUSH", "l", "a", "b"],
    &["ZADD", "z", "1", "m"],
    &["SADD", "s", "1"],
    &["MULTI"],
    &["EXEC"],
    &["SUBSCRIBE", "c"],
    &["BLPOP", "nolist", "0.01"],
    &["CONFIG", "GET", "*"],
    &["SCAN", "0", "MATCH", "*[a-", "COUNT", "5"],
    &["SETRANGE", "k", "5", "x"],
    &["EVAL", "return 1", "0"],
];

fn mutate(rng: &mut Rng) -> Vec<u8> {
    let args = SEEDS[rng.below(SEEDS.len())];
    let mut bytes = encode(args);
    match rng.below(6) {
        0 => {
            // Flip some bytes.
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(bytes.len());
                bytes[i] = rng.next() as u8;
            }
        }
        1 => bytes.truncate(rng.below(bytes.len())),
        2 => bytes = (0..rng.below(200)).map(|_| rng.next() as u8).collect(),
        3 => {
            // A huge or negative length.
            let lens = [&b"*99999999\r\n"[..], b"$-7\r\n", b"*-1\r\n", b"$2147483648\r\n", b"*1\r\n$1"];
            bytes = lens[rng.below(lens.len())].to_vec();
        }
        4 => bytes = format!("{}\r\n", args.join(" ")).into_bytes(), // inline form
        _ => {} // a valid command
    }
    bytes
}

#[test]
fn random_hostile_input_never_takes_the_server_down() {
    let t = exclusive();
    let mut keeper = t.raw_conn();
    assert_bytes!(keeper.cmd(&["SET", "garbage:kept", "safe"]), b"+OK\r\n");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _round in 0..20 {
        let mut socks: Vec<TcpStream> = (0..10)
            .filter_map(|_| TcpStream::connect(&t.addr).ok())
            .collect();
        for s in &mut socks {
            let _ = s.set_read_timeout(Some(Duration::from_millis(20)));
            for _ in 0..10 {
                let _ = s.write_all(&mutate(&mut rng));
            }
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
        }
        drop(socks);
        // Other clients are unaffected.
        assert_bytes!(keeper.cmd(&["PING"]), b"+PONG\r\n");
    }
    assert_bytes!(keeper.cmd(&["GET", "garbage:kept"]), b"$4\r\nsafe\r\n");
    let mut fresh = t.raw_conn();
    assert_bytes!(fresh.cmd(&["PING"]), b"+PONG\r\n");
}
