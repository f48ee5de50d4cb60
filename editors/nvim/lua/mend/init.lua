-- mend for Neovim: buffers that stay in step when an agent writes their
-- files, and a review panel for pending changes. See :help mend.

local M = {}

---@class mend.Config
---@field cmd string[] The server command (default `{ 'mend', 'editor' }`).
---@field root string? The workspace root (default: the current directory).
---@field session string? The pending-changes session for :MendReview.
M.config = { cmd = { 'mend', 'editor' } }

--- Starts `mend editor` and reports every buffer under the root to it.
---@param opts mend.Config?
function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_extend('force', M.config, opts)
  require('mend.client').start(M.config)
  require('mend.sync').enable()
end

--- A statusline item: `[mend: conflict]` while the current buffer is in
--- conflict mode, `[mend: deleted]` when its file is gone, else empty.
function M.statusline()
  return require('mend.sync').statusline(vim.api.nvim_get_current_buf())
end

--- Defines the user commands (plugin/mend.lua calls this at startup).
function M.commands()
  local cmd = vim.api.nvim_create_user_command
  local function review() return require('mend.review') end
  cmd('MendStatus', function() review().status() end, { desc = 'mend: buffers and pending files' })
  cmd('MendReview', function() review().open() end, { desc = 'mend: review pending changes' })
  cmd('MendDiffLocal', function() review().diff_local() end,
    { desc = 'mend: diff this file against its pending output' })
end

return M
