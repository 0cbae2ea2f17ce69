//! Writer -> loader round trips over every type and encoding, hand-built files for the
//! older types and the opcodes Basalt never writes, refusals, and a bounded fuzz loop.

use super::write::put_len;
use super::*;
use crate::entry::{Entry, Payload, ValueRef};
use crate::types::hash::{Hash, HashLimits};
use crate::types::list::{End, List};
use crate::types::set::Set;
use crate::types::zset::{ZLimits, ZSet};
use crate::value::Object;

fn limits() -> Limits {
    Limits::redis_defaults()
}

fn obj(key: &[u8], o: Object, expire: Option<i64>) -> Entry {
    Entry::new(key, Payload::Object(Box::new(o)), expire, 0)
}

fn string(key: &[u8], v: &[u8], expire: Option<i64>) -> Entry {
    Entry::new(key, Payload::Str(v), expire, 0)
}

fn hash(pairs: &[(&[u8], &[u8])]) -> Object {
    let mut h = Hash::new();
    for (f, v) in pairs {
        h.set(f, v, HashLimits::default());
    }
    Object::Hash(h)
}

fn zset(items: &[(&[u8], f64)]) -> Object {
    let mut z = ZSet::new();
    for (m, s) in items {
        z.insert(m, *s, ZLimits::default());
    }
    Object::ZSet(z)
}

fn set(members: &[&[u8]]) -> Object {
    let mut s = Set::new();
    for m in members {
        s.add(m, 512);
    }
    Object::Set(s)
}

/// Every type and encoding, binary keys and values, expiries.
fn sample() -> Vec<(usize, Vec<Entry>)> {
    let mut rng = fastrand::Rng::with_seed(42);
    let random: Vec<u8> = (0..500).map(|_| rng.u8(..)).collect();
    let compressible: Vec<u8> = b"abcd".iter().cycle().take(2000).copied().collect();
    let mut db0 = vec![
        string(b"empty", b"", None),
        string(b"zero", b"0", None),
        string(b"neg", b"-1", Some(1_700_000_000_123)),
        string(b"i8", b"127", None),
        string(b"i16", b"-32768", None),
        string(b"i32", b"2147483647", None),
        string(b"beyond-i32", b"2147483648", None),
        string(b"i64min", b"-9223372036854775808", None),
        string(b"lead-zero", b"007", None),
        string(b"plus", b"+5", None),
        string(b"hello", b"hello world", Some(1)),
        string(b"\x00bin\xffkey", b"\x00\x01\x02\xff\xfe", None),
        string(b"", b"empty key", None),
        string(b"12345", b"numeric key", None),
        string(b"random", &random, None),
        string(b"compressible", &compressible, Some(i64::MAX)),
        string(b"just-inline", &[b'e'; 44], None),
        string(b"just-boxed", &[b'f'; 45], None),
        obj(b"raw", Object::Str(b"raw object string".to_vec()), None),
        obj(
            b"h-small",
            hash(&[(b"f1", b"v1"), (b"n", b"12"), (b"", b""), (b"\xff", b"-7")]),
            Some(99),
        ),
        obj(b"h-long-value", hash(&[(b"f", &[b'v'; 100])]), None),
        obj(
            b"l-small",
            Object::List(List::from_items([&b"a"[..], b"1", b"-300", b"", b"\x00"])),
            None,
        ),
        obj(
            b"s-ints",
            set(&[b"1", b"-5", b"70000", b"9223372036854775807"]),
            None,
        ),
        obj(b"s-strs", set(&[b"a", b"b", b"1", b"\x00"]), Some(5_000)),
        obj(
            b"z-small",
            zset(&[
                (b"a", 1.5),
                (b"b", f64::INFINITY),
                (b"c", f64::NEG_INFINITY),
                (b"d", -0.0),
                (b"e", 0.1),
                (b"f", 3.0),
                (b"g", -2.5e-300),
                (b"h", 1e300),
                (b"i", 9_007_199_254_740_993.0),
            ]),
            None,
        ),
    ];
    let big_hash: Vec<(Vec<u8>, Vec<u8>)> = (0..600)
        .map(|i| {
            (
                format!("field:{i}").into_bytes(),
                format!("{}", i * 7).into_bytes(),
            )
        })
        .collect();
    let mut h = Hash::new();
    for (f, v) in &big_hash {
        h.set(f, v, HashLimits::default());
    }
    db0.push(obj(b"h-big", Object::Hash(h), Some(1_800_000_000_000)));
    let items: Vec<Vec<u8>> = (0..10_000)
        .map(|i| match i % 4 {
            0 => i.to_string().into_bytes(),
            1 => format!("element-{i}").into_bytes(),
            2 => (-(i as i64) * 1_000_000_007).to_string().into_bytes(),
            _ => vec![b'x'; i % 300],
        })
        .chain([vec![b'y'; 20_000], vec![]])
        .collect();
    db0.push(obj(
        b"l-big",
        Object::List(List::from_items(items.iter().map(Vec::as_slice))),
        None,
    ));
    let mut s = Set::new();
    for i in 0..1000 {
        s.add(i.to_string().as_bytes(), 512);
    }
    db0.push(obj(b"s-many-ints", Object::Set(s), None));
    let mut z = ZSet::new();
    for i in 0..300 {
        z.insert(
            format!("m{i}").as_bytes(),
            f64::from(i) / 3.0 - 50.0,
            ZLimits::default(),
        );
    }
    for (m, sc) in [
        (&b"inf"[..], f64::INFINITY),
        (b"-inf", f64::NEG_INFINITY),
        (b"negzero", -0.0),
    ] {
        z.insert(m, sc, ZLimits::default());
    }
    db0.push(obj(b"z-big", Object::ZSet(z), Some(2_000_000_000_000)));
    let db3 = vec![
        string(b"in-db-3", b"three", None),
        obj(b"h", hash(&[(b"x", b"y")]), None),
    ];
    let db15 = vec![obj(
        b"l",
        Object::List(List::from_items([&b"only"[..]])),
        Some(123),
    )];
    vec![(0, db0), (3, db3), (15, db15)]
}

fn write(dbs: &[(usize, Vec<Entry>)], compress: bool, checksum: bool) -> Vec<u8> {
    let aux: [(&str, &[u8]); 3] = [
        ("redis-ver", b"7.0.15"),
        ("redis-bits", b"64"),
        ("aof-base", b"0"),
    ];
    let mut w = RdbWriter::new(Vec::new(), &aux, compress, checksum).expect("header");
    for (db, entries) in dbs {
        let expires = entries
            .iter()
            .filter(|e| e.expire_at_ms().is_some())
            .count();
        w.select_db(*db, entries.len(), expires).expect("select");
        for e in entries {
            w.entry(e).expect("entry");
        }
    }
    w.finish().expect("finish")
}

fn load_all(bytes: &[u8]) -> Result<(LoadInfo, Vec<(usize, Entry)>), RdbError> {
    load_with(bytes, &limits())
}

fn load_with(bytes: &[u8], limits: &Limits) -> Result<(LoadInfo, Vec<(usize, Entry)>), RdbError> {
    let mut out = Vec::new();
    let info = load(bytes, limits, |db, e| {
        out.push((db, e));
        Ok(())
    })?;
    Ok((info, out))
}

/// The elements of a value in a comparable form.
fn flat(v: ValueRef<'_>) -> Vec<Vec<u8>> {
    let ValueRef::Obj(o) = v else {
        let ValueRef::Str(s) = v else { unreachable!() };
        return vec![s.to_vec()];
    };
    match &*o.view() {
        Object::Str(s) => vec![s.clone()],
        Object::List(l) => l.iter().map(<[u8]>::to_vec).collect(),
        Object::Hash(h) => {
            let mut v: Vec<Vec<u8>> = h.iter().map(|(f, v)| [f, b"=", v].concat()).collect();
            v.sort();
            v
        }
        Object::Set(s) => {
            let mut v = s.members();
            v.sort();
            v
        }
        Object::ZSet(z) => z
            .iter()
            .map(|(s, m)| [m, b"=", format!("{s:?}").as_bytes()].concat())
            .collect(),
        Object::Stream(st) => st
            .range(crate::types::stream::StreamId::MIN, crate::types::stream::StreamId::MAX)
            .map(|e| [e.id.to_string().as_bytes(), b":", &e.iter().map(|x| x.to_vec()).collect::<Vec<_>>().join(&b","[..])].concat())
            .collect(),
    }
}

fn assert_same(a: &Entry, b: &Entry) {
    let key = a.key().escape_ascii().to_string();
    assert_eq!(a.key(), b.key());
    assert_eq!(a.expire_at_ms(), b.expire_at_ms(), "{key}");
    if !matches!(a.value(), ValueRef::Str(_)) {
        assert_eq!(a.encoding(), b.encoding(), "{key}");
    }
    assert_eq!(a.value().value_type(), b.value().value_type(), "{key}");
    assert_eq!(flat(a.value()), flat(b.value()), "{key}");
}

#[test]
fn rdb_round_trip_every_type_and_encoding() {
    let dbs = sample();
    for (compress, checksum) in [(false, false), (true, true), (true, false), (false, true)] {
        let bytes = write(&dbs, compress, checksum);
        let stored = u64::from_le_bytes(bytes[bytes.len() - 8..].try_into().expect("8 bytes"));
        if checksum {
            assert_eq!(stored, crc64(0, &bytes[..bytes.len() - 8]));
        } else {
            assert_eq!(stored, 0);
        }
        let (info, loaded) = load_all(&bytes).expect("loads");
        assert_eq!(info.version, 10);
        assert_eq!(info.aux[0], (b"redis-ver".to_vec(), b"7.0.15".to_vec()));
        assert_eq!(info.aux[1], (b"redis-bits".to_vec(), b"64".to_vec()));
        let want: Vec<(usize, &Entry)> = dbs
            .iter()
            .flat_map(|(db, es)| es.iter().map(move |e| (*db, e)))
            .collect();
        assert_eq!(info.keys as usize, want.len());
        assert_eq!(loaded.len(), want.len());
        for ((db_a, a), (db_b, b)) in want.iter().zip(&loaded) {
            assert_eq!(db_a, db_b);
            assert_same(a, b);
        }
        // -0 keeps its sign through the skiplist encoding; a listpack holds it as 0,
        // as Redis's does (its score string is written by the integer path).
        for (_, e) in &loaded {
            let Some(obj) = e.object() else { continue };
            if let Object::ZSet(z) = &*obj {
                let big = e.key() == b"z-big";
                let m: &[u8] = if big { b"negzero" } else { b"d" };
                let s = z.score(m).expect("member");
                assert!(
                    s == 0.0 && s.is_sign_negative() == big,
                    "{:?}",
                    e.key().escape_ascii().to_string()
                );
            }
        }
    }
    assert!(
        write(&dbs, true, true).len() < write(&dbs, false, true).len(),
        "compression saves space"
    );
}

#[test]
fn rdb_writer_uses_compact_forms() {
    let one = |e: Entry| {
        let mut w = RdbWriter::new(Vec::new(), &[], false, false).expect("header");
        w.select_db(0, 1, 0).expect("select");
        w.entry(&e).expect("entry");
        w.finish().expect("finish")
    };
    // SELECTDB 0, RESIZEDB 1 0, type 0, key "k", then 0xC1 + i16.
    let f = one(string(b"k", b"300", None));
    assert_eq!(&f[9..18], &[0xfe, 0, 0xfb, 1, 0, 0, 1, b'k', 0xc1]);
    let f = one(obj(b"k", set(&[b"1", b"2"]), None));
    assert_eq!(f[14], 11, "SET_INTSET");
    let f = one(obj(b"k", hash(&[(b"a", b"b")]), None));
    assert_eq!(f[14], 16, "HASH_LISTPACK");
    let f = one(obj(b"k", zset(&[(b"a", 1.0)]), None));
    assert_eq!(f[14], 17, "ZSET_LISTPACK");
    let f = one(obj(b"k", Object::List(List::from_items([&b"a"[..]])), None));
    assert_eq!(f[14], 18, "LIST_QUICKLIST_2");
    let f = one(obj(b"k", set(&[b"x"]), None));
    assert_eq!(f[14], 2, "SET");
    let f = one(string(b"k", b"v", Some(0x0102)));
    assert_eq!(&f[14..23], &[0xfc, 2, 1, 0, 0, 0, 0, 0, 0]);
}

/// "REDIS0010", `body`, EOF, no checksum.
fn file(body: &[u8]) -> Vec<u8> {
    let mut f = b"REDIS0010".to_vec();
    f.extend_from_slice(body);
    f.push(0xff);
    f.extend_from_slice(&[0; 8]);
    f
}

fn rstr(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

fn one_key(ty: u8, key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut body = vec![ty];
    rstr(&mut body, key);
    body.extend_from_slice(value);
    file(&body)
}

fn only_value(f: &[u8]) -> Vec<Vec<u8>> {
    let (_, loaded) = load_all(f).expect("loads");
    assert_eq!(loaded.len(), 1);
    flat(loaded[0].1.value())
}

fn ziplist(entries: &[&[u8]]) -> Vec<u8> {
    super::legacy::tests_support::hand_built(entries)
}

#[test]
fn rdb_loads_older_types_and_opcodes() {
    let strs = |v: &[&str]| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
    // LIST (1): two strings.
    let mut v = vec![2];
    rstr(&mut v, b"a");
    rstr(&mut v, b"b");
    assert_eq!(only_value(&one_key(1, b"l", &v)), strs(&["a", "b"]));
    // ZSET (3): text scores, inf as 254.
    let mut v = vec![2];
    rstr(&mut v, b"m");
    v.extend_from_slice(&[3, b'1', b'.', b'5']);
    rstr(&mut v, b"n");
    v.push(254);
    assert_eq!(only_value(&one_key(3, b"z", &v)), strs(&["m=1.5", "n=inf"]));
    // ZSET with a NaN score is refused.
    let mut v = vec![1];
    rstr(&mut v, b"m");
    v.push(253);
    assert!(load_all(&one_key(3, b"z", &v)).is_err());
    // LIST_ZIPLIST (10), LIST_QUICKLIST (14), ZSET_ZIPLIST (12), HASH_ZIPLIST (13).
    let zl = ziplist(&[&[0x01, b'x'], &[0xf3], &[0xc0, 0x2c, 0x01]]);
    let mut v = Vec::new();
    rstr(&mut v, &zl);
    assert_eq!(only_value(&one_key(10, b"l", &v)), strs(&["x", "2", "300"]));
    let mut q = vec![2];
    rstr(&mut q, &zl);
    rstr(&mut q, &zl);
    assert_eq!(
        only_value(&one_key(14, b"l", &q)),
        strs(&["x", "2", "300", "x", "2", "300"])
    );
    let zl = ziplist(&[
        &[0x01, b'm'],
        &[0x03, b'2', b'.', b'5'],
        &[0x01, b'n'],
        &[0xf2],
    ]);
    let mut v = Vec::new();
    rstr(&mut v, &zl);
    assert_eq!(
        only_value(&one_key(12, b"z", &v)),
        strs(&["n=1.0", "m=2.5"])
    );
    assert_eq!(only_value(&one_key(13, b"h", &v)), strs(&["m=2.5", "n=1"]));
    // HASH_ZIPMAP (9).
    let zm = [1, 1, b'f', 1, 0, b'v', 0xff];
    let mut v = Vec::new();
    rstr(&mut v, &zm);
    assert_eq!(only_value(&one_key(9, b"h", &v)), strs(&["f=v"]));
    // EXPIRETIME in seconds, IDLE and FREQ skipped, AUX kept.
    let mut body = vec![0xfa];
    rstr(&mut body, b"ctime");
    body.extend_from_slice(&[0xc2, 1, 0, 0, 0]);
    body.extend_from_slice(&[0xfd, 10, 0, 0, 0, 0xf8, 0x40, 0x80, 0xf9, 7, 0]);
    rstr(&mut body, b"k");
    rstr(&mut body, b"v");
    let (info, loaded) = load_all(&file(&body)).expect("loads");
    assert_eq!(info.aux, vec![(b"ctime".to_vec(), b"1".to_vec())]);
    assert_eq!(loaded[0].1.expire_at_ms(), Some(10_000));
    // Empty collections are skipped; an expiry before one does not leak to the next key.
    let mut body = vec![0xfc, 1, 0, 0, 0, 0, 0, 0, 0, 4];
    rstr(&mut body, b"empty-hash");
    body.push(0);
    body.push(0);
    rstr(&mut body, b"s");
    rstr(&mut body, b"v");
    let (info, loaded) = load_all(&file(&body)).expect("loads");
    assert_eq!((info.keys, info.empty_keys_skipped), (1, 1));
    assert_eq!(loaded[0].1.expire_at_ms(), None);
    // An intset over the limit becomes a hash table, a listpack hash over it too.
    let mut blob = Vec::new();
    super::intset::encode(&(0..600).collect::<Vec<i64>>(), &mut blob);
    let mut v = Vec::new();
    rstr(&mut v, &blob);
    let (_, loaded) = load_all(&one_key(11, b"s", &v)).expect("loads");
    assert_eq!(loaded[0].1.encoding(), "hashtable");
}

#[test]
fn rdb_refusals_are_clear() {
    let mut f = file(b"");
    f[8] = b'2';
    f[7] = b'1';
    let e = load_all(&f).expect_err("version 12");
    assert_eq!(e.to_string(), "Can't handle RDB format version 12");
    let e = load_all(b"RADIS0010\xff").expect_err("signature");
    assert_eq!(e.to_string(), "Wrong signature trying to load DB from file");
    // Checksum mismatch: one byte of a value changed after writing.
    let mut f = write(&[(0, vec![string(b"key", b"value", None)])], false, true);
    let at = f.windows(5).position(|w| w == b"value").expect("value");
    f[at] = b'V';
    let e = load_all(&f).expect_err("checksum");
    assert!(matches!(e, RdbError::Checksum { .. }));
    assert!(
        e.to_string().starts_with("Wrong RDB checksum expected: ("),
        "{e}"
    );
    // The same file with the checksum zeroed loads (a file saved with rdbchecksum no).
    let n = f.len();
    f[n - 8..].fill(0);
    assert!(load_all(&f).is_ok());
    // 7.2's streams and modules name the key.
    for ty in [21, 6, 7] {
        let e = load_all(&one_key(ty, b"mystream", b"")).expect_err("refused");
        assert!(e.to_string().contains("key 'mystream'"), "{e}");
        assert!(matches!(e, RdbError::Unsupported { .. }));
    }
    // The release candidates' function records and module data are refused; a
    // FUNCTION2 record cut short is a short read.
    for op in [0xf6, 0xf7] {
        assert!(matches!(
            load_all(&file(&[op])),
            Err(RdbError::Unsupported { offset: 9, .. })
        ));
    }
    assert!(load_all(&file(&[0xf5])).is_err());
    for ty in [8, 20, 22, 100, 0xf4] {
        assert!(matches!(
            load_all(&one_key(ty, b"k", b"")),
            Err(RdbError::UnknownType { type_byte, offset: 9 }) if type_byte == ty
        ));
    }
    // Duplicates.
    let mut v = vec![2];
    rstr(&mut v, b"m");
    rstr(&mut v, b"m");
    let e = load_all(&one_key(2, b"s", &v)).expect_err("dup");
    assert!(
        e.to_string().contains("Duplicate set members detected"),
        "{e}"
    );
    assert!(e.to_string().contains("key 's'"), "{e}");
    // Truncated.
    let f = write(&[(0, vec![string(b"key", b"value", None)])], false, true);
    let e = load_all(&f[..20]).expect_err("short");
    assert!(matches!(e, RdbError::ShortRead { offset: 20 }), "{e}");
    assert!(e
        .to_string()
        .starts_with("Short read or OOM loading DB. Unrecoverable error, aborting now."));
    // Errors from on_entry stop the load.
    let e = load(&f[..], &limits(), |_, _| {
        Err(RdbError::Other("stop".into()))
    })
    .expect_err("stopped");
    assert_eq!(e.to_string(), "stop");
}

#[test]
fn rdb_damaged_input_never_panics() {
    // A small file with every type, so that mutations reach every decoder.
    let small: Vec<(usize, Vec<Entry>)> = vec![(
        2,
        vec![
            string(b"s", b"12", Some(5)),
            string(b"long", &[b'a'; 100], None),
            obj(b"h", hash(&[(b"f", b"v"), (b"n", b"1")]), None),
            obj(b"h2", hash(&[(b"f", &[b'v'; 70])]), None),
            obj(
                b"l",
                Object::List(List::from_items([&b"a"[..], b"12", b"-70000"])),
                None,
            ),
            obj(b"si", set(&[b"1", b"2"]), None),
            obj(b"ss", set(&[b"a"]), None),
            obj(b"z", zset(&[(b"a", 1.5), (b"b", 2.0)]), None),
        ],
    )];
    // Small thresholds keep each load cheap while every large encoding still appears.
    let tiny = Limits {
        hash: HashLimits {
            max_listpack_entries: 4,
            max_listpack_value: 16,
        },
        zset: ZLimits {
            max_listpack_entries: 4,
            max_listpack_value: 16,
        },
        set_intset: 4,
    };
    let mut big_z = ZSet::new();
    for i in 0..6 {
        big_z.insert(format!("{i}").as_bytes(), f64::from(i) + 0.5, tiny.zset);
    }
    let mut all = small;
    all[0].1.push(obj(b"zb", Object::ZSet(big_z), None));
    let mut lp = List::new();
    lp.push(End::Tail, b"x");
    all[0].1.push(obj(b"l1", Object::List(lp), None));
    // RDB_FUZZ_ITERS raises the number of damaged files for a longer run by hand.
    let iters: usize = std::env::var("RDB_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    for compress in [false, true] {
        let good = write(&all, compress, false);
        // Every truncation.
        for n in 0..good.len() {
            assert!(load_with(&good[..n], &tiny).is_err());
        }
        // Random byte changes.
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        for _ in 0..iters {
            let mut f = good.clone();
            for _ in 0..rng.usize(1..4) {
                let at = rng.usize(9..f.len());
                f[at] = if rng.bool() {
                    rng.u8(..)
                } else {
                    f[at] ^ (1 << rng.u8(0..8))
                };
            }
            let _ = load_with(&f, &tiny);
        }
    }
    // Garbage after a valid header, and garbage from the first byte.
    let mut rng = fastrand::Rng::with_seed(99);
    for i in 0..iters {
        let mut f = if i % 2 == 0 {
            b"REDIS0010".to_vec()
        } else {
            Vec::new()
        };
        let len = rng.usize(0..300);
        f.extend((0..len).map(|_| rng.u8(..)));
        let _ = load_with(&f, &tiny);
    }
}

/// A sorted set too large for a listpack keeps -0 through a file or a DUMP, as Redis's
/// loader builds it as a skiplist first; a small one becomes a listpack, which holds 0
/// (the differential test found Basalt turning the large set's -0 into 0).
#[test]
fn minus_zero_scores_survive_loading_a_large_sorted_set() {
    for (members, kept) in [(200usize, true), (3, false)] {
        let mut z = ZSet::new_large();
        for i in 0..members {
            let score = if i == 1 { -0.0 } else { i as f64 };
            z.insert(format!("m{i}").as_bytes(), score, ZLimits::default());
        }
        let payload = dump_payload(&obj(b"z", Object::ZSet(z.clone()), None), true);
        let e = obj(b"z", Object::ZSet(z), None);
        let check = |loaded: &Entry| {
            let ValueRef::Obj(o) = loaded.value() else { panic!("not an object") };
            let view = o.view();
            let Object::ZSet(z) = &*view else { panic!("not a sorted set") };
            let s = z.score(b"m1").expect("m1");
            assert_eq!(s, 0.0);
            assert_eq!(s.is_sign_negative(), kept, "{members} members: -0 kept {kept}");
            assert_eq!(z.encoding(), if kept { "skiplist" } else { "listpack" });
        };
        let (_, entries) = load_all(&write(&[(0, vec![e])], true, true)).expect("load");
        check(&entries[0].1);
        let restored = restore(&payload, b"z", None, 0, &limits()).expect("restore");
        check(&restored);
    }
}

#[test]
fn function_libraries_round_trip_through_files_and_payloads() {
    let codes: [&[u8]; 2] = [b"#!lua name=a\nredis.register_function('f', function() return 1 end)", &[b'x'; 300]];
    // In a file: FUNCTION2 records before the databases, returned in file order.
    let mut w = RdbWriter::new(Vec::new(), &[], true, true).expect("writer");
    for code in codes {
        w.function(code).expect("written");
    }
    let bytes = w.finish().expect("finished");
    let (info, entries) = load_all(&bytes).expect("loads");
    assert_eq!(info.functions, codes.map(<[u8]>::to_vec).to_vec());
    assert!(entries.is_empty());
    // FUNCTION DUMP's payload, compressed or not, and its checks.
    for compress in [false, true] {
        let payload = functions_payload(codes, compress);
        assert_eq!(functions_of_payload(&payload).expect("restores"), codes.map(<[u8]>::to_vec).to_vec());
        let mut bad = payload.clone();
        bad[3] ^= 1;
        assert_eq!(functions_of_payload(&bad), Err("ERR DUMP payload version or checksum are wrong"));
    }
    assert_eq!(functions_of_payload(b"short"), Err("ERR DUMP payload version or checksum are wrong"));
    // A key's DUMP payload is not a function payload.
    let key_payload = dump_payload(&Entry::new(b"k", Payload::Object(Box::new(Object::Str(b"v".to_vec()))), None, 0), false);
    assert_eq!(functions_of_payload(&key_payload), Err("ERR given type is not a function"));
}

fn stream_of(s: &crate::types::stream::Stream) -> Entry {
    obj(b"s", Object::Stream(Box::new(s.clone())), None)
}

fn loaded_stream(bytes: &[u8]) -> crate::types::stream::Stream {
    let (_, entries) = load_all(bytes).expect("loads");
    let ValueRef::Obj(o) = entries[0].1.value() else { panic!("not an object") };
    let Object::Stream(s) = &*o.view() else { panic!("not a stream") };
    (**s).clone()
}

#[test]
fn streams_round_trip_with_nodes_groups_and_pending_entries() {
    use crate::types::stream::{Consumer, Group, NodeLimits, Pending, Stream, StreamId, Trim, TrimTo};
    let mut s = Stream::new();
    for ms in 1..=250u64 {
        let v = ms.to_string();
        // Mostly the master entry's fields (values only), some others.
        if ms % 7 == 0 {
            s.append(StreamId::new(ms, 0), &[b"other", v.as_bytes(), b"x", b"-5"], NodeLimits::default());
        } else {
            s.append(StreamId::new(ms, 0), &[b"f", v.as_bytes(), b"g", &[b'v'; 70]], NodeLimits::default());
        }
    }
    let mut g = Group { last_id: StreamId::new(10, 0), entries_read: Some(10), ..Group::default() };
    for ms in [3u64, 5, 9] {
        g.pel.insert(StreamId::new(ms, 0), Pending { delivery_time: 1_700_000_000_000 + ms as i64, delivery_count: ms, consumer: b"alice".to_vec() });
    }
    g.consumers.insert(b"alice".to_vec(), Consumer { seen_time: 1_700_000_000_123, pel: [3u64, 5, 9].map(|m| StreamId::new(m, 0)).into() });
    g.consumers.insert(b"bob".to_vec(), Consumer { seen_time: 7, pel: Default::default() });
    s.groups.insert(b"g1".to_vec(), g);
    s.groups.insert(b"g0".to_vec(), Group { entries_read: None, ..Group::default() });
    for compress in [false, true] {
        let f = write(&[(0, vec![stream_of(&s)])], compress, true);
        // Without deletions the nodes come back byte for byte, sizes included.
        assert_eq!(loaded_stream(&f), s);
    }
    // Deleted and trimmed entries stay in their nodes, flagged, as in Redis's files.
    assert!(s.delete(StreamId::new(2, 0)));
    assert_eq!(s.trim(Trim { to: TrimTo::MaxLen(200), approx: false, limit: 0 }), 49);
    assert_eq!(loaded_stream(&write(&[(0, vec![stream_of(&s)])], true, true)), s);
    // An empty stream (XGROUP CREATE ... MKSTREAM) is kept, not skipped.
    let empty = Stream::new();
    assert_eq!(loaded_stream(&write(&[(0, vec![stream_of(&empty)])], false, true)), empty);
}

/// A stream in a file whose bytes were damaged is refused or loaded whole: never a
/// panic, neither at load nor when the loaded stream is then read and changed (every
/// node was checked as it came in).
#[test]
fn damaged_streams_never_panic_at_load_or_after() {
    use crate::types::stream::{Group, NodeLimits, Pending, Stream, StreamId, Trim, TrimTo};
    let mut s = Stream::new();
    for ms in 1..=150u64 {
        let v = ms.to_string();
        let items: [&[u8]; 4] = if ms % 4 == 0 { [b"x", v.as_bytes(), b"-12", b"y"] } else { [b"f", v.as_bytes(), b"g", b"vv"] };
        s.append(StreamId::new(ms, ms % 3), &items, NodeLimits::default());
    }
    assert!(s.delete(StreamId::new(7, 1)));
    let mut g = Group { last_id: StreamId::new(9, 0), entries_read: Some(9), ..Group::default() };
    g.pel.insert(StreamId::new(3, 0), Pending { delivery_time: 5, delivery_count: 2, consumer: b"c".to_vec() });
    g.consumers.insert(b"c".to_vec(), crate::types::stream::Consumer { seen_time: 1, pel: [StreamId::new(3, 0)].into() });
    s.groups.insert(b"g".to_vec(), g);
    let file = write(&[(0, vec![stream_of(&s)])], false, false);
    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut loaded, mut refused) = (0, 0);
    for _ in 0..3000 {
        let mut bad = file.clone();
        // Damage the value only (past the header and the key), one to three bytes.
        for _ in 0..1 + next() % 3 {
            let at = 20 + (next() as usize) % (bad.len() - 30);
            bad[at] ^= 1 << (next() % 8);
        }
        match load_all(&bad) {
            Err(_) => refused += 1,
            Ok((_, entries)) => {
                loaded += 1;
                for (_, e) in entries {
                    let ValueRef::Obj(o) = e.value() else { continue };
                    let Object::Stream(st) = &*o.view() else { continue };
                    let mut st = (**st).clone();
                    let _ = st.range(StreamId::MIN, StreamId::MAX).map(|x| x.iter().count()).sum::<usize>();
                    let _ = st.range_rev(StreamId::MIN, StreamId::MAX).count();
                    let _ = (st.first_entry().map(|x| x.id), st.last_entry().map(|x| x.id), st.len());
                    let next_id = st.last_id.next().unwrap_or(StreamId::MAX);
                    if next_id > st.last_id {
                        st.append(next_id, &[b"f", b"v"], NodeLimits::default());
                    }
                    let _ = st.delete(StreamId::new(9, 0));
                    let _ = st.trim(Trim { to: TrimTo::MaxLen(20), approx: false, limit: 0 });
                    let _ = st.trim(Trim { to: TrimTo::MinId(StreamId::new(140, 0)), approx: true, limit: 100 });
                }
            }
        }
    }
    assert!(refused > 0 && loaded + refused == 3000, "{loaded} loaded, {refused} refused");
}
