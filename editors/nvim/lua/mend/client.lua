-- The connection to `mend editor`: JSON-RPC with LSP framing, which
-- Neovim's own `vim.lsp.rpc` speaks.

local M = {
  rpc = nil,
  root = nil,
  initialized = false,
}

local handlers = {}

--- Calls `fn(params)` for each notification `method` from the server.
function M.on(method, fn)
  handlers[method] = fn
end

local function warn(msg, level)
  vim.notify('mend: ' .. msg, level or vim.log.levels.WARN)
end

--- The root as an absolute path without a trailing slash.
local function normalize_root(root)
  local abs = vim.fn.fnamemodify(root, ':p')
  abs = vim.uv.fs_realpath(abs) or abs
  return (abs:gsub('/+$', ''))
end

function M.running()
  return M.rpc ~= nil and not M.rpc.is_closing()
end

function M.start(config)
  if M.running() then
    return
  end
  M.root = normalize_root(config.root or vim.fn.getcwd())
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    warn(config.cmd[1] .. ' is not executable; install mend or pass setup({ cmd = { ... } })',
      vim.log.levels.ERROR)
    return
  end
  M.rpc = vim.lsp.rpc.start(config.cmd, {
    notification = function(method, params)
      vim.schedule(function()
        local h = handlers[method]
        if h then
          h(params)
        end
      end)
    end,
    server_request = function()
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
    end,
    on_exit = function(code)
      vim.schedule(function()
        M.rpc, M.initialized = nil, false
        if code ~= 0 then
          warn('mend editor exited with status ' .. code)
        end
      end)
    end,
    on_error = function(_, err)
      vim.schedule(function() warn(vim.inspect(err)) end)
    end,
  }, { cwd = M.root })
  M.request('initialize', { root = M.root, session = config.session }, function(err)
    if err then
      warn('initialize: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      M.initialized = true
    end
  end)
end

--- Sends a request; `callback(err, result)` runs on the main loop. Errors
--- without a callback are shown to the user.
function M.request(method, params, callback)
  if not M.running() then
    return false
  end
  M.rpc.request(method, params, function(err, result)
    vim.schedule(function()
      if err and not callback then
        warn(method .. ': ' .. (err.message or vim.inspect(err)))
      end
      if callback then
        callback(err, result)
      end
    end)
  end)
  return true
end

return M
