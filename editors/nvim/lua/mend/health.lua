-- :checkhealth mend: the binary, its version, Neovim's version and the
-- state of the server.

local M = {}

local health = vim.health

--- The first line `cmd --version` prints, or nil and why not.
local function version_of(bin)
  local ok, proc = pcall(vim.system, { bin, '--version' }, { text = true })
  if not ok then
    return nil, tostring(proc)
  end
  local res = proc:wait(3000)
  if res.signal ~= 0 then
    return nil, 'it did not finish within 3 s'
  elseif res.code ~= 0 then
    return nil, 'it exited with status ' .. res.code .. ': ' .. vim.trim(res.stderr or '')
  end
  return vim.split(vim.trim(res.stdout or ''), '\n')[1]
end

local function check_binary(cmd)
  local bin = cmd[1]
  local path = vim.fn.exepath(bin)
  if path == '' then
    health.error(bin .. ' not found or not executable', {
      'Install mend (cargo install --path crates/mend)',
      'or pass setup({ cmd = { "/path/to/mend", "editor" } })',
    })
    return
  end
  health.ok('binary: ' .. path .. ' (executable)')
  local version, why = version_of(path)
  if version then
    health.ok('version: ' .. version)
  else
    health.warn(path .. ' --version failed: ' .. why, { 'Check that ' .. path .. ' is mend' })
  end
end

local function check_neovim()
  local v = tostring(vim.version())
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. v)
  else
    health.error('Neovim ' .. v .. ' is too old', { 'mend needs Neovim 0.10 or later' })
  end
end

local function count_buffers()
  local n = 0
  for _ in pairs(require('mend.sync').buffers()) do
    n = n + 1
  end
  return n
end

local function check_server()
  local client = require('mend.client')
  local st = client.status()
  if st.state == 'off' then
    health.warn('not started', { 'Call require("mend").setup() in your config' })
    return
  elseif st.state == 'dead' then
    health.error('not running: ' .. (st.last_error or 'it exited'),
      { 'Run require("mend").setup() to start it again' })
    return
  elseif st.state == 'hung' then
    health.error(string.format('hung: %d request(s) unanswered for more than %d ms (%d waiting)',
      st.overdue, client.timeout, st.pending), { 'Restart it with require("mend").setup()' })
  else
    health.ok(string.format('running (%d request(s) waiting)', st.pending))
  end
  if client.initialized then
    local info = client.server_info or {}
    health.ok(string.format('initialized: %s %s', info.name or 'mend', info.version or ''))
  else
    health.warn('not initialized yet (no answer to initialize)')
  end
  if st.root_lost then
    health.warn('root: ' .. tostring(client.root) .. ' is gone (deleted or moved away)',
      { 'Put the folder back: it is watched again as soon as it is there' })
  else
    health.info('root: ' .. tostring(client.root))
  end
  local n = count_buffers()
  health.info(n .. (n == 1 and ' buffer attached' or ' buffers attached'))
  if st.last_error then
    health.warn('last error: ' .. st.last_error)
  end
end

--- Runs the checks; `:checkhealth mend` calls it.
function M.check()
  local config = require('mend').config
  health.start('mend: binary')
  check_binary(config.cmd)
  health.start('mend: Neovim')
  check_neovim()
  health.start('mend: server')
  check_server()
end

return M
