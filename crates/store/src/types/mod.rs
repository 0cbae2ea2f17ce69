//! Per-type algorithms and data structures, pure over values: strings (`string.rs`,
//! INCRBYFLOAT's C long double arithmetic in `long_double.rs`), and the collections with their compact and large encodings (`hash.rs`,
//! `list.rs`, `set.rs`, `zset.rs`, on top of `packed.rs`), random picks from hash
//! tables (`random.rs`), the segmented table of large collections (`segtable.rs`) and
//! the 16-byte strings that hold their members (`small_bytes.rs`).

pub mod hash;
pub mod list;
pub mod long_double;
pub mod packed;
pub mod random;
pub mod segtable;
pub mod set;
pub mod small_bytes;
pub mod string;
pub mod strtod;
pub mod zset;
