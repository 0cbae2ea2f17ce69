//! Append-only file persistence (`--appendonly yes`), Redis 7 multi-part layout.
//!
//! Each test spawns its own server with its data in a temp dir that outlives the
//! process, kills it with SIGKILL (by PID) and starts a new server in the same
//! dir, then compares what the new server holds with what the old one held.
//! With `--appendfsync always` every acknowledged write must survive the kill.
//! Some tests edit the AOF between the kill and the restart (a torn tail, an
//! incomplete MULTI, garbage in the middle) and check how the server loads it;
//! the log texts asserted are Redis 7.0.15's.
//!
//! Skipped against an external server (`BASALT_TEST_ADDR`): they need to spawn.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::assert_bytes;
use crate::harness::*;

mod damaged_log;
mod disk_full;
mod log_switch;
mod redis_reads_our_log;
mod snapshots;

const AOF_ALWAYS: &[&str] = &["--appendonly", "yes", "--appendfsync", "always"];

/// Bound on a start that must fail (a corrupt AOF).
const FAIL_WAIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// A server whose data directory survives restarts
// ---------------------------------------------------------------------------

struct Persisted {
    bin: &'static Path,
    dir: tempfile::TempDir,
    args: Vec<&'static str>,
    server: Option<ServerProcess>,
}

impl Persisted {
    /// Starts a server with `args` in a fresh temp dir; None against an
    /// external server (the test is then skipped).
    fn start(args: &[&'static str]) -> Option<Persisted> {
        if is_external() {
            eprintln!("skipped: persistence tests spawn their own server");
            return None;
        }
        let bin = server_binary()?;
        let dir = tempfile::tempdir().expect("tempdir");
        let server = ServerProcess::spawn_in(bin, dir.path(), args);
        Some(Persisted {
            bin,
            dir,
            args: args.to_vec(),
            server: Some(server),
        })
    }

    fn server(&self) -> &ServerProcess {
        self.server.as_ref().expect("server running")
    }

    fn conn(&self) -> RawConn {
        RawConn::connect(&self.server().addr)
    }

    /// SIGKILLs the running server (by PID) and waits until it is gone.
    fn kill(&mut self) {
        let mut s = self.server.take().expect("server running");
        s.kill9();
    }

    /// Starts a new server in the same directory with the same flags.
    fn restart(&mut self) {
        assert!(self.server.is_none(), "kill the server first");
        self.server = Some(ServerProcess::spawn_in(
            self.bin,
            self.dir.path(),
            &self.args,
        ));
    }

    fn crash_and_restart(&mut self) {
        self.kill();
        self.restart();
    }

    fn aof_dir(&self) -> PathBuf {
        self.dir.path().join("appendonlydir")
    }

    /// Starts a server in the same directory that is expected not to start.
    fn start_expecting_failure(&self) -> FailedStart {
        assert!(self.server.is_none(), "kill the server first");
        start_expect_exit(self.bin, self.dir.path(), &self.args, FAIL_WAIT)
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Runs a command and parses its reply.
fn r<A: AsRef<[u8]>>(c: &mut RawConn, args: &[A]) -> Resp {
    parse(&c.cmd(args))
}

fn ok<A: AsRef<[u8]>>(c: &mut RawConn, args: &[A]) {
    let reply = c.cmd(args);
    assert_bytes!(reply, b"+OK\r\n");
}

fn int<A: AsRef<[u8]>>(c: &mut RawConn, args: &[A]) -> i64 {
    r(c, args).int()
}

fn select(c: &mut RawConn, db: i64) {
    ok(c, &["SELECT", &db.to_string()]);
}

fn bytes(r: &Resp) -> Vec<u8> {
    match r {
        Resp::Bulk(b) | Resp::Verbatim(_, b) => b.clone(),
        Resp::Simple(s) | Resp::Double(s) | Resp::BigNum(s) => s.clone().into_bytes(),
        Resp::Int(i) => i.to_string().into_bytes(),
        other => panic!("not a scalar reply: {other:?}"),
    }
}

fn flat(r: &Resp) -> Vec<Vec<u8>> {
    r.items().iter().map(bytes).collect()
}

fn sorted(mut v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    v.sort();
    v
}

/// Everything a set of databases holds: DBSIZE per db, and per key its type,
/// contents and whether it has a TTL.
#[derive(Debug, PartialEq)]
struct Snapshot {
    dbsize: Vec<(i64, i64)>,
    keys: BTreeMap<(i64, Vec<u8>), KeyState>,
}

/// A key's type, contents (sorted for hashes and sets) and whether it has a TTL.
type KeyState = (String, Vec<Vec<u8>>, bool);

fn snapshot(c: &mut RawConn, dbs: std::ops::Range<i64>) -> Snapshot {
    snapshot_matching(c, dbs, "*")
}

/// As [`snapshot`], for the keys that match a KEYS pattern (DBSIZE still counts all).
fn snapshot_matching(c: &mut RawConn, dbs: std::ops::Range<i64>, pattern: &str) -> Snapshot {
    let mut snap = Snapshot {
        dbsize: Vec::new(),
        keys: BTreeMap::new(),
    };
    for db in dbs {
        select(c, db);
        snap.dbsize.push((db, int(c, &["DBSIZE"])));
        for key in flat(&r(c, &["KEYS", pattern])) {
            let ty = r(c, &[b"TYPE".as_slice(), key.as_slice()]).text();
            let contents = match ty.as_str() {
                "string" => vec![bytes(&r(c, &[b"GET".as_slice(), key.as_slice()]))],
                "hash" => {
                    let pairs = r(c, &[b"HGETALL".as_slice(), key.as_slice()]).pairs();
                    let mut v: Vec<Vec<u8>> = pairs
                        .iter()
                        .map(|(f, v)| {
                            let mut e = bytes(f);
                            e.push(b'=');
                            e.extend(bytes(v));
                            e
                        })
                        .collect();
                    v.sort();
                    v
                }
                "list" => flat(&r(c, &[b"LRANGE".as_slice(), key.as_slice(), b"0", b"-1"])),
                "set" => sorted(flat(&r(c, &[b"SMEMBERS".as_slice(), key.as_slice()]))),
                "zset" => flat(&r(
                    c,
                    &[
                        b"ZRANGE".as_slice(),
                        key.as_slice(),
                        b"0",
                        b"-1",
                        b"WITHSCORES",
                    ],
                )),
                other => panic!("unexpected type {other} of key {}", show(&key)),
            };
            let pttl = int(c, &[b"PTTL".as_slice(), key.as_slice()]);
            snap.keys.insert((db, key), (ty, contents, pttl >= 0));
        }
    }
    select(c, 0);
    snap
}

fn assert_same(before: &Snapshot, after: &Snapshot) {
    assert_eq!(before.dbsize, after.dbsize, "DBSIZE per db (db, size)");
    let kb: Vec<_> = before.keys.keys().collect();
    let ka: Vec<_> = after.keys.keys().collect();
    assert!(
        kb == ka,
        "key sets differ\n  before: {:?}\n  after:  {:?}",
        kb.iter().map(|(d, k)| (d, show(k))).collect::<Vec<_>>(),
        ka.iter().map(|(d, k)| (d, show(k))).collect::<Vec<_>>()
    );
    for (k, vb) in &before.keys {
        let va = &after.keys[k];
        assert!(
            vb == va,
            "db {} key {} differs\n  before: {:?}\n  after:  {:?}",
            k.0,
            show(&k.1),
            (
                &vb.0,
                vb.1.iter().map(|e| show(e)).collect::<Vec<_>>(),
                vb.2
            ),
            (
                &va.0,
                va.1.iter().map(|e| show(e)).collect::<Vec<_>>(),
                va.2
            )
        );
    }
}

/// One manifest line: `file <name> seq <n> type <b|i|h>`.
#[derive(Debug, Clone)]
struct ManifestEntry {
    name: String,
    seq: u64,
    kind: String,
}

fn manifest_path(aof_dir: &Path) -> PathBuf {
    aof_dir.join("appendonly.aof.manifest")
}

fn read_manifest(aof_dir: &Path) -> Vec<ManifestEntry> {
    let path = manifest_path(aof_dir);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read manifest {}: {e}", path.display()));
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        assert!(
            t.len() == 6 && t[0] == "file" && t[2] == "seq" && t[4] == "type",
            "manifest line is not `file <name> seq <n> type <b|i|h>`: {line:?}\n{text}"
        );
        let seq = t[3]
            .parse()
            .unwrap_or_else(|_| panic!("bad seq in manifest line {line:?}"));
        assert!(
            matches!(t[5], "b" | "i" | "h"),
            "bad type in manifest line {line:?}"
        );
        out.push(ManifestEntry {
            name: t[1].to_string(),
            seq,
            kind: t[5].to_string(),
        });
    }
    out
}

/// The last INCR file named in the manifest.
fn last_incr(aof_dir: &Path) -> PathBuf {
    let entries = read_manifest(aof_dir);
    let e = entries
        .iter()
        .rev()
        .find(|e| e.kind == "i")
        .unwrap_or_else(|| panic!("no incr file in manifest: {entries:?}"));
    aof_dir.join(&e.name)
}

fn append(path: &Path, data: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.write_all(data).expect("append");
    f.sync_all().expect("sync");
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("file name")
        .to_string_lossy()
        .into_owned()
}

/// Start offsets of the whole RESP commands in an AOF (lines starting with
/// `#`, annotations, are skipped; NUL bytes between commands are space Basalt
/// zero-fills ahead of its writer, and a run of them at the end is not part of
/// the log). Panics on anything else.
fn command_offsets(data: &[u8]) -> Vec<usize> {
    fn line(data: &[u8], at: usize) -> (usize, usize) {
        let end = data[at..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|p| at + p)
            .unwrap_or_else(|| panic!("no CRLF after offset {at}"));
        (end, end + 2)
    }
    fn number(data: &[u8], from: usize, to: usize) -> usize {
        std::str::from_utf8(&data[from..to])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad number at offset {from}"))
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() {
        match data[at] {
            0 if data[at..].iter().all(|&b| b == 0) => return out,
            0 => at += 1,
            b'#' => at = line(data, at).1,
            b'*' => {
                out.push(at);
                let (end, next) = line(data, at);
                let n = number(data, at + 1, end);
                at = next;
                for _ in 0..n {
                    assert_eq!(data[at], b'$', "bulk expected at offset {at}");
                    let (end, next) = line(data, at);
                    let len = number(data, at + 1, end);
                    at = next + len + 2;
                }
            }
            other => panic!("unexpected byte {other:#x} at offset {at} of the AOF"),
        }
    }
    assert_eq!(at, data.len(), "AOF ends inside a command");
    out
}

/// The text of INFO persistence.
fn info_persistence(c: &mut RawConn) -> String {
    String::from_utf8_lossy(&bytes(&r(c, &["INFO", "persistence"]))).into_owned()
}

/// A field of an INFO reply, e.g. `aof_enabled`.
fn info_field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(|v| v.trim().to_string())
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

/// Fills db 0, 1, 2 and 5 with every type, through many different write commands.
fn fill_all_types(c: &mut RawConn) {
    select(c, 0);
    // Strings.
    ok(c, &["SET", "str:plain", "hello"]);
    ok(c, &["SET", "str:int", "12345"]);
    assert_eq!(int(c, &["INCRBY", "str:int", "5"]), 12350);
    assert_eq!(int(c, &["DECR", "str:int"]), 12349);
    ok(c, &["SET", "str:neg", "-42"]);
    for _ in 0..3 {
        int(c, &["INCR", "str:counter"]);
    }
    r(c, &["INCRBYFLOAT", "str:float", "1.5"]);
    r(c, &["INCRBYFLOAT", "str:float", "1.25"]);
    ok(
        c,
        &[
            b"SET".as_slice(),
            b"str:bin",
            b"a\r\nb\0c\xff\r\n*1\r\n$4\r\n",
        ],
    );
    ok(c, &["SET", "str:empty", ""]);
    let big = "x".repeat(100_000);
    ok(c, &["SET", "str:big", &big]);
    int(c, &["APPEND", "str:append", "one"]);
    int(c, &[b"APPEND".as_slice(), b"str:append", b"\0two\r\n"]);
    int(c, &["SETRANGE", "str:setrange", "5", "tail"]);
    int(c, &["SETBIT", "str:bits", "7", "1"]);
    int(c, &["SETBIT", "str:bits", "100", "1"]);
    ok(c, &["MSET", "str:m1", "1", "str:m2", "2"]);
    ok(c, &["SET", "str:getset", "old"]);
    r(c, &["GETSET", "str:getset", "new"]);
    ok(c, &["SET", "str:getdel", "v"]);
    r(c, &["GETDEL", "str:getdel"]);
    ok(c, &["SET", "str:ex", "v", "EX", "1000"]);
    ok(c, &["SET", "str:getex", "v"]);
    r(c, &["GETEX", "str:getex", "EX", "500"]);
    ok(c, &["SET", "str:persist", "v", "EX", "100"]);
    assert_eq!(int(c, &["PERSIST", "str:persist"]), 1);
    ok(
        c,
        &[
            "SET",
            "str:pxat",
            "v",
            "PXAT",
            &(unix_now_ms() + 2_000_000).to_string(),
        ],
    );
    ok(c, &["SET", "str:del", "v"]);
    assert_eq!(int(c, &["DEL", "str:del"]), 1);
    // Hashes.
    int(
        c,
        &[
            b"HSET".as_slice(),
            b"hash:small",
            b"f1",
            b"v1",
            b"f2",
            b"v2",
            b"bin",
            b"b\r\n\0",
        ],
    );
    let mut args = vec!["HSET".to_string(), "hash:big".to_string()];
    for i in 0..200 {
        args.push(format!("field{i}"));
        args.push(format!("value{i}"));
    }
    assert_eq!(int(c, &args), 200);
    int(c, &["HINCRBY", "hash:incr", "n", "5"]);
    r(c, &["HINCRBYFLOAT", "hash:incr", "fl", "2.5"]);
    int(c, &["HSETNX", "hash:incr", "nx", "1"]);
    int(c, &["HSET", "hash:del", "a", "1", "b", "2"]);
    int(c, &["HDEL", "hash:del", "a"]);
    int(c, &["HSET", "hash:ttl", "f", "v"]);
    assert_eq!(int(c, &["EXPIRE", "hash:ttl", "1000"]), 1);
    // Lists.
    int(c, &["RPUSH", "list:a", "1", "2", "3"]);
    int(c, &["LPUSH", "list:a", "0"]);
    int(c, &["LINSERT", "list:a", "BEFORE", "2", "1.5"]);
    ok(c, &["LSET", "list:a", "0", "zero"]);
    r(c, &["RPOP", "list:a"]);
    r(c, &["LMOVE", "list:a", "list:moved", "LEFT", "RIGHT"]);
    let mut args = vec!["RPUSH".to_string(), "list:big".to_string()];
    for i in 0..300 {
        args.push(format!("e{}", i % 7));
    }
    assert_eq!(int(c, &args), 300);
    ok(c, &["LTRIM", "list:big", "10", "289"]);
    int(c, &["LREM", "list:big", "5", "e3"]);
    int(
        c,
        &[b"RPUSH".as_slice(), b"list:bin", b"\r\n", b"\0", b"$3\r\n"],
    );
    // Sets: intset and strings.
    int(c, &["SADD", "set:ints", "1", "2", "3", "-7", "100000"]);
    let mut args = vec!["SADD".to_string(), "set:bigints".to_string()];
    for i in 0..600 {
        args.push(i.to_string());
    }
    assert_eq!(int(c, &args), 600);
    int(
        c,
        &[
            b"SADD".as_slice(),
            b"set:strs",
            b"a",
            b"b",
            b"c",
            b"with space",
            b"\r\n",
        ],
    );
    int(c, &["SREM", "set:strs", "b"]);
    int(c, &["SMOVE", "set:strs", "set:moved", "a"]);
    int(c, &["SINTERSTORE", "set:inter", "set:ints", "set:bigints"]);
    int(c, &["SUNIONSTORE", "set:union", "set:ints", "set:strs"]);
    int(c, &["SDIFFSTORE", "set:diff", "set:ints", "set:bigints"]);
    // Sorted sets: inf, -inf, fractional scores.
    int(
        c,
        &[
            "ZADD",
            "zset:a",
            "1",
            "a",
            "2.5",
            "b",
            "-3.75",
            "c",
            "inf",
            "pinf",
            "-inf",
            "ninf",
            "0.1",
            "tenth",
            "3.141592653589793",
            "pi",
            "1e-300",
            "tiny",
        ],
    );
    r(c, &["ZINCRBY", "zset:a", "1.25", "a"]);
    int(c, &["ZREM", "zset:a", "b"]);
    let mut args = vec!["ZADD".to_string(), "zset:big".to_string()];
    for i in 0..200 {
        args.push(format!("{}", i as f64 * 0.5));
        args.push(format!("m{i}"));
    }
    assert_eq!(int(c, &args), 200);
    r(c, &["ZPOPMIN", "zset:big", "2"]);
    r(c, &["ZPOPMAX", "zset:big"]);
    int(c, &["ZADD", "zset:lex", "0", "a", "0", "b", "0", "c"]);
    int(c, &["ZRANGESTORE", "zset:store", "zset:big", "0", "9"]);
    int(c, &["ZUNIONSTORE", "zset:union", "2", "zset:a", "zset:lex"]);
    // Other databases.
    select(c, 1);
    ok(c, &["SET", "db1:str", "one"]);
    int(c, &["RPUSH", "db1:list", "x", "y"]);
    int(c, &["ZADD", "db1:zset", "-inf", "low", "inf", "high"]);
    select(c, 2);
    int(c, &["HSET", "db2:hash", "k", "v"]);
    int(c, &["SADD", "db2:set", "x"]);
    ok(c, &["SET", "str:plain", "same name, other db"]);
    select(c, 5);
    ok(c, &["SET", "db5:ttl", "v", "EX", "1000"]);
    select(c, 0);
}

#[test]
fn every_type_survives_sigkill() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    fill_all_types(&mut c);
    // A key with a short TTL, in db 15 (left out of the snapshots).
    select(&mut c, 15);
    ok(&mut c, &["SET", "short", "v", "PX", "300"]);
    let short_set = Instant::now();
    select(&mut c, 0);
    let before = snapshot(&mut c, 0..15);
    assert_eq!(before.dbsize[0].1, 39, "{before:?}");

    p.crash_and_restart();
    let mut c = p.conn();
    // The short key, if still there, kept its deadline (not a fresh 300 ms).
    select(&mut c, 15);
    let elapsed = short_set.elapsed().as_millis() as i64;
    let pttl = int(&mut c, &["PTTL", "short"]);
    assert!(
        pttl == -2 || pttl <= 300 - elapsed + 5,
        "PTTL of a PX 300 key {elapsed} ms later: {pttl}"
    );
    let wait = Duration::from_millis(500).saturating_sub(short_set.elapsed());
    std::thread::sleep(wait);
    assert_bytes!(c.cmd(&["GET", "short"]), b"$-1\r\n");
    assert_eq!(int(&mut c, &["EXISTS", "short"]), 0);
    select(&mut c, 0);

    let after = snapshot(&mut c, 0..15);
    assert_same(&before, &after);
    // Spot checks of exact values.
    assert_bytes!(
        c.cmd(&["GET", "str:bin"]),
        b"$17\r\na\r\nb\0c\xff\r\n*1\r\n$4\r\n\r\n"
    );
    assert_bytes!(c.cmd(&["GET", "str:int"]), b"$5\r\n12349\r\n");
    assert_bytes!(c.cmd(&["GET", "str:counter"]), b"$1\r\n3\r\n");
    assert_bytes!(c.cmd(&["GET", "str:float"]), b"$4\r\n2.75\r\n");
    assert_bytes!(c.cmd(&["STRLEN", "str:big"]), b":100000\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", "zset:a", "pinf"]), b"$3\r\ninf\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", "zset:a", "ninf"]), b"$4\r\n-inf\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", "zset:a", "a"]), b"$4\r\n2.25\r\n");
    assert_bytes!(c.cmd(&["ZSCORE", "zset:a", "c"]), b"$5\r\n-3.75\r\n");
    assert_bytes!(c.cmd(&["HGET", "hash:incr", "fl"]), b"$3\r\n2.5\r\n");
    assert_bytes!(c.cmd(&["SISMEMBER", "set:ints", "-7"]), b":1\r\n");
    assert_bytes!(c.cmd(&["SCARD", "set:bigints"]), b":600\r\n");
    assert_bytes!(c.cmd(&["LLEN", "list:big"]), b":275\r\n");
    assert_bytes!(c.cmd(&["EXISTS", "str:getdel", "str:del"]), b":0\r\n");
    // TTLs.
    for key in ["str:ex", "hash:ttl"] {
        let ttl = int(&mut c, &["TTL", key]);
        assert!((990..=1000).contains(&ttl), "TTL {key} = {ttl}");
    }
    let ttl = int(&mut c, &["TTL", "str:getex"]);
    assert!((490..=500).contains(&ttl), "TTL str:getex = {ttl}");
    assert_bytes!(c.cmd(&["TTL", "str:persist"]), b":-1\r\n");
    assert_bytes!(c.cmd(&["TTL", "str:plain"]), b":-1\r\n");
    let ttl = int(&mut c, &["TTL", "str:pxat"]);
    assert!((1990..=2000).contains(&ttl), "TTL str:pxat = {ttl}");
    select(&mut c, 5);
    let ttl = int(&mut c, &["TTL", "db5:ttl"]);
    assert!((990..=1000).contains(&ttl), "TTL db5:ttl = {ttl}");
    select(&mut c, 0);

    // Writes after a restart are persisted too, on top of the reloaded data.
    ok(&mut c, &["SET", "after:restart", "1"]);
    int(&mut c, &["RPUSH", "list:a", "appended"]);
    int(&mut c, &["DEL", "str:plain"]);
    let before = snapshot(&mut c, 0..15);
    p.crash_and_restart();
    let mut c = p.conn();
    let after = snapshot(&mut c, 0..15);
    assert_same(&before, &after);
    assert_bytes!(c.cmd(&["GET", "after:restart"]), b"$1\r\n1\r\n");
}

/// SIGTERM while clients keep writing under `appendfsync always`: the server exits
/// promptly (it once waited forever for replies held for the log: the shutdown's wait
/// for sends dropped the log writer's wake-ups), and every acknowledged write is there
/// after the restart.
#[test]
fn sigterm_under_durable_writes_exits_and_keeps_acknowledged_writes() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let addr = p.server().addr.clone();
    let writers: Vec<_> = (0..8)
        .map(|w| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                // Pipelined INCRs, 16 in flight, until the connection ends; returns how
                // many were acknowledged and how many were sent.
                let mut c = RawConn::connect(&addr);
                let key = format!("counter:{w}");
                let req = encode(&["INCR", &key]);
                let (mut acked, mut sent) = (0i64, 0i64);
                let deadline = Instant::now() + Duration::from_secs(20);
                for _ in 0..16 {
                    c.send(&req);
                    sent += 1;
                }
                while Instant::now() < deadline {
                    // Longer than the server gets to exit below, so that a server that
                    // only exits once its clients give up fails the test.
                    match c.try_read_reply(Duration::from_secs(15)) {
                        Ok(reply) => {
                            assert!(reply.starts_with(b":"), "{}", show(&reply));
                            acked += 1;
                            if c.stream.write_all(&req).is_ok() {
                                sent += 1;
                            }
                        }
                        Err(_) => break,
                    }
                }
                (key, acked, sent)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    p.server().signal("TERM");
    let mut server = p.server.take().expect("server running");
    assert_eq!(server.wait_exit(Duration::from_secs(5)), Some(0), "no clean exit after SIGTERM under load");
    let results: Vec<(String, i64, i64)> = writers.into_iter().map(|t| t.join().expect("writer")).collect();
    drop(server);
    p.restart();
    let mut c = p.conn();
    for (key, acked, sent) in results {
        assert!(acked > 0, "{key}: no write was acknowledged before the SIGTERM");
        let value: i64 = r(&mut c, &["GET", &key]).text().parse().expect("a counter");
        assert!(value >= acked && value <= sent, "{key}: {acked} acknowledged, {sent} sent, {value} after restart");
    }
}

#[test]
fn incr_of_an_expired_key_replays_without_ttl() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "k", "5", "PX", "300"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_bytes!(c.cmd(&["INCR", "k"]), b":1\r\n");
    assert_bytes!(c.cmd(&["TTL", "k"]), b":-1\r\n");
    p.crash_and_restart();
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "k"]), b"$1\r\n1\r\n");
    assert_bytes!(c.cmd(&["TTL", "k"]), b":-1\r\n");
}

#[test]
fn spop_replays_deterministically() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    let mut args = vec!["SADD".to_string(), "s".to_string()];
    args.extend((1..=100).map(|i| i.to_string()));
    assert_eq!(int(&mut c, &args), 100);
    let popped = r(&mut c, &["SPOP", "s", "10"]);
    assert_eq!(popped.items().len(), 10);
    assert!(matches!(r(&mut c, &["SPOP", "s"]), Resp::Bulk(_)));
    int(&mut c, &["SADD", "t", "a", "b", "c"]);
    r(&mut c, &["SPOP", "t", "3"]); // pops everything: the key goes away
    let before = sorted(flat(&r(&mut c, &["SMEMBERS", "s"])));
    assert_eq!(before.len(), 89);
    p.crash_and_restart();
    let mut c = p.conn();
    let after = sorted(flat(&r(&mut c, &["SMEMBERS", "s"])));
    assert_eq!(before, after);
    assert_bytes!(c.cmd(&["EXISTS", "t"]), b":0\r\n");
}

#[test]
fn sort_store_is_logged_as_its_result() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    // 150 elements (more than one RPUSH record of the logged result), weighed by keys
    // that change after the SORT: a replay of the SORT itself would still be right here
    // only because it replays in order; the log holds its result instead.
    let mut args = vec!["RPUSH".to_string(), "l".to_string()];
    args.extend((0..150).map(|i| format!("e{i}")));
    assert_eq!(int(&mut c, &args), 150);
    for i in 0..150 {
        ok(&mut c, &["SET".to_string(), format!("w_e{i}"), ((i * 7919) % 150).to_string()]);
    }
    assert_eq!(int(&mut c, &["SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*", "STORE", "d"]), 300);
    let sorted = flat(&r(&mut c, &["LRANGE", "d", "0", "-1"]));
    assert_eq!(sorted.len(), 300);
    assert_eq!(int(&mut c, &["SORT", "l", "LIMIT", "0", "0", "ALPHA", "STORE", "gone"]), 0);
    r(&mut c, &["SORT", "l", "BY", "w_*"]); // read-only use: nothing logged
    ok(&mut c, &["SET", "w_e0", "1000"]);
    if is_basalt(&mut c) {
        // (Redis logs SORT ... STORE as itself.)
        let log = std::fs::read(last_incr(&p.aof_dir())).expect("read the log");
        let text = String::from_utf8_lossy(&log).to_ascii_lowercase();
        assert!(!text.contains("sort"), "a SORT was logged as itself");
    }
    p.crash_and_restart();
    let mut c = p.conn();
    assert_eq!(flat(&r(&mut c, &["LRANGE", "d", "0", "-1"])), sorted);
    assert_bytes!(c.cmd(&["EXISTS", "gone"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", "w_e0"]), b"$4\r\n1000\r\n");
}

#[test]
fn a_bitfield_whose_writes_all_fail_still_logs_the_key_it_created() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    // OVERFLOW FAIL refuses the increment, but the key is created, zero-filled to the
    // field's end (as Redis does); an APPEND then writes after the zeros.
    assert_bytes!(c.cmd(&["BITFIELD", "bf", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "5"]), b"*1\r\n$-1\r\n");
    assert_eq!(int(&mut c, &["APPEND", "bf", "tail"]), 17);
    let before = c.cmd(&["GET", "bf"]);
    p.crash_and_restart();
    let mut c = p.conn();
    if is_basalt(&mut c) {
        assert_eq!(c.cmd(&["GET", "bf"]), before, "the replay lost the zero bytes");
    } else {
        // Redis 7.0.15 logs neither the creation nor the growth: its replay holds the
        // APPEND alone.
        assert_bytes!(c.cmd(&["GET", "bf"]), b"$4\r\ntail\r\n");
    }
}

#[test]
fn restore_replays_from_the_log() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    let mut args = vec!["HSET".to_string(), "h".to_string()];
    args.extend((0..600).flat_map(|i| [format!("f{i}"), format!("v{i}")]));
    assert_eq!(int(&mut c, &args), 600);
    let payload = bytes(&r(&mut c, &["DUMP", "h"]));
    ok(&mut c, &[b"RESTORE".as_slice(), b"copy", b"3600000", &payload]);
    ok(&mut c, &[b"RESTORE".as_slice(), b"h", b"0", &payload, b"REPLACE"]);
    let expire = int(&mut c, &["PEXPIRETIME", "copy"]);
    assert!(expire > 0);
    let before = sorted(flat(&r(&mut c, &["HGETALL", "copy"])));
    assert_eq!(before.len(), 1200);
    p.crash_and_restart();
    let mut c = p.conn();
    assert_eq!(sorted(flat(&r(&mut c, &["HGETALL", "copy"]))), before);
    assert_eq!(sorted(flat(&r(&mut c, &["HGETALL", "h"]))), before);
    assert_eq!(int(&mut c, &["PEXPIRETIME", "copy"]), expire);
    assert_eq!(int(&mut c, &["PEXPIRETIME", "h"]), -1);
}

#[test]
fn blocked_pop_served_later_is_persisted() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    let mut blpop = p.conn();
    let mut blmove = p.conn();
    blpop.send(&encode(&["BLPOP", "l", "0"]));
    blmove.send(&encode(&["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"]));
    let blocked = wait_until(Duration::from_secs(5), || {
        let info = r(&mut c, &["INFO", "clients"]).text();
        info.contains("blocked_clients:2\r\n")
    });
    assert!(blocked, "the clients never blocked");
    assert_bytes!(c.cmd(&["RPUSH", "l", "a", "b", "c"]), b":3\r\n");
    assert_bytes!(blpop.read_reply(), b"*2\r\n$1\r\nl\r\n$1\r\na\r\n");
    assert_bytes!(c.cmd(&["RPUSH", "src", "x", "y"]), b":2\r\n");
    assert_bytes!(blmove.read_reply(), b"$1\r\nx\r\n");
    assert_bytes!(
        c.cmd(&["LRANGE", "l", "0", "-1"]),
        b"*2\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    p.crash_and_restart();
    let mut c = p.conn();
    assert_bytes!(
        c.cmd(&["LRANGE", "l", "0", "-1"]),
        b"*2\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    assert_bytes!(c.cmd(&["LRANGE", "src", "0", "-1"]), b"*1\r\n$1\r\ny\r\n");
    assert_bytes!(c.cmd(&["LRANGE", "dst", "0", "-1"]), b"*1\r\n$1\r\nx\r\n");
}

#[test]
fn transactions_and_keyspace_commands_are_persisted() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    // Data that FLUSHALL removes, in two databases.
    ok(&mut c, &["SET", "gone0", "x"]);
    select(&mut c, 1);
    ok(&mut c, &["SET", "gone1", "x"]);
    ok(&mut c, &["FLUSHALL"]);
    // FLUSHDB in db 1 only.
    ok(&mut c, &["SET", "flushed", "x"]);
    select(&mut c, 3);
    ok(&mut c, &["SET", "db3:kept", "x"]);
    select(&mut c, 1);
    ok(&mut c, &["FLUSHDB"]);
    ok(&mut c, &["SET", "db1:after", "x"]);
    select(&mut c, 0);
    // MULTI/EXEC with several writes.
    ok(&mut c, &["MULTI"]);
    for cmd in [
        &["SET", "m:str", "a"][..],
        &["INCR", "m:n"],
        &["RPUSH", "m:list", "x", "y"],
        &["HSET", "m:hash", "f", "v"],
        &["SADD", "m:set", "1"],
        &["EXPIRE", "m:str", "1000"],
    ] {
        assert_bytes!(c.cmd(cmd), b"+QUEUED\r\n");
    }
    let exec = r(&mut c, &["EXEC"]);
    assert_eq!(exec.items().len(), 6, "{exec:?}");
    // DISCARD and a failed WATCH leave nothing behind.
    ok(&mut c, &["MULTI"]);
    assert_bytes!(c.cmd(&["SET", "discarded", "x"]), b"+QUEUED\r\n");
    ok(&mut c, &["DISCARD"]);
    ok(&mut c, &["WATCH", "m:n"]);
    let mut other = p.conn();
    assert_bytes!(other.cmd(&["INCR", "m:n"]), b":2\r\n");
    ok(&mut c, &["MULTI"]);
    assert_bytes!(c.cmd(&["SET", "aborted", "x"]), b"+QUEUED\r\n");
    assert_bytes!(c.cmd(&["EXEC"]), b"*-1\r\n");
    // SWAPDB: db 0 <-> db 2.
    select(&mut c, 2);
    ok(&mut c, &["SET", "was2", "x"]);
    select(&mut c, 0);
    ok(&mut c, &["SET", "was0", "x"]);
    ok(&mut c, &["SWAPDB", "0", "2"]);
    // MOVE, RENAME (keeps the TTL), COPY (same and other db).
    ok(&mut c, &["SET", "mv", "moved"]);
    assert_bytes!(c.cmd(&["MOVE", "mv", "4"]), b":1\r\n");
    ok(&mut c, &["SET", "ren", "renamed", "EX", "1000"]);
    ok(&mut c, &["RENAME", "ren", "ren2"]);
    int(&mut c, &["RPUSH", "cp", "1", "2"]);
    assert_bytes!(c.cmd(&["COPY", "cp", "cp2"]), b":1\r\n");
    assert_bytes!(c.cmd(&["COPY", "cp", "cp3", "DB", "6"]), b":1\r\n");
    int(&mut c, &["RPUSH", "cp", "3"]);
    assert_bytes!(c.cmd(&["RENAMENX", "cp2", "cp4"]), b":1\r\n");
    ok(&mut c, &["SET", "unl", "x"]);
    assert_bytes!(c.cmd(&["UNLINK", "unl"]), b":1\r\n");

    let before = snapshot(&mut c, 0..16);
    p.crash_and_restart();
    let mut c = p.conn();
    let after = snapshot(&mut c, 0..16);
    assert_same(&before, &after);
    // Explicit expectations.
    select(&mut c, 0);
    assert_bytes!(c.cmd(&["EXISTS", "gone0", "m:str", "was0"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", "was2"]), b"$1\r\nx\r\n");
    assert_bytes!(c.cmd(&["GET", "mv"]), b"$-1\r\n");
    assert_bytes!(c.cmd(&["GET", "ren2"]), b"$7\r\nrenamed\r\n");
    let ttl = int(&mut c, &["TTL", "ren2"]);
    assert!((990..=1000).contains(&ttl), "TTL ren2 = {ttl}");
    assert_bytes!(
        c.cmd(&["LRANGE", "cp", "0", "-1"]),
        b"*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"
    );
    assert_bytes!(
        c.cmd(&["LRANGE", "cp4", "0", "-1"]),
        b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    );
    assert_bytes!(c.cmd(&["EXISTS", "cp2", "unl"]), b":0\r\n");
    select(&mut c, 1);
    assert_bytes!(c.cmd(&["EXISTS", "gone1", "flushed"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", "db1:after"]), b"$1\r\nx\r\n");
    select(&mut c, 2);
    // The old db 0, swapped in: the transaction's keys live here now.
    assert_bytes!(c.cmd(&["GET", "was0"]), b"$1\r\nx\r\n");
    assert_bytes!(c.cmd(&["GET", "m:str"]), b"$1\r\na\r\n");
    assert_bytes!(c.cmd(&["GET", "m:n"]), b"$1\r\n2\r\n");
    let ttl = int(&mut c, &["TTL", "m:str"]);
    assert!((990..=1000).contains(&ttl), "TTL m:str = {ttl}");
    assert_bytes!(c.cmd(&["EXISTS", "discarded", "aborted"]), b":0\r\n");
    select(&mut c, 3);
    assert_bytes!(c.cmd(&["GET", "db3:kept"]), b"$1\r\nx\r\n");
    select(&mut c, 4);
    assert_bytes!(c.cmd(&["GET", "mv"]), b"$5\r\nmoved\r\n");
    select(&mut c, 6);
    assert_bytes!(
        c.cmd(&["LRANGE", "cp3", "0", "-1"]),
        b"*2\r\n$1\r\n1\r\n$1\r\n2\r\n"
    );
}

#[test]
fn multi_part_layout_and_manifest() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let check = |aof_dir: &Path| {
        let m = manifest_path(aof_dir);
        assert!(m.is_file(), "{} missing", m.display());
        let entries = read_manifest(aof_dir);
        let bases = entries.iter().filter(|e| e.kind == "b").count();
        let incrs = entries.iter().filter(|e| e.kind == "i").count();
        assert_eq!(bases, 1, "exactly one base: {entries:?}");
        assert!(incrs >= 1, "at least one incr: {entries:?}");
        let mut last_incr_seq = 0;
        for e in &entries {
            assert!(
                !e.name.contains('/'),
                "file names are relative to appendonlydir: {e:?}"
            );
            let f = aof_dir.join(&e.name);
            if e.kind != "h" {
                assert!(
                    f.is_file(),
                    "{} named in the manifest is missing",
                    f.display()
                );
            }
            if e.kind == "i" {
                assert!(e.seq > last_incr_seq, "incr seqs increase: {entries:?}");
                last_incr_seq = e.seq;
            }
        }
        let base = entries.iter().find(|e| e.kind == "b").expect("base");
        assert!(
            base.name.ends_with(".base.rdb") || base.name.ends_with(".base.aof"),
            "base name: {base:?}"
        );
    };
    // Right after the first start.
    check(&p.aof_dir());
    let mut c = p.conn();
    ok(&mut c, &["SET", "k", "v"]);
    check(&p.aof_dir());
    // The write sits in the last incr file, as a RESP command.
    let incr = std::fs::read(last_incr(&p.aof_dir())).expect("read incr");
    assert!(
        incr.windows(3).any(|w| w.eq_ignore_ascii_case(b"SET")),
        "no SET in the incr file: {:?}",
        show(&incr)
    );
    assert!(!command_offsets(&incr).is_empty());
    p.crash_and_restart();
    check(&p.aof_dir());
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "k"]), b"$1\r\nv\r\n");
}

#[test]
fn info_persistence_reports_aof_state() {
    let Some(p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "k", "v"]);
    let info = r(&mut c, &["INFO", "persistence"]).text();
    for (field, want) in [
        ("aof_enabled", "1"),
        ("aof_last_write_status", "ok"),
        ("loading", "0"),
        ("aof_rewrite_in_progress", "0"),
    ] {
        assert_eq!(
            info_field(&info, field).as_deref(),
            Some(want),
            "{field} in:\n{info}"
        );
    }
    assert!(
        info_field(&info, "aof_delayed_fsync").is_some(),
        "aof_delayed_fsync missing:\n{info}"
    );
    if crate::harness::is_basalt() {
        // Basalt's durable-write counters: the SET's OK waited for at least one durable
        // write holding its record (27 bytes of RESP).
        let num = |f: &str| info_field(&info, f).and_then(|v| v.parse::<u64>().ok());
        assert!(num("basalt_aof_syncs") >= Some(1), "{info}");
        assert!(num("basalt_aof_synced_bytes") >= Some(27), "{info}");
        assert!(num("basalt_aof_sync_usec") >= num("basalt_aof_sync_max_usec"), "{info}");
    }
    drop(p);

    let Some(p) = Persisted::start(&[]) else {
        return;
    };
    let mut c = p.conn();
    let info = r(&mut c, &["INFO", "persistence"]).text();
    assert_eq!(
        info_field(&info, "aof_enabled").as_deref(),
        Some("0"),
        "{info}"
    );
    assert_eq!(info_field(&info, "loading").as_deref(), Some("0"), "{info}");
}

#[test]
fn appendonly_no_keeps_nothing_across_a_crash() {
    let Some(mut p) = Persisted::start(&["--appendonly", "no"]) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "k", "v"]);
    int(&mut c, &["RPUSH", "l", "a"]);
    p.crash_and_restart();
    assert!(
        !p.aof_dir().exists(),
        "appendonlydir created with --appendonly no"
    );
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["DBSIZE"]), b":0\r\n");
    assert_bytes!(c.cmd(&["GET", "k"]), b"$-1\r\n");
}

// ---------------------------------------------------------------------------
// Basalt's stricter guarantees (Redis 7.0.15 behaves otherwise: noted per test)
// ---------------------------------------------------------------------------

/// True when the server under test is Basalt (INFO server has basalt_version).
fn is_basalt(c: &mut RawConn) -> bool {
    let info = r(c, &["INFO", "server"]);
    String::from_utf8_lossy(&bytes(&info)).contains("basalt_version:")
}

/// A server with `args` and a connection to it, when it is Basalt; None (the test is
/// skipped, saying why Redis is left out) otherwise.
fn start_basalt_only(args: &[&'static str], why: &str) -> Option<(Persisted, RawConn)> {
    let p = Persisted::start(args)?;
    let mut c = p.conn();
    if !is_basalt(&mut c) {
        eprintln!("skipped: Basalt-only behaviour{why}");
        return None;
    }
    Some((p, c))
}

fn prlimit_fsize(pid: u32, limit: &str) {
    let status = std::process::Command::new("prlimit")
        .arg("--pid")
        .arg(pid.to_string())
        // The soft limit only, so that raising it back needs no privilege.
        .arg(format!("--fsize={limit}:"))
        .status()
        .expect("run prlimit");
    assert!(status.success(), "prlimit --fsize={limit} failed");
}

#[test]
fn debug_loadaof_reloads_what_was_logged() {
    let Some(p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "a", "1"]);
    int(&mut c, &["RPUSH", "l", "x", "y"]);
    ok(&mut c, &["SET", "t", "v", "EX", "1000"]);
    select(&mut c, 2);
    ok(&mut c, &["SET", "b", "2"]);
    ok(&mut c, &["DEBUG", "LOADAOF"]);
    assert_eq!(bytes(&r(&mut c, &["GET", "b"])), b"2");
    select(&mut c, 0);
    assert_eq!(bytes(&r(&mut c, &["GET", "a"])), b"1");
    assert_eq!(flat(&r(&mut c, &["LRANGE", "l", "0", "-1"])), vec![b"x".to_vec(), b"y".to_vec()]);
    let ttl = int(&mut c, &["TTL", "t"]);
    assert!((990..=1000).contains(&ttl), "ttl {ttl}");
    assert_eq!(int(&mut c, &["DBSIZE"]), 3);
}

/// Redis 7.0.15 dies of SIGXFSZ when a write passes RLIMIT_FSIZE (and exits on any
/// write error under `always`); Basalt refuses writes with -MISCONF, keeps serving
/// reads, and recovers by itself once the disk takes writes again.
#[test]
fn a_failing_disk_refuses_writes_keeps_reads_and_recovers() {
    let Some((mut p, mut c)) = start_basalt_only(AOF_ALWAYS, " (Redis dies of SIGXFSZ)") else {
        return;
    };
    ok(&mut c, &["SET", "before", "1"]);
    let info = info_persistence(&mut c);
    let size = info_field(&info, "aof_current_size").expect("aof_current_size");
    let pid = p.server().pid();
    prlimit_fsize(pid, &size);

    // The write that hits the limit is never acknowledged while the disk fails...
    let mut w = p.conn();
    w.send(&encode(&["SET", "during", "1"]));
    assert!(
        w.try_read_reply(Duration::from_millis(700)).is_err(),
        "a write was acknowledged although the log could not be written"
    );
    // ... later writes are refused with Redis's MISCONF error, reads keep working.
    assert!(wait_until(Duration::from_secs(5), || {
        let reply = c.cmd(&["SET", "x", "1"]);
        reply.starts_with(b"-MISCONF Errors writing to the AOF file: File too large")
    }));
    assert_eq!(bytes(&r(&mut c, &["GET", "before"])), b"1");
    // PING is refused too, as Redis refuses it while its disk fails.
    assert!(c.cmd(&["PING"]).starts_with(b"-MISCONF Errors writing to the AOF file: "));
    let info = info_persistence(&mut c);
    assert_eq!(info_field(&info, "aof_last_write_status").as_deref(), Some("err"));

    // The disk recovers: the held write is acknowledged, new writes succeed.
    prlimit_fsize(pid, "unlimited");
    assert_bytes!(w.read_reply(), b"+OK\r\n");
    assert!(wait_until(Duration::from_secs(5), || c.cmd(&["SET", "after", "1"]) == b"+OK\r\n"));
    let info = info_persistence(&mut c);
    assert_eq!(info_field(&info, "aof_last_write_status").as_deref(), Some("ok"));

    // And all of it survives a crash.
    p.crash_and_restart();
    let mut c = p.conn();
    for k in ["before", "during", "after"] {
        assert_eq!(int(&mut c, &["EXISTS", k]), 1, "{k} lost");
    }
    assert_eq!(int(&mut c, &["EXISTS", "x"]), 0, "a refused write was applied");
}

/// Redis 7.0.15 stalls every client while its AOF write waits (the event loop does the
/// write); Basalt's loops never wait on the disk: a read of a key with no pending write
/// is answered at once while writes wait for a slow disk.
#[test]
fn a_slow_disk_delays_writes_but_not_reads() {
    let Some((p, mut c)) = start_basalt_only(AOF_ALWAYS, "") else {
        return;
    };
    ok(&mut c, &["SET", "cold", "1"]);
    // Every write round now takes 1.5 s.
    ok(&mut c, &["DEBUG", "AOF-FLUSH-SLEEP", "1500000"]);
    let mut w = p.conn();
    w.send(&encode(&["SET", "hot", "2"]));
    std::thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    assert_eq!(bytes(&r(&mut c, &["GET", "cold"])), b"1");
    assert_eq!(int(&mut c, &["EXISTS", "nothing"]), 0);
    assert!(
        start.elapsed() < Duration::from_millis(700),
        "reads of untouched keys waited for the slow disk: {:?}",
        start.elapsed()
    );
    // A read that would reveal the pending write waits for it.
    let mut r2 = p.conn();
    r2.send(&encode(&["GET", "hot"]));
    assert!(r2.try_read_reply(Duration::from_millis(300)).is_err(), "a read revealed a write not yet on disk");
    ok(&mut c, &["DEBUG", "AOF-FLUSH-SLEEP", "0"]);
    assert_bytes!(w.read_reply(), b"+OK\r\n");
    assert_bytes!(r2.read_reply(), b"$1\r\n2\r\n");
}

/// A slow disk shows in the latency monitor as the log's events (Basalt times DEBUG
/// AOF-FLUSH-SLEEP's delay as part of the write it stands for; Redis sleeps outside its
/// measured write, so this is Basalt-only): the commit under `always` (`aof-fsync-always`
/// on io_uring, where the loop commits with the delay on its ring; `aof-write` where
/// the writer thread writes), while the command itself ran fast.
#[test]
fn a_slow_disk_shows_in_the_latency_monitor() {
    let Some((_server, mut c)) = start_basalt_only(AOF_ALWAYS, "") else {
        return;
    };
    ok(&mut c, &["CONFIG", "SET", "latency-monitor-threshold", "100"]);
    ok(&mut c, &["DEBUG", "AOF-FLUSH-SLEEP", "250000"]);
    let start = Instant::now();
    ok(&mut c, &["SET", "k", "v"]);
    assert!(start.elapsed() >= Duration::from_millis(200), "the write did not wait for the slow disk");
    ok(&mut c, &["DEBUG", "AOF-FLUSH-SLEEP", "0"]);
    let latest = r(&mut c, &["LATENCY", "LATEST"]);
    let rows: Vec<(String, i64)> = latest.items().iter().map(|row| (row.items()[0].text(), row.items()[2].int())).collect();
    assert!(
        rows.iter().any(|(event, ms)| (event == "aof-fsync-always" || event == "aof-write") && (200..5000).contains(ms)),
        "{rows:?}"
    );
    // The SET itself did not wait for the disk (its reply did): no command event of
    // the delay's size (a busy machine may log a short one).
    assert!(rows.iter().all(|(event, ms)| event.starts_with("aof-") || *ms < 200), "{rows:?}");
}

/// Redis 7.0.15 blocks its event loop on the disk, so clients cannot outrun it; Basalt's
/// loops never wait, so a client that pipelines writes faster than a slow disk takes
/// them has its input paused (not executed) while the log's unwritten tail is over its
/// limit (64 MiB), and resumed when its replies leave.
#[test]
fn a_slow_disk_pauses_clients_that_outrun_it() {
    // With the default automatic rewrites: a rewrite during the burst once left the
    // replies waiting (the writer did not mark the bytes it took before switching
    // files as durable), which this test caught.
    let Some((p, mut c)) = start_basalt_only(AOF_ALWAYS, "") else {
        return;
    };
    // Each write round of the log now takes 2 s: the client outruns it.
    ok(&mut c, &["DEBUG", "AOF-FLUSH-SLEEP", "2000000"]);
    let value = "v".repeat(1 << 20);
    let mut w = p.conn();
    let writer = std::thread::spawn(move || {
        for i in 0..120 {
            w.send(&encode(&["SET", &format!("big:{i}"), &value]));
        }
        w
    });
    let mut most = 0u64;
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        let info = info_persistence(&mut c);
        let tail: u64 = info_field(&info, "aof_buffer_length").and_then(|v| v.parse().ok()).unwrap_or(0);
        most = most.max(tail);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(most > 0, "the tail never held anything: the test did not load the log");
    assert!(
        most <= 66 << 20,
        "the log's unwritten tail reached {most} bytes (limit 64 MiB + one command)"
    );
    ok(&mut c, &["DEBUG", "AOF-FLUSH-SLEEP", "0"]);
    let mut w = writer.join().expect("writer thread");
    // The round in progress still sleeps, then 120 MiB are written and fsynced in a
    // few rounds (debug builds and a busy disk make that seconds).
    let start = Instant::now();
    for i in 0..120 {
        match w.try_read_reply(Duration::from_secs(30)) {
            Ok(reply) => assert_bytes!(reply, b"+OK\r\n"),
            Err(e) => panic!("reply {i} not there after {:?}: {e:?}", start.elapsed()),
        }
    }
    eprintln!("all 120 replies within {:?}", start.elapsed());
    assert_eq!(int(&mut c, &["DBSIZE"]), 120);
}

/// A save or rewrite cut short by a crash leaves its temp file (a whole copy of the data
/// set) behind; the next start removes it (Basalt only: Redis 7.0 leaves them), and
/// keeps everything else.
#[test]
fn start_removes_temp_files_a_crash_left() {
    let Some(mut p) = Persisted::start(AOF_ALWAYS) else {
        return;
    };
    let mut c = p.conn();
    ok(&mut c, &["SET", "kept", "v"]);
    p.kill();
    // pid_max is at most 2^22: no process can have this pid.
    let planted = [
        p.dir.path().join("temp-4999999.rdb"),
        p.aof_dir().join("temp-4999999.rdb"),
        p.aof_dir().join(".appendonly.aof.manifest.tmp-4999999"),
    ];
    for path in &planted {
        std::fs::write(path, vec![b'x'; 1 << 20]).expect("plant temp file");
    }
    // Not ours to remove: a name that only looks like one.
    let stranger = p.dir.path().join("temp-4999999.rdb.keep");
    std::fs::write(&stranger, b"mine").expect("plant");
    p.restart();
    let mut c = p.conn();
    assert_bytes!(c.cmd(&["GET", "kept"]), b"$1\r\nv\r\n");
    assert!(stranger.exists(), "a file that is not a temp file was removed");
    if crate::harness::is_basalt() {
        for path in &planted {
            assert!(!path.exists(), "{} is still there", path.display());
        }
        assert!(p.server().log().contains("Removed temp-4999999.rdb"), "{}", p.server().log());
    }
}
