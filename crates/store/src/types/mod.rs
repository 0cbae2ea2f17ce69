//! Per-type algorithms, pure functions over values: `string.rs` now; lists, hashes, sets and sorted sets arrive with issue 3.

pub mod decimal;
pub mod string;
