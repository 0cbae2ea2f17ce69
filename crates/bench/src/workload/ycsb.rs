//! YCSB's core workload (issue 25): its properties with YCSB 0.17's defaults, the stock
//! workloads A-F, the key choosers (uniform, zipfian scrambled as YCSB's, latest,
//! hotspot, sequential, exponential), YCSB's key names (`user` + the FNV-1a hash of the
//! key number, unless `insertorder=ordered`), field values, and the operation mix.
//! What the Redis binding sends for each operation is in `modes/ycsb.rs`.
//!
//! Written from YCSB's documented behaviour (CoreWorkload, its generators and
//! `Utils.fnvhash64`), so that the same properties choose the same kinds of keys with
//! the same skew: the scrambled zipfian draws from 10^10 items with YCSB's precomputed
//! zeta and hashes the draw onto the key space, as YCSB does.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use fastrand::Rng;

/// YCSB's stock workloads (the values of its `workloads/workloada` .. `workloadf`).
pub const STOCK: [(&str, &str); 6] = [
    ("a", "recordcount=1000\noperationcount=1000\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
    ("b", "recordcount=1000\noperationcount=1000\nreadallfields=true\nreadproportion=0.95\nupdateproportion=0.05\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
    ("c", "recordcount=1000\noperationcount=1000\nreadallfields=true\nreadproportion=1\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n"),
    ("d", "recordcount=1000\noperationcount=1000\nreadallfields=true\nreadproportion=0.95\nupdateproportion=0\nscanproportion=0\ninsertproportion=0.05\nrequestdistribution=latest\n"),
    ("e", "recordcount=1000\noperationcount=1000\nreadallfields=true\nreadproportion=0\nupdateproportion=0\nscanproportion=0.95\ninsertproportion=0.05\nrequestdistribution=zipfian\nmaxscanlength=100\nscanlengthdistribution=uniform\n"),
    ("f", "recordcount=1000\noperationcount=1000\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0\nscanproportion=0\ninsertproportion=0\nreadmodifywriteproportion=0.5\nrequestdistribution=zipfian\n"),
];

/// The text of stock workload `name` (`a`..`f`, or `workloada`..`workloadf`).
pub fn stock(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    let n = n.strip_prefix("workload").unwrap_or(&n);
    STOCK.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
}

/// A property list, as YCSB reads it: `name=value` lines, `#` comments; later wins.
#[derive(Clone, Debug, Default)]
pub struct Props(pub HashMap<String, String>);

impl Props {
    /// Adds the lines of a property file.
    pub fn load_text(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            if let Some((k, v)) = line.split_once(['=', ':']) {
                self.0.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
    }

    /// Sets one property (`-p name=value`).
    pub fn set(&mut self, name: &str, value: &str) {
        self.0.insert(name.to_string(), value.to_string());
    }

    /// The raw value.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The value parsed, or `default` when absent.
    pub fn get<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.0.get(name) {
            None => Ok(default),
            Some(v) => v.parse().map_err(|_| format!("Invalid value \"{v}\" for property {name}")),
        }
    }
}

/// The five operations of the core workload, in the order YCSB adds them to its chooser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read one record.
    Read,
    /// Update one record.
    Update,
    /// Insert a new record.
    Insert,
    /// Scan records from a key on.
    Scan,
    /// Read a record, then update it.
    ReadModifyWrite,
}

/// How request keys are chosen (`requestdistribution`).
#[derive(Clone, Debug)]
pub enum KeyChooser {
    /// Every key equally likely.
    Uniform { lb: i64, ub: i64 },
    /// Zipfian over 10^10 items, hashed onto the key space (YCSB's ScrambledZipfian).
    Zipfian { min: i64, items: i64, gen: Zipfian },
    /// The newest keys most likely (YCSB's SkewedLatest).
    Latest { gen: Zipfian },
    /// A hot set taking most operations.
    Hotspot { lb: i64, hot: i64, cold: i64, opn: f64 },
    /// Keys in order, wrapping.
    Sequential { lb: i64, ub: i64, next: i64 },
    /// Counting back from the newest key, exponentially.
    Exponential { gamma: f64 },
}

/// YCSB's zipfian generator (Gray et al.'s algorithm), items `base..base+items`.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    count_for_zeta: i64,
}

/// YCSB's zipfian constant and the zeta of 10^10 items for it (precomputed in YCSB).
const ZIPFIAN_CONSTANT: f64 = 0.99;
const SCRAMBLED_ITEMS: i64 = 10_000_000_000;
const SCRAMBLED_ZETAN: f64 = 26.46902820178302;

fn zeta(from: i64, to: i64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in from..to {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

impl Zipfian {
    /// Items `min..=max`; `zetan` precomputed or computed here (O(items)).
    pub fn new(min: i64, max: i64, theta: f64, zetan: Option<f64>) -> Zipfian {
        let items = max - min + 1;
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let zetan = zetan.unwrap_or_else(|| zeta(0, items, theta, 0.0));
        let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan);
        Zipfian { items, base: min, theta, zeta2theta, alpha: 1.0 / (1.0 - theta), zetan, eta, count_for_zeta: items }
    }

    /// A draw from `base..base+itemcount` (zeta extended as the item count grows).
    pub fn next_long(&mut self, itemcount: i64, rng: &mut Rng) -> i64 {
        if itemcount != self.count_for_zeta {
            self.zetan = if itemcount > self.count_for_zeta {
                zeta(self.count_for_zeta, itemcount, self.theta, self.zetan)
            } else {
                zeta(0, itemcount, self.theta, 0.0)
            };
            self.count_for_zeta = itemcount;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = rng.f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }
}

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 bytes of `val`, low byte first, made
/// non-negative as Java's `Math.abs` does.
pub fn fnvhash64(mut val: i64) -> i64 {
    let mut h: i64 = 0xCBF2_9CE4_8422_2325_u64 as i64;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    h.wrapping_abs()
}

/// YCSB's key name: `user` + the key number (hashed unless inserts are ordered),
/// zero-padded to `zeropadding` digits.
pub fn key_name(keynum: i64, zeropadding: usize, ordered: bool, out: &mut Vec<u8>) {
    let n = if ordered { keynum } else { fnvhash64(keynum) };
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n).as_bytes();
    out.clear();
    out.extend_from_slice(b"user");
    for _ in digits.len()..zeropadding {
        out.push(b'0');
    }
    out.extend_from_slice(digits);
}

/// Java's `String.hashCode` (the Redis binding's score for a key in `_indices`).
pub fn java_hash(s: &[u8]) -> i32 {
    s.iter().fold(0i32, |h, &c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The insert key sequence of the run phase (YCSB's AcknowledgedCounterGenerator):
/// keys from `recordcount` on, and the newest key below which every insert completed,
/// which bounds the keys that reads may choose.
pub struct InsertSequence {
    state: Mutex<(i64, i64, BTreeSet<i64>)>,
}

impl InsertSequence {
    /// Starts at `start` (recordcount): keys below it exist.
    pub fn new(start: i64) -> InsertSequence {
        InsertSequence { state: Mutex::new((start, start, BTreeSet::new())) }
    }

    /// The next key number to insert.
    pub fn next(&self) -> i64 {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let v = s.0;
        s.0 += 1;
        v
    }

    /// Key `v`'s insert finished.
    pub fn acknowledge(&self, v: i64) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.2.insert(v);
        loop {
            let limit = s.1;
            if !s.2.remove(&limit) {
                break;
            }
            s.1 += 1;
        }
    }

    /// The newest key every insert up to which completed.
    pub fn last(&self) -> i64 {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 - 1
    }
}

/// The core workload's settings, from properties.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Number of fields per record and their names' prefix.
    pub fieldcount: usize,
    /// Field names, `field0`...
    pub fieldnames: Vec<Vec<u8>>,
    /// Field length: (distribution, min, max).
    pub fieldlength: (String, u64, u64),
    /// Read every field (HGETALL) or one (HMGET).
    pub readallfields: bool,
    /// Update every field or one.
    pub writeallfields: bool,
    /// The operation mix, in YCSB's order (operations with weight 0 left out).
    pub mix: Vec<(f64, Op)>,
    /// Records loaded (`recordcount`).
    pub recordcount: i64,
    /// Operations of the run phase (`operationcount`).
    pub operationcount: i64,
    /// First key number and number of records of the load phase.
    pub insertstart: i64,
    /// Records this load inserts.
    pub insertcount: i64,
    /// Digits of key numbers (`zeropadding`).
    pub zeropadding: usize,
    /// `insertorder=ordered`: key numbers are not hashed.
    pub ordered: bool,
    /// Scan length: (zipfian?, min, max).
    pub scanlength: (bool, i64, i64),
    /// The request distribution as set up for the run.
    pub chooser: KeyChooser,
    /// `maxexecutiontime` in seconds (0: none).
    pub maxexecutiontime: u64,
}

impl Workload {
    /// Reads the core workload's properties (YCSB 0.17's defaults where absent).
    pub fn from_props(p: &Props) -> Result<Workload, String> {
        let fieldcount: usize = p.get("fieldcount", 10)?;
        let prefix = p.raw("fieldnameprefix").unwrap_or("field");
        let fieldnames = (0..fieldcount).map(|i| format!("{prefix}{i}").into_bytes()).collect();
        let fl_dist = p.raw("fieldlengthdistribution").unwrap_or("constant").to_string();
        if !matches!(fl_dist.as_str(), "constant" | "uniform" | "zipfian") {
            return Err(format!("Unknown field length distribution \"{fl_dist}\" (constant, uniform, zipfian)"));
        }
        let fieldlength = (fl_dist, p.get("minfieldlength", 1u64)?, p.get("fieldlength", 100u64)?);
        let mut recordcount: i64 = p.get("recordcount", 0)?;
        if recordcount == 0 {
            recordcount = i64::from(i32::MAX);
        }
        let operationcount: i64 = p.get("operationcount", 0)?;
        let insertstart: i64 = p.get("insertstart", 0)?;
        let insertcount: i64 = p.get("insertcount", recordcount - insertstart)?;
        if recordcount < insertstart + insertcount {
            return Err("Invalid combination of insertstart, insertcount and recordcount: recordcount must be at least insertstart + insertcount".into());
        }
        let mut mix = Vec::new();
        for (name, default, op) in [
            ("readproportion", 0.95, Op::Read),
            ("updateproportion", 0.05, Op::Update),
            ("insertproportion", 0.0, Op::Insert),
            ("scanproportion", 0.0, Op::Scan),
            ("readmodifywriteproportion", 0.0, Op::ReadModifyWrite),
        ] {
            let w: f64 = p.get(name, default)?;
            if w > 0.0 {
                mix.push((w, op));
            }
        }
        let insertproportion: f64 = p.get("insertproportion", 0.0)?;
        let dist = p.raw("requestdistribution").unwrap_or("uniform");
        let chooser = match dist {
            "uniform" => KeyChooser::Uniform { lb: insertstart, ub: insertstart + insertcount - 1 },
            "sequential" => KeyChooser::Sequential { lb: insertstart, ub: insertstart + insertcount - 1, next: insertstart },
            "zipfian" => {
                let expected_new = (operationcount as f64 * insertproportion * 2.0) as i64;
                let max = insertstart + insertcount + expected_new;
                KeyChooser::Zipfian {
                    min: insertstart,
                    items: max - insertstart + 1,
                    gen: Zipfian::new(0, SCRAMBLED_ITEMS, ZIPFIAN_CONSTANT, Some(SCRAMBLED_ZETAN)),
                }
            }
            "latest" => KeyChooser::Latest { gen: Zipfian::new(0, recordcount - 1, ZIPFIAN_CONSTANT, None) },
            "hotspot" => {
                let set: f64 = p.get("hotspotdatafraction", 0.2)?;
                let opn: f64 = p.get("hotspotopnfraction", 0.8)?;
                let interval = insertcount;
                let hot = (interval as f64 * set) as i64;
                KeyChooser::Hotspot { lb: insertstart, hot, cold: interval - hot, opn }
            }
            "exponential" => {
                let pct: f64 = p.get("exponential.percentile", 95.0)?;
                let frac: f64 = p.get("exponential.frac", 0.8571428571)?;
                KeyChooser::Exponential { gamma: -(1.0 - pct / 100.0).ln() / (recordcount as f64 * frac) }
            }
            other => return Err(format!("Unknown request distribution \"{other}\"")),
        };
        let scan_dist = p.raw("scanlengthdistribution").unwrap_or("uniform");
        if !matches!(scan_dist, "uniform" | "zipfian") {
            return Err(format!("Distribution \"{scan_dist}\" not allowed for scan length"));
        }
        let order = p.raw("insertorder").unwrap_or("hashed");
        Ok(Workload {
            fieldcount,
            fieldnames,
            fieldlength,
            readallfields: p.get("readallfields", true)?,
            writeallfields: p.get("writeallfields", false)?,
            mix,
            recordcount,
            operationcount,
            insertstart,
            insertcount,
            zeropadding: p.get("zeropadding", 1)?,
            ordered: order != "hashed",
            scanlength: (scan_dist == "zipfian", p.get("minscanlength", 1)?, p.get("maxscanlength", 1000)?),
            chooser,
            maxexecutiontime: p.get("maxexecutiontime", 0)?,
        })
    }

    /// The next operation (YCSB's DiscreteGenerator over the mix).
    pub fn next_op(&self, rng: &mut Rng) -> Op {
        let sum: f64 = self.mix.iter().map(|(w, _)| w).sum();
        let mut val = rng.f64();
        for &(w, op) in &self.mix {
            if val < w / sum {
                return op;
            }
            val -= w / sum;
        }
        self.mix.last().map_or(Op::Read, |m| m.1)
    }

    /// A field's length for a new value.
    pub fn field_len(&self, rng: &mut Rng) -> usize {
        let (dist, min, max) = (&self.fieldlength.0, self.fieldlength.1, self.fieldlength.2);
        match dist.as_str() {
            "uniform" => (min + (rng.f64() * (max - min + 1) as f64) as u64) as usize,
            "zipfian" => {
                // Small ranges only (field lengths): the zeta is computed per call.
                let mut z = Zipfian::new(min as i64, max as i64, ZIPFIAN_CONSTANT, None);
                z.next_long(max as i64 - min as i64 + 1, rng) as usize
            }
            _ => max as usize,
        }
    }

    /// The length of a scan.
    pub fn scan_len(&self, rng: &mut Rng) -> i64 {
        let (zipf, min, max) = self.scanlength;
        if zipf {
            Zipfian::new(min, max, ZIPFIAN_CONSTANT, None).next_long(max - min + 1, rng)
        } else {
            min + (rng.f64() * (max - min + 1) as f64) as i64
        }
    }
}

impl KeyChooser {
    /// A key number for a read, update, scan or read-modify-write: never one whose
    /// insert has not completed (YCSB's `nextKeynum`).
    pub fn next_keynum(&mut self, inserts: &InsertSequence, rng: &mut Rng) -> i64 {
        // Bounded: a chooser that keeps drawing keys not yet inserted gives the newest.
        for _ in 0..1000 {
            let last = inserts.last();
            let k = match self {
                KeyChooser::Uniform { lb, ub } => *lb + (rng.f64() * (*ub - *lb + 1) as f64) as i64,
                KeyChooser::Zipfian { min, items, gen } => {
                    let draw = gen.next_long(SCRAMBLED_ITEMS + 1, rng);
                    *min + fnvhash64(draw) % *items
                }
                KeyChooser::Latest { gen } => {
                    let max = last;
                    max - gen.next_long(max.max(1), rng)
                }
                KeyChooser::Hotspot { lb, hot, cold, opn } => {
                    if rng.f64() < *opn {
                        *lb + (rng.u64(..) >> 1) as i64 % (*hot).max(1)
                    } else {
                        *lb + *hot + (rng.u64(..) >> 1) as i64 % (*cold).max(1)
                    }
                }
                KeyChooser::Sequential { lb, ub, next } => {
                    let k = *next;
                    *next = if *next >= *ub { *lb } else { *next + 1 };
                    k
                }
                KeyChooser::Exponential { gamma } => {
                    let k = last - (-rng.f64().max(f64::MIN_POSITIVE).ln() / *gamma) as i64;
                    if k < 0 {
                        continue;
                    }
                    return k;
                }
            };
            if k <= last {
                return k;
            }
        }
        inserts.last()
    }
}

/// A random field value as YCSB's RandomByteIterator makes them: printable bytes from
/// ' ' to '_'.
pub fn random_value(len: usize, rng: &mut Rng, out: &mut Vec<u8>) {
    out.clear();
    out.extend((0..len).map(|_| b' ' + (rng.u8(..) & 63)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_are_ycsbs() {
        let mut k = Vec::new();
        key_name(5, 1, true, &mut k);
        assert_eq!(k, b"user5");
        key_name(5, 4, true, &mut k);
        assert_eq!(k, b"user0005");
        // FNV-1a 64 of the long 0, as YCSB's Utils.fnvhash64 (made non-negative).
        key_name(0, 1, false, &mut k);
        let expected = {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for _ in 0..8 {
                h = h.wrapping_mul(1_099_511_628_211);
            }
            (h as i64).wrapping_abs()
        };
        assert_eq!(String::from_utf8(k.clone()).expect("utf8"), format!("user{expected}"));
    }

    #[test]
    fn java_string_hash() {
        assert_eq!(java_hash(b""), 0);
        assert_eq!(java_hash(b"a"), 97);
        assert_eq!(java_hash(b"user1"), 111_578_566);
    }

    #[test]
    fn stock_workloads_parse_with_their_mix() {
        for (name, text) in STOCK {
            let mut p = Props::default();
            p.load_text(text);
            let w = Workload::from_props(&p).unwrap_or_else(|e| panic!("workload {name}: {e}"));
            assert_eq!(w.recordcount, 1000);
            let total: f64 = w.mix.iter().map(|m| m.0).sum();
            assert!((total - 1.0).abs() < 1e-9, "{name}: {total}");
        }
        assert!(stock("workloadE").is_some() && stock("g").is_none());
    }

    #[test]
    fn the_zipfian_chooser_is_skewed_and_stays_in_the_key_space() {
        let mut p = Props::default();
        p.load_text(stock("c").expect("c"));
        let mut w = Workload::from_props(&p).expect("c");
        let inserts = InsertSequence::new(w.recordcount);
        let mut rng = Rng::with_seed(1);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            let k = w.chooser.next_keynum(&inserts, &mut rng);
            assert!((0..1000).contains(&k), "{k}");
            counts[k as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = counts[..10].iter().sum();
        // Uniform would give 1% to the ten most frequent keys; YCSB's zipfian 0.99 gives
        // far more.
        assert!(top10 > 10_000, "top ten keys took {top10} of 100,000");
    }

    #[test]
    fn latest_prefers_new_keys_and_inserts_move_it() {
        let mut p = Props::default();
        p.load_text(stock("d").expect("d"));
        let mut w = Workload::from_props(&p).expect("d");
        let inserts = InsertSequence::new(w.recordcount);
        let mut rng = Rng::with_seed(2);
        let newest = (0..10_000).filter(|_| w.chooser.next_keynum(&inserts, &mut rng) >= 990).count();
        assert!(newest > 3_000, "{newest}");
        let k = inserts.next();
        assert_eq!(k, 1000);
        assert_eq!(inserts.last(), 999, "not acknowledged yet");
        inserts.acknowledge(k);
        assert_eq!(inserts.last(), 1000);
    }

    #[test]
    fn the_operation_mix_follows_the_proportions() {
        let mut p = Props::default();
        p.load_text(stock("f").expect("f"));
        let w = Workload::from_props(&p).expect("f");
        let mut rng = Rng::with_seed(3);
        let rmw = (0..10_000).filter(|_| w.next_op(&mut rng) == Op::ReadModifyWrite).count();
        assert!((4_700..5_300).contains(&rmw), "{rmw}");
    }
}
