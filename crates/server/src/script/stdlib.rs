//! What a script finds in its Lua state besides Lua's own base, table, string and math
//! libraries: Redis 7.0's sandbox (no files, no `print`, no environments), the `redis`
//! library, and the protection of globals and libraries. Written in Lua where Lua says
//! it most plainly; `engine.rs` gives it the functions that must be Rust's (`hidden`).

/// Run once per state, with the `hidden` table as its argument (Rust's `sha1hex`, `log`
/// and `setresp`; out of the scripts' reach), on which it leaves `run`; returns the
/// `redis` table itself, before it is hidden behind its read-only proxy.
pub const PRELUDE: &str = r#"
local hidden = ...
local real_setfenv, real_select, real_type, real_tostring, real_pairs = setfenv, select, type, tostring, pairs

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
-- Effects are always what replicas and the log get (Redis 7.0 has no other mode);
-- set_repl says which of them get the next commands' effects.
redis.set_repl = hidden.set_repl
function redis.replicate_commands() return true end
function redis.breakpoint() return false end
function redis.debug() end
redis.REPL_NONE = 0; redis.REPL_AOF = 1; redis.REPL_SLAVE = 2; redis.REPL_REPLICA = 2; redis.REPL_ALL = 3
redis.LOG_DEBUG = 0; redis.LOG_VERBOSE = 1; redis.LOG_NOTICE = 2; redis.LOG_WARNING = 3

redis.REDIS_VERSION = hidden.redis_version
redis.REDIS_VERSION_NUM = hidden.redis_version_num

local function readonly_write() error('Attempt to modify a readonly table', 2) end
local function nonexistent(_, name)
  error("Script attempted to access nonexistent global variable '" .. real_tostring(name) .. "'", 2)
end

-- Functions (FUNCTION LOAD, FCALL). A library's code runs once with Redis 7.0's
-- loading API alone as its globals (`redis.register_function`, `redis.log`, the log
-- levels, the version); the functions it registers then run with the scripts' globals,
-- less KEYS and ARGV (a function gets its keys and arguments as parameters). Both
-- reach their globals through one environment, whose lookup is switched.
local function_env_mt = {__newindex = readonly_write}
local function_env = setmetatable({}, function_env_mt)
local function run_time_lookup(_, name)
  local v = (name ~= 'KEYS' and name ~= 'ARGV') and rawget(_G, name) or nil
  if v == nil then
    error("Script attempted to access nonexistent global variable '" .. real_tostring(name) .. "'", 2)
  end
  return v
end
function_env_mt.__index = run_time_lookup

local registrations = nil
local function registration_error(text) error({err = 'ERR ' .. text}) end
local flag_names = {['no-writes'] = true, ['allow-oom'] = true, ['allow-stale'] = true,
                    ['no-cluster'] = true, ['allow-cross-slot-keys'] = true}
local function register(name, callback, flags, description)
  if registrations == nil then
    registration_error('redis.register_function can only be called on FUNCTION LOAD command')
  end
  name = real_tostring(name)
  if not string.find(name, '^[%w_]+$') then
    registration_error('Library names can only contain letters, numbers, or underscores(_) and must be at least one character long')
  end
  if registrations.by_name[name] then registration_error('Function already exists in the library') end
  local entry = {name = name, callback = callback, flags = flags or {}, description = description}
  registrations.by_name[name] = entry
  registrations[#registrations + 1] = entry
end
local function string_like(v) return real_type(v) == 'string' or real_type(v) == 'number' end
local load_redis = setmetatable({}, {__index = nonexistent, __newindex = readonly_write})
rawset(load_redis, 'register_function', function(...)
  local n = real_select('#', ...)
  if n < 1 or n > 2 then registration_error('wrong number of arguments to redis.register_function') end
  if n == 2 then
    local name, callback = ...
    if not string_like(name) then registration_error('first argument to redis.register_function must be a string') end
    if real_type(callback) ~= 'function' then registration_error('second argument to redis.register_function must be a function') end
    return register(name, callback)
  end
  local args = ...
  if real_type(args) ~= 'table' then
    registration_error('calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).')
  end
  local name, callback, flags, description
  for k, v in real_pairs(args) do
    if not string_like(k) then registration_error('named argument key given to redis.register_function is not a string') end
    local key = string.lower(real_tostring(k))
    if key == 'function_name' then
      if not string_like(v) then registration_error('function_name argument given to redis.register_function must be a string') end
      name = v
    elseif key == 'description' then
      if not string_like(v) then registration_error('description argument given to redis.register_function must be a string') end
      description = real_tostring(v)
    elseif key == 'callback' then
      if real_type(v) ~= 'function' then registration_error('callback argument given to redis.register_function must be a function') end
      callback = v
    elseif key == 'flags' then
      if real_type(v) ~= 'table' then registration_error('flags argument to redis.register_function must be a table representing function flags') end
      flags = {}
      for _, f in real_pairs(v) do
        if real_type(f) ~= 'string' or not flag_names[f] then registration_error('unknown flag given') end
        flags[#flags + 1] = f
      end
    else
      registration_error('unknown argument given to redis.register_function')
    end
  end
  if name == nil then registration_error('redis.register_function must get a function name argument') end
  if callback == nil then registration_error('redis.register_function must get a callback argument') end
  return register(name, callback, flags, description)
end)
rawset(load_redis, 'log', hidden.log)
rawset(load_redis, 'LOG_DEBUG', 0); rawset(load_redis, 'LOG_VERBOSE', 1)
rawset(load_redis, 'LOG_NOTICE', 2); rawset(load_redis, 'LOG_WARNING', 3)
rawset(load_redis, 'REDIS_VERSION', hidden.redis_version)
rawset(load_redis, 'REDIS_VERSION_NUM', hidden.redis_version_num)
local load_api = setmetatable({redis = load_redis}, {__index = nonexistent, __newindex = readonly_write})

-- Loads a library's compiled code: its registrations (an array of {name, callback,
-- flags, description}), or false and the error (a string or an {err=} table).
function hidden.load_library(chunk)
  registrations = {by_name = {}}
  real_setfenv(chunk, function_env)
  function_env_mt.__index = load_api
  local ok, err = pcall(chunk)
  function_env_mt.__index = run_time_lookup
  local found = registrations
  registrations = nil
  if not ok then return false, err end
  found.by_name = nil
  return true, found
end

-- A function's run: its keys and arguments as two tables, under xpcall.
function hidden.call_function(callback, handler, key_count, ...)
  local words = {...}
  local keys, args = {}, {}
  for i = 1, key_count do keys[i] = words[i] end
  for i = key_count + 1, #words do args[i - key_count] = words[i] end
  return real_xpcall(function() return callback(keys, args) end, handler)
end

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
