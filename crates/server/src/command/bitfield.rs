//! BITFIELD and BITFIELD_RO: integer fields of any width at any bit offset of a string
//! (`store::types::bitfield`), with Redis 7.0's parsing, error order and overflow rules.
//!
//! All operations are parsed and checked first; then a command with a SET or INCRBY
//! grows the string once to its farthest written bit (creating the key, as Redis does,
//! even when every write then fails its OVERFLOW FAIL check, which is then logged all
//! the same, unlike Redis) and runs the operations in order under the key's shard lock. A command of GETs only is a read: it changes
//! nothing, logs nothing and invalidates no WATCH.

use resp::encode;
use store::entry::{Entry, Payload, ValueRef};
use store::events::class;
use store::types::bitfield::{self as bf, Overflow};
use store::types::string::parse_i64;

use super::args::{self, is};
use super::flags::*;
use super::{spec, BeginSearch, CommandError, CommandSpec, Ctx, FindKeys, KeySpec, Writes};
use super::key_flags as kf;
use super::keyspace_events::notify;

#[derive(Clone, Copy)]
enum Op {
    Get,
    Set(i64),
    IncrBy(i64),
}

#[derive(Clone, Copy)]
struct Field {
    op: Op,
    signed: bool,
    bits: u32,
    offset: u64,
    overflow: Overflow,
}

const BAD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

/// `i1`..`i64` or `u1`..`u63`: (signed, bits).
fn field_type(arg: &[u8]) -> Result<(bool, u32), CommandError> {
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(CommandError::msg(BAD_TYPE)),
    };
    let max = if signed { 64 } else { 63 };
    match parse_i64(&arg[1..]) {
        Some(bits) if (1..=max).contains(&bits) => Ok((signed, bits as u32)),
        _ => Err(CommandError::msg(BAD_TYPE)),
    }
}

/// A bit offset, or `#n` for the n-th field of this width; below the string size limit.
fn field_offset(arg: &[u8], bits: u32, max_bytes: u64) -> Result<u64, CommandError> {
    let (digits, scale) = match arg.split_first() {
        Some((b'#', rest)) => (rest, i64::from(bits)),
        _ => (arg, 1),
    };
    super::strings::bit_offset_in_range(parse_i64(digits).and_then(|n| n.checked_mul(scale)), max_bytes)
}

fn parse(a: &[&[u8]], max_bytes: u64) -> Result<Vec<Field>, CommandError> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut i = 2;
    while i < a.len() {
        let left = a.len() - i - 1;
        let w = a[i];
        let takes_value = if is(w, "get") && left >= 2 {
            false
        } else if (is(w, "set") || is(w, "incrby")) && left >= 3 {
            true
        } else if is(w, "overflow") && left >= 1 {
            overflow = match a[i + 1] {
                v if is(v, "wrap") => Overflow::Wrap,
                v if is(v, "sat") => Overflow::Sat,
                v if is(v, "fail") => Overflow::Fail,
                _ => return Err(CommandError::msg("ERR Invalid OVERFLOW type specified")),
            };
            i += 2;
            continue;
        } else {
            return Err(CommandError::Syntax);
        };
        let (signed, bits) = field_type(a[i + 1])?;
        let offset = field_offset(a[i + 2], bits, max_bytes)?;
        let op = if !takes_value {
            Op::Get
        } else {
            let v = args::int(a[i + 3])?;
            if is(w, "set") {
                Op::Set(v)
            } else {
                Op::IncrBy(v)
            }
        };
        fields.push(Field {
            op,
            signed,
            bits,
            offset,
            overflow,
        });
        i += if takes_value { 4 } else { 3 };
    }
    Ok(fields)
}

/// Runs one SET or INCRBY on `buf` (long enough); the reply value, or None when
/// OVERFLOW FAIL refused it.
fn write(buf: &mut [u8], f: &Field) -> Option<i64> {
    let (value, incr_by) = match f.op {
        Op::Set(v) => (v, false),
        Op::IncrBy(v) => (v, true),
        Op::Get => unreachable!("GETs are not writes"),
    };
    if f.signed {
        let old = bf::get_signed(buf, f.offset, f.bits);
        let (candidate, incr) = if incr_by { (old, value) } else { (value, 0) };
        let new = match bf::signed_overflow(candidate, incr, f.bits, f.overflow) {
            Some(_) if f.overflow == Overflow::Fail => return None,
            Some(limit) => limit,
            None => candidate.wrapping_add(incr),
        };
        bf::set(buf, f.offset, f.bits, new as u64);
        Some(if incr_by { new } else { old })
    } else {
        let old = bf::get_unsigned(buf, f.offset, f.bits);
        let (candidate, incr) = if incr_by {
            (old, value)
        } else {
            (value as u64, 0)
        };
        let new = match bf::unsigned_overflow(candidate, incr, f.bits, f.overflow) {
            Some(_) if f.overflow == Overflow::Fail => return None,
            Some(limit) => limit,
            None => candidate.wrapping_add(incr as u64),
        };
        bf::set(buf, f.offset, f.bits, new);
        Some(if incr_by { new as i64 } else { old as i64 })
    }
}

fn get(buf: &[u8], f: &Field) -> i64 {
    if f.signed {
        bf::get_signed(buf, f.offset, f.bits)
    } else {
        bf::get_unsigned(buf, f.offset, f.bits) as i64
    }
}

fn bitfield_generic(ctx: &mut Ctx<'_>, a: &[&[u8]], read_only: bool) -> Result<(), CommandError> {
    let max_bytes = ctx.shared.config.read().proto_max_bulk_len;
    let fields = parse(a, max_bytes)?;
    let last_written_bit = fields
        .iter()
        .filter(|f| !matches!(f.op, Op::Get))
        .map(|f| f.offset + u64::from(f.bits) - 1)
        .max();
    let (h, mut shard) = ctx.ks().lock_key(ctx.client.db, a[1]);
    let Some(last_bit) = last_written_bit else {
        let found = shard.read(h, a[1], ctx.now_ms, None).map(|e| e.value());
        // Only GETs: a read lookup, as Redis's (a hit, or a miss and its `keymiss`).
        ctx.lookup(a[1], found.is_some());
        let value = match found {
            None => None,
            Some(ValueRef::Str(s)) => Some(s.to_vec()),
            Some(ValueRef::Obj(_)) => return Err(CommandError::WrongType),
        };
        drop(shard);
        if !read_only {
            ctx.client.changed_nothing = true;
        }
        let buf = value.unwrap_or_default();
        encode::array_len(ctx.out, fields.len());
        for f in &fields {
            encode::integer(ctx.out, get(&buf, f));
        }
        return Ok(());
    };
    if read_only {
        return Err(CommandError::msg(
            "ERR BITFIELD_RO only supports the GET subcommand",
        ));
    }
    let exists = match shard.read(h, a[1], ctx.now_ms, None).map(|e| e.value()) {
        None => false,
        Some(ValueRef::Str(_)) => true,
        Some(ValueRef::Obj(_)) => return Err(CommandError::WrongType),
    };
    if !exists {
        shard.insert(
            h,
            Entry::new(
                a[1],
                Payload::Object(Box::new(store::Object::Str(Vec::new()))),
                None,
                ctx.lru(),
            ),
        );
    }
    let e = shard
        .get(h, a[1], ctx.now_ms)
        .ok_or(CommandError::NoSuchKey)?;
    let buf = e.string_mut().ok_or(CommandError::WrongType)?;
    // The offset limit keeps this within the string size limit (plus one field).
    let needed = (last_bit >> 3) as usize + 1;
    // Created or grown: every write then counts as a change (Redis's "dirty").
    let dirty = !exists || buf.len() < needed;
    if buf.len() < needed {
        buf.resize(needed, 0);
    }
    let out = &mut *ctx.out;
    let proto = ctx.client.proto;
    encode::array_len(out, fields.len());
    let mut changes = 0;
    for f in &fields {
        match f.op {
            Op::Get => encode::integer(out, get(buf, f)),
            _ => {
                let before = get(buf, f);
                match write(buf, f) {
                    Some(v) => {
                        // A write that leaves the bits as they were changes nothing:
                        // no `setbit` event for it, as Redis.
                        if dirty || get(buf, f) != before {
                            changes += 1;
                        }
                        encode::integer(out, v)
                    }
                    None => encode::null(out, proto),
                }
            }
        }
    }
    if changes > 0 {
        notify(ctx, class::STRING, "setbit", a[1]);
        ctx.client.changes = Some(changes);
    } else if dirty {
        // Every write refused by OVERFLOW FAIL, but the key was created or grown
        // (zero-filled): logged and propagated all the same, so that the log and the
        // replicas hold what memory holds; counted as Redis counts it (nothing).
        // (Redis 7.0.15 neither logs nor propagates it: its AOF and replicas lose the
        // zero bytes.)
        ctx.client.changes = Some(0);
    } else {
        ctx.client.changed_nothing = true;
    }
    Ok(())
}

/// BITFIELD key [GET type offset] [OVERFLOW WRAP|SAT|FAIL] [SET type offset value]
/// [INCRBY type offset increment] ... — one reply per GET, SET and INCRBY.
fn bitfield(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    bitfield_generic(ctx, a, false)
}

/// BITFIELD_RO key [GET type offset ...] — BITFIELD's GETs only.
fn bitfield_ro(ctx: &mut Ctx<'_>, a: &[&[u8]]) -> Result<(), CommandError> {
    bitfield_generic(ctx, a, true)
}

/// Whether a BITFIELD's arguments hold a SET or INCRBY (otherwise it changes nothing).
pub fn writes(a: &[&[u8]]) -> bool {
    a.iter().skip(2).any(|w| is(w, "set") || is(w, "incrby"))
}

const BITMAP: &[&str] = &["bitmap"];

#[rustfmt::skip]
pub static COMMANDS: &[CommandSpec] = &[
    spec("bitfield", -2, WRITE | DENYOOM, (1, 1, 1), BITMAP, "bitmap", "Performs arbitrary bitfield integer operations on strings.", bitfield).since("3.2.0").args(ARGS_BITFIELD).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RW | kf::ACCESS | kf::UPDATE | kf::VARIABLE_FLAGS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]).writes(Writes::KeysIf(writes)),
    spec("bitfield_ro", -2, READONLY | FAST, (1, 1, 1), BITMAP, "bitmap", "Performs arbitrary read-only bitfield integer operations on strings.", bitfield_ro).since("6.0.0").args(ARGS_BITFIELD_RO).complexity("O(1)").key_specs(&[KeySpec { flags: kf::RO | kf::ACCESS, begin: BeginSearch::Index(1), find: FindKeys::Range { last_key: 0, key_step: 1, limit: 0 } }]),
];

/// The arguments of this file's commands, as COMMAND DOCS describes them (Redis
/// 7.0.15's interface: redis-cli builds its hints from them).
#[rustfmt::skip]
mod docs_args {
    use super::super::{arg, Arg, ArgKind::*};

    pub const ARGS_BITFIELD: &[Arg] = &[arg("key", Key).key_spec(0), arg("operation", OneOf).optional().multiple().args(&[arg("encoding_offset", Block).token("GET").args(&[arg("encoding", String), arg("offset", Integer)]), arg("write", Block).args(&[arg("wrap_sat_fail", OneOf).token("OVERFLOW").optional().args(&[arg("wrap", PureToken).token("WRAP"), arg("sat", PureToken).token("SAT"), arg("fail", PureToken).token("FAIL")]), arg("write_operation", OneOf).args(&[arg("encoding_offset_value", Block).token("SET").args(&[arg("encoding", String), arg("offset", Integer), arg("value", Integer)]), arg("encoding_offset_increment", Block).token("INCRBY").args(&[arg("encoding", String), arg("offset", Integer), arg("increment", Integer)])])])])];
    pub const ARGS_BITFIELD_RO: &[Arg] = &[arg("key", Key).key_spec(0), arg("encoding_offset", Block).token("GET").optional().multiple().multiple_token().args(&[arg("encoding", String), arg("offset", Integer)])];
}
use docs_args::*;
