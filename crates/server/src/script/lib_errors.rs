//! Errors of the libraries written in Rust (`cjson`, `bit`, `redis.*`) as Lua's C
//! libraries word them: the calling script line first ("user_script:1: "), and
//! luaL_argerror's "bad argument #n to 'f' (...)".

use mlua::{Lua, Value};

/// `msg` raised from a library function, prefixed with the place of the Lua code that
/// called it (as luaL_error does).
pub fn located(lua: &Lua, msg: &str) -> mlua::Error {
    // Level 0 is the library function itself; 1 is its caller, or the C function that
    // stands in front of it (`cjson.encode`, `cmsgpack.pack`), whose caller is next.
    let place = (1..=2).find_map(|level| {
        let frame = lua.inspect_stack(level)?;
        let line = frame.curr_line();
        let src = frame.source().short_src.map(|s| s.into_owned())?;
        (line > 0).then(|| format!("{src}:{line}: "))
    });
    mlua::Error::RuntimeError(format!("{}{msg}", place.unwrap_or_default()))
}

/// Argument `n` (from 1) of `function` as a number, with Lua's coercion of numeric
/// strings; else luaL_argerror's error.
pub fn number_arg(lua: &Lua, args: &[Value], n: usize, function: &str) -> mlua::Result<f64> {
    let v = args.get(n - 1).cloned().unwrap_or(Value::Nil);
    let got = match &v {
        Value::Integer(i) => return Ok(*i as f64),
        Value::Number(x) => return Ok(*x),
        Value::String(_) => match lua.coerce_number(v.clone())? {
            Some(x) => return Ok(x),
            None => "string",
        },
        Value::Nil if n > args.len() => "no value",
        other => other.type_name(),
    };
    Err(located(lua, &format!("bad argument #{n} to '{function}' (number expected, got {got})")))
}
