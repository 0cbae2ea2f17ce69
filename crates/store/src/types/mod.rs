//! Per-type algorithms and data structures, pure over values: strings (`string.rs`,
//! INCRBYFLOAT's C long double arithmetic in `long_double.rs`, SORT's C `strtod` in
//! `strtod.rs`), and the collections with their compact and large encodings (`hash.rs`,
//! `list.rs`, `set.rs`, `zset.rs`, on top of `packed.rs`), HyperLogLog over its string
//! layout (`hyperloglog.rs`), geohash scores and searches over sorted sets (`geo.rs`), streams and their
//! consumer groups (`stream.rs`, its nodes Redis's listpacks: `listpack.rs`, also the RDB's),
//! random picks from hash
//! tables (`random.rs`), the segmented table of large collections (`segtable.rs`) and
//! the 16-byte strings that hold their members (`small_bytes.rs`).

pub mod bitfield;
pub mod geo;
pub mod hash;
pub mod hyperloglog;
pub mod list;
pub mod listpack;
pub mod long_double;
pub mod packed;
pub mod random;
pub mod segtable;
pub mod set;
pub mod small_bytes;
pub mod stream;
pub mod stream_id;
pub mod stream_node;
pub mod string;
pub mod strtod;
pub mod zset;

/// The sum of per-element sizes for MEMORY USAGE: all of them (`samples` None), or the
/// first `samples` scaled to `len` elements, as Redis estimates a large collection
/// (`MEMORY USAGE key SAMPLES n`, 5 by default) instead of walking it.
pub(crate) fn sampled_sum(sizes: impl Iterator<Item = usize>, len: usize, samples: Option<usize>) -> usize {
    let Some(samples) = samples else { return sizes.sum() };
    let (mut sum, mut seen) = (0usize, 0usize);
    for size in sizes.take(samples.max(1)) {
        sum += size;
        seen += 1;
    }
    if seen == 0 {
        return 0;
    }
    (sum as f64 / seen as f64 * len as f64) as usize
}
