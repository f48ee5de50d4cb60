-- :MendStatus, :MendReview and :MendDiffLocal: a pending-changes session
-- (`mend apply --pending`) reviewed from Neovim.

local client = require('mend.client')
local panels = require('mend.panel')

local M = {}

local say = panels.say

local function need_server()
  if client.running() then
    return true
  end
  say('the server is not running; call require("mend").setup()', vim.log.levels.ERROR)
  return false
end

--- Why a file with the `?` letter cannot be read, after its path.
local function unreadable(f)
  if f.reason ~= nil and f.reason ~= vim.NIL then
    return '  (' .. f.reason .. ')'
  end
  return ''
end

--- Shows the buffers mend keeps in step and the pending files.
function M.status()
  if not need_server() then
    return
  end
  client.request('editor/status', vim.empty_dict(), function(err, st)
    if err then
      return say(client.describe(err), vim.log.levels.ERROR)
    end
    local lines = { 'root ' .. st.root }
    for _, b in ipairs(st.buffers) do
      local flags = {}
      if b.dirty then table.insert(flags, 'modified') end
      if b.conflict then table.insert(flags, 'CONFLICT') end
      if b.deleted then table.insert(flags, 'deleted') end
      table.insert(lines, '  ' .. b.path .. (#flags > 0 and ' (' .. table.concat(flags, ', ') .. ')' or ''))
    end
    client.request('pending/status', vim.empty_dict(), function(perr, ps)
      if perr then
        table.insert(lines, 'no pending session')
      else
        table.insert(lines, 'pending (' .. ps.session .. '): ' .. #ps.files .. ' file(s)')
        for _, f in ipairs(ps.files) do
          table.insert(lines, string.format('  %-2s %s%s', f.status, f.path, unreadable(f)))
        end
      end
      say(table.concat(lines, '\n'))
    end)
  end)
end

-- The review panel -----------------------------------------------------

local panel = { buf = nil, files = {} }

local function render(files)
  panel.files = files
  local lines = {}
  for _, f in ipairs(files) do
    local to = f.to and (' -> ' .. f.to) or ''
    table.insert(lines, string.format('%-2s %s%s%s', f.status, f.path, to, unreadable(f)))
  end
  local kinds = {}
  for i = 1, #lines do
    kinds[i] = 'file'
  end
  if #lines == 0 then
    lines = { '(no pending files)' }
    kinds = {}
  end
  panels.set_lines(panel.buf, lines)
  panels.highlight(panel.buf, lines, kinds)
end

function M.refresh()
  panels.refresh(client, 'pending/status', panel, function(st)
    render(st.files)
  end)
end

local function current()
  return panels.under_cursor(panel.files, 'file')
end

local function act(method, verb)
  return function()
    local f = current()
    if not f then
      return
    end
    client.request(method, { paths = { f.path } }, function(err)
      if err then
        return say(client.describe(err), vim.log.levels.WARN)
      end
      say(verb .. ' ' .. f.path)
      M.refresh()
    end)
  end
end

local function show_diff()
  local f = current()
  if not f then
    return
  end
  client.request('pending/diff', { paths = { f.path } }, function(err, res)
    if err then
      return say(client.describe(err), vim.log.levels.WARN)
    end
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(res.diff, '\n', { plain = true }))
    vim.bo[buf].filetype = 'diff'
    vim.bo[buf].modifiable = false
    vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true })
  end)
end

--- Opens the panel: one line per pending file with its status letter.
--- `p` applies the output, `x` discards it, `gd` shows its diff, `u` syncs
--- the context to the file as it is, `R` refreshes, `q` closes.
function M.open()
  if not need_server() then
    return
  end
  if not (panel.buf and vim.api.nvim_buf_is_valid(panel.buf)) then
    panel.buf = panels.create('mend://review', 'mendreview', {
      { 'accept_file', act('pending/accept', 'applied'), 'mend: apply the output' },
      { 'reject_file', act('pending/reject', 'discarded'), 'mend: discard the output' },
      { 'sync', act('pending/sync', 'synced'), 'mend: take the file as it is as the context' },
      { 'diff', show_diff, 'mend: diff of the output' },
      { 'refresh', M.refresh, 'mend: refresh' },
    })
  end
  panels.show(panel.buf, 40)
  render(panel.files)
  M.refresh()
end

--- Diffs the current file against its pending output side by side; `do`
--- and `dp` move hunks, and :w keeps what the file should hold.
function M.diff_local()
  if not need_server() then
    return
  end
  local local_buf = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(local_buf)
  client.request('pending/output', { path = path }, function(err, res)
    if err then
      return say(client.describe(err), vim.log.levels.WARN)
    end
    if res.text == nil or res.text == vim.NIL then
      return say(res.path .. ': the output deletes or renames the file; use :MendReview')
    end
    local ft = vim.bo[local_buf].filetype
    vim.cmd('diffthis')
    vim.cmd('vertical rightbelow new')
    local out = vim.api.nvim_get_current_buf()
    vim.bo[out].buftype = 'nofile'
    vim.bo[out].bufhidden = 'wipe'
    vim.api.nvim_buf_set_name(out, 'mend://output/' .. res.path)
    local lines = vim.split(res.text, '\n', { plain = true })
    if lines[#lines] == '' then
      table.remove(lines)
    end
    vim.api.nvim_buf_set_lines(out, 0, -1, false, lines)
    vim.bo[out].filetype = ft
    vim.cmd('diffthis')
    vim.cmd('wincmd p')
  end)
end

return M
