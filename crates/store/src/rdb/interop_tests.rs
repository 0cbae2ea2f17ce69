//! Interop with the real Redis 7.0 (`/usr/bin/redis-server`; skipped with a message when
//! it is missing): (a) Redis fills and SAVEs every type and encoding, `load` reads its
//! dump.rdb; (b) `RdbWriter` writes the same kinds of data and Redis starts from that
//! file. Both compare every key (type, encoding, contents, expiry) with what Redis
//! replies over a Unix socket (no TCP port to collide on). Each test kills only the
//! server it started, by its PID (Child::kill).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{load, Limits, RdbWriter};
use crate::entry::{Entry, Payload, ValueRef};
use crate::types::hash::{Hash, HashLimits};
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::zset::{ZLimits, ZSet};
use crate::value::Object;

const REDIS: &str = "/usr/bin/redis-server";

fn redis_missing() -> bool {
    if Path::new(REDIS).exists() {
        return false;
    }
    println!("skipping: {REDIS} not found (apt-get install -y redis-server)");
    true
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let p =
            std::env::temp_dir().join(format!("basalt-rdb-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[derive(Debug, PartialEq)]
enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Vec<Reply>),
}

impl Reply {
    fn bytes(self) -> Vec<u8> {
        match self {
            Reply::Bulk(Some(b)) => b,
            Reply::Status(s) => s.into_bytes(),
            other => panic!("expected a string, got {other:?}"),
        }
    }

    fn text(self) -> String {
        String::from_utf8(self.bytes()).expect("utf-8 reply")
    }

    fn int(self) -> i64 {
        match self {
            Reply::Int(n) => n,
            other => panic!("expected an integer, got {other:?}"),
        }
    }

    fn list(self) -> Vec<Vec<u8>> {
        match self {
            Reply::Array(items) => items.into_iter().map(Reply::bytes).collect(),
            other => panic!("expected an array, got {other:?}"),
        }
    }
}

/// A minimal RESP2 client.
struct Conn {
    r: BufReader<UnixStream>,
    w: UnixStream,
}

impl Conn {
    fn cmd<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            let a = a.as_ref();
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.w.write_all(&out).expect("send");
        self.reply()
    }

    fn ok<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Reply {
        let r = self.cmd(args);
        assert!(!matches!(r, Reply::Error(_)), "{r:?}");
        r
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.r.read_line(&mut l).expect("reply line");
        l.trim_end_matches("\r\n").to_string()
    }

    fn reply(&mut self) -> Reply {
        let l = self.line();
        let (kind, rest) = l.split_at(1);
        let n = || rest.parse::<i64>().expect("number in reply");
        match kind {
            "+" => Reply::Status(rest.to_string()),
            "-" => Reply::Error(rest.to_string()),
            ":" => Reply::Int(n()),
            "$" if n() < 0 => Reply::Bulk(None),
            "$" => {
                let mut b = vec![0u8; n() as usize + 2];
                std::io::Read::read_exact(&mut self.r, &mut b).expect("bulk");
                b.truncate(b.len() - 2);
                Reply::Bulk(Some(b))
            }
            "*" => Reply::Array((0..n().max(0)).map(|_| self.reply()).collect()),
            _ => panic!("bad reply line {l:?}"),
        }
    }
}

/// A redis-server this test started; killed (by PID) and reaped on drop.
struct Server {
    child: Child,
    sock: PathBuf,
    log: PathBuf,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let sock = dir.join("redis.sock");
        let log = dir.join("redis.log");
        let child = Command::new(REDIS)
            .args([
                "--port",
                "0",
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .arg("--unixsocket")
            .arg(&sock)
            .arg("--dir")
            .arg(dir)
            .arg("--logfile")
            .arg(&log)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let mut s = Server { child, sock, log };
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Ok(Some(status)) = s.child.try_wait() {
                panic!("redis-server exited ({status}); log:\n{}", s.log_text());
            }
            if let Ok(mut c) = s.try_conn() {
                if c.cmd(&["PING"]) == Reply::Status("PONG".into()) {
                    return s;
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not start; log:\n{}",
                s.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn try_conn(&self) -> std::io::Result<Conn> {
        let w = UnixStream::connect(&self.sock)?;
        w.set_read_timeout(Some(Duration::from_secs(5)))?;
        Ok(Conn {
            r: BufReader::new(w.try_clone()?),
            w,
        })
    }

    fn conn(&self) -> Conn {
        self.try_conn().expect("connect")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One key as both sides can describe it: type, encoding, contents, expiry.
#[derive(Debug, PartialEq)]
struct View {
    kind: String,
    encoding: String,
    contents: Vec<Vec<u8>>,
    expire_at_ms: Option<i64>,
}

fn score_text(s: f64) -> Vec<u8> {
    format!("{s:?}").into_bytes()
}

fn redis_view(c: &mut Conn, db: usize) -> BTreeMap<Vec<u8>, View> {
    c.ok(&["SELECT", &db.to_string()]);
    let keys = c.ok(&["KEYS", "*"]).list();
    let mut out = BTreeMap::new();
    for k in keys {
        let kind = c.ok(&[&b"TYPE"[..], &k]).text();
        let encoding = c.ok(&[&b"OBJECT"[..], b"ENCODING", &k]).text();
        let pexp = c.ok(&[&b"PEXPIRETIME"[..], &k]).int();
        let mut contents = match kind.as_str() {
            "string" => vec![c.ok(&[&b"GET"[..], &k]).bytes()],
            "list" => c.ok(&[&b"LRANGE"[..], &k, b"0", b"-1"]).list(),
            "set" => c.ok(&[&b"SMEMBERS"[..], &k]).list(),
            "hash" => c
                .ok(&[&b"HGETALL"[..], &k])
                .list()
                .chunks(2)
                .map(|p| [&p[0][..], b"=", &p[1]].concat())
                .collect(),
            "zset" => c
                .ok(&[&b"ZRANGE"[..], &k, b"0", b"-1", b"WITHSCORES"])
                .list()
                .chunks(2)
                .map(|p| {
                    let s: f64 = std::str::from_utf8(&p[1])
                        .expect("ascii")
                        .parse()
                        .expect("score");
                    [&p[0][..], b"=", &score_text(s)].concat()
                })
                .collect(),
            other => panic!("unexpected type {other}"),
        };
        if kind == "set" || kind == "hash" {
            contents.sort();
        }
        out.insert(
            k,
            View {
                kind,
                encoding,
                contents,
                expire_at_ms: (pexp >= 0).then_some(pexp),
            },
        );
    }
    out
}

fn our_view<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> BTreeMap<Vec<u8>, View> {
    let mut out = BTreeMap::new();
    for e in entries {
        let v = e.value();
        let mut contents = match v {
            ValueRef::Str(s) => vec![s.to_vec()],
            ValueRef::Obj(o) => match &*o.view() {
                Object::Str(s) => vec![s.clone()],
                Object::List(l) => l.iter().map(<[u8]>::to_vec).collect(),
                Object::Set(s) => s.members(),
                Object::Hash(h) => h.iter().map(|(f, v)| [f, b"=", v].concat()).collect(),
                Object::ZSet(z) => z
                    .iter()
                    .map(|(s, m)| [m, b"=", &score_text(s)].concat())
                    .collect(),
                Object::Stream(st) => st
                    .range(crate::types::stream::StreamId::MIN, crate::types::stream::StreamId::MAX)
                    .map(|e| [e.id.to_string().as_bytes(), b":", &e.iter().map(|x| x.to_vec()).collect::<Vec<_>>().join(&b","[..])].concat())
                    .collect(),
            },
        };
        if matches!(v, ValueRef::Obj(o) if matches!(o.value_type(), crate::ValueType::Set | crate::ValueType::Hash)) {
            contents.sort();
        }
        // A string's encoding after a load follows its content (a short "raw" string,
        // one that APPEND touched, comes back "embstr", in Redis as in Basalt).
        let encoding = match v {
            ValueRef::Str(s) => Entry::new(b"", Payload::Str(&s.to_vec()), None, 0).encoding(),
            ValueRef::Obj(_) => e.encoding(),
        };
        let view = View {
            kind: v.value_type().name().to_string(),
            encoding: encoding.to_string(),
            contents,
            expire_at_ms: e.expire_at_ms(),
        };
        out.insert(e.key().to_vec(), view);
    }
    out
}

fn assert_views_equal(ours: &BTreeMap<Vec<u8>, View>, redis: &BTreeMap<Vec<u8>, View>) {
    let ok: Vec<&Vec<u8>> = ours.keys().collect();
    let rk: Vec<&Vec<u8>> = redis.keys().collect();
    assert_eq!(ok, rk, "same keys");
    for (k, v) in ours {
        assert_eq!(Some(v), redis.get(k), "key {}", k.escape_ascii());
    }
}

fn load_file(path: &Path) -> BTreeMap<usize, Vec<Entry>> {
    let bytes = std::fs::read(path).expect("read rdb");
    let mut dbs: BTreeMap<usize, Vec<Entry>> = BTreeMap::new();
    let info = load(&bytes[..], &Limits::redis_defaults(), |db, e| {
        dbs.entry(db).or_default().push(e);
        Ok(())
    })
    .expect("Redis's file loads");
    assert_eq!(info.version, 10);
    assert!(
        info.aux
            .iter()
            .any(|(k, v)| k == b"redis-ver" && v.starts_with(b"7.")),
        "{:?}",
        info.aux
    );
    dbs
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[test]
fn rdb_interop_redis_saves_basalt_loads() {
    if redis_missing() {
        return;
    }
    let dir = TempDir::new("a");
    let server = Server::start(&dir.0, &["--list-max-listpack-size", "4"]);
    let mut c = server.conn();
    let compressible = "ab".repeat(1000);
    let mut rng = fastrand::Rng::with_seed(1);
    let random: Vec<u8> = (0..300).map(|_| rng.u8(..)).collect();
    c.ok(&["SET", "int", "12345"]);
    c.ok(&["SET", "neg", "-7"]);
    c.ok(&["SET", "big-int", "123456789012345"]);
    c.ok(&["SET", "beyond-i32", "2147483648"]);
    c.ok(&["SET", "short", "hello"]);
    c.ok(&[&b"SET"[..], b"bin\x00key\xff", b"\x00\x01\r\n\xff"]);
    c.ok(&["SET", "long", &compressible]);
    c.ok(&[&b"SET"[..], b"random", &random]);
    c.ok(&["SET", "777", "numeric key"]);
    c.ok(&["SET", "ttl", "v", "PX", "100000"]);
    c.ok(&["RPUSH", "l-small", "a", "b", "3"]);
    let mut long_list: Vec<Vec<u8>> = vec![b"RPUSH".to_vec(), b"l-long".to_vec()];
    for i in 0..1000 {
        long_list.push(match i % 5 {
            0 => i.to_string().into_bytes(),
            1 => (-i * 100_003).to_string().into_bytes(),
            2 => format!("item-{i}").into_bytes(),
            3 => vec![b'p'; 200],
            _ => vec![],
        });
    }
    long_list.push(vec![b'q'; 5000]);
    c.ok(&long_list);
    c.ok(&[
        "SADD",
        "s-int",
        "1",
        "2",
        "3",
        "-100",
        "100000",
        "9223372036854775807",
    ]);
    c.ok(&["SADD", "s-str", "a", "b", "c", "1"]);
    c.ok(&[
        "ZADD", "z-small", "1.5", "a", "inf", "b", "-inf", "c", "0", "d", "3", "e", "-0", "f",
        "0.1", "g",
    ]);
    let mut zbig: Vec<String> = vec!["ZADD".into(), "z-big".into()];
    for i in 0..200 {
        zbig.push(format!("{}", f64::from(i) / 7.0 - 10.0));
        zbig.push(format!("member-{i}"));
    }
    zbig.extend(["inf", "top", "-inf", "bottom", "-0", "negzero"].map(String::from));
    c.ok(&zbig);
    c.ok(&["ZADD", "z-long-member", "1", &"m".repeat(100)]);
    c.ok(&["HSET", "h-small", "f", "v", "n", "12", "", ""]);
    let mut hbig: Vec<String> = vec!["HSET".into(), "h-big".into()];
    for i in 0..600 {
        hbig.push(format!("field-{i}"));
        hbig.push(format!("{}", i * 3));
    }
    c.ok(&hbig);
    c.ok(&["EXPIRE", "h-big", "1000"]);
    c.ok(&["SELECT", "3"]);
    c.ok(&["SET", "in-db-3", "x"]);
    c.ok(&["RPUSH", "l3", "x", "y"]);
    c.ok(&["PEXPIREAT", "l3", &(now_ms() + 500_000).to_string()]);
    c.ok(&["SAVE"]);
    let r0 = redis_view(&mut c, 0);
    let r3 = redis_view(&mut c, 3);
    // Encodings that the test means to cover really are there.
    let enc = |k: &str| r0[k.as_bytes()].encoding.as_str();
    assert_eq!(
        [
            enc("int"),
            enc("short"),
            enc("long"),
            enc("s-int"),
            enc("s-str"),
            enc("z-small"),
            enc("z-big")
        ],
        [
            "int",
            "embstr",
            "raw",
            "intset",
            "hashtable",
            "listpack",
            "skiplist"
        ]
    );
    assert_eq!(
        [enc("h-small"), enc("h-big"), enc("l-long")],
        ["listpack", "hashtable", "quicklist"]
    );
    let loaded = load_file(&dir.0.join("dump.rdb"));
    assert_eq!(loaded.keys().copied().collect::<Vec<_>>(), vec![0, 3]);
    assert_views_equal(&our_view(&loaded[&0]), &r0);
    assert_views_equal(&our_view(&loaded[&3]), &r3);
}

/// The kinds of data of test (a), built with Basalt's own types.
fn our_sample() -> BTreeMap<usize, Vec<Entry>> {
    let s = |k: &[u8], v: &[u8], exp: Option<i64>| Entry::new(k, Payload::Str(v), exp, 0);
    let o = |k: &[u8], obj: Object, exp: Option<i64>| {
        Entry::new(k, Payload::Object(Box::new(obj)), exp, 0)
    };
    let later = now_ms() + 3_600_000;
    let mut rng = fastrand::Rng::with_seed(2);
    let random: Vec<u8> = (0..300).map(|_| rng.u8(..)).collect();
    let mut db0 = vec![
        s(b"int", b"12345", None),
        s(b"neg", b"-7", None),
        s(b"big-int", b"123456789012345", Some(later)),
        s(b"beyond-i32", b"2147483648", None),
        s(b"short", b"hello", None),
        s(b"bin\x00key\xff", b"\x00\x01\r\n\xff", None),
        s(b"long", "ab".repeat(1000).as_bytes(), None),
        s(b"random", &random, None),
        s(b"777", b"numeric key", None),
        s(b"embstr-limit", &[b'e'; 44], None),
        o(b"raw-short", Object::Str(b"raw but short".to_vec()), None),
    ];
    let items: Vec<Vec<u8>> = (0..3000)
        .map(|i: i64| match i % 5 {
            0 => i.to_string().into_bytes(),
            1 => (-i * 1_000_003).to_string().into_bytes(),
            2 => format!("item-{i}").into_bytes(),
            3 => vec![b'p'; 200],
            _ => vec![],
        })
        .chain([vec![b'q'; 20_000], i64::MIN.to_string().into_bytes()])
        .collect();
    db0.push(o(
        b"l-small",
        Object::List(List::from_items([&b"a"[..], b"b", b"3"])),
        None,
    ));
    db0.push(o(
        b"l-long",
        Object::List(List::from_items(items.iter().map(Vec::as_slice))),
        Some(later + 1),
    ));
    let set = |members: &[&[u8]]| {
        let mut st = Set::new();
        for m in members {
            st.add(m, 512);
        }
        Object::Set(st)
    };
    db0.push(o(
        b"s-int",
        set(&[b"1", b"-100", b"100000", b"9223372036854775807"]),
        None,
    ));
    db0.push(o(b"s-str", set(&[b"a", b"b", b"1"]), None));
    let zset = |items: &[(&[u8], f64)]| {
        let mut z = ZSet::new();
        for (m, sc) in items {
            z.insert(m, *sc, ZLimits::default());
        }
        Object::ZSet(z)
    };
    db0.push(o(
        b"z-small",
        zset(&[
            (b"a", 1.5),
            (b"b", f64::INFINITY),
            (b"c", f64::NEG_INFINITY),
            (b"d", 0.0),
            (b"f", -0.0),
            (b"g", 0.1),
            (b"h", 1e300),
            (b"i", -2.5e-300),
            (b"j", 9_007_199_254_740_993.0),
        ]),
        None,
    ));
    let mut zbig = ZSet::new();
    for i in 0..200 {
        zbig.insert(
            format!("member-{i}").as_bytes(),
            f64::from(i) / 7.0 - 10.0,
            ZLimits::default(),
        );
    }
    for (m, sc) in [
        (&b"top"[..], f64::INFINITY),
        (b"bottom", f64::NEG_INFINITY),
        (b"negzero", -0.0),
    ] {
        zbig.insert(m, sc, ZLimits::default());
    }
    db0.push(o(b"z-big", Object::ZSet(zbig), None));
    let hash = |pairs: &[(Vec<u8>, Vec<u8>)]| {
        let mut h = Hash::new();
        for (f, v) in pairs {
            h.set(f, v, HashLimits::default());
        }
        Object::Hash(h)
    };
    let small: Vec<(Vec<u8>, Vec<u8>)> = [("f", "v"), ("n", "12"), ("", "")]
        .iter()
        .map(|(f, v)| (f.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    db0.push(o(b"h-small", hash(&small), None));
    let big: Vec<(Vec<u8>, Vec<u8>)> = (0..600)
        .map(|i| {
            (
                format!("field-{i}").into_bytes(),
                (i * 3).to_string().into_bytes(),
            )
        })
        .collect();
    db0.push(o(b"h-big", hash(&big), Some(later + 2)));
    let db3 = vec![
        s(b"in-db-3", b"x", None),
        o(
            b"l3",
            Object::List(List::from_items([&b"x"[..], b"y"])),
            Some(later),
        ),
    ];
    BTreeMap::from([(0, db0), (3, db3)])
}

#[test]
fn rdb_interop_basalt_writes_redis_loads() {
    if redis_missing() {
        return;
    }
    let data = our_sample();
    for (compress, checksum) in [(true, true), (false, false)] {
        let dir = TempDir::new("b");
        let aux: [(&str, &[u8]); 2] = [("redis-ver", b"7.0.15"), ("redis-bits", b"64")];
        let file = std::fs::File::create(dir.0.join("ours.rdb")).expect("create");
        let mut w = RdbWriter::new(std::io::BufWriter::new(file), &aux, compress, checksum)
            .expect("header");
        for (db, entries) in &data {
            let expires = entries
                .iter()
                .filter(|e| e.expire_at_ms().is_some())
                .count();
            w.select_db(*db, entries.len(), expires).expect("select");
            for e in entries {
                w.entry(e).expect("entry");
            }
        }
        w.finish().expect("finish").flush().expect("flush");
        let server = Server::start(&dir.0, &["--dbfilename", "ours.rdb"]);
        let mut c = server.conn();
        assert_views_equal(&our_view(&data[&0]), &redis_view(&mut c, 0));
        assert_views_equal(&our_view(&data[&3]), &redis_view(&mut c, 3));
        // And back: Redis saves what it loaded, and that loads equal too.
        c.ok(&["SAVE"]);
        let again = load_file(&dir.0.join("ours.rdb"));
        assert_views_equal(&our_view(&again[&0]), &our_view(&data[&0]));
    }
}
