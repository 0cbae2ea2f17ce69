//! The `cjson` library as Redis 7.0 gives scripts (lua-cjson 2.1's defaults):
//! `cjson.encode`, `cjson.decode` and `cjson.null`, with lua-cjson's rules and error
//! texts: numbers as Lua writes them (%.14g), `/` escaped, a table an array when its keys
//! are 1..n (not too sparse), nesting at most 1000 deep, hex numbers accepted when
//! decoding. Written here: the JSON crates do not know Lua's tables, lightuserdata null
//! or these texts. Not built: lua-cjson's settings functions (encode_keep_buffer,
//! encode_max_depth ...).

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use super::convert::exact_field;
use super::lib_errors::{called_as, located, marked_function, plain_function, raise_argument_error, raise_if_marked};

const MAX_DEPTH: usize = 1000;
/// An array may have at most this many times as many slots as values (past 10 slots).
const SPARSE_RATIO: f64 = 2.0;
const SPARSE_SAFE: f64 = 10.0;

pub fn install(lua: &Lua) -> mlua::Result<()> {
    let cjson = lua.create_table()?;
    // `encode(v)` is a C function (`encode_c`) that hands its argument to this one in a
    // table: read from a table, a number is read exactly (`convert::exact_field`; as an
    // argument, mlua reads 1e-40 as 0).
    let encode_boxed = marked_function(lua, |lua, boxed: Table| {
        let mut out = Vec::new();
        encode(lua, &exact_field(&boxed, 1, boxed.raw_get::<Value>(1)?)?, &mut out, 0)?;
        lua.create_string(out)
    })?;
    lua.set_named_registry_value(ENCODE_KEY, encode_boxed)?;
    // SAFETY: `encode_c` is a lua_CFunction that keeps Lua's stack discipline.
    cjson.raw_set("encode", unsafe { lua.create_c_function(encode_c) }?)?;
    cjson.raw_set("decode", plain_function(lua, |lua, args: MultiValue| {
        if args.len() != 1 {
            return Err(located(lua, &format!("bad argument #1 to '{}' (expected 1 argument)", called_as(lua, "decode"))));
        }
        let value = args.into_iter().next().unwrap_or(Value::Nil);
        let type_name = value.type_name();
        let Some(text) = lua.coerce_string(value)? else {
            return Err(located(lua, &format!("bad argument #1 to '{}' (string expected, got {type_name})", called_as(lua, "decode"))));
        };
        let text = text.as_bytes().to_vec();
        Decoder { lua, s: &text, pos: 0, depth: 0 }.document()
    })?)?;
    cjson.raw_set("null", null())?;
    cjson.raw_set("_NAME", "cjson")?;
    cjson.raw_set("_VERSION", "2.1.0")?;
    lua.globals().raw_set("cjson", cjson)
}

/// Where `encode_c` finds the Rust half of its work (Lua's registry).
const ENCODE_KEY: &str = "basalt.cjson_encode";
const ENCODE_KEY_C: &std::ffi::CStr = c"basalt.cjson_encode";

/// `cjson.encode(v)`: `v` in a table, to the registry's Rust function; exactly one
/// argument, as lua-cjson checks (its error names the script's line).
unsafe extern "C-unwind" fn encode_c(state: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: Lua calls this with its own state. Only Lua's API is used; no Rust value
    // with a destructor lives here, so Lua's error jump skips nothing.
    unsafe {
        if ffi::lua_gettop(state) != 1 {
            raise_argument_error(state, c"bad argument #1 to 'encode' (expected 1 argument)", c"bad argument #1 to '?' (expected 1 argument)");
        }
        ffi::lua_createtable(state, 1, 0);
        ffi::lua_insert(state, 1);
        ffi::lua_rawseti(state, 1, 1);
        ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, ENCODE_KEY_C.as_ptr());
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, 1, ffi::LUA_MULTRET);
        raise_if_marked(state);
        ffi::lua_gettop(state)
    }
}

/// `cjson.null`: a NULL light userdata, as lua-cjson's.
fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn encode(lua: &Lua, v: &Value, out: &mut Vec<u8>, depth: usize) -> mlua::Result<()> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(_) | Value::Number(_) => number(lua, v, out)?,
        Value::String(s) => escape(&s.as_bytes(), out),
        Value::Table(t) => {
            let depth = depth + 1;
            if depth > MAX_DEPTH {
                return Err(located(lua, &format!("Cannot serialise, excessive nesting ({depth})")));
            }
            match array_length(lua, t)? {
                Some(len) if len > 0 => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        encode(lua, &exact_field(t, i, t.raw_get::<Value>(i)?)?, out, depth)?;
                    }
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.clone().pairs::<Value, Value>() {
                        let (k, v) = pair?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::String(s) => escape(&s.as_bytes(), out),
                            Value::Integer(_) | Value::Number(_) => {
                                out.push(b'"');
                                number(lua, &k, out)?;
                                out.push(b'"');
                            }
                            other => {
                                return Err(located(lua, &format!("Cannot serialise {}: table key must be a number or string", other.type_name())));
                            }
                        }
                        out.push(b':');
                        encode(lua, &exact_field(t, k, v)?, out, depth)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => return Err(located(lua, &format!("Cannot serialise {}: type not supported", other.type_name()))),
    }
    Ok(())
}

/// A number as Lua writes it (%.14g); NaN and infinities refused.
fn number(lua: &Lua, v: &Value, out: &mut Vec<u8>) -> mlua::Result<()> {
    let x = match v {
        Value::Integer(i) => *i as f64,
        Value::Number(x) => *x,
        _ => 0.0,
    };
    if !x.is_finite() {
        return Err(located(lua, "Cannot serialise number: must not be NaN or Inf"));
    }
    if let Some(s) = lua.coerce_string(Value::Number(x))? {
        out.extend_from_slice(&s.as_bytes());
    }
    Ok(())
}

/// Some(n) when the table's keys are exactly positive integers up to n, not too sparse
/// (then its slots without a value are written as null); None when it is an object.
fn array_length(lua: &Lua, t: &Table) -> mlua::Result<Option<usize>> {
    let (mut max, mut items) = (0f64, 0f64);
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        let k = match k {
            Value::Integer(i) => i as f64,
            Value::Number(x) => x,
            _ => return Ok(None),
        };
        if k < 1.0 || k.fract() != 0.0 {
            return Ok(None);
        }
        max = max.max(k);
        items += 1.0;
    }
    if max > items * SPARSE_RATIO && max > SPARSE_SAFE {
        return Err(located(lua, "Cannot serialise table: excessively sparse array"));
    }
    Ok(Some(max as usize))
}

/// A JSON string: `"`, `\` and `/` escaped, control characters and DEL as \uXXXX
/// (\b \t \n \f \r by name); other bytes as they are.
fn escape(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            8 => out.extend_from_slice(b"\\b"),
            9 => out.extend_from_slice(b"\\t"),
            10 => out.extend_from_slice(b"\\n"),
            12 => out.extend_from_slice(b"\\f"),
            13 => out.extend_from_slice(b"\\r"),
            0..=31 | 127 => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// A token of the JSON text, named as lua-cjson names them in its errors.
#[derive(Debug)]
enum Token {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    /// What was found instead of a token ("invalid token", "invalid number" ...).
    Bad(&'static str),
}

impl Token {
    fn name(&self) -> &'static str {
        match self {
            Token::ObjBegin => "T_OBJ_BEGIN",
            Token::ObjEnd => "T_OBJ_END",
            Token::ArrBegin => "T_ARR_BEGIN",
            Token::ArrEnd => "T_ARR_END",
            Token::Str(_) => "T_STRING",
            Token::Num(_) => "T_NUMBER",
            Token::Bool(_) => "T_BOOLEAN",
            Token::Null => "T_NULL",
            Token::Colon => "T_COLON",
            Token::Comma => "T_COMMA",
            Token::End => "T_END",
            Token::Bad(what) => what,
        }
    }
}

struct Decoder<'a> {
    lua: &'a Lua,
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Decoder<'_> {
    fn document(&mut self) -> mlua::Result<Value> {
        let (tok, at) = self.next();
        let value = self.value(tok, at)?;
        match self.next() {
            (Token::End, _) => Ok(value),
            (tok, at) => Err(self.expected("the end", &tok, at)),
        }
    }

    fn expected(&self, what: &str, found: &Token, at: usize) -> mlua::Error {
        located(self.lua, &format!("Expected {what} but found {} at character {}", found.name(), at + 1))
    }

    fn value(&mut self, tok: Token, at: usize) -> mlua::Result<Value> {
        Ok(match tok {
            Token::ObjBegin => self.object(at)?,
            Token::ArrBegin => self.array(at)?,
            Token::Str(s) => Value::String(self.lua.create_string(s)?),
            Token::Num(x) => Value::Number(x),
            Token::Bool(b) => Value::Boolean(b),
            Token::Null => null(),
            other => return Err(self.expected("value", &other, at)),
        })
    }

    fn enter(&mut self, at: usize) -> mlua::Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(located(self.lua, &format!("Found too many nested data structures ({}) at character {}", self.depth, at + 1)));
        }
        Ok(())
    }

    fn array(&mut self, at: usize) -> mlua::Result<Value> {
        self.enter(at)?;
        let t = self.lua.create_table()?;
        let (mut tok, mut at) = self.next();
        if !matches!(tok, Token::ArrEnd) {
            let mut i = 1;
            loop {
                t.raw_set(i, self.value(tok, at)?)?;
                i += 1;
                match self.next() {
                    (Token::Comma, _) => (tok, at) = self.next(),
                    (Token::ArrEnd, _) => break,
                    (other, at) => return Err(self.expected("comma or array end", &other, at)),
                }
            }
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }

    fn object(&mut self, at: usize) -> mlua::Result<Value> {
        self.enter(at)?;
        let t = self.lua.create_table()?;
        let (mut tok, mut at) = self.next();
        if !matches!(tok, Token::ObjEnd) {
            loop {
                let Token::Str(key) = tok else { return Err(self.expected("object key string", &tok, at)) };
                match self.next() {
                    (Token::Colon, _) => {}
                    (other, at) => return Err(self.expected("colon", &other, at)),
                }
                let (vt, vat) = self.next();
                let v = self.value(vt, vat)?;
                t.raw_set(self.lua.create_string(key)?, v)?;
                match self.next() {
                    (Token::Comma, _) => (tok, at) = self.next(),
                    (Token::ObjEnd, _) => break,
                    (other, at) => return Err(self.expected("comma or object end", &other, at)),
                }
            }
        }
        self.depth -= 1;
        Ok(Value::Table(t))
    }

    /// The next token and where it starts (0-based).
    fn next(&mut self) -> (Token, usize) {
        while self.pos < self.s.len() && matches!(self.s[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let at = self.pos;
        let Some(&c) = self.s.get(at) else { return (Token::End, at) };
        let single = match c {
            b'{' => Some(Token::ObjBegin),
            b'}' => Some(Token::ObjEnd),
            b'[' => Some(Token::ArrBegin),
            b']' => Some(Token::ArrEnd),
            b':' => Some(Token::Colon),
            b',' => Some(Token::Comma),
            _ => None,
        };
        if let Some(tok) = single {
            self.pos += 1;
            return (tok, at);
        }
        let tok = match c {
            // A bad string is reported where reading it failed, as lua-cjson does.
            b'"' => return self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            _ => {
                let rest = &self.s[at..];
                let literal = [(&b"true"[..], Token::Bool(true)), (b"false", Token::Bool(false)), (b"null", Token::Null)]
                    .into_iter()
                    .find(|(word, _)| rest.starts_with(word));
                match literal {
                    Some((word, tok)) => {
                        self.pos += word.len();
                        tok
                    }
                    None => Token::Bad("invalid token"),
                }
            }
        };
        (tok, at)
    }

    /// A string token and where it starts, or what is wrong with it and where.
    fn string(&mut self) -> (Token, usize) {
        let start = self.pos;
        let mut out = Vec::new();
        let mut i = self.pos + 1;
        loop {
            let Some(&c) = self.s.get(i) else { return (Token::Bad("unexpected end of string"), i) };
            i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(i) else { return (Token::Bad("unexpected end of string"), i) };
                    i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let Some((ch, used)) = unicode_escape(&self.s[i..]) else { return (Token::Bad("invalid unicode escape code"), i - 2) };
                            i += used;
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return (Token::Bad("invalid escape code"), i - 2),
                    }
                }
                _ => out.push(c),
            }
        }
        self.pos = i;
        (Token::Str(out), start)
    }

    /// A number as C's strtod reads it (lua-cjson's, hex included), from here.
    fn number(&mut self) -> Token {
        let rest = &self.s[self.pos..];
        let (neg, body) = match rest.first() {
            Some(b'-') => (true, &rest[1..]),
            _ => (false, rest),
        };
        if body.len() > 2 && (body.starts_with(b"0x") || body.starts_with(b"0X")) && body[2].is_ascii_hexdigit() {
            let digits = body[2..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
            let value = body[2..2 + digits].iter().fold(0f64, |acc, &d| acc * 16.0 + f64::from((d as char).to_digit(16).unwrap_or(0)));
            self.pos += usize::from(neg) + 2 + digits;
            return Token::Num(if neg { -value } else { value });
        }
        // The longest prefix of the form [-]digits[.digits][(e|E)[+-]digits].
        let mut n = usize::from(neg);
        let digits = |from: usize| rest[from..].iter().take_while(|b| b.is_ascii_digit()).count();
        let int = digits(n);
        n += int;
        let mut frac = 0;
        if rest.get(n) == Some(&b'.') {
            frac = digits(n + 1);
            if int + frac > 0 {
                n += 1 + frac;
            }
        }
        if int + frac == 0 {
            return Token::Bad("invalid number");
        }
        if matches!(rest.get(n), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(rest.get(n + 1), Some(b'+' | b'-')));
            let exp = digits(n + 1 + sign);
            if exp > 0 {
                n += 1 + sign + exp;
            }
        }
        match std::str::from_utf8(&rest[..n]).ok().and_then(|t| t.parse::<f64>().ok()) {
            Some(x) => {
                self.pos += n;
                Token::Num(x)
            }
            None => Token::Bad("invalid number"),
        }
    }
}

/// `XXXX` after `\u` (and a second `\uXXXX` for a surrogate pair): the character and
/// the bytes used.
fn unicode_escape(s: &[u8]) -> Option<(char, usize)> {
    let hex4 = |s: &[u8]| -> Option<u32> { u32::from_str_radix(std::str::from_utf8(s.get(..4)?).ok()?, 16).ok() };
    let first = hex4(s)?;
    if (0xD800..0xDC00).contains(&first) {
        if s.get(4..6)? != b"\\u" {
            return None;
        }
        let second = hex4(&s[6..])?;
        if !(0xDC00..0xE000).contains(&second) {
            return None;
        }
        let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        return char::from_u32(code).map(|c| (c, 10));
    }
    char::from_u32(first).map(|c| (c, 4))
}
