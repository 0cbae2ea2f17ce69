//! [`SmallBytes`]: a byte string in 16 bytes, its bytes inline when there are at most 15
//! of them and on the heap otherwise. The members of large sets and sorted sets are
//! this type: most members are short (`user:1234567`, ids, tags), and inline they cost
//! their table slot and nothing else, where a `Box<[u8]>` took the same 16 bytes for its
//! pointer and length plus an allocation of its own (16 bytes or more, and a cache miss
//! on every comparison).
//!
//! Why by hand: the crates that do this (compact_str, smol_str, compact_bytes) take 24
//! bytes, and the first two hold UTF-8 only. A table slot of 16 bytes is the point.
//!
//! Layout (16 bytes, alignment 8):
//! ```text
//! inline: [bytes: 15][len: u8, 0..=15]
//! heap:   [pointer: 8][len: 7 bytes LE][HEAP: u8 = 0x80]
//! ```
//! Byte 15 tells the two apart in either byte order. The heap form owns a `Box<[u8]>`
//! of exactly `len` bytes (more than 15), taken apart into its pointer and length. All
//! of this module's `unsafe` rests on that one invariant, which the constructors
//! establish and nothing else can change (the fields are private and the bytes are
//! never handed out mutably). `scripts/test.sh` runs store's unit tests under
//! AddressSanitizer, which catches a use after free here (checked by aliasing the
//! wrong set's members in `zset::Large::clone`).

use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;

/// The most bytes held inline.
pub const INLINE_MAX: usize = 15;
const HEAP: u8 = 0x80;
/// Heap lengths are stored in 7 bytes.
const HEAP_LEN_MAX: usize = (1 << 56) - 1;

#[derive(Clone, Copy)]
#[repr(C)]
struct Heap {
    ptr: NonNull<u8>,
    /// The length, little-endian, in bytes 0..7; byte 7 is `HEAP`.
    len: [u8; 8],
}

#[derive(Clone, Copy)]
#[repr(C)]
union Repr {
    inline: [u8; 16],
    heap: Heap,
}

/// A byte string stored in 16 bytes (see the module header).
pub struct SmallBytes {
    repr: Repr,
}

const _: () = assert!(std::mem::size_of::<SmallBytes>() == 16);

// SAFETY: a SmallBytes owns its heap bytes exclusively, as a Box<[u8]> does, and never
// shares or mutates them through `&self`.
unsafe impl Send for SmallBytes {}
// SAFETY: as above; `&SmallBytes` only reads.
unsafe impl Sync for SmallBytes {}

impl SmallBytes {
    /// A copy of `bytes`.
    pub fn new(bytes: &[u8]) -> SmallBytes {
        if bytes.len() <= INLINE_MAX {
            let mut inline = [0u8; 16];
            inline[..bytes.len()].copy_from_slice(bytes);
            inline[15] = bytes.len() as u8;
            SmallBytes {
                repr: Repr { inline },
            }
        } else {
            SmallBytes::from_box(Box::from(bytes))
        }
    }

    /// Takes over a box of more than `INLINE_MAX` bytes.
    fn from_box(bytes: Box<[u8]>) -> SmallBytes {
        let len = bytes.len();
        debug_assert!(len > INLINE_MAX);
        // No allocation holds 2^56 bytes; the assertion documents the format's limit.
        assert!(len <= HEAP_LEN_MAX, "a member of 2^56 bytes or more");
        let mut len_bytes = (len as u64).to_le_bytes();
        len_bytes[7] = HEAP;
        let raw = Box::into_raw(bytes) as *mut u8;
        // SAFETY: Box::into_raw never returns null.
        let ptr = unsafe { NonNull::new_unchecked(raw) };
        SmallBytes {
            repr: Repr {
                heap: Heap {
                    ptr,
                    len: len_bytes,
                },
            },
        }
    }

    fn tag(&self) -> u8 {
        // SAFETY: byte 15 is initialised in both forms (the inline length, or the last
        // byte of the heap length array), and reading one u8 of either is valid.
        unsafe { *(self as *const SmallBytes as *const u8).add(15) }
    }

    fn is_inline(&self) -> bool {
        self.tag() != HEAP
    }

    /// (pointer, length) of the heap form.
    fn heap_parts(&self) -> (NonNull<u8>, usize) {
        // SAFETY: called only when the tag says heap, so `heap` is the written field.
        let heap = unsafe { self.repr.heap };
        let mut len = heap.len;
        len[7] = 0;
        (heap.ptr, u64::from_le_bytes(len) as usize)
    }

    pub fn as_slice(&self) -> &[u8] {
        let tag = self.tag();
        if tag != HEAP {
            // SAFETY: the inline form: `inline` is the written field and tag <= 15.
            unsafe { &self.repr.inline[..usize::from(tag)] }
        } else {
            let (ptr, len) = self.heap_parts();
            // SAFETY: the heap form owns a live allocation of exactly `len` bytes
            // (module invariant), borrowed here for as long as `self` is.
            unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) }
        }
    }

    /// The bytes, to change in place (the length stays).
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let tag = self.tag();
        if tag != HEAP {
            // SAFETY: the inline form: `inline` is the written field and tag <= 15.
            unsafe { &mut self.repr.inline[..usize::from(tag)] }
        } else {
            let (ptr, len) = self.heap_parts();
            // SAFETY: as in `as_slice`, and `&mut self` makes the borrow unique.
            unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), len) }
        }
    }

    /// Heap bytes held beyond the 16 (0 when inline), for memory estimates.
    pub fn heap_len(&self) -> usize {
        if self.is_inline() {
            0
        } else {
            self.heap_parts().1
        }
    }
}

/// A second, non-owning handle on a [`SmallBytes`]'s bytes: the same 16 bytes, so a heap
/// member's bytes are shared, not copied. A large sorted set keys its member -> score
/// table by aliases of the members its score-ordered chunks own (`zset.rs`), as Redis's
/// skiplist and dict share one sds: a member longer than 15 bytes is stored once.
///
/// An alias never frees anything (dropping it does nothing) and cannot be cloned; it
/// reads the owner's heap bytes, so it must not be read after the owner is dropped
/// (see [`SmallBytes::alias`]).
pub struct Alias {
    bytes: std::mem::ManuallyDrop<SmallBytes>,
}

impl SmallBytes {
    /// An alias of these bytes.
    ///
    /// # Safety
    ///
    /// The caller must not read the alias (deref it, compare it, hash it) after `self`
    /// has been dropped; moving `self` is fine (its heap bytes do not move).
    pub unsafe fn alias(&self) -> Alias {
        Alias {
            bytes: std::mem::ManuallyDrop::new(SmallBytes { repr: self.repr }),
        }
    }
}

impl Deref for Alias {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

impl fmt::Debug for Alias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Drop for SmallBytes {
    fn drop(&mut self) {
        if !self.is_inline() {
            let (ptr, len) = self.heap_parts();
            // SAFETY: the heap form came from Box::into_raw of a Box<[u8]> of `len`
            // bytes (module invariant); it is rebuilt and dropped exactly once, here.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr.as_ptr(), len)) });
        }
    }
}

impl Clone for SmallBytes {
    fn clone(&self) -> SmallBytes {
        if self.is_inline() {
            // SAFETY: the inline form is plain bytes.
            SmallBytes {
                repr: Repr {
                    inline: unsafe { self.repr.inline },
                },
            }
        } else {
            SmallBytes::from_box(Box::from(self.as_slice()))
        }
    }
}

impl Deref for SmallBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for SmallBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl AsRef<[u8]> for SmallBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl From<&[u8]> for SmallBytes {
    fn from(bytes: &[u8]) -> SmallBytes {
        SmallBytes::new(bytes)
    }
}

/// Takes over the vector's allocation when the bytes do not fit inline.
impl From<Vec<u8>> for SmallBytes {
    fn from(bytes: Vec<u8>) -> SmallBytes {
        if bytes.len() <= INLINE_MAX {
            SmallBytes::new(&bytes)
        } else {
            SmallBytes::from_box(bytes.into_boxed_slice())
        }
    }
}

impl PartialEq for SmallBytes {
    fn eq(&self, other: &SmallBytes) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SmallBytes {}

impl PartialOrd for SmallBytes {
    fn partial_cmp(&self, other: &SmallBytes) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Byte order, as `[u8]`'s.
impl Ord for SmallBytes {
    fn cmp(&self, other: &SmallBytes) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl std::hash::Hash for SmallBytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl fmt::Debug for SmallBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_round_trips_across_the_inline_limit() {
        for len in 0..64usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
            let s = SmallBytes::new(&bytes);
            assert_eq!(s.as_slice(), &bytes[..], "len {len}");
            assert_eq!(s.is_inline(), len <= INLINE_MAX, "len {len}");
            assert_eq!(s.heap_len(), if len <= INLINE_MAX { 0 } else { len });
            let c = s.clone();
            drop(s);
            let mut m = SmallBytes::from(bytes.clone());
            assert_eq!(m, c, "from a Vec, len {len}");
            m.as_mut_slice().iter_mut().for_each(|b| *b = b.wrapping_add(1));
            let plus_one: Vec<u8> = bytes.iter().map(|b| b.wrapping_add(1)).collect();
            assert_eq!(&*m, &plus_one[..], "changed in place, len {len}");
            assert_eq!(c.as_slice(), &bytes[..], "clone of len {len}");
            assert_eq!(c, SmallBytes::from(&bytes[..]));
        }
    }

    #[test]
    fn bytes_that_look_like_the_heap_tag_stay_inline() {
        // 0x80 and 0xff in every position, the last inline byte included: only byte 15
        // (the length) decides the form.
        for len in 1..=INLINE_MAX {
            for fill in [0x80u8, 0xff, 0x00] {
                let bytes = vec![fill; len];
                let s = SmallBytes::new(&bytes);
                assert!(s.is_inline());
                assert_eq!(&*s, &bytes[..]);
            }
        }
        let long = vec![0x80u8; 300];
        assert_eq!(&*SmallBytes::new(&long), &long[..]);
    }

    #[test]
    fn unequal_bytes_compare_unequal() {
        let a = SmallBytes::new(b"member:1");
        let b = SmallBytes::new(b"member:2");
        let long_a = SmallBytes::new(b"a member longer than fifteen bytes 1");
        let long_b = SmallBytes::new(b"a member longer than fifteen bytes 2");
        assert_ne!(a, b);
        assert_ne!(long_a, long_b);
        assert_ne!(a, long_a);
        assert_eq!(SmallBytes::new(b""), SmallBytes::new(&[]));
    }
}
