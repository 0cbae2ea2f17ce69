//! Boxed values: what an entry points to when its value does not live inline.
//!
//! A raw string (long, or mutated by APPEND/SETRANGE/SETBIT) or a collection: hash,
//! list, set, sorted set, each with its compact and its large encoding, or a stream. This module owns
//! the value types and their names (TYPE, OBJECT ENCODING); the algorithms of each type
//! live in `types/`.

/// A value that lives in its own allocation.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    /// A string in Redis's "raw" encoding: growable in place.
    Str(Vec<u8>),
    Hash(Hash),
    List(List),
    Set(Set),
    ZSet(ZSet),
    Stream(Box<Stream>),
}

use crate::types::stream::Stream;
use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::zset::ZSet;

impl Object {
    /// Approximate heap bytes held, for MEMORY USAGE: a large collection's members are
    /// sampled (`samples` of them; None: all).
    pub fn heap_size(&self, samples: Option<usize>) -> usize {
        std::mem::size_of::<Object>()
            + match self {
                Object::Str(v) => v.capacity(),
                Object::Hash(h) => h.heap_size(samples),
                Object::List(l) => l.heap_size(),
                Object::Set(s) => s.heap_size(samples),
                Object::ZSet(z) => z.heap_size(samples),
                Object::Stream(s) => s.heap_size(samples),
            }
    }

    /// The type, as TYPE names it.
    pub fn value_type(&self) -> ValueType {
        match self {
            Object::Str(_) => ValueType::String,
            Object::Hash(_) => ValueType::Hash,
            Object::List(_) => ValueType::List,
            Object::Set(_) => ValueType::Set,
            Object::ZSet(_) => ValueType::ZSet,
            Object::Stream(_) => ValueType::Stream,
        }
    }

    /// OBJECT ENCODING's name, as Redis 7.0 would report it.
    pub fn encoding(&self) -> &'static str {
        match self {
            Object::Str(_) => "raw",
            Object::Hash(h) => h.encoding(),
            Object::List(l) => l.encoding(),
            Object::Set(s) => s.encoding(),
            Object::ZSet(z) => z.encoding(),
            Object::Stream(_) => "stream",
        }
    }

    /// Number of elements of a collection (0 for strings).
    pub fn len(&self) -> usize {
        match self {
            Object::Str(_) => 0,
            Object::Hash(h) => h.len(),
            Object::List(l) => l.len(),
            Object::Set(s) => s.len(),
            Object::ZSet(z) => z.len(),
            Object::Stream(s) => s.len(),
        }
    }

    /// True for a collection with no elements (which must not stay in the keyspace).
    /// (A stream is never one: it stays, empty, with its IDs and groups, as Redis's.)
    pub fn is_empty_collection(&self) -> bool {
        !matches!(self, Object::Str(_) | Object::Stream(_)) && self.len() == 0
    }
}

/// The Redis data type of a value, as TYPE and SCAN TYPE name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    String,
    List,
    Set,
    ZSet,
    Hash,
    Stream,
}

impl ValueType {
    /// The name TYPE replies with.
    pub fn name(self) -> &'static str {
        match self {
            ValueType::String => "string",
            ValueType::List => "list",
            ValueType::Set => "set",
            ValueType::ZSet => "zset",
            ValueType::Hash => "hash",
            ValueType::Stream => "stream",
        }
    }

    /// Parses a SCAN TYPE argument (case-insensitive).
    pub fn parse(name: &[u8]) -> Option<ValueType> {
        let all = [
            ValueType::String,
            ValueType::List,
            ValueType::Set,
            ValueType::ZSet,
            ValueType::Hash,
            ValueType::Stream,
        ];
        all.into_iter()
            .find(|t| t.name().as_bytes().eq_ignore_ascii_case(name))
    }
}

impl crate::entry::ValueRef<'_> {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            crate::entry::ValueRef::Str(_) => ValueType::String,
            crate::entry::ValueRef::Obj(o) => o.value_type(),
        }
    }
}
