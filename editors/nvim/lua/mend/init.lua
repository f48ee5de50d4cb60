-- mend for Neovim: buffers that stay in step when an agent writes their
-- files, and a review panel for pending changes. See :help mend.

local M = {}

---@class mend.Config
---@field cmd string[] The server command (default `{ 'mend', 'editor' }`).
---@field root string? The workspace root (default: the git worktree holding the current directory, or the directory itself outside git).
---@field session string? The pending-changes session for :MendReview.
---@field timeout integer? Milliseconds before an unanswered request marks the server hung (default 5000).
---@field keys table<string, string|false>? The review panels' keys by action (see :help mend-keys).
local defaults = { cmd = { 'mend', 'editor' }, timeout = 5000 }
local known = { cmd = true, root = true, session = true, timeout = true, keys = true }

M.config = vim.deepcopy(defaults)

local function notify_error(msg)
  vim.notify('mend: setup: ' .. msg, vim.log.levels.ERROR)
end

--- Checks one option with vim.validate in the form this Neovim has.
--- Every option is optional, so function validators accept nil.
local function check(name, value, validator, message)
  if vim.fn.has('nvim-0.11') == 1 then
    vim.validate(name, value, validator, true, message)
  elseif type(validator) == 'string' then
    vim.validate({ [name] = { value, validator, true } })
  else
    vim.validate({ [name] = { value, validator, message } })
  end
end

local function is_cmd(v)
  if v == nil then
    return true
  end
  if type(v) ~= 'table' or #v == 0 then
    return false
  end
  for _, part in ipairs(v) do
    if type(part) ~= 'string' then
      return false
    end
  end
  return true
end

local function is_timeout(v)
  return v == nil or (type(v) == 'number' and v > 0)
end

local function is_keys(v)
  if v == nil then
    return true
  end
  if type(v) ~= 'table' then
    return false
  end
  local actions = require('mend.panel').default_keys
  for action, key in pairs(v) do
    if actions[action] == nil or not (type(key) == 'string' and key ~= '' or key == false) then
      return false
    end
  end
  return true
end

--- Raises an error naming the first bad option.
local function validate(opts)
  if type(opts) ~= 'table' then
    error('the options must be a table, such as { root = "~/project" }, not a ' .. type(opts), 0)
  end
  for key in pairs(opts) do
    if not known[key] then
      error('unknown option ' .. vim.inspect(key) .. '; the options are cmd, root, session, timeout and keys', 0)
    end
  end
  check('cmd', opts.cmd, is_cmd, 'a non-empty list of strings, such as { "mend", "editor" }')
  check('root', opts.root, 'string')
  check('session', opts.session, 'string')
  check('timeout', opts.timeout, is_timeout, 'a number of milliseconds above 0')
  check('keys', opts.keys, is_keys, 'a table of action = key (a string, or false for none); actions: '
    .. table.concat(vim.tbl_keys(require('mend.panel').default_keys), ', '))
end

--- Why `root` cannot be the workspace root, or nil when it can.
local function root_problem(root)
  local stat = vim.uv.fs_stat(root)
  if not stat then
    return 'the root ' .. root .. ' is missing; pass setup({ root = ... }) an existing folder'
  elseif stat.type ~= 'directory' then
    return 'the root ' .. root .. ' is not a folder; pass setup({ root = ... }) a folder'
  elseif not vim.uv.fs_access(root, 'RX') then
    return 'the root ' .. root .. ' cannot be read; check its permissions'
  end
end

--- Whether the server runs, answering, for the same cmd, root and session
--- as `config`.
local function same_server(config)
  local client = require('mend.client')
  local old = M.config
  return client.status().state == 'running'
    and vim.deep_equal(old.cmd, config.cmd)
    and old.session == config.session
    and client.root == client.normalize_root(config.root or client.default_root())
end

--- Starts `mend editor` and reports every buffer under the root to it.
--- Bad options are reported as a message, and nothing changes. Running it
--- again keeps the server when cmd, root and session are the same, and
--- restarts it (buffers re-attached) when they changed or it died or hung.
---@param opts mend.Config?
---@return boolean ok
function M.setup(opts)
  if opts == nil then
    opts = {}
  end
  local ok, err = pcall(validate, opts)
  if not ok then
    notify_error(tostring(err):gsub('^[^\n]-:%d+: ', ''))
    return false
  end
  local config = vim.tbl_extend('force', vim.deepcopy(defaults), opts)
  local problem = root_problem(config.root or require('mend.client').default_root())
  if problem then
    notify_error(problem)
    return false
  end
  M.commands()
  M.highlights()
  local client, sync = require('mend.client'), require('mend.sync')
  local keep = same_server(config)
  M.config = config
  client.timeout = config.timeout
  if not keep then
    sync.disable()
    client.stop()
    if not client.start(config) then
      return false
    end
  end
  sync.enable()
  return true
end

--- A statusline item: `[mend: dead]` when the server exited, `[mend:
--- hung]` while a request waits past the timeout, `[mend: root lost]`
--- while the root folder is gone from its path, `[mend: conflict]` while
--- the current buffer is in conflict mode, `[mend: deleted]` when its file
--- is gone, else empty.
function M.statusline()
  return require('mend.sync').status_of(vim.api.nvim_get_current_buf())
end

--- The subcommands of :Mend, each with what it does.
local subcommands = {
  status = function() require('mend.review').status() end,
  review = function(arg)
    if arg == 'turn' then
      require('mend.turn').open()
    elseif arg == nil then
      require('mend.review').open()
    else
      vim.notify('mend: :Mend review takes nothing (the pending session) or `turn`', vim.log.levels.ERROR)
    end
  end,
  turn = function() require('mend.turn').open() end,
  difflocal = function() require('mend.review').diff_local() end,
  dismiss = function() require('mend.sync').dismiss(vim.api.nvim_get_current_buf()) end,
}

--- Completes :Mend's arguments: a subcommand, then `turn` after review.
local function complete(lead, line)
  local words = vim.split(vim.trim(line), '%s+')
  local done = #words - (line:match('%s$') and 0 or 1)
  local choices = {}
  if done == 1 then
    choices = vim.tbl_keys(subcommands)
  elseif done == 2 and words[2] == 'review' then
    choices = { 'turn' }
  end
  table.sort(choices)
  return vim.tbl_filter(function(c) return vim.startswith(c, lead) end, choices)
end

local function mend_command(o)
  local sub, arg = o.fargs[1], o.fargs[2]
  local run = sub and subcommands[sub]
  if not run then
    local names = vim.tbl_keys(subcommands)
    table.sort(names)
    vim.notify('mend: :Mend takes a subcommand: ' .. table.concat(names, ', '), vim.log.levels.ERROR)
    return
  end
  run(arg)
end

--- Defines the user commands (setup() and plugin/mend.lua call this):
--- :Mend with its subcommands, and the older :MendStatus, :MendReview,
--- :MendDiffLocal and :MendDismiss as aliases.
function M.commands()
  local cmd = vim.api.nvim_create_user_command
  local function review() return require('mend.review') end
  cmd('Mend', mend_command, {
    desc = 'mend: status, review [turn], turn, difflocal, dismiss',
    nargs = '+',
    complete = complete,
    force = true,
  })
  cmd('MendStatus', function() review().status() end,
    { desc = 'mend: buffers and pending files', force = true })
  cmd('MendReview', function(o)
    if o.args == 'turn' then
      require('mend.turn').open()
    elseif o.args == '' then
      review().open()
    else
      vim.notify('mend: :MendReview takes nothing (the pending session) or `turn`', vim.log.levels.ERROR)
    end
  end, {
    desc = 'mend: review pending changes, or the open turn (:MendReview turn)',
    nargs = '?',
    complete = function() return { 'turn' } end,
    force = true,
  })
  cmd('MendDiffLocal', function() review().diff_local() end,
    { desc = 'mend: diff this file against its pending output', force = true })
  cmd('MendDismiss', function() require('mend.sync').dismiss(vim.api.nvim_get_current_buf()) end,
    { desc = 'mend: clear the highlight of regions a merge resolver settled', force = true })
end

--- Defines the highlight groups as default links, so a colorscheme or the
--- user can override them, and again after a colorscheme clears them.
function M.highlights()
  local function define()
    vim.api.nvim_set_hl(0, 'MendConflict', { link = 'DiffText', default = true })
    vim.api.nvim_set_hl(0, 'MendResolved', { link = 'DiffChange', default = true })
    for group, link in pairs({
      MendLetterM = 'DiffChange', MendLetterA = 'DiffAdd', MendLetterD = 'DiffDelete',
      MendLetterR = 'DiffText', MendLetterT = 'WarningMsg', MendLetterOther = 'Comment',
      MendHunkHeader = 'Statement',
    }) do
      vim.api.nvim_set_hl(0, group, { link = link, default = true })
    end
  end
  define()
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = vim.api.nvim_create_augroup('mend.highlights', { clear = true }),
    callback = define,
  })
end

return M
