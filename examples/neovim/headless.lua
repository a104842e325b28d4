-- headless.lua: follow a session without a UI and print each record's lines to stdout, for
-- scripts and tests. Neovim 0.9+: nvim --headless -u NONE -l headless.lua
--                  any version:   nvim --headless -u NONE -c 'luafile headless.lua'
-- Environment:
--   SIDECAR_CMD         JSON array: the sidecar command (default ["session-sidecar"])
--   SIDECAR_STORE       the store directory (default: the sidecar's default store)
--   SIDECAR_SESSION     the session to follow (default: create one)
--   SIDECAR_UNTIL_SEQ   exit 0 once a record with this seq or higher was shown
--   SIDECAR_TIMEOUT_MS  give up (exit 2) after this long (default 30000)
-- Prints "ready <session id> lastSeq=<n>" once subscribed, then the lines of each record.

local here = debug.getinfo(1, 'S').source:sub(2):match('^(.*[/\\])') or './'
package.path = here .. '?.lua;' .. package.path
local sidecar = require('session_sidecar')

local function out(line)
  io.stdout:write(line, '\n')
  io.stdout:flush()
end

local until_seq = tonumber(os.getenv('SIDECAR_UNTIL_SEQ') or '')
local timeout = tonumber(os.getenv('SIDECAR_TIMEOUT_MS') or '') or 30000
local result

local follow = sidecar.follow({
  cmd = vim.json.decode(os.getenv('SIDECAR_CMD') or '["session-sidecar"]'),
  store = os.getenv('SIDECAR_STORE'),
  session_id = os.getenv('SIDECAR_SESSION'),
  on_ready = function(info)
    out(string.format('ready %s lastSeq=%d', info.session_id, info.last_seq))
  end,
  on_record = function(rec, lines)
    for _, line in ipairs(lines) do out(line) end
    if until_seq and (rec.seq or 0) >= until_seq then result = 0 end
  end,
  on_error = function(message)
    io.stderr:write('session-sidecar: ', message, '\n')
    result = 1
  end,
  on_exit = function(code)
    if result == nil then
      io.stderr:write('session-sidecar exited (code ', tostring(code), ')\n')
      result = 1
    end
  end,
})

if not vim.wait(timeout, function() return result ~= nil end, 20) then
  io.stderr:write('timed out\n')
  result = 2
end
-- The buffer holds what was shown.
local shown = vim.api.nvim_buf_get_lines(follow.buf, 0, -1, false)
out(string.format('buffer %d lines', #shown))
local stopped = false
pcall(follow.stop, function() stopped = true end)
vim.wait(5000, function() return stopped and follow.sidecar.exited end, 20)
vim.cmd(result == 0 and 'qall!' or ('cquit ' .. result))
