//! The RDB loader: a strict parser that never panics and never allocates more than the
//! bytes actually present justify, whatever a (damaged or hostile) file claims.
//!
//! - Strings are read in chunks of at most `CHUNK` bytes, so a length field of 2^60 fails
//!   at the end of the stream, not in the allocator; LZF lengths are checked against the
//!   format's maximum ratio before any buffer is made.
//! - Collections are built element by element with no preallocation from a count; every
//!   element consumes input, so a huge count also ends at the end of the stream.
//! - Blobs (listpack, ziplist, intset, zipmap) are validated whole before use.
//! - Duplicates (set members, hash fields, zset members) and NaN scores are refused, as
//!   Redis 7.0 refuses them; empty collections are skipped, as Redis 7.0 skips them.

use std::io::{BufReader, Read};

use super::crc64::crc64;
use super::write::*;
use super::{intset, legacy, listpack, lzf, Limits, LoadInfo, RdbError, RDB_VERSION};
use crate::entry::{Entry, Payload, StrRef, INLINE_STRING_MAX};
use crate::types::hash::Hash;
use crate::types::list::{End, List};
use crate::types::set::Set;
use crate::types::stream::{Consumer, Group, Pending, Stream, StreamId};
use crate::types::stream_node;
use crate::types::zset::ZSet;
use crate::value::Object;

/// Largest piece a string is read in.
const CHUNK: usize = 1 << 20;

/// The input stream with its offset and running CRC-64.
struct Input<R: Read> {
    r: BufReader<R>,
    offset: u64,
    crc: u64,
}

/// A length field, or the special-encoding marker of a string.
enum Length {
    Len(u64),
    Encoded(u8),
}

impl<R: Read> Input<R> {
    fn corrupt(&self, what: impl Into<String>) -> RdbError {
        RdbError::Corrupt {
            what: what.into(),
            offset: self.offset,
        }
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<(), RdbError> {
        let mut done = 0;
        while done < buf.len() {
            match self.r.read(&mut buf[done..]) {
                Ok(0) => {
                    self.offset += done as u64;
                    return Err(RdbError::ShortRead {
                        offset: self.offset,
                    });
                }
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(RdbError::Io {
                        offset: self.offset + done as u64,
                        source,
                    });
                }
            }
        }
        self.crc = crc64(self.crc, buf);
        self.offset += buf.len() as u64;
        Ok(())
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], RdbError> {
        let mut b = [0u8; N];
        self.fill(&mut b)?;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8, RdbError> {
        Ok(self.array::<1>()?[0])
    }

    fn length(&mut self) -> Result<Length, RdbError> {
        let b = self.u8()?;
        Ok(match b >> 6 {
            0 => Length::Len(u64::from(b & 0x3f)),
            1 => Length::Len(u64::from(b & 0x3f) << 8 | u64::from(self.u8()?)),
            3 => Length::Encoded(b & 0x3f),
            _ => match b {
                0x80 => Length::Len(u64::from(u32::from_be_bytes(self.array()?))),
                0x81 => Length::Len(u64::from_be_bytes(self.array()?)),
                _ => return Err(self.corrupt(format!("unknown length encoding 0x{b:02x}"))),
            },
        })
    }

    fn len(&mut self) -> Result<u64, RdbError> {
        match self.length()? {
            Length::Len(n) => Ok(n),
            Length::Encoded(_) => Err(self.corrupt("a string encoding where a length belongs")),
        }
    }

    /// A length used as a count or index in memory.
    fn usize(&mut self) -> Result<usize, RdbError> {
        let n = self.len()?;
        usize::try_from(n).map_err(|_| self.corrupt(format!("length {n} out of range")))
    }

    /// `n` raw bytes, read piecewise so that the buffer only grows with real data.
    fn raw(&mut self, n: u64) -> Result<Vec<u8>, RdbError> {
        let n = usize::try_from(n)
            .map_err(|_| self.corrupt(format!("string length {n} out of range")))?;
        let mut v = Vec::with_capacity(n.min(CHUNK));
        while v.len() < n {
            let start = v.len();
            v.resize(start + (n - start).min(CHUNK), 0);
            self.fill(&mut v[start..])?;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<Vec<u8>, RdbError> {
        let int = |n: i64| itoa::Buffer::new().format(n).as_bytes().to_vec();
        match self.length()? {
            Length::Len(n) => self.raw(n),
            Length::Encoded(ENC_INT8) => Ok(int(i64::from(i8::from_le_bytes(self.array()?)))),
            Length::Encoded(ENC_INT16) => Ok(int(i64::from(i16::from_le_bytes(self.array()?)))),
            Length::Encoded(ENC_INT32) => Ok(int(i64::from(i32::from_le_bytes(self.array()?)))),
            Length::Encoded(ENC_LZF) => {
                let clen = self.len()?;
                let ulen = self.len()?;
                let max = clen.saturating_mul(lzf::MAX_RATIO as u64);
                if ulen > max {
                    return Err(self.corrupt(format!(
                        "LZF string of {clen} bytes claims to expand to {ulen}"
                    )));
                }
                let packed = self.raw(clen)?;
                // ulen <= clen * 88 and clen bytes were read, so it fits a usize.
                let ulen = usize::try_from(ulen).unwrap_or(usize::MAX);
                lzf::decompress(&packed, ulen).map_err(|e| self.corrupt(e))
            }
            Length::Encoded(e) => Err(self.corrupt(format!("unknown string encoding {e}"))),
        }
    }

    /// A score of the old ZSET type: a length byte (253 nan, 254 inf, 255 -inf) and ASCII.
    fn text_score(&mut self) -> Result<f64, RdbError> {
        match self.u8()? {
            253 => Err(self.corrupt("Zset with NAN score detected")),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let text = self.raw(u64::from(n))?;
                parse_score(&text).ok_or_else(|| self.corrupt("invalid zset score"))
            }
        }
    }
}

/// A score written as text (listpacks, ziplists, the old ZSET type); NaN is refused.
fn parse_score(text: &[u8]) -> Option<f64> {
    let s: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    (!s.is_nan()).then_some(s)
}

fn elem_score(e: StrRef<'_>) -> Option<f64> {
    match e {
        StrRef::Int(n) => Some(n as f64),
        StrRef::Bytes(b) => parse_score(b),
    }
}

/// The bytes of a blob element, formatting an integer into `buf`.
fn elem<'a>(e: StrRef<'a>, buf: &'a mut itoa::Buffer) -> &'a [u8] {
    match e {
        StrRef::Bytes(b) => b,
        StrRef::Int(n) => buf.format(n).as_bytes(),
    }
}

/// A loaded value.
enum Value {
    Str(Vec<u8>),
    Obj(Object),
}

/// Collection builders that refuse duplicates, as Redis 7.0 does.
struct Build<'l> {
    limits: &'l Limits,
}

impl Build<'_> {
    fn hash_add(&self, h: &mut Hash, f: &[u8], v: &[u8]) -> Result<(), String> {
        if h.set(f, v, self.limits.hash) {
            Ok(())
        } else {
            Err("Duplicate hash fields detected".into())
        }
    }

    fn set_add(&self, s: &mut Set, m: &[u8]) -> Result<(), String> {
        if s.add(m, self.limits.set_intset) {
            Ok(())
        } else {
            Err("Duplicate set members detected".into())
        }
    }

    fn zset_add(&self, z: &mut ZSet, m: &[u8], score: f64) -> Result<(), String> {
        if score.is_nan() {
            return Err("Zset with NAN score detected".into());
        }
        if z.insert(m, score, self.limits.zset) {
            Ok(())
        } else {
            Err("Duplicate zset fields detected".into())
        }
    }

    fn hash_from_blob(&self, items: &[StrRef<'_>]) -> Result<Hash, String> {
        if !items.len().is_multiple_of(2) {
            return Err("hash blob with an odd number of elements".into());
        }
        let mut h = Hash::new();
        for pair in items.chunks_exact(2) {
            let (mut b1, mut b2) = (itoa::Buffer::new(), itoa::Buffer::new());
            self.hash_add(&mut h, elem(pair[0], &mut b1), elem(pair[1], &mut b2))?;
        }
        Ok(h)
    }

    fn zset_from_blob(&self, items: &[StrRef<'_>]) -> Result<ZSet, String> {
        if !items.len().is_multiple_of(2) {
            return Err("sorted set blob with an odd number of elements".into());
        }
        let mut z = ZSet::new();
        for pair in items.chunks_exact(2) {
            let mut b = itoa::Buffer::new();
            let score = elem_score(pair[1]).ok_or("invalid zset score")?;
            self.zset_add(&mut z, elem(pair[0], &mut b), score)?;
        }
        Ok(z)
    }
}

fn push_all(l: &mut List, items: &[StrRef<'_>]) {
    for &item in items {
        let mut b = itoa::Buffer::new();
        l.push(End::Tail, elem(item, &mut b));
    }
}

/// Reads the value of a key of type `ty`; None for an empty collection.
fn read_value<R: Read>(
    inp: &mut Input<R>,
    ty: u8,
    key: &[u8],
    limits: &Limits,
) -> Result<Option<Value>, RdbError> {
    let build = Build { limits };
    let start = inp.offset;
    // Errors found in a decoded blob or a builder point at the start of the value.
    let at = |what: String| RdbError::Corrupt {
        what,
        offset: start,
    };
    let blob_err = |what: &str| RdbError::Corrupt {
        what: what.to_string(),
        offset: start,
    };
    let obj = match ty {
        T_STRING => return Ok(Some(Value::Str(inp.string()?))),
        T_LIST => {
            let n = inp.len()?;
            let mut l = List::new();
            for _ in 0..n {
                l.push(End::Tail, &inp.string()?);
            }
            Object::List(l)
        }
        T_SET => {
            let n = inp.len()?;
            let mut s = Set::new();
            for _ in 0..n {
                let m = inp.string()?;
                build.set_add(&mut s, &m).map_err(|e| inp.corrupt(e))?;
            }
            Object::Set(s)
        }
        T_ZSET | T_ZSET_2 => {
            // Built large and converted once loaded, as Redis does (so that -0 stays
            // -0 in a set too large for a listpack).
            let n = inp.len()?;
            let mut z = ZSet::new_large();
            for _ in 0..n {
                let m = inp.string()?;
                let score = if ty == T_ZSET_2 {
                    f64::from_le_bytes(inp.array()?)
                } else {
                    inp.text_score()?
                };
                build
                    .zset_add(&mut z, &m, score)
                    .map_err(|e| inp.corrupt(e))?;
            }
            Object::ZSet(z.into_compact_if_fits(limits.zset))
        }
        T_HASH => {
            let n = inp.len()?;
            let mut h = Hash::new();
            for _ in 0..n {
                let f = inp.string()?;
                let v = inp.string()?;
                build.hash_add(&mut h, &f, &v).map_err(|e| inp.corrupt(e))?;
            }
            Object::Hash(h)
        }
        T_HASH_ZIPMAP => {
            let blob = inp.string()?;
            let items: Vec<StrRef<'_>> = legacy::zipmap(&blob)
                .map_err(blob_err)?
                .into_iter()
                .map(StrRef::Bytes)
                .collect();
            Object::Hash(build.hash_from_blob(&items).map_err(at)?)
        }
        T_LIST_ZIPLIST => {
            let blob = inp.string()?;
            let mut l = List::new();
            push_all(&mut l, &legacy::ziplist(&blob).map_err(blob_err)?);
            Object::List(l)
        }
        T_SET_INTSET => {
            let blob = inp.string()?;
            let ints = intset::decode(&blob).map_err(blob_err)?;
            if ints.len() <= limits.set_intset {
                Object::Set(Set::Ints(ints))
            } else {
                let mut s = Set::new();
                for n in ints {
                    build
                        .set_add(&mut s, itoa::Buffer::new().format(n).as_bytes())
                        .map_err(at)?;
                }
                Object::Set(s)
            }
        }
        T_ZSET_ZIPLIST | T_ZSET_LISTPACK => {
            let blob = inp.string()?;
            let items = if ty == T_ZSET_ZIPLIST {
                legacy::ziplist(&blob)
            } else {
                listpack::decode(&blob)
            }
            .map_err(blob_err)?;
            Object::ZSet(build.zset_from_blob(&items).map_err(at)?)
        }
        T_HASH_ZIPLIST | T_HASH_LISTPACK => {
            let blob = inp.string()?;
            let items = if ty == T_HASH_ZIPLIST {
                legacy::ziplist(&blob)
            } else {
                listpack::decode(&blob)
            }
            .map_err(blob_err)?;
            Object::Hash(build.hash_from_blob(&items).map_err(at)?)
        }
        T_LIST_QUICKLIST | T_LIST_QUICKLIST_2 => {
            let nodes = inp.len()?;
            let mut l = List::new();
            for _ in 0..nodes {
                let container = if ty == T_LIST_QUICKLIST_2 {
                    inp.len()?
                } else {
                    NODE_PACKED
                };
                let node_at = inp.offset;
                let blob = inp.string()?;
                let node_err = |what: &str| RdbError::Corrupt {
                    what: what.to_string(),
                    offset: node_at,
                };
                match (ty, container) {
                    (T_LIST_QUICKLIST, _) => {
                        push_all(&mut l, &legacy::ziplist(&blob).map_err(node_err)?)
                    }
                    (_, NODE_PACKED) => {
                        push_all(&mut l, &listpack::decode(&blob).map_err(node_err)?)
                    }
                    (_, NODE_PLAIN) => l.push(End::Tail, &blob),
                    (_, c) => {
                        return Err(node_err(&format!("unknown quicklist node container {c}")))
                    }
                }
            }
            Object::List(l)
        }
        T_STREAM_LISTPACKS | T_STREAM_LISTPACKS_2 => {
            return Ok(Some(Value::Obj(Object::Stream(Box::new(read_stream(inp, ty, start)?)))));
        }
        T_STREAM_LISTPACKS_3 => {
            return Err(RdbError::Unsupported {
                what: format!(
                    "Stream keys of Redis 7.2's encoding are not supported (key '{}', RDB type {ty})",
                    key.escape_ascii()
                ),
                offset: start,
            })
        }
        T_MODULE_PRE_GA | T_MODULE_2 => {
            return Err(RdbError::Unsupported {
                what: format!(
                    "Module data types are not supported (key '{}', RDB type {ty})",
                    key.escape_ascii()
                ),
                offset: start,
            })
        }
        _ => {
            return Err(RdbError::UnknownType {
                type_byte: ty,
                offset: start.saturating_sub(1),
            })
        }
    };
    Ok((!obj.is_empty_collection()).then_some(Value::Obj(obj)))
}

/// A stream (types 15 and 19), checked as Redis's deep integrity check does: node keys
/// of 16 bytes, every node's listpack (`stream_node::validate`), the length, groups and consumers
/// unique, every pending entry owned by exactly one consumer of its group.
fn read_stream<R: Read>(inp: &mut Input<R>, ty: u8, start: u64) -> Result<Stream, RdbError> {
    let at = |what: String| RdbError::Corrupt { what, offset: start };
    let mut s = Stream::new();
    let mut previous_last: Option<StreamId> = None;
    let nodes = inp.len()?;
    for _ in 0..nodes {
        let key = inp.string()?;
        let key: [u8; 16] = key
            .as_slice()
            .try_into()
            .map_err(|_| inp.corrupt("Stream node key entry is not the size of a stream ID"))?;
        let first = StreamId::from_be_bytes(&key);
        let blob = inp.string()?;
        let (live, _deleted, last) = stream_node::validate(&blob, first).map_err(|e| inp.corrupt(e))?;
        if previous_last.is_some_and(|p| p >= first) {
            return Err(inp.corrupt("Stream nodes are not in order"));
        }
        previous_last = Some(last);
        s.load_node(first, blob, live);
    }
    let length = inp.len()?;
    if length != s.len() as u64 {
        return Err(inp.corrupt("Stream length inconsistent with its entries"));
    }
    s.last_id = StreamId::new(inp.len()?, inp.len()?);
    if ty == T_STREAM_LISTPACKS_2 {
        // The first ID is the first entry's: recomputed, not trusted.
        let _first = StreamId::new(inp.len()?, inp.len()?);
        s.max_deleted_id = StreamId::new(inp.len()?, inp.len()?);
        s.entries_added = inp.len()?;
    } else {
        s.entries_added = length;
    }
    if previous_last.is_some_and(|id| id > s.last_id) {
        return Err(inp.corrupt("Stream entry ID greater than the stream's last ID"));
    }
    let groups = inp.len()?;
    for _ in 0..groups {
        let name = inp.string()?;
        let last_id = StreamId::new(inp.len()?, inp.len()?);
        let mut group = Group { last_id, ..Group::default() };
        group.entries_read = if ty == T_STREAM_LISTPACKS_2 {
            // Redis writes its -1 ("unknown") as a 64-bit length.
            let n = inp.len()?;
            (n != u64::MAX).then_some(n)
        } else {
            s.estimate_distance(last_id)
        };
        let pending = inp.len()?;
        for _ in 0..pending {
            let id = StreamId::from_be_bytes(&inp.array::<16>()?);
            let delivery_time = i64::from_le_bytes(inp.array::<8>()?);
            let delivery_count = inp.len()?;
            let p = Pending { delivery_time, delivery_count, consumer: Vec::new() };
            if group.pel.insert(id, p).is_some() {
                return Err(inp.corrupt("Duplicated global PEL entry loading stream consumer group"));
            }
        }
        let consumers = inp.len()?;
        for _ in 0..consumers {
            let cname = inp.string()?;
            let seen_time = i64::from_le_bytes(inp.array::<8>()?);
            let mut consumer = Consumer { seen_time, ..Consumer::default() };
            let owned = inp.len()?;
            for _ in 0..owned {
                let id = StreamId::from_be_bytes(&inp.array::<16>()?);
                match group.pel.get_mut(&id) {
                    Some(p) if p.consumer.is_empty() => p.consumer = cname.clone(),
                    Some(_) => return Err(inp.corrupt("Duplicated consumer PEL entry loading a stream consumer group")),
                    None => return Err(inp.corrupt("Consumer entry not found in group global PEL")),
                }
                consumer.pel.insert(id);
            }
            if group.consumers.insert(cname, consumer).is_some() {
                return Err(inp.corrupt("Duplicate stream consumer detected."));
            }
        }
        if group.pel.values().any(|p| p.consumer.is_empty()) {
            return Err(at("Stream CG PEL entry without consumer".into()));
        }
        if s.groups.insert(name, group).is_some() {
            return Err(inp.corrupt("Duplicated consumer group name"));
        }
    }
    Ok(s)
}

/// Value types that Redis 7.0 knows (8 and 20 never existed in a version-10 file).
fn known_type(ty: u8) -> bool {
    matches!(ty, 0..=7 | 9..=19 | 21)
}

/// The version in "REDIS0010", read as C's atoi would (leading digits).
fn version_of(digits: &[u8]) -> u32 {
    digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0, |v, b| v * 10 + u32::from(b - b'0'))
}

/// The entry for a loaded value.
fn entry_of(key: &[u8], value: Value, expire: Option<i64>, lru: u32) -> Entry {
    match value {
        // Long strings move into their object; shorter ones and integers are copied
        // inline by Entry::new.
        Value::Str(s) if s.len() > INLINE_STRING_MAX => {
            Entry::new(key, Payload::Object(Box::new(Object::Str(s))), expire, lru)
        }
        Value::Str(s) => Entry::new(key, Payload::Str(&s), expire, lru),
        Value::Obj(o) => Entry::new(key, Payload::Object(Box::new(o)), expire, lru),
    }
}

/// Why RESTORE refuses a payload (the texts are Redis's replies).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RestoreError {
    #[error("ERR DUMP payload version or checksum are wrong")]
    VersionOrChecksum,
    #[error("ERR Bad data format")]
    BadData,
    /// Valid Redis data that Basalt cannot hold (a stream, a module type).
    #[error("ERR Bad data format: {0}")]
    Unsupported(String),
}

/// RESTORE: the entry for `key` from a DUMP payload (see `write::dump_payload`), checked
/// as Redis 7.0 checks it: at least the 10-byte footer, an RDB version it knows, the
/// CRC-64; then one value of a known type, built with `limits` (so encodings follow the
/// server's thresholds), never an empty collection.
pub fn restore(
    payload: &[u8],
    key: &[u8],
    expire_at_ms: Option<i64>,
    lru: u32,
    limits: &Limits,
) -> Result<Entry, RestoreError> {
    let Some(body_len) = payload.len().checked_sub(10) else {
        return Err(RestoreError::VersionOrChecksum);
    };
    let footer = &payload[body_len..];
    let version = u32::from(u16::from_le_bytes([footer[0], footer[1]]));
    let mut stored = [0u8; 8];
    stored.copy_from_slice(&footer[2..]);
    if version > RDB_VERSION || crc64(0, &payload[..body_len + 2]) != u64::from_le_bytes(stored) {
        return Err(RestoreError::VersionOrChecksum);
    }
    let mut inp = Input {
        r: BufReader::new(&payload[..body_len]),
        offset: 0,
        crc: 0,
    };
    let ty = inp.u8().map_err(|_| RestoreError::BadData)?;
    if !known_type(ty) {
        return Err(RestoreError::BadData);
    }
    match read_value(&mut inp, ty, key, limits) {
        Ok(Some(value)) => Ok(entry_of(key, value, expire_at_ms, lru)),
        Ok(None) => Err(RestoreError::BadData),
        Err(RdbError::Unsupported { what, .. }) => Err(RestoreError::Unsupported(what)),
        Err(_) => Err(RestoreError::BadData),
    }
}

/// FUNCTION RESTORE: the library codes of a FUNCTION DUMP payload (see
/// `write::functions_payload`), checked as RESTORE's payloads are; Err is Redis's text.
pub fn functions_of_payload(payload: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    const WRONG: &str = "ERR DUMP payload version or checksum are wrong";
    let Some(body_len) = payload.len().checked_sub(10) else { return Err(WRONG) };
    let footer = &payload[body_len..];
    let version = u32::from(u16::from_le_bytes([footer[0], footer[1]]));
    let mut stored = [0u8; 8];
    stored.copy_from_slice(&footer[2..]);
    if version > RDB_VERSION || crc64(0, &payload[..body_len + 2]) != u64::from_le_bytes(stored) {
        return Err(WRONG);
    }
    let mut inp = Input { r: BufReader::new(&payload[..body_len]), offset: 0, crc: 0 };
    let mut codes = Vec::new();
    while (inp.offset as usize) < body_len {
        match inp.u8() {
            Ok(OP_FUNCTION2) => codes.push(inp.string().map_err(|_| "ERR function payload is corrupt")?),
            Ok(OP_FUNCTION) => return Err("ERR Pre-GA function format is not supported"),
            _ => return Err("ERR given type is not a function"),
        }
    }
    Ok(codes)
}

/// Reads a whole RDB stream, calling `on_entry(db, entry)` for each key in file order
/// (keys whose expiry has passed are passed too: the caller decides; every entry has
/// lru 0). Verifies the CRC-64 when the file has a non-zero one. Stops after the
/// checksum, reading nothing beyond it. The database number is the file's: the caller
/// checks it against its own count. An error from `on_entry` stops the load and is
/// returned as is.
pub fn load<R: Read>(
    r: R,
    limits: &Limits,
    on_entry: impl FnMut(usize, Entry) -> Result<(), RdbError>,
) -> Result<LoadInfo, RdbError> {
    load_with_aux(r, limits, |_, _| {}, on_entry)
}

/// As [`load`], also calling `on_aux(name, value)` for each AUX field as it is read
/// (a loader shows `used-mem` while it loads, as Redis's `loading_rdb_used_mem`).
pub fn load_with_aux<R: Read>(
    r: R,
    limits: &Limits,
    mut on_aux: impl FnMut(&[u8], &[u8]),
    mut on_entry: impl FnMut(usize, Entry) -> Result<(), RdbError>,
) -> Result<LoadInfo, RdbError> {
    let mut inp = Input {
        r: BufReader::with_capacity(64 * 1024, r),
        offset: 0,
        crc: 0,
    };
    let magic: [u8; 9] = inp.array()?;
    if &magic[..5] != b"REDIS" {
        return Err(RdbError::Signature);
    }
    let version = version_of(&magic[5..]);
    if !(1..=RDB_VERSION).contains(&version) {
        return Err(RdbError::Version { version });
    }
    let mut info = LoadInfo {
        version,
        ..LoadInfo::default()
    };
    let mut db = 0usize;
    let mut expire_at_ms: Option<i64> = None;
    loop {
        let op_at = inp.offset;
        let op = inp.u8()?;
        match op {
            OP_EOF => break,
            OP_SELECTDB => db = inp.usize()?,
            OP_RESIZEDB => {
                inp.len()?;
                inp.len()?;
            }
            OP_AUX => {
                let name = inp.string()?;
                let value = inp.string()?;
                on_aux(&name, &value);
                info.aux.push((name, value));
            }
            OP_EXPIRETIME_MS => expire_at_ms = Some(i64::from_le_bytes(inp.array()?)),
            OP_EXPIRETIME => {
                expire_at_ms = Some(i64::from(i32::from_le_bytes(inp.array()?)) * 1000)
            }
            OP_IDLE => {
                inp.len()?;
            }
            OP_FREQ => {
                inp.u8()?;
            }
            OP_FUNCTION2 => info.functions.push(inp.string()?),
            OP_FUNCTION => {
                return Err(RdbError::Unsupported {
                    what: "Functions in the format of Redis 7.0's release candidates are not supported"
                        .into(),
                    offset: op_at,
                })
            }
            OP_MODULE_AUX => {
                return Err(RdbError::Unsupported {
                    what: "Module auxiliary data in RDB files is not supported".into(),
                    offset: op_at,
                })
            }
            ty if known_type(ty) => {
                let key = inp.string()?;
                let value = read_value(&mut inp, ty, &key, limits).map_err(|e| match e {
                    RdbError::Corrupt { what, offset } => RdbError::Corrupt {
                        what: format!("key '{}': {what}", key.escape_ascii()),
                        offset,
                    },
                    other => other,
                })?;
                let expire = expire_at_ms.take();
                let Some(value) = value else {
                    info.empty_keys_skipped += 1;
                    continue;
                };
                let entry = entry_of(&key, value, expire, 0);
                info.keys += 1;
                on_entry(db, entry)?;
            }
            other => {
                return Err(RdbError::UnknownType {
                    type_byte: other,
                    offset: op_at,
                })
            }
        }
    }
    let computed = inp.crc;
    if version >= 5 {
        let end = inp.offset;
        let stored = u64::from_le_bytes(inp.array()?);
        if stored != 0 && stored != computed {
            return Err(RdbError::Checksum {
                computed,
                stored,
                offset: end,
            });
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::write::{put_int_encoded, put_len};

    fn input(bytes: &[u8]) -> Input<&[u8]> {
        Input {
            r: BufReader::new(bytes),
            offset: 0,
            crc: 0,
        }
    }

    #[test]
    fn rdb_lengths_round_trip() {
        let values = [
            0u64,
            1,
            63,
            64,
            255,
            16_383,
            16_384,
            65_535,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            u64::MAX,
        ];
        let mut buf = Vec::new();
        for &v in &values {
            put_len(&mut buf, v);
        }
        let sizes: Vec<usize> = values
            .iter()
            .map(|&v| {
                let mut b = Vec::new();
                put_len(&mut b, v);
                b.len()
            })
            .collect();
        assert_eq!(sizes, [1, 1, 1, 2, 2, 2, 5, 5, 5, 9, 9]);
        let mut inp = input(&buf);
        for &v in &values {
            assert_eq!(inp.len().expect("length"), v);
        }
        assert!(
            matches!(inp.len(), Err(RdbError::ShortRead { offset }) if offset == buf.len() as u64)
        );
        // The 14-bit form is big-endian: 0x41 0x00 is 256.
        assert_eq!(input(&[0x41, 0x00]).len().expect("length"), 256);
        assert_eq!(input(&[0x80, 0, 0, 1, 0]).len().expect("length"), 256);
        assert!(input(&[0x82]).len().is_err());
    }

    #[test]
    fn rdb_int_encoded_strings_round_trip() {
        for n in [
            0i64,
            -1,
            127,
            -128,
            128,
            -129,
            32_767,
            -32_768,
            32_768,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
        ] {
            let mut buf = Vec::new();
            assert!(put_int_encoded(&mut buf, n));
            assert_eq!(
                input(&buf).string().expect("string"),
                n.to_string().into_bytes()
            );
        }
        assert!(!put_int_encoded(&mut Vec::new(), i64::from(i32::MAX) + 1));
        // LZF: compressed length 4, original 3: literal run "abc".
        assert_eq!(
            input(&[0xc3, 4, 3, 2, b'a', b'b', b'c'])
                .string()
                .expect("lzf"),
            b"abc"
        );
        // A claimed expansion beyond LZF's ratio is refused before allocating.
        assert!(
            input(&[0xc3, 4, 0x81, 0, 0, 1, 0, 0, 0, 0, 0, 2, b'a', b'b', b'c'])
                .string()
                .is_err()
        );
        // A huge plain length with little data is a short read, not an allocation.
        assert!(matches!(
            input(&[0x81, 0x10, 0, 0, 0, 0, 0, 0, 0, b'x']).string(),
            Err(RdbError::ShortRead { offset: 10 })
        ));
    }
}
