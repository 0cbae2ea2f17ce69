//! Collections an entry stores inline (`entry.rs`), and their compact forms.
//!
//! A small hash, sorted set, list (one chunk) or set (intset or packed) lives in the
//! entry's own allocation instead of a boxed [`Object`]: one allocation per key where
//! the boxed form takes three or four. This module decides which values qualify (at
//! most [`INLINE_MAX_BYTES`] of compact form), writes and reads the compact forms, and
//! keeps the per-thread buffers that a decoded value borrows:
//!
//! - hash, sorted set: the packed pairs with the keys' common prefix stored once
//!   (`types/packed.rs`, [`Stride::Pairs`]);
//! - list: its single chunk, the elements' common prefix stored once ([`Stride::Items`]);
//!   a packed set of strings likewise;
//! - intset: `[count: LEB128]` then each member as the zigzag LEB128 of its difference
//!   from the previous one (the first from 0), wrapping, so sorted members cost a byte
//!   or three each instead of eight.
//!
//! Commands never see a compact form: `entry.rs` hands out the value decoded into an
//! ordinary [`Object`] and writes it back.

use std::cell::RefCell;
use std::collections::VecDeque;

use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::packed::{self, CompactLayout, Packed, Stride};
use crate::types::set::Set;
use crate::types::zset::ZSet;
use crate::value::{Object, ValueType};
use crate::varint;

/// Compact forms up to this many bytes are stored inline. Every command on an inline
/// collection decodes and (for writes) re-encodes it, a linear copy: this bound keeps
/// that copy to about a microsecond; larger collections are boxed.
pub const INLINE_MAX_BYTES: usize = 1024;

/// The type of an inline collection, as the tag byte of its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InlineType {
    Hash = 0,
    ZSet = 1,
    List = 2,
    IntSet = 3,
    PackedSet = 4,
}

impl InlineType {
    /// The type of a tag written by [`Compact::ty`] (only this module writes them).
    pub(crate) fn from_tag(tag: u8) -> InlineType {
        match tag {
            1 => InlineType::ZSet,
            2 => InlineType::List,
            3 => InlineType::IntSet,
            4 => InlineType::PackedSet,
            _ => InlineType::Hash,
        }
    }

    pub(crate) fn value_type(self) -> ValueType {
        match self {
            InlineType::Hash => ValueType::Hash,
            InlineType::ZSet => ValueType::ZSet,
            InlineType::List => ValueType::List,
            InlineType::IntSet | InlineType::PackedSet => ValueType::Set,
        }
    }

    /// OBJECT ENCODING's name (what Redis 7.0 reports for the same value).
    pub(crate) fn encoding(self) -> &'static str {
        match self {
            InlineType::Hash | InlineType::ZSet => "listpack",
            InlineType::List => "quicklist",
            InlineType::IntSet => "intset",
            // What Redis 7.0 reports for the same set (it has no listpack sets).
            InlineType::PackedSet => "hashtable",
        }
    }

    fn stride(self) -> Stride {
        match self {
            InlineType::List | InlineType::PackedSet => Stride::Items,
            _ => Stride::Pairs,
        }
    }
}

/// A value's compact form, measured and ready to write.
pub(crate) struct Compact<'a> {
    pub(crate) ty: InlineType,
    pub(crate) size: usize,
    source: Source<'a>,
}

enum Source<'a> {
    Packed(&'a Packed, CompactLayout),
    Ints(&'a [i64]),
}

/// The compact form of `obj` when it has one that fits [`INLINE_MAX_BYTES`].
pub(crate) fn compact(obj: &Object) -> Option<Compact<'_>> {
    let (ty, packed) = match obj {
        Object::Hash(Hash::Packed(p)) => (InlineType::Hash, p),
        Object::ZSet(ZSet::Packed(p)) => (InlineType::ZSet, p),
        Object::List(l) => (InlineType::List, l.single_chunk()?),
        Object::Set(Set::Packed(p)) => (InlineType::PackedSet, p),
        Object::Set(Set::Ints(v)) => {
            let size = ints_size(v);
            return (size <= INLINE_MAX_BYTES).then_some(Compact {
                ty: InlineType::IntSet,
                size,
                source: Source::Ints(v),
            });
        }
        _ => return None,
    };
    let layout = packed.compact_layout(ty.stride());
    (layout.size <= INLINE_MAX_BYTES).then_some(Compact {
        ty,
        size: layout.size,
        source: Source::Packed(packed, layout),
    })
}

impl Compact<'_> {
    /// Writes the compact form into `out`, exactly `self.size` bytes.
    pub(crate) fn write(&self, out: &mut [u8]) {
        match self.source {
            Source::Packed(p, layout) => p.write_compact(layout, out),
            Source::Ints(v) => write_ints(v, out),
        }
    }
}

/// The value a compact form holds, decoded into buffers from this thread's pools.
pub(crate) fn decode(ty: InlineType, compact: &[u8]) -> Object {
    match ty {
        InlineType::IntSet => Object::Set(Set::Ints(read_ints(compact, take(&INTS)))),
        _ => {
            let p = Packed::read_compact(compact, packed::take_buffer(), ty.stride());
            match ty {
                InlineType::Hash => Object::Hash(Hash::Packed(p)),
                InlineType::ZSet => Object::ZSet(ZSet::Packed(p)),
                InlineType::PackedSet => Object::Set(Set::Packed(p)),
                _ => Object::List(List::from_chunk(p, take(&CHUNKS))),
            }
        }
    }
}

/// Number of elements of a compact form (fields, members, elements).
pub(crate) fn len(ty: InlineType, compact: &[u8]) -> usize {
    let items = varint::read_u64(compact, 0).0 as usize;
    match ty {
        InlineType::Hash | InlineType::ZSet => items / 2,
        InlineType::List | InlineType::IntSet | InlineType::PackedSet => items,
    }
}

/// Gives the buffers of a value decoded by [`decode`] (or any value built by a command)
/// back to this thread's pools, when it still has the shapes they came in.
pub(crate) fn recycle(obj: Object) {
    match obj {
        Object::Hash(Hash::Packed(p)) | Object::ZSet(ZSet::Packed(p)) | Object::Set(Set::Packed(p)) => {
            packed::recycle_buffer(p.into_buffer())
        }
        Object::List(l) => {
            let mut chunks = l.into_chunks();
            if chunks.len() <= 1 {
                if let Some(p) = chunks.pop_front() {
                    packed::recycle_buffer(p.into_buffer());
                }
                give(&CHUNKS, chunks);
            }
        }
        Object::Set(Set::Ints(mut v)) if v.capacity() <= POOL_INTS_MAX => {
            v.clear();
            give(&INTS, v);
        }
        _ => {}
    }
}

/// Pooled containers per thread: a decoded intset's vector, a decoded list's deque.
const POOL_SIZE: usize = 4;
/// An intset vector that grew beyond this many members is freed rather than kept.
const POOL_INTS_MAX: usize = 2048;

thread_local! {
    static INTS: RefCell<Vec<Vec<i64>>> = const { RefCell::new(Vec::new()) };
    static CHUNKS: RefCell<Vec<VecDeque<Packed>>> = const { RefCell::new(Vec::new()) };
}

fn take<T: Default>(pool: &'static std::thread::LocalKey<RefCell<Vec<T>>>) -> T {
    pool.with(|p| p.borrow_mut().pop()).unwrap_or_default()
}

fn give<T>(pool: &'static std::thread::LocalKey<RefCell<Vec<T>>>, item: T) {
    pool.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() < POOL_SIZE {
            p.push(item);
        }
    });
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// Deltas between sorted members, wrapping (so any two i64 have one).
fn deltas(v: &[i64]) -> impl Iterator<Item = u64> + '_ {
    let mut prev = 0i64;
    v.iter().map(move |&n| {
        let d = n.wrapping_sub(prev);
        prev = n;
        zigzag(d)
    })
}

fn ints_size(v: &[i64]) -> usize {
    varint::len_u64(v.len() as u64) + deltas(v).map(varint::len_u64).sum::<usize>()
}

fn write_ints(v: &[i64], out: &mut [u8]) {
    let mut at = varint::write_u64(out, v.len() as u64);
    for d in deltas(v) {
        at += varint::write_u64(&mut out[at..], d);
    }
    debug_assert_eq!(at, out.len());
}

fn read_ints(compact: &[u8], mut v: Vec<i64>) -> Vec<i64> {
    v.clear();
    let (count, mut at) = varint::read_u64(compact, 0);
    v.reserve(count as usize);
    let mut prev = 0i64;
    for _ in 0..count {
        let (z, next) = varint::read_u64(compact, at);
        at = next;
        prev = prev.wrapping_add(unzigzag(z));
        v.push(prev);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(obj: &Object) -> Object {
        let c = compact(obj).expect("inline form");
        let mut out = vec![0; c.size];
        c.write(&mut out);
        assert_eq!(len(c.ty, &out), obj.len());
        decode(c.ty, &out)
    }

    #[test]
    fn every_inline_type_round_trips() {
        let ints = vec![i64::MIN, -5, 0, 1, 300, 1 << 40, i64::MAX];
        let set = Object::Set(Set::Ints(ints.clone()));
        assert_eq!(round_trip(&set), set);
        let c = compact(&set).expect("inline");
        assert_eq!(c.ty.encoding(), "intset");
        let small = Object::Set(Set::Ints(vec![100, 101, 150, 10_000]));
        // count, then zigzag deltas 100 (2 bytes), 1, 49 (1 byte each), 9850 (3 bytes).
        assert_eq!(compact(&small).expect("inline").size, 1 + 2 + 1 + 1 + 3, "deltas of sorted members");

        let mut tags = Set::new();
        for t in ["tag-1", "tag-22", "tag-333"] {
            tags.add(t.as_bytes(), 512);
        }
        let tags = Object::Set(tags);
        assert_eq!(round_trip(&tags), tags);
        assert_eq!(compact(&tags).expect("inline").ty.encoding(), "hashtable");

        let list = Object::List(List::from_items([&b"item-1"[..], b"item-22", b"", b"item-333"]));
        assert_eq!(round_trip(&list), list);
        let empty = Object::List(List::new());
        assert_eq!(round_trip(&empty), empty);

        let mut h = Hash::new();
        h.set(b"f1", b"v", Default::default());
        h.set(b"f2", b"w", Default::default());
        let hash = Object::Hash(h);
        assert_eq!(round_trip(&hash), hash);

        // Too large or not packed: boxed.
        let long: Vec<i64> = (0..600).map(|i| i * 1_000_000_007).collect();
        assert!(compact(&Object::Set(Set::Ints(long))).is_none());
        let items: Vec<Vec<u8>> = (0..200).map(|i| format!("{i:>8}").into_bytes()).collect();
        let mut two_chunks = List::new();
        for i in &items {
            two_chunks.push(crate::types::list::End::Tail, i);
        }
        assert!(compact(&Object::List(two_chunks)).is_none());
        recycle(round_trip(&list));
        recycle(round_trip(&set));
    }
}
