//! memtier-style request generation: SET/GET in a deterministic `a:b` cycle or arbitrary
//! `--command`s with `__key__` / `__data__`, keys `prefix + number` from a per-kind pattern,
//! value sizes fixed or ranged, optional SETEX expiry. Requests are written into a reused buffer.

use super::keys::{KeyDist, KeyGen, Zipf};
use fastrand::Rng;

/// A key pattern letter as memtier spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// `S`: sequential.
    S,
    /// `R`: uniform random.
    R,
    /// `G`: gaussian.
    G,
    /// `Z`: zipf.
    Z,
    /// `P`: each client sequential over its own slice.
    P,
}

impl Pattern {
    /// Parses `S`, `R`, `G`, `Z` or `P`.
    pub fn parse(s: &str) -> Option<Pattern> {
        match s {
            "S" => Some(Pattern::S),
            "R" => Some(Pattern::R),
            "G" => Some(Pattern::G),
            "Z" => Some(Pattern::Z),
            "P" => Some(Pattern::P),
            _ => None,
        }
    }
}

/// One piece of a custom command argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// Bytes sent as they are.
    Lit(Vec<u8>),
    /// `__key__`: the key name.
    Key,
    /// `__data__`: the value.
    Data,
}

/// What one command kind sends.
#[derive(Clone, Debug, PartialEq)]
pub enum CmdKind {
    /// SET key value (SETEX with an expiry range).
    Set,
    /// GET key.
    Get,
    /// An arbitrary command: each argument is a list of pieces.
    Custom(Vec<Vec<Piece>>),
}

/// Splits a string into words as Redis's `sdssplitargs` does (spaces, "double quotes"
/// with escapes, 'single quotes'): the resp crate's inline-command parser. None when a
/// quote is not closed.
fn split_words(s: &str) -> Option<Vec<Vec<u8>>> {
    let mut line = s.as_bytes().to_vec();
    line.push(b'\n');
    let mut parser = resp::RequestParser::new(resp::Limits { max_inline_len: line.len() + 1, ..resp::Limits::default() });
    match parser.parse(&line) {
        Ok(Some(_)) => Some(parser.args(&line).map(<[u8]>::to_vec).collect()),
        Ok(None) | Err(_) => None,
    }
}

/// [`split_words`] as strings (compare's `--memtier` flags).
pub fn split_args(s: &str) -> Result<Vec<String>, String> {
    split_words(s)
        .map(|w| w.iter().map(|x| String::from_utf8_lossy(x).into_owned()).collect())
        .ok_or_else(|| format!("Invalid arguments \"{s}\": unbalanced quotes"))
}

/// Parses a `--command` string: arguments split as memtier splits them ([`split_words`]),
/// `__key__` and `__data__` anywhere inside an argument.
pub fn parse_command(s: &str) -> Result<Vec<Vec<Piece>>, String> {
    let words = split_words(s).ok_or_else(|| format!("Invalid --command \"{s}\": unbalanced quotes"))?;
    let mut args = Vec::new();
    for word in &words {
        let mut pieces = Vec::new();
        let mut rest: &[u8] = word;
        while !rest.is_empty() {
            let k = memchr::memmem::find(rest, b"__key__");
            let d = memchr::memmem::find(rest, b"__data__");
            let (at, len, piece) = match (k, d) {
                (Some(k), Some(d)) if k < d => (k, 7, Piece::Key),
                (Some(_), Some(d)) => (d, 8, Piece::Data),
                (Some(k), None) => (k, 7, Piece::Key),
                (None, Some(d)) => (d, 8, Piece::Data),
                (None, None) => {
                    pieces.push(Piece::Lit(rest.to_vec()));
                    break;
                }
            };
            if at > 0 {
                pieces.push(Piece::Lit(rest[..at].to_vec()));
            }
            pieces.push(piece);
            rest = &rest[at + len..];
        }
        args.push(pieces);
    }
    if args.is_empty() {
        return Err("empty --command".into());
    }
    Ok(args)
}

/// Row name memtier prints for a command: first letter upper-cased, rest lower-cased, plus `s`.
pub fn kind_name(first_word: &str) -> String {
    let lower = first_word.to_ascii_lowercase();
    let mut c = lower.chars();
    match c.next() {
        Some(f) => format!("{}{}s", f.to_ascii_uppercase(), c.as_str()),
        None => "Commands".into(),
    }
}

/// Settings shared by every client; [`MemtierSpec::for_client`] makes each client's generator.
#[derive(Clone, Debug)]
pub struct MemtierSpec {
    /// Command kinds, with their key pattern and how many times each is sent in a row.
    pub kinds: Vec<(CmdKind, Pattern, u32)>,
    /// Key name prefix.
    pub key_prefix: String,
    /// Lowest key number.
    pub key_min: u64,
    /// Highest key number.
    pub key_max: u64,
    /// Gaussian stddev (None = range/6).
    pub key_stddev: Option<f64>,
    /// Gaussian median (None = centre).
    pub key_median: Option<f64>,
    /// Zipf exponent.
    pub zipf_exp: f64,
    /// Value size range (equal for a fixed size).
    pub size_min: usize,
    /// Largest value size.
    pub size_max: usize,
    /// `S`: size follows the key number across the range; `R`: random.
    pub size_pattern_sequential: bool,
    /// SETEX with a TTL in this range.
    pub expiry: Option<(u64, u64)>,
    /// Random value bytes (true, our default) or memtier's `x` bytes.
    pub random_data: bool,
}

/// One client's generator.
#[derive(Clone, Debug)]
pub struct MemtierGen {
    spec_kinds: Vec<CmdKind>,
    /// Kind index sequence, cycled.
    cycle: Vec<u8>,
    pos: usize,
    keys: Vec<KeyGen>,
    prefix: Vec<u8>,
    data: Vec<u8>,
    size_min: usize,
    size_max: usize,
    size_seq: bool,
    key_min: u64,
    key_max: u64,
    expiry: Option<(u64, u64)>,
}

impl MemtierSpec {
    /// The generator of client `idx` of `total` (the `P` pattern gives each its own slice).
    pub fn for_client(&self, idx: usize, total: usize, rng: &mut Rng) -> MemtierGen {
        let range = self.key_max.saturating_sub(self.key_min) + 1;
        let mut cycle = Vec::new();
        let mut keys = Vec::new();
        for (i, (_, pat, times)) in self.kinds.iter().enumerate() {
            for _ in 0..*times {
                cycle.push(i as u8);
            }
            let g = match pat {
                Pattern::S => KeyGen::new(self.key_min, self.key_max, KeyDist::Sequential),
                Pattern::R => KeyGen::new(self.key_min, self.key_max, KeyDist::Uniform),
                Pattern::G => KeyGen::new(
                    self.key_min,
                    self.key_max,
                    KeyDist::Gaussian {
                        median: self.key_median.unwrap_or(self.key_min as f64 + range as f64 / 2.0),
                        stddev: self.key_stddev.unwrap_or(range as f64 / 6.0),
                    },
                ),
                Pattern::Z => KeyGen::new(self.key_min, self.key_max, KeyDist::Zipf(Zipf::new(range, self.zipf_exp))),
                Pattern::P => {
                    let slice = (range / total.max(1) as u64).max(1);
                    let lo = self.key_min + slice * idx as u64;
                    let hi = (lo + slice - 1).min(self.key_max);
                    KeyGen::new(lo.min(self.key_max), hi, KeyDist::Sequential)
                }
            };
            keys.push(g);
        }
        if cycle.is_empty() {
            cycle.push(0);
        }
        let n = self.size_max.max(1) * 2;
        let data = if self.random_data {
            (0..n).map(|_| rng.alphanumeric() as u8).collect()
        } else {
            vec![b'x'; n]
        };
        MemtierGen {
            spec_kinds: self.kinds.iter().map(|k| k.0.clone()).collect(),
            cycle,
            pos: 0,
            keys,
            prefix: self.key_prefix.as_bytes().to_vec(),
            data,
            size_min: self.size_min,
            size_max: self.size_max.max(self.size_min),
            size_seq: self.size_pattern_sequential,
            key_min: self.key_min,
            key_max: self.key_max,
            expiry: self.expiry,
        }
    }
}

fn bulk_header(out: &mut Vec<u8>, len: usize) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, b: &[u8]) {
    bulk_header(out, b.len());
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

impl MemtierGen {
    /// Number of kinds.
    pub fn kinds(&self) -> usize {
        self.spec_kinds.len()
    }

    fn value_size(&self, key: u64, rng: &mut Rng) -> usize {
        if self.size_max == self.size_min {
            return self.size_min;
        }
        if self.size_seq {
            let span = (self.key_max - self.key_min).max(1) as f64;
            let f = (key.saturating_sub(self.key_min)) as f64 / span;
            self.size_min + ((self.size_max - self.size_min) as f64 * f) as usize
        } else {
            rng.usize(self.size_min..=self.size_max)
        }
    }

    fn value<'a>(data: &'a [u8], size: usize, rng: &mut Rng) -> &'a [u8] {
        let off = rng.usize(0..=data.len() - size);
        &data[off..off + size]
    }

    /// Appends the next request to `out` and returns its kind index.
    pub fn write_next(&mut self, out: &mut Vec<u8>, rng: &mut Rng) -> u8 {
        let kind = self.cycle[self.pos];
        self.pos = (self.pos + 1) % self.cycle.len();
        let knum = self.keys[kind as usize].next(rng);
        let mut kb = itoa::Buffer::new();
        let kstr = kb.format(knum).as_bytes();
        let klen = self.prefix.len() + kstr.len();
        let key = |out: &mut Vec<u8>| {
            bulk_header(out, klen);
            out.extend_from_slice(&self.prefix);
            out.extend_from_slice(kstr);
            out.extend_from_slice(b"\r\n");
        };
        match &self.spec_kinds[kind as usize] {
            CmdKind::Set => {
                let size = self.value_size(knum, rng);
                if let Some((lo, hi)) = self.expiry {
                    out.extend_from_slice(b"*4\r\n$5\r\nSETEX\r\n");
                    key(out);
                    let ttl = rng.u64(lo..=hi.max(lo));
                    bulk(out, itoa::Buffer::new().format(ttl).as_bytes());
                } else {
                    out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n");
                    key(out);
                }
                bulk(out, Self::value(&self.data, size, rng));
            }
            CmdKind::Get => {
                out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n");
                key(out);
            }
            CmdKind::Custom(args) => {
                out.push(b'*');
                out.extend_from_slice(itoa::Buffer::new().format(args.len()).as_bytes());
                out.extend_from_slice(b"\r\n");
                let size = self.value_size(knum, rng);
                let val = Self::value(&self.data, size, rng);
                for arg in args {
                    let len: usize = arg
                        .iter()
                        .map(|p| match p {
                            Piece::Lit(l) => l.len(),
                            Piece::Key => klen,
                            Piece::Data => size,
                        })
                        .sum();
                    bulk_header(out, len);
                    for p in arg {
                        match p {
                            Piece::Lit(l) => out.extend_from_slice(l),
                            Piece::Key => {
                                out.extend_from_slice(&self.prefix);
                                out.extend_from_slice(kstr);
                            }
                            Piece::Data => out.extend_from_slice(val),
                        }
                    }
                    out.extend_from_slice(b"\r\n");
                }
            }
        }
        kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kinds: Vec<(CmdKind, Pattern, u32)>) -> MemtierSpec {
        MemtierSpec {
            kinds,
            key_prefix: "memtier-".into(),
            key_min: 1,
            key_max: 100,
            key_stddev: None,
            key_median: None,
            zipf_exp: 1.0,
            size_min: 4,
            size_max: 4,
            size_pattern_sequential: false,
            expiry: None,
            random_data: false,
        }
    }

    /// Issue 25, fault 5: quotes in `--command` group words, as memtier's (Redis's)
    /// argument splitting; placeholders still work inside quoted arguments.
    #[test]
    fn command_arguments_honour_quotes() {
        let lit = |s: &str| vec![Piece::Lit(s.as_bytes().to_vec())];
        let args = parse_command("EVAL 'return 1' 0").expect("parse");
        assert_eq!(args, vec![lit("EVAL"), lit("return 1"), lit("0")]);
        let args = parse_command(r#"SET "k:__key__ x" "a\x41\n""#).expect("parse");
        assert_eq!(args[1], vec![Piece::Lit(b"k:".to_vec()), Piece::Key, Piece::Lit(b" x".to_vec())]);
        assert_eq!(args[2], lit("aA\n"));
        assert!(parse_command("GET \"unbalanced").is_err());
        assert!(parse_command("   ").is_err());
    }

    #[test]
    fn set_get_ratio_cycle_and_encoding() {
        let s = spec(vec![(CmdKind::Set, Pattern::S, 1), (CmdKind::Get, Pattern::S, 2)]);
        let mut rng = Rng::with_seed(1);
        let mut g = s.for_client(0, 1, &mut rng);
        let mut out = Vec::new();
        let kinds: Vec<u8> = (0..6).map(|_| g.write_next(&mut out, &mut rng)).collect();
        assert_eq!(kinds, vec![0, 1, 1, 0, 1, 1]);
        let text = String::from_utf8_lossy(&out).to_string();
        assert!(text.starts_with("*3\r\n$3\r\nSET\r\n$9\r\nmemtier-1\r\n$4\r\nxxxx\r\n*2\r\n$3\r\nGET\r\n$9\r\nmemtier-1\r\n"), "{text}");
        // every request parses as a RESP array
        let mut pos = 0;
        let mut n = 0;
        while pos < out.len() {
            let len = resp::frame_len(&out[pos..], 1 << 20).ok().flatten().expect("frame");
            pos += len;
            n += 1;
        }
        assert_eq!(n, 6);
    }

    #[test]
    fn custom_command_placeholders() {
        let args = parse_command("HSET user:__key__:h f __data__").expect("parse");
        assert_eq!(args.len(), 4);
        let s = spec(vec![(CmdKind::Custom(args), Pattern::P, 1)]);
        let mut rng = Rng::with_seed(1);
        let mut g = s.for_client(1, 2, &mut rng);
        let mut out = Vec::new();
        g.write_next(&mut out, &mut rng);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "*4\r\n$4\r\nHSET\r\n$17\r\nuser:memtier-51:h\r\n$1\r\nf\r\n$4\r\nxxxx\r\n"
        );
    }

    #[test]
    fn names() {
        assert_eq!(kind_name("hset"), "Hsets");
        assert_eq!(kind_name("SET"), "Sets");
        assert!(parse_command("  ").is_err());
    }

    #[test]
    fn setex_with_expiry_and_random_data() {
        let mut s = spec(vec![(CmdKind::Set, Pattern::R, 1)]);
        s.expiry = Some((10, 10));
        s.random_data = true;
        let mut rng = Rng::with_seed(3);
        let mut g = s.for_client(0, 1, &mut rng);
        let mut out = Vec::new();
        g.write_next(&mut out, &mut rng);
        let t = String::from_utf8_lossy(&out).to_string();
        assert!(t.starts_with("*4\r\n$5\r\nSETEX\r\n"), "{t}");
        assert!(t.contains("$2\r\n10\r\n"));
        assert!(!t.contains("xxxx"));
    }
}
