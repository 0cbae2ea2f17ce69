//! Conversions between command replies and Lua values, as Redis 7.0's scripts see them
//! (the script's own client speaks RESP2): a command's reply to a Lua value for
//! `redis.call`, and a script's result to the reply its caller gets, in the caller's
//! protocol.

use std::ffi::{c_int, CStr};

use mlua::{ffi, Lua, Table, Value};
use resp::{encode, Frame, Proto};

/// Deepest nesting of a script's result, with "reached lua stack limit" as the element
/// found deeper (Redis's error). Redis stops where Lua's C stack ends, 7998 arrays deep
/// into a table that holds itself; here each open array holds a reference on mlua's
/// auxiliary stack, which has about as many slots and panics when they run out, so
/// the limit is lower. Written without recursion: the event loop's stack is safe.
const MAX_DEPTH: usize = 1000;

/// A command's reply as `redis.call` returns it: integers as numbers, bulk strings as
/// strings, a null as false, a status as `{ok=...}`, an error inside an array as
/// `{err=...}`, arrays as tables. (A top-level error never gets here: it is raised, or
/// given to `redis.pcall`'s caller as `{err=...}`.) Built with Lua's C API inside one
/// protected call: through mlua, each string and table of it was a protected call of
/// its own, most of an EVAL's cost.
///
/// After `redis.setresp(3)` the command answered in RESP3, whose types Lua gets as
/// Redis 7.0 gives them: a null as nil, booleans as booleans, a map as `{map={k=v}}`, a
/// set as `{set={member=true}}`, a double as `{double=n}`, a big number as
/// `{big_number=digits}`, a verbatim string as `{verbatim_string={format=, string=}}`.
pub fn reply_to_lua(lua: &Lua, f: &Frame, resp3: bool) -> mlua::Result<Value> {
    // SAFETY: `push_frame` keeps the stack discipline, and its frames hold no value
    // with a destructor (a memory error's jump skips nothing).
    unsafe { lua.exec_raw::<Value>((), |l| push_frame(l, f, resp3)) }
}

/// `{err=text}`: what `redis.pcall` returns for a command's error.
pub fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Table> {
    // SAFETY: as in `reply_to_lua`.
    unsafe { lua.exec_raw::<Table>((), |l| push_field_table(l, c"err", text)) }
}

/// Pushes the Lua value of a reply (see [`reply_to_lua`]); `resp3`: the RESP3 types'
/// own tables (a RESP2 reply has none of those types, but for its null).
unsafe fn push_frame(l: *mut ffi::lua_State, f: &Frame, resp3: bool) {
    // SAFETY: the caller's: inside a protected call on `l`; new tables only.
    unsafe {
        // A reply nests at most resp's MAX_DEPTH (512) deep: a few slots a level.
        if ffi::lua_checkstack(l, 6) == 0 {
            ffi::lua_pushstring(l, c"a reply nested too deep for Lua".as_ptr());
            ffi::lua_error(l);
        }
        match f {
            Frame::Null if resp3 => ffi::lua_pushnil(l),
            Frame::Boolean(b) if resp3 => ffi::lua_pushboolean(l, c_int::from(*b)),
            Frame::Double(d) if resp3 => {
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_pushnumber(l, *d);
                ffi::lua_setfield(l, -2, c"double".as_ptr());
            }
            Frame::BigNumber(digits) if resp3 => push_field_table(l, c"big_number", digits),
            Frame::Verbatim { format, text } if resp3 => {
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_createtable(l, 0, 2);
                push_bytes(l, format);
                ffi::lua_setfield(l, -2, c"format".as_ptr());
                push_bytes(l, text);
                ffi::lua_setfield(l, -2, c"string".as_ptr());
                ffi::lua_setfield(l, -2, c"verbatim_string".as_ptr());
            }
            Frame::Map(pairs) if resp3 => {
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_createtable(l, 0, c_len(pairs.len()));
                for (k, v) in pairs {
                    push_frame(l, k, resp3);
                    push_frame(l, v, resp3);
                    // (A nil key, from a null, is left out: Lua tables hold none.)
                    if ffi::lua_type(l, -2) == ffi::LUA_TNIL {
                        ffi::lua_pop(l, 2);
                    } else {
                        ffi::lua_rawset(l, -3);
                    }
                }
                ffi::lua_setfield(l, -2, c"map".as_ptr());
            }
            Frame::Set(items) if resp3 => {
                ffi::lua_createtable(l, 0, 1);
                ffi::lua_createtable(l, 0, c_len(items.len()));
                for item in items {
                    push_frame(l, item, resp3);
                    if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
                        ffi::lua_pop(l, 1);
                    } else {
                        ffi::lua_pushboolean(l, 1);
                        ffi::lua_rawset(l, -3);
                    }
                }
                ffi::lua_setfield(l, -2, c"set".as_ptr());
            }
            Frame::Integer(n) => ffi::lua_pushnumber(l, *n as f64),
            Frame::Bulk(b) | Frame::Verbatim { text: b, .. } | Frame::BigNumber(b) => push_bytes(l, b),
            Frame::Null => ffi::lua_pushboolean(l, 0),
            Frame::Simple(s) => push_field_table(l, c"ok", s),
            Frame::Error(e) => push_field_table(l, c"err", e),
            Frame::Boolean(b) => ffi::lua_pushnumber(l, f64::from(u8::from(*b))),
            Frame::Double(d) => {
                let mut buf = [0u8; 32];
                push_bytes(l, resp::double::format_g17(*d, &mut buf));
            }
            Frame::Array(items) | Frame::Set(items) | Frame::Push(items) => {
                ffi::lua_createtable(l, c_len(items.len()), 0);
                for (i, item) in items.iter().enumerate() {
                    push_frame(l, item, resp3);
                    ffi::lua_rawseti(l, -2, (i + 1) as ffi::lua_Integer);
                }
            }
            // (An attribute, which Redis leaves out, never comes: the server sends none.)
            Frame::Map(pairs) | Frame::Attribute(pairs) => {
                ffi::lua_createtable(l, c_len(pairs.len() * 2), 0);
                for (i, (k, v)) in pairs.iter().enumerate() {
                    push_frame(l, k, resp3);
                    ffi::lua_rawseti(l, -2, (2 * i + 1) as ffi::lua_Integer);
                    push_frame(l, v, resp3);
                    ffi::lua_rawseti(l, -2, (2 * i + 2) as ffi::lua_Integer);
                }
            }
        }
    }
}

unsafe fn push_bytes(l: *mut ffi::lua_State, b: &[u8]) {
    // SAFETY: the caller's.
    unsafe {
        ffi::lua_pushlstring(l, b.as_ptr().cast(), b.len());
    }
}

/// Pushes `{field=text}`.
unsafe fn push_field_table(l: *mut ffi::lua_State, field: &CStr, text: &[u8]) {
    // SAFETY: the caller's; the table is new, with no metatable.
    unsafe {
        ffi::lua_createtable(l, 0, 1);
        push_bytes(l, text);
        ffi::lua_setfield(l, -2, field.as_ptr());
    }
}

fn c_len(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// The text of a command's error reply as a script sees it (Redis's luaPushErrorBuff):
/// "CODE message" as sent; a reply without a code gets ERR.
pub fn error_text(reply: &[u8]) -> Vec<u8> {
    let reply = reply.strip_prefix(b"-").unwrap_or(reply);
    if reply.contains(&b' ') {
        reply.to_vec()
    } else {
        [b"ERR ".as_slice(), reply].concat()
    }
}

/// A Lua number as Redis writes it as an integer: C's conversion, which gives
/// i64::MIN for what does not fit (NaN, infinities, 1e20), as Redis 7.0.15 answers.
pub fn number_to_integer(n: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// What a result table stands for, by its fields (Redis's order of looking).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Err,
    Ok,
    Double,
    BigNumber,
    Map,
    Set,
    Verbatim,
    Array,
}

/// The fields looked for, with the Lua type each must have, in Redis's order.
const KINDS: &[(&CStr, c_int, Kind)] = &[
    (c"err", ffi::LUA_TSTRING, Kind::Err),
    (c"ok", ffi::LUA_TSTRING, Kind::Ok),
    (c"double", ffi::LUA_TNUMBER, Kind::Double),
    (c"big_number", ffi::LUA_TSTRING, Kind::BigNumber),
    (c"map", ffi::LUA_TTABLE, Kind::Map),
    (c"set", ffi::LUA_TTABLE, Kind::Set),
    (c"verbatim_string", ffi::LUA_TTABLE, Kind::Verbatim),
];

/// Which kind of result a table is, and the field that says so: its fields read raw,
/// in one protected call.
fn kind_of(lua: &Lua, t: &Table) -> (Kind, Value) {
    // SAFETY: the table is the call's one argument (index 1); each field is pushed and
    // read raw; the one found stays, with its index pushed after it, the table and
    // the fields not wanted popped or removed.
    let found = unsafe {
        lua.exec_raw::<(usize, Value)>(t.clone(), |l| {
            let mut answer = KINDS.len();
            for (i, (name, want, _)) in KINDS.iter().enumerate() {
                ffi::lua_pushstring(l, name.as_ptr());
                ffi::lua_rawget(l, 1);
                if ffi::lua_type(l, -1) == *want {
                    answer = i;
                    break;
                }
                ffi::lua_pop(l, 1);
            }
            if answer == KINDS.len() {
                ffi::lua_pushnil(l);
            }
            ffi::lua_pushinteger(l, answer as ffi::lua_Integer);
            ffi::lua_insert(l, -2);
            ffi::lua_remove(l, 1);
        })
    };
    match found {
        Ok((i, v)) => (KINDS.get(i).map_or(Kind::Array, |k| k.2), v),
        Err(_) => (Kind::Array, Value::Nil),
    }
}

/// A string field of a table, read raw (as Redis reads `err` and `ok`).
fn string_field(t: &Table, name: &str) -> Option<mlua::String> {
    match t.raw_get::<Value>(name) {
        Ok(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// A status or error line's text with its line breaks made spaces (a reply line may
/// hold none).
pub(super) fn line_text(s: &[u8]) -> Vec<u8> {
    s.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect()
}

/// An aggregate of the result being written.
enum Open {
    /// An array: the table, its next index, its length.
    Array(Table, usize, usize),
    /// A `map` (keys and values) or a `set` (keys): the table and the last key given,
    /// walked with Lua's `next`; a map's value waits while its key is written.
    Pairs { table: Table, key: Value, values: bool, pending: Option<Value> },
}

/// Writes a script's result as its caller's reply (Redis 7.0's rules): a string as a
/// bulk string, a number as an integer (truncated), true as 1, false and nil as a null
/// (after `redis.setresp(3)`, `resp3`, booleans as booleans),
/// a table with a string `err` or `ok` field as an error or a status, with a number
/// `double`, a string `big_number`, a table `map` or `set`, or a `verbatim_string`
/// ({format=, string=}) as that RESP3 type (in RESP2 what Redis writes for it), any
/// other table as an array of its elements 1, 2, ... up to the first nil.
pub fn write_result(lua: &Lua, out: &mut Vec<u8>, value: &Value, proto: Proto, resp3: bool) {
    // Lua's `next`, looked up on the first map or set only.
    let next_fn = std::cell::OnceCell::new();
    let pair_after = |t: &Table, key: &Value| -> Option<(Value, Value)> {
        let next = next_fn.get_or_init(|| lua.globals().raw_get::<mlua::Function>("next").ok());
        match next.as_ref()?.call::<(Value, Value)>((t.clone(), key.clone())) {
            Ok((Value::Nil, _)) | Err(_) => None,
            Ok(pair) => Some(pair),
        }
    };
    let count_pairs = |t: &Table| {
        let (mut key, mut n) = (Value::Nil, 0);
        while let Some((k, _)) = pair_after(t, &key) {
            key = k;
            n += 1;
        }
        n
    };
    let mut open: Vec<Open> = Vec::new();
    let mut next = Some(value.clone());
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::String(s) => encode::bulk(out, &s.as_bytes()),
                // After redis.setresp(3) a boolean is one (`:1`/`:0` to a RESP2 caller).
                Value::Boolean(b) if resp3 => encode::boolean(out, b, proto),
                Value::Boolean(true) => encode::integer(out, 1),
                Value::Integer(n) => encode::integer(out, n),
                Value::Number(n) => encode::integer(out, number_to_integer(n)),
                Value::Table(t) => {
                    let (kind, field) = kind_of(lua, &t);
                    let text = |v: &Value| match v {
                        Value::String(s) => line_text(&s.as_bytes()),
                        _ => Vec::new(),
                    };
                    let verbatim = match (kind, &field) {
                        (Kind::Verbatim, Value::Table(v)) => Some((string_field(v, "format"), string_field(v, "string"))),
                        _ => None,
                    };
                    let verbatim = verbatim.and_then(|(f, s)| Some((f?, s?))).filter(|(f, _)| f.as_bytes().len() == 3);
                    let nested = matches!(kind, Kind::Map | Kind::Set | Kind::Array);
                    if kind == Kind::Err {
                        let text = text(&field);
                        encode::error(out, text.strip_prefix(b"-").unwrap_or(&text));
                    } else if kind == Kind::Ok {
                        encode::simple(out, &text(&field));
                    } else if kind == Kind::Double {
                        let d = match field {
                            Value::Number(n) => n,
                            Value::Integer(n) => n as f64,
                            _ => 0.0,
                        };
                        encode::double(out, d, proto);
                    } else if kind == Kind::BigNumber {
                        encode::big_number(out, &text(&field), proto);
                    } else if nested && open.len() >= MAX_DEPTH {
                        encode::error(out, b"ERR reached lua stack limit");
                    } else if let (Kind::Map, Value::Table(map)) = (kind, &field) {
                        encode::map_len(out, count_pairs(map), proto);
                        open.push(Open::Pairs { table: map.clone(), key: Value::Nil, values: true, pending: None });
                    } else if let (Kind::Set, Value::Table(set)) = (kind, &field) {
                        encode::set_len(out, count_pairs(set), proto);
                        open.push(Open::Pairs { table: set.clone(), key: Value::Nil, values: false, pending: None });
                    } else if let Some((format, text)) = verbatim {
                        let mut fmt = [0u8; 3];
                        fmt.copy_from_slice(&format.as_bytes());
                        encode::verbatim(out, &fmt, &text.as_bytes(), proto);
                    } else {
                        let mut len = 0;
                        while !matches!(t.raw_get::<Value>(len + 1), Ok(Value::Nil) | Err(_)) {
                            len += 1;
                        }
                        encode::array_len(out, len);
                        open.push(Open::Array(t, 1, len));
                    }
                }
                _ => encode::null(out, proto),
            }
        }
        // The next element of the innermost open aggregate, closing those that are done.
        loop {
            match open.last_mut() {
                None => return,
                Some(Open::Array(t, i, len)) => {
                    if *i > *len {
                        open.pop();
                        continue;
                    }
                    next = Some(t.raw_get::<Value>(*i).unwrap_or(Value::Nil));
                    *i += 1;
                }
                Some(Open::Pairs { table, key, values, pending }) => {
                    if let Some(v) = pending.take() {
                        next = Some(v);
                        break;
                    }
                    let Some((k, v)) = pair_after(table, key) else {
                        open.pop();
                        continue;
                    };
                    *key = k.clone();
                    if *values {
                        *pending = Some(v);
                    }
                    next = Some(k);
                }
            }
            break;
        }
    }
}

/// A table field's value with its number read exactly. mlua reads a number within
/// 2^-52 of an integer as that integer: a tiny one (1e-40) and -0 both come as
/// `Integer(0)`, which cjson and cmsgpack would write as 0; the field is read again as
/// a float then.
pub fn exact_field(t: &mlua::Table, key: impl mlua::IntoLua, value: mlua::Value) -> mlua::Result<mlua::Value> {
    if !matches!(value, mlua::Value::Integer(0)) {
        return Ok(value);
    }
    let x: f64 = t.raw_get(key)?;
    Ok(if x != 0.0 || x.is_sign_negative() { mlua::Value::Number(x) } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(lua: &Lua, code: &str) -> Vec<u8> {
        result_in(lua, code, Proto::Resp2)
    }

    fn result_in(lua: &Lua, code: &str, proto: Proto) -> Vec<u8> {
        let v: Value = lua.load(code).eval().expect("script");
        let mut out = Vec::new();
        write_result(lua, &mut out, &v, proto, false);
        out
    }

    #[test]
    fn resp3_types_from_tables_as_redis_writes_them() {
        // Redis 7.0.15's answers, to a RESP2 and a RESP3 caller.
        let lua = Lua::new();
        let cases: &[(&str, &[u8], &[u8])] = &[
            ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n", b"%1\r\n$1\r\na\r\n:1\r\n"),
            ("return {set={a=false}}", b"*1\r\n$1\r\na\r\n", b"~1\r\n$1\r\na\r\n"),
            ("return {map={}}", b"*0\r\n", b"%0\r\n"),
            ("return {map={[1]={2,3}}}", b"*2\r\n:1\r\n*2\r\n:2\r\n:3\r\n", b"%1\r\n:1\r\n*2\r\n:2\r\n:3\r\n"),
            ("return {big_number='123456789012345678901234567890'}", b"$30\r\n123456789012345678901234567890\r\n", b"(123456789012345678901234567890\r\n"),
            ("return {verbatim_string={format='txt', string='hello'}}", b"$5\r\nhello\r\n", b"=9\r\ntxt:hello\r\n"),
            ("return {map=5}", b"*0\r\n", b"*0\r\n"),
            ("return {double='x'}", b"*0\r\n", b"*0\r\n"),
            ("return {ok='a', err='b'}", b"-b\r\n", b"-b\r\n"),
            ("return {1,false,'x'}", b"*3\r\n:1\r\n$-1\r\n$1\r\nx\r\n", b"*3\r\n:1\r\n_\r\n$1\r\nx\r\n"),
        ];
        for (code, resp2, resp3) in cases {
            assert_eq!(result_in(&lua, code, Proto::Resp2), *resp2, "{code}");
            assert_eq!(result_in(&lua, code, Proto::Resp3), *resp3, "{code}");
        }
    }

    #[test]
    fn results_are_written_as_redis_writes_them() {
        // Each answer is Redis 7.0.15's to EVAL of the same code.
        let lua = Lua::new();
        assert_eq!(result(&lua, "return 3.99"), b":3\r\n");
        assert_eq!(result(&lua, "return -3.99"), b":-3\r\n");
        assert_eq!(result(&lua, "return 1e20"), b":-9223372036854775808\r\n");
        assert_eq!(result(&lua, "return 0/0"), b":-9223372036854775808\r\n");
        assert_eq!(result(&lua, "return false"), b"$-1\r\n");
        assert_eq!(result(&lua, "return {1,2,{3,'x'},nil,5}"), b"*3\r\n:1\r\n:2\r\n*2\r\n:3\r\n$1\r\nx\r\n");
        assert_eq!(result(&lua, "return {ok='fine'}"), b"+fine\r\n");
        assert_eq!(result(&lua, "return {err='My Error'}"), b"-My Error\r\n");
        assert_eq!(result(&lua, "return {err=1}"), b"*0\r\n");
        assert_eq!(result(&lua, "return {double=3.14}"), b"$18\r\n3.1400000000000001\r\n");
        assert_eq!(result(&lua, "return {1, {ok='x'}, {err='ERR inner'}}"), b"*3\r\n:1\r\n+x\r\n-ERR inner\r\n");
    }

    #[test]
    fn a_table_that_holds_itself_ends_at_the_stack_limit() {
        let lua = Lua::new();
        let out = result(&lua, "local t = {} ; t[1] = t ; return t");
        assert_eq!(out.matches_count(b"*1\r\n"), MAX_DEPTH);
        assert!(out.ends_with(b"-ERR reached lua stack limit\r\n"));
    }

    trait Count {
        fn matches_count(&self, needle: &[u8]) -> usize;
    }
    impl Count for Vec<u8> {
        fn matches_count(&self, needle: &[u8]) -> usize {
            self.windows(needle.len()).filter(|w| *w == needle).count()
        }
    }

    #[test]
    fn error_texts_get_a_code() {
        assert_eq!(error_text(b"ERR value is not an integer or out of range"), b"ERR value is not an integer or out of range");
        assert_eq!(error_text(b"-NOPE"), b"ERR NOPE");
    }
}
