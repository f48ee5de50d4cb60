-- :MendReview turn: every change of the open turn (`mend turn`), however it
-- was made, reviewed hunk by hunk over the editor protocol's turn/*
-- methods. A revert writes the file; an open buffer then reloads, or
-- merges when it has unsaved changes, as after a pending accept.

local client = require('mend.client')
local panels = require('mend.panel')

local M = {}

local say = panels.say

--- The panel: its buffer, and what each of its lines stands for.
local panel = { buf = nil, lines = {} }

--- The file's line in the panel: letter, path, and what else to know.
local function file_line(f)
  local line = string.format('%-2s %s', f.status, f.path)
  if f.from ~= nil and f.from ~= vim.NIL then
    line = line .. ' (from ' .. f.from .. ')'
  end
  if f.change ~= nil and f.change ~= vim.NIL then
    line = line .. '  [' .. f.change .. ']'
  end
  return line
end

--- Each file's line, the lines naming what else changed (a rename, a
--- mode), then its hunks as the server cut them (`diff_hunks`: number,
--- header, lines); a file without a text diff gets the line saying why.
--- `panel.lines[i]` is `{ file, hunk }`, hunk nil outside a hunk.
local function render(res)
  local lines, at = {}, {}
  local function put(line, f, hunk)
    table.insert(lines, line)
    table.insert(at, { file = f, hunk = hunk })
  end
  for _, f in ipairs(res.files) do
    put(file_line(f), f)
    local hunks = f.diff_hunks or {}
    -- The hunks are the diff's last lines; the ones before them name
    -- the file.
    local text = vim.split(f.diff, '\n', { plain = true, trimempty = true })
    local body = 0
    for _, h in ipairs(hunks) do
      body = body + 1 + #h.lines
    end
    for i = 1, #text - body do
      local l = text[i]
      if #hunks == 0 or not (vim.startswith(l, '--- ') or vim.startswith(l, '+++ ')) then
        put(l, f)
      end
    end
    for _, h in ipairs(hunks) do
      put(h.header .. ' hunk ' .. h.number, f, h.number)
      for _, l in ipairs(h.lines) do
        put(l, f, h.number)
      end
    end
  end
  if #lines == 0 then
    lines = { '(no changes in this turn)' }
  end
  panel.lines = at
  panels.set_lines(panel.buf, lines)
  local kinds = {}
  for i, a in ipairs(at) do
    if a.hunk == nil and lines[i] == file_line(a.file) then
      kinds[i] = 'file'
    elseif a.hunk ~= nil and vim.startswith(lines[i], '@@') and (i == 1 or at[i - 1].hunk ~= a.hunk) then
      kinds[i] = 'hunk'
    end
  end
  panels.highlight(panel.buf, lines, kinds)
end

--- Loads the turn's diffs into the panel (they are recorded as shown).
function M.refresh()
  panels.refresh(client, 'turn/diff', panel, render)
end

--- What the cursor's line stands for.
local function current()
  return panels.under_cursor(panel.lines, 'change')
end

--- A key acting on the hunk under the cursor (`hunk`) or its whole file,
--- naming the version of the change the panel shows: a file changed
--- since is refused, and nothing is written.
local function act(method, hunk, verb)
  return function()
    local at = current()
    if not at then
      return
    end
    if hunk and not at.hunk then
      return say('put the cursor on a hunk of ' .. at.file.path .. ' (or use the file keys)')
    end
    local params = { paths = { at.file.path }, seen = at.file.version }
    local what = at.file.path
    if hunk then
      params.hunks = { at.hunk }
      what = 'hunk ' .. at.hunk .. ' of ' .. at.file.path
    end
    client.request(method, params, function(err, res)
      if err then
        say(client.describe(err), vim.log.levels.WARN)
        return M.refresh()
      end
      local undo = ''
      if res.safety then
        undo = '; :!mend turn undo undoes it (safety checkpoint ' .. res.safety.id .. ')'
      end
      say(verb .. ' ' .. what .. undo)
      M.refresh()
    end)
  end
end

--- Opens the turn's panel: each changed file with its letter, then its
--- hunks. `a` accepts the hunk under the cursor (marks it reviewed), `r`
--- reverts it to the turn's start; `p` and `x` do the same for the whole
--- file; `R` refreshes, `q` closes.
function M.open()
  if not client.running() then
    return say('the server is not running; call require("mend").setup()', vim.log.levels.ERROR)
  end
  if not (panel.buf and vim.api.nvim_buf_is_valid(panel.buf)) then
    panel.buf = panels.create('mend://turn', 'diff', {
      { 'accept', act('turn/accept', true, 'accepted'), 'mend: accept the hunk (reviewed)' },
      { 'reject', act('turn/reject', true, 'reverted'), 'mend: revert the hunk to the turn\'s start' },
      { 'accept_file', act('turn/accept', false, 'accepted'), 'mend: accept the file (reviewed)' },
      { 'reject_file', act('turn/reject', false, 'reverted'), 'mend: revert the file to the turn\'s start' },
      { 'refresh', M.refresh, 'mend: refresh' },
    })
  end
  panels.show(panel.buf, 60)
  M.refresh()
end

return M
