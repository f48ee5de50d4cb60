-- What the review panels (:MendReview, :MendReview turn) share: messages,
-- a scratch buffer with its keys, its window, and replacing its lines.

local M = {}

function M.say(msg, level)
  vim.notify('mend: ' .. msg, level or vim.log.levels.INFO)
end

--- A scratch buffer named `name`, with `maps` ({ lhs, fn, desc }) and
--- `q` to close.
function M.create(name, filetype, maps)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].filetype = filetype
  for _, m in ipairs(maps) do
    vim.keymap.set('n', m[1], m[2], { buffer = buf, nowait = true, desc = m[3] })
  end
  vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = buf, nowait = true, desc = 'mend: close' })
  return buf
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
      return M.say(err.message, vim.log.levels.WARN)
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
