//! What is sent: redis-benchmark's default test list, request templates built once with the
//! positions of `__rand_int__` recorded so they can be patched in place, and the memtier-style
//! generators (key patterns, value sizes, SET:GET ratio, arbitrary commands).

pub mod keys;
pub mod memtier;
pub mod ycsb;
pub mod ycsb_records;

use fastrand::Rng;

/// The placeholder redis-benchmark replaces (with -r) by 12 zero-padded digits.
pub const RAND_INT: &[u8] = b"__rand_int__";

/// One test of a redis-benchmark suite: the title printed and the request template.
#[derive(Clone, Debug)]
pub struct Test {
    /// Title as redis-benchmark prints it, e.g. `SET` or `LRANGE_100 (first 100 elements)`.
    pub title: String,
    /// The encoded request (multibulk, or inline for PING_INLINE).
    pub template: Template,
}

/// A request encoded once, with the offsets of every `__rand_int__` to patch before a send.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    /// The request bytes.
    pub bytes: Vec<u8>,
    /// Offsets of each 12-byte `__rand_int__` inside `bytes`.
    pub rand_positions: Vec<usize>,
}

impl Template {
    /// Encodes `args` as a multibulk request.
    pub fn command(args: &[&[u8]]) -> Self {
        let mut bytes = Vec::new();
        resp::encode::command(&mut bytes, args);
        Self::from_bytes(bytes)
    }
    /// Wraps pre-encoded bytes (e.g. an inline command).
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        let rand_positions = memchr::memmem::find_iter(&bytes, RAND_INT).collect();
        Template { bytes, rand_positions }
    }
}

/// redis-benchmark's payload for `-d`: a fixed LCG sequence, the same for every request.
pub fn redis_benchmark_data(size: usize) -> Vec<u8> {
    let mut state: u32 = 1234;
    (0..size)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            b'0' + ((state >> 16) & 63) as u8
        })
        .collect()
}

/// The default test names (`-t` spellings) in suite order, with the title printed and whether it
/// is selected by a given set of `-t` names.
const SUITE: &[(&str, &[&str])] = &[
    ("PING_INLINE", &["ping_inline", "ping"]),
    ("PING_MBULK", &["ping_mbulk", "ping"]),
    ("SET", &["set"]),
    ("GET", &["get"]),
    ("INCR", &["incr"]),
    ("LPUSH", &["lpush"]),
    ("RPUSH", &["rpush"]),
    ("LPOP", &["lpop"]),
    ("RPOP", &["rpop"]),
    ("SADD", &["sadd"]),
    ("HSET", &["hset"]),
    ("SPOP", &["spop"]),
    ("ZADD", &["zadd"]),
    ("ZPOPMIN", &["zpopmin"]),
    (
        "LPUSH (needed to benchmark LRANGE)",
        &["lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"],
    ),
    ("LRANGE_100 (first 100 elements)", &["lrange", "lrange_100"]),
    ("LRANGE_300 (first 300 elements)", &["lrange", "lrange_300"]),
    ("LRANGE_500 (first 500 elements)", &["lrange", "lrange_500"]),
    ("LRANGE_600 (first 600 elements)", &["lrange", "lrange_600"]),
    ("MSET (10 keys)", &["mset"]),
    ("XADD", &["xadd"]),
];

/// The tests of redis-benchmark's suite selected by `-t` (all when `selected` is None), in suite
/// order. `data` is the `-d` payload; `random_keys` is whether `-r` was given (ZADD's score).
pub fn default_suite(selected: Option<&[String]>, data: &[u8], random_keys: bool) -> Vec<Test> {
    let mut out = Vec::new();
    for (title, names) in SUITE {
        let on = match selected {
            // redis-benchmark 7.0.15 (observed): XADD runs only when asked for with -t.
            None => *title != "XADD",
            Some(sel) => names.iter().any(|n| sel.iter().any(|s| s.eq_ignore_ascii_case(n))),
        };
        if !on {
            continue;
        }
        let t = |args: &[&[u8]]| Template::command(args);
        let template = match *title {
            "PING_INLINE" => Template::from_bytes(b"PING\r\n".to_vec()),
            "PING_MBULK" => t(&[b"PING"]),
            "SET" => t(&[b"SET", b"key:__rand_int__", data]),
            "GET" => t(&[b"GET", b"key:__rand_int__"]),
            "INCR" => t(&[b"INCR", b"counter:__rand_int__"]),
            "LPUSH" | "LPUSH (needed to benchmark LRANGE)" => t(&[b"LPUSH", b"mylist", data]),
            "RPUSH" => t(&[b"RPUSH", b"mylist", data]),
            "LPOP" => t(&[b"LPOP", b"mylist"]),
            "RPOP" => t(&[b"RPOP", b"mylist"]),
            "SADD" => t(&[b"SADD", b"myset", b"element:__rand_int__"]),
            "HSET" => t(&[b"HSET", b"myhash", b"element:__rand_int__", data]),
            "SPOP" => t(&[b"SPOP", b"myset"]),
            "ZADD" => {
                let score: &[u8] = if random_keys { RAND_INT } else { b"0" };
                t(&[b"ZADD", b"myzset", score, b"element:__rand_int__"])
            }
            "ZPOPMIN" => t(&[b"ZPOPMIN", b"myzset"]),
            "LRANGE_100 (first 100 elements)" => t(&[b"LRANGE", b"mylist", b"0", b"99"]),
            "LRANGE_300 (first 300 elements)" => t(&[b"LRANGE", b"mylist", b"0", b"299"]),
            "LRANGE_500 (first 500 elements)" => t(&[b"LRANGE", b"mylist", b"0", b"499"]),
            "LRANGE_600 (first 600 elements)" => t(&[b"LRANGE", b"mylist", b"0", b"599"]),
            "MSET (10 keys)" => {
                let mut args: Vec<&[u8]> = vec![b"MSET"];
                for _ in 0..10 {
                    args.push(b"key:__rand_int__");
                    args.push(data);
                }
                t(&args)
            }
            _ => t(&[b"XADD", b"mystream", b"*", b"myfield", data]),
        };
        out.push(Test { title: (*title).to_string(), template });
    }
    out
}

/// Whether every `-t` name is known (redis-benchmark silently ignores unknown names; we warn).
pub fn unknown_test_names(selected: &[String]) -> Vec<String> {
    selected
        .iter()
        .filter(|s| !SUITE.iter().any(|(_, names)| names.iter().any(|n| s.eq_ignore_ascii_case(n))))
        .cloned()
        .collect()
}

/// A custom command given after the options: its template and its title (args joined by spaces).
pub fn custom_test(args: &[Vec<u8>]) -> Test {
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    let title = args.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>().join(" ");
    Test { title, template: Template::command(&refs) }
}

/// Writes `n` as 12 zero-padded decimal digits into `out` (which must be 12 bytes).
#[inline]
pub fn write_12_digits(out: &mut [u8], mut n: u64) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// Produces request bytes for one connection. Batches of the redis-benchmark kind are a template
/// repeated `depth` times, built once and patched in place; memtier-style requests are written
/// into a reused buffer. Neither allocates per request in steady state.
#[derive(Clone, Debug)]
pub enum Generator {
    /// One template repeated; `keyspace` is `-r` (None = send `__rand_int__` literally).
    Template {
        /// The single-request template.
        template: Template,
        /// `-r` key space.
        keyspace: Option<u64>,
    },
    /// memtier-style mixed workload.
    Memtier(Box<memtier::MemtierGen>),
}

impl Generator {
    /// Number of distinct command kinds it produces (stats are kept per kind).
    pub fn kinds(&self) -> usize {
        match self {
            Generator::Template { .. } => 1,
            Generator::Memtier(m) => m.kinds(),
        }
    }

    /// Prepares `out` for batches of up to `depth` requests (called once per connection).
    pub fn prepare(&self, out: &mut Vec<u8>, depth: usize) {
        out.clear();
        if let Generator::Template { template, .. } = self {
            for _ in 0..depth {
                out.extend_from_slice(&template.bytes);
            }
        }
    }

    /// Fills `out` with `k` requests and calls `kind(i, bytes)` for each request's kind and
    /// encoded length, in order. Returns the number of bytes of `out` to send.
    pub fn fill(&mut self, out: &mut Vec<u8>, k: usize, rng: &mut Rng, mut kind: impl FnMut(u8, usize)) -> usize {
        match self {
            Generator::Template { template, keyspace } => {
                let len = template.bytes.len();
                if out.len() < k * len {
                    let depth = k;
                    out.clear();
                    for _ in 0..depth {
                        out.extend_from_slice(&template.bytes);
                    }
                }
                if let Some(space) = *keyspace {
                    for i in 0..k {
                        let base = i * len;
                        for &p in &template.rand_positions {
                            let at = base + p;
                            write_12_digits(&mut out[at..at + 12], rng.u64(0..space.max(1)));
                        }
                    }
                }
                for _ in 0..k {
                    kind(0, len);
                }
                k * len
            }
            Generator::Memtier(m) => {
                out.clear();
                for _ in 0..k {
                    let before = out.len();
                    let kd = m.write_next(out, rng);
                    kind(kd, out.len() - before);
                }
                out.len()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_order_and_selection() {
        let all = default_suite(None, b"xxx", false);
        assert_eq!(all.len(), 20);
        assert_eq!(all[0].title, "PING_INLINE");
        assert_eq!(all[19].title, "MSET (10 keys)");
        let x = default_suite(Some(&["xadd".to_string()]), b"x", false);
        assert_eq!(x[0].title, "XADD");
        let sel = vec!["get".to_string(), "SET".to_string(), "lrange_300".to_string()];
        let t: Vec<String> = default_suite(Some(&sel), b"x", false).into_iter().map(|t| t.title).collect();
        assert_eq!(
            t,
            vec!["SET", "GET", "LPUSH (needed to benchmark LRANGE)", "LRANGE_300 (first 300 elements)"]
        );
        assert_eq!(unknown_test_names(&["foo".into(), "get".into()]), vec!["foo".to_string()]);
    }

    #[test]
    fn data_payload_is_fixed_lcg() {
        let d = redis_benchmark_data(3);
        assert_eq!(d.len(), 3);
        assert_eq!(d, redis_benchmark_data(3));
        assert!(d.iter().all(|&c| (b'0'..b'0' + 64).contains(&c)));
    }

    #[test]
    fn rand_int_patched_in_place() {
        let tmpl = Template::command(&[b"SET", b"key:__rand_int__", b"v"]);
        assert_eq!(tmpl.rand_positions.len(), 1);
        let mut g = Generator::Template { template: tmpl.clone(), keyspace: Some(1000) };
        let mut out = Vec::new();
        g.prepare(&mut out, 4);
        let ptr = out.as_ptr();
        let mut rng = Rng::with_seed(1);
        let mut kinds = 0;
        let n = g.fill(&mut out, 3, &mut rng, |_, _| kinds += 1);
        assert_eq!(kinds, 3);
        assert_eq!(n, 3 * tmpl.bytes.len());
        assert_eq!(out.as_ptr(), ptr, "no reallocation");
        let s = String::from_utf8_lossy(&out[..n]).to_string();
        assert_eq!(s.matches("key:000000000").count(), 3, "{s}");
        assert!(!s[..n].contains("__rand_int__"));
    }

    #[test]
    fn without_r_the_literal_is_sent() {
        let tmpl = Template::command(&[b"GET", b"key:__rand_int__"]);
        let mut g = Generator::Template { template: tmpl, keyspace: None };
        let mut out = Vec::new();
        g.prepare(&mut out, 1);
        let n = g.fill(&mut out, 1, &mut Rng::with_seed(1), |_, _| {});
        assert_eq!(&out[..n], b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    }

    #[test]
    fn twelve_digits() {
        let mut b = [0u8; 12];
        write_12_digits(&mut b, 4711);
        assert_eq!(&b, b"000000004711");
    }
}
