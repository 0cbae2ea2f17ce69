//! SORT and SORT_RO: the elements of a list, set or sorted set, ordered numerically or
//! bytewise (ALPHA), optionally by weights read from other keys (BY pattern), cut by
//! LIMIT, projected through other keys (GET pattern) and stored as a list (STORE).
//!
//! Redis 7.0's semantics, including its quirks: numbers are parsed with C `strtod`
//! (`store::types::strtod`: `" 1"`, `""` and `0x10` are numbers, `1e999` is not);
//! numeric ties are broken by the elements' bytes; a missing BY key weighs 0 (numeric)
//! or sorts first (ALPHA); `BY` with a pattern that has no `*` skips sorting, keeping a
//! list's or sorted set's order (reversed by DESC) and sorting a set ALPHA when the
//! result is stored (so that it is deterministic); a GET of a missing key is a null (an
//! empty string in a STORE); the input sorted set is converted to its large form
//! ("skiplist"), as Redis 7.0 does. Differences, by choice:
//! - ALPHA compares bytes, which is Redis's order in the C locale (`strcoll` there is
//!   `strcmp`) except that Redis stops at an embedded NUL.
//! - Elements with equal weights keep their input order (a stable sort); Redis's
//!   partial sort of a limited BY-pattern query does not promise that.
//!
//! Patterns read keys no spec names, so a SORT with a `*` pattern locks every shard of
//! its database (the same cost as a SCAN step on every shard: once per command). The
//! log records a SORT ... STORE as its effect (DEL, then RPUSH of the result), and
//! nothing for a SORT without STORE.
//!
//! O(N + M log M) like Redis: N elements read, M = N sorted (M = LIMIT's count when
//! nothing is sorted), plus one lookup per element and pattern.

use std::cmp::Ordering;

use resp::encode;
use store::db::LockedShards;
use store::events::class;
use store::types::hash::Hash;
use store::types::list::List;
use store::types::set::Set;
use store::types::strtod::sort_weight;
use store::types::zset::ZSet;
use store::{ValueRef, ValueType};

use super::args;
use super::collections as coll;
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Movable, Writes};
use super::key_flags as kf;
use crate::shared::ThreadStats;

/// Elements of a STORE result per RPUSH record in the log (Redis's AOF rewrite batches
/// the same way), so that no single record grows with the result.
const LOG_BATCH: usize = 64;

/// What a BY or GET pattern reads for one element, decided once per command as Redis's
/// `lookupKeyByPattern` decides it per call (C-string rules: the pattern is read up to
/// its first NUL when looking for `#`, `*` and `->`).
#[derive(Clone, Copy)]
enum Pattern<'a> {
    /// `#`: the element itself.
    Element,
    /// No `*`: nothing (a constant key is not looked up).
    Nothing,
    /// `prefix*suffix`, a string key, or `prefix*suffix->field`, a hash field.
    Key {
        prefix: &'a [u8],
        suffix: &'a [u8],
        field: Option<&'a [u8]>,
    },
}

impl<'a> Pattern<'a> {
    fn parse(p: &'a [u8]) -> Pattern<'a> {
        if p.first() == Some(&b'#') && p.get(1).is_none_or(|&b| b == 0) {
            return Pattern::Element;
        }
        let c_str = &p[..p.iter().position(|&b| b == 0).unwrap_or(p.len())];
        let Some(star) = c_str.iter().position(|&b| b == b'*') else {
            return Pattern::Nothing;
        };
        // "->" after the star, with at least one byte after it, starts a hash field
        // that runs to the pattern's end.
        let arrow = c_str[star + 1..]
            .windows(2)
            .position(|w| w == b"->")
            .map(|i| star + 1 + i)
            .filter(|&f| f + 2 < c_str.len());
        match arrow {
            Some(f) => Pattern::Key {
                prefix: &p[..star],
                suffix: &p[star + 1..f],
                field: Some(&p[f + 2..]),
            },
            None => Pattern::Key {
                prefix: &p[..star],
                suffix: &p[star + 1..],
                field: None,
            },
        }
    }

    fn reads_keys(&self) -> bool {
        matches!(self, Pattern::Key { .. })
    }
}

/// Parsed options.
struct Options<'a> {
    /// BY's pattern when it has a `*` (a pattern without one only turns sorting off).
    by: Option<Pattern<'a>>,
    dont_sort: bool,
    /// LIMIT offset count; (0, -1) without LIMIT.
    limit: (i64, i64),
    gets: Vec<Pattern<'a>>,
    desc: bool,
    alpha: bool,
    store: Option<&'a [u8]>,
}

fn parse<'a>(a: &[&'a [u8]], read_only: bool) -> Result<Options<'a>, CommandError> {
    let mut o = Options {
        by: None,
        dont_sort: false,
        limit: (0, -1),
        gets: Vec::new(),
        desc: false,
        alpha: false,
        store: None,
    };
    let mut i = 2;
    while i < a.len() {
        let left = a.len() - i - 1;
        let w = a[i];
        if args::is(w, "asc") {
            o.desc = false;
        } else if args::is(w, "desc") {
            o.desc = true;
        } else if args::is(w, "alpha") {
            o.alpha = true;
        } else if args::is(w, "limit") && left >= 2 {
            o.limit = (args::int(a[i + 1])?, args::int(a[i + 2])?);
            i += 2;
        } else if args::is(w, "store") && left >= 1 && !read_only {
            o.store = Some(a[i + 1]);
            i += 1;
        } else if args::is(w, "by") && left >= 1 {
            let p = Pattern::parse(a[i + 1]);
            // As Redis: the last BY wins, and one without `*` turns sorting off for good.
            match p {
                Pattern::Key { .. } => o.by = Some(p),
                _ => o.dont_sort = true,
            }
            i += 1;
        } else if args::is(w, "get") && left >= 1 {
            o.gets.push(Pattern::parse(a[i + 1]));
            i += 1;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    Ok(o)
}

/// Reads what patterns name, under the locks the command took, building each key in one
/// reused buffer.
struct Reader<'l, 'k> {
    locked: &'l mut LockedShards<'k>,
    /// The keyspace's event classes: a pattern that names a missing key is a `keymiss`.
    events: &'k store::events::Flags,
    /// Where the keyspace hits and misses of those reads are counted.
    stats: &'l ThreadStats,
    db: usize,
    now_ms: i64,
    key: Vec<u8>,
}

impl Reader<'_, '_> {
    /// Calls `f` with the value a pattern reads for `element`: a string key's value or a
    /// hash field; None when the key is missing, of another type, or the field absent.
    fn with<R>(&mut self, pattern: Pattern<'_>, element: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> R {
        let (prefix, suffix, field) = match pattern {
            Pattern::Element => return f(Some(element)),
            Pattern::Nothing => return f(None),
            Pattern::Key { prefix, suffix, field } => (prefix, suffix, field),
        };
        self.key.clear();
        self.key.extend_from_slice(prefix);
        self.key.extend_from_slice(element);
        self.key.extend_from_slice(suffix);
        let key = &self.key[..];
        let (h, shard) = self.locked.shard_for(self.db, key);
        // Each read is a lookup as Redis's (`Ctx::lookup`: a hit, or a miss and its
        // `keymiss` event, published after the command).
        let (stats, events, db) = (self.stats, self.events, self.db);
        let lookup = |found: bool| {
            super::count_lookup(stats, found);
            if !found {
                store::events::push(events, class::KEY_MISS, "keymiss", db, key);
            }
        };
        match field {
            Some(field) => match coll::read::<Hash>(shard, h, key, self.now_ms) {
                Ok(Some(hash)) => {
                    lookup(true);
                    f(hash.field(field))
                }
                found => {
                    lookup(found.is_err());
                    f(None)
                }
            },
            None => {
                let found = shard.read(h, key, self.now_ms, None).map(|e| e.value());
                lookup(found.is_some());
                match found {
                    Some(ValueRef::Str(s)) => s.with_bytes(|b| f(Some(b))),
                    _ => f(None),
                }
            }
        }
    }

    fn get(&mut self, pattern: Pattern<'_>, element: &[u8]) -> Option<Vec<u8>> {
        self.with(pattern, element, |v| v.map(<[u8]>::to_vec))
    }
}

/// The range [start, end] of `len` sorted elements that LIMIT selects, as Redis computes
/// it (empty when end < start).
fn limit_range(len: usize, (offset, count): (i64, i64)) -> (i64, i64) {
    let len = len as i64;
    let start = offset.max(0);
    let end = if count < 0 {
        len - 1
    } else {
        start.saturating_add(count) - 1
    };
    if start >= len {
        return (len - 1, len - 2);
    }
    (start, end.min(len - 1))
}

/// The elements to sort, read under the lock. For a list or sorted set that is not
/// sorted, only LIMIT's range is read, in the collection's order (reversed by DESC), and
/// the range is then the whole vector.
fn load(
    locked: &mut LockedShards<'_>,
    ctx: &Ctx<'_>,
    key: &[u8],
    o: &mut Options<'_>,
) -> Result<(Vec<Vec<u8>>, (i64, i64)), CommandError> {
    let db = ctx.client.db;
    let (h, shard) = locked.shard_for(db, key);
    let found = shard.read(h, key, ctx.now_ms, None);
    ctx.lookup(key, found.is_some());
    let kind = match found {
        None => return Ok((Vec::new(), limit_range(0, o.limit))),
        Some(e) => match e.value() {
            ValueRef::Obj(obj) => obj.value_type(),
            ValueRef::Str(_) => return Err(CommandError::WrongType),
        },
    };
    match kind {
        ValueType::List => {
            let list =
                coll::read::<List>(shard, h, key, ctx.now_ms)?.ok_or(CommandError::NoSuchKey)?;
            let range = limit_range(list.len(), o.limit);
            if o.dont_sort {
                return Ok(ordered_range(list.len(), range, o.desc, |from, n| {
                    list.iter_from(from).take(n).map(<[u8]>::to_vec).collect()
                }));
            }
            Ok((list.iter().map(<[u8]>::to_vec).collect(), range))
        }
        ValueType::Set => {
            let set =
                coll::read::<Set>(shard, h, key, ctx.now_ms)?.ok_or(CommandError::NoSuchKey)?;
            if o.dont_sort && o.store.is_some() {
                // A stored result must not depend on the set's internal order.
                o.dont_sort = false;
                o.alpha = true;
                o.by = None;
            }
            Ok((set.members(), limit_range(set.len(), o.limit)))
        }
        ValueType::ZSet => {
            let mut zset =
                coll::get_key::<ZSet>(ctx, shard, h, key)?.ok_or(CommandError::NoSuchKey)?;
            zset.to_large();
            let range = limit_range(zset.len(), o.limit);
            if o.dont_sort {
                return Ok(ordered_range(zset.len(), range, o.desc, |from, n| {
                    zset.range(from, from + n - 1)
                        .into_iter()
                        .map(|(_, m)| m)
                        .collect()
                }));
            }
            Ok((zset.iter().map(|(_, m)| m.to_vec()).collect(), range))
        }
        _ => Err(CommandError::WrongType),
    }
}

/// LIMIT's range of an ordered collection of `len` elements, read with `read(from, n)`
/// (n elements from ascending position `from`), reversed for DESC; with the range
/// that then selects all of them.
fn ordered_range(
    len: usize,
    (start, end): (i64, i64),
    desc: bool,
    read: impl FnOnce(usize, usize) -> Vec<Vec<u8>>,
) -> (Vec<Vec<u8>>, (i64, i64)) {
    if end < start {
        return (Vec::new(), (start, end));
    }
    let n = (end - start + 1) as usize;
    let from = if desc {
        len - start as usize - n
    } else {
        start as usize
    };
    let mut items = read(from, n);
    if desc {
        items.reverse();
    }
    (items, (0, n as i64 - 1))
}

const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// Sorts `elements` as the options say (they are not `dont_sort`).
fn sort(reader: &mut Reader<'_, '_>, elements: Vec<Vec<u8>>, o: &Options<'_>) -> Result<Vec<Vec<u8>>, CommandError> {
    let direction = |ord: Ordering| if o.desc { ord.reverse() } else { ord };
    if o.alpha {
        let mut keyed: Vec<(Option<Vec<u8>>, Vec<u8>)> = match o.by {
            Some(p) => elements.into_iter().map(|e| (reader.get(p, &e), e)).collect(),
            None => elements.into_iter().map(|e| (None, e)).collect(),
        };
        match o.by {
            // A missing weight (None) sorts first.
            Some(_) => keyed.sort_by(|x, y| direction(x.0.cmp(&y.0))),
            None => keyed.sort_by(|x, y| direction(x.1.cmp(&y.1))),
        }
        return Ok(keyed.into_iter().map(|(_, e)| e).collect());
    }
    let mut weighted = Vec::with_capacity(elements.len());
    let mut not_a_number = false;
    for e in elements {
        // A missing weight is 0; one that is not a number fails the sort, once every
        // weight was read (as Redis: the keys read are reported as `keymiss` events).
        let weight = match o.by {
            Some(p) => reader.with(p, &e, |v| v.map_or(Some(0.0), sort_weight)),
            None => sort_weight(&e),
        };
        match weight {
            Some(w) => weighted.push((w, e)),
            None => not_a_number = true,
        }
    }
    if not_a_number {
        return Err(CommandError::msg(NOT_DOUBLE));
    }
    // Equal weights are ordered by the elements' bytes, so the result is deterministic.
    weighted.sort_by(|x, y| direction(x.0.partial_cmp(&y.0).unwrap_or(Ordering::Equal).then_with(|| x.1.cmp(&y.1))));
    Ok(weighted.into_iter().map(|(_, e)| e).collect())
}

fn sort_generic(ctx: &mut Ctx<'_>, a: &[&[u8]], read_only: bool) -> Result<(), CommandError> {
    let mut o = parse(a, read_only)?;
    let db = ctx.client.db;
    let ks = ctx.ks();
    let reads_keys = o.by.is_some() || o.gets.iter().any(Pattern::reads_keys);
    let mut locked = if reads_keys {
        store::release_kept();
        ks.lock_dbs(&[db])
    } else {
        ks.lock_keys(db, std::iter::once(a[1]).chain(o.store))
    };
    let (elements, (start, end)) = load(&mut locked, ctx, a[1], &mut o)?;
    let mut reader = Reader { locked: &mut locked, events: ks.events(), stats: ctx.stats, db, now_ms: ctx.now_ms, key: Vec::new() };
    let sorted = if o.dont_sort { elements } else { sort(&mut reader, elements, &o)? };
    let chosen = if end < start { &sorted[..0] } else { &sorted[start as usize..=end as usize] };

    // The output: each element, or what each GET pattern reads for it.
    let mut output: Vec<Option<Vec<u8>>> = Vec::with_capacity(chosen.len() * o.gets.len().max(1));
    for e in chosen {
        if o.gets.is_empty() {
            output.push(Some(e.clone()));
        }
        for &p in &o.gets {
            output.push(reader.get(p, e));
        }
    }

    let Some(dest) = o.store else {
        drop(locked);
        // Nothing changed: nothing to propagate.
        ctx.propagate_nothing();
        encode::array_len(ctx.out, output.len());
        for v in &output {
            match v {
                Some(v) => encode::bulk(ctx.out, v),
                None => encode::null(ctx.out, ctx.client.proto),
            }
        }
        return Ok(());
    };
    let items: Vec<&[u8]> = output.iter().map(|v| v.as_deref().unwrap_or_default()).collect();
    let (h, shard) = locked.shard_for(db, dest);
    ctx.client.changed_nothing = !coll::store(ctx, shard, h, dest, List::from_items(items.iter().copied()), (class::LIST, "sortstore"));
    drop(locked);
    ctx.propagate_as(|| {
        let mut records = vec![vec![b"DEL".to_vec(), dest.to_vec()]];
        for batch in items.chunks(LOG_BATCH) {
            let mut rec = Vec::with_capacity(batch.len() + 2);
            rec.push(b"RPUSH".to_vec());
            rec.push(dest.to_vec());
            rec.extend(batch.iter().map(|v| v.to_vec()));
            records.push(rec);
        }
        records
    });
    encode::integer(ctx.out, items.len() as i64);
    Ok(())
}

/// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
/// [STORE destination] — the sorted elements, or with STORE the stored list's length.
fn sort_cmd(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    sort_generic(ctx, a, false)
}

/// SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]
/// — SORT without STORE.
fn sort_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    sort_generic(ctx, a, true)
}

/// ACL categories besides those the flags give (@write/@read, @slow).
const SORT_ACL: &[&str] = &["set", "sortedset", "list", "dangerous"];

#[rustfmt::skip]
pub const COMMANDS: &[CommandSpec] = &[
    spec("sort", -2, WRITE | DENYOOM | READS_ANY_KEY, (1, 1, 1), SORT_ACL, "generic", "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", sort_cmd).args(ARGS_SORT).complexity("O(N+M*log(M)) or O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Unknown, find: FindKeys::Unknown }, KeySpec { flags: kf::OW | kf::UPDATE, begin: BeginSearch::Unknown, find: FindKeys::Unknown }]).movable(Movable::Sort).writes(Writes::AfterFirst).since("1.0.0"),
    spec("sort_ro", -2, READONLY | READS_ANY_KEY, (1, 1, 1), SORT_ACL, "generic", "Returns the sorted elements of a list, a set, or a sorted set.", sort_ro).args(ARGS_SORT_RO).complexity("O(N+M*log(M)) or O(N)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }, KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Unknown, find: FindKeys::Unknown }]).movable(Movable::Patterns).since("7.0.0"),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_SORT: &[Arg] = &[arg("key", Key).key_spec(0), arg("pattern", Pattern).key_spec(1).token("BY").optional(), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)]), arg("pattern", Pattern).key_spec(1).token("GET").optional().multiple().multiple_token(), arg("order", OneOf).optional().args(&[arg("asc", PureToken).token("ASC"), arg("desc", PureToken).token("DESC")]), arg("sorting", PureToken).token("ALPHA").optional(), arg("destination", Key).key_spec(2).token("STORE").optional()];
    pub const ARGS_SORT_RO: &[Arg] = &[arg("key", Key).key_spec(0), arg("pattern", Pattern).key_spec(1).token("BY").optional(), arg("offset_count", Block).token("LIMIT").optional().args(&[arg("offset", Integer), arg("count", Integer)]), arg("pattern", Pattern).key_spec(1).token("GET").optional().multiple().multiple_token(), arg("order", OneOf).optional().args(&[arg("asc", PureToken).token("ASC"), arg("desc", PureToken).token("DESC")]), arg("sorting", PureToken).token("ALPHA").optional()];
}
use docs_args::*;
