local M = {}

function M.setup(opts)
  opts = opts or {}
  for k, v in pairs(opts) do
    M[k] = v
end

return M
