//! Errors of the libraries written in Rust (`cjson`, `bit`, `cmsgpack`) as Lua's C
//! libraries raise them: plain strings (what `pcall` gets), the calling script line
//! first when a script called the function ("user_script:1: "; none through `pcall`),
//! and luaL_argerror's "bad argument #n to 'f' (...)" ('?' through `pcall`).
//!
//! An error an mlua function raises is mlua's own value (a userdata with a traceback),
//! so these functions do not raise: [`plain_function`] makes them return a marker and
//! the text, and a C closure in front raises the text as Lua's C libraries do.

use mlua::{FromLuaMulti, Function, IntoLuaMulti, LightUserData, Lua, MultiValue, Value};

/// Marks an error text returned by a library function (its address, as a light
/// userdata, is what the C closures look for).
static ERROR_MARKER: u8 = 0;

fn error_marker() -> *mut std::ffi::c_void {
    std::ptr::addr_of!(ERROR_MARKER) as *mut std::ffi::c_void
}

/// Marks an error text to be raised as it is, without the caller's place (`redis.log`,
/// `redis.sha1hex`, `redis.setresp`, `redis.set_repl`: Redis raises their errors as
/// `ERR ...` texts, which `pcall` gets as they are).
static BARE_ERROR_MARKER: u8 = 0;

fn bare_error_marker() -> *mut std::ffi::c_void {
    std::ptr::addr_of!(BARE_ERROR_MARKER) as *mut std::ffi::c_void
}

/// Marks many results returned in a table, for the C closure to spread on its own stack
/// (mlua's return path refuses some counts below Lua's 8000-slot bound, which Redis's C
/// libraries reach: `struct.unpack` and `cmsgpack.unpack` check that bound themselves).
static MANY_MARKER: u8 = 0;

fn many_marker() -> *mut std::ffi::c_void {
    std::ptr::addr_of!(MANY_MARKER) as *mut std::ffi::c_void
}

/// Results beyond which a library function's are returned in a table (Lua guarantees a
/// C function 20 free slots).
const SPREAD_ABOVE: usize = 16;

/// A library function whose errors reach Lua as Lua's C libraries raise them (see the
/// module's header).
pub fn plain_function<A, R, F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    A: FromLuaMulti,
    R: IntoLuaMulti,
    F: Fn(&Lua, A) -> mlua::Result<R> + mlua::MaybeSend + 'static,
{
    let inner = marked_function(lua, f)?;
    // SAFETY: pushes a C closure over the function given; `raising_closure` keeps Lua's
    // stack discipline.
    unsafe { lua.exec_raw::<Function>(inner, |l| mlua::ffi::lua_pushcclosure(l, raising_closure, 1)) }
}

/// A function of the `redis` library whose errors are raised as their text alone, as
/// Redis raises them (see [`BARE_ERROR_MARKER`]).
pub fn bare_error_function<A, R, F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    A: FromLuaMulti,
    R: IntoLuaMulti,
    F: Fn(&Lua, A) -> mlua::Result<R> + mlua::MaybeSend + 'static,
{
    let inner = marked_function_with(lua, f, bare_error_marker())?;
    // SAFETY: as in `plain_function`.
    unsafe { lua.exec_raw::<Function>(inner, |l| mlua::ffi::lua_pushcclosure(l, raising_closure, 1)) }
}

/// `f` as an mlua function that returns the marker and its error's text instead of
/// raising it (for a C function of this crate's to raise: [`raise_if_marked`]).
pub fn marked_function<A, R, F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    A: FromLuaMulti,
    R: IntoLuaMulti,
    F: Fn(&Lua, A) -> mlua::Result<R> + mlua::MaybeSend + 'static,
{
    marked_function_with(lua, f, error_marker())
}

fn marked_function_with<A, R, F>(lua: &Lua, f: F, marker: *mut std::ffi::c_void) -> mlua::Result<Function>
where
    A: FromLuaMulti,
    R: IntoLuaMulti,
    F: Fn(&Lua, A) -> mlua::Result<R> + mlua::MaybeSend + 'static,
{
    // (The marker's address, kept as a number: a raw pointer is not Send.)
    let marker = marker as usize;
    lua.create_function(move |lua, args: A| match f(lua, args) {
        Ok(r) => {
            let results = r.into_lua_multi(lua)?;
            if results.len() <= SPREAD_ABOVE {
                return Ok(results);
            }
            let n = results.len();
            let table = lua.create_sequence_from(results)?;
            Ok(MultiValue::from_iter([Value::LightUserData(LightUserData(many_marker())), Value::Table(table), Value::Integer(n as mlua::Integer)]))
        }
        Err(e) => {
            let marker = Value::LightUserData(LightUserData(marker as *mut std::ffi::c_void));
            let text = Value::String(lua.create_string(root_text(&e))?);
            Ok(MultiValue::from_iter([marker, text]))
        }
    })
}

fn root_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => root_text(cause),
        mlua::Error::RuntimeError(m) => m.clone(),
        other => other.to_string(),
    }
}

/// The C closure in front of a [`plain_function`]: calls it (upvalue 1) with every
/// argument, and returns its results or raises its marked error.
unsafe extern "C-unwind" fn raising_closure(l: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: Lua calls this with its own state; only Lua's API is used and no Rust
    // value with a destructor lives here.
    unsafe {
        let n = ffi::lua_gettop(l);
        ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
        ffi::lua_insert(l, 1);
        ffi::lua_call(l, n, ffi::LUA_MULTRET);
        raise_if_marked(l);
        spread_if_many(l);
        ffi::lua_gettop(l)
    }
}

/// After a call of a [`marked_function`] whose results are the whole stack: when it
/// returned many results in a table, puts them on the stack in their place.
///
/// # Safety
/// Called from a C function of Lua's, the call's results making up its stack.
pub unsafe fn spread_if_many(l: *mut mlua::ffi::lua_State) {
    use mlua::ffi;
    // SAFETY: the caller's contract; the table holds `n` values at 1..=n.
    unsafe {
        if ffi::lua_gettop(l) == 3 && ffi::lua_type(l, 1) == ffi::LUA_TLIGHTUSERDATA && ffi::lua_touserdata(l, 1) == many_marker() {
            let n = ffi::lua_tointeger(l, 3) as std::ffi::c_int;
            ffi::lua_settop(l, 2);
            ffi::lua_remove(l, 1);
            if ffi::lua_checkstack(l, n) == 0 {
                ffi::luaL_error(l, c"stack overflow (too many results)".as_ptr());
            }
            for i in 1..=n {
                ffi::lua_rawgeti(l, 1, i.into());
            }
            ffi::lua_remove(l, 1);
        }
    }
}

/// After a call of a [`marked_function`] whose results are the whole stack: raises its
/// error, if it returned one, with the caller's place first (luaL_error's `where`:
/// the script's line, nothing for a C caller such as `pcall`).
///
/// # Safety
/// Called from a C function of Lua's, the call's results making up its stack.
pub unsafe fn raise_if_marked(l: *mut mlua::ffi::lua_State) {
    use mlua::ffi;
    // SAFETY: the caller's contract.
    unsafe {
        if ffi::lua_gettop(l) == 2 && ffi::lua_type(l, 1) == ffi::LUA_TLIGHTUSERDATA {
            let marker = ffi::lua_touserdata(l, 1);
            if marker == error_marker() {
                ffi::luaL_where(l, 1);
                ffi::lua_pushvalue(l, 2);
                ffi::lua_concat(l, 2);
                ffi::lua_error(l);
            } else if marker == bare_error_marker() {
                ffi::lua_pushvalue(l, 2);
                ffi::lua_error(l);
            }
        }
    }
}

/// Whether the C function running was called by Lua code (a script) rather than by a C
/// function such as `pcall`: luaL_argerror then names it '?'.
///
/// # Safety
/// Called from a C function of Lua's, with its state.
pub unsafe fn called_by_lua(l: *mut mlua::ffi::lua_State) -> bool {
    use mlua::ffi;
    // SAFETY: the caller's contract; `lua_Debug` is plain data, zeroed as C does.
    unsafe {
        let mut ar: ffi::lua_Debug = std::mem::zeroed();
        if ffi::lua_getstack(l, 1, &mut ar) == 0 {
            return false;
        }
        ffi::lua_getinfo(l, c"S".as_ptr(), &mut ar);
        !ar.what.is_null() && std::ffi::CStr::from_ptr(ar.what).to_bytes() != b"C"
    }
}

/// Raises an argument error from a C function of a library, as luaL_argerror words it:
/// the caller's place first, and the function's name when a script called it (`named`),
/// '?' when a C function did (`anonymous`).
///
/// # Safety
/// Called from a C function of Lua's, with its state; does not return.
pub unsafe fn raise_argument_error(l: *mut mlua::ffi::lua_State, named: &std::ffi::CStr, anonymous: &std::ffi::CStr) {
    use mlua::ffi;
    // SAFETY: the caller's contract.
    unsafe {
        ffi::luaL_where(l, 1);
        let text = if called_by_lua(l) { named } else { anonymous };
        ffi::lua_pushstring(l, text.as_ptr());
        ffi::lua_concat(l, 2);
        ffi::lua_error(l);
    }
}

/// A library function's error `msg` (the place is added where it is raised:
/// [`raise_if_marked`]).
pub fn located(_lua: &Lua, msg: &str) -> mlua::Error {
    mlua::Error::RuntimeError(msg.to_string())
}

/// The name a library function's argument error gives it: its own when a script
/// called it, '?' when a C function did (`pcall(bit.tohex, ...)`), as Lua's
/// luaL_argerror finds it.
pub fn called_as<'a>(lua: &Lua, name: &'a str) -> &'a str {
    // Level 0 is the Rust function, 1 the C closure in front of it, 2 its caller.
    let from_lua = lua.inspect_stack(2).is_some_and(|frame| frame.source().what != "C");
    if from_lua { name } else { "?" }
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
    Err(located(lua, &format!("bad argument #{n} to '{}' (number expected, got {got})", called_as(lua, function))))
}

/// Argument `n` (from 1) of `function` as a string, with Lua's coercion of numbers
/// (`%.14g`), as luaL_checklstring; else luaL_argerror's error.
pub fn string_arg(lua: &Lua, args: &[Value], n: usize, function: &str) -> mlua::Result<Vec<u8>> {
    let v = args.get(n - 1).cloned().unwrap_or(Value::Nil);
    let got = match &v {
        Value::String(s) => return Ok(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => match lua.coerce_string(v.clone())? {
            Some(s) => return Ok(s.as_bytes().to_vec()),
            None => v.type_name(),
        },
        Value::Nil if n > args.len() => "no value",
        other => other.type_name(),
    };
    Err(located(lua, &format!("bad argument #{n} to '{}' (string expected, got {got})", called_as(lua, function))))
}

/// luaL_argerror's error for argument `n` of `function`, with `msg`.
pub fn argument_error(lua: &Lua, n: usize, function: &str, msg: &str) -> mlua::Error {
    located(lua, &format!("bad argument #{n} to '{}' ({msg})", called_as(lua, function)))
}
