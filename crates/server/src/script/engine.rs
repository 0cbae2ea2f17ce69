//! One event loop's Lua state, a script's run in it, and the function libraries
//! loaded into it.
//!
//! Each event loop keeps its own Lua 5.1 state (a state is not shared between threads),
//! made on its first script and again after SCRIPT FLUSH (the cache's generation
//! moved), with each script compiled once per state. A script's globals cannot change
//! (`stdlib.rs`), so which loop runs a script is never seen.
//!
//! A run: KEYS and ARGV set, the compiled function called under `xpcall` with an error
//! handler that turns any error into Redis 7.0's `{err=..., source=..., line=...}`, and
//! the result written as the caller's reply (`convert.rs`). `redis.call` and
//! `redis.pcall` reach the caller's command runner through a thread-local pointer set
//! for the run's length (`RunnerGuard`).
//!
//! Functions: a library's code runs once with Redis 7.0's loading API alone as its
//! globals (the prelude's `load_library`), which collects what it registers
//! ([`load_library`] for FUNCTION LOAD's check); each state loads every library again
//! when the set's generation moved, keeping the callbacks by function name, and an FCALL
//! calls one with its keys and arguments as two tables ([`run_function`]), under the
//! same error handler, limits and `redis.call` as a script. The library code's time is
//! limited to [`LOAD_TIME_LIMIT`] ("FUNCTION LOAD timeout").
//!
//! Limits: the state holds at most [`MEMORY_LIMIT`] bytes (past it the script fails
//! with Lua's "not enough memory" and the server goes on); a script that has not written
//! is stopped once it has run `stop_after` (busy-reply-threshold). One that has written
//! runs to its end: stopping it would leave half its writes, as in Redis, where only
//! SHUTDOWN NOSAVE ends it.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mlua::{ChunkMode, Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};
use resp::{encode, Proto};

use super::cache::{sha1_hex, Sha};
use super::convert;
use super::lib_errors::bare_error_function;
use super::stdlib::PRELUDE;

/// What a script's `redis.call` got from the command it ran: the reply (RESP2), and
/// whether the command was a write that ran.
pub struct Called {
    pub reply: Vec<u8>,
    pub wrote: bool,
}

/// How a script's command is to be run: the protocol it answers in (`redis.setresp`)
/// and where its writes are propagated (`redis.set_repl`: the log, the replicas, both
/// by default, or neither).
#[derive(Clone, Copy, Debug)]
pub struct CallMode {
    pub proto: Proto,
    pub to_log: bool,
    pub to_replicas: bool,
}

/// `redis.set_repl`'s flags (Redis's PROPAGATE_AOF and PROPAGATE_REPL).
pub const REPL_AOF: u8 = 1;
pub const REPL_REPLICA: u8 = 2;
pub const REPL_ALL: u8 = REPL_AOF | REPL_REPLICA;

/// A script to run.
pub struct Script<'a> {
    pub sha: &'a Sha,
    pub body: &'a [u8],
    pub keys: &'a [&'a [u8]],
    pub argv: &'a [&'a [u8]],
    /// The caller's protocol: the script's result is written in it.
    pub proto: Proto,
    /// A script that has not written is stopped after this long; None: never.
    pub stop_after: Option<Duration>,
}

/// The name scripts are compiled under: errors read "user_script:1: ...", and the
/// error handler reports "on @user_script:1." (as Redis 7.0).
const SCRIPT_CHUNK: &str = "@user_script";
/// The name of `stdlib.rs`'s chunk: its frames are skipped when an error's line is
/// looked for (an error raised by `redis.call` is the calling line's).
const PRELUDE_CHUNK: &str = "=basalt";
/// The memory one loop's Lua state may hold.
pub const MEMORY_LIMIT: usize = 1 << 30;
/// Past this much memory after a run, a full collection gives the garbage back.
const COLLECT_ABOVE: usize = 32 << 20;
/// Lua's `setpause`, in percent of the heap after the last collection.
const GC_PAUSE: std::ffi::c_int = 400;
/// How often, in Lua instructions, a running script looks at the clock.
const CHECK_EVERY: std::ffi::c_int = 100_000;
/// The error of a script stopped for running too long without writing.
pub const STOPPED: &str = "ERR Script ran longer than busy-reply-threshold without writing and was stopped (Basalt stops it rather than answer BUSY to other clients)";
const STOPPED_C: &std::ffi::CStr = c"ERR Script ran longer than busy-reply-threshold without writing and was stopped (Basalt stops it rather than answer BUSY to other clients)";

/// The clock of the run in progress on this thread, read by the instruction hook
/// (a plain C hook: mlua's answers for one Lua thread only, and a coroutine has its
/// own, which inherits the hook of the thread that made it).
#[derive(Clone, Copy, Default)]
struct Clock {
    started: Option<Instant>,
    stop_after: Option<Duration>,
    wrote: bool,
    stopped: bool,
    /// A library's code runs (FUNCTION LOAD): its time limit has Redis's own text.
    loading: bool,
}

thread_local! {
    static CLOCK: Cell<Clock> = const { Cell::new(Clock { started: None, stop_after: None, wrote: false, stopped: false, loading: false }) };
}

fn update_clock(f: impl FnOnce(&mut Clock)) -> Clock {
    CLOCK.with(|c| {
        let mut clock = c.get();
        f(&mut clock);
        c.set(clock);
        clock
    })
}

/// The run in progress, read by `redis.call` and the error handler.
#[derive(Default)]
struct RunState {
    /// `redis.setresp(3)` was called: commands answer in RESP3, and the result's
    /// booleans are RESP3's.
    resp3: Cell<bool>,
    /// The error text `redis.call` raised last: reported as it is (without a second
    /// "ERR ").
    raised: RefCell<Option<Vec<u8>>>,
    /// The error text a `redis` library function (`sha1hex`, `log`, `setresp`,
    /// `set_repl`) raised last: reported as it is, as Redis raises it (and counted once,
    /// as the script's error).
    raised_bare: RefCell<Option<Vec<u8>>>,
    /// The propagation `redis.set_repl` turned off for the run's next commands (the
    /// complement of its flags: 0, the default, propagates everywhere).
    repl_off: Cell<u8>,
}

struct State {
    lua: Lua,
    generation: u64,
    /// The prelude's `run(script, handler, key count, keys and arguments ...)`.
    run: Function,
    handler: Function,
    compiled: HashMap<Sha, Function>,
    /// This state's memory as last added to [`LUA_MEMORY`].
    reported: usize,
    /// The prelude's `load_library(chunk)` and `call_function(callback, handler, key
    /// count, keys and arguments ...)`.
    load_library: Function,
    call_function: Function,
    /// The generation of the function libraries loaded here, and their functions'
    /// callbacks by name.
    functions_generation: Option<u64>,
    functions: HashMap<String, Function>,
}

thread_local! {
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
}

/// Compiles a script (SCRIPT LOAD): Ok, or Redis's error text.
pub fn check_compiles(generation: u64, sha: &Sha, body: &[u8]) -> Result<(), String> {
    with_state(generation, |state| compiled(state, sha, body).map(drop))?
}

/// A script's reply to its caller.
pub struct Outcome {
    pub reply: Vec<u8>,
    /// The reply is an error that the error statistics counted already: a command's
    /// error, or a refusal, met in `redis.call` or `redis.pcall` (Redis marks such an
    /// error `ignore_error_stats_update`, in the Lua table too).
    pub error_counted: bool,
}

/// Runs a script and returns its caller's reply. `call` runs one command for
/// `redis.call` and `redis.pcall`.
pub fn run(generation: u64, script: &Script<'_>, call: &mut dyn FnMut(&[&[u8]], CallMode) -> Called) -> Outcome {
    with_run_state(generation, |state| match compiled(state, script.sha, script.body) {
        Ok(func) => run_compiled(state, func, script, call),
        Err(text) => Outcome { reply: error_reply(text.as_bytes()), error_counted: false },
    })
}

/// A script's or function's run in this thread's state: `f`'s reply, then the garbage
/// collected when the run left much (a script that built much, or failed for memory,
/// leaves garbage the collector would keep until the heap grew fourfold again) and
/// the state's memory reported.
fn with_run_state(generation: u64, f: impl FnOnce(&mut State) -> Outcome) -> Outcome {
    let outcome = with_state(generation, |state| {
        let outcome = f(state);
        if state.lua.used_memory() > COLLECT_ABOVE {
            let _ = state.lua.gc_collect();
        }
        report_memory(state);
        outcome
    });
    outcome.unwrap_or_else(|text| Outcome { reply: error_reply(text.as_bytes()), error_counted: false })
}

/// The memory every loop's Lua state holds, as each last reported it (after each
/// run; INFO memory's `used_memory_lua`).
static LUA_MEMORY: AtomicUsize = AtomicUsize::new(0);

pub fn used_memory() -> usize {
    LUA_MEMORY.load(Ordering::Relaxed)
}

/// Brings this loop's share of [`LUA_MEMORY`] up to date.
fn report_memory(state: &mut State) {
    let now = state.lua.used_memory();
    LUA_MEMORY.fetch_add(now, Ordering::Relaxed);
    LUA_MEMORY.fetch_sub(state.reported, Ordering::Relaxed);
    state.reported = now;
}

impl Drop for State {
    fn drop(&mut self) {
        LUA_MEMORY.fetch_sub(self.reported, Ordering::Relaxed);
    }
}

fn with_state<R>(generation: u64, f: impl FnOnce(&mut State) -> R) -> Result<R, String> {
    STATE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|s| s.generation != generation) {
            *slot = None;
            *slot = Some(new_state(generation).map_err(|e| format!("ERR Lua could not start: {e}"))?);
        }
        match slot.as_mut() {
            Some(state) => Ok(f(state)),
            None => Err("ERR Lua could not start".to_string()),
        }
    })
}

fn new_state(generation: u64) -> mlua::Result<State> {
    let lua = Lua::new_with(StdLib::TABLE | StdLib::STRING | StdLib::MATH, LuaOptions::default())?;
    lua.set_memory_limit(MEMORY_LIMIT)?;
    // A cycle when the heap has grown fourfold, not twofold (Lua's default): the
    // heap is small (tens of KB) and every script leaves garbage (KEYS, ARGV, replies);
    // collection was a fifth of an EVAL's instructions (callgrind) before the changes
    // of docs/benchmarks.md's scripting section.
    lua.gc_set_pause(GC_PAUSE);
    lua.set_app_data(RunState::default());
    super::cjson::install(&lua)?;
    super::bit::install(&lua)?;
    super::cmsgpack::install(&lua)?;
    super::structlib::install(&lua)?;
    let hidden = lua.create_table()?;
    hidden.raw_set("sha1hex", bare_error_function(&lua, sha1hex)?)?;
    hidden.raw_set("log", bare_error_function(&lua, log)?)?;
    hidden.raw_set("setresp", bare_error_function(&lua, setresp)?)?;
    hidden.raw_set("set_repl", bare_error_function(&lua, set_repl)?)?;
    hidden.raw_set("redis_version", crate::version::REDIS_VERSION)?;
    hidden.raw_set("redis_version_num", redis_version_num())?;
    let redis: Table = lua.load(PRELUDE).set_name(PRELUDE_CHUNK).set_mode(ChunkMode::Text).call(hidden.clone())?;
    // SAFETY: `raising_call` is a lua_CFunction that keeps Lua's stack discipline.
    redis.raw_set("call", unsafe { lua.create_c_function(raising_call) }?)?;
    let trapping = lua.create_function(trapping_call)?;
    lua.set_named_registry_value(PCALL_KEY, &trapping)?;
    // SAFETY: `converting_pcall` is a lua_CFunction that keeps Lua's stack discipline.
    redis.raw_set("pcall", unsafe { lua.create_c_function(converting_pcall) }?)?;
    let run: Function = hidden.raw_get("run")?;
    let load_library: Function = hidden.raw_get("load_library")?;
    let call_function: Function = hidden.raw_get("call_function")?;
    let handler = lua.create_function(error_handler)?;
    // SAFETY: sets a C hook on the main thread, outside any call.
    unsafe {
        lua.exec_raw::<()>((), |l| {
            mlua::ffi::lua_sethook(l, Some(stop_if_overdue), mlua::ffi::LUA_MASKCOUNT, CHECK_EVERY);
        })?;
    }
    Ok(State {
        lua,
        generation,
        run,
        handler,
        compiled: HashMap::new(),
        reported: 0,
        load_library,
        call_function,
        functions_generation: None,
        functions: HashMap::new(),
    })
}

/// Source text compiled as the chunk `name` (text only: Lua 5.1's binary chunks are
/// not checked by its loader); Err is Lua's message.
fn compile(lua: &Lua, code: &[u8], name: &str) -> Result<Function, String> {
    lua.load(code).set_name(name).set_mode(ChunkMode::Text).into_function().map_err(|e| match e {
        mlua::Error::SyntaxError { message, .. } => message,
        other => root_message(&other),
    })
}

/// The Lua code of a script or library: without its first line when that is a shebang
/// (`#!lua ...`), its newline kept so that line numbers stay the code's (as Redis
/// compiles them).
pub fn code_after_shebang(code: &[u8]) -> &[u8] {
    if code.starts_with(b"#!") {
        &code[code.iter().position(|&b| b == b'\n').unwrap_or(code.len())..]
    } else {
        code
    }
}

/// The script's function in this state, compiled on first use.
fn compiled(state: &mut State, sha: &Sha, body: &[u8]) -> Result<Function, String> {
    if let Some(f) = state.compiled.get(sha) {
        return Ok(f.clone());
    }
    let f = compile(&state.lua, body, SCRIPT_CHUNK).map_err(|message| format!("ERR Error compiling script (new function): {message}"))?;
    state.compiled.insert(*sha, f.clone());
    Ok(f)
}

/// A run's start: the clock started, RESP2 for its commands, no error raised yet.
fn start_run(lua: &Lua, stop_after: Option<Duration>) {
    update_clock(|c| *c = Clock { started: Some(Instant::now()), stop_after, wrote: false, stopped: false, loading: false });
    if let Some(run) = lua.app_data_ref::<RunState>() {
        run.resp3.set(false);
        run.raised.replace(None);
        run.repl_off.set(0);
        run.raised_bare.replace(None);
    }
}

fn run_compiled(state: &State, func: Function, script: &Script<'_>, call: &mut dyn FnMut(&[&[u8]], CallMode) -> Called) -> Outcome {
    let lua = &state.lua;
    start_run(lua, script.stop_after);
    let outcome = {
        let _runner = RunnerGuard::set(call);
        let (keys, argv) = (script.keys, script.argv);
        // One call into Lua for the whole run (mlua guards each of its operations with
        // a protected call of its own, which made up most of an EVAL's cost): the
        // prelude's `run` builds KEYS and ARGV from the arguments pushed here and calls
        // the script under xpcall.
        // SAFETY: `push_arguments` keeps Lua's stack discipline and holds no value with
        // a destructor across a Lua call that may raise.
        unsafe {
            lua.exec_raw::<MultiValue>((state.run.clone(), func, state.handler.clone()), |l| push_arguments(l, keys, argv))
        }
    };
    finish_run(lua, outcome, script.proto, script.sha.as_slice())
}

/// A run's reply from what the prelude's xpcall returned: the result in the caller's
/// protocol, or the failure named after the script or function `name`.
fn finish_run(lua: &Lua, outcome: mlua::Result<MultiValue>, proto: Proto, name: &[u8]) -> Outcome {
    let stopped = update_clock(|c| c.started = None).stopped;
    let resp3 = lua.app_data_ref::<RunState>().is_some_and(|run| run.resp3.get());
    let mut out = Vec::new();
    if stopped {
        return Outcome { reply: error_reply(STOPPED.as_bytes()), error_counted: false };
    }
    let mut error_counted = false;
    match outcome {
        Ok(values) => {
            let mut values = values.into_iter();
            let ok = matches!(values.next(), Some(Value::Boolean(true)));
            let value = values.next().unwrap_or(Value::Nil);
            if ok {
                convert::write_result(lua, &mut out, &value, proto, resp3);
            } else {
                write_failure(&mut out, &value, name);
            }
            error_counted = out.starts_with(b"-") && marked_counted(&value);
        }
        Err(e) => out = error_reply(format!("ERR Error running script: {}", root_message(&e)).as_bytes()),
    }
    Outcome { reply: out, error_counted }
}

/// Redis 7.0.15 as a number, 0x00MMmmpp (`redis.REDIS_VERSION_NUM`).
fn redis_version_num() -> i64 {
    let mut parts = crate::version::REDIS_VERSION.split('.').map(|p| p.parse::<i64>().unwrap_or(0));
    let (major, minor, patch) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major << 16) | (minor << 8) | patch
}

/// The chunk name of a library's code: errors read "user_function:2: ..." (Redis 7.0).
const FUNCTION_CHUNK: &str = "@user_function";
/// How long a library's code may run when it is loaded.
const LOAD_TIME_LIMIT: Duration = Duration::from_millis(500);

/// One function a library registered.
pub struct Registered {
    pub name: String,
    pub flags: Vec<String>,
    pub description: Option<Vec<u8>>,
}

/// Compiles and runs a library's code (FUNCTION LOAD, or a snapshot file's library)
/// in this thread's state: the functions it registers, or Redis's error text.
pub fn load_library(generation: u64, code: &[u8]) -> Result<Vec<Registered>, String> {
    with_state(generation, |state| load_into(state, code).map(|found| found.into_iter().map(|(r, _)| r).collect()))?
}

/// Loads a library's code into `state`: each registered function with its callback.
fn load_into(state: &State, code: &[u8]) -> Result<Vec<(Registered, Function)>, String> {
    let chunk = compile(&state.lua, code_after_shebang(code), FUNCTION_CHUNK).map_err(|message| format!("ERR Error compiling function: {message}"))?;
    update_clock(|c| *c = Clock { started: Some(Instant::now()), stop_after: Some(LOAD_TIME_LIMIT), wrote: false, stopped: false, loading: true });
    let result = state.load_library.call::<(bool, Value)>(chunk);
    update_clock(|c| c.started = None);
    let registering = |text: &[u8]| format!("ERR Error registering functions: {}", String::from_utf8_lossy(text));
    let (ok, value) = result.map_err(|e| registering(root_message(&e).as_bytes()))?;
    if !ok {
        return Err(match value {
            Value::Table(t) => match t.raw_get::<Value>("err") {
                Ok(Value::String(s)) => registering(&s.as_bytes()),
                _ => registering(b"ERR unknown error"),
            },
            Value::String(s) => registering(&[b"ERR ".as_slice(), &s.as_bytes()].concat()),
            Value::Error(e) => registering(format!("ERR {}", root_message(&e)).as_bytes()),
            other => registering(format!("ERR {}", other.type_name()).as_bytes()),
        });
    }
    let Value::Table(list) = value else { return Err("ERR No functions registered".into()) };
    let mut found = Vec::new();
    for entry in list.sequence_values::<Table>() {
        let entry = entry.map_err(|e| registering(root_message(&e).as_bytes()))?;
        let name: String = entry.raw_get("name").map_err(|e| registering(root_message(&e).as_bytes()))?;
        let callback: Function = entry.raw_get("callback").map_err(|e| registering(root_message(&e).as_bytes()))?;
        let flags: Vec<String> = entry.raw_get::<Table>("flags").map(|t| t.sequence_values::<String>().filter_map(Result::ok).collect()).unwrap_or_default();
        let description = match entry.raw_get::<Value>("description") {
            Ok(Value::String(s)) => Some(s.as_bytes().to_vec()),
            _ => None,
        };
        found.push((Registered { name, flags, description }, callback));
    }
    if found.is_empty() {
        return Err("ERR No functions registered".into());
    }
    Ok(found)
}

/// A function to run (FCALL).
pub struct FunctionCall<'a> {
    pub name: &'a str,
    pub keys: &'a [&'a [u8]],
    pub args: &'a [&'a [u8]],
    pub proto: Proto,
    pub stop_after: Option<Duration>,
}

/// Runs a function and returns its caller's reply. `libraries` are every library's
/// code at `functions_generation` (loaded into this loop's state when its own are
/// older); `call` runs one command for `redis.call` and `redis.pcall`.
pub fn run_function(
    generation: u64,
    functions_generation: u64,
    libraries: &mut dyn Iterator<Item = &[u8]>,
    f: &FunctionCall<'_>,
    call: &mut dyn FnMut(&[&[u8]], CallMode) -> Called,
) -> Outcome {
    with_run_state(generation, |state| {
        if state.functions_generation != Some(functions_generation) {
            state.functions.clear();
            for code in libraries {
                // Each loaded when FUNCTION LOAD (or the file) checked it: a failure here
                // leaves its functions out, and FCALL answers as for an unknown one.
                if let Ok(found) = load_into(state, code) {
                    state.functions.extend(found.into_iter().map(|(r, callback)| (r.name, callback)));
                }
            }
            state.functions_generation = Some(functions_generation);
        }
        match state.functions.get(f.name).cloned() {
            Some(callback) => call_function(state, callback, f, call),
            None => Outcome { reply: error_reply(b"ERR Function not found"), error_counted: false },
        }
    })
}

fn call_function(state: &State, callback: Function, f: &FunctionCall<'_>, call: &mut dyn FnMut(&[&[u8]], CallMode) -> Called) -> Outcome {
    let lua = &state.lua;
    start_run(lua, f.stop_after);
    let outcome = {
        let _runner = RunnerGuard::set(call);
        // SAFETY: as in `run_compiled`.
        unsafe {
            lua.exec_raw::<MultiValue>((state.call_function.clone(), callback, state.handler.clone()), |l| push_arguments(l, f.keys, f.args))
        }
    };
    finish_run(lua, outcome, f.proto, f.name.as_bytes())
}

/// The field by which Redis marks an error table whose error was counted where it
/// happened.
const COUNTED_FIELD: &str = "ignore_error_stats_update";

fn marked_counted(value: &Value) -> bool {
    matches!(value, Value::Table(t) if matches!(t.raw_get::<Value>(COUNTED_FIELD), Ok(Value::Boolean(true))))
}

/// Inside `exec_raw`, with `run`, the script and the handler on the stack: pushes the
/// key count and every key and argument, and calls `run` (its results stay).
unsafe fn push_arguments(l: *mut mlua::ffi::lua_State, keys: &[&[u8]], argv: &[&[u8]]) {
    use mlua::ffi;
    // SAFETY: the caller's contract; strings are pushed by pointer and length.
    unsafe {
        let count = keys.len() + argv.len();
        if ffi::lua_checkstack(l, std::ffi::c_int::try_from(count + 8).unwrap_or(std::ffi::c_int::MAX)) == 0 {
            ffi::lua_pushstring(l, c"too many arguments for a script".as_ptr());
            ffi::lua_error(l);
        }
        ffi::lua_pushinteger(l, keys.len() as ffi::lua_Integer);
        for word in keys.iter().chain(argv) {
            ffi::lua_pushlstring(l, word.as_ptr().cast(), word.len());
        }
        ffi::lua_call(l, 3 + count as std::ffi::c_int, ffi::LUA_MULTRET);
    }
}

/// The run in progress on this thread: what `redis.call` and `redis.pcall` run commands
/// with (a pointer, because those functions are made once per state and outlive any
/// run; [`RunnerGuard`] keeps it set only while the run's borrow of it lasts).
type Runner = dyn FnMut(&[&[u8]], CallMode) -> Called;

thread_local! {
    static RUNNER: std::cell::Cell<Option<*mut Runner>> = const { std::cell::Cell::new(None) };
}

/// Sets [`RUNNER`] for as long as it lives.
struct RunnerGuard;

impl RunnerGuard {
    fn set(call: &mut dyn FnMut(&[&[u8]], CallMode) -> Called) -> RunnerGuard {
        let ptr: *mut (dyn FnMut(&[&[u8]], CallMode) -> Called + '_) = call;
        // SAFETY: only the trait object's lifetime is erased. The guard lives in the
        // frame that holds the borrow of `call`, and clears the pointer when dropped,
        // before the borrow ends; the pointer is used only meanwhile (`trapping_call`).
        let ptr: *mut Runner = unsafe { std::mem::transmute::<*mut (dyn FnMut(&[&[u8]], CallMode) -> Called + '_), *mut Runner>(ptr) };
        RUNNER.with(|r| r.set(Some(ptr)));
        RunnerGuard
    }
}

impl Drop for RunnerGuard {
    fn drop(&mut self) {
        RUNNER.with(|r| r.set(None));
    }
}

/// `redis.pcall(...)`: runs a command with the run's runner; its reply, or `{err=...}`.
fn trapping_call(lua: &Lua, args: MultiValue) -> mlua::Result<Value> {
    // Taken out while in use, so that it is never borrowed twice.
    let Some(ptr) = RUNNER.with(|r| r.take()) else {
        return Err(mlua::Error::runtime("redis.pcall is only available while a script runs"));
    };
    // SAFETY: set by the RunnerGuard of the run in progress, whose borrow outlives this
    // call (see `RunnerGuard::set`); no other reference to it exists meanwhile.
    let call = unsafe { &mut *ptr };
    let result = raw_call(lua, args, call);
    RUNNER.with(|r| r.set(Some(ptr)));
    match result? {
        Ok(reply) => Ok(reply),
        Err(text) => {
            if let Some(run) = lua.app_data_ref::<RunState>() {
                run.raised.replace(Some(text.clone()));
            }
            let table = convert::error_table(lua, &text)?;
            table.raw_set(COUNTED_FIELD, true)?;
            Ok(Value::Table(table))
        }
    }
}

/// Where `redis.call` finds the run's `redis.pcall` (Lua's registry), as mlua names it
/// and as Lua's C API does.
const PCALL_KEY: &str = "basalt.pcall";
const PCALL_KEY_C: &std::ffi::CStr = c"basalt.pcall";

/// `redis.call(...)`: `redis.pcall`, raising its `{err=...}` as the error's
/// plain text, as Redis does (`pcall(redis.call, ...)` gives the text). A C function
/// rather than Lua or mlua's: Lua keeps a C function's caller frame in a tail call
/// (`return redis.call(...)`), so an error's line is the script's; and an error an mlua
/// function raises is mlua's own value, not a string.
unsafe extern "C-unwind" fn raising_call(state: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: Lua calls this with its own state. Only Lua's API is used; no Rust value
    // with a destructor lives here, so Lua's error jump (from the call, or lua_error)
    // skips nothing.
    unsafe {
        let args = ffi::lua_gettop(state);
        numbers_to_text(state, args);
        ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, PCALL_KEY_C.as_ptr());
        if ffi::lua_type(state, -1) != ffi::LUA_TFUNCTION {
            ffi::lua_pushstring(state, c"ERR redis.call is only available while a script runs".as_ptr());
            ffi::lua_error(state);
        }
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, args, 1);
        if ffi::lua_type(state, -1) == ffi::LUA_TTABLE {
            ffi::lua_getfield(state, -1, c"err".as_ptr());
            if ffi::lua_type(state, -1) == ffi::LUA_TSTRING {
                ffi::lua_error(state);
            }
            ffi::lua_pop(state, 1);
        }
        1
    }
}

/// `redis.pcall(...)`: the registry's `redis.pcall` (mlua's [`trapping_call`]) with the
/// number arguments made text first, as `redis.call` does.
unsafe extern "C-unwind" fn converting_pcall(state: *mut mlua::ffi::lua_State) -> std::ffi::c_int {
    use mlua::ffi;
    // SAFETY: as `raising_call`.
    unsafe {
        let args = ffi::lua_gettop(state);
        numbers_to_text(state, args);
        ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, PCALL_KEY_C.as_ptr());
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, args, 1);
        1
    }
}

/// Replaces each number among the first `args` stack slots with its text as Redis 7.0
/// writes a number argument (`%.17g`), read exactly here: mlua reads a number within
/// 2^-52 of an integer as that integer, so a tiny one (1e-40) came through as 0.
///
/// # Safety
/// Called by a C function of Lua's with at least `args` values on its stack.
unsafe fn numbers_to_text(state: *mut mlua::ffi::lua_State, args: std::ffi::c_int) {
    use mlua::ffi;
    for i in 1..=args {
        // SAFETY: the caller's contract; the text is pushed by pointer and length.
        unsafe {
            if ffi::lua_type(state, i) == ffi::LUA_TNUMBER {
                let mut buf = [0u8; 32];
                let text = resp::double::format_g17(ffi::lua_tonumber(state, i), &mut buf);
                ffi::lua_pushlstring(state, text.as_ptr().cast(), text.len());
                ffi::lua_replace(state, i);
            }
        }
    }
}

/// `redis.call(...)` and `redis.pcall(...)`: runs a command; its reply as a Lua value,
/// or the error text.
fn raw_call(lua: &Lua, args: MultiValue, call: &mut dyn FnMut(&[&[u8]], CallMode) -> Called) -> mlua::Result<Result<Value, Vec<u8>>> {
    const NOT_WORDS: &[u8] = b"ERR Lua redis lib command arguments must be strings or integers";
    if args.is_empty() {
        return Ok(Err(b"ERR Please specify at least one argument for this redis lib call".to_vec()));
    }
    let mut words: Vec<Vec<u8>> = Vec::with_capacity(args.len());
    for a in args {
        match a {
            Value::String(s) => words.push(s.as_bytes().to_vec()),
            // Numbers as Redis 7.0 writes them: %.17g (0.1 is 0.10000000000000001, 2^60
            // is 1.152921504606847e+18); mlua gives a whole one as an Integer.
            Value::Integer(_) | Value::Number(_) => {
                let n = match a {
                    Value::Integer(i) => i as f64,
                    Value::Number(x) => x,
                    _ => 0.0,
                };
                let mut buf = [0u8; 32];
                words.push(resp::double::format_g17(n, &mut buf).to_vec());
            }
            _ => return Ok(Err(NOT_WORDS.to_vec())),
        }
    }
    let refs: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
    let (resp3, repl) = lua.app_data_ref::<RunState>().map_or((false, REPL_ALL), |run| (run.resp3.get(), REPL_ALL & !run.repl_off.get()));
    let mode = CallMode { proto: if resp3 { Proto::Resp3 } else { Proto::Resp2 }, to_log: repl & REPL_AOF != 0, to_replicas: repl & REPL_REPLICA != 0 };
    let called = call(&refs, mode);
    if called.wrote {
        update_clock(|c| c.wrote = true);
    }
    Ok(match resp::decode_frame(&called.reply, u64::MAX) {
        Ok(Some((resp::Frame::Error(e), _))) => Err(convert::error_text(&e)),
        Ok(Some((frame, _))) => Ok(convert::reply_to_lua(lua, &frame, resp3)?),
        _ => Err(b"ERR the command's reply could not be read".to_vec()),
    })
}

/// The error handler of a run: any error as Redis 7.0's table `{err=..., source=...,
/// line=...}`, the line being the script's (not a library's) where it was raised.
fn error_handler(lua: &Lua, err: Value) -> mlua::Result<Table> {
    let mut counted = false;
    let table = match err {
        Value::Table(t) if matches!(t.raw_get::<Value>("err"), Ok(Value::String(_))) => t,
        other => {
            let text: Vec<u8> = match other {
                Value::String(s) => {
                    let text = s.as_bytes().to_vec();
                    let (raised, bare) = lua
                        .app_data_ref::<RunState>()
                        .map(|run| (run.raised.borrow().clone(), run.raised_bare.borrow().clone()))
                        .unwrap_or_default();
                    if raised.as_deref() == Some(&text[..]) {
                        counted = true;
                        text
                    } else if bare.as_deref() == Some(&text[..]) {
                        text
                    } else {
                        [b"ERR ".as_slice(), &text].concat()
                    }
                }
                Value::Nil => b"ERR nil".to_vec(),
                Value::Number(_) | Value::Integer(_) => {
                    let s = lua.coerce_string(other)?.map(|s| s.as_bytes().to_vec()).unwrap_or_default();
                    [b"ERR ".as_slice(), &s].concat()
                }
                Value::Error(e) => {
                    let text = root_message(&e).into_bytes();
                    let raised = lua.app_data_ref::<RunState>().and_then(|run| run.raised.borrow().clone());
                    if raised.as_deref() == Some(&text[..]) {
                        text
                    } else {
                        [b"ERR ".as_slice(), &text].concat()
                    }
                }
                // (Redis 7.0.15 crashes on an error table without a text.)
                Value::Table(_) => b"ERR the script raised a table without an err field".to_vec(),
                v => format!("ERR the script raised a {}", v.type_name()).into_bytes(),
            };
            let t = lua.create_table()?;
            t.raw_set("err", lua.create_string(&text)?)?;
            t
        }
    };
    if let Some((source, line)) = script_position(lua) {
        t_set_position(&table, lua, &source, line)?;
    }
    if counted {
        table.raw_set(COUNTED_FIELD, true)?;
    }
    Ok(table)
}

fn t_set_position(t: &Table, lua: &Lua, source: &str, line: i32) -> mlua::Result<()> {
    t.raw_set("source", lua.create_string(source)?)?;
    t.raw_set("line", line)
}

/// The innermost frame of the script's own code (skipping C functions and the
/// library's Lua wrappers): its source and current line.
fn script_position(lua: &Lua) -> Option<(String, i32)> {
    for level in 1..64 {
        let frame = lua.inspect_stack(level)?;
        let src = frame.source();
        if src.what == "C" {
            continue;
        }
        let Some(source) = src.source.map(|s| s.into_owned()) else { continue };
        if source == PRELUDE_CHUNK {
            continue;
        }
        return Some((source, frame.curr_line()));
    }
    None
}

/// A failed run's reply: "-<err> script: <name>, on <source>:<line>." (Redis 7.0; the
/// name is a script's SHA-1 or a function's name).
fn write_failure(out: &mut Vec<u8>, value: &Value, name: &[u8]) {
    let t = match value {
        Value::Table(t) => t,
        // Lua calls no handler for a memory error: its message comes as it is.
        Value::String(s) => {
            out.extend_from_slice(&error_reply(format!("ERR Error running script: {}", s.to_string_lossy()).as_bytes()));
            return;
        }
        _ => {
            out.extend_from_slice(&error_reply(b"ERR the script failed"));
            return;
        }
    };
    let err = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        _ => b"ERR the script failed".to_vec(),
    };
    let mut text = convert::line_text(&err);
    if let (Ok(Value::String(source)), Ok(line)) = (t.raw_get::<Value>("source"), t.raw_get::<i64>("line")) {
        text.extend_from_slice(b" script: ");
        text.extend_from_slice(name);
        text.extend_from_slice(b", on ");
        text.extend_from_slice(&source.as_bytes());
        text.extend_from_slice(format!(":{line}.").as_bytes());
    }
    encode::error(out, text.strip_prefix(b"-").unwrap_or(&text));
}

fn error_reply(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    encode::error(&mut out, text);
    out
}

/// An mlua error's own message, without the layers mlua wraps around an error raised
/// in a Rust function.
fn root_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => root_message(cause),
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// The instruction hook, on every Lua thread of the state (coroutines inherit it):
/// stops a script that ran past its time without writing, and goes on stopping it if
/// it catches the error with pcall.
unsafe extern "C-unwind" fn stop_if_overdue(state: *mut mlua::ffi::lua_State, _: *mut mlua::ffi::lua_Debug) {
    let clock = CLOCK.with(Cell::get);
    let overdue = match (clock.started, clock.stop_after) {
        (Some(started), Some(after)) => !clock.wrote && started.elapsed() >= after,
        _ => false,
    };
    if clock.stopped || overdue {
        update_clock(|c| c.stopped = true);
        // SAFETY: raising an error from a count hook is Lua's own way to stop code; no
        // Rust value with a destructor is alive in this frame.
        unsafe {
            mlua::ffi::lua_pushstring(state, if clock.loading { c"FUNCTION LOAD timeout".as_ptr() } else { STOPPED_C.as_ptr() });
            mlua::ffi::lua_error(state);
        }
    }
}

/// An error of a `redis` library function, raised as its text alone (see
/// `RunState::raised_bare`).
fn bare_error(lua: &Lua, text: &str) -> mlua::Error {
    if let Some(run) = lua.app_data_ref::<RunState>() {
        run.raised_bare.replace(Some(text.as_bytes().to_vec()));
    }
    mlua::Error::runtime(text)
}

/// `redis.sha1hex(text)` (a value that is not text hashes as empty, as Redis's).
fn sha1hex(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::String> {
    if args.len() != 1 {
        return Err(bare_error(lua, "ERR wrong number of arguments"));
    }
    let text = args.into_iter().next().and_then(|v| lua.coerce_string(v).ok().flatten());
    lua.create_string(sha1_hex(&text.map(|t| t.as_bytes().to_vec()).unwrap_or_default()))
}

/// `redis.log(level, message ...)`: to the server's log, the words joined by spaces.
fn log(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    let mut args = args.into_iter();
    if args.len() < 2 {
        return Err(bare_error(lua, "ERR redis.log() requires two arguments or more."));
    }
    let level = match args.next() {
        Some(Value::Integer(n)) if (0..=3).contains(&n) => n,
        Some(Value::Number(n)) if (0.0..=3.0).contains(&n) => n as i64 as mlua::Integer,
        Some(Value::Integer(_) | Value::Number(_)) => return Err(bare_error(lua, "ERR Invalid debug level.")),
        _ => return Err(bare_error(lua, "ERR First argument must be a number (log level).")),
    };
    let words: Vec<String> = args
        .map(|v| lua.coerce_string(v).ok().flatten().map(|s| s.to_string_lossy()).unwrap_or_default())
        .collect();
    let text = words.join(" ");
    match level {
        3 => crate::log::warning(&text),
        2 => crate::log::notice(&text),
        _ => crate::log::verbose(&text),
    }
    Ok(())
}

/// `redis.setresp(2 or 3)`: the protocol the script's commands answer in, for the rest
/// of the run.
fn setresp(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() != 1 {
        return Err(bare_error(lua, "ERR redis.setresp() requires one argument."));
    }
    // (A whole number arrives as an Integer.)
    let resp3 = match args.into_iter().next() {
        Some(Value::Integer(2)) => false,
        Some(Value::Integer(3)) => true,
        _ => return Err(bare_error(lua, "ERR RESP version must be 2 or 3.")),
    };
    if let Some(run) = lua.app_data_ref::<RunState>() {
        run.resp3.set(resp3);
    }
    Ok(())
}

/// `redis.set_repl(flags)`: where the run's next commands propagate their writes
/// (`REPL_ALL`, `REPL_AOF`, `REPL_REPLICA`, `REPL_NONE`), as Redis 7.0 still honours it.
fn set_repl(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() != 1 {
        return Err(bare_error(lua, "ERR redis.set_repl() requires two arguments."));
    }
    // (Redis reads the flags with lua_tonumber: what is not a number is 0.)
    let flags = match args.into_iter().next() {
        Some(v) => lua.coerce_number(v).ok().flatten().map_or(0, |n| n as i64),
        None => 0,
    };
    if flags & !i64::from(REPL_ALL) != 0 {
        return Err(bare_error(lua, "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."));
    }
    if let Some(run) = lua.app_data_ref::<RunState>() {
        run.repl_off.set(REPL_ALL & !(flags as u8));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_key_and_the_stop_error_have_one_spelling() {
        assert_eq!(PCALL_KEY_C.to_str().ok(), Some(PCALL_KEY));
        assert_eq!(STOPPED_C.to_str().ok(), Some(STOPPED));
    }
}
