-- lifecycle.lua: the whole connection lifecycle through Neovim's built-in JSON-RPC client
-- (vim.lsp.rpc, as Neovim's LSP client uses it): initialize, initialized, session/create,
-- session/append, session/read, shutdown, exit. Prints "exit-code N" with the sidecar's exit code
-- and exits Neovim with it.
--   nvim --headless -u NONE -c 'luafile lifecycle.lua'   (SIDECAR_CMD: JSON array, SIDECAR_STORE)
local here = debug.getinfo(1, 'S').source:sub(2):match('^(.*[/\\])') or './'
package.path = here .. '?.lua;' .. package.path
local sidecar = require('session_sidecar')

local cmd = vim.json.decode(os.getenv('SIDECAR_CMD') or '["session-sidecar"]')
if os.getenv('SIDECAR_STORE') then
  cmd[#cmd + 1] = '--store'
  cmd[#cmd + 1] = os.getenv('SIDECAR_STORE')
end

local exit_code
local client = sidecar.rpc_start(cmd, {
  on_exit = function(code) exit_code = code end,
  on_error = function(code, err) io.stderr:write('rpc error ', tostring(code), ' ', vim.inspect(err), '\n') end,
}, {})

--- One request, waited for: the result, or nil and the error.
local function request(method, params)
  local done, result, err = false, nil, nil
  client.request(method, params, function(e, r) done, result, err = true, r, e end)
  if not vim.wait(15000, function() return done end, 10) then return nil, 'timeout' end
  return result, err
end

local function fail(what, err)
  io.stdout:write('failed ', what, ': ', vim.inspect(err), '\n')
  vim.cmd('cquit 3')
end

local init, err = request('initialize', { protocolVersion = 1, clientInfo = { name = 'nvim vim.lsp.rpc' } })
if not init then fail('initialize', err) end
client.notify('initialized', vim.empty_dict())
local created; created, err = request('session/create', { title = 'neovim' })
if not created then fail('session/create', err) end
local appended; appended, err = request('session/append', {
  sessionId = created.sessionId,
  records = { { kind = 'message', message = { role = 'user', content = 'hi' } } },
})
if not appended then fail('session/append', err) end
local page; page, err = request('session/read', { sessionId = created.sessionId })
if not page then fail('session/read', err) end
io.stdout:write(string.format('protocol %d lastSeq %d records %d\n', init.protocolVersion, appended.lastSeq, #page.records))
local _, shutdown_err = request('shutdown', nil) -- sent as "params": null, like Emacs's jsonrpc.el
if shutdown_err then fail('shutdown', shutdown_err) end
client.notify('exit', nil)
vim.wait(10000, function() return exit_code ~= nil end, 10)
io.stdout:write('exit-code ', tostring(exit_code), '\n')
vim.cmd((exit_code == 0) and 'qall!' or ('cquit ' .. tostring(exit_code or 4)))
