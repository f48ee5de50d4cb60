-- What the review panels (:MendReview, :MendReview turn) share: messages,
-- a scratch buffer with its keys, its window, and replacing its lines.

local M = {}

function M.say(msg, level)
  vim.notify('mend: ' .. msg, level or vim.log.levels.INFO)
end

--- The default key of each panel action; `setup({ keys = { … } })`
--- overrides any of them (`false` leaves the action without a key).
M.default_keys = {
  accept = 'a', reject = 'r', accept_file = 'p', reject_file = 'x',
  sync = 'u', diff = 'gd', refresh = 'R', close = 'q',
}

--- The key of `action`, as configured.
local function key_of(action)
  local keys = require('mend').config.keys or {}
  local k = keys[action]
  if k == nil then
    k = M.default_keys[action]
  end
  return k
end

--- A scratch buffer named `name`, with `maps` ({ action, fn, desc }, each
--- on its configured key) and the close key.
function M.create(name, filetype, maps)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].filetype = filetype
  table.insert(maps, { 'close', '<cmd>close<cr>', 'mend: close' })
  for _, m in ipairs(maps) do
    local lhs = key_of(m[1])
    if lhs then
      vim.keymap.set('n', lhs, m[2], { buffer = buf, nowait = true, desc = m[3] })
    end
  end
  return buf
end

local hl_ns = vim.api.nvim_create_namespace('mend.panel')

--- The highlight group of a status letter (`MendLetterM`, `MendLetterA`,
--- `MendLetterD`, `MendLetterR`, `MendLetterT`, and `MendLetterOther` for
--- `~M`, `?`, `!A` and the rest).
function M.letter_group(letter)
  local known = { M = true, A = true, D = true, R = true, T = true }
  letter = vim.trim(letter or '')
  return known[letter] and ('MendLetter' .. letter) or 'MendLetterOther'
end

--- Highlights the panel's lines: a file line's letter (its first column,
--- up to the first space) by its letter's group, and hunk headers
--- (`@@ … @@`) as `MendHunkHeader`. `kinds[i]` is `file` or `hunk` for
--- line i, nil for any other.
function M.highlight(buf, lines, kinds)
  vim.api.nvim_buf_clear_namespace(buf, hl_ns, 0, -1)
  for i, kind in pairs(kinds) do
    local line = lines[i] or ''
    if kind == 'file' then
      local letter = line:match('^(%S+)')
      if letter then
        vim.api.nvim_buf_set_extmark(buf, hl_ns, i - 1, 0, { end_col = #letter, hl_group = M.letter_group(letter) })
      end
    elseif kind == 'hunk' then
      vim.api.nvim_buf_set_extmark(buf, hl_ns, i - 1, 0, { end_col = #line, hl_group = 'MendHunkHeader' })
    end
  end
end

--- Shows `buf` in a window on the left, `width` columns wide, unless a
--- window shows it already.
function M.show(buf, width)
  if #vim.fn.win_findbuf(buf) == 0 then
    vim.cmd('topleft vsplit')
    vim.api.nvim_win_set_buf(0, buf)
    vim.api.nvim_win_set_width(0, width)
  end
end

--- Replaces the lines of a panel the person cannot edit.
function M.set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

--- Asks the server for `method` and draws the answer with `render` while
--- the panel `state` ({ buf }) is still open; a failure is said.
function M.refresh(client, method, state, render)
  client.request(method, vim.empty_dict(), function(err, res)
    if err then
      return M.say(client.describe(err), vim.log.levels.WARN)
    end
    if state.buf and vim.api.nvim_buf_is_valid(state.buf) then
      render(res)
    end
  end)
end

--- What `entries` holds for the cursor's line, or nil after saying there
--- is no `what` on it.
function M.under_cursor(entries, what)
  local at = entries[vim.api.nvim_win_get_cursor(0)[1]]
  if not at then
    M.say('no ' .. what .. ' on this line')
  end
  return at
end

return M
