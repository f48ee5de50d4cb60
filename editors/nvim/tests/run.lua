-- Headless tests of the plugin against a real `mend editor`:
--   MEND_BIN=/path/to/mend nvim --headless -l editors/nvim/tests/run.lua CASE
-- Exits 0 when CASE passes; prints why and exits 1 when it does not.
-- `--list` prints the cases. `cargo test -p mend --test cases nvim::` runs each.

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
local function start(lines, via_link, merge)
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
  local cmd = { mend_bin, 'editor' }
  if merge then
    vim.list_extend(cmd, { '--merge', merge })
  end
  require('mend').setup({ cmd = cmd, root = dir })
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

--- :w, answering `key` if asked.
local function write_answering(key)
  vim.api.nvim_feedkeys(key, 't', false)
  pcall(vim.cmd, 'write')
end

--- Notifications shown from now on, as { msg, level }.
local function capture_notes()
  local notes = {}
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  return notes
end

local cases = {}

--- An agent rewrites the file of `n` numbered lines with line `row`
--- changed; returns its text once the buffer shows that line.
local function agent_writes_line(path, n, row)
  local agent = numbered(n)
  agent[row] = 'agent ' .. row
  write_file(path, text_of(agent))
  wait_for('the agent\'s line ' .. row, function() return buf_lines()[row] == agent[row] end)
  return agent
end

--- An agent writes line 3 of an unmodified buffer's file; the buffer
--- reloads. Returns the file, the buffer and the agent's text.
local function reload_line_3()
  local path, buf = start(numbered(5))
  return path, buf, agent_writes_line(path, 5, 3)
end

function cases.clean_reload()
  local path, buf, new = reload_line_3()
  eq(new, buf_lines(), 'buffer after reload')
  eq(false, vim.bo[buf].modified, 'modified after reload')
  -- Neovim's record of the file is current: :w writes without asking.
  vim.api.nvim_buf_set_lines(buf, 0, 1, true, { 'user 1' })
  vim.cmd('write')
  new[1] = 'user 1'
  eq(new, vim.fn.readfile(path), 'file after :w')
end

function cases.reload_that_changes_the_size_then_write_does_not_ask()
  local path, buf = start(numbered(5))
  local new = numbered(6)
  write_file(path, text_of(new))
  wait_for('the reload', function() return #buf_lines() == 6 end)
  edit_line(buf, 1, 'user 1')
  new[1] = 'user 1'
  -- Were :w to ask whether to overwrite the file, this would decline.
  write_answering('n')
  eq(new, vim.fn.readfile(path), 'file after :w')
  eq(false, vim.bo[buf].modified, 'modified after :w')
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

function cases.a_write_during_conflict_mode_is_kept_and_merged_after_resolving()
  local path, buf = enter_conflict()
  -- In conflict mode this write is held; :w must not overwrite it.
  local later = numbered(10)
  later[5] = 'agent 5'
  later[9] = 'agent 9'
  write_file(path, text_of(later))
  wait_for('the held write', function()
    return require('mend').statusline():find('changed again', 1, true) ~= nil
  end)
  local notes = capture_notes()
  pcall(vim.cmd, 'write')
  eq(later, vim.fn.readfile(path), 'file after :w while a write is held')
  eq(true, vim.bo[buf].modified, 'buffer still modified')
  local said = table.concat(vim.tbl_map(function(n) return n.msg end, notes), '\n')
  if not said:find('merged into the buffer first', 1, true) then
    fail('no message about the held write: ' .. vim.inspect(notes))
  end
  -- The person resolves the markers (keeps theirs): the held write merges.
  vim.api.nvim_buf_set_lines(buf, 4, 9, true, { 'user 5' })
  settle(buf)
  wait_for('the held write to merge', function() return buf_lines()[9] == 'agent 9' end)
  local want = vim.deepcopy(later)
  want[5] = 'user 5'
  eq(want, buf_lines(), 'buffer after resolving')
  vim.cmd('write')
  eq(want, vim.fn.readfile(path), 'file after :w')
end

function cases.atomic_rename_write_from_another_process()
  local path, buf = start(numbered(4))
  settle(buf) -- the server watches the file before it is replaced
  local new = numbered(4)
  new[4] = 'agent 4'
  sh('printf "%s" "$1" > "$2.tmp" && mv "$2.tmp" "$2"', text_of(new), path)
  wait_for('the reload', function() return buf_lines()[4] == 'agent 4' end)
  eq(new, buf_lines(), 'buffer after atomic write')
  eq(false, vim.bo[buf].modified, 'modified')
end

function cases.delete()
  local path, buf = start(numbered(3))
  settle(buf) -- the server watches the file before it goes
  sh('rm "$1"', path)
  wait_for('the deletion notice', function() return vim.b[buf].mend_deleted == true end)
  eq(numbered(3), buf_lines(), 'buffer kept')
  eq(true, vim.bo[buf].modified, 'modified, so quitting asks')
  vim.cmd('write')
  eq(text_of(numbered(3)), table.concat(vim.fn.readfile(path), '\n') .. '\n', 'recreated file')
end

function cases.rename_is_followed()
  local path, buf = start(numbered(3))
  -- The server must have the buffer open (so it watches the file) before
  -- the rename, or the rename is never reported and the wait times out.
  settle(buf)
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

function cases.turn_panel_reverts_the_hunk_under_the_cursor()
  local path = start(numbered(20))
  require('mend').commands()
  local dir = vim.fn.fnamemodify(path, ':h')
  sh('cd "$1" && "$2" turn begin >/dev/null', dir, mend_bin)
  local changed = numbered(20)
  changed[2], changed[18] = 'agent 2', 'agent 18'
  write_file(path, text_of(changed))
  vim.cmd('MendReview turn')
  local panel = vim.api.nvim_get_current_buf()
  local want = {
    'M  file.txt',
    '@@ -1,5 +1,5 @@ hunk 1', ' line 1', '-line 2', '+agent 2', ' line 3', ' line 4', ' line 5',
    '@@ -15,6 +15,6 @@ hunk 2', ' line 15', ' line 16', ' line 17', '-line 18', '+agent 18',
    ' line 19', ' line 20',
  }
  wait_for('the panel to show both hunks', function()
    return vim.deep_equal(vim.api.nvim_buf_get_lines(panel, 0, -1, false), want)
  end)
  -- On a line of hunk 2, `r` reverts that hunk alone.
  vim.api.nvim_win_set_cursor(0, { 14, 0 })
  vim.api.nvim_feedkeys('r', 'x', false)
  changed[18] = 'line 18'
  wait_for('hunk 2 to be reverted', function()
    return vim.deep_equal(vim.fn.readfile(path), changed)
  end)
end

--- Keys come from setup({ keys }), and the panel colours letters and
--- hunk headers.
function cases.turn_panel_keys_are_configurable_and_highlighted()
  local path = start(numbered(20))
  require('mend').setup({ cmd = { mend_bin, 'editor' }, root = client.root, keys = { reject = 'X', accept_file = false } })
  local dir = vim.fn.fnamemodify(path, ':h')
  sh('cd "$1" && "$2" turn begin >/dev/null', dir, mend_bin)
  local changed = numbered(20)
  changed[2], changed[18] = 'agent 2', 'agent 18'
  write_file(path, text_of(changed))
  vim.cmd('Mend turn')
  local panel = vim.api.nvim_get_current_buf()
  wait_for('the panel', function() return #vim.api.nvim_buf_get_lines(panel, 0, -1, false) > 10 end)
  local maps = {}
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(panel, 'n')) do
    maps[m.lhs] = true
  end
  eq(true, maps.X, 'the configured reject key')
  eq(nil, maps.r, 'the default reject key is gone')
  eq(nil, maps.p, 'accept_file = false has no key')
  eq(true, maps.a, 'other defaults stay')
  local groups = {}
  local ns = vim.api.nvim_create_namespace('mend.panel')
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(panel, ns, 0, -1, { details = true })) do
    groups[m[2]] = m[4].hl_group
  end
  eq({ [0] = 'MendLetterM', [1] = 'MendHunkHeader', [8] = 'MendHunkHeader' }, groups, 'highlights by row')
  eq({ default = true, link = 'DiffChange' }, vim.api.nvim_get_hl(0, { name = 'MendLetterM' }), 'MendLetterM')
  vim.api.nvim_win_set_cursor(0, { 14, 0 })
  vim.api.nvim_feedkeys('X', 'x', false)
  changed[18] = 'line 18'
  wait_for('hunk 2 to be reverted by X', function()
    return vim.deep_equal(vim.fn.readfile(path), changed)
  end)
end

function cases.bad_keys_are_refused_by_setup()
  local notes = capture_notes()
  eq(false, require('mend').setup({ cmd = { mend_bin, 'editor' }, keys = { nonsense = 'z' } }), 'setup')
  eq(true, notes[#notes].msg:find('keys', 1, true) ~= nil, 'the message names keys: ' .. notes[#notes].msg)
end

-- Setup, health and the server's state ---------------------------------

local function errors_in(notes)
  return vim.tbl_filter(function(n) return n.level == vim.log.levels.ERROR end, notes)
end

--- Processes this Neovim started (the server, while one runs).
local function children()
  return vim.api.nvim_get_proc_children(vim.fn.getpid())
end

--- The lines of `:checkhealth mend`.
local function checkhealth()
  vim.cmd('checkhealth mend')
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
end

local function expect_in(text, pattern, what)
  if not text:find(pattern) then
    fail(what .. ': no match for ' .. pattern .. ' in\n' .. text)
  end
end

--- The root deleted: the statusline and :checkhealth say so; made again
--- with the file changed: the statusline clears, the buffer reloads, and
--- later writes reach it too.
function cases.root_lost_and_restored()
  local path, buf = start(numbered(3))
  local mend = require('mend')
  local function line(n) return vim.api.nvim_buf_get_lines(buf, n - 1, n, false)[1] end
  local dir = vim.fn.fnamemodify(path, ':h')
  sh('rm -rf "$1"', dir)
  wait_for('the root lost', function() return mend.statusline() == '[mend: root lost]' end)
  expect_in(checkhealth(), 'WARNING[^\n]*is gone', 'the health report')
  local new = numbered(3)
  new[2] = 'agent 2'
  sh('mkdir "$1"', dir)
  write_file(path, text_of(new))
  wait_for('the root back', function() return mend.statusline() == '' end)
  wait_for('the reload', function() return line(2) == 'agent 2' end)
  new[3] = 'agent 3'
  write_file(path, text_of(new))
  wait_for('the next reload', function() return line(3) == 'agent 3' end)
  eq(false, vim.bo[buf].modified, 'modified after the reloads')
end

function cases.health_reports_binary_version_and_server()
  start(numbered(3))
  local root = client.root
  local report = checkhealth()
  expect_in(report, 'OK[^\n]*' .. vim.pesc(mend_bin), 'the binary')
  local version = vim.trim(vim.system({ mend_bin, '--version' }):wait().stdout)
  expect_in(report, 'OK[^\n]*' .. vim.pesc(version), 'the version')
  expect_in(report, 'OK[^\n]*Neovim ' .. vim.pesc(tostring(vim.version())), 'the Neovim version')
  expect_in(report, 'OK[^\n]*running', 'the server state')
  expect_in(report, 'OK[^\n]*initialized', 'initialize answered')
  expect_in(report, 'root[^\n]*' .. vim.pesc(root), 'the root')
  expect_in(report, '1 buffer attached', 'the buffers')
  if report:find('ERROR') then
    fail('an error in a healthy report:\n' .. report)
  end
end

function cases.health_and_statusline_report_a_dead_server()
  start(numbered(3))
  eq('', require('mend').statusline(), 'statusline while running')
  local notes = capture_notes()
  local pids = children()
  eq(1, #pids, 'one server process')
  vim.uv.kill(pids[1], 'sigkill')
  wait_for('the server to be seen dead', function() return require('mend').statusline() == '[mend: dead]' end)
  local report = checkhealth()
  expect_in(report, 'ERROR[^\n]*exited', 'the dead server')
  eq(1, #notes, 'one notification that it exited')
end

function cases.exiting_server_command_shows_dead()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  capture_notes()
  require('mend').setup({ cmd = { 'sh', '-c', 'exit 3' }, root = dir })
  wait_for('the server to be seen dead', function() return require('mend').statusline() == '[mend: dead]' end)
end

function cases.unanswered_request_marks_the_server_hung_once()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local notes = capture_notes()
  client = require('mend.client')
  -- A server that reads every request and never answers.
  require('mend').setup({ cmd = { 'sh', '-c', 'exec cat >/dev/null' }, root = dir, timeout = 50 })
  wait_for('the server to be seen hung', function() return require('mend').statusline() == '[mend: hung]' end)
  wait_for('the timeout notification', function() return #notes > 0 end)
  client.request('editor/status', vim.empty_dict(), function() end)
  wait_for('a second request to time out', function() return client.status().overdue == 2 end)
  eq(1, #notes, 'notifications after two unanswered requests')
  expect_in(notes[1].msg, 'initialize', 'the notification names the request')
  expect_in(checkhealth(), 'ERROR[^\n]*hung', 'the health report')
end

function cases.late_answer_ends_hung()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  local go = dir .. '/answer-now'
  -- A server that answers initialize once the file `go` exists.
  local server = [[
    while [ ! -e "$1" ]; do sleep 0.05; done
    body='{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"fake","version":"1"},"root":"/"}}'
    printf 'Content-Length: %d\r\n\r\n%s' ${#body} "$body"
    exec cat >/dev/null
  ]]
  capture_notes()
  client = require('mend.client')
  require('mend').setup({ cmd = { 'sh', '-c', server, 'sh', go }, root = dir, timeout = 50 })
  wait_for('the server to be seen hung', function() return require('mend').statusline() == '[mend: hung]' end)
  write_file(go, '')
  wait_for('the answer', function() return client.initialized end)
  eq('', require('mend').statusline(), 'statusline after the answer')
  eq('running', client.status().state, 'state after the answer')
  eq('fake', client.server_info.name, 'the server named in the answer')
end

function cases.setup_reports_bad_options_as_messages()
  local notes = capture_notes()
  local file = vim.fn.tempname()
  write_file(file, 'x\n')
  local bad = {
    { root = vim.fn.tempname() .. '/missing' },
    { root = file },
    { root = 42 },
    { cmd = 'mend' },
    { cmd = {} },
    { cmd = { 'mend', 3 } },
    { session = true },
    { timeout = 0 },
    { timeout = '5' },
    { rooot = '/tmp' },
    'mend',
  }
  for i, opts in ipairs(bad) do
    if type(opts) == 'table' then
      -- A server that would start, so only the bad option can stop it.
      opts = vim.tbl_extend('keep', opts, { cmd = { mend_bin, 'editor' } })
    end
    local ok, err = pcall(require('mend').setup, opts)
    if not ok then
      fail('setup ' .. vim.inspect(opts) .. ' threw: ' .. tostring(err))
    end
    eq(i, #errors_in(notes), 'error messages after setup ' .. vim.inspect(opts))
  end
  eq(false, require('mend.client').running(), 'a server running after bad options')
  expect_in(notes[1].msg, 'missing', 'the missing root is named')
  expect_in(notes[10].msg, 'rooot', 'the unknown option is named')
end

function cases.setup_defines_the_commands()
  -- plugin/mend.lua is not sourced here (the runtimepath grew after startup).
  eq(0, vim.fn.exists(':MendStatus'), ':MendStatus before setup')
  start(numbered(3))
  for _, c in ipairs({ 'MendStatus', 'MendReview', 'MendDiffLocal', 'MendDismiss' }) do
    eq(2, vim.fn.exists(':' .. c), ':' .. c .. ' after setup')
  end
end

function cases.conflict_highlight_is_a_default_link()
  local _, buf = enter_conflict()
  eq({ default = true, link = 'DiffText' }, vim.api.nvim_get_hl(0, { name = 'MendConflict' }), 'MendConflict')
  local ns = vim.api.nvim_create_namespace('mend')
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    eq('MendConflict', m[4].line_hl_group, 'highlight of a conflict line')
  end
  -- A user's own colours survive setup() ...
  vim.api.nvim_set_hl(0, 'MendConflict', { bg = '#550000' })
  require('mend').setup({ cmd = { mend_bin, 'editor' }, root = client.root })
  eq({ bg = 0x550000 }, vim.api.nvim_get_hl(0, { name = 'MendConflict' }),
    'MendConflict after the user set it')
  -- ... and a colorscheme, which clears every group, gets the link back.
  vim.cmd.colorscheme('default')
  eq({ default = true, link = 'DiffText' }, vim.api.nvim_get_hl(0, { name = 'MendConflict' }),
    'MendConflict after :colorscheme')
end

--- With `--merge safe`, a write next to the person's edit is settled by
--- a resolver; the settled lines are highlighted until the person saves.
function cases.settled_region_is_highlighted_until_saved()
  local notes = capture_notes()
  local path, buf = start(numbered(8), false, 'safe')
  edit_line(buf, 4, 'user 4')
  local agent = numbered(8)
  agent[5] = 'agent 5'
  write_file(path, text_of(agent))
  wait_for('the merge', function() return buf_lines()[5] == 'agent 5' end)
  local want = numbered(8)
  want[4], want[5] = 'user 4', 'agent 5'
  eq(want, buf_lines(), 'buffer after the settled merge')
  local rns = vim.api.nvim_create_namespace('mend.resolved')
  local rows = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, rns, 0, -1, { details = true })) do
    eq('MendResolved', m[4].line_hl_group, 'highlight of a settled line')
    table.insert(rows, m[2])
  end
  eq({ 3, 4 }, rows, 'settled rows (0-based)')
  eq(1, vim.b[buf].mend_resolved, 'b:mend_resolved')
  eq('[mend: 1 settled]', sync.statusline(buf), 'statusline')
  eq({ default = true, link = 'DiffChange' }, vim.api.nvim_get_hl(0, { name = 'MendResolved' }), 'MendResolved')
  expect_in(notes[#notes].msg, 'settled 1 by adjacent', 'the notice')
  vim.cmd.write()
  eq({}, vim.api.nvim_buf_get_extmarks(buf, rns, 0, -1, {}), 'marks after :w')
  eq(nil, vim.b[buf].mend_resolved, 'b:mend_resolved after :w')
end

function cases.settled_region_highlight_is_dismissed()
  local path, buf = start(numbered(8), false, 'safe')
  edit_line(buf, 4, 'user 4')
  local agent = numbered(8)
  agent[5] = 'agent 5'
  write_file(path, text_of(agent))
  wait_for('the highlight', function() return vim.b[buf].mend_resolved == 1 end)
  vim.cmd('MendDismiss')
  local rns = vim.api.nvim_create_namespace('mend.resolved')
  eq({}, vim.api.nvim_buf_get_extmarks(buf, rns, 0, -1, {}), 'marks after :MendDismiss')
  eq(true, vim.bo[buf].modified, 'still unsaved')
end

--- With git's merge (the default) the same write is a conflict, never settled.
function cases.the_default_merge_settles_nothing()
  local path, buf = start(numbered(8))
  edit_line(buf, 4, 'user 4')
  local agent = numbered(8)
  agent[5] = 'agent 5'
  write_file(path, text_of(agent))
  wait_for('the conflict', function() return vim.b[buf].mend_conflict == true end)
  eq(nil, vim.b[buf].mend_resolved, 'b:mend_resolved')
end

function cases.mend_command_completes_and_dispatches()
  local notes = capture_notes()
  start(numbered(3))
  eq({ 'difflocal', 'dismiss', 'review', 'status', 'turn' }, vim.fn.getcompletion('Mend ', 'cmdline'),
    'subcommands')
  eq({ 'difflocal', 'dismiss' }, vim.fn.getcompletion('Mend d', 'cmdline'), 'subcommands after d')
  eq({ 'turn' }, vim.fn.getcompletion('Mend review ', 'cmdline'), 'after review')
  vim.cmd('Mend bogus')
  expect_in(notes[#notes].msg, ':Mend takes a subcommand: difflocal, dismiss, review, status, turn', 'the refusal')
  vim.cmd('Mend status')
  for _, c in ipairs({ 'MendStatus', 'MendReview', 'MendDiffLocal', 'MendDismiss' }) do
    eq(2, vim.fn.exists(':' .. c), 'the alias :' .. c)
  end
end

function cases.b_mend_status_follows_the_buffer()
  local path, buf = enter_conflict()
  eq('[mend: conflict]', vim.b[buf].mend_status, 'b:mend_status in conflict')
  eq(require('mend').statusline(), vim.b[buf].mend_status, 'the same as statusline()')
  vim.api.nvim_buf_set_lines(buf, 0, -1, true, numbered(10))
  vim.cmd.write()
  eq('', vim.b[buf].mend_status, 'b:mend_status after :w')
  local _ = path
end

function cases.root_defaults_to_the_worktree()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. '/sub', 'p')
  sh('cd "$1" && git init -q', dir)
  vim.cmd.cd(dir .. '/sub')
  require('mend').setup({ cmd = { mend_bin, 'editor' } })
  client = require('mend.client')
  wait_for('the server to start', function() return client.initialized end)
  eq(vim.fn.resolve(dir), vim.fn.resolve(client.root), 'the root')
end

function cases.errors_name_their_kind()
  client = require('mend.client')
  eq('busy here [busy]', client.describe({ message = 'busy here', data = { kind = 'busy' } }), 'with a kind')
  eq('plain', client.describe({ message = 'plain' }), 'without')
end

--- The plugin's autocommands (their groups are named mend...).
local function mend_autocmds()
  return vim.tbl_filter(function(a) return (a.group_name or ''):match('^mend') ~= nil end,
    vim.api.nvim_get_autocmds({}))
end

function cases.setup_twice_keeps_one_server_and_one_set_of_autocmds()
  local path, buf = start(numbered(3))
  local notes = capture_notes()
  local autocmds = #mend_autocmds()
  local rpc = client.rpc
  require('mend').setup({ cmd = { mend_bin, 'editor' }, root = client.root })
  eq(autocmds, #mend_autocmds(), 'autocommands after the same setup again')
  eq(true, rpc == client.rpc, 'the same server after the same setup')
  eq(1, #children(), 'server processes')
  local new = numbered(3)
  new[2] = 'agent 2'
  write_file(path, text_of(new))
  wait_for('the reload', function() return vim.api.nvim_buf_get_lines(buf, 1, 2, false)[1] == 'agent 2' end)
  -- Another root: the old server ends, a new one serves the new root only.
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  write_file(dir .. '/other.txt', 'one\n')
  require('mend').setup({ cmd = { mend_bin, 'editor' }, root = dir })
  vim.cmd.edit(vim.fn.fnameescape(dir .. '/other.txt'))
  wait_for('the new server', function() return client.initialized and client.root == vim.fn.resolve(dir) end)
  wait_for('the old server to end', function() return #children() == 1 end)
  eq(nil, sync.buffers()[buf], 'the buffer outside the new root attached')
  eq(autocmds, #mend_autocmds(), 'autocommands after setup with another root')
  write_file(dir .. '/other.txt', 'two\n')
  wait_for('the reload under the new root', function() return buf_lines()[1] == 'two' end)
  eq({}, notes, 'notifications')
end

-- Undo across an agent's change ----------------------------------------

--- Closes the undo block, as typing in Normal mode does between changes.
local function undo_break()
  vim.cmd('let &g:undolevels = &g:undolevels')
end

--- The person edits line 1 and an agent line 8; the buffer merges both.
--- Returns the file, the buffer and the agent's text.
local function merge_beside_an_edit()
  local path, buf = start(numbered(10))
  edit_line(buf, 1, 'user 1')
  undo_break()
  return path, buf, agent_writes_line(path, 10, 8)
end

--- One `u`, which must leave the buffer `want`, then :w answering n if
--- asked: the file must still be the agent's `agent`.
local function undo_then_decline(path, buf, want, agent)
  vim.cmd('undo')
  eq(want, buf_lines(), 'one undo takes back the agent\'s change')
  settle(buf)
  write_answering('n')
  eq(agent, vim.fn.readfile(path), 'file after declining')
end

function cases.undo_across_a_merge_makes_write_ask()
  local path, buf, agent = merge_beside_an_edit()
  local mine = numbered(10)
  mine[1] = 'user 1'
  undo_then_decline(path, buf, mine, agent)
  eq(true, vim.bo[buf].modified, 'modified after declining')
  write_answering('y')
  eq(mine, vim.fn.readfile(path), 'file after answering yes')
end

function cases.undo_across_a_reload_keeps_the_agents_change_on_disk()
  local path, buf, agent = reload_line_3()
  -- The buffer is back where Neovim last read the file, so it is clean,
  -- and the server may load the file into it again; if it has not yet,
  -- :w asks. Either way the agent's change stays on disk.
  undo_then_decline(path, buf, numbered(5), agent)
end

function cases.new_edit_after_undoing_a_merge_still_asks()
  local path, buf, agent = merge_beside_an_edit()
  vim.cmd('undo')
  -- A new change after the undo starts another branch of the undo tree.
  edit_line(buf, 2, 'user 2')
  undo_break()
  write_answering('n')
  eq(agent, vim.fn.readfile(path), 'file after declining')
  vim.cmd('write!')
  eq(buf_lines(), vim.fn.readfile(path), 'file after :w!')
end

function cases.back_at_the_merge_write_does_not_ask()
  local path, buf = merge_beside_an_edit()
  local merged = vim.fn.undotree().seq_cur
  vim.cmd('undo')
  edit_line(buf, 2, 'user 2')
  undo_break()
  -- Back on the branch with the merge: nothing of the agent's is lost.
  vim.cmd('undo ' .. merged)
  settle(buf)
  eq('agent 8', buf_lines()[8], 'the merge is back')
  -- Were :w to ask, this would decline.
  write_answering('n')
  eq(buf_lines(), vim.fn.readfile(path), 'file after :w')
end

-- Two actors at once -----------------------------------------------------

--- One run of the person typing into lines 1-20 every 10 ms while an agent
--- rewrites lines 21-40 every 40 ms from another process: in place, by
--- rename, or in slow pieces with the file held open (by `run`).
local function two_halves(dir, run)
  local path = dir .. '/half' .. run .. '.txt'
  local base = numbered(40)
  write_file(path, text_of(base))
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  wait_for('the buffer to attach', function() return sync.buffers()[buf] ~= nil end)
  settle(buf)
  local writes, agent = {}, nil
  for v = 1, 10 do
    agent = vim.deepcopy(base)
    for i = 21, 40 do
      agent[i] = 'agent ' .. i .. ' v' .. v
    end
    writes[v] = vim.fn.tempname()
    vim.fn.writefile(agent, writes[v])
  end
  local how = ({
    'cat "$f" > "$t"',
    'cp "$f" "$t.tmp" && mv "$t.tmp" "$t"',
    '{ head -c 300 "$f"; sleep 0.05; tail -c +301 "$f"; } > "$t"',
  })[run % 3 + 1]
  local job = vim.system({ 'sh', '-c', 't="$1"; shift; for f in "$@"; do ' .. how
    .. '; sleep 0.04; done', 'sh', path, unpack(writes) })
  local person = vim.deepcopy(base)
  for k = 1, 40 do
    local row = (k - 1) % 20
    local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
    vim.api.nvim_buf_set_text(buf, row, #line, row, #line, { 'p' })
    person[row + 1] = person[row + 1] .. 'p'
    vim.wait(10)
  end
  eq(0, job:wait().code, 'the agent\'s writes')
  local want = vim.deepcopy(person)
  for i = 21, 40 do
    want[i] = agent[i]
  end
  wait_for('both halves in run ' .. run, function()
    return vim.deep_equal(buf_lines(), want) or vim.b[buf].mend_conflict == true
  end)
  eq(want, buf_lines(), 'buffer after run ' .. run)
  eq(false, vim.b[buf].mend_conflict == true, 'conflict mode after run ' .. run)
  settle(buf)
  write_answering('n')
  eq(want, vim.fn.readfile(path), 'file after :w in run ' .. run)
  vim.cmd('bwipeout!')
end

function cases.typing_while_an_agent_writes_the_other_half()
  -- The halves touch (lines 20 and 21), which git leaves in conflict; the
  -- default merge is git's, so this asks for the resolvers.
  local path = start(numbered(3), false, 'safe')
  local dir = vim.fn.fnamemodify(path, ':h')
  local runs = tonumber(os.getenv('MEND_NVIM_RUNS') or '') or 50
  for run = 1, runs do
    two_halves(dir, run)
  end
end

--- Two open files and the paths of both.
local function two_open()
  local a_path, a = start({ 'alpha' })
  local dir = vim.fn.fnamemodify(a_path, ':h')
  local b_path = dir .. '/other.txt'
  write_file(b_path, 'beta\n')
  vim.cmd.edit(vim.fn.fnameescape(b_path))
  local b = vim.api.nvim_get_current_buf()
  wait_for('both buffers to attach', function() return sync.buffers()[b] ~= nil end)
  settle(b)
  return a_path, a, b_path, b
end

local function name_of(buf)
  return vim.fn.resolve(vim.api.nvim_buf_get_name(buf))
end

function cases.a_swap_of_two_open_files_swaps_the_buffers_names()
  local a_path, a, b_path, b = two_open()
  local notes = capture_notes()
  sh('mv "$1" "$1.tmp" && mv "$2" "$1" && mv "$1.tmp" "$2"', a_path, b_path)
  wait_for('both renames', function()
    return name_of(a) == b_path and name_of(b) == a_path
  end)
  eq({ 'alpha' }, vim.api.nvim_buf_get_lines(a, 0, -1, true), 'first buffer')
  eq({ 'beta' }, vim.api.nvim_buf_get_lines(b, 0, -1, true), 'second buffer')
  eq({}, errors_in(notes), 'errors')
  -- Each follows its own file now.
  write_file(b_path, 'alpha 2\n')
  wait_for('the reload of the moved file', function()
    return vim.api.nvim_buf_get_lines(a, 0, -1, true)[1] == 'alpha 2'
  end)
end

function cases.a_file_moved_onto_an_open_buffer_replaces_it()
  local a_path, a, b_path, b = two_open()
  vim.api.nvim_buf_set_lines(b, 0, -1, true, { 'beta edited' })
  settle(b)
  sh('mv "$1" "$2"', a_path, b_path)
  wait_for('the move', function() return name_of(a) == b_path end)
  wait_for('the replaced buffer to step aside', function()
    return name_of(b):match('%.replaced$') ~= nil
  end)
  eq({ 'beta edited' }, vim.api.nvim_buf_get_lines(b, 0, -1, true), 'replaced buffer keeps its text')
  eq(nil, sync.buffers()[b], 'replaced buffer detached')
  write_file(b_path, 'alpha 2\n')
  wait_for('the moved buffer to follow its file', function()
    return vim.api.nvim_buf_get_lines(a, 0, -1, true)[1] == 'alpha 2'
  end)
end

--- Opens `name` in the workspace of `start` holding `bytes`, attached and
--- settled.
local function open_file(dir, name, bytes)
  local path = dir .. '/' .. name
  local f = assert(io.open(path, 'wb'))
  f:write(bytes)
  f:close()
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  wait_for('the buffer to attach', function() return sync.buffers()[buf] ~= nil end)
  settle(buf)
  return path, buf
end

local function read_bytes(path)
  local f = assert(io.open(path, 'rb'))
  local bytes = f:read('*a')
  f:close()
  return bytes
end

local BOM = '\239\187\191'

--- A file with a byte order mark merges with one mark, kept as the
--- buffer's `bomb` option and never inside the first line, whether the
--- merge is clean or conflicts.
function cases.a_bom_file_merges_with_one_bom()
  local first = start(numbered(3))
  local dir = vim.fn.fnamemodify(first, ':h')
  local path, buf = open_file(dir, 'bom.txt', BOM .. 'a\nb\nc\n')
  edit_line(buf, 3, 'user c')
  write_file(path, BOM .. 'agent a\nb\nc\n')
  wait_for('the merge', function() return buf_lines()[1] == 'agent a' end)
  eq({ 'agent a', 'b', 'user c' }, buf_lines(), 'merged buffer')
  eq(true, vim.bo[buf].bomb, 'bomb after the merge')
  vim.cmd('write')
  eq(BOM .. 'agent a\nb\nuser c\n', read_bytes(path), 'file after :w')
  edit_line(buf, 1, 'user a')
  write_file(path, BOM .. 'agent a 2\nb\nuser c\n')
  wait_for('conflict mode', function() return vim.b[buf].mend_conflict == true end)
  eq({ '<<<<<<< buffer', 'user a', '=======', 'agent a 2', '>>>>>>> disk', 'b', 'user c' },
    buf_lines(), 'conflict without a BOM inside a line')
end

--- A file without a final newline stays without one, and a change at its
--- end merges with the person's change elsewhere, no conflict.
function cases.a_file_without_a_final_newline_merges()
  local first = start(numbered(3))
  local dir = vim.fn.fnamemodify(first, ':h')
  local path, buf = open_file(dir, 'noeol.txt', 'l1\nl2\nl3\nl4')
  edit_line(buf, 1, 'user 1')
  vim.cmd('write')
  eq('user 1\nl2\nl3\nl4', read_bytes(path), 'file after :w')
  edit_line(buf, 2, 'user 2')
  write_file(path, 'user 1\nl2\nl3\nagent 4')
  wait_for('the merge', function() return buf_lines()[4] == 'agent 4' end)
  eq({ 'user 1', 'user 2', 'l3', 'agent 4' }, buf_lines(), 'merged buffer')
  eq(false, vim.b[buf].mend_conflict == true, 'conflict mode')
  vim.cmd('write')
  eq('user 1\nuser 2\nl3\nagent 4', read_bytes(path), 'file after the second :w')
end

--- A reload the buffer cannot hold byte for byte (mixed line endings,
--- an emptied file) is taken once: one report answers it, and nothing is
--- sent again and again.
function cases.a_reload_the_buffer_cannot_hold_exactly_is_taken_once()
  local first = start(numbered(3))
  local dir = vim.fn.fnamemodify(first, ':h')
  local reports = 0
  local request = client.request
  client.request = function(method, params, cb)
    if method == 'buffer/changed' then
      reports = reports + 1
    end
    return request(method, params, cb)
  end
  local path, buf = open_file(dir, 'mixed.txt', 'a\r\nb\r\nc\r\n')
  reports = 0
  write_file(path, 'a\r\nb\nc\r\nd\r\n')
  wait_for('the reload', function() return #buf_lines() == 4 end)
  -- Long enough for a loop to show: each round is one write and one read.
  vim.wait(1500)
  eq(1, reports, 'reports after one reload')
  settle(buf)
  local status
  client.request('editor/status', vim.empty_dict(), function(_, r) status = r end)
  wait_for('the status', function() return status ~= nil end)
  for _, b in ipairs(status.buffers) do
    if b.path == 'mixed.txt' then
      eq(false, b.waiting, 'a notification still waiting')
    end
  end
end

-- :MendReview turn -------------------------------------------------------

--- Runs mend in the file's folder; its standard output.
local function mend_in(path, ...)
  local r = vim.system({ mend_bin, ... }, { cwd = vim.fn.fnamemodify(path, ':h') }):wait()
  if r.code ~= 0 then
    fail('mend ' .. table.concat({ ... }, ' ') .. ': ' .. (r.stdout or '') .. (r.stderr or ''))
  end
  return r.stdout
end

--- A turn begun on file.txt (30 numbered lines), then lines 2, 12 and 22
--- changed by `sed -i`, as an agent's shell command would; the clean
--- buffer reloads. Opens :MendReview turn and waits for its hunks.
local function turn_of_sed()
  local path, buf = start(numbered(30))
  require('mend').commands()
  mend_in(path, 'turn', 'begin')
  sh('sed -i "s/^line 2$/agent 2/; s/^line 12$/agent 12/; s/^line 22$/agent 22/" "$1"', path)
  wait_for('the reload', function() return buf_lines()[22] == 'agent 22' end)
  vim.cmd('MendReview turn')
  local panel = vim.api.nvim_get_current_buf()
  local function lines() return vim.api.nvim_buf_get_lines(panel, 0, -1, false) end
  wait_for('the panel to list the file', function() return lines()[1] == 'M  file.txt' end)
  return path, buf, panel, lines
end

--- Puts the cursor on the panel's line that is `text`.
local function cursor_on(lines, text)
  for i, l in ipairs(lines()) do
    if l == text then
      return vim.api.nvim_win_set_cursor(0, { i, 0 })
    end
  end
  fail('no line ' .. text .. ' in the panel: ' .. vim.inspect(lines()))
end

local function turn_files(path)
  local st = vim.json.decode(mend_in(path, 'turn', 'status', '--json'))
  return vim.tbl_map(function(f) return f.status .. ' ' .. f.path .. ' ' .. f.hunks end, st.files)
end

--- `r` on a hunk reverts just that hunk in the file; the open buffer,
--- with an unsaved edit elsewhere, merges it and keeps the edit. `a`
--- marks a hunk reviewed and writes nothing; `x` reverts the whole file.
function cases.turn_review_reverts_and_accepts_hunks()
  local path, buf, _, lines = turn_of_sed()
  local want = numbered(30)
  want[2], want[12], want[22] = 'agent 2', 'agent 12', 'agent 22'
  edit_line(buf, 28, 'user 28')
  cursor_on(lines, '+agent 12')
  vim.api.nvim_feedkeys('r', 'x', false)
  want[12] = 'line 12'
  local function in_buf() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
  wait_for('the revert to reach the buffer', function() return in_buf()[12] == 'line 12' end)
  eq(want, vim.fn.readfile(path), 'file after r: only hunk 2 put back')
  local merged = vim.deepcopy(want)
  merged[28] = 'user 28'
  eq(merged, in_buf(), 'buffer: the revert and the unsaved edit')
  eq(true, vim.bo[buf].modified, 'the unsaved edit is still unsaved')
  wait_for('the panel to drop the hunk', function()
    return not vim.tbl_contains(lines(), '+agent 12')
  end)
  cursor_on(lines, '+agent 2')
  vim.api.nvim_feedkeys('a', 'x', false)
  wait_for('the panel to drop the accepted hunk', function()
    return not vim.tbl_contains(lines(), '+agent 2')
  end)
  eq(want, vim.fn.readfile(path), 'file after a: unchanged')
  eq({ 'M file.txt 1' }, turn_files(path), 'the turn after r and a')
  cursor_on(lines, 'M  file.txt')
  vim.api.nvim_feedkeys('x', 'x', false)
  -- The accepted hunk stays: x puts back what is still listed.
  want[22] = 'line 22'
  wait_for('the file reverted', function() return vim.deep_equal(vim.fn.readfile(path), want) end)
  wait_for('the panel to empty', function() return lines()[1] == '(no changes in this turn)' end)
  eq({}, turn_files(path), 'the turn after x')
end

--- `a` and `r` off a hunk (on the file's line) act on nothing; a file
--- changed after the panel showed it is refused, nothing is written, and
--- the panel refreshes.
function cases.turn_review_refuses_what_it_did_not_show()
  local path, _, _, lines = turn_of_sed()
  local notes = capture_notes()
  cursor_on(lines, 'M  file.txt')
  vim.api.nvim_feedkeys('r', 'x', false)
  wait_for('the advice', function() return #notes > 0 end)
  expect_in(notes[1].msg, 'put the cursor on a hunk', 'r on a file line')
  cursor_on(lines, '+agent 12')
  local later = numbered(30)
  later[2], later[12], later[22], later[30] = 'agent 2', 'agent 12', 'agent 22', 'agent 30'
  write_file(path, text_of(later))
  vim.api.nvim_feedkeys('r', 'x', false)
  wait_for('the refusal', function() return #notes > 1 end)
  expect_in(notes[2].msg, 'changed since', 'the refusal')
  eq(later, vim.fn.readfile(path), 'nothing was written')
  wait_for('the panel to show the new hunk', function()
    return vim.tbl_contains(lines(), '+agent 30')
  end)
end

--- Writes `text` to `path` from another process `ms` milliseconds from now;
--- returns the job.
local function write_later(path, text, ms)
  return vim.system({ 'sh', '-c', 'sleep "$1"; printf "%s" "$2" > "$3"', 'sh',
    string.format('%.3f', ms / 1000), text, path })
end

--- The person's line 1 and the agent's line `n` both in the buffer, and
--- both in the file after :w.
local function both_kept(path, buf, person, agent, n, what)
  wait_for('the agent\'s line in ' .. what, function()
    return vim.api.nvim_buf_get_lines(buf, n - 1, n, true)[1] == agent
  end)
  eq(person, vim.api.nvim_buf_get_lines(buf, 0, 1, true)[1], 'the person\'s line in ' .. what)
  settle(buf)
  write_answering('n')
  local file = vim.fn.readfile(path)
  eq({ person, agent }, { file[1], file[n] }, 'the file after :w in ' .. what)
end

--- A buffer with unsaved changes made before mend ran is attached, and an
--- agent writes its file 0 to 110 ms after the open: the write reaches the
--- buffer (it is never taken as what the buffer derives from), and :w
--- keeps it.
function cases.a_write_right_after_a_dirty_open_is_merged()
  local first = start(numbered(3))
  local dir = vim.fn.fnamemodify(first, ':h')
  for run = 0, 11 do
    local path = dir .. '/dirty' .. run .. '.txt'
    write_file(path, text_of(numbered(10)))
    -- Changes made while mend does not follow the buffer.
    sync.disable()
    vim.cmd.edit(vim.fn.fnameescape(path))
    local buf = vim.api.nvim_get_current_buf()
    vim.api.nvim_buf_set_lines(buf, 0, 1, true, { 'person ' .. run })
    sync.enable()
    wait_for('the open', function()
      local b = sync.buffers()[buf]
      return b ~= nil and b.id ~= nil
    end)
    local agent = numbered(10)
    agent[10] = 'agent ' .. run
    local job = write_later(path, text_of(agent), run * 10)
    eq(0, job:wait().code, 'the agent\'s write')
    both_kept(path, buf, 'person ' .. run, agent[10], 10, 'run ' .. run)
    vim.cmd('bwipeout!')
  end
end

--- The server is started again (setup(), the remedy for a dead or hung
--- one) while the person has unsaved changes and an agent writes the file,
--- 20 times, the write landing from before the restart to 95 ms after it:
--- the buffer is opened against what it and the last server agreed on, so
--- every write is merged and none is erased by :w.
function cases.a_restarted_server_keeps_every_write()
  local path, buf = start(numbered(10))
  local config = { cmd = { mend_bin, 'editor' }, root = client.root }
  for run = 1, 20 do
    local person = 'person ' .. run
    edit_line(buf, 1, person)
    local agent = vim.fn.readfile(path)
    agent[10] = 'agent ' .. run
    client.stop()
    local job = write_later(path, text_of(agent), (run - 1) * 5)
    if run % 4 == 0 then
      -- The write lands while no server runs.
      job:wait()
    end
    require('mend').setup(config)
    wait_for('the server to start', function() return client.initialized end)
    eq(0, job:wait().code, 'the agent\'s write')
    both_kept(path, buf, person, agent[10], 10, 'run ' .. run)
  end
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
