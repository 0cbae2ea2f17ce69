//! The RDB writer: header and AUX fields, databases, one key at a time, EOF and CRC-64.
//!
//! What it writes for each of Basalt's encodings (the forms Redis 7.0 itself writes, so
//! that Redis loads them without converting):
//! - strings: int-encoded (0xC0..0xC2) when a canonical decimal that fits 32 bits,
//!   else LZF (`compress`, over 20 bytes, when it saves at least 4 bytes), else plain;
//! - hash: HASH_LISTPACK when ours is packed, else HASH;
//! - set: SET_INTSET when ours is an intset, else SET;
//! - sorted set: ZSET_LISTPACK when ours is packed, else ZSET_2 in ascending order;
//! - list: LIST_QUICKLIST_2 with listpack nodes of at most 8 KiB (Redis's default
//!   `list-max-listpack-size -2`, which Redis keeps for nodes it loads), and a plain
//!   node for an element of 1 GiB or more (too big for a listpack in Redis).

use std::io::{self, Write};

use super::{crc64::crc64, intset, listpack, lzf, RDB_VERSION};
use crate::entry::{Entry, StrRef, ValueRef};
use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::stream::Stream;
use crate::types::string::parse_i64;
use crate::types::zset::ZSet;
use crate::value::Object;

pub(super) const OP_FUNCTION2: u8 = 0xf5;
pub(super) const OP_FUNCTION: u8 = 0xf6;
pub(super) const OP_MODULE_AUX: u8 = 0xf7;
pub(super) const OP_IDLE: u8 = 0xf8;
pub(super) const OP_FREQ: u8 = 0xf9;
pub(super) const OP_AUX: u8 = 0xfa;
pub(super) const OP_RESIZEDB: u8 = 0xfb;
pub(super) const OP_EXPIRETIME_MS: u8 = 0xfc;
pub(super) const OP_EXPIRETIME: u8 = 0xfd;
pub(super) const OP_SELECTDB: u8 = 0xfe;
pub(super) const OP_EOF: u8 = 0xff;

pub(super) const T_STRING: u8 = 0;
pub(super) const T_LIST: u8 = 1;
pub(super) const T_SET: u8 = 2;
pub(super) const T_ZSET: u8 = 3;
pub(super) const T_HASH: u8 = 4;
pub(super) const T_ZSET_2: u8 = 5;
pub(super) const T_MODULE_PRE_GA: u8 = 6;
pub(super) const T_MODULE_2: u8 = 7;
pub(super) const T_HASH_ZIPMAP: u8 = 9;
pub(super) const T_LIST_ZIPLIST: u8 = 10;
pub(super) const T_SET_INTSET: u8 = 11;
pub(super) const T_ZSET_ZIPLIST: u8 = 12;
pub(super) const T_HASH_ZIPLIST: u8 = 13;
pub(super) const T_LIST_QUICKLIST: u8 = 14;
pub(super) const T_STREAM_LISTPACKS: u8 = 15;
pub(super) const T_HASH_LISTPACK: u8 = 16;
pub(super) const T_ZSET_LISTPACK: u8 = 17;
pub(super) const T_LIST_QUICKLIST_2: u8 = 18;
pub(super) const T_STREAM_LISTPACKS_2: u8 = 19;
pub(super) const T_STREAM_LISTPACKS_3: u8 = 21;

pub(super) const ENC_INT8: u8 = 0;
pub(super) const ENC_INT16: u8 = 1;
pub(super) const ENC_INT32: u8 = 2;
pub(super) const ENC_LZF: u8 = 3;

/// Quicklist node containers.
pub(super) const NODE_PLAIN: u64 = 1;
pub(super) const NODE_PACKED: u64 = 2;

/// Listpack bytes per quicklist node (Redis's `list-max-listpack-size -2`).
const NODE_BYTES: usize = 8 * 1024;
/// Elements this large go in plain nodes (Redis's packed threshold).
const PLAIN_ELEMENT: usize = 1 << 30;
/// Buffered bytes before they are handed to the inner writer.
const FLUSH_AT: usize = 64 * 1024;

/// Serializes a snapshot into `W`. Call [`RdbWriter::select_db`] before each database's
/// entries and [`RdbWriter::finish`] at the end; a writer dropped unfinished leaves an
/// incomplete file (no EOF, no checksum), which every loader refuses.
pub struct RdbWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    crc: u64,
    checksum: bool,
    compress: bool,
    lzf: lzf::Compressor,
    lp: listpack::Builder,
    scratch: Vec<u8>,
}

/// Appends an RDB length.
pub(super) fn put_len(buf: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        buf.push(n as u8);
    } else if n < 1 << 14 {
        buf.push(0x40 | (n >> 8) as u8);
        buf.push((n & 0xff) as u8);
    } else if let Ok(n) = u32::try_from(n) {
        buf.push(0x80);
        buf.extend_from_slice(&n.to_be_bytes());
    } else {
        buf.push(0x81);
        buf.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends an integer in the shortest int encoding; false when it needs more than 32
/// bits (the caller then writes its decimal string).
pub(super) fn put_int_encoded(buf: &mut Vec<u8>, n: i64) -> bool {
    if let Ok(v) = i8::try_from(n) {
        buf.push(0xc0 | ENC_INT8);
        buf.extend_from_slice(&v.to_le_bytes());
    } else if let Ok(v) = i16::try_from(n) {
        buf.push(0xc0 | ENC_INT16);
        buf.extend_from_slice(&v.to_le_bytes());
    } else if let Ok(v) = i32::try_from(n) {
        buf.push(0xc0 | ENC_INT32);
        buf.extend_from_slice(&v.to_le_bytes());
    } else {
        return false;
    }
    true
}

/// A score as a listpack element, as Redis stores it: an integer when it is one (and
/// small enough that no precision question arises), else the shortest decimal text that
/// reads back to the same double ("inf", "-inf", "-0" included).
fn push_score(lp: &mut listpack::Builder, s: f64) {
    if s.fract() == 0.0 && s.abs() < 4_503_599_627_370_496.0 && !(s == 0.0 && s.is_sign_negative())
    {
        lp.push_int(s as i64);
    } else {
        let plain = format!("{s}");
        let exp = format!("{s:e}");
        lp.push_str(if exp.len() < plain.len() {
            exp.as_bytes()
        } else {
            plain.as_bytes()
        });
    }
}

/// Encodes one entry (EXPIRETIME_MS, type, key, value) and appends it to `dst`, for a
/// point-in-time capture (`store::capture`): a before-image kept for an entry about to
/// change, or an entry the walk reached. The LZF table and listpack
/// scratch live per thread, so encoding one entry allocates nothing in steady state.
pub fn encode_entry(e: &Entry, compress: bool, dst: &mut Vec<u8>) {
    thread_local! {
        static SCRATCH: std::cell::RefCell<RdbWriter<Vec<u8>>> = std::cell::RefCell::new(RdbWriter {
            out: Vec::new(),
            buf: Vec::new(),
            crc: 0,
            checksum: false,
            compress: true,
            lzf: lzf::Compressor::default(),
            lp: listpack::Builder::default(),
            scratch: Vec::new(),
        });
    }
    SCRATCH.with(|w| {
        let mut w = w.borrow_mut();
        w.compress = compress;
        // The writer's output is `dst` for the duration of this entry.
        std::mem::swap(&mut w.out, dst);
        // Writing into a Vec cannot fail.
        let _ = w.entry(e);
        let _ = w.flush_buf();
        std::mem::swap(&mut w.out, dst);
        // A huge value leaves a huge scratch buffer behind: give it back.
        if w.buf.capacity() > 4 * FLUSH_AT {
            w.buf = Vec::new();
        }
    });
}

/// DUMP's payload for an entry's value, as Redis 7.0 builds it: the type byte and the
/// value as in an RDB file (LZF for long strings when `compress`), then the RDB version
/// as two bytes LE and the CRC-64 of everything before it, eight bytes LE. The key and
/// its expiry are not part of it.
pub fn dump_payload(e: &Entry, compress: bool) -> Vec<u8> {
    // Writing into a Vec cannot fail.
    payload(compress, |w| w.typed_value(e, None).map(drop))
}

/// A payload of DUMP's form: what `body` writes, then the 2-byte RDB version and the
/// CRC-64 of both.
fn payload(compress: bool, body: impl FnOnce(&mut RdbWriter<Vec<u8>>) -> io::Result<()>) -> Vec<u8> {
    let mut w = RdbWriter {
        out: Vec::new(),
        buf: Vec::new(),
        crc: 0,
        checksum: false,
        compress,
        lzf: lzf::Compressor::default(),
        lp: listpack::Builder::default(),
        scratch: Vec::new(),
    };
    // Writing into a Vec cannot fail.
    let _ = body(&mut w);
    let _ = w.flush_buf();
    let mut out = w.out;
    out.extend_from_slice(&(RDB_VERSION as u16).to_le_bytes());
    let crc = crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// FUNCTION DUMP's payload: each library's code as FUNCTION2, then the 2-byte RDB
/// version and the CRC-64, as Redis 7.0 serializes them.
pub fn functions_payload<'c>(codes: impl IntoIterator<Item = &'c [u8]>, compress: bool) -> Vec<u8> {
    payload(compress, |w| codes.into_iter().try_for_each(|code| w.function(code)))
}

impl<W: Write> RdbWriter<W> {
    /// Writes "REDIS0010" and the AUX fields given (name, value), e.g. redis-ver,
    /// redis-bits, ctime, used-mem, aof-base. `compress` turns on LZF for long strings,
    /// `checksum` the CRC-64 trailer (8 zero bytes without it, as Redis writes with
    /// `rdbchecksum no`).
    pub fn new(out: W, aux: &[(&str, &[u8])], compress: bool, checksum: bool) -> io::Result<Self> {
        let mut w = RdbWriter {
            out,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            crc: 0,
            checksum,
            compress,
            lzf: lzf::Compressor::default(),
            lp: listpack::Builder::default(),
            scratch: Vec::new(),
        };
        w.buf
            .extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
        for (name, value) in aux {
            w.buf.push(OP_AUX);
            w.string(name.as_bytes())?;
            w.string(value)?;
        }
        Ok(w)
    }

    /// A function library's code (FUNCTION2), as Redis writes each library before the
    /// databases.
    pub fn function(&mut self, code: &[u8]) -> io::Result<()> {
        self.buf.push(OP_FUNCTION2);
        self.string(code)?;
        self.maybe_flush()
    }

    /// SELECTDB and RESIZEDB: the entries that follow belong to database `db`, which
    /// holds `keys` keys, `expires` of them with an expiry (sizing hints for the loader).
    pub fn select_db(&mut self, db: usize, keys: usize, expires: usize) -> io::Result<()> {
        self.buf.push(OP_SELECTDB);
        put_len(&mut self.buf, db as u64);
        self.buf.push(OP_RESIZEDB);
        put_len(&mut self.buf, keys as u64);
        put_len(&mut self.buf, expires as u64);
        self.maybe_flush()
    }

    /// One key: EXPIRETIME_MS when it has one, then type, key and value.
    pub fn entry(&mut self, e: &Entry) -> io::Result<()> {
        if let Some(t) = e.expire_at_ms() {
            self.buf.push(OP_EXPIRETIME_MS);
            self.buf.extend_from_slice(&t.to_le_bytes());
        }
        self.typed_value(e, Some(e.key()))
    }

    /// The type byte, the key when given (a file has it, a DUMP payload not), and the
    /// value.
    fn typed_value(&mut self, e: &Entry, key: Option<&[u8]>) -> io::Result<()> {
        match e.value() {
            ValueRef::Str(s) => {
                self.head(T_STRING, key)?;
                match s {
                    StrRef::Int(n) => {
                        if !put_int_encoded(&mut self.buf, n) {
                            self.string(itoa::Buffer::new().format(n).as_bytes())?;
                        }
                    }
                    StrRef::Bytes(b) => self.string(b)?,
                }
            }
            ValueRef::Obj(o) => match &*o.view() {
                Object::Str(b) => {
                    self.head(T_STRING, key)?;
                    self.string(b)?;
                }
                Object::Hash(h) => self.hash(key, h)?,
                Object::List(l) => self.list(key, l)?,
                Object::Set(s) => self.set(key, s)?,
                Object::ZSet(z) => self.zset(key, z)?,
                Object::Stream(st) => self.stream(key, st)?,
            },
        }
        self.maybe_flush()
    }

    fn head(&mut self, type_byte: u8, key: Option<&[u8]>) -> io::Result<()> {
        self.buf.push(type_byte);
        match key {
            Some(k) => self.string(k),
            None => Ok(()),
        }
    }

    /// Entries already encoded by [`encode_entry`] (a background save's shard), spliced
    /// in as they are.
    pub fn raw(&mut self, encoded: &[u8]) -> io::Result<()> {
        self.flush_buf()?;
        if self.checksum {
            self.crc = crc64(self.crc, encoded);
        }
        self.out.write_all(encoded)
    }

    /// Writes EOF and the CRC-64 of everything before it (8 zero bytes when `checksum`
    /// is false), flushes, and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.buf.push(OP_EOF);
        self.flush_buf()?;
        let sum = if self.checksum { self.crc } else { 0 };
        self.out.write_all(&sum.to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            if self.checksum {
                self.crc = crc64(self.crc, &self.buf);
            }
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Raw bytes; large ones go straight to the inner writer rather than through the
    /// buffer.
    fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        if b.len() >= FLUSH_AT {
            self.flush_buf()?;
            if self.checksum {
                self.crc = crc64(self.crc, b);
            }
            self.out.write_all(b)
        } else {
            self.buf.extend_from_slice(b);
            self.maybe_flush()
        }
    }

    /// Format: a string as Redis's rdbSaveRawString lays it out (see the module doc).
    fn string(&mut self, s: &[u8]) -> io::Result<()> {
        if s.len() <= 11 {
            if let Some(n) = parse_i64(s) {
                if put_int_encoded(&mut self.buf, n) {
                    return Ok(());
                }
            }
        }
        if self.compress && s.len() > 20 {
            let mut lzf = std::mem::take(&mut self.lzf);
            let done = match lzf.compress(s, s.len() - 4) {
                Some(packed) => {
                    self.buf.push(0xc0 | ENC_LZF);
                    put_len(&mut self.buf, packed.len() as u64);
                    put_len(&mut self.buf, s.len() as u64);
                    self.bytes(packed)?;
                    true
                }
                None => false,
            };
            self.lzf = lzf;
            if done {
                return Ok(());
            }
        }
        put_len(&mut self.buf, s.len() as u64);
        self.bytes(s)
    }

    /// Writes the listpack in `self.lp` as a string.
    fn listpack_string(&mut self) -> io::Result<()> {
        let mut lp = std::mem::take(&mut self.lp);
        let r = self.string(lp.finish());
        lp.clear();
        self.lp = lp;
        r
    }

    fn hash(&mut self, key: Option<&[u8]>, h: &Hash) -> io::Result<()> {
        match h {
            Hash::Packed(_) => {
                self.head(T_HASH_LISTPACK, key)?;
                self.lp.clear();
                for (f, v) in h.iter() {
                    self.lp.push(f);
                    self.lp.push(v);
                }
                self.listpack_string()
            }
            Hash::Table(_) => {
                self.head(T_HASH, key)?;
                put_len(&mut self.buf, h.len() as u64);
                for (f, v) in h.iter() {
                    self.string(f)?;
                    self.string(v)?;
                }
                Ok(())
            }
        }
    }

    /// A stream as Redis 7.0 writes it (type 19): its nodes' listpacks, the length and
    /// IDs, then each group with its pending entries and
    /// consumers.
    fn stream(&mut self, key: Option<&[u8]>, s: &Stream) -> io::Result<()> {
        self.head(T_STREAM_LISTPACKS_2, key)?;
        // The nodes as the stream holds them (Redis's own listpacks), deleted entries
        // included, as Redis writes them.
        put_len(&mut self.buf, s.nodes().count() as u64);
        for (first, lp) in s.nodes() {
            self.string(&first.to_be_bytes())?;
            self.string(lp)?;
        }
        let first = s.first_id();
        for n in [s.len() as u64, s.last_id.ms, s.last_id.seq, first.ms, first.seq, s.max_deleted_id.ms, s.max_deleted_id.seq, s.entries_added] {
            put_len(&mut self.buf, n);
        }
        put_len(&mut self.buf, s.groups.len() as u64);
        for (name, g) in &s.groups {
            self.string(name)?;
            put_len(&mut self.buf, g.last_id.ms);
            put_len(&mut self.buf, g.last_id.seq);
            put_len(&mut self.buf, g.entries_read.unwrap_or(u64::MAX));
            put_len(&mut self.buf, g.pel.len() as u64);
            for (id, p) in &g.pel {
                self.buf.extend_from_slice(&id.to_be_bytes());
                self.buf.extend_from_slice(&p.delivery_time.to_le_bytes());
                put_len(&mut self.buf, p.delivery_count);
                self.maybe_flush()?;
            }
            put_len(&mut self.buf, g.consumers.len() as u64);
            for (cname, c) in &g.consumers {
                self.string(cname)?;
                self.buf.extend_from_slice(&c.seen_time.to_le_bytes());
                put_len(&mut self.buf, c.pel.len() as u64);
                for id in &c.pel {
                    self.buf.extend_from_slice(&id.to_be_bytes());
                }
                self.maybe_flush()?;
            }
        }
        Ok(())
    }

    fn set(&mut self, key: Option<&[u8]>, s: &Set) -> io::Result<()> {
        match s {
            Set::Ints(v) => {
                self.head(T_SET_INTSET, key)?;
                let mut blob = std::mem::take(&mut self.scratch);
                intset::encode(v, &mut blob);
                let r = self.string(&blob);
                self.scratch = blob;
                r
            }
            // Redis 7.0 has no listpack set: a packed set is written as a plain one.
            Set::Packed(_) | Set::Table(_) => {
                self.head(T_SET, key)?;
                put_len(&mut self.buf, s.len() as u64);
                match s {
                    Set::Packed(p) => {
                        for m in p.items() {
                            self.string(m)?;
                        }
                    }
                    Set::Table(t) => {
                        for m in t.iter() {
                            self.string(m)?;
                        }
                    }
                    Set::Ints(_) => {}
                }
                Ok(())
            }
        }
    }

    fn zset(&mut self, key: Option<&[u8]>, z: &ZSet) -> io::Result<()> {
        match z {
            ZSet::Packed(_) => {
                self.head(T_ZSET_LISTPACK, key)?;
                self.lp.clear();
                for (score, member) in z.iter() {
                    self.lp.push(member);
                    push_score(&mut self.lp, score);
                }
                self.listpack_string()
            }
            ZSet::Large(_) => {
                self.head(T_ZSET_2, key)?;
                put_len(&mut self.buf, z.len() as u64);
                for (score, member) in z.iter() {
                    self.string(member)?;
                    self.buf.extend_from_slice(&score.to_le_bytes());
                }
                Ok(())
            }
        }
    }

    fn list(&mut self, key: Option<&[u8]>, l: &List) -> io::Result<()> {
        self.head(T_LIST_QUICKLIST_2, key)?;
        // First pass: how many nodes (the count comes before them); second: write them.
        let nodes = plan_nodes(l).count();
        put_len(&mut self.buf, nodes as u64);
        let mut items = l.iter();
        for node in plan_nodes(l) {
            match node {
                Node::Plain => {
                    let item = items.next().unwrap_or_default();
                    put_len(&mut self.buf, NODE_PLAIN);
                    self.string(item)?;
                }
                Node::Packed(count) => {
                    put_len(&mut self.buf, NODE_PACKED);
                    self.lp.clear();
                    for item in items.by_ref().take(count) {
                        self.lp.push(item);
                    }
                    self.listpack_string()?;
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Node {
    Plain,
    Packed(usize),
}

/// How a list is cut into quicklist nodes: listpacks of at most [`NODE_BYTES`] (or one
/// element when it alone is larger), plain nodes for huge elements.
fn plan_nodes(l: &List) -> impl Iterator<Item = Node> + '_ {
    let mut items = l.iter().peekable();
    std::iter::from_fn(move || {
        let first = items.next()?;
        if first.len() >= PLAIN_ELEMENT {
            return Some(Node::Plain);
        }
        let mut bytes = 7 + listpack::entry_size(first);
        let mut count = 1;
        while let Some(next) = items.peek() {
            if next.len() >= PLAIN_ELEMENT {
                break;
            }
            let size = listpack::entry_size(next);
            if bytes + size > NODE_BYTES {
                break;
            }
            bytes += size;
            count += 1;
            items.next();
        }
        Some(Node::Packed(count))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdb_list_nodes_are_cut_at_8k() {
        let small: Vec<Vec<u8>> = (0..5000)
            .map(|i| format!("element-{i}").into_bytes())
            .collect();
        let l = List::from_items(small.iter().map(Vec::as_slice));
        let plan: Vec<Node> = plan_nodes(&l).collect();
        assert!(plan.len() > 1);
        assert_eq!(
            plan.iter()
                .map(|n| if let Node::Packed(c) = n { *c } else { 1 })
                .sum::<usize>(),
            5000
        );
        let big = vec![b'x'; 20_000];
        let l = List::from_items([&b"a"[..], &big, b"b"]);
        assert_eq!(
            plan_nodes(&l).collect::<Vec<_>>(),
            vec![Node::Packed(1), Node::Packed(1), Node::Packed(1)]
        );
    }

    #[test]
    fn rdb_scores_as_listpack_elements() {
        let mut lp = listpack::Builder::default();
        for s in [
            1.0,
            -3.0,
            1.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            1e300,
            0.1,
            4_503_599_627_370_496.0,
        ] {
            push_score(&mut lp, s);
        }
        let blob = lp.finish().to_vec();
        let items: Vec<Vec<u8>> = listpack::decode(&blob)
            .expect("valid")
            .iter()
            .map(StrRef::to_vec)
            .collect();
        let text: Vec<&str> = items
            .iter()
            .map(|b| std::str::from_utf8(b).expect("ascii"))
            .collect();
        assert_eq!(
            text,
            [
                "1",
                "-3",
                "1.5",
                "inf",
                "-inf",
                "-0",
                "1e300",
                "0.1",
                "4503599627370496"
            ]
        );
    }
}
