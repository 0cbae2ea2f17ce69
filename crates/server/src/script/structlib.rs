//! The `struct` library Redis 7.0 gives scripts (Roberto Ierusalimschy's lua-struct
//! 0.2, with Redis's bounds checks): `struct.pack(fmt, ...)`, `struct.unpack(fmt, data
//! [, pos])` and `struct.size(fmt)`, binary packing of numbers and strings. Written here
//! (it is C in Redis, and no crate offers it for an embedded Lua 5.1) from its
//! documented rules, with the results and error texts of Redis 7.0.15 checked by hand,
//! quirks included: the machine is x86-64 Linux's (little-endian by default, `int` 4
//! bytes, `long` and `size_t` 8, alignment up to 8), integers pass through a C `long`
//! (so `I9` of -1 packs eight 0xff bytes then a zero), numbers out of a type's range
//! wrap or become what x86's conversions make of them, and a `pack` whose values run
//! out reports the first missing one as `nil` (the C function pushes a nil after its
//! arguments).
//!
//! The format: `>` big-endian, `<` little-endian, `![n]` alignment (a power of 2, at
//! most 8 by default), `x` a zero byte, `b`/`B` a signed/unsigned char, `h`/`H` short,
//! `l`/`L` long, `T` size_t, `i[n]`/`I[n]` an integer of n bytes (at most 32; 4 by
//! default), `c[n]` n bytes of a string (`c0`: packing, the whole string; unpacking,
//! the length read just before), `s` a zero-terminated string, `f` float, `d` double,
//! spaces ignored.
//!
//! One difference: an invalid format option that is not ASCII is named in the error as
//! its character in UTF-8 (Redis puts the raw byte in its message).

use mlua::{Lua, MultiValue, Value};

use super::lib_errors::{argument_error, located, number_arg, plain_function, string_arg};

/// Largest integer size (`i32`).
const MAX_INT_SIZE: usize = 32;
/// The default and largest alignment (`!` alone): x86-64's largest scalar alignment.
const MAX_ALIGN: usize = 8;
/// Lua 5.1's bound on a C function's stack (LUAI_MAXCSTACK): `unpack` stops there.
const MAX_C_STACK: usize = 8000;

#[derive(Clone, Copy)]
struct Header {
    big_endian: bool,
    align: usize,
}

const DEFAULT: Header = Header { big_endian: false, align: 1 };

/// An error of the library: luaL_error's (the script's place first) or luaL_argerror's
/// for an argument.
enum Fail {
    Plain(String),
    Argument(usize, String),
    /// Raised by an argument check already worded (`lib_errors`).
    Lua(mlua::Error),
}

fn raise(lua: &Lua, function: &str, f: Fail) -> mlua::Error {
    match f {
        Fail::Plain(msg) => located(lua, &msg),
        Fail::Argument(n, msg) => argument_error(lua, n, function, &msg),
        Fail::Lua(e) => e,
    }
}

/// A format string read an option at a time (to its first NUL, as C reads it).
struct Format<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Format<'a> {
    fn new(bytes: &'a [u8]) -> Format<'a> {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Format { bytes: &bytes[..end], at: 0 }
    }

    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// The number that follows, or `default` when no digit does.
    fn number(&mut self, default: usize) -> Result<usize, Fail> {
        if !self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut a: i64 = 0;
        while let Some(d) = self.bytes.get(self.at).filter(|b| b.is_ascii_digit()) {
            let d = i64::from(d - b'0');
            if a > i64::from(i32::MAX) / 10 || a * 10 > i64::from(i32::MAX) - d {
                return Err(Fail::Plain("integral size overflow".to_string()));
            }
            a = a * 10 + d;
            self.at += 1;
        }
        Ok(a as usize)
    }

    /// The size of option `opt` (its count read from the format where it takes one).
    fn size_of(&mut self, opt: u8) -> Result<usize, Fail> {
        Ok(match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let size = self.number(4)?;
                if size > MAX_INT_SIZE {
                    return Err(Fail::Plain(format!("integral size {size} is larger than limit of {MAX_INT_SIZE}")));
                }
                size
            }
            _ => 0,
        })
    }

    /// The options that change the header (or are refused).
    fn control(&mut self, opt: u8, h: &mut Header) -> Result<(), Fail> {
        match opt {
            b' ' => {}
            b'>' => h.big_endian = true,
            b'<' => h.big_endian = false,
            b'!' => {
                let a = self.number(MAX_ALIGN)?;
                if a == 0 || a & (a - 1) != 0 {
                    return Err(Fail::Plain(format!("alignment {a} is not a power of 2")));
                }
                h.align = a;
            }
            other => return Err(Fail::Argument(1, format!("invalid format option '{}'", other as char))),
        }
        Ok(())
    }
}

/// Zero bytes before an item of `size` at offset `len`.
fn padding(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size - (len & (size - 1))) & (size - 1)
}

/// C's `(unsigned long)d` on x86-64 (gcc's conversion: out of range gives 0, NaN 2^63).
fn c_to_u64(d: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if d.is_nan() {
        1 << 63
    } else if d >= TWO_63 {
        let rest = d - TWO_63;
        if rest >= TWO_63 { 0 } else { (rest as i64 as u64) ^ (1 << 63) }
    } else {
        c_to_i64(d) as u64
    }
}

/// C's `(long)d` on x86-64 (cvttsd2si: out of range and NaN give i64::MIN).
fn c_to_i64(d: f64) -> i64 {
    if d.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

fn put_integer(out: &mut Vec<u8>, n: f64, big_endian: bool, size: usize) {
    let value = if n < 0.0 { c_to_i64(n) as u64 } else { c_to_u64(n) };
    let mut bytes = [0u8; MAX_INT_SIZE];
    for (i, b) in bytes.iter_mut().take(size.min(8)).enumerate() {
        *b = (value >> (8 * i)) as u8;
    }
    let bytes = &mut bytes[..size];
    if big_endian {
        bytes.reverse();
    }
    out.extend_from_slice(bytes);
}

fn get_integer(bytes: &[u8], big_endian: bool, signed: bool) -> f64 {
    let size = bytes.len();
    let mut l: u64 = 0;
    let mut take = |b: u8| l = (l << 8) | u64::from(b);
    if big_endian {
        bytes.iter().for_each(|&b| take(b));
    } else {
        bytes.iter().rev().for_each(|&b| take(b));
    }
    if !signed {
        return l as f64;
    }
    // As x86 shifts: the count taken modulo 64 (a size over 8 shifts by size * 8 - 1).
    let mask = u64::MAX << ((size * 8 - 1) % 64);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

/// struct.pack(fmt, v1, v2, ...) — the values packed as `fmt` says.
fn pack(lua: &Lua, mut args: Vec<Value>) -> Result<Vec<u8>, Fail> {
    let fmt = string_arg(lua, &args, 1, "pack").map_err(Fail::Lua)?;
    // The C function pushes a nil after its arguments: the first missing value is nil.
    args.push(Value::Nil);
    let mut fmt = Format::new(&fmt);
    let mut h = DEFAULT;
    let mut arg = 2;
    let mut out = Vec::new();
    let number = |args: &[Value], n: usize| number_arg(lua, args, n, "pack").map_err(Fail::Lua);
    while let Some(opt) = fmt.next() {
        let mut size = fmt.size_of(opt)?;
        let pad = padding(out.len(), &h, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                put_integer(&mut out, number(&args, arg)?, h.big_endian, size);
                arg += 1;
            }
            b'x' => out.push(0),
            b'f' => {
                let f = number(&args, arg)? as f32;
                arg += 1;
                out.extend_from_slice(&if h.big_endian { f.to_be_bytes() } else { f.to_le_bytes() });
            }
            b'd' => {
                let d = number(&args, arg)?;
                arg += 1;
                out.extend_from_slice(&if h.big_endian { d.to_be_bytes() } else { d.to_le_bytes() });
            }
            b'c' | b's' => {
                let s = string_arg(lua, &args, arg, "pack").map_err(Fail::Lua)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // (Named after the string's argument, as Redis's names the next one.)
                    return Err(Fail::Argument(arg, "string too short".to_string()));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => fmt.control(opt, &mut h)?,
        }
    }
    Ok(out)
}

/// struct.unpack(fmt, data [, pos]) — the values read from `data` (from byte `pos`,
/// 1 by default), then the position after them.
fn unpack(lua: &Lua, args: Vec<Value>) -> Result<MultiValue, Fail> {
    let fmt = string_arg(lua, &args, 1, "unpack").map_err(Fail::Lua)?;
    let data = string_arg(lua, &args, 2, "unpack").map_err(Fail::Lua)?;
    let start = match args.get(2) {
        None | Some(Value::Nil) => 1,
        Some(_) => c_to_i64(number_arg(lua, &args, 3, "unpack").map_err(Fail::Lua)?.trunc()),
    };
    let ld = data.len();
    // Taken as a size_t: only 0 is refused here; a negative one wraps, and the first
    // item then finds the data too short.
    if start == 0 {
        return Err(Fail::Argument(3, "offset must be 1 or greater".to_string()));
    }
    let mut pos = (start as usize).wrapping_sub(1);
    let mut fmt = Format::new(&fmt);
    let mut h = DEFAULT;
    let mut results: Vec<Value> = Vec::new();
    let too_short = || Fail::Argument(2, "data string too short".to_string());
    while let Some(opt) = fmt.next() {
        let mut size = fmt.size_of(opt)?;
        pos = pos.wrapping_add(padding(pos, &h, opt, size));
        if size > ld || pos > ld - size {
            return Err(too_short());
        }
        if args.len() + results.len() + 2 > MAX_C_STACK {
            return Err(Fail::Plain("stack overflow (too many results)".to_string()));
        }
        let at = &data[pos..];
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                results.push(Value::Number(get_integer(&at[..size], h.big_endian, opt.is_ascii_lowercase())));
            }
            b'x' => {}
            b'f' => {
                let bytes: [u8; 4] = at[..4].try_into().unwrap_or_default();
                let f = if h.big_endian { f32::from_be_bytes(bytes) } else { f32::from_le_bytes(bytes) };
                results.push(Value::Number(f64::from(f)));
            }
            b'd' => {
                let bytes: [u8; 8] = at[..8].try_into().unwrap_or_default();
                results.push(Value::Number(if h.big_endian { f64::from_be_bytes(bytes) } else { f64::from_le_bytes(bytes) }));
            }
            b'c' => {
                if size == 0 {
                    let previous = match results.last() {
                        Some(v @ (Value::Number(_) | Value::Integer(_) | Value::String(_))) => lua.coerce_number(v.clone()).ok().flatten(),
                        _ => None,
                    };
                    let Some(n) = previous else {
                        return Err(Fail::Plain("format 'c0' needs a previous size".to_string()));
                    };
                    results.pop();
                    size = c_to_u64(n) as usize;
                    if size > ld || pos > ld - size {
                        return Err(too_short());
                    }
                }
                let s = lua.create_string(&data[pos..pos + size]).map_err(Fail::Lua)?;
                results.push(Value::String(s));
            }
            b's' => {
                let Some(end) = at.iter().position(|&b| b == 0) else {
                    return Err(Fail::Plain("unfinished string in data".to_string()));
                };
                size = end + 1;
                let s = lua.create_string(&at[..end]).map_err(Fail::Lua)?;
                results.push(Value::String(s));
            }
            _ => fmt.control(opt, &mut h)?,
        }
        pos += size;
    }
    results.push(Value::Integer(pos as i64 + 1));
    Ok(MultiValue::from_iter(results))
}

/// struct.size(fmt) — the bytes `fmt` packs to (no `s`, no `c0`).
fn size(lua: &Lua, args: Vec<Value>) -> Result<usize, Fail> {
    let fmt = string_arg(lua, &args, 1, "size").map_err(Fail::Lua)?;
    let mut fmt = Format::new(&fmt);
    let mut h = DEFAULT;
    let mut pos = 0usize;
    while let Some(opt) = fmt.next() {
        let size = fmt.size_of(opt)?;
        pos += padding(pos, &h, opt, size);
        if opt == b's' {
            return Err(Fail::Argument(1, "option 's' has no fixed size".to_string()));
        } else if opt == b'c' && size == 0 {
            return Err(Fail::Argument(1, "option 'c0' has no fixed size".to_string()));
        }
        if !opt.is_ascii_alphanumeric() {
            fmt.control(opt, &mut h)?;
        }
        pos += size;
    }
    Ok(pos)
}

pub fn install(lua: &Lua) -> mlua::Result<()> {
    let lib = lua.create_table()?;
    lib.raw_set("pack", plain_function(lua, |lua, args: MultiValue| {
        let packed = pack(lua, args.into_iter().collect()).map_err(|f| raise(lua, "pack", f))?;
        lua.create_string(&packed)
    })?)?;
    lib.raw_set("unpack", plain_function(lua, |lua, args: MultiValue| {
        unpack(lua, args.into_iter().collect()).map_err(|f| raise(lua, "unpack", f))
    })?)?;
    lib.raw_set("size", plain_function(lua, |lua, args: MultiValue| {
        size(lua, args.into_iter().collect()).map_err(|f| raise(lua, "size", f))
    })?)?;
    lua.globals().raw_set("struct", lib)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_pack_and_unpack_as_redis_does() {
        // Redis 7.0.15's answers (checked by hand).
        let mut out = Vec::new();
        put_integer(&mut out, -1.0, false, 9);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]);
        assert_eq!(get_integer(&out, false, true), -1.0);
        assert_eq!(get_integer(&[0xff; 9], false, false), u64::MAX as f64);
        assert_eq!(get_integer(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1], false, true), -1.0);
        out.clear();
        put_integer(&mut out, 70000.0, false, 2);
        assert_eq!(get_integer(&out, false, true), 4464.0);
        out.clear();
        put_integer(&mut out, 1e20, false, 1);
        put_integer(&mut out, f64::NAN, false, 8);
        put_integer(&mut out, -(2f64.powi(63)) - 10000.0, false, 4);
        put_integer(&mut out, f64::from(0x010203), true, 3);
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 1, 2, 3]);
        assert_eq!(padding(1, &Header { big_endian: false, align: 8 }, b'd', 8), 7);
        assert_eq!(padding(1, &DEFAULT, b'd', 8), 0);
    }
}
