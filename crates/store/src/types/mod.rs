//! Per-type algorithms and data structures, pure over values: strings (`string.rs`,
//! `decimal.rs`), and the collections with their compact and large encodings (`hash.rs`,
//! `list.rs`, `set.rs`, `zset.rs`, on top of `packed.rs`), random picks from hash
//! tables (`random.rs`), the segmented table of large collections (`segtable.rs`) and
//! the 16-byte strings that hold their members (`small_bytes.rs`).

pub mod decimal;
pub mod hash;
pub mod list;
pub mod packed;
pub mod random;
pub mod segtable;
pub mod set;
pub mod small_bytes;
pub mod string;
pub mod zset;
