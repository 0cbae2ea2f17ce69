//! One key and its value in a single heap allocation, addressed by a thin pointer.
//!
//! Memory per key is a headline figure of Basalt, so a table slot is 8 bytes (a thin
//! pointer) and the key, its metadata and a small value share one allocation: for
//! `key:123456 -> value:123456` that is a 32-byte allocator size class, against Redis's
//! dictEntry + robj + two sds strings. Small collections (packed hashes and sorted
//! sets, one-chunk lists, intsets, up to `inline::INLINE_MAX_BYTES`) are stored inline
//! too, in the compact forms of `inline.rs`: one allocation per key where the boxed form
//! took three or four. Strings up to [`INLINE_STRING_MAX`] bytes live inline too (those
//! over [`INLINE_MAX`] are "raw" to OBJECT ENCODING, as Redis's): a boxed string cost
//! an `Object` allocation besides its bytes, about 80 bytes a key (a 1,000-byte value:
//! 1,106 bytes against Redis's 1,072). Values too mutable or too large to live inline
//! (strings that APPEND/SETRANGE/SETBIT touched, strings over [`INLINE_STRING_MAX`],
//! large collections and hash-table sets) live in a boxed [`Object`] that the blob
//! points to.
//!
//! Commands reach an inline collection through [`ObjMut`] / [`ObjView`]: the compact
//! form is decoded into an ordinary [`Object`] (buffer from a per-thread pool), and
//! `ObjMut` writes the result back when dropped, boxing it if it has outgrown the inline
//! form (converted to a table, or above the size limit).
//!
//! This module owns the blob layout and all of its `unsafe`; everything above it (the
//! shard, the commands) sees only the safe methods. It must not know about tables,
//! locking or expiry policy: it stores an expiry time, it does not act on it.
//!
//! Format (in-memory entry blob, alignment 1):
//! ```text
//! [flags: u8]                       bits 0-1 kind (0 inline string, 1 int, 2 object,
//!                                   3 inline collection), bit 2 has-expire,
//!                                   bit 3 capture mark (owned by the shard, kept by every rewrite)
//! [expire_at_ms: i64 LE]            only when has-expire
//! [lru: u32 LE]                     last access, seconds (for OBJECT IDLETIME)
//! [key_len: LEB128][key bytes]
//! payload: inline string -> [len: LEB128][bytes]
//!          int           -> [i64 LE]
//!          object        -> [*mut Object, 8 bytes LE]
//!          collection    -> [type: u8 (InlineType)][len: LEB128][compact form, len bytes]
//! ```

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};

use crate::inline::{self, Compact, InlineType};
use crate::types::packed::Packed;
use crate::value::Object;
use crate::varint;

/// Strings up to this length are "embstr" to OBJECT ENCODING (Redis's limit); longer
/// ones are "raw", inline or boxed.
pub const INLINE_MAX: usize = 44;

/// Strings up to this length are stored inline, in the entry's own allocation (beyond
/// it the saved box is under 0.5% of the value, and in-place rewrites copy more).
pub const INLINE_STRING_MAX: usize = 16 * 1024;

const KIND_MASK: u8 = 0b11;
const KIND_INLINE: u8 = 0;
const KIND_INT: u8 = 1;
const KIND_OBJECT: u8 = 2;
const KIND_PACKED: u8 = 3;
const HAS_EXPIRE: u8 = 1 << 2;
/// The capture mark: the shard compares it with its own parity to know whether a running
/// point-in-time capture has this entry yet (see `shard.rs`). Every method that rebuilds
/// the blob carries it over.
const MARK: u8 = 1 << 3;

pub use crate::str_ref::StrRef;

/// A borrowed view of an entry's value.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'a> {
    Str(StrRef<'a>),
    Obj(ObjRef<'a>),
}

/// A collection value as the entry holds it: boxed, or inline in its compact form.
#[derive(Clone, Copy, Debug)]
pub enum ObjRef<'a> {
    Boxed(&'a Object),
    Inline(InlineRef<'a>),
}

/// An inline collection: its type and compact form.
#[derive(Clone, Copy, Debug)]
pub struct InlineRef<'a> {
    ty: InlineType,
    compact: &'a [u8],
}

impl<'a> ObjRef<'a> {
    /// The value's type.
    pub fn value_type(&self) -> crate::ValueType {
        match self {
            ObjRef::Boxed(o) => o.value_type(),
            ObjRef::Inline(i) => i.ty.value_type(),
        }
    }

    /// OBJECT ENCODING's name.
    pub fn encoding(&self) -> &'static str {
        match self {
            ObjRef::Boxed(o) => o.encoding(),
            ObjRef::Inline(i) => i.ty.encoding(),
        }
    }

    /// Number of elements (0 for a string).
    pub fn len(&self) -> usize {
        match self {
            ObjRef::Boxed(o) => o.len(),
            ObjRef::Inline(i) => inline::len(i.ty, i.compact),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value as an [`Object`]: borrowed when boxed, decoded when inline.
    pub fn view(self) -> ObjView<'a> {
        match self {
            ObjRef::Boxed(o) => ObjView::Borrowed(o),
            ObjRef::Inline(i) => ObjView::Decoded(Some(i.decode())),
        }
    }
}

impl<'a> InlineRef<'a> {
    /// The value stored after `key` (a hash field's value, a sorted set member's score
    /// item), read from the compact form without decoding it; None for other types.
    pub fn value_of(&self, key: &[u8]) -> Option<&'a [u8]> {
        matches!(self.ty, InlineType::Hash | InlineType::ZSet)
            .then(|| Packed::compact_value_of(self.compact, key))
            .flatten()
    }

    fn decode(&self) -> Object {
        inline::decode(self.ty, self.compact)
    }
}

/// An entry's collection for reading (see [`ObjRef::view`]).
pub enum ObjView<'a> {
    Borrowed(&'a Object),
    /// Always Some until dropped.
    Decoded(Option<Object>),
}

impl std::ops::Deref for ObjView<'_> {
    type Target = Object;
    fn deref(&self) -> &Object {
        match self {
            ObjView::Borrowed(o) => o,
            ObjView::Decoded(o) => o.as_ref().expect("present until dropped"),
        }
    }
}

impl Drop for ObjView<'_> {
    fn drop(&mut self) {
        if let ObjView::Decoded(o) = self {
            if let Some(o) = o.take() {
                inline::recycle(o);
            }
        }
    }
}

/// An entry's collection for changing: the boxed object itself, or an inline one
/// decoded, which is written back into the entry when this is dropped.
pub enum ObjMut<'a> {
    Boxed(&'a mut Object),
    /// The object is always Some until dropped.
    Decoded(&'a mut Entry, Option<Object>),
}

impl std::ops::Deref for ObjMut<'_> {
    type Target = Object;
    fn deref(&self) -> &Object {
        match self {
            ObjMut::Boxed(o) => o,
            ObjMut::Decoded(_, o) => o.as_ref().expect("present until dropped"),
        }
    }
}

impl std::ops::DerefMut for ObjMut<'_> {
    fn deref_mut(&mut self) -> &mut Object {
        match self {
            ObjMut::Boxed(o) => o,
            ObjMut::Decoded(_, o) => o.as_mut().expect("present until dropped"),
        }
    }
}

impl Drop for ObjMut<'_> {
    fn drop(&mut self) {
        if let ObjMut::Decoded(entry, obj) = self {
            if let Some(obj) = obj.take() {
                entry.put_back(obj);
            }
        }
    }
}

/// What a new entry's value is built from.
pub enum Payload<'a> {
    /// A string; stored as int, inline or boxed depending on its content and size.
    Str(&'a [u8]),
    /// A string kept as a string even when it reads as an integer, inline or boxed by
    /// its size: INCRBYFLOAT's result, which Redis stores as embstr ("8", not int).
    StrNotInt(&'a [u8]),
    /// An integer string.
    Int(i64),
    /// A boxed object (a raw string or a collection).
    Object(Box<Object>),
}

/// A key, its metadata and its value. Owns its allocation and any boxed object.
///
/// The blob's address is kept in 6 bytes: user-space addresses on x86-64 and aarch64
/// Linux fit in 48 bits (the kernel hands out higher ones only to mmap calls that ask
/// for them). A hash table slot is then 6 bytes plus hashbrown's control byte, 7 in
/// all instead of 9, which is about a fifth of the memory per key.
pub struct Entry([u8; 6]);

/// Addresses must fit the 6 bytes an Entry keeps.
const ADDRESS_LIMIT: usize = 1 << 48;

// SAFETY: an Entry uniquely owns its blob and the Object it points to (no interior
// sharing), and Object is Send, so moving an Entry to another thread is sound.
unsafe impl Send for Entry {}
// SAFETY: &Entry only allows reads of the blob; no interior mutability.
unsafe impl Sync for Entry {}

/// Reads a LEB128 varint at `p`. Returns (value, bytes read).
///
/// # Safety
/// `p` must point at a varint written by `write_varint` inside a live blob.
#[inline]
unsafe fn read_varint(p: *const u8) -> (usize, usize) {
    // SAFETY: the caller guarantees a complete varint at p, so its first byte.
    let first = unsafe { *p };
    if first & 0x80 == 0 {
        return (usize::from(first), 1);
    }
    let mut n = 0usize;
    let mut shift = 0;
    let mut i = 0;
    loop {
        // SAFETY: the caller guarantees a complete varint at p.
        let b = unsafe { *p.add(i) };
        n |= ((b & 0x7f) as usize) << shift;
        i += 1;
        if b & 0x80 == 0 {
            return (n, i);
        }
        shift += 7;
    }
}

/// Where the parts of a blob lie, computed from its header.
struct Parts {
    flags: u8,
    payload_at: usize,
    total: usize,
}

impl Entry {
    /// Builds an entry. Strings that are canonical integers become ints, strings up to
    /// [`INLINE_MAX`] bytes are inline, longer ones are boxed.
    pub fn new(key: &[u8], payload: Payload<'_>, expire_at_ms: Option<i64>, lru: u32) -> Entry {
        match payload {
            Payload::Str(s) => {
                // Redis's int encoding: canonical decimals that round-trip.
                if let Some(n) = crate::types::string::parse_i64(s) {
                    Self::build(key, Kind::Int(n), expire_at_ms, lru)
                } else {
                    Self::new(key, Payload::StrNotInt(s), expire_at_ms, lru)
                }
            }
            Payload::StrNotInt(s) => {
                if s.len() <= INLINE_STRING_MAX {
                    Self::build(key, Kind::Inline(s), expire_at_ms, lru)
                } else {
                    let obj = Box::new(Object::Str(s.to_vec()));
                    Self::build(key, Kind::Object(Box::into_raw(obj)), expire_at_ms, lru)
                }
            }
            Payload::Int(n) => Self::build(key, Kind::Int(n), expire_at_ms, lru),
            Payload::Object(obj) => match inline::compact(&obj) {
                Some(compact) => {
                    let entry = Self::build(key, Kind::Packed(compact), expire_at_ms, lru);
                    inline::recycle(*obj);
                    entry
                }
                None => Self::build(key, Kind::Object(Box::into_raw(obj)), expire_at_ms, lru),
            },
        }
    }

    fn build(key: &[u8], kind: Kind<'_>, expire_at_ms: Option<i64>, lru: u32) -> Entry {
        let total = Self::encoded_len(key, &kind, expire_at_ms);
        Self::alloc_with(total, |buf| Self::encode(buf, key, kind, expire_at_ms, lru))
    }

    /// Size of the blob that [`Entry::encode`] lays out.
    fn encoded_len(key: &[u8], kind: &Kind<'_>, expire_at_ms: Option<i64>) -> usize {
        let header = 1 + if expire_at_ms.is_some() { 8 } else { 0 } + 4;
        header + varint::len(key.len()) + key.len() + kind.payload_len()
    }

    /// Lays out a blob (see the module's Format) in `buf`, which is exactly
    /// [`Entry::encoded_len`] bytes.
    fn encode(buf: &mut [u8], key: &[u8], kind: Kind<'_>, expire_at_ms: Option<i64>, lru: u32) {
        let mut at = 0;
        let kind_bits = match kind {
            Kind::Inline(_) => KIND_INLINE,
            Kind::Int(_) => KIND_INT,
            Kind::Object(_) => KIND_OBJECT,
            Kind::Packed(..) => KIND_PACKED,
        };
        buf[0] = kind_bits
            | if expire_at_ms.is_some() {
                HAS_EXPIRE
            } else {
                0
            };
        at += 1;
        if let Some(t) = expire_at_ms {
            buf[at..at + 8].copy_from_slice(&t.to_le_bytes());
            at += 8;
        }
        buf[at..at + 4].copy_from_slice(&lru.to_le_bytes());
        at += 4;
        at += varint::write(&mut buf[at..], key.len());
        buf[at..at + key.len()].copy_from_slice(key);
        at += key.len();
        match kind {
            Kind::Inline(s) => {
                at += varint::write(&mut buf[at..], s.len());
                buf[at..at + s.len()].copy_from_slice(s);
                at += s.len();
            }
            Kind::Int(n) => {
                buf[at..at + 8].copy_from_slice(&n.to_le_bytes());
                at += 8;
            }
            Kind::Object(p) => {
                buf[at..at + 8].copy_from_slice(&(p as usize as u64).to_le_bytes());
                at += 8;
            }
            Kind::Packed(compact) => at += write_packed_payload(&mut buf[at..], &compact),
        }
        debug_assert_eq!(at, buf.len());
    }

    /// Replaces the value and expiry in place, without allocating, when the new blob
    /// has exactly the old one's size and neither holds a boxed object (the common SET
    /// over an existing key). Returns false, changing nothing, otherwise.
    pub(crate) fn overwrite_string(
        &mut self,
        value: &[u8],
        expire_at_ms: Option<i64>,
        lru: u32,
    ) -> bool {
        let parts = self.parts();
        if parts.flags & KIND_MASK == KIND_OBJECT {
            return false;
        }
        let kind = match crate::types::string::parse_i64(value) {
            Some(n) => Kind::Int(n),
            None if value.len() <= INLINE_STRING_MAX => Kind::Inline(value),
            None => return false,
        };
        let key = self.key();
        let total = Self::encoded_len(key, &kind, expire_at_ms);
        if total != parts.total {
            return false;
        }
        // The key is read from this very blob, so the new one is laid out aside first.
        let mut blob = vec_on_stack_or_heap(total);
        let bytes = blob.as_mut_slice();
        Self::encode(bytes, key, kind, expire_at_ms, lru);
        bytes[0] |= parts.flags & MARK;
        // SAFETY: the blob is exactly bytes.len() long and uniquely borrowed; the old
        // value owns no heap memory (not an object), so nothing leaks.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr(), bytes.len()) };
        true
    }

    /// Allocates a blob of `total` bytes and has `fill` write all of it.
    fn alloc_with(total: usize, fill: impl FnOnce(&mut [u8])) -> Entry {
        let layout = blob_layout(total);
        // SAFETY: layout has non-zero size (every blob has at least a flags byte, lru
        // and a key length); the block is zeroed before `fill` sees it as a slice, and
        // it becomes the entry only after `fill` returned.
        unsafe {
            let p = alloc(layout);
            if p.is_null() {
                handle_alloc_error(layout);
            }
            // An invariant of the platform (see the type's doc), not of any input.
            assert!(
                (p as usize) < ADDRESS_LIMIT,
                "allocator returned an address above 2^48"
            );
            std::ptr::write_bytes(p, 0, total);
            fill(std::slice::from_raw_parts_mut(p, total));
            let mut packed = [0u8; 6];
            packed.copy_from_slice(&(p as usize as u64).to_le_bytes()[..6]);
            Entry(packed)
        }
    }

    /// The blob's address.
    #[inline]
    fn ptr(&self) -> *mut u8 {
        let mut b = [0u8; 8];
        b[..6].copy_from_slice(&self.0);
        u64::from_le_bytes(b) as usize as *mut u8
    }

    /// Where the LRU bytes start (after the flags byte and the expiry, if any).
    #[inline]
    fn lru_at(&self) -> usize {
        // SAFETY: every blob starts with its flags byte.
        let flags = unsafe { *self.ptr() };
        1 + if flags & HAS_EXPIRE != 0 { 8 } else { 0 }
    }

    /// Where the key starts and its length: the header up to the key, without the
    /// payload's length that `parts` also decodes (a key comparison, run on every
    /// probe of a lookup, needs no more).
    #[inline]
    fn key_span(&self) -> (usize, usize) {
        let lru_at = self.lru_at();
        // SAFETY: the key's varint length follows the 4 LRU bytes (`build`'s layout).
        let (key_len, n) = unsafe { read_varint(self.ptr().add(lru_at + 4)) };
        (lru_at + 4 + n, key_len)
    }

    fn parts(&self) -> Parts {
        let p = self.ptr();
        // SAFETY: the blob was written by `build` with this exact layout and is live
        // for as long as &self.
        unsafe {
            let flags = *p;
            let (key_at, key_len) = self.key_span();
            let payload_at = key_at + key_len;
            let payload_len = match flags & KIND_MASK {
                KIND_INLINE => {
                    let (len, n) = read_varint(p.add(payload_at));
                    n + len
                }
                KIND_PACKED => {
                    let (len, n) = read_varint(p.add(payload_at + 1));
                    1 + n + len
                }
                _ => 8,
            };
            Parts {
                flags,
                payload_at,
                total: payload_at + payload_len,
            }
        }
    }

    fn bytes(&self) -> &[u8] {
        let total = self.parts().total;
        // SAFETY: the blob is `total` bytes long and immutable behind &self.
        unsafe { std::slice::from_raw_parts(self.ptr(), total) }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        let (key_at, key_len) = self.key_span();
        // SAFETY: key bytes lie inside the blob at key_at..key_at+key_len.
        unsafe { std::slice::from_raw_parts(self.ptr().add(key_at), key_len) }
    }

    /// Absolute expiry time in Unix milliseconds, if the key has one.
    pub fn expire_at_ms(&self) -> Option<i64> {
        let p = self.ptr();
        // SAFETY: flags byte, then the 8-byte expiry when HAS_EXPIRE is set.
        unsafe {
            if *p & HAS_EXPIRE == 0 {
                return None;
            }
            let mut b = [0u8; 8];
            std::ptr::copy_nonoverlapping(p.add(1), b.as_mut_ptr(), 8);
            Some(i64::from_le_bytes(b))
        }
    }

    /// True when the key has an expiry time at or before `now_ms`.
    pub fn is_expired(&self, now_ms: i64) -> bool {
        matches!(self.expire_at_ms(), Some(t) if t <= now_ms)
    }

    /// The capture mark (see [`MARK`]).
    #[inline]
    pub(crate) fn mark(&self) -> bool {
        // SAFETY: every blob starts with its flags byte.
        unsafe { *self.ptr() & MARK != 0 }
    }

    /// Sets the capture mark; nothing else changes.
    #[inline]
    pub(crate) fn set_mark(&mut self, on: bool) {
        // SAFETY: the flags byte, uniquely borrowed through &mut self.
        unsafe {
            let p = self.ptr();
            *p = if on { *p | MARK } else { *p & !MARK };
        }
    }

    /// Last access time in seconds (the server's LRU clock).
    #[inline]
    pub fn lru(&self) -> u32 {
        let at = self.lru_at();
        let mut b = [0u8; 4];
        // SAFETY: 4 lru bytes at lru_at inside the blob.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr().add(at), b.as_mut_ptr(), 4) };
        u32::from_le_bytes(b)
    }

    /// Records an access.
    #[inline]
    pub fn set_lru(&mut self, lru: u32) {
        let at = self.lru_at();
        // SAFETY: 4 lru bytes at lru_at inside the blob, uniquely borrowed.
        unsafe { std::ptr::copy_nonoverlapping(lru.to_le_bytes().as_ptr(), self.ptr().add(at), 4) };
    }

    fn object_ptr(&self, parts: &Parts) -> *mut Object {
        let mut b = [0u8; 8];
        // SAFETY: an object entry's payload is the 8-byte pointer.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr().add(parts.payload_at), b.as_mut_ptr(), 8)
        };
        u64::from_le_bytes(b) as usize as *mut Object
    }

    /// The value.
    pub fn value(&self) -> ValueRef<'_> {
        let parts = self.parts();
        let p = self.ptr();
        match parts.flags & KIND_MASK {
            KIND_INLINE => {
                // SAFETY: inline payload is a varint length then that many bytes.
                unsafe {
                    let (len, n) = read_varint(p.add(parts.payload_at));
                    ValueRef::Str(StrRef::Bytes(std::slice::from_raw_parts(
                        p.add(parts.payload_at + n),
                        len,
                    )))
                }
            }
            KIND_INT => {
                let mut b = [0u8; 8];
                // SAFETY: int payload is 8 bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(p.add(parts.payload_at), b.as_mut_ptr(), 8)
                };
                ValueRef::Str(StrRef::Int(i64::from_le_bytes(b)))
            }
            KIND_PACKED => ValueRef::Obj(ObjRef::Inline(self.inline_ref(&parts))),
            _ => {
                // SAFETY: the pointer came from Box::into_raw and is owned by this entry.
                let obj = unsafe { &*self.object_ptr(&parts) };
                match obj {
                    Object::Str(v) => ValueRef::Str(StrRef::Bytes(v)),
                    _ => ValueRef::Obj(ObjRef::Boxed(obj)),
                }
            }
        }
    }

    fn inline_ref(&self, parts: &Parts) -> InlineRef<'_> {
        // SAFETY: a packed payload is a type byte, a varint length and that many bytes,
        // inside the blob, immutable behind &self.
        unsafe {
            let p = self.ptr().add(parts.payload_at);
            let (len, n) = read_varint(p.add(1));
            InlineRef {
                ty: InlineType::from_tag(*p),
                compact: std::slice::from_raw_parts(p.add(1 + n), len),
            }
        }
    }

    /// The value as an object to change, if it is one (raw strings included); an inline
    /// collection is written back when the returned guard drops.
    pub fn object_mut(&mut self) -> Option<ObjMut<'_>> {
        let parts = self.parts();
        match parts.flags & KIND_MASK {
            // SAFETY: owned pointer from Box::into_raw; &mut self gives unique access.
            KIND_OBJECT => Some(ObjMut::Boxed(unsafe { &mut *self.object_ptr(&parts) })),
            KIND_PACKED => {
                let obj = self.inline_ref(&parts).decode();
                Some(ObjMut::Decoded(self, Some(obj)))
            }
            _ => None,
        }
    }

    /// Stores a collection decoded from this entry's inline form back: inline when its
    /// packed form still fits, boxed otherwise. Key, expiry, lru and mark are kept.
    fn put_back(&mut self, obj: Object) {
        let Some(compact) = inline::compact(&obj) else {
            self.replace_payload(Kind::Object(Box::into_raw(Box::new(obj))));
            return;
        };
        let parts = self.parts();
        let payload_len = packed_payload_len(&compact);
        if parts.flags & KIND_MASK == KIND_PACKED && parts.payload_at + payload_len == parts.total {
            // SAFETY: the payload region lies inside the blob, uniquely borrowed, and
            // holds no pointer (the old value was inline too).
            let payload = unsafe {
                std::slice::from_raw_parts_mut(self.ptr().add(parts.payload_at), payload_len)
            };
            write_packed_payload(payload, &compact);
        } else {
            let old = self.bytes();
            let head = &old[..parts.payload_at];
            let fresh = Entry::alloc_with(parts.payload_at + payload_len, |buf| {
                buf[..head.len()].copy_from_slice(head);
                buf[0] = (buf[0] & !KIND_MASK) | KIND_PACKED;
                write_packed_payload(&mut buf[head.len()..], &compact);
            });
            // The old value, if boxed, is dropped with the old entry.
            *self = fresh;
        }
        inline::recycle(obj);
    }

    /// OBJECT ENCODING's name for any value, as Redis 7.0 reports it.
    pub fn encoding(&self) -> &'static str {
        match self.parts().flags & KIND_MASK {
            KIND_INT => "int",
            KIND_INLINE => self.inline_string_encoding(),
            KIND_PACKED => self.inline_ref(&self.parts()).ty.encoding(),
            _ => self.object_ref().map_or("raw", Object::encoding),
        }
    }

    /// True when the value is a collection with no elements (which must not stay in the
    /// keyspace).
    pub fn is_empty_collection(&self) -> bool {
        matches!(self.value(), ValueRef::Obj(o) if o.is_empty())
    }

    /// OBJECT ENCODING for a string value: "int", "embstr" or "raw"; None for objects
    /// that are not strings.
    pub fn string_encoding(&self) -> Option<&'static str> {
        match self.parts().flags & KIND_MASK {
            KIND_INT => Some("int"),
            KIND_INLINE => Some(self.inline_string_encoding()),
            _ => match self.value() {
                ValueRef::Str(_) => Some("raw"),
                ValueRef::Obj(_) => None,
            },
        }
    }

    /// "embstr" for an inline string of at most [`INLINE_MAX`] bytes, "raw" beyond.
    fn inline_string_encoding(&self) -> &'static str {
        match self.value() {
            ValueRef::Str(s) if s.len() > INLINE_MAX => "raw",
            _ => "embstr",
        }
    }

    /// The value as a growable byte string, converting it to the raw (boxed) encoding
    /// first, as Redis does for APPEND, SETRANGE and SETBIT. None if not a string.
    pub fn string_mut(&mut self) -> Option<&mut Vec<u8>> {
        let parts = self.parts();
        if parts.flags & KIND_MASK != KIND_OBJECT {
            let bytes = match self.value() {
                ValueRef::Str(s) => s.to_vec(),
                ValueRef::Obj(_) => return None,
            };
            self.replace_payload(Kind::Object(Box::into_raw(Box::new(Object::Str(bytes)))));
        }
        let parts = self.parts();
        // SAFETY: the payload is now a boxed object's owned pointer (from Box::into_raw);
        // &mut self gives unique access.
        match unsafe { &mut *self.object_ptr(&parts) } {
            Object::Str(v) => Some(v),
            _ => None,
        }
    }

    /// Replaces the value, keeping key, expiry and lru.
    pub fn set_value(&mut self, payload: Payload<'_>) {
        let mut fresh = Entry::new(self.key(), payload, self.expire_at_ms(), self.lru());
        fresh.set_mark(self.mark());
        *self = fresh;
    }

    /// Sets an integer value, in place when the value already is an int.
    pub fn set_int(&mut self, n: i64) {
        let parts = self.parts();
        if parts.flags & KIND_MASK == KIND_INT {
            // SAFETY: the int payload is 8 bytes at payload_at, uniquely borrowed.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    n.to_le_bytes().as_ptr(),
                    self.ptr().add(parts.payload_at),
                    8,
                )
            };
        } else {
            self.set_value(Payload::Int(n));
        }
    }

    fn replace_payload(&mut self, kind: Kind<'_>) {
        let mut fresh = Entry::build(self.key(), kind, self.expire_at_ms(), self.lru());
        fresh.set_mark(self.mark());
        *self = fresh; // drops the old entry and its old object, if any
    }

    /// Sets or clears the expiry time. Only the shard calls this, so that it can keep its
    /// count of keys with an expiry exact.
    pub(crate) fn set_expire_at_ms(&mut self, expire_at_ms: Option<i64>) {
        let has = self.expire_at_ms().is_some();
        match (has, expire_at_ms) {
            (true, Some(t)) => {
                // Same layout: overwrite the 8 bytes in place.
                // SAFETY: the expiry lies at offset 1 when HAS_EXPIRE is set.
                unsafe {
                    std::ptr::copy_nonoverlapping(t.to_le_bytes().as_ptr(), self.ptr().add(1), 8)
                };
            }
            (false, None) => {}
            (_, new) => {
                // Layout changes: copy everything after the header verbatim (object
                // pointer included) into a new blob, then free the old blob without
                // dropping its object, which the new blob now owns.
                let old = self.bytes();
                let rest = &old[1 + if has { 8 } else { 0 }..];
                let total = 1 + if new.is_some() { 8 } else { 0 } + rest.len();
                let fresh = Entry::alloc_with(total, |buf| {
                    buf[0] = (old[0] & (KIND_MASK | MARK))
                        | if new.is_some() { HAS_EXPIRE } else { 0 };
                    let mut at = 1;
                    if let Some(t) = new {
                        buf[1..9].copy_from_slice(&t.to_le_bytes());
                        at = 9;
                    }
                    buf[at..].copy_from_slice(rest);
                });
                let old_entry = std::mem::replace(self, fresh);
                old_entry.free_blob_only();
            }
        }
    }

    /// A copy of this entry under another key (COPY): same value, expiry and lru; a
    /// boxed object is cloned.
    pub fn clone_with_key(&self, key: &[u8]) -> Entry {
        match self.object_ref() {
            Some(obj) => Entry::new(
                key,
                Payload::Object(Box::new(obj.clone())),
                self.expire_at_ms(),
                self.lru(),
            ),
            // Nothing outside the blob: a byte copy under the new key is a full copy.
            None => self.blob_with_key(key),
        }
    }

    /// This entry under another key (RENAME, MOVE): the value moves, it is not copied.
    pub fn with_key(self, key: &[u8]) -> Entry {
        let fresh = self.blob_with_key(key);
        self.free_blob_only();
        fresh
    }

    /// A new blob with this one's header and payload bytes and another key. The payload
    /// is copied verbatim: a boxed object's pointer then has two owners, and the caller
    /// must free one blob without its object.
    fn blob_with_key(&self, key: &[u8]) -> Entry {
        let parts = self.parts();
        let old = self.bytes();
        let head = &old[..self.lru_at() + 4];
        let payload = &old[parts.payload_at..parts.total];
        let total = head.len() + varint::len(key.len()) + key.len() + payload.len();
        Entry::alloc_with(total, |buf| {
            buf[..head.len()].copy_from_slice(head);
            let mut at = head.len();
            at += varint::write(&mut buf[at..], key.len());
            buf[at..at + key.len()].copy_from_slice(key);
            at += key.len();
            buf[at..].copy_from_slice(payload);
        })
    }

    /// The value as an object to read, if it is one (raw strings included); an inline
    /// collection is decoded.
    pub fn object(&self) -> Option<ObjView<'_>> {
        let parts = self.parts();
        match parts.flags & KIND_MASK {
            KIND_PACKED => Some(ObjView::Decoded(Some(self.inline_ref(&parts).decode()))),
            _ => self.object_ref().map(ObjView::Borrowed),
        }
    }

    fn object_ref(&self) -> Option<&Object> {
        let parts = self.parts();
        // SAFETY: owned pointer from Box::into_raw, read-only behind &self.
        (parts.flags & KIND_MASK == KIND_OBJECT).then(|| unsafe { &*self.object_ptr(&parts) })
    }

    /// Frees the blob without dropping the object it points to.
    fn free_blob_only(self) {
        let total = self.parts().total;
        let p = self.ptr();
        std::mem::forget(self);
        // SAFETY: p was allocated by alloc_with with blob_layout(total).
        unsafe { dealloc(p, blob_layout(total)) };
    }

    /// Bytes this entry holds on the heap (blob plus boxed object), approximate for
    /// objects (a large collection's members sampled, see `Object::heap_size`); used by
    /// MEMORY USAGE.
    pub fn heap_size(&self, samples: Option<usize>) -> usize {
        let parts = self.parts();
        let mut size = parts.total;
        if parts.flags & KIND_MASK == KIND_OBJECT {
            // SAFETY: owned object pointer.
            size += unsafe { &*self.object_ptr(&parts) }.heap_size(samples);
        }
        size
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let parts = self.parts();
        if parts.flags & KIND_MASK == KIND_OBJECT {
            // SAFETY: the pointer came from Box::into_raw and this entry owns it.
            drop(unsafe { Box::from_raw(self.object_ptr(&parts)) });
        }
        // SAFETY: allocated by alloc_with with blob_layout(total).
        unsafe { dealloc(self.ptr(), blob_layout(parts.total)) };
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("key", &String::from_utf8_lossy(self.key()))
            .field("expire_at_ms", &self.expire_at_ms())
            .field("value", &self.value())
            .finish()
    }
}

enum Kind<'a> {
    Inline(&'a [u8]),
    Int(i64),
    Object(*mut Object),
    Packed(Compact<'a>),
}

impl Kind<'_> {
    fn payload_len(&self) -> usize {
        match self {
            Kind::Inline(s) => varint::len(s.len()) + s.len(),
            Kind::Int(_) | Kind::Object(_) => 8,
            Kind::Packed(compact) => packed_payload_len(compact),
        }
    }
}

/// Bytes of a collection payload: type, length, compact form.
fn packed_payload_len(compact: &Compact<'_>) -> usize {
    1 + varint::len(compact.size) + compact.size
}

/// Writes a collection payload (type, length, compact form) into `out`, exactly its size.
fn write_packed_payload(out: &mut [u8], compact: &Compact<'_>) -> usize {
    out[0] = compact.ty as u8;
    let n = varint::write(&mut out[1..], compact.size);
    compact.write(&mut out[1 + n..1 + n + compact.size]);
    1 + n + compact.size
}

fn blob_layout(size: usize) -> Layout {
    // Alignment 1 cannot fail for any size a Vec could hold.
    Layout::from_size_align(size, 1).unwrap_or_else(|_| Layout::new::<u8>())
}

/// A scratch buffer for assembling a blob: on the stack for typical small entries.
enum Scratch {
    Stack([u8; 128], usize),
    Heap(Vec<u8>),
}

impl Scratch {
    fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            Scratch::Stack(buf, len) => &mut buf[..*len],
            Scratch::Heap(v) => v.as_mut_slice(),
        }
    }
}

fn vec_on_stack_or_heap(len: usize) -> Scratch {
    if len <= 128 {
        Scratch::Stack([0; 128], len)
    } else {
        Scratch::Heap(vec![0; len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_of(e: &Entry) -> Vec<u8> {
        match e.value() {
            ValueRef::Str(s) => s.to_vec(),
            ValueRef::Obj(_) => panic!("not a string"),
        }
    }

    #[test]
    fn encodings_follow_content_and_size() {
        let e = Entry::new(b"k", Payload::Str(b"123"), None, 7);
        assert_eq!(e.string_encoding(), Some("int"));
        assert_eq!(string_of(&e), b"123");
        let e = Entry::new(b"k", Payload::Str(b"0123"), None, 7);
        assert_eq!(e.string_encoding(), Some("embstr"));
        let long = vec![b'x'; INLINE_MAX + 1];
        let e = Entry::new(b"k", Payload::Str(&long), None, 7);
        assert_eq!(e.string_encoding(), Some("raw"));
        assert_eq!(string_of(&e), long);
        assert_eq!(e.key(), b"k");
        assert_eq!(e.lru(), 7);
    }

    #[test]
    fn expiry_can_be_added_changed_and_removed() {
        for payload in [&b"v"[..], b"42", &[b'y'; 100][..]] {
            let mut e = Entry::new(b"key", Payload::Str(payload), None, 1);
            assert_eq!(e.expire_at_ms(), None);
            e.set_expire_at_ms(Some(1_000));
            assert_eq!(e.expire_at_ms(), Some(1_000));
            assert!(e.is_expired(1_000));
            assert!(!e.is_expired(999));
            e.set_expire_at_ms(Some(-5));
            assert_eq!(e.expire_at_ms(), Some(-5));
            e.set_expire_at_ms(None);
            assert_eq!(e.expire_at_ms(), None);
            assert_eq!(e.key(), b"key");
            assert_eq!(string_of(&e), payload);
            assert_eq!(e.lru(), 1);
        }
    }

    #[test]
    fn string_mut_converts_to_raw_and_keeps_metadata() {
        let mut e = Entry::new(b"key", Payload::Str(b"12"), Some(99), 3);
        e.string_mut().expect("string").extend_from_slice(b"34");
        assert_eq!(string_of(&e), b"1234");
        assert_eq!(e.string_encoding(), Some("raw"));
        assert_eq!(e.expire_at_ms(), Some(99));
        e.set_int(5);
        assert_eq!(string_of(&e), b"5");
        e.set_int(6);
        assert_eq!(string_of(&e), b"6");
        assert_eq!(e.string_encoding(), Some("int"));
    }

    #[test]
    fn rekey_moves_and_clone_copies() {
        for payload in [&b"v"[..], b"42", &[b'y'; 100][..]] {
            let e = Entry::new(b"old", Payload::Str(payload), Some(9), 4);
            let c = e.clone_with_key(b"copy");
            let e = e.with_key(b"a-much-longer-new-key");
            for x in [&e, &c] {
                assert_eq!(string_of(x), payload);
                assert_eq!(x.expire_at_ms(), Some(9));
                assert_eq!(x.lru(), 4);
            }
            assert_eq!(e.key(), b"a-much-longer-new-key");
            assert_eq!(c.key(), b"copy");
        }
    }

    #[test]
    fn overwrite_in_place_only_when_sizes_match() {
        let mut e = Entry::new(b"k", Payload::Str(b"abc"), None, 1);
        assert!(e.overwrite_string(b"xyz", None, 2));
        assert_eq!(string_of(&e), b"xyz");
        assert_eq!(e.lru(), 2);
        assert!(!e.overwrite_string(b"longer value", None, 2));
        assert_eq!(string_of(&e), b"xyz");
        assert!(
            !e.overwrite_string(b"xyz", Some(5), 2),
            "expiry changes the layout"
        );
        let mut n = Entry::new(b"k", Payload::Str(b"12345678"), None, 1);
        assert!(n.overwrite_string(b"87654321", None, 1));
        assert_eq!(string_of(&n), b"87654321");
        assert_eq!(n.string_encoding(), Some("int"));
    }

    fn small_hash(fields: usize) -> Box<Object> {
        let mut h = crate::types::hash::Hash::new();
        for i in 0..fields {
            h.set(format!("field:{i}").as_bytes(), format!("value-{i}").as_bytes(), Default::default());
        }
        Box::new(Object::Hash(h))
    }

    fn fields_of(e: &Entry) -> Vec<(Vec<u8>, Vec<u8>)> {
        match &*e.object().expect("an object") {
            Object::Hash(h) => h.iter().map(|(f, v)| (f.to_vec(), v.to_vec())).collect(),
            other => panic!("not a hash: {other:?}"),
        }
    }

    #[test]
    fn a_small_hash_lives_inline_and_survives_every_rewrite() {
        let mut e = Entry::new(b"h", Payload::Object(small_hash(10)), None, 3);
        assert_eq!(e.parts().flags & KIND_MASK, KIND_PACKED);
        assert_eq!(e.encoding(), "listpack");
        assert!(matches!(e.value(), ValueRef::Obj(o) if o.len() == 10 && o.value_type() == crate::ValueType::Hash));
        let want = fields_of(&e);
        assert_eq!(want.len(), 10);
        assert_eq!(want[3], (b"field:3".to_vec(), b"value-3".to_vec()));
        // One allocation: smaller than the boxed form's three.
        assert!(e.heap_size(None) < 200, "{}", e.heap_size(None));

        e.set_mark(true);
        e.set_expire_at_ms(Some(77));
        assert_eq!(fields_of(&e), want);
        let copy = e.clone_with_key(b"copy");
        let e = e.with_key(b"renamed");
        for x in [&e, &copy] {
            assert_eq!(fields_of(x), want);
            assert_eq!(x.expire_at_ms(), Some(77));
            assert_eq!(x.lru(), 3);
        }
        assert!(e.mark());
        let mut e = e;
        e.set_expire_at_ms(None);
        assert_eq!(fields_of(&e), want);
        assert!(e.mark(), "the capture mark survives every rewrite");
    }

    #[test]
    fn changes_through_the_guard_are_written_back_and_outgrowing_boxes_it() {
        let limits = crate::types::hash::HashLimits { max_listpack_entries: 12, max_listpack_value: 64 };
        let mut e = Entry::new(b"h", Payload::Object(small_hash(2)), Some(5), 9);
        e.set_mark(true);
        for i in 2..12 {
            let Object::Hash(h) = &mut *e.object_mut().expect("object") else { panic!() };
            h.set(format!("field:{i}").as_bytes(), b"v", limits);
        }
        assert_eq!(e.parts().flags & KIND_MASK, KIND_PACKED);
        assert_eq!(fields_of(&e).len(), 12);
        {
            let Object::Hash(h) = &mut *e.object_mut().expect("object") else { panic!() };
            h.remove(b"field:0");
            h.set(b"field:1", b"changed", limits);
        }
        let fields = fields_of(&e);
        assert_eq!(fields.len(), 11);
        assert!(fields.contains(&(b"field:1".to_vec(), b"changed".to_vec())));
        // Past the entry limit the hash becomes a table and the entry boxes it.
        {
            let Object::Hash(h) = &mut *e.object_mut().expect("object") else { panic!() };
            h.set(b"field:0", b"back", limits);
            h.set(b"another", b"one", limits);
        }
        assert_eq!(e.parts().flags & KIND_MASK, KIND_OBJECT);
        assert_eq!(e.encoding(), "hashtable");
        assert_eq!(fields_of(&e).len(), 13);
        assert_eq!((e.expire_at_ms(), e.lru(), e.mark(), e.key()), (Some(5), 9, true, &b"h"[..]));
        // A packed value above the inline bound is boxed from the start.
        let big = vec![b'x'; 60];
        let mut h = crate::types::hash::Hash::new();
        for i in 0..20 {
            h.set(format!("{i}").as_bytes(), &big, Default::default());
        }
        let e = Entry::new(b"big", Payload::Object(Box::new(Object::Hash(h))), None, 0);
        assert_eq!(e.parts().flags & KIND_MASK, KIND_OBJECT);
        assert_eq!(e.encoding(), "listpack");
    }

    #[test]
    fn an_emptied_inline_collection_reports_empty() {
        let mut e = Entry::new(b"h", Payload::Object(small_hash(1)), None, 0);
        assert!(!e.is_empty_collection());
        {
            let Object::Hash(h) = &mut *e.object_mut().expect("object") else { panic!() };
            assert!(h.remove(b"field:0"));
        }
        assert!(e.is_empty_collection());
    }

    #[test]
    fn long_keys_use_multi_byte_lengths() {
        let key = vec![b'k'; 300];
        let val = vec![b'v'; 20];
        let e = Entry::new(&key, Payload::Str(&val), Some(5), 0);
        assert_eq!(e.key(), &key[..]);
        assert_eq!(string_of(&e), val);
    }
}
