-- A buffer's undo tree, as sync.lua needs it: the agent's changes are
-- undo steps of their own, and a write can tell whether an undo took one
-- of them back out of the buffer.

local M = {}

--- Closes the current undo block, so the next change is an undo step of
--- its own (setting 'undolevels' to itself does that).
function M.close_block(buf)
  vim.api.nvim_buf_call(buf, function() vim.cmd('noautocmd let &g:undolevels = &g:undolevels') end)
end

local function tree(buf)
  return vim.api.nvim_buf_call(buf, function() return vim.fn.undotree() end)
end

--- The undo sequence number of the buffer's current state.
function M.current(buf)
  return tree(buf).seq_cur
end

--- The sequence numbers from the root of the undo tree to `target`, or
--- nil when `target` is not in `entries`. Each entry's `alt` lists the
--- branches that start where it starts.
local function path_to(entries, target, prefix)
  local path = vim.list_slice(prefix)
  for _, e in ipairs(entries) do
    if e.alt then
      local found = path_to(e.alt, target, path)
      if found then
        return found
      end
    end
    table.insert(path, e.seq)
    if e.seq == target then
      return path
    end
  end
end

--- Every sequence number in the tree, as a set.
local function all_seqs(entries, set)
  set = set or {}
  for _, e in ipairs(entries) do
    set[e.seq] = true
    if e.alt then
      all_seqs(e.alt, set)
    end
  end
  return set
end

--- Whether any of the undo steps `seqs` is not part of the buffer's
--- current state: an undo took it back, or a new change branched off
--- before it. A step no longer in the tree ('undolevels' dropped it) is
--- behind every state, so it counts as part of it.
function M.any_undone(buf, seqs)
  if #seqs == 0 then
    return false
  end
  local t = tree(buf)
  local reached = {}
  for _, seq in ipairs(path_to(t.entries, t.seq_cur, {}) or {}) do
    reached[seq] = true
  end
  local known = all_seqs(t.entries)
  for _, seq in ipairs(seqs) do
    if known[seq] and not reached[seq] then
      return true
    end
  end
  return false
end

return M
