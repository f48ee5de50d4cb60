-- Headless tests of the plugin against a real `mend editor`:
--   MEND_BIN=/path/to/mend nvim --headless -l editors/nvim/tests/run.lua CASE
-- Exits 0 when CASE passes; prints why and exits 1 when it does not.
-- `--list` prints the cases. `cargo test -p mend --test nvim` runs each.

local here = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h')
vim.opt.runtimepath:prepend(vim.fn.fnamemodify(here, ':h'))
vim.o.swapfile = false
vim.o.shortmess = vim.o.shortmess .. 'WAF'

local mend_bin = assert(os.getenv('MEND_BIN'), 'set MEND_BIN to the mend binary')
local PATIENCE = 15000

local function fail(msg)
  io.stderr:write('FAIL: ' .. msg .. '\n')
  os.exit(1)
end

local function wait_for(what, cond)
  if not vim.wait(PATIENCE, cond, 10) then
    fail('timed out waiting for ' .. what)
  end
end

local function eq(want, got, what)
  if not vim.deep_equal(want, got) then
    fail(what .. '\n  want ' .. vim.inspect(want) .. '\n  got  ' .. vim.inspect(got))
  end
end

--- Runs a shell command in another process, as an agent would write.
local function sh(script, ...)
  local r = vim.system({ 'sh', '-c', script, 'sh', ... }):wait()
  if r.code ~= 0 then
    fail('sh failed: ' .. script .. ': ' .. (r.stderr or ''))
  end
end

local function write_file(path, text)
  sh('printf "%s" "$1" > "$2"', text, path)
end

local function numbered(n, f)
  local lines = {}
  for i = 1, n do
    lines[i] = f and f(i) or ('line ' .. i)
  end
  return lines
end

local function text_of(lines)
  return table.concat(lines, '\n') .. '\n'
end

local function buf_lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local client, sync

--- A workspace with `file.txt`, opened in the current window, with the
--- server told about it.
local function start(lines, via_link)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local path = dir .. '/file.txt'
  write_file(path, text_of(lines))
  vim.cmd.cd(dir)
  if via_link then
    -- The root and the file are named through a symbolic link.
    local link = vim.fn.tempname()
    assert(vim.uv.fs_symlink(dir, link))
    dir = link
  end
  require('mend').setup({ cmd = { mend_bin, 'editor' }, root = dir })
  client = require('mend.client')
  sync = require('mend.sync')
  vim.cmd.edit(vim.fn.fnameescape(dir .. '/file.txt'))
  wait_for('the server to start', function() return client.initialized end)
  return vim.fn.resolve(path), vim.api.nvim_get_current_buf()
end

--- Waits until the server has the buffer's current text: its report is
--- sent, and a later request has been answered.
local function settle(buf)
  sync.report(buf)
  local done = false
  client.request('editor/status', vim.empty_dict(), function() done = true end)
  wait_for('the server to answer', function() return done end)
end

local function edit_line(buf, row, text)
  vim.api.nvim_buf_set_lines(buf, row - 1, row, true, { text })
  settle(buf)
end

local cases = {}

function cases.clean_reload()
  local path, buf = start(numbered(5))
  local new = numbered(5)
  new[3] = 'agent 3'
  write_file(path, text_of(new))
  wait_for('the reload', function() return buf_lines()[3] == 'agent 3' end)
  eq(new, buf_lines(), 'buffer after reload')
  eq(false, vim.bo[buf].modified, 'modified after reload')
  -- Neovim's record of the file is current: :w writes without asking.
  vim.api.nvim_buf_set_lines(buf, 0, 1, true, { 'user 1' })
  vim.cmd('write')
  new[1] = 'user 1'
  eq(new, vim.fn.readfile(path), 'file after :w')
end

function cases.root_reached_through_a_link()
  local path = start(numbered(3), true)
  local new = numbered(3)
  new[2] = 'agent 2'
  write_file(path, text_of(new))
  wait_for('the reload', function() return buf_lines()[2] == 'agent 2' end)
end

function cases.dirty_merge_keeps_cursor()
  local path, buf = start(numbered(30))
  edit_line(buf, 3, 'user 3')
  vim.api.nvim_win_set_cursor(0, { 25, 2 })
  vim.api.nvim_buf_set_mark(buf, 'a', 28, 0, {})
  local agent = numbered(30)
  agent[20] = 'agent 20'
  table.insert(agent, 1, 'agent top')
  write_file(path, text_of(agent))
  wait_for('the merge', function() return buf_lines()[1] == 'agent top' end)
  local want = vim.deepcopy(agent)
  want[4] = 'user 3'
  eq(want, buf_lines(), 'buffer after merge')
  eq({ 26, 2 }, vim.api.nvim_win_get_cursor(0), 'cursor after merge')
  eq('line 25', vim.api.nvim_get_current_line(), 'line under the cursor')
  eq({ 29, 0 }, vim.api.nvim_buf_get_mark(buf, 'a'), 'mark a after merge')
  eq(true, vim.bo[buf].modified, 'modified after merge')
end

local function enter_conflict()
  local path, buf = start(numbered(10))
  edit_line(buf, 5, 'user 5')
  local agent = numbered(10)
  agent[5] = 'agent 5'
  write_file(path, text_of(agent))
  wait_for('the conflict', function() return vim.b[buf].mend_conflict == true end)
  return path, buf
end

function cases.overlapping_write_enters_conflict_mode()
  local _, buf = enter_conflict()
  local want = numbered(10)
  want[5] = '<<<<<<< buffer'
  for i, l in ipairs({ 'user 5', '=======', 'agent 5', '>>>>>>> disk' }) do
    table.insert(want, 5 + i, l)
  end
  eq(want, buf_lines(), 'buffer in conflict')
  local marks = vim.api.nvim_buf_get_extmarks(buf, vim.api.nvim_create_namespace('mend'), 0, -1, {})
  eq(5, #marks, 'highlighted conflict lines')
  if not vim.wo.winbar:find('conflict', 1, true) then
    fail('no conflict flag in the winbar: ' .. vim.wo.winbar)
  end
  eq('[mend: conflict]', require('mend').statusline(), 'statusline item')
end

function cases.save_leaves_conflict_mode_and_merges_the_next_write()
  local path, buf = enter_conflict()
  vim.api.nvim_buf_set_lines(buf, 4, 9, true, { 'merged 5' })
  settle(buf)
  vim.cmd('write')
  wait_for('conflict mode to end', function() return vim.b[buf].mend_conflict == false end)
  eq('', vim.wo.winbar, 'winbar after save')
  settle(buf)
  edit_line(buf, 2, 'user 2')
  local agent = numbered(10)
  agent[5] = 'merged 5'
  agent[9] = 'agent 9'
  write_file(path, text_of(agent))
  wait_for('the merge', function() return buf_lines()[9] == 'agent 9' end)
  local want = vim.deepcopy(agent)
  want[2] = 'user 2'
  eq(want, buf_lines(), 'buffer after the next merge')
  eq(false, vim.b[buf].mend_conflict, 'conflict mode')
end

function cases.write_asks_when_the_file_changed_after_the_merge()
  local path, buf = enter_conflict()
  -- In conflict mode this write is not merged; :w would overwrite it.
  local later = numbered(10)
  later[9] = 'agent 9'
  write_file(path, text_of(later))
  local token = 0
  client.request('editor/status', vim.empty_dict(), function(_, st) token = st.token end)
  wait_for('the server to see the write', function() return token > 0 end)
  vim.wait(300)
  -- Neovim asks whether to overwrite; answer no.
  vim.api.nvim_feedkeys('n', 't', false)
  pcall(vim.cmd, 'write')
  eq(later, vim.fn.readfile(path), 'file after declining')
  eq(true, vim.bo[buf].modified, 'buffer still modified')
end

function cases.atomic_rename_write_from_another_process()
  local path, buf = start(numbered(4))
  local new = numbered(4)
  new[4] = 'agent 4'
  sh('printf "%s" "$1" > "$2.tmp" && mv "$2.tmp" "$2"', text_of(new), path)
  wait_for('the reload', function() return buf_lines()[4] == 'agent 4' end)
  eq(new, buf_lines(), 'buffer after atomic write')
  eq(false, vim.bo[buf].modified, 'modified')
end

function cases.delete()
  local path, buf = start(numbered(3))
  sh('rm "$1"', path)
  wait_for('the deletion notice', function() return vim.b[buf].mend_deleted == true end)
  eq(numbered(3), buf_lines(), 'buffer kept')
  eq(true, vim.bo[buf].modified, 'modified, so quitting asks')
  vim.cmd('write')
  eq(text_of(numbered(3)), table.concat(vim.fn.readfile(path), '\n') .. '\n', 'recreated file')
end

function cases.rename_is_followed()
  local path, buf = start(numbered(3))
  sh('mv "$1" "$2"', path, path:gsub('file%.txt$', 'moved.txt'))
  wait_for('the rename', function()
    return vim.api.nvim_buf_get_name(buf):match('moved%.txt$') ~= nil
  end)
  eq(numbered(3), buf_lines(), 'buffer kept')
end

--- A pending output for file.txt, made with the mend CLI as an agent's
--- response would be held for review.
local function propose(path, search, replace)
  local dir = vim.fn.fnamemodify(path, ':h')
  sh('cd "$1" && "$2" pending add file.txt >/dev/null', dir, mend_bin)
  local response = 'file.txt\n```\n<<<<<<< SEARCH\n' .. search .. '\n=======\n' .. replace
    .. '\n>>>>>>> REPLACE\n```\n'
  sh('cd "$1" && printf "%s" "$3" | "$2" apply --pending >/dev/null', dir, mend_bin, response)
end

function cases.review_panel_applies_a_pending_output()
  local path, buf = start(numbered(3))
  require('mend').commands()
  propose(path, 'line 2', 'agent 2')
  vim.cmd('MendReview')
  local panel = vim.api.nvim_get_current_buf()
  wait_for('the panel to list the file', function()
    return vim.api.nvim_buf_get_lines(panel, 0, 1, false)[1] == 'M  file.txt'
  end)
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.api.nvim_feedkeys('p', 'x', false)
  wait_for('the output to reach the buffer', function()
    return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == 'agent 2'
  end)
  eq({ 'line 1', 'agent 2', 'line 3' }, vim.fn.readfile(path), 'file after p')
  -- The file stays in the session, in context and without an output.
  wait_for('the letter to clear', function()
    return vim.api.nvim_buf_get_lines(panel, 0, 1, false)[1] == '   file.txt'
  end)
end

function cases.diff_local_opens_a_diff_split()
  local path = start(numbered(3))
  require('mend').commands()
  propose(path, 'line 3', 'agent 3')
  local local_win = vim.api.nvim_get_current_win()
  vim.cmd('MendDiffLocal')
  wait_for('the output window', function() return #vim.api.nvim_list_wins() == 2 end)
  local out_win = vim.tbl_filter(function(w) return w ~= local_win end, vim.api.nvim_list_wins())[1]
  local out_buf = vim.api.nvim_win_get_buf(out_win)
  eq({ 'line 1', 'line 2', 'agent 3' }, vim.api.nvim_buf_get_lines(out_buf, 0, -1, false), 'output')
  eq(true, vim.wo[local_win].diff and vim.wo[out_win].diff, 'both windows in diff mode')
end

local name = arg[1]
if name == '--list' then
  local names = vim.tbl_keys(cases)
  table.sort(names)
  io.stdout:write(table.concat(names, '\n') .. '\n')
  os.exit(0)
end
local case = cases[name]
if not case then
  fail('unknown case ' .. tostring(name) .. '; cases: ' .. table.concat(vim.tbl_keys(cases), ', '))
end
local ok, err = xpcall(case, debug.traceback)
if not ok then
  fail(tostring(err))
end
io.stdout:write('ok ' .. name .. '\n')
os.exit(0)
