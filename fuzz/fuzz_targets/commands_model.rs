//! Model-based fuzzing of the command layer: random command sequences over all five
//! types, on a few keys, members and values, run in process against Basalt and against
//! a small reference model written from Redis's documented semantics; every reply must
//! agree. Input bytes are decoded into commands, so libFuzzer explores sequences.

#![no_main]

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use basalt_server::command::testing::{render, Harness};
use libfuzzer_sys::fuzz_target;

#[derive(Clone, Debug)]
enum Val {
    Str(Vec<u8>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    List(VecDeque<Vec<u8>>),
    Set(BTreeSet<Vec<u8>>),
    ZSet(BTreeMap<Vec<u8>, i64>),
}

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

struct Model {
    keys: HashMap<Vec<u8>, Val>,
}

fn list(items: &[Vec<u8>]) -> String {
    format!("[{}]", items.iter().map(|i| String::from_utf8_lossy(i).into_owned()).collect::<Vec<_>>().join(","))
}

impl Model {
    /// The expected reply rendered like `testing::render`, or None when the model does
    /// not predict this reply (ordering not defined by Redis).
    fn apply(&mut self, cmd: &[Vec<u8>]) -> Option<String> {
        let name = String::from_utf8_lossy(&cmd[0]).to_ascii_uppercase();
        let key = cmd[1].clone();
        let cur = self.keys.get(&key).cloned();
        macro_rules! want {
            ($variant:ident) => {
                match cur {
                    None => None,
                    Some(Val::$variant(v)) => Some(v),
                    Some(_) => return Some(WRONGTYPE.into()),
                }
            };
        }
        let reply = match name.as_str() {
            "SET" => {
                self.keys.insert(key, Val::Str(cmd[2].clone()));
                "OK".into()
            }
            "GET" => match want!(Str) {
                Some(v) => String::from_utf8_lossy(&v).into_owned(),
                None => "(nil)".into(),
            },
            "APPEND" => {
                let mut v = want!(Str).unwrap_or_default();
                v.extend_from_slice(&cmd[2]);
                let n = v.len();
                self.keys.insert(key, Val::Str(v));
                n.to_string()
            }
            "DEL" => (self.keys.remove(&key).is_some() as i64).to_string(),
            "EXISTS" => (cur.is_some() as i64).to_string(),
            "TYPE" => match cur {
                None => "none",
                Some(Val::Str(_)) => "string",
                Some(Val::Hash(_)) => "hash",
                Some(Val::List(_)) => "list",
                Some(Val::Set(_)) => "set",
                Some(Val::ZSet(_)) => "zset",
            }
            .into(),
            "HSET" => {
                let mut h = want!(Hash).unwrap_or_default();
                let new = h.insert(cmd[2].clone(), cmd[3].clone()).is_none();
                self.keys.insert(key, Val::Hash(h));
                (new as i64).to_string()
            }
            "HGET" => match want!(Hash).and_then(|h| h.get(&cmd[2]).cloned()) {
                Some(v) => String::from_utf8_lossy(&v).into_owned(),
                None => "(nil)".into(),
            },
            "HDEL" => {
                let Some(mut h) = want!(Hash) else { return Some("0".into()) };
                let removed = h.remove(&cmd[2]).is_some();
                if h.is_empty() {
                    self.keys.remove(&key);
                } else {
                    self.keys.insert(key, Val::Hash(h));
                }
                (removed as i64).to_string()
            }
            "HLEN" => want!(Hash).map_or(0, |h| h.len()).to_string(),
            "LPUSH" | "RPUSH" => {
                let mut l = want!(List).unwrap_or_default();
                if name == "LPUSH" {
                    l.push_front(cmd[2].clone());
                } else {
                    l.push_back(cmd[2].clone());
                }
                let n = l.len();
                self.keys.insert(key, Val::List(l));
                n.to_string()
            }
            "LPOP" | "RPOP" => {
                let Some(mut l) = want!(List) else { return Some("(nil)".into()) };
                let v = if name == "LPOP" { l.pop_front() } else { l.pop_back() };
                if l.is_empty() {
                    self.keys.remove(&key);
                } else {
                    self.keys.insert(key, Val::List(l));
                }
                v.map_or("(nil)".into(), |v| String::from_utf8_lossy(&v).into_owned())
            }
            "LLEN" => want!(List).map_or(0, |l| l.len()).to_string(),
            "LRANGE" => list(&want!(List).map(|l| l.into_iter().collect::<Vec<_>>()).unwrap_or_default()),
            "SADD" => {
                let mut s = want!(Set).unwrap_or_default();
                let new = s.insert(cmd[2].clone());
                self.keys.insert(key, Val::Set(s));
                (new as i64).to_string()
            }
            "SREM" => {
                let Some(mut s) = want!(Set) else { return Some("0".into()) };
                let removed = s.remove(&cmd[2]);
                if s.is_empty() {
                    self.keys.remove(&key);
                } else {
                    self.keys.insert(key, Val::Set(s));
                }
                (removed as i64).to_string()
            }
            "SISMEMBER" => (want!(Set).is_some_and(|s| s.contains(&cmd[2])) as i64).to_string(),
            "SCARD" => want!(Set).map_or(0, |s| s.len()).to_string(),
            "ZADD" => {
                let mut z = want!(ZSet).unwrap_or_default();
                let score: i64 = String::from_utf8_lossy(&cmd[2]).parse().unwrap_or(0);
                let new = z.insert(cmd[3].clone(), score).is_none();
                self.keys.insert(key, Val::ZSet(z));
                (new as i64).to_string()
            }
            "ZSCORE" => match want!(ZSet).and_then(|z| z.get(&cmd[2]).copied()) {
                Some(s) => s.to_string(),
                None => "(nil)".into(),
            },
            "ZREM" => {
                let Some(mut z) = want!(ZSet) else { return Some("0".into()) };
                let removed = z.remove(&cmd[2]).is_some();
                if z.is_empty() {
                    self.keys.remove(&key);
                } else {
                    self.keys.insert(key, Val::ZSet(z));
                }
                (removed as i64).to_string()
            }
            "ZCARD" => want!(ZSet).map_or(0, |z| z.len()).to_string(),
            "ZRANGE" => {
                let mut items: Vec<(i64, Vec<u8>)> =
                    want!(ZSet).map(|z| z.into_iter().map(|(m, s)| (s, m)).collect()).unwrap_or_default();
                items.sort();
                list(&items.into_iter().map(|(_, m)| m).collect::<Vec<_>>())
            }
            "SMEMBERS" => {
                // Order is not defined by Redis: compare sorted.
                let s = want!(Set).unwrap_or_default();
                return Some(format!("sorted:{}", list(&s.into_iter().collect::<Vec<_>>())));
            }
            _ => return None,
        };
        Some(reply)
    }
}

const COMMANDS: &[(&str, usize)] = &[
    ("SET", 1), ("GET", 0), ("APPEND", 1), ("DEL", 0), ("EXISTS", 0), ("TYPE", 0),
    ("HSET", 2), ("HGET", 1), ("HDEL", 1), ("HLEN", 0),
    ("LPUSH", 1), ("RPUSH", 1), ("LPOP", 0), ("RPOP", 0), ("LLEN", 0), ("LRANGE", 2),
    ("SADD", 1), ("SREM", 1), ("SISMEMBER", 1), ("SCARD", 0), ("SMEMBERS", 0),
    ("ZADD", 2), ("ZSCORE", 1), ("ZREM", 1), ("ZCARD", 0), ("ZRANGE", 2),
];

/// Hash fields and sorted set members: some are prefixes of others, one is empty and one
/// shares no prefix, so that the inline form's shared key prefix grows and shrinks; the
/// read and remove commands draw from the same names as the writes, so that they hit.
const FIELDS: &[&str] = &["f1", "f10", "f100", "g", ""];
const MEMBERS: &[&str] = &["m1", "m12", "m", "n", ""];

fuzz_target!(|data: &[u8]| {
    let mut h = Harness::new();
    let mut model = Model { keys: HashMap::new() };
    let mut it = data.chunks_exact(3);
    for chunk in it.by_ref().take(200) {
        let (op, k, v) = (chunk[0], chunk[1], chunk[2]);
        let (name, extra) = COMMANDS[op as usize % COMMANDS.len()];
        let key = format!("k{}", k % 4).into_bytes();
        let mut cmd = vec![name.as_bytes().to_vec(), key];
        match (name, extra) {
            ("LRANGE" | "ZRANGE", _) => {
                cmd.push(b"0".to_vec());
                cmd.push(b"-1".to_vec());
            }
            ("ZADD", _) => {
                cmd.push(((v % 7) as i64 - 3).to_string().into_bytes());
                cmd.push(MEMBERS[v as usize % MEMBERS.len()].as_bytes().to_vec());
            }
            ("HSET", _) => {
                cmd.push(FIELDS[v as usize % FIELDS.len()].as_bytes().to_vec());
                cmd.push(format!("v{}", v / 5 % 3).into_bytes());
            }
            (_, 1) => cmd.push(match name.as_bytes()[0] {
                // Integers exercise the intset; strings turn it into a packed set.
                b'S' if name != "SET" && v % 4 != 0 => format!("{}", v % 6).into_bytes(),
                b'S' if name != "SET" => format!("s{}", v % 3).into_bytes(),
                b'H' => FIELDS[v as usize % FIELDS.len()].as_bytes().to_vec(),
                b'Z' => MEMBERS[v as usize % MEMBERS.len()].as_bytes().to_vec(),
                _ => format!("x{}", v % 5).into_bytes(),
            }),
            _ => {}
        }
        let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
        let got = render(&h.run_args(&args));
        let Some(want) = model.apply(&cmd) else { continue };
        if let Some(sorted_want) = want.strip_prefix("sorted:") {
            let mut items: Vec<String> = got.trim_matches(|c| c == '[' || c == ']').split(',').filter(|s| !s.is_empty()).map(String::from).collect();
            items.sort();
            let got_sorted = format!("[{}]", items.join(","));
            assert_eq!(got_sorted, sorted_want, "{cmd:?}");
        } else {
            assert_eq!(got, want, "{:?}", cmd.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>());
        }
    }
});
