//! The `cmsgpack` library as Redis 7.0 gives scripts (lua-cmsgpack 0.4.0):
//! `cmsgpack.pack(...)`, `unpack(s)`, `unpack_one(s [, offset])` and
//! `unpack_limit(s, limit [, offset])`, with its encoding choices and error texts:
//!
//! - a number that is a whole 64-bit integer is packed as the smallest integer form,
//!   any other as a float32 when that holds it exactly, else a float64;
//! - a table whose keys are exactly 1..n is an array, any other a map (in Lua's
//!   iteration order); tables nested deeper than 16 are packed as nil;
//! - strings use fixstr, str8, str16 and str32.
//!
//! Written here: the MessagePack crates do not know Lua's tables or lua-cmsgpack's
//! choices (float32 when exact, what is an array), which decide the bytes a script
//! gets.

use mlua::{Lua, MultiValue, Table, Value};

use super::convert::exact_field;
use super::lib_errors::{called_as, located, marked_function, plain_function, raise_argument_error, raise_if_marked};

/// Tables nested deeper than this are packed as nil (lua-cmsgpack's guard against
/// cycles).
const MAX_NESTING: usize = 16;
/// Unpacking stops with "Bad data format" past this depth (Lua's own C stack guard
/// would, deeper).
const MAX_DECODE_DEPTH: usize = 1000;

pub fn install(lua: &Lua) -> mlua::Result<()> {
    let m = lua.create_table()?;
    // `pack(...)` is a C function (`pack`) that hands its arguments to this one in a
    // table with their count: read from a table, a number is read exactly
    // (`convert::exact_field`; as arguments, mlua reads 1e-40 as 0).
    let pack_table = marked_function(lua, |lua, (args, n): (Table, usize)| {
        let mut out = Vec::new();
        for i in 1..=n {
            encode(&exact_field(&args, i, args.raw_get::<Value>(i)?)?, &mut out, 0)?;
        }
        lua.create_string(out)
    })?;
    lua.set_named_registry_value(PACK_TABLE_KEY, pack_table)?;
    // SAFETY: `pack` is a lua_CFunction that keeps Lua's stack discipline.
    m.raw_set("pack", unsafe { lua.create_c_function(pack) }?)?;
    m.raw_set("unpack", plain_function(lua, |lua, args: MultiValue| unpack(lua, args, "unpack", None))?)?;
    m.raw_set("unpack_one", plain_function(lua, |lua, args: MultiValue| unpack(lua, args, "unpack_one", Some(1)))?)?;
    m.raw_set("unpack_limit", plain_function(lua, |lua, args: MultiValue| {
        let limit = match args.get(1) {
            Some(Value::Integer(n)) => *n,
            Some(Value::Number(x)) => *x as i64,
            Some(v @ Value::String(_)) => match lua.coerce_number(v.clone())? {
                Some(x) => x as i64,
                None => return Err(located(lua, &format!("bad argument #2 to '{}' (number expected, got string)", called_as(lua, "unpack_limit")))),
            },
            other => {
                let got = other.map_or("no value", |v| if matches!(v, Value::Nil) { "nil" } else { v.type_name() });
                return Err(located(lua, &format!("bad argument #2 to '{}' (number expected, got {got})", called_as(lua, "unpack_limit"))));
            }
        };
        let mut rest: Vec<Value> = args.into_iter().collect();
        if rest.len() > 1 {
            rest.remove(1);
        }
        unpack(lua, rest.into_iter().collect(), "unpack_limit", Some(limit))
    })?)?;
    m.raw_set("_NAME", "cmsgpack")?;
    m.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    m.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    m.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    lua.globals().raw_set("cmsgpack", m)
}

/// Where `pack` finds the Rust half of its work (Lua's registry), as mlua names it and
/// as Lua's C API does.
const PACK_TABLE_KEY: &str = "basalt.cmsgpack_pack";
const PACK_TABLE_KEY_C: &std::ffi::CStr = c"basalt.cmsgpack_pack";

/// `cmsgpack.pack(...)`: its arguments in a table, to the registry's Rust function. A C
/// function, so that an error names the script's line even in a tail call
/// (`return cmsgpack.pack()`), as lua-cmsgpack's do.
unsafe extern "C-unwind" fn pack(state: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: Lua calls this with its own state. Only Lua's API is used; no Rust value
    // with a destructor lives here, so Lua's error jump skips nothing.
    unsafe {
        let n = ffi::lua_gettop(state);
        if n == 0 {
            raise_argument_error(state, c"bad argument #0 to 'pack' (MessagePack pack needs input.)", c"bad argument #0 to '?' (MessagePack pack needs input.)");
        }
        ffi::lua_createtable(state, n, 0);
        for i in 1..=n {
            ffi::lua_pushvalue(state, i);
            ffi::lua_rawseti(state, -2, ffi::lua_Integer::from(i));
        }
        // The table alone on the stack, then the function, the table and the count.
        ffi::lua_replace(state, 1);
        ffi::lua_settop(state, 1);
        ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, PACK_TABLE_KEY_C.as_ptr());
        ffi::lua_insert(state, 1);
        ffi::lua_pushinteger(state, ffi::lua_Integer::from(n));
        ffi::lua_call(state, 2, ffi::LUA_MULTRET);
        raise_if_marked(state);
        ffi::lua_gettop(state)
    }
}

fn encode(v: &Value, out: &mut Vec<u8>, level: usize) -> mlua::Result<()> {
    match v {
        Value::String(s) => bytes(&s.as_bytes(), out),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => int(*i, out),
        Value::Number(x) => number(*x, out),
        Value::Table(t) if level < MAX_NESTING => table(t, out, level)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

/// A number: as an integer when it is a whole one within 64 bits (lua-cmsgpack's
/// `(int64_t)x == x`), else a float.
fn number(x: f64, out: &mut Vec<u8>) {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if (-TWO_63..TWO_63).contains(&x) && x.trunc() == x {
        int(x as i64, out);
    } else if f64::from(x as f32) == x {
        out.push(0xca);
        out.extend_from_slice(&(x as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&x.to_be_bytes());
    }
}

fn int(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        match n {
            0..=127 => out.push(n as u8),
            128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
            0x100..=0xffff => {
                out.push(0xcd);
                out.extend_from_slice(&(n as u16).to_be_bytes());
            }
            0x1_0000..=0xffff_ffff => {
                out.push(0xce);
                out.extend_from_slice(&(n as u32).to_be_bytes());
            }
            _ => {
                out.push(0xcf);
                out.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn bytes(s: &[u8], out: &mut Vec<u8>) {
    let n = s.len();
    if n < 32 {
        out.push(0xa0 | n as u8);
    } else if n <= 0xff {
        out.extend_from_slice(&[0xd9, n as u8]);
    } else if n <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
    out.extend_from_slice(s);
}

fn header(out: &mut Vec<u8>, n: usize, fix: u8, wide16: u8, wide32: u8) {
    if n <= 15 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(wide16);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(wide32);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// A table: an array when its keys are exactly 1..n, else a map.
fn table(t: &Table, out: &mut Vec<u8>, level: usize) -> mlua::Result<()> {
    let (mut count, mut max) = (0usize, 0f64);
    let mut array = true;
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        let n = match k {
            Value::Integer(i) => i as f64,
            Value::Number(x) => x,
            _ => {
                array = false;
                break;
            }
        };
        // (lua-cmsgpack: a positive number that an int holds exactly.)
        if n <= 0.0 || n > f64::from(i32::MAX) || n.trunc() != n {
            array = false;
            break;
        }
        max = max.max(n);
        count += 1;
    }
    if array && max == count as f64 {
        let len = t.raw_len();
        header(out, len, 0x90, 0xdc, 0xdd);
        for j in 1..=len {
            encode(&exact_field(t, j, t.raw_get::<Value>(j)?)?, out, level + 1)?;
        }
    } else {
        let pairs: Vec<(Value, Value)> = t.clone().pairs::<Value, Value>().collect::<mlua::Result<_>>()?;
        header(out, pairs.len(), 0x80, 0xde, 0xdf);
        for (k, v) in pairs {
            encode(&k, out, level + 1)?;
            encode(&exact_field(t, k, v)?, out, level + 1)?;
        }
    }
    Ok(())
}

/// `unpack(s)`, `unpack_one(s [, offset])`, `unpack_limit(s, limit [, offset])` (the
/// limit already taken out of `args`): every value (no limit), or the next offset (-1
/// once the input is used up) then at most `limit` values.
fn unpack(lua: &Lua, args: MultiValue, function: &str, limit: Option<i64>) -> mlua::Result<MultiValue> {
    let given = !args.is_empty();
    let mut args = args.into_iter();
    let first = args.next().unwrap_or(Value::Nil);
    let type_name = match first {
        Value::Nil if !given => "no value",
        Value::Nil => "nil",
        _ => first.type_name(),
    };
    let Some(s) = lua.coerce_string(first)? else {
        return Err(located(lua, &format!("bad argument #1 to '{}' (string expected, got {type_name})", called_as(lua, function))));
    };
    let s = s.as_bytes().to_vec();
    let offset = match (limit, args.next()) {
        (None, _) | (_, None | Some(Value::Nil)) => 0,
        (_, Some(Value::Integer(n))) => n,
        (_, Some(Value::Number(x))) => x as i64,
        (_, Some(v)) => lua.coerce_number(v)?.map_or(0, |x| x as i64),
    };
    let limit_value = limit.unwrap_or(0);
    if offset < 0 || limit_value < 0 {
        return Err(located(lua, &format!("Invalid request to unpack with offset of {offset} and limit of {}.", s.len())));
    }
    if offset as u64 > s.len() as u64 {
        return Err(located(lua, &format!("Start offset {offset} greater than input length {}.", s.len())));
    }
    // Redis's library checks, before each value, that a C function's stack (8000
    // slots, its input string among them) has room for it.
    let room = 7999;
    let decode_all = limit.is_none() || (limit_value == 0 && offset == 0);
    let max_values = if decode_all { usize::MAX } else { limit_value as usize };
    let mut d = Decoder { lua, s: &s, pos: offset as usize, depth: 0 };
    let mut values = Vec::new();
    while d.pos < s.len() && values.len() < max_values {
        if values.len() >= room {
            return Err(located(lua, "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)"));
        }
        values.push(d.value().map_err(|e| match e {
            Failure::Eof => located(lua, "Missing bytes in input."),
            Failure::BadFormat => located(lua, "Bad data format in input."),
            Failure::Lua(e) => e,
        })?);
    }
    if !decode_all {
        // (Redis's check for room for the offset, with its own text.)
        if values.len() + 1 > room {
            return Err(located(lua, "stack overflow (in function mp_unpack_full)"));
        }
        let next = if d.pos >= s.len() { -1 } else { d.pos as i64 };
        values.insert(0, Value::Integer(next as mlua::Integer));
    }
    Ok(values.into_iter().collect())
}

enum Failure {
    Eof,
    BadFormat,
    Lua(mlua::Error),
}

impl From<mlua::Error> for Failure {
    fn from(e: mlua::Error) -> Failure {
        Failure::Lua(e)
    }
}

struct Decoder<'a> {
    lua: &'a Lua,
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Decoder<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Failure> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.s.len()).ok_or(Failure::Eof)?;
        let bytes = &self.s[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    fn be(&mut self, n: usize) -> Result<u64, Failure> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn value(&mut self) -> Result<Value, Failure> {
        let tag = self.take(1)?[0];
        Ok(match tag {
            0x00..=0x7f => Value::Integer(mlua::Integer::from(tag)),
            0xe0..=0xff => Value::Integer(mlua::Integer::from(tag as i8)),
            0xcc => Value::Integer(self.be(1)? as mlua::Integer),
            0xcd => Value::Integer(self.be(2)? as mlua::Integer),
            0xce => Value::Integer(self.be(4)? as mlua::Integer),
            // (As lua-cmsgpack: the 64 bits read as a signed integer.)
            0xcf => Value::Number(self.be(8)? as i64 as f64),
            0xd0 => Value::Integer(mlua::Integer::from(self.be(1)? as u8 as i8)),
            0xd1 => Value::Integer(mlua::Integer::from(self.be(2)? as u16 as i16)),
            0xd2 => Value::Integer(mlua::Integer::from(self.be(4)? as u32 as i32)),
            0xd3 => Value::Number(self.be(8)? as i64 as f64),
            0xc0 => Value::Nil,
            0xc3 => Value::Boolean(true),
            0xc2 => Value::Boolean(false),
            0xca => Value::Number(f64::from(f32::from_bits(self.be(4)? as u32))),
            0xcb => Value::Number(f64::from_bits(self.be(8)?)),
            // The sized forms: str8/16/32 (a length of 1, 2 or 4 bytes), array16/32 and
            // map16/32 (2 or 4).
            0xa0..=0xbf => self.string(usize::from(tag & 0x1f))?,
            0xd9..=0xdb => {
                let n = self.be(1 << (tag - 0xd9))? as usize;
                self.string(n)?
            }
            0x90..=0x9f => self.array(usize::from(tag & 0x0f))?,
            0xdc | 0xdd => {
                let n = self.be(2 << (tag - 0xdc))? as usize;
                self.array(n)?
            }
            0x80..=0x8f => self.map(usize::from(tag & 0x0f))?,
            0xde | 0xdf => {
                let n = self.be(2 << (tag - 0xde))? as usize;
                self.map(n)?
            }
            _ => return Err(Failure::BadFormat),
        })
    }

    fn string(&mut self, n: usize) -> Result<Value, Failure> {
        let bytes = self.take(n)?.to_vec();
        Ok(Value::String(self.lua.create_string(bytes)?))
    }

    fn nested(&mut self) -> Result<(), Failure> {
        self.depth += 1;
        if self.depth > MAX_DECODE_DEPTH {
            return Err(Failure::BadFormat);
        }
        Ok(())
    }

    fn array(&mut self, n: usize) -> Result<Value, Failure> {
        self.nested()?;
        // (The count comes from the input: the table grows as elements arrive.)
        let t = self.lua.create_table()?;
        for j in 1..=n {
            let v = self.value()?;
            t.raw_set(j, v)?;
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }

    fn map(&mut self, n: usize) -> Result<Value, Failure> {
        self.nested()?;
        let t = self.lua.create_table()?;
        for _ in 0..n {
            let k = self.value()?;
            let v = self.value()?;
            if matches!(k, Value::Nil) {
                return Err(Failure::Lua(mlua::Error::runtime("table index is nil")));
            }
            t.raw_set(k, v)?;
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }
}
