//! A borrowed string value: bytes, or an integer kept as an i64 (an entry's inline
//! integer, a listpack's integer element), with its decimal text made on demand.

/// A borrowed view of a string value: either bytes or an integer stored as i64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrRef<'a> {
    Bytes(&'a [u8]),
    Int(i64),
}

impl StrRef<'_> {
    /// Calls `f` with the string's bytes, formatting an integer on the stack.
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match *self {
            StrRef::Bytes(b) => f(b),
            StrRef::Int(n) => f(itoa::Buffer::new().format(n).as_bytes()),
        }
    }

    /// Length in bytes of the string form.
    pub fn len(&self) -> usize {
        match *self {
            StrRef::Bytes(b) => b.len(),
            StrRef::Int(n) => itoa::Buffer::new().format(n).len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(|b| b.to_vec())
    }
}
