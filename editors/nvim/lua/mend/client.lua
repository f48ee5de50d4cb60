-- The connection to `mend editor`: JSON-RPC with LSP framing, which
-- Neovim's own `vim.lsp.rpc` speaks. It also keeps the server's state for
-- the statusline and :checkhealth: running, dead (it exited) or hung (a
-- request went unanswered past the timeout).

local M = {
  rpc = nil,
  root = nil,
  initialized = false,
  --- The `serverInfo` of the answer to `initialize`.
  server_info = nil,
  --- What went wrong last (a request's error, a timeout, the exit).
  last_error = nil,
  --- Milliseconds a request may wait for its answer.
  timeout = 5000,
  --- The server said the root folder is gone from its path (`root/lost`)
  --- and not back yet (`root/restored`): no file change reaches a buffer.
  root_lost = false,
}

--- The running connection; nil once it ends. Each start makes a new one,
--- so the exit of a server stopped on purpose is not taken for a death.
local conn = nil
--- Whether the last server exited (or never started) without stop().
local dead = false
--- Requests sent and not yet answered: record -> true.
local pending = {}
--- How many of them waited longer than the timeout.
local overdue = 0

local handlers = {}

--- Calls `fn(params)` for each notification `method` from the server.
function M.on(method, fn)
  handlers[method] = fn
end

local function warn(msg, level)
  vim.notify('mend: ' .. msg, level or vim.log.levels.WARN)
end

--- Functions called after the server's state changes (dead, hung, root
--- lost or back), before the statuslines are redrawn.
M.status_listeners = {}

local function redraw()
  for _, f in ipairs(M.status_listeners) do
    pcall(f)
  end
  pcall(vim.cmd.redrawstatus, { bang = true })
end

--- A server error as a person reads it: its message, and its kind
--- (`error.data.kind`, such as `changed` or `busy`) when it has one.
function M.describe(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  local msg = err.message or vim.inspect(err)
  local kind = type(err.data) == 'table' and err.data.kind or nil
  if type(kind) == 'string' then
    return msg .. ' [' .. kind .. ']'
  end
  return msg
end

M.on('root/lost', function(params)
  M.root_lost = true
  warn('the root ' .. tostring(params.root) .. ' is gone (deleted or moved away); '
    .. 'buffers keep their text, and files are watched again once it is back')
  redraw()
end)

M.on('root/restored', function(params)
  M.root_lost = false
  vim.notify('mend: the root ' .. tostring(params.root) .. ' is back and watched again',
    vim.log.levels.INFO)
  redraw()
end)

--- The root when setup() names none: the git worktree holding the current
--- folder (its `.git` is a folder, or a file in a linked worktree), or the
--- folder itself outside git, as `mend` chooses it.
function M.default_root()
  local cwd = vim.fn.getcwd()
  return vim.fs.root(cwd, '.git') or cwd
end

--- The root as an absolute path without a trailing slash.
function M.normalize_root(root)
  local abs = vim.fn.fnamemodify(root, ':p')
  abs = vim.uv.fs_realpath(abs) or abs
  return (abs:gsub('/+$', ''))
end

function M.running()
  return M.rpc ~= nil and not M.rpc.is_closing()
end

--- The server's state: `state` is `off` (never started or stopped),
--- `running`, `hung` (`overdue` requests unanswered past the timeout) or
--- `dead` (it exited, or could not start); `root_lost` while the server
--- says the root folder is gone.
function M.status()
  local n = 0
  for _ in pairs(pending) do
    n = n + 1
  end
  local state = 'off'
  if dead then
    state = 'dead'
  elseif M.running() then
    state = overdue > 0 and 'hung' or 'running'
  end
  return {
    state = state,
    pending = n,
    overdue = overdue,
    last_error = M.last_error,
    root_lost = state == 'running' and M.root_lost,
  }
end

--- Forgets every unanswered request (the server that owed them is gone).
local function drop_pending()
  for req in pairs(pending) do
    if not req.timer:is_closing() then
      req.timer:close()
    end
  end
  pending, overdue = {}, 0
end

local function on_exit(c, code, signal)
  if conn ~= c then
    return
  end
  conn, M.rpc, M.initialized, dead = nil, nil, false, true
  drop_pending()
  local how = signal ~= 0 and ('signal ' .. signal) or ('status ' .. code)
  M.last_error = 'the server exited (' .. how .. ')'
  warn('mend editor exited (' .. how .. '); run require("mend").setup() to start it again',
    vim.log.levels.ERROR)
  redraw()
end

--- Records that the server could not start, and says why.
local function failed(msg)
  dead, M.last_error = true, msg
  warn(msg, vim.log.levels.ERROR)
  redraw()
  return false
end

--- Starts the server for `config` (cmd, root, session, timeout). Returns
--- false, with the reason in `last_error`, when it could not start.
function M.start(config)
  if M.running() then
    return true
  end
  M.timeout = config.timeout or M.timeout
  M.root = M.normalize_root(config.root or M.default_root())
  M.server_info, M.last_error, dead, M.root_lost = nil, nil, false, false
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    return failed(config.cmd[1] .. ' is not executable; install mend or pass setup({ cmd = { ... } })')
  end
  local c = {}
  local ok, rpc = pcall(vim.lsp.rpc.start, config.cmd, {
    notification = function(method, params)
      vim.schedule(function()
        local h = handlers[method]
        if h and conn == c then
          h(params)
        end
      end)
    end,
    server_request = function()
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
    end,
    on_exit = function(code, signal)
      vim.schedule(function() on_exit(c, code, signal or 0) end)
    end,
    on_error = function(code, err)
      vim.schedule(function()
        if conn == c then
          M.last_error = (vim.lsp.rpc.client_errors[code] or 'error') .. ': ' .. vim.inspect(err)
          warn(M.last_error)
        end
      end)
    end,
  }, { cwd = M.root })
  if not ok then
    return failed('cannot start ' .. config.cmd[1] .. ': ' .. tostring(rpc))
  end
  conn, M.rpc = c, rpc
  M.request('initialize', { root = M.root, session = config.session }, function(err, result)
    if err then
      warn('initialize: ' .. M.describe(err), vim.log.levels.ERROR)
    else
      M.initialized = true
      M.server_info = type(result) == 'table' and result.serverInfo or nil
    end
  end)
  return true
end

--- Ends the server on purpose: not reported as dead.
function M.stop()
  local rpc = M.rpc
  conn, M.rpc, M.initialized, dead = nil, nil, false, false
  drop_pending()
  if rpc and not rpc.is_closing() then
    rpc.terminate()
  end
end

--- The answer to `req` came: it no longer counts against the server.
local function answered(req)
  if not pending[req] then
    return
  end
  pending[req] = nil
  req.timer:close()
  if req.late then
    overdue = overdue - 1
    if overdue == 0 then
      redraw()
    end
  end
end

--- `req` waited past the timeout: the server is hung until it answers.
--- Only the first unanswered request of a stretch is reported.
local function late(req)
  if not pending[req] or req.late then
    return
  end
  req.late = true
  overdue = overdue + 1
  M.last_error = string.format('no answer to %s within %d ms', req.method, M.timeout)
  if overdue == 1 then
    warn(M.last_error .. '; the server looks hung (see :checkhealth mend)', vim.log.levels.ERROR)
  end
  redraw()
end

--- Sends a request; `callback(err, result)` runs on the main loop. Errors
--- without a callback are shown to the user. A request unanswered after
--- `timeout` ms marks the server hung until its answer comes. An answer
--- from a server stopped since is dropped.
function M.request(method, params, callback)
  if not M.running() then
    return false
  end
  local req, c = { method = method, timer = vim.uv.new_timer() }, conn
  local sent = M.rpc.request(method, params, function(err, result)
    vim.schedule(function()
      if conn ~= c then
        return
      end
      answered(req)
      if err then
        M.last_error = method .. ': ' .. M.describe(err)
        if not callback then
          warn(M.last_error)
        end
      end
      if callback then
        callback(err, result)
      end
    end)
  end)
  if not sent then
    req.timer:close()
    return false
  end
  pending[req] = true
  req.timer:start(M.timeout, 0, function()
    vim.schedule(function() late(req) end)
  end)
  return true
end

return M
