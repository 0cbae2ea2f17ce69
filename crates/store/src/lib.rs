//! The Basalt keyspace: numbered databases split into locked shards, the compact entry
//! that holds a key and its value, value types and their encodings, expiry, and the
//! clock. It knows nothing of RESP, sockets or commands; the server crate drives it.
//!
//! Where to look: `db.rs` (databases, shard choice, lock ordering), `shard_lock.rs`
//! (shard guards, lock coalescing across a batch), `shard.rs` (hash
//! table, lazy and active expiry, SCAN positions), `entry.rs` (memory layout of a key),
//! `value.rs` (boxed values and type names), `inline.rs` (small collections stored in
//! the entry), `events.rs` (keyspace events queued for notifications), `types/` (per-type algorithms), `glob.rs`
//! (pattern matching), `clock.rs` (time), `capture.rs` (point-in-time snapshots without
//! fork), `rdb/` (the RDB file format).

pub mod capture;
pub mod clock;
pub mod db;
pub mod entry;
pub mod events;
pub mod glob;
pub mod inline;
pub mod rdb;
pub mod shard;
pub mod shard_lock;
pub mod size_class;
pub mod str_ref;
pub mod types;
pub mod value;
pub mod varint;

pub use clock::Clock;
pub use db::{Keyspace, LockedShards};
pub use entry::{Entry, Payload, StrRef, ValueRef};
pub use shard::{set_expired_keys_live, Shard, ShardStats};
pub use shard_lock::{release_kept, Coalescing, ShardGuard};
pub use value::{Object, ValueType};
