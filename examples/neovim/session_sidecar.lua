-- session_sidecar.lua: follow a session-sidecar session live in a Neovim scratch buffer.
--
-- Uses only Neovim's built-in JSON-RPC client, vim.lsp.rpc.start: the sidecar speaks JSON-RPC 2.0
-- with LSP Content-Length framing when started with `--framing lsp`, which is exactly what that
-- client reads and writes. Works with Neovim 0.7 and later (the signature of vim.lsp.rpc.start
-- changed in 0.10; both are handled).
--
--   local sidecar = require('session_sidecar')
--   sidecar.setup({ cmd = { 'session-sidecar' }, store = '/path/to/store' })
--   :SessionSidecarFollow [session-id]   -- no id: a new session is created
--   :SessionSidecarSay some text         -- append a user message to the followed session
--
-- Protocol reference: protocol/README.md (initialize, session/open, session/create,
-- session/subscribe and its session/didAppend notifications, section 14).

local M = {}

local defaults = { cmd = { 'session-sidecar' } }

--- vim.lsp.rpc.start: (cmd, dispatchers, extra) since Neovim 0.10; (cmd, cmd_args, dispatchers, extra) before.
function M.rpc_start(cmd, dispatchers, extra)
  local rpc = vim.lsp.rpc
  if vim.fn.has('nvim-0.10') == 1 then
    local ok, client = pcall(rpc.start, cmd, dispatchers, extra)
    if ok then return client end
  end
  local args = {}
  for i = 2, #cmd do args[#args + 1] = cmd[i] end
  return rpc.start(cmd[1], args, dispatchers, extra)
end

local function is_null(v)
  return v == nil or v == vim.NIL
end

local function str(v)
  if type(v) == 'string' then return v end
  if is_null(v) then return '' end
  return tostring(v)
end

local function json(v)
  local ok, text = pcall(vim.json.encode, v)
  return ok and text or tostring(v)
end

local function short(text, max)
  text = text:gsub('%s+', ' ')
  if #text > max then return text:sub(1, max - 3) .. '...' end
  return text
end

--- A string stored as a blob appears in records as {"$blob": "sha256:...", "bytes": N}.
local function blob_label(v)
  if type(v) == 'table' and type(v['$blob']) == 'string' then
    return string.format('[blob: %s bytes, %s...]', str(v.bytes), v['$blob']:sub(1, 15))
  end
end

--- The text of a message's content: a string, or the text of its parts.
local function content_text(content)
  if type(content) == 'string' then return content end
  if type(content) ~= 'table' then return '' end
  local blob = blob_label(content)
  if blob then return blob end
  local parts = {}
  for _, part in ipairs(content) do
    if type(part) == 'string' then
      parts[#parts + 1] = part
    elseif type(part) == 'table' and type(part.text) == 'string' then
      parts[#parts + 1] = part.text
    elseif type(part) == 'table' and type(part.type) == 'string' then
      parts[#parts + 1] = '[' .. part.type .. ']'
    end
  end
  return table.concat(parts, '\n')
end

local function add_text(lines, text)
  for line in (text .. '\n'):gmatch('(.-)\r?\n') do lines[#lines + 1] = '    ' .. line end
end

--- The lines that show one stored record (seq, role or kind, content).
function M.format_record(rec)
  local lines = {}
  local ts = (str(rec.ts):gsub('T', ' '):gsub('%.%d+Z$', ''))
  local head = string.format('#%s %s  ', str(rec.seq), ts)
  local kind = str(rec.kind)
  if kind == 'message' then
    local m = type(rec.message) == 'table' and rec.message or {}
    local who = str(m.role)
    if who == 'tool' and not is_null(m.toolCallId) then who = who .. ' [' .. str(m.toolCallId) .. ']' end
    lines[1] = head .. who
    local text = content_text(m.content)
    if text ~= '' then add_text(lines, text) end
    if type(m.toolCalls) == 'table' then
      for _, call in ipairs(m.toolCalls) do
        lines[#lines + 1] = string.format('    -> %s(%s)', str(call.name), short(str(call.arguments), 120))
      end
    end
  elseif kind == 'interruption' then
    lines[1] = head .. 'interruption: ' .. str(rec.reason) .. ' (during ' .. str(rec.phase) .. ')'
    if type(rec.assistantText) == 'string' and rec.assistantText ~= '' then add_text(lines, rec.assistantText) end
  elseif kind == 'turn' then
    local what = {}
    for _, k in ipairs({ 'event', 'turnKind', 'phase', 'outcome' }) do
      if type(rec[k]) == 'string' then what[#what + 1] = rec[k] end
    end
    lines[1] = head .. 'turn ' .. table.concat(what, ' ')
  elseif kind == 'checkpoint' then
    lines[1] = head .. 'checkpoint through #' .. str(rec.throughSeq)
    add_text(lines, str(rec.summary))
  elseif kind == 'event' then
    lines[1] = head .. 'event ' .. str(rec.type) .. (is_null(rec.payload) and '' or '  ' .. short(json(rec.payload), 120))
  else
    local rest = {}
    for k, v in pairs(rec) do
      if k ~= 'seq' and k ~= 'ts' and k ~= 'kind' then rest[k] = v end
    end
    lines[1] = head .. kind .. '  ' .. short(json(rest), 160)
  end
  return lines
end

--- Spawns a sidecar. opts: cmd (string[], default {'session-sidecar'}), store or workspace (paths),
--- on_exit(code, signal). Returns an object with request(method, params, cb(err, result)),
--- notify(method, params), on(method, fn(params)), initialize(cb), stop(cb).
function M.start(opts)
  opts = vim.tbl_extend('force', defaults, opts or {})
  local cmd = vim.deepcopy(opts.cmd)
  vim.list_extend(cmd, { '--framing', 'lsp' })
  if opts.store then vim.list_extend(cmd, { '--store', opts.store }) end
  if opts.workspace then vim.list_extend(cmd, { '--workspace', opts.workspace }) end

  local handlers = {}
  local sc = { exited = false }
  local dispatchers = {
    -- Called from the RPC read loop (possibly a fast event): defer to the main loop.
    notification = function(method, params)
      local handler = handlers[method]
      if handler then vim.schedule(function() handler(params) end) end
    end,
    server_request = function()
      return nil, vim.lsp.rpc.rpc_response_error(-32601)
    end,
    on_exit = function(code, signal)
      sc.exited = true
      if opts.on_exit then vim.schedule(function() opts.on_exit(code, signal) end) end
    end,
    on_error = function(code, err)
      if opts.on_error then vim.schedule(function() opts.on_error(code, err) end) end
    end,
  }
  local client = M.rpc_start(cmd, dispatchers, {})
  sc.client = client

  function sc.request(method, params, cb)
    return client.request(method, params, function(err, result)
      if cb then vim.schedule(function() cb(err, result) end) end
    end)
  end

  function sc.notify(method, params)
    return client.notify(method, params)
  end

  function sc.on(method, fn)
    handlers[method] = fn
  end

  function sc.initialize(cb)
    sc.request('initialize', {
      protocolVersion = 1,
      processId = vim.fn.getpid(),
      clientInfo = { name = 'neovim-session-sidecar' },
    }, function(err, result)
      if not err then sc.notify('initialized', vim.empty_dict()) end
      cb(err, result)
    end)
  end

  --- An orderly stop: shutdown (the sidecar finishes what is in flight), then exit.
  function sc.stop(cb)
    if sc.exited or (client.is_closing and client.is_closing()) then
      if cb then cb() end
      return
    end
    sc.request('shutdown', nil, function()
      sc.notify('exit', nil)
      if cb then cb() end
    end)
  end

  return sc
end

local function describe_error(err)
  if type(err) == 'table' then return string.format('%s (%s)', str(err.message), str(err.code)) end
  return str(err)
end

--- Follows a session in a scratch buffer: spawns a sidecar, initializes, opens `session_id` for
--- reading (or creates a session when none is given), subscribes, and appends every record of
--- each session/didAppend notification to the buffer as it arrives.
--- opts: the options of M.start, plus session_id?, title? (for a created session),
--- on_ready(info {session_id, last_seq, buf}), on_record(record, lines), on_error(message).
--- Returns a handle: {sidecar, buf, session_id, stop(cb)}.
function M.follow(opts)
  opts = opts or {}
  local handle = {}
  local fail = function(message)
    if opts.on_error then opts.on_error(message) else vim.notify('session-sidecar: ' .. message, vim.log.levels.ERROR) end
  end
  local sc = M.start(vim.tbl_extend('force', opts, {
    on_error = function(_, err) fail('connection error: ' .. describe_error(err)) end,
  }))
  handle.sidecar = sc
  handle.stop = function(cb) sc.stop(cb) end

  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_option(buf, 'bufhidden', 'hide')
  vim.api.nvim_buf_set_option(buf, 'swapfile', false)
  handle.buf = buf
  local first_line = true
  local function append_lines(lines)
    if first_line then
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
      first_line = false
    else
      vim.api.nvim_buf_set_lines(buf, -1, -1, false, lines)
    end
  end

  local delivered = 0
  local function subscribe(after_seq)
    sc.request('session/subscribe', { sessionId = handle.session_id, afterSeq = after_seq }, function(err, result)
      if err then return fail('session/subscribe: ' .. describe_error(err)) end
      if opts.on_ready and after_seq == 0 then
        opts.on_ready({ session_id = handle.session_id, last_seq = result.lastSeq, buf = buf })
      end
    end)
  end

  sc.on('session/didAppend', function(params)
    if params.sessionId ~= handle.session_id then return end
    for _, rec in ipairs(params.records or {}) do
      local lines = M.format_record(rec)
      append_lines(lines)
      delivered = math.max(delivered, rec.seq or 0)
      if opts.on_record then opts.on_record(rec, lines) end
    end
  end)
  -- A client that reads too slowly is dropped; resubscribing from what it got goes on.
  sc.on('session/didOverflow', function(params)
    if params.sessionId == handle.session_id then subscribe(params.lastDeliveredSeq or delivered) end
  end)

  local function opened(session_id, title)
    handle.session_id = session_id
    pcall(vim.api.nvim_buf_set_name, buf, 'session-sidecar://' .. session_id)
    append_lines({ string.format('# %s (%s)', title ~= '' and title or 'untitled', session_id), '' })
    subscribe(0)
  end

  sc.initialize(function(err)
    if err then return fail('initialize: ' .. describe_error(err)) end
    if opts.session_id then
      sc.request('session/open', { sessionId = opts.session_id, mode = 'read' }, function(e, result)
        if e then return fail('session/open: ' .. describe_error(e)) end
        opened(opts.session_id, str(result.title))
      end)
    else
      sc.request('session/create', { title = opts.title or 'Neovim session' }, function(e, result)
        if e then return fail('session/create: ' .. describe_error(e)) end
        opened(result.sessionId, opts.title or 'Neovim session')
      end)
    end
  end)
  return handle
end

local current

--- :SessionSidecarFollow [id] and :SessionSidecarSay text. opts: as M.start (cmd, store, workspace).
function M.setup(opts)
  defaults = vim.tbl_extend('force', defaults, opts or {})
  vim.api.nvim_create_user_command('SessionSidecarFollow', function(c)
    if current then current.stop() end
    current = M.follow({ session_id = c.args ~= '' and c.args or nil })
    vim.api.nvim_set_current_buf(current.buf)
  end, { nargs = '?' })
  vim.api.nvim_create_user_command('SessionSidecarSay', function(c)
    if not (current and current.session_id) then return vim.notify('session-sidecar: follow a session first', vim.log.levels.WARN) end
    -- Appending needs the session open for writing in this sidecar (its writer lease).
    current.sidecar.request('session/open', { sessionId = current.session_id, mode = 'write' }, function(err)
      if err then return vim.notify('session-sidecar: ' .. describe_error(err), vim.log.levels.ERROR) end
      current.sidecar.request('session/append', {
        sessionId = current.session_id,
        records = { { kind = 'message', message = { role = 'user', content = c.args } } },
      }, function(e)
        if e then vim.notify('session-sidecar: ' .. describe_error(e), vim.log.levels.ERROR) end
      end)
    end)
  end, { nargs = '+' })
  vim.api.nvim_create_autocmd('VimLeavePre', {
    callback = function()
      if current then current.stop() end
    end,
  })
end

return M
