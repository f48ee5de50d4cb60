-- Buffer sync: report buffers under the root to `mend editor`, and apply
-- what it sends back (reload, merge, conflict, delete, rename) hunk by hunk,
-- so the cursor, marks and undo history survive.

local client = require('mend.client')
local undo = require('mend.undo')

local M = {}

local ns = vim.api.nvim_create_namespace('mend')
--- Regions a merge resolver settled where git would have conflicted.
local resolved_ns = vim.api.nvim_create_namespace('mend.resolved')
local group = vim.api.nvim_create_augroup('mend', { clear = true })

--- Attached buffers: bufnr -> { path (the buffer's name), rel (relative to
--- the root, as the server names it), sent (the version last reported),
--- applying, conflict, deleted, applied (undo sequence numbers of the
--- agent's changes since the last write), writes (count of writes to the
--- file), seq (the last notification applied), disk (the SHA-256 of the
--- file's bytes the buffer derives from), base (those bytes, when known),
--- held (a write waits for the conflict to be resolved) }.
local bufs = {}

--- What each buffer and the server last agreed on: bufnr -> { rel, base }.
--- Kept when the buffers are detached (setup() starting the server again),
--- so a buffer with unsaved changes is opened again against exactly that,
--- never against whatever the file holds by then.
local agreed = {}

--- The buffer now derives from `base` (the file's bytes, as the server
--- agreed them).
local function set_base(buf, base)
  local b = bufs[buf]
  if not b then
    return
  end
  b.base = base
  agreed[buf] = base and { rel = b.rel, base = base } or nil
end

local BOM = '\239\187\191'

--- The buffer's version for the server: it grows with every change and
--- every write of the file, so a notification computed before a save is
--- never applied after it.
local function version(buf)
  local b = bufs[buf]
  return vim.api.nvim_buf_get_changedtick(buf) + (b and b.writes or 0)
end

--- The buffer as the bytes Neovim would write (line endings per
--- 'fileformat', a final newline per 'eol' or 'fixeol', the BOM per
--- 'bomb').
function M.text(buf)
  local empty = vim.api.nvim_buf_call(buf, function()
    return vim.fn.line2byte(vim.fn.line('$') + 1) == -1
  end)
  if empty then
    return ''
  end
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local nl = vim.bo[buf].fileformat == 'dos' and '\r\n' or '\n'
  local text = table.concat(lines, nl)
  if vim.bo[buf].eol or (vim.bo[buf].fixeol and not vim.bo[buf].binary) then
    text = text .. nl
  end
  if vim.bo[buf].bomb then
    text = BOM .. text
  end
  return text
end

--- The path with symbolic links resolved (its folder's, for a file that
--- does not exist yet), so it compares with the root, which is resolved.
local function real(path)
  local r = vim.uv.fs_realpath(path)
  if r then
    return r
  end
  local dir = vim.uv.fs_realpath(vim.fs.dirname(path))
  return dir and (dir .. '/' .. vim.fs.basename(path)) or path
end

--- The path relative to the root, or nil outside it.
local function relative(path)
  local root = client.root
  local p = real(path)
  if root ~= nil and p:sub(1, #root + 1) == root .. '/' then
    return p:sub(#root + 2)
  end
end

local function eligible(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return false
  end
  local name = vim.api.nvim_buf_get_name(buf)
  local enc = vim.bo[buf].fileencoding
  return name ~= '' and relative(name) ~= nil and (enc == '' or enc == 'utf-8')
    and not vim.bo[buf].binary
end

--- The attached buffer a notification is about: by the id the server gave
--- it (paths change with renames, and two buffers may hold one for a
--- moment during a swap), else by its path relative to the root.
local function find(params)
  local id = type(params) == 'table' and params.buffer or nil
  local rel = type(params) == 'table' and params.path or params
  local by_id = id ~= nil and id ~= vim.NIL
  for buf, b in pairs(bufs) do
    local same
    if by_id and b.id ~= nil then
      same = b.id == id
    else
      same = b.rel == rel
    end
    if same and vim.api.nvim_buf_is_valid(buf) then
      return buf, b
    end
  end
end

--- Tells the server what the buffer holds now, with the last
--- notification applied to it. A report of an unchanged version is sent
--- only when `force` says so (the answer to a notification).
local function report(buf, method, force)
  local b = bufs[buf]
  if not b or b.applying then
    return
  end
  local v = version(buf)
  method = method or 'buffer/changed'
  if method == 'buffer/changed' and b.sent == v and not force then
    return
  end
  b.sent = v
  local text, dirty = M.text(buf), vim.bo[buf].modified
  if not dirty then
    -- Nothing unsaved: the server takes the buffer as its own base.
    set_base(buf, text)
  end
  client.request(method, {
    path = b.rel,
    text = text,
    dirty = dirty,
    version = v,
    applied = b.seq,
  })
end

local function read_file(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

local function sha256(data)
  return data and vim.fn.sha256(data) or nil
end

-- Status ---------------------------------------------------------------

--- The statusline item of `buf`: the server's state first (dead, hung,
--- root lost), then the buffer's (conflict, deleted, settled regions).
function M.status_of(buf)
  local status = client.status()
  if status.state == 'dead' or status.state == 'hung' then
    return '[mend: ' .. status.state .. ']'
  elseif status.root_lost then
    return '[mend: root lost]'
  end
  return M.statusline(buf)
end

--- Keeps `b:mend_status` (what |mend.statusline()| says for the buffer)
--- up to date, for statuslines that read variables.
local function refresh_status(buf)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.b[buf].mend_status = M.status_of(buf)
  end
end

--- Refreshes `b:mend_status` of every attached buffer.
function M.refresh_statuses()
  for buf in pairs(bufs) do
    refresh_status(buf)
  end
end

table.insert(client.status_listeners, function() M.refresh_statuses() end)

-- Conflict mode --------------------------------------------------------

local FLAG = '%#ErrorMsg# mend: conflict %* resolve the <<<<<<< markers, then :w '

local function set_winbars(buf, on)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if on then
      if vim.w[win].mend_winbar == nil then
        vim.w[win].mend_winbar = vim.wo[win].winbar
      end
      vim.wo[win].winbar = FLAG
    elseif vim.w[win].mend_winbar ~= nil then
      vim.wo[win].winbar = vim.w[win].mend_winbar
      vim.w[win].mend_winbar = nil
    end
  end
end

local function enter_conflict(buf, regions)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  local last = vim.api.nvim_buf_line_count(buf)
  for _, r in ipairs(regions or {}) do
    for row = r.start, math.min(r['end'], last) - 1 do
      vim.api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = 'MendConflict', priority = 200 })
    end
  end
  bufs[buf].conflict = true
  vim.b[buf].mend_conflict = true
  set_winbars(buf, true)
  refresh_status(buf)
end

local function leave_conflict(buf)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  if bufs[buf] then
    bufs[buf].conflict = false
  end
  vim.b[buf].mend_conflict = false
  set_winbars(buf, false)
  refresh_status(buf)
end

-- Settled regions ------------------------------------------------------

--- Highlights the regions a resolver settled (`--merge safe`), which git
--- would have left as conflicts: mend decided them, so the person sees
--- them until they save or dismiss them. Each line gets its own mark, so
--- the highlight moves with the person's edits.
local function mark_resolved(buf, regions)
  if type(regions) ~= 'table' or #regions == 0 then
    return
  end
  local last = vim.api.nvim_buf_line_count(buf)
  local by = {}
  for _, r in ipairs(regions) do
    -- A region that ends the file without a newline still has its last line.
    for row = r.start, math.min(math.max(r['end'], r.start + 1), last) - 1 do
      vim.api.nvim_buf_set_extmark(buf, resolved_ns, row, 0, { line_hl_group = 'MendResolved', priority = 150 })
    end
    by[r.resolver] = (by[r.resolver] or 0) + 1
  end
  local names = {}
  for name, n in pairs(by) do
    table.insert(names, n .. ' by ' .. name)
  end
  table.sort(names)
  vim.b[buf].mend_resolved = (vim.b[buf].mend_resolved or 0) + #regions
  refresh_status(buf)
  vim.notify('mend: ' .. bufs[buf].rel .. ': settled ' .. table.concat(names, ', ')
    .. ' where git would conflict; check the highlighted lines, then :w or :MendDismiss',
    vim.log.levels.WARN)
end

--- Clears the settled-region highlights of a buffer (after a save, or when
--- the person dismisses them).
function M.dismiss(buf)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, resolved_ns, 0, -1)
    vim.b[buf].mend_resolved = nil
    refresh_status(buf)
  end
end

--- The buffer's own statusline item (see |mend.statusline()|).
function M.statusline(buf)
  local b = bufs[buf]
  if b and b.conflict and b.held then
    return '[mend: conflict, file changed again]'
  elseif b and b.conflict then
    return '[mend: conflict]'
  elseif b and b.deleted then
    return '[mend: deleted]'
  elseif b and (vim.b[buf].mend_resolved or 0) > 0 then
    return '[mend: ' .. vim.b[buf].mend_resolved .. ' settled]'
  end
  return ''
end

-- Applying changes -----------------------------------------------------

--- The lines of a hunk's text, without their endings.
local function split(text, dos)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  if dos then
    for i, l in ipairs(lines) do
      lines[i] = l:gsub('\r$', '')
    end
  end
  return lines
end

--- Replaces buffer lines [s, e) with `lines`, through nvim_buf_set_text so
--- extmarks and the cursor outside the range stay put.
local function replace_lines(buf, s, e, lines)
  local count = vim.api.nvim_buf_line_count(buf)
  if e < count then
    local repl = vim.list_extend(vim.deepcopy(lines), { '' })
    vim.api.nvim_buf_set_text(buf, s, 0, e, 0, repl)
  elseif s < count then
    -- Through the end of the buffer.
    local last = vim.api.nvim_buf_get_lines(buf, count - 1, count, true)[1]
    if #lines > 0 then
      vim.api.nvim_buf_set_text(buf, s, 0, count - 1, #last, lines)
    elseif s > 0 then
      local prev = vim.api.nvim_buf_get_lines(buf, s - 1, s, true)[1]
      vim.api.nvim_buf_set_text(buf, s - 1, #prev, count - 1, #last, {})
    else
      vim.api.nvim_buf_set_lines(buf, 0, -1, true, {})
    end
  else
    -- After the last line.
    local last = vim.api.nvim_buf_get_lines(buf, count - 1, count, true)[1]
    local repl = vim.list_extend({ '' }, lines)
    vim.api.nvim_buf_set_text(buf, count - 1, #last, count - 1, #last, repl)
  end
end

--- Makes the buffer's options say how `text` is written: its line endings
--- ('fileformat': dos only when every line ends with CR LF; a mixed file
--- keeps its CRs in the lines), its final newline ('eol', and 'fixeol' off
--- when there is none, so :w writes it as the file has it) and its BOM.
--- Returns the text without the BOM.
local function take_format(buf, text)
  local body = text
  local bom = body:sub(1, 3) == BOM
  if bom then
    body = body:sub(4)
  end
  vim.bo[buf].bomb = bom
  local lf = select(2, body:gsub('\n', ''))
  if lf > 0 then
    local crlf = select(2, body:gsub('\r\n', ''))
    vim.bo[buf].fileformat = crlf == lf and 'dos' or 'unix'
  end
  local ends = body:sub(-1) == '\n'
  vim.bo[buf].eol = ends
  if not ends and body ~= '' then
    vim.bo[buf].fixeol = false
  end
  return body
end

--- Empties the buffer the way Neovim's own empty buffer is (no lines), so
--- it is written as an empty file.
local function make_empty(buf)
  vim.api.nvim_buf_call(buf, function() vim.cmd('silent keepjumps %delete _') end)
end

--- What a buffer just attached derives from (see `b.disk`). A clean one
--- was read from its file: if the file still holds its lines, its options
--- are made to say how the file is written (a file without a final
--- newline is written without one), and it derives from the file; if not,
--- from its own text, so :w waits for the reload. A buffer with unsaved
--- changes made while mend was not running derives from something unknown:
--- :w writes as Neovim does, asking if the file changed since it was read.
--- Returns the bytes and their hash; nil for a buffer with unsaved
--- changes whose origin is unknown.
local function derived_from(buf, name)
  if vim.bo[buf].modified then
    return nil
  end
  local data = read_file(name)
  if data ~= nil and data ~= M.text(buf) then
    take_format(buf, data)
    vim.bo[buf].modified = false
  end
  if data ~= nil and data == M.text(buf) then
    return data, sha256(data)
  end
  local text = M.text(buf)
  return text, sha256(text)
end

local function apply_change(buf, params)
  local text = params.text
  local body = take_format(buf, text)
  local dos = vim.bo[buf].fileformat == 'dos'
  local ok = pcall(function()
    local hunks = params.hunks or {}
    for i = #hunks, 1, -1 do
      local h = hunks[i]
      local t = h.start == 0 and h.text:gsub('^' .. BOM, '') or h.text
      replace_lines(buf, h.start, h['end'], split(t, dos))
    end
  end)
  if body == '' then
    make_empty(buf)
  elseif not ok or M.text(buf) ~= text then
    -- The hunks did not reproduce the text (an unusual ending): fall back
    -- to the whole text.
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, split(body, dos))
  end
end

--- After mend changed the buffer from the disk, Neovim's record of the
--- file's time is stale, and :w would ask whether to overwrite a file
--- changed since it was read. For a buffer equal to the file, :checktime
--- renews the record silently (the FileChangedShell handler lets a
--- time-only change through). 'autoread' is off meanwhile: with it,
--- Neovim would instead read the file again, an undo step of its own that
--- one `u` would take back before the agent's change.
local function refresh_timestamp(buf)
  local autoread = vim.api.nvim_get_option_value('autoread', { scope = 'local', buf = buf })
  vim.bo[buf].autoread = false
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent! checktime ' .. buf)
  end)
  vim.api.nvim_set_option_value('autoread', autoread, { scope = 'local', buf = buf })
end

-- Undo across an agent's change ----------------------------------------

--- Records the undo step that applied an agent's change (`before` is the
--- sequence number before it; the same when nothing changed). A reload
--- makes the buffer the file, so earlier changes are all in it.
local function record_applied(buf, kind, before)
  local b = bufs[buf]
  local seq = undo.current(buf)
  if seq ~= before then
    b.applied = kind == 'reload' and {} or b.applied
    table.insert(b.applied, seq)
  end
end

--- Asks, as Neovim asks before writing over a file changed since it was
--- read (y or n, typed), before a write removes agent's changes that an
--- undo took out of the buffer. Without a UI and no key typed ahead,
--- nobody can answer: the answer is no.
local function ask_undone(buf)
  local question = 'WARNING: an undo took back changes another program wrote to '
    .. bufs[buf].rel .. ', and writing removes them from the file. Write anyway (y/n)?'
  while true do
    if #vim.api.nvim_list_uis() == 0 and vim.fn.getchar(1) == 0 then
      return false
    end
    vim.api.nvim_echo({ { question, 'WarningMsg' } }, false, {})
    local ok, key = pcall(vim.fn.getcharstr)
    if not ok or key == 'n' or key == 'N' or key == '\27' or key == '\3' then
      return false
    elseif key == 'y' or key == 'Y' then
      return true
    end
  end
end

--- Asks (see ask_undone), and says so when the answer is no.
local function confirm_undone(buf)
  local declined = 'mend: ' .. bufs[buf].rel .. ' not written; :w! writes it anyway'
  local answer = ask_undone(buf)
  if not answer then
    vim.notify(declined, vim.log.levels.WARN)
  end
  return answer
end

--- The command that writes the buffer to its own file after mend changed
--- it, or nil when the user declined. When the file still holds exactly
--- the bytes mend merged into the buffer, and no undo took the agent's
--- changes back out, nothing would be lost: it writes with !. Otherwise
--- Neovim (or, after such an undo, mend) asks as usual.
local function own_write(buf, bang)
  local b = bufs[buf]
  -- After a rename, Neovim wants :w! for a buffer with unsaved changes;
  -- that first :w! still gets mend's checks (a second one writes anyway).
  local renamed = b.renamed
  b.renamed = false
  if bang and not renamed then
    return 'write!'
  end
  if client.status().state ~= 'running' then
    -- Nobody would merge the file's change: write as Neovim does, which
    -- asks when the file changed since it was read.
    vim.notify('mend: the server is not running: ' .. b.rel .. ' is written without merging',
      vim.log.levels.WARN)
    return 'write'
  end
  local data = read_file(b.path)
  if data ~= nil and data ~= M.text(buf) and b.disk ~= nil and sha256(data) ~= b.disk then
    -- The file holds a change the buffer has not taken (in flight, or
    -- held while conflict markers stand): writing would erase it. The
    -- server brings it into the buffer first.
    vim.notify('mend: ' .. b.rel .. ' changed on disk since the buffer took it; it is being '
      .. 'merged into the buffer first: check it and :w again (:w! overwrites the file)',
      vim.log.levels.WARN)
    report(buf, 'buffer/resync', true)
    return nil
  end
  if data ~= nil and data ~= M.text(buf) and undo.any_undone(buf, b.applied) then
    return confirm_undone(buf) and 'write!' or nil
  end
  local merged = data ~= nil and b.disk ~= nil and sha256(data) == b.disk
  return ((merged or renamed) and not vim.bo[buf].readonly) and 'write!' or 'write'
end

--- After mend changed the buffer, until the next write of its file, :w
--- goes through this BufWriteCmd (see own_write).
local function guard_write(buf)
  local b = bufs[buf]
  if b.write_cmd then
    return
  end
  b.write_cmd = vim.api.nvim_create_autocmd('BufWriteCmd', {
    group = group,
    buffer = buf,
    nested = true,
    callback = function(args)
      pcall(vim.api.nvim_del_autocmd, b.write_cmd)
      b.write_cmd = nil
      local writes, bang = b.writes, vim.v.cmdbang == 1
      local ok, err = pcall(function()
        local target = vim.fn.fnamemodify(args.match, ':p')
        if real(target) ~= real(b.path) then
          vim.cmd((bang and 'write! ' or 'write ') .. vim.fn.fnameescape(target))
          return
        end
        local cmd = own_write(buf, bang)
        if cmd then
          vim.cmd(cmd)
        end
      end)
      if bufs[buf] == b and b.writes == writes then
        -- Its file was not written: the next :w goes through here again.
        guard_write(buf)
      end
      if not ok then
        error(err, 0)
      end
    end,
  })
end

--- A write of the buffer to its own file: the file holds what the buffer
--- holds, agent's changes included or knowingly dropped. Returns whether
--- it was its own file.
local function note_write(buf, file)
  local b = bufs[buf]
  if real(vim.fn.fnamemodify(file, ':p')) ~= real(b.path) then
    return false
  end
  b.applied = {}
  b.writes = b.writes + 1
  return true
end

--- Applies the change as one undo step of its own; returns pcall's
--- results and the undo sequence number before the change. A buffer that
--- already holds the text gets no step: an empty one would take a `u`.
local function apply_step(buf, params)
  if M.text(buf) == params.text then
    return true, nil, undo.current(buf)
  end
  undo.close_block(buf)
  local before = undo.current(buf)
  local ok, err = pcall(apply_change, buf, params)
  undo.close_block(buf)
  return ok, err, before
end

local function on_change(kind)
  return function(params)
    local buf, b = find(params)
    if not buf then
      return
    end
    if params.version ~= nil and params.version ~= vim.NIL and params.version ~= version(buf) then
      -- The buffer moved on since the server last heard of it: refuse, and
      -- the server merges again against what the buffer holds now.
      report(buf, 'buffer/resync', true)
      return
    end
    b.applying = true
    local ok, err, before = apply_step(buf, params)
    b.applying = false
    if not ok then
      vim.notify('mend: could not update the buffer: ' .. tostring(err), vim.log.levels.ERROR)
      return
    end
    b.deleted = false
    vim.b[buf].mend_deleted = false
    refresh_status(buf)
    if kind == 'reload' then
      vim.bo[buf].modified = false
    elseif kind == 'conflict' then
      enter_conflict(buf, params.conflicts)
      vim.notify('mend: ' .. params.path .. ' changed on disk where you edited it; '
        .. 'resolve the conflict markers and :w', vim.log.levels.WARN)
    end
    mark_resolved(buf, params.resolved)
    b.disk = params.disk_sha256
    -- A merge names the file's bytes it took (`disk`); a reload's are its
    -- text.
    set_base(buf, type(params.disk) == 'string' and params.disk or params.text)
    b.seq = params.seq
    b.held = false
    record_applied(buf, kind, before)
    if not vim.bo[buf].modified then
      refresh_timestamp(buf)
    end
    guard_write(buf)
    -- The answer, before anything else can change the buffer: the server
    -- takes the new text as derived from the file it merged.
    report(buf, 'buffer/changed', true)
  end
end

client.on('buffer/reload', on_change('reload'))
client.on('buffer/merged', on_change('merged'))
client.on('buffer/conflict', on_change('conflict'))

client.on('buffer/deleted', function(params)
  local buf, b = find(params)
  if not buf then
    return
  end
  b.deleted = true
  vim.b[buf].mend_deleted = true
  refresh_status(buf)
  -- Unsaved, so quitting asks; :w recreates the file.
  vim.bo[buf].modified = true
  report(buf)
  vim.notify('mend: ' .. params.path .. ' was deleted on disk; :w recreates it, :bdelete! abandons it',
    vim.log.levels.WARN)
end)

--- The buffer named `name`, other than `except`, if any.
local function named(name, except)
  for _, other in ipairs(vim.api.nvim_list_bufs()) do
    if other ~= except and vim.api.nvim_buf_get_name(other) == name then
      return other
    end
  end
end

--- Gives a buffer a name no other buffer has, derived from `name`; its
--- attachment (if any) keeps the path the server knows it by.
local function set_name_aside(buf, name, suffix)
  local n, candidate = 1, name .. suffix
  while named(candidate, buf) do
    n = n + 1
    candidate = name .. suffix .. n
  end
  local b = bufs[buf]
  if b then
    b.renaming = true
  end
  vim.api.nvim_buf_set_name(buf, candidate)
  if b then
    b.renaming = false
  end
  return candidate
end

client.on('buffer/renamed', function(params)
  local buf, b = find(params)
  if not buf then
    return
  end
  -- In a swap, the new name still belongs to the other buffer, whose own
  -- rename follows: it steps aside until then.
  local holder = named(params.to_abspath, buf)
  if holder then
    set_name_aside(holder, params.to_abspath, '.mend-moving')
  end
  b.path, b.rel = params.to_abspath, params.to
  set_base(buf, b.base)
  b.renaming = true
  vim.api.nvim_buf_set_name(buf, params.to_abspath)
  local note = 'mend: ' .. params.path .. ' was renamed to ' .. params.to
  if not vim.bo[buf].modified then
    -- Make Neovim consider the new name edited, so :w needs no !.
    vim.api.nvim_buf_call(buf, function() vim.cmd('silent! edit!') end)
  else
    -- Neovim takes the new name as not yet edited and asks for :w!; mend
    -- still checks that first one.
    b.renamed = true
    note = note .. '; its unsaved changes are written with :w!'
  end
  b.renaming = false
  vim.notify(note, vim.log.levels.INFO)
end)

client.on('buffer/replaced', function(params)
  local buf = find(params)
  if not buf then
    return
  end
  -- Its file is gone, and its path now belongs to the buffer of the file
  -- moved onto it: this one keeps its text under another name, unsynced.
  M.detach(buf)
  agreed[buf] = nil
  local aside = set_name_aside(buf, params.abspath, '.replaced')
  vim.bo[buf].modified = true
  vim.notify('mend: ' .. params.by .. ' was moved onto ' .. params.path .. '; this buffer keeps '
    .. 'the text it had as ' .. vim.fn.fnamemodify(aside, ':t')
    .. ' (not synced): :w {file} saves it elsewhere', vim.log.levels.WARN)
end)

client.on('buffer/skipped', function(params)
  local buf, b = find(params)
  if not buf then
    return
  end
  if params.reason == 'conflict' then
    -- Merged once the markers are gone; until then :w does not overwrite it.
    b.held = true
    refresh_status(buf)
  end
  vim.notify('mend: ' .. params.path .. ': ' .. (params.message or params.reason),
    vim.log.levels.WARN)
end)

-- Attaching ------------------------------------------------------------

function M.attach(buf)
  if bufs[buf] or not eligible(buf) then
    return
  end
  local name = vim.api.nvim_buf_get_name(buf)
  local b = { path = name, rel = relative(name), applied = {}, writes = 0 }
  bufs[buf] = b
  b.sent = version(buf)
  local base
  base, b.disk = derived_from(buf, name)
  local kept = agreed[buf]
  if base == nil and kept ~= nil and kept.rel == b.rel then
    -- Unsaved changes made against what the last server agreed on: the
    -- new one merges whatever the file gained since.
    base, b.disk = kept.base, sha256(kept.base)
  end
  set_base(buf, base)
  refresh_status(buf)
  -- Neovim would otherwise read the file again on its own when a clean
  -- buffer's file changes, at any moment, half-written or not.
  vim.bo[buf].autoread = false
  local dirty = vim.bo[buf].modified
  client.request('buffer/open', {
    path = b.rel, text = M.text(buf), dirty = dirty, version = b.sent,
    disk = dirty and base or nil,
  }, function(err, result)
    if err then
      vim.notify('mend: ' .. b.rel .. ': ' .. client.describe(err), vim.log.levels.WARN)
    elseif result and bufs[buf] == b then
      b.id = result.buffer
    end
  end)
  guard_write(buf)
  local function on(events, fn)
    vim.api.nvim_create_autocmd(events, { group = group, buffer = buf, callback = fn })
  end
  -- Every change, in any mode, from any source (undo included); the
  -- report runs once the change is complete.
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      if bufs[buf] ~= b then
        return true
      end
      vim.schedule(function() report(buf) end)
    end,
  })
  on('BufWritePost', function(args)
    if not note_write(buf, args.match) then
      -- Written to another file: this buffer's own file is as it was.
      return
    end
    leave_conflict(buf)
    M.dismiss(buf)
    b.deleted = false
    b.held = false
    vim.b[buf].mend_deleted = false
    refresh_status(buf)
    b.sent = version(buf)
    local text = read_file(b.path) or M.text(buf)
    b.disk = sha256(text)
    set_base(buf, text)
    client.request('buffer/saved', { path = b.rel, text = text, version = b.sent })
    guard_write(buf)
  end)
  on('BufWinEnter', function()
    if b.conflict then
      set_winbars(buf, true)
    end
  end)
  on({ 'BufWipeout', 'BufDelete' }, function()
    if bufs[buf] then
      client.request('buffer/close', { path = b.rel })
      bufs[buf] = nil
    end
    agreed[buf] = nil
  end)
  on('BufFilePost', function()
    -- :file or :saveas gave the buffer another name.
    if b.renaming or not bufs[buf] then
      return
    end
    client.request('buffer/close', { path = b.rel })
    bufs[buf] = nil
    vim.api.nvim_clear_autocmds({ group = group, buffer = buf })
    M.attach(buf)
  end)
end

--- Attaches every buffer under the root, now and when opened. Running it
--- again replaces its autocommands.
function M.enable()
  local enabled = vim.api.nvim_create_augroup('mend.enable', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
    group = enabled,
    callback = function(args) M.attach(args.buf) end,
  })
  vim.api.nvim_create_autocmd('FileChangedShell', {
    group = enabled,
    callback = function(args)
      -- mend keeps attached buffers in step; Neovim should neither reload
      -- nor ask. A change of time only goes through, so Neovim renews its
      -- record silently. Other buffers get Neovim's usual question.
      local managed = bufs[args.buf] and vim.v.fcs_reason ~= 'time'
      vim.v.fcs_choice = managed and '' or 'ask'
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

--- Stops syncing one buffer (the server forgot it, or is told to).
function M.detach(buf)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_clear_autocmds({ group = group, buffer = buf })
    leave_conflict(buf)
  end
  bufs[buf] = nil
end

--- Detaches every buffer and stops attaching new ones (before the server
--- that knew them is replaced). Their conflict mode ends with it.
function M.disable()
  pcall(vim.api.nvim_del_augroup_by_name, 'mend.enable')
  for buf in pairs(bufs) do
    M.detach(buf)
  end
end

--- Attached buffers: bufnr -> { path, sent, conflict, deleted }.
function M.buffers()
  return bufs
end

--- Reports the buffer's text now, without waiting for the scheduled report.
M.report = report

return M
