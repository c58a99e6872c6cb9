-- The sandbox every script and function runs in (edgebench's own, after Redis 7.0's rules).
-- Called once per VM with E, a private table only Rust and this chunk can reach, and the
-- native helpers Rust made. Its source is named "=edgebench" so the error handler can skip
-- its frames when it looks for the user's line.
local E, native = ...
local dgetinfo = debug.getinfo
local type, tostring, error, rawget, rawset, select, unpack, setmetatable, setfenv =
  type, tostring, error, rawget, rawset, select, unpack, setmetatable, setfenv
local xpcall, rawpcall = xpcall, pcall

-- Tables a script may read but never write: an empty proxy whose reads go to the real table.
local protected = setmetatable({}, { __mode = 'k' })
-- A strict one raises on reading a name it lacks; `lookup`, if given, finds names instead
-- of `t`.
local function readonly(t, strict, lookup)
  local index = t
  if strict then
    index = function(_, k)
      local v
      if lookup then v = lookup(k) else v = t[k] end
      if v == nil then
        error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
      end
      return v
    end
  end
  local proxy = setmetatable({}, {
    __index = index,
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    __metatable = false,
  })
  protected[proxy] = true
  return proxy, index
end

-- The redis table.
local R = {
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
  REDIS_VERSION = native.version, REDIS_VERSION_NUM = native.version_num,
}
E.resp = 2

local function pack(...) return { n = select('#', ...), ... } end

-- An error in the shape redis.pcall returns: "-CODE msg" keeps its code, anything else
-- gets ERR; trailing CR/LF go.
local function error_table(text)
  local code, msg
  if text:sub(1, 1) == '-' then
    local space = text:find(' ', 1, true)
    if space then
      code, msg = text:sub(2, space - 1), text:sub(space + 1)
    else
      code, msg = 'ERR', text:sub(2)
    end
  else
    code, msg = 'ERR', text
  end
  msg = msg:gsub('^[\r\n]+', ''):gsub('[\r\n]+$', '')
  return { err = code .. ' ' .. msg }
end
E.error_table = error_table

-- A C call takes fewer arguments than a Lua call (LUAI_MAXCSTACK, 8000): many arguments
-- (`redis.call('lpush', 'l', unpack(a))` with 8,000 of them, as Redis allows) go to the
-- engine in a table, after this marker.
local packed = {}
E.packed = packed

local function dispatch(...)
  local d = E.dispatch
  if not d then
    return error_table('redis.call/pcall can only be called inside a script invocation'), true
  end
  local n = select('#', ...)
  if n > 1000 then
    return d(E.resp, packed, { n = n, ... })
  end
  return d(E.resp, ...)
end

-- Functions that raise are C closures (`native.wrap`) around an implementation answering
-- (true, results...) or (false, error value): a C function keeps its caller's frame even in
-- `return redis.call(...)` (Lua would drop it for a tail call), so the error handler still
-- finds the user's line, as with Redis's C functions.
local wrap = native.wrap

R.call = wrap(function(...)
  local r, failed = dispatch(...)
  if failed then return false, r end
  return true, r
end)

R.acl_check_cmd = wrap(function(...)
  local check = E.acl_check
  if not check then
    return false, error_table('redis.acl_check_cmd can only be called inside a script invocation')
  end
  return check(...)
end)

function R.pcall(...)
  return (dispatch(...))
end

function R.error_reply(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return error_table('wrong number or type of arguments')
  end
  if s:sub(1, 1) ~= '-' then s = '-' .. s end
  return error_table(s)
end

function R.status_reply(...)
  local s = ...
  if select('#', ...) ~= 1 or type(s) ~= 'string' then
    return error_table('wrong number or type of arguments')
  end
  return { ok = s }
end

R.sha1hex = wrap(function(...)
  if select('#', ...) ~= 1 then return false, error_table('wrong number of arguments') end
  return true, native.sha1hex((...))
end)

R.log = wrap(function(level, ...)
  if select('#', ...) < 1 then return false, error_table('redis.log() requires two arguments or more.') end
  if type(level) ~= 'number' then return false, error_table('First argument must be a number (log level).') end
  if level < 0 or level > 3 then return false, error_table('Invalid debug level.') end
  return true
end)

R.setresp = wrap(function(...)
  if select('#', ...) ~= 1 then return false, error_table('redis.setresp() requires one argument.') end
  local v = ...
  if v ~= 2 and v ~= 3 then return false, error_table('RESP version must be 2 or 3.') end
  E.resp = v
  return true
end)

R.set_repl = wrap(function(...)
  if select('#', ...) ~= 1 then return false, error_table('redis.set_repl() requires two arguments.') end
  local v = ...
  if type(v) ~= 'number' or v < 0 or v > 3 then
    return false, error_table('Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.')
  end
  return true
end)

function R.replicate_commands() return true end

function R.breakpoint() return false end
function R.debug() end

-- Only the load-time redis table has it (a function calling it finds nil); a copy kept
-- from load time and called later gets Redis's error.
local register_function = wrap(function(...)
  local r = E.register
  if not r then
    return false, error_table('redis.register_function can only be called on FUNCTION LOAD command')
  end
  local failed = r(...)
  if failed then return false, error_table(failed) end
  return true
end)

-- Redis 7's pcall: an error table with a string `err` field comes back as that string.
local function compat_pcall(f, ...)
  local r = pack(rawpcall(f, ...))
  if not r[1] and type(r[2]) == 'table' and type(rawget(r[2], 'err')) == 'string' then
    r[2] = r[2].err
  end
  return unpack(r, 1, r.n)
end

local compat_rawset = wrap(function(t, k, v)
  if protected[t] then return false, 'Attempt to modify a readonly table' end
  return true, rawset(t, k, v)
end)

-- loadstring reading `s` as Lua source even when it starts as bytecode (see G.loadstring).
local function source_only(s, name)
  if type(s) == 'string' and s:byte(1) == 27 then
    return loadstring(' ' .. s, name or s)
  end
  return loadstring(s, name)
end

-- The globals a script sees.
local G = {}
local env
for _, name in ipairs({ 'assert', 'collectgarbage', 'error', 'gcinfo', 'getmetatable', 'ipairs',
  'load', 'loadstring', 'next', 'pairs', 'rawequal', 'rawget', 'select', 'setmetatable',
  'tonumber', 'tostring', 'type', 'unpack', 'xpcall', '_VERSION' }) do
  G[name] = _G[name]
end
G.pcall = compat_pcall
G.rawset = compat_rawset
for _, lib in ipairs({ 'string', 'table', 'math', 'coroutine' }) do
  G[lib] = readonly(_G[lib])
end
-- The redis table of EVAL scripts and of functions: functions (Redis runs them in a VM of
-- their own) lack EVAL's debugger stubs.
local eval_only = { breakpoint = true, debug = true, replicate_commands = true }
do
  local redis = setmetatable({}, {
    __index = function(_, k)
      if E.is_function and eval_only[k] then return nil end
      return R[k]
    end,
    __newindex = function() error('Attempt to modify a readonly table', 2) end,
    __metatable = false,
  })
  protected[redis] = true
  G.redis = redis
end
-- While FUNCTION LOAD runs a library's code, its globals are only this table (Redis 7.0's
-- `luaEngineCreate` swaps the globals' __index to its LIBRARY_API table): a `redis` with
-- register_function, log, the log levels and the version, and nothing else at all, where
-- any other name is an error.
local L = {
  redis = readonly({
    register_function = register_function, log = R.log,
    LOG_DEBUG = R.LOG_DEBUG, LOG_VERBOSE = R.LOG_VERBOSE, LOG_NOTICE = R.LOG_NOTICE,
    LOG_WARNING = R.LOG_WARNING, REDIS_VERSION = R.REDIS_VERSION,
    REDIS_VERSION_NUM = R.REDIS_VERSION_NUM,
  }, true),
}
-- Native library functions answer (true, results...) or (false, message), as `wrap` wants.
for _, lib in ipairs({ 'bit', 'cjson', 'cmsgpack' }) do
  local t = {}
  for k, v in pairs(native.libs[lib]) do
    if type(v) == 'function' then t[k] = native.wrap_where(v) else t[k] = v end
  end
  G[lib] = readonly(t)
end
-- Chunks compiled at run time get the sandbox too, and are always read as source: Redis's
-- Lua has no loader for precompiled bytecode (string.dump's output), so such a chunk is a
-- syntax error at its first byte (ESC, 27), and loadstring / load answer nil and the
-- message. A space in front of that byte keeps stock Lua from taking the binary path and
-- leaves the parser the same error on line 1, under the same chunk name.
G.loadstring = function(s, name)
  local f, e = source_only(s, name)
  if f then setfenv(f, env) end
  return f, e
end
G.load = function(fn, name)
  if type(fn) == 'function' then
    local first, reader = true, fn
    fn = function()
      local piece = reader()
      if first and type(piece) == 'string' and piece ~= '' then
        first = false
        if piece:byte(1) == 27 then return ' ' .. piece end
      end
      return piece
    end
  end
  local f, e = load(fn, name)
  if f then setfenv(f, env) end
  return f, e
end
-- Globals resolve in L while a library loads, in G otherwise.
local env_index
env, env_index = readonly(G, true, function(k)
  if E.loading then return L[k] end
  return G[k]
end)
G._G = env
-- What getmetatable shows for a read-only table: the globals' metatable (read-only too, with
-- the __index that guards reads), nothing for the others (see guard.rs).
local views = { [env] = readonly({ __index = env_index }) }
G.setmetatable, G.getmetatable = native.metatable_guards(protected, views)
E.globals = G
E.env = env

-- Where an error happened: the first frame above the handler that is the user's Lua code.
local function user_frame()
  local level = 3
  while true do
    local info = dgetinfo(level, 'Sl')
    if not info then return nil end
    if info.what ~= 'C' and info.source ~= '=edgebench' then return info end
    level = level + 1
  end
end

local function handler(err)
  local info = user_frame()
  if type(err) ~= 'table' then
    err = { err = 'ERR ' .. tostring(err) }
  end
  if info then
    rawset(err, 'source', info.source)
    rawset(err, 'line', info.currentline)
  end
  return err
end

-- Compiles a script in the sandbox: the chunk, or nil and Lua's message.
function E.compile(body, chunkname)
  local f, msg = source_only(body, chunkname)
  if not f then return nil, msg end
  setfenv(f, env)
  return f
end

-- Runs an EVAL script with KEYS and ARGV, or a function with (keys, args).
function E.run(f, keys, args, is_function)
  E.resp = 2
  E.is_function = is_function
  if is_function then
    return xpcall(function() return f(keys, args) end, handler)
  end
  G.KEYS, G.ARGV = keys, args
  local r = pack(xpcall(f, handler))
  G.KEYS, G.ARGV = nil, nil
  return unpack(r, 1, r.n)
end
