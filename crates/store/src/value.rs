//! Boxed values: what an entry points to when its value does not live inline.
//!
//! Today that is a raw string (long, or mutated by APPEND/SETRANGE/SETBIT); issue 3 adds
//! the collection types here, each with its compact and its large encoding. This module
//! owns the value types and their names (TYPE, OBJECT ENCODING); the algorithms of each
//! type live in `types/`.

/// A value that lives in its own allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    /// A string in Redis's "raw" encoding: growable in place.
    Str(Vec<u8>),
}

impl Object {
    /// Approximate heap bytes held, for MEMORY USAGE / DEBUG OBJECT.
    pub fn heap_size(&self) -> usize {
        match self {
            Object::Str(v) => std::mem::size_of::<Object>() + v.capacity(),
        }
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
        all.into_iter().find(|t| t.name().as_bytes().eq_ignore_ascii_case(name))
    }
}

impl crate::entry::ValueRef<'_> {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            crate::entry::ValueRef::Str(_) => ValueType::String,
            crate::entry::ValueRef::Obj(Object::Str(_)) => ValueType::String,
        }
    }
}
