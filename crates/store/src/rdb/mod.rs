//! Redis's RDB snapshot format, version 10 as Redis 7.0 writes and reads it, so that a
//! `dump.rdb` moves between Redis and Basalt in both directions.
//!
//! This module owns the byte format only: [`RdbWriter`] serializes entries the caller
//! hands it, [`load`] parses a stream and hands entries back; [`dump_payload`] and
//! [`restore`] do the same for one value in DUMP/RESTORE's payload (the value's type
//! byte and encoding as in a file, then the version in two bytes and a CRC-64). Which keys to save, file
//! names, fsync and renames, and what to do with expired keys belong to the server
//! (`crates/server/src/snapshot.rs`). Layout summary (full layout in
//! `docs/persistence.md`):
//!
//! Format:
//! ```text
//! "REDIS" + 4 ASCII digits (version)
//! then opcodes until EOF:
//!   0xFA AUX            string name, string value
//!   0xFE SELECTDB       length db
//!   0xFB RESIZEDB       length keys, length keys-with-expiry
//!   0xFC EXPIRETIME_MS  i64 LE Unix ms        (applies to the next key)
//!   0xFD EXPIRETIME     i32 LE Unix seconds   (applies to the next key)
//!   0xF8 IDLE length / 0xF9 FREQ u8           (skipped)
//!   0xF5 FUNCTION2 (a library's code), 0xF6 FUNCTION (7.0's release candidates' form,
//!   refused), 0xF7 MODULE_AUX (refused)
//!   type byte (0..=21) string key, value      (one key)
//!   0xFF EOF, then the CRC-64 of every byte before it, u64 LE (0 = not computed)
//! length: 00xxxxxx | 01xxxxxx yyyyyyyy (14 bits, BE) | 0x80 u32 BE | 0x81 u64 BE
//! string: length + bytes | 0xC0 i8 | 0xC1 i16 LE | 0xC2 i32 LE (decimal strings)
//!         | 0xC3 length(compressed) length(original) LZF data
//! values: 0 STRING string; 1 LIST n strings; 2 SET n strings; 3 ZSET n (string,
//!   score as u8 length + ASCII, 253 nan 254 inf 255 -inf); 4 HASH n (field, value);
//!   5 ZSET_2 n (member, f64 LE); 9 HASH_ZIPMAP, 10 LIST_ZIPLIST, 12 ZSET_ZIPLIST,
//!   13 HASH_ZIPLIST: one string holding the blob (legacy.rs); 11 SET_INTSET: one
//!   string (intset.rs); 14 LIST_QUICKLIST: n ziplist strings; 16 HASH_LISTPACK,
//!   17 ZSET_LISTPACK: one listpack string (listpack.rs); 18 LIST_QUICKLIST_2: n nodes
//!   of (length 1 = plain element | 2 = listpack, string); 15 STREAM_LISTPACKS,
//!   19 STREAM_LISTPACKS_2: n nodes of (16-byte ID string, listpack string: the
//!   node as the stream holds it, `types/stream_node.rs`),
//!   then the length, last ID, (19: first ID, max deleted ID, entries added), the
//!   groups: name, last ID, (19: entries read), pending entries (16-byte ID, ms time
//!   u64 LE, delivery count), consumers (name, seen time, their pending IDs); 6 7
//!   modules and 21 (7.2's streams) refused.
//! ```
//!
//! Where to look next: `write.rs` (what Basalt writes for each encoding), `load.rs`
//! (strict parsing), `types/listpack.rs`, `intset.rs`, `legacy.rs` (the blobs), `lzf.rs`,
//! `crc64.rs`.

mod crc64;
/// Listpacks are the types' own format too (stream nodes): one encoder and decoder.
pub(crate) use crate::types::listpack;
mod intset;
mod legacy;
mod load;
mod lzf;
mod write;

#[cfg(test)]
mod interop_tests;
#[cfg(test)]
mod tests;

pub use crc64::crc64;
pub use load::{functions_of_payload, load, load_with_aux, restore, RestoreError};
pub use write::{dump_payload, encode_entry, functions_payload, RdbWriter};

/// The RDB version Basalt writes, and the newest it reads (Redis 7.0's).
pub const RDB_VERSION: u32 = 10;

/// Encoding thresholds used when building collections from a file (the server's
/// `hash-max-listpack-*`, `zset-max-listpack-*` and `set-max-intset-entries`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub hash: crate::types::hash::HashLimits,
    pub zset: crate::types::zset::ZLimits,
    pub set_intset: usize,
}

impl Limits {
    /// Redis 7.0's defaults (512 hash entries of 64 bytes, 128 zset entries of 64 bytes,
    /// 512 intset entries).
    pub fn redis_defaults() -> Limits {
        Limits {
            hash: Default::default(),
            zset: Default::default(),
            set_intset: 512,
        }
    }
}

impl Default for Limits {
    /// Redis 7.0's defaults, as [`Limits::redis_defaults`].
    fn default() -> Limits {
        Limits::redis_defaults()
    }
}

/// What load saw besides the keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadInfo {
    /// The file's RDB version (1..=10).
    pub version: u32,
    /// AUX fields in file order (redis-ver, redis-bits, ctime, used-mem, aof-base, ...).
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    /// Keys passed to `on_entry`.
    pub keys: u64,
    /// Keys whose collection was empty in the file, skipped as Redis 7.0 skips them.
    pub empty_keys_skipped: u64,
    /// The code of each function library (FUNCTION LOAD), in file order: the caller
    /// compiles and installs them (this crate knows no Lua).
    pub functions: Vec<Vec<u8>>,
}

/// Why a file could not be loaded. Where Redis logs a fixed text for the same problem
/// the message starts with it; offsets count bytes from the start of the stream.
#[derive(Debug, thiserror::Error)]
pub enum RdbError {
    /// The stream ended before the file did.
    #[error("Short read or OOM loading DB. Unrecoverable error, aborting now. (the file ends at byte offset {offset})")]
    ShortRead { offset: u64 },
    /// Reading failed.
    #[error("I/O error reading the RDB file at byte offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: std::io::Error,
    },
    /// The file does not start with "REDIS".
    #[error("Wrong signature trying to load DB from file")]
    Signature,
    /// A version this loader does not know (newer than 10, or 0).
    #[error("Can't handle RDB format version {version}")]
    Version { version: u32 },
    /// The CRC-64 stored at the end differs from the one computed over the file.
    #[error("Wrong RDB checksum expected: ({computed:x}) but got ({stored:x}). Aborting now.")]
    Checksum {
        computed: u64,
        stored: u64,
        offset: u64,
    },
    /// An opcode or value type byte that Redis 7.0 does not know either.
    #[error("Unknown RDB encoding type {type_byte} at byte offset {offset}")]
    UnknownType { type_byte: u8, offset: u64 },
    /// Valid Redis data that Basalt cannot hold (streams, modules, functions).
    #[error("{what} at byte offset {offset}")]
    Unsupported { what: String, offset: u64 },
    /// Malformed data.
    #[error("Corrupt RDB file at byte offset {offset}: {what}")]
    Corrupt { what: String, offset: u64 },
    /// For `on_entry`: a key that is already loaded.
    #[error("RDB has duplicated key '{}' in DB {db}", .key.escape_ascii())]
    DuplicateKey { db: usize, key: Vec<u8> },
    /// For `on_entry`: any other reason to stop.
    #[error("{0}")]
    Other(String),
}

impl RdbError {
    /// The byte offset where the problem was found, when there is one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            RdbError::ShortRead { offset }
            | RdbError::Io { offset, .. }
            | RdbError::Checksum { offset, .. }
            | RdbError::UnknownType { offset, .. }
            | RdbError::Unsupported { offset, .. }
            | RdbError::Corrupt { offset, .. } => Some(*offset),
            RdbError::Version { .. } => Some(5),
            RdbError::Signature => Some(0),
            RdbError::DuplicateKey { .. } | RdbError::Other(_) => None,
        }
    }
}
