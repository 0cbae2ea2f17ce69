//! Stream commands without consumer groups: XADD, XTRIM, XDEL, XLEN, XRANGE, XREVRANGE,
//! XREAD and XSETID, as Redis 7.0; and what the group commands (`stream_groups.rs`) and
//! XINFO (`stream_info.rs`) share with them: ID parsing, XREAD's options, blocking.
//!
//! The stream itself, its nodes and its trimming are `store::types::stream`'s. What the
//! log and the replicas get is Redis's: XADD's `*` or `ms-*` as the ID it made, and an
//! approximate trim (`~`) as the exact one it amounted to (`=` and the length, or the
//! first ID, it left), so that a replay removes exactly what the call removed. Replayed
//! (or applied from a master), a trim knows no LIMIT, as Redis's.
//!
//! A read that finds nothing with BLOCK waits on the waiters' registry (`blocking.rs`),
//! served later by `stream_serve.rs`; replies are written by `stream_reply.rs`.

use resp::encode;
use store::events::class;
use store::types::stream::{NodeLimits, Stream, StreamId, Trim, TrimTo};

use super::args::{self, is};
use super::collections as coll;
use super::flags::*;
use super::key_flags as kf;
use super::keyspace_events::notify;
use super::stream_reply::{id_text, reply_id, reply_range, reply_read};
use crate::state::waiters::{GroupRead, Op, ReadOp};
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Movable, Writes};

pub(super) const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";

/// C's `strtoull` over a C string as Redis's `string2ull` reads one: a strict decimal
/// first, else leading blanks, a sign and leading zeros allowed; nothing may follow,
/// and a negative strict decimal is refused (a negative `strtoull` accepts wraps).
fn string2ull(s: &[u8]) -> Option<u64> {
    if let Some(n) = store::types::string::parse_i64(s) {
        return u64::try_from(n).ok();
    }
    let mut rest = s;
    while let Some((c, tail)) = rest.split_first() {
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            rest = tail;
        } else {
            break;
        }
    }
    let negative = match rest.first() {
        Some(b'-') => {
            rest = &rest[1..];
            true
        }
        Some(b'+') => {
            rest = &rest[1..];
            false
        }
        _ => false,
    };
    if rest.is_empty() || !rest.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: u64 = 0;
    for &d in rest {
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(if negative { n.wrapping_neg() } else { n })
}

/// Parses a stream ID as Redis's `streamGenericParseIDOrReply`: `-` and `+` (unless
/// `strict`), `ms`, `ms-seq`, and with `seq_given` `ms-*` (then it is set false).
/// `missing_seq` is the sequence of a bare `ms`. The argument is read as a C string.
fn parse_id_generic(arg: &[u8], missing_seq: u64, strict: bool, seq_given: Option<&mut bool>) -> Result<StreamId, CommandError> {
    let invalid = || CommandError::msg(INVALID_ID);
    if arg.len() > 127 {
        return Err(invalid());
    }
    let arg = arg.split(|&b| b == 0).next().unwrap_or_default();
    if arg == b"-" || arg == b"+" {
        if strict {
            return Err(invalid());
        }
        if let Some(g) = seq_given {
            *g = true;
        }
        return Ok(if arg == b"-" { StreamId::MIN } else { StreamId::MAX });
    }
    let (ms, seq) = match arg.iter().position(|&b| b == b'-') {
        Some(dash) => (&arg[..dash], Some(&arg[dash + 1..])),
        None => (arg, None),
    };
    let ms = string2ull(ms).ok_or_else(invalid)?;
    let mut given = true;
    let seq = match seq {
        None => missing_seq,
        Some(b"*") if seq_given.is_some() => {
            given = false;
            0
        }
        Some(s) => string2ull(s).ok_or_else(invalid)?,
    };
    if let Some(g) = seq_given {
        *g = given;
    }
    Ok(StreamId::new(ms, seq))
}

/// An ID where `-` and `+` mean the smallest and greatest.
pub(super) fn parse_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, CommandError> {
    parse_id_generic(arg, missing_seq, false, None)
}

/// An ID proper: `-` and `+` refused (XADD, XDEL, XACK, XCLAIM ...).
pub(super) fn parse_strict_id(arg: &[u8]) -> Result<StreamId, CommandError> {
    parse_id_generic(arg, 0, true, None)
}

/// A range bound: an ID, or `(ID` exclusive (then strict). Ok((id, exclusive)).
pub(super) fn parse_interval_id(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), CommandError> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_id_generic(&arg[1..], missing_seq, true, None)?, true))
    } else {
        Ok((parse_id(arg, missing_seq)?, false))
    }
}

/// The node limits of the configuration.
fn node_limits(ctx: &Ctx<'_>) -> NodeLimits {
    let c = ctx.shared.config.read();
    NodeLimits {
        max_bytes: usize::try_from(c.stream_node_max_bytes).unwrap_or(usize::MAX),
        max_entries: c.stream_node_max_entries,
    }
}

/// The trim options of XADD and XTRIM.
struct TrimArgs {
    trim: Option<Trim>,
    /// The position of the threshold argument (the `~` or `=` before it, if any).
    threshold_at: usize,
    /// XADD: the position of the ID argument, the ID (None for `*`) and whether its
    /// sequence was given; NOMKSTREAM.
    id_at: usize,
    id: Option<(StreamId, bool)>,
    no_mkstream: bool,
}

/// Parses XADD's (`xadd`) or XTRIM's options as Redis's
/// `streamParseAddOrTrimArgsOrReply`, in its order of checks.
fn parse_add_or_trim(ctx: &Ctx<'_>, a: &[&[u8]], xadd: bool) -> Result<TrimArgs, CommandError> {
    let mut to: Option<TrimTo> = None;
    let mut approx = false;
    let mut threshold_at = 0;
    let mut limit: i64 = 0;
    let mut limit_given = false;
    let mut out = TrimArgs { trim: None, threshold_at: 0, id_at: a.len(), id: None, no_mkstream: false };
    let incompatible = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    let mut i = 2;
    while i < a.len() {
        let more = a.len() - 1 - i;
        let opt = a[i];
        if xadd && opt == b"*" {
            break;
        } else if (is(opt, "maxlen") || is(opt, "minid")) && more > 0 {
            if to.is_some() {
                return Err(CommandError::msg(incompatible));
            }
            approx = false;
            let next = a[i + 1];
            if more >= 2 && next == b"~" {
                approx = true;
                i += 1;
            } else if more >= 2 && next == b"=" {
                i += 1;
            }
            if is(opt, "maxlen") {
                let n = args::int(a[i + 1])?;
                if n < 0 {
                    return Err(CommandError::msg("ERR The MAXLEN argument must be >= 0."));
                }
                to = Some(TrimTo::MaxLen(n as u64));
            } else {
                to = Some(TrimTo::MinId(parse_strict_id(a[i + 1])?));
            }
            i += 1;
            threshold_at = i;
        } else if is(opt, "limit") && more > 0 {
            limit = args::int(a[i + 1])?;
            if limit < 0 {
                return Err(CommandError::msg("ERR The LIMIT argument must be >= 0."));
            }
            limit_given = true;
            i += 1;
        } else if xadd && is(opt, "nomkstream") {
            out.no_mkstream = true;
        } else if xadd {
            let mut seq_given = true;
            let id = parse_id_generic(opt, 0, true, Some(&mut seq_given))?;
            out.id = Some((id, seq_given));
            break;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    out.id_at = i;
    if limit != 0 && to.is_none() {
        return Err(CommandError::msg("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"));
    }
    if !xadd && to.is_none() {
        return Err(CommandError::msg("ERR syntax error, XTRIM must be called with a trimming strategy"));
    }
    if ctx.client.loading || ctx.client.from_master {
        // The threshold was rewritten to what the call removed: no limit on replay.
        limit = 0;
    } else if limit_given {
        if !approx {
            return Err(CommandError::msg("ERR syntax error, LIMIT cannot be used without the special ~ option"));
        }
    } else if approx {
        let per_node = i64::try_from(ctx.shared.config.read().stream_node_max_entries).unwrap_or(i64::MAX);
        limit = per_node.saturating_mul(100);
        if limit <= 0 {
            limit = 10_000;
        }
        limit = limit.min(1_000_000);
    } else {
        limit = 0;
    }
    out.trim = to.map(|to| Trim { to, approx, limit: limit as u64 });
    out.threshold_at = threshold_at;
    Ok(out)
}

/// The arguments of an approximate trim as the log gets them: `=` and the length, or
/// first ID, the stream was left with (Redis's `streamRewriteApproxSpecifier` and
/// `streamRewriteTrimArgument`).
fn rewrite_trim(record: &mut [Vec<u8>], s: &Stream, trim: &Trim, threshold_at: usize) {
    record[threshold_at - 1] = b"=".to_vec();
    record[threshold_at] = match trim.to {
        TrimTo::MaxLen(_) => s.len().to_string().into_bytes(),
        TrimTo::MinId(_) => id_text(if s.is_empty() { StreamId::MAX } else { s.first_id() }),
    };
}

/// XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value
/// [field value ...]
fn xadd(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let parsed = parse_add_or_trim(ctx, a, true)?;
    let field_at = parsed.id_at + 1;
    let fields = a.len().saturating_sub(field_at);
    if fields < 2 || fields % 2 == 1 {
        return Err(CommandError::Arity("xadd".into()));
    }
    if let Some((id, true)) = parsed.id {
        if id.is_zero() {
            return Err(CommandError::msg("ERR The ID specified in XADD must be greater than 0-0"));
        }
    }
    // (Checked before the key is created; Redis leaves an empty stream behind.)
    let total: usize = a[field_at..].iter().map(|f| f.len()).sum();
    if total > store::types::stream::NODE_MAX_SIZE {
        return Err(CommandError::msg("ERR Elements are too large to be stored"));
    }
    let limits = node_limits(ctx);
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    if parsed.no_mkstream && !coll::check::<Stream>(&mut shard, h, a[1], ctx.now_ms)? {
        drop(shard);
        ctx.client.changed_nothing = true;
        ctx.null();
        return Ok(());
    }
    let mut s = coll::get_or_create::<Stream>(ctx, &mut shard, h, a[1])?;
    if s.last_id == StreamId::MAX {
        return Err(CommandError::msg("ERR The stream has exhausted the last possible ID, unable to add more items"));
    }
    let id = match parsed.id {
        None => s.next_id(u64::try_from(ctx.now_ms).unwrap_or(0)).ok_or(CommandError::NoSuchKey)?,
        Some((id, true)) => id,
        Some((id, false)) if id.ms == s.last_id.ms => {
            if s.last_id.seq == u64::MAX {
                return Err(CommandError::msg("ERR Elements are too large to be stored"));
            }
            StreamId::new(id.ms, s.last_id.seq + 1)
        }
        Some((id, false)) => id,
    };
    if id <= s.last_id {
        return Err(CommandError::msg("ERR The ID specified in XADD is equal or smaller than the target stream top item"));
    }
    s.append(id, &a[field_at..], limits);
    let mut removed = 0;
    if let Some(trim) = parsed.trim {
        removed = s.trim(trim);
    }
    let mut record: Option<Vec<Vec<u8>>> = None;
    if parsed.trim.is_some_and(|t| t.approx) || !matches!(parsed.id, Some((_, true))) {
        let mut r: Vec<Vec<u8>> = a.iter().map(|w| w.to_vec()).collect();
        if let Some(trim) = parsed.trim.filter(|t| t.approx) {
            rewrite_trim(&mut r, &s, &trim, parsed.threshold_at);
        }
        r[parsed.id_at] = id_text(id);
        record = Some(r);
    }
    drop(s);
    notify(ctx, class::STREAM, "xadd", a[1]);
    if removed > 0 {
        notify(ctx, class::STREAM, "xtrim", a[1]);
    }
    drop(shard);
    if let Some(r) = record {
        ctx.propagate_as(|| vec![r]);
    }
    reply_id(ctx.out, id);
    Ok(())
}

/// A write that found nothing to do answers 0 and changed nothing (XTRIM, XDEL, XACK).
pub(super) fn changed_nothing(ctx: &mut Ctx<'_>) {
    ctx.client.changed_nothing = true;
    encode::integer(ctx.out, 0);
}

/// XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
fn xtrim(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let parsed = parse_add_or_trim(ctx, a, false)?;
    let trim = parsed.trim.ok_or(CommandError::Syntax)?;
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let Some(mut s) = coll::get_key::<Stream>(ctx, &mut shard, h, a[1])? else {
        drop(shard);
        return Ok(changed_nothing(ctx));
    };
    let removed = s.trim(trim);
    if removed == 0 {
        drop(s);
        drop(shard);
        return Ok(changed_nothing(ctx));
    }
    if trim.approx {
        let mut r: Vec<Vec<u8>> = a.iter().map(|w| w.to_vec()).collect();
        rewrite_trim(&mut r, &s, &trim, parsed.threshold_at);
        ctx.propagate_as(|| vec![r]);
    }
    drop(s);
    notify(ctx, class::STREAM, "xtrim", a[1]);
    drop(shard);
    ctx.client.changes = Some(removed);
    encode::integer(ctx.out, removed as i64);
    Ok(())
}

/// XDEL key id [id ...] — the number of entries deleted.
fn xdel(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let Some(mut s) = coll::get_key::<Stream>(ctx, &mut shard, h, a[1])? else {
        drop(shard);
        return Ok(changed_nothing(ctx));
    };
    // Every ID is checked before any is deleted.
    let ids = a[2..].iter().map(|x| parse_strict_id(x)).collect::<Result<Vec<_>, _>>()?;
    let deleted = ids.into_iter().filter(|id| s.delete(*id)).count() as u64;
    drop(s);
    if deleted > 0 {
        notify(ctx, class::STREAM, "xdel", a[1]);
        ctx.client.changes = Some(deleted);
    } else {
        ctx.client.changed_nothing = true;
    }
    drop(shard);
    encode::integer(ctx.out, deleted as i64);
    Ok(())
}

/// XLEN key
fn xlen(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let n = coll::read_key::<Stream>(ctx, &mut shard, h, a[1])?.map_or(0, |s| s.len());
    drop(shard);
    encode::integer(ctx.out, n as i64);
    Ok(())
}

/// XRANGE key start end [COUNT count], XREVRANGE key end start [COUNT count]
fn range_command(ctx: &mut Ctx<'_>, a: &[&[u8]], rev: bool) -> Result<(), CommandError> {
    let (start_arg, end_arg) = if rev { (a[3], a[2]) } else { (a[2], a[3]) };
    let (mut start, start_ex) = parse_interval_id(start_arg, 0)?;
    if start_ex {
        start = start.next().ok_or(CommandError::msg("ERR invalid start ID for the interval"))?;
    }
    let (mut end, end_ex) = parse_interval_id(end_arg, u64::MAX)?;
    if end_ex {
        end = end.prev().ok_or(CommandError::msg("ERR invalid end ID for the interval"))?;
    }
    let mut count: i64 = -1;
    let mut j = 4;
    while j < a.len() {
        if is(a[j], "count") && j + 1 < a.len() {
            count = args::int(a[j + 1])?.max(0);
            j += 2;
        } else {
            return Err(CommandError::Syntax);
        }
    }
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let Some(s) = coll::read_key::<Stream>(ctx, &mut shard, h, a[1])? else {
        drop(shard);
        encode::array_len(ctx.out, 0);
        return Ok(());
    };
    if count == 0 {
        drop(s);
        drop(shard);
        encode::null_array(ctx.out, ctx.client.proto);
        return Ok(());
    }
    let count = if count < 0 { 0 } else { usize::try_from(count).unwrap_or(usize::MAX) };
    let (lo, hi) = if start <= end { (start, end) } else { (StreamId::MAX, StreamId::MIN) };
    reply_range(ctx.out, &s, lo, hi, count, rev);
    Ok(())
}

fn xrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    range_command(ctx, a, false)
}

fn xrevrange(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    range_command(ctx, a, true)
}

/// XREAD's and XREADGROUP's options, as Redis parses them.
pub(super) struct ReadArgs<'a> {
    /// BLOCK's milliseconds (None: not blocking).
    pub block_ms: Option<i64>,
    /// COUNT (0: all).
    pub count: usize,
    pub group: Option<(&'a [u8], &'a [u8])>,
    pub noack: bool,
    /// The position of the first key; as many keys as IDs follow.
    pub streams_at: usize,
    pub streams: usize,
}

/// Parses XREAD (`group` false) or XREADGROUP options, in Redis's order of checks.
pub(super) fn parse_read<'a>(ctx: &Ctx<'_>, a: &[&'a [u8]], group: bool) -> Result<ReadArgs<'a>, CommandError> {
    let mut r = ReadArgs { block_ms: None, count: 0, group: None, noack: false, streams_at: 0, streams: 0 };
    let mut i = 1;
    while i < a.len() {
        let more = a.len() - i - 1;
        let o = a[i];
        if is(o, "block") && more > 0 {
            if ctx.client.in_script {
                return Err(CommandError::Owned(format!("ERR {} command is not allowed with BLOCK option from scripts", String::from_utf8_lossy(a[0]))));
            }
            i += 1;
            let t = args::int(a[i]).map_err(|_| CommandError::msg("ERR timeout is not an integer or out of range"))?;
            if t < 0 {
                return Err(CommandError::msg("ERR timeout is negative"));
            }
            r.block_ms = Some(t);
        } else if is(o, "count") && more > 0 {
            i += 1;
            let n = args::int(a[i])?;
            r.count = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
        } else if is(o, "streams") && more > 0 {
            r.streams_at = i + 1;
            let n = a.len() - r.streams_at;
            if !n.is_multiple_of(2) {
                // (Redis 7.0.15 names XREAD and '$' for XREADGROUP too.)
                return Err(CommandError::msg("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."));
            }
            r.streams = n / 2;
            break;
        } else if is(o, "group") && more >= 2 {
            if !group {
                return Err(CommandError::msg("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."));
            }
            r.group = Some((a[i + 1], a[i + 2]));
            i += 2;
        } else if is(o, "noack") {
            if !group {
                return Err(CommandError::msg("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."));
            }
            r.noack = true;
        } else {
            return Err(CommandError::Syntax);
        }
        i += 1;
    }
    if r.streams_at == 0 {
        return Err(CommandError::Syntax);
    }
    if group && r.group.is_none() {
        return Err(CommandError::msg("ERR Missing GROUP option for XREADGROUP"));
    }
    Ok(r)
}

/// XREAD [COUNT count] [BLOCK ms] STREAMS key [key ...] id [id ...]
fn xread(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let r = parse_read(ctx, a, false)?;
    let keys = &a[r.streams_at..r.streams_at + r.streams];
    let db = ctx.client.db;
    let ks = ctx.ks();
    let mut locked = ks.lock_keys(db, keys);
    // Each key's type is checked before its ID is read, as Redis does.
    let mut after = Vec::with_capacity(keys.len());
    for (k, key) in keys.iter().enumerate() {
        let (h, shard) = locked.shard_for(db, key);
        let stream = coll::read_key::<Stream>(ctx, shard, h, key)?;
        let arg = a[r.streams_at + r.streams + k];
        let id = if arg == b"$" {
            stream.map_or(StreamId::MIN, |s| s.last_id)
        } else if arg == b">" {
            return Err(CommandError::msg(
                "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
            ));
        } else {
            parse_strict_id(arg)?
        };
        after.push(id);
    }
    let mut served: Vec<(&[u8], Vec<u8>)> = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        let (h, shard) = locked.shard_for(db, key);
        let found = coll::read_key::<Stream>(ctx, shard, h, key)?;
        let Some(s) = found else { continue };
        let Some(start) = after[k].next() else { continue };
        let mut body = Vec::new();
        if reply_range(&mut body, &s, start, StreamId::MAX, r.count, false) > 0 {
            served.push((key, body));
        }
    }
    drop(locked);
    if served.is_empty() {
        if let Some(timeout) = r.block_ms {
            return block_read(ctx, a, &r, after, timeout);
        }
    }
    reply_read(ctx.out, ctx.client.proto, &served);
    Ok(())
}

/// What a blocked read without COUNT gets at most (Redis's
/// `XREAD_BLOCKED_DEFAULT_COUNT`), so that an old ID does not pull a whole stream.
const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// Blocks an XREAD or XREADGROUP (`a` its arguments) that found nothing: `after` holds
/// one ID per key (StreamId::MAX for `>`), `timeout_ms` 0 waits for ever.
pub(super) fn block_read(ctx: &mut Ctx<'_>, a: &[&[u8]], r: &ReadArgs<'_>, after: Vec<StreamId>, timeout_ms: i64) -> Result<(), CommandError> {
    let keys = a[r.streams_at..r.streams_at + r.streams].iter().map(|k| k.to_vec()).collect();
    let group = r.group.map(|(g, c)| GroupRead { group: g.to_vec(), consumer: c.to_vec(), noack: r.noack });
    let count = if r.count == 0 { BLOCKED_DEFAULT_COUNT } else { r.count };
    let op = Op::Read(Box::new(ReadOp { keys, after, count, group }));
    super::blocking::block(ctx, op, (timeout_ms > 0).then_some(timeout_ms), resp::encode::null_array)
}

/// XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
fn xsetid(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    let id = parse_strict_id(a[2])?;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < a.len() {
        let more = a.len() - 1 - i;
        if is(a[i], "entriesadded") && more > 0 {
            let n = args::int(a[i + 1])?;
            if n < 0 {
                return Err(CommandError::msg("ERR entries_added must be positive"));
            }
            entries_added = Some(n as u64);
        } else if is(a[i], "maxdeletedid") && more > 0 {
            max_deleted = parse_strict_id(a[i + 1])?;
            if id < max_deleted {
                return Err(CommandError::msg("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"));
            }
        } else {
            return Err(CommandError::Syntax);
        }
        i += 2;
    }
    let ks = ctx.ks();
    let (h, mut shard) = ks.lock_key(ctx.client.db, a[1]);
    let mut s = coll::get_key::<Stream>(ctx, &mut shard, h, a[1])?.ok_or(CommandError::NoSuchKey)?;
    if let Some(top) = s.last_entry().map(|e| e.id) {
        if id < top {
            return Err(CommandError::msg("ERR The ID specified in XSETID is smaller than the target stream top item"));
        }
        if entries_added.is_some_and(|n| (s.len() as u64) > n) {
            return Err(CommandError::msg("ERR The entries_added specified in XSETID is smaller than the target stream length"));
        }
    }
    if id < s.max_deleted_id {
        return Err(CommandError::msg("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"));
    }
    s.last_id = id;
    if let Some(n) = entries_added {
        s.entries_added = n;
    }
    if !max_deleted.is_zero() {
        s.max_deleted_id = max_deleted;
    }
    drop(s);
    // (Redis 7.0.15 notifies it without signalling the key as modified: no
    // invalidation for client-side caching, no WATCH broken: its spec's `writes`.)
    notify(ctx, class::STREAM | class::UNSIGNALED, "xsetid", a[1]);
    drop(shard);
    ctx.ok();
    Ok(())
}

const STREAM: &[&str] = &["stream"];

/// XREAD's and XREADGROUP's keys: after STREAMS, half of what follows.
pub(super) const STREAMS_KEYS: KeySpec = KeySpec {
    flags: kf::RO | kf::ACCESS,
    begin: BeginSearch::Keyword { keyword: "STREAMS", start_from: 1 },
    find: FindKeys::Range { last_key: -1, key_step: 1, limit: 2 },
};

pub static COMMANDS: &[CommandSpec] = &[
    spec("xadd", -5, WRITE | DENYOOM | FAST, (1, 1, 1), STREAM, "stream", "Appends a new message to a stream. Creates the key if it doesn't exist.", xadd).since("5.0.0").args(ARGS_XADD).complexity("O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.").tips(&["nondeterministic_output"]).key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xtrim", -4, WRITE, (1, 1, 1), STREAM, "stream", "Deletes messages from the beginning of a stream.", xtrim).since("5.0.0").args(ARGS_XTRIM).complexity("O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.").tips(&["nondeterministic_output"]).key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xdel", -3, WRITE | FAST, (1, 1, 1), STREAM, "stream", "Returns the number of messages after removing them from a stream.", xdel).since("5.0.0").args(ARGS_XDEL).complexity("O(1) for each single item to delete in the stream, regardless of the stream size.").key_specs(&[KeySpec { flags: kf::RW | kf::DELETE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xlen", 2, READONLY | FAST, (1, 1, 1), STREAM, "stream", "Return the number of messages in a stream.", xlen).since("5.0.0").args(ARGS_XLEN).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xrange", -4, READONLY, (1, 1, 1), STREAM, "stream", "Returns the messages from a stream within a range of IDs.", xrange).since("5.0.0").args(ARGS_XRANGE).complexity("O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xrevrange", -4, READONLY, (1, 1, 1), STREAM, "stream", "Returns the messages from a stream within a range of IDs in reverse order.", xrevrange).since("5.0.0").args(ARGS_XREVRANGE).complexity("O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
    spec("xread", -4, READONLY | BLOCKING, (0, 0, 0), STREAM, "stream", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", xread).since("5.0.0").args(ARGS_XREAD).complexity("For each stream mentioned: O(N) with N the number of entries returned; a blocked reader costs the XADD that serves it O(M), M the readers served.").movable(Movable::Streams).key_specs(&[STREAMS_KEYS]),
    spec("xsetid", -3, WRITE | DENYOOM | FAST, (1, 1, 1), STREAM, "stream", "An internal command for replicating stream values.", xsetid).since("5.0.0").args(ARGS_XSETID).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::UPDATE, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).writes(Writes::KeysIf(|_| false)),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    const TRIM: &[Arg] = &[
        arg("strategy", OneOf).args(&[arg("maxlen", PureToken).token("MAXLEN"), arg("minid", PureToken).token("MINID").since("6.2.0")]),
        arg("operator", OneOf).optional().args(&[arg("equal", PureToken).token("="), arg("approximately", PureToken).token("~")]),
        arg("threshold", String),
        arg("count", Integer).token("LIMIT").optional().since("6.2.0"),
    ];
    pub const ARGS_XADD: &[Arg] = &[
        arg("key", Key).key_spec(0),
        arg("nomkstream", PureToken).token("NOMKSTREAM").optional().since("6.2.0"),
        arg("trim", Block).optional().args(TRIM),
        arg("id_or_auto", OneOf).args(&[arg("auto_id", PureToken).token("*"), arg("id", String)]),
        arg("field_value", Block).multiple().args(&[arg("field", String), arg("value", String)]),
    ];
    pub const ARGS_XTRIM: &[Arg] = &[arg("key", Key).key_spec(0), arg("trim", Block).args(TRIM)];
    pub const ARGS_XDEL: &[Arg] = &[arg("key", Key).key_spec(0), arg("id", String).multiple()];
    pub const ARGS_XLEN: &[Arg] = &[arg("key", Key).key_spec(0)];
    pub const ARGS_XRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("start", String), arg("end", String), arg("count", Integer).token("COUNT").optional()];
    pub const ARGS_XREVRANGE: &[Arg] = &[arg("key", Key).key_spec(0), arg("end", String), arg("start", String), arg("count", Integer).token("COUNT").optional()];
    pub const ARGS_XREAD: &[Arg] = &[
        arg("count", Integer).token("COUNT").optional(),
        arg("milliseconds", Integer).token("BLOCK").optional(),
        arg("streams", Block).token("STREAMS").args(&[arg("key", Key).key_spec(0).multiple(), arg("id", String).multiple()]),
    ];
    pub const ARGS_XSETID: &[Arg] = &[
        arg("key", Key).key_spec(0),
        arg("last-id", String),
        arg("entries_added", Integer).token("ENTRIESADDED").optional().since("7.0.0"),
        arg("max_deleted_entry_id", String).token("MAXDELETEDID").optional().since("7.0.0"),
    ];
}
use docs_args::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_as_redis_reads_them() {
        let id = |s: &[u8]| parse_id(s, 0).ok();
        assert_eq!(id(b"5"), Some(StreamId::new(5, 0)));
        assert_eq!(parse_id(b"5", u64::MAX).ok(), Some(StreamId::new(5, u64::MAX)));
        assert_eq!(id(b" 10-1"), Some(StreamId::new(10, 1)));
        assert_eq!(id(b"+10-1"), Some(StreamId::new(10, 1)));
        assert_eq!(id(b"010-1"), Some(StreamId::new(10, 1)));
        assert_eq!(id(b"-"), Some(StreamId::MIN));
        assert_eq!(id(b"+"), Some(StreamId::MAX));
        for bad in [&b"-5"[..], b"5-", b"", b"0x10", b"1e3", b"18446744073709551616", b"10-1 ", b"5-*", b"*"] {
            assert_eq!(id(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert!(parse_strict_id(b"-").is_err());
        let mut given = true;
        assert_eq!(parse_id_generic(b"5-*", 0, true, Some(&mut given)).ok(), Some(StreamId::new(5, 0)));
        assert!(!given);
        assert_eq!(parse_interval_id(b"(5", 0).ok(), Some((StreamId::new(5, 0), true)));
        assert!(parse_interval_id(b"(-", 0).is_err());
        assert_eq!(id_text(StreamId::new(1, 2)), b"1-2");
    }
}
