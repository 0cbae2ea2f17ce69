//! What a script finds in its Lua state besides Lua's own base, table, string and math
//! libraries: Redis 7.0's sandbox (no files, no `print`, no environments), the `redis`
//! library, and the protection of globals and libraries. Written in Lua where Lua says
//! it most plainly; `engine.rs` gives it the functions that must be Rust's (`hidden`).

/// Run once per state, with the `hidden` table as its argument (Rust's `sha1hex`, `log`
/// and `setresp`; out of the scripts' reach), on which it leaves `run`; returns the
/// `redis` table itself, before it is hidden behind its read-only proxy.
pub const PRELUDE: &str = r#"
local hidden = ...

-- Redis 7.0's sandbox: nothing that reaches files or the process, nor environments.
loadfile = nil; dofile = nil; print = nil; setfenv = nil; getfenv = nil
module = nil; require = nil; package = nil; newproxy = nil

-- Source text only: Lua 5.1 runs a binary chunk unchecked, and a crafted one
-- corrupts memory (Redis's Lua is patched to read every chunk as text).
local real_loadstring = loadstring
local function binary(text)
  return type(text) == 'string' and string.byte(text, 1) == 27
end
loadstring = function(text, name)
  if binary(text) then return nil, 'binary chunks are not accepted (source text only)' end
  return real_loadstring(text, name)
end
load = function(reader, name)
  if type(reader) ~= 'function' then
    error("bad argument #1 to 'load' (function expected, got " .. type(reader) .. ")", 2)
  end
  local pieces = {}
  while true do
    local piece = reader()
    if piece == nil or piece == '' then break end
    if type(piece) ~= 'string' then return nil, 'reader function must return a string' end
    pieces[#pieces + 1] = piece
  end
  return loadstring(table.concat(pieces), name or '=(load)')
end

local function bad_arguments()
  return {err = 'ERR wrong number or type of arguments'}
end

-- redis.call and redis.pcall are Rust's (`engine.rs`): C functions keep the calling
-- line's frame when a script returns their result.
redis = {}
local redis_itself = redis

-- A run: KEYS and ARGV from the arguments, then the script under xpcall.
local real_xpcall, set_global = xpcall, rawset
function hidden.run(script, handler, key_count, ...)
  local words = {...}
  local keys, argv = {}, {}
  for i = 1, key_count do keys[i] = words[i] end
  for i = key_count + 1, #words do argv[i - key_count] = words[i] end
  set_global(_G, 'KEYS', keys)
  set_global(_G, 'ARGV', argv)
  return real_xpcall(script, handler)
end
function redis.error_reply(text)
  if type(text) ~= 'string' then return bad_arguments() end
  if string.sub(text, 1, 1) == '-' then text = string.sub(text, 2) end
  if not string.find(text, ' ', 1, true) then text = 'ERR ' .. text end
  return {err = text}
end
function redis.status_reply(text)
  if type(text) ~= 'string' then return bad_arguments() end
  return {ok = text}
end
redis.sha1hex = hidden.sha1hex
redis.log = hidden.log
redis.setresp = hidden.setresp
-- Effects are always what replicas and the log get (Redis 7.0 has no other mode).
function redis.set_repl(flags) end
function redis.replicate_commands() return true end
function redis.breakpoint() return false end
function redis.debug() end
redis.REPL_NONE = 0; redis.REPL_AOF = 1; redis.REPL_SLAVE = 2; redis.REPL_REPLICA = 2; redis.REPL_ALL = 3
redis.LOG_DEBUG = 0; redis.LOG_VERBOSE = 1; redis.LOG_NOTICE = 2; redis.LOG_WARNING = 3

-- Libraries and globals are read-only, as Redis 7.0 makes them: a script cannot
-- change what the next one finds. A library is replaced by a proxy that reads
-- through to it and refuses writes.
local function readonly() error('Attempt to modify a readonly table', 2) end
local protected = {}
local real_rawset = rawset
local function proxy_of(t)
  local proxy = setmetatable({}, {__index = t, __newindex = readonly, __metatable = false})
  protected[proxy] = true
  return proxy
end
for _, name in ipairs({'redis', 'string', 'table', 'math', 'coroutine', 'cjson', 'bit', 'struct', 'cmsgpack'}) do
  local lib = rawget(_G, name)
  if lib then real_rawset(_G, name, proxy_of(lib)) end
end
-- Strings' methods come from the string library's proxy, and their metatable is
-- shown read-only (getmetatable('').__index is the proxy).
local string_mt = getmetatable('')
string_mt.__index = rawget(_G, 'string')
string_mt.__metatable = proxy_of(string_mt)
protected[_G] = true
rawset = function(t, k, v)
  if protected[t] then error('Attempt to modify a readonly table', 0) end
  return real_rawset(t, k, v)
end
local globals_mt = {
  __index = function(_, name)
    error("Script attempted to access nonexistent global variable '" .. tostring(name) .. "'", 2)
  end,
  __newindex = readonly,
}
globals_mt.__metatable = proxy_of(globals_mt)
setmetatable(_G, globals_mt)
return redis_itself
"#;
