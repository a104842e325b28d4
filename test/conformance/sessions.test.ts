import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../helpers.js';
import { FRAMINGS, SidecarError, startSidecar, rejection } from './harness.js';

const msg = (role: string, content: unknown) => ({ kind: 'message' as const, message: { role, content } });


describe.each(FRAMINGS)('session methods over %s', (framing) => {
  it('create stores the header; open returns it with lastSeq', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const header = {
      cwd: '/work/project', title: 'Fix the build', systemPrompt: 'You are terse.',
      llm: { provider: 'openai', model: 'gpt-4o', baseUrl: 'https://api.example', apiKeyEnv: 'SIDECAR_TEST_UNSET_KEY' },
      metadata: { agent: 'demo', tags: ['a', 'b'] },
    };
    const { sessionId, createdAt } = await c.create(header);
    expect(sessionId).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    expect(createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await c.shutdown();
    const d = await startSidecar({ framing, store });
    const opened = await d.open({ sessionId });
    expect(opened).toEqual({ sessionId, createdAt, mode: 'write', lastSeq: 0, secrets: { registered: 0, unsetEnv: ['SIDECAR_TEST_UNSET_KEY'] }, turn: null, ...header });
    const journal = fs.readFileSync(path.join(store, 'sessions', sessionId, 'journal.jsonl'), 'utf8');
    expect(journal).toContain('"apiKeyEnv":"SIDECAR_TEST_UNSET_KEY"');
  });

  it('append assigns gapless seqs, batches are all-or-nothing, read pages by afterSeq/limit/kinds', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    expect(await c.append({ sessionId, records: [msg('user', 'hello')] })).toEqual({ firstSeq: 1, lastSeq: 1 });
    const batch = [
      { kind: 'message' as const, message: { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'bash', arguments: '{"cmd":"ls"}' }] } },
      { kind: 'event' as const, type: 'tool.started', payload: { id: 'c1' } },
      { kind: 'message' as const, message: { role: 'tool', toolCallId: 'c1', content: 'a\nb' } },
      { kind: 'interruption' as const, reason: 'user cancelled', phase: 'providerStream', assistantText: 'I was about' },
    ];
    expect(await c.append({ sessionId, records: batch })).toEqual({ firstSeq: 2, lastSeq: 5 });
    const all = await c.read({ sessionId });
    expect(all.records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(all.records.slice(1).map(({ seq: _s, ts: _t, ...r }) => r)).toEqual(batch);
    expect(all).toMatchObject({ lastSeq: 5, nextAfterSeq: null });
    const page = await c.read({ sessionId, afterSeq: 1, limit: 2 });
    expect(page.records.map((r) => r.seq)).toEqual([2, 3]);
    expect(page.nextAfterSeq).toBe(3);
    const events = await c.read({ sessionId, kinds: ['event', 'interruption'] });
    expect(events.records.map((r) => r.kind)).toEqual(['event', 'interruption']);
  });

  it('expectedLastSeq mismatch is Conflict and writes nothing', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create();
    await c.append({ sessionId, records: [msg('user', 'one')] });
    const before = snapshotTree(path.join(store, 'sessions'));
    const err = await rejection(c.append({ sessionId, records: [msg('user', 'two')], expectedLastSeq: 0 }));
    expect(err.code).toBe(-31003);
    expect(err.data).toMatchObject({ kind: 'Conflict', expectedLastSeq: 0, lastSeq: 1 });
    expect(snapshotTree(path.join(store, 'sessions'))).toEqual(before);
    expect(await c.append({ sessionId, records: [msg('user', 'two')], expectedLastSeq: 1 })).toEqual({ firstSeq: 2, lastSeq: 2 });
  });

  it('list shows sessions newest-updated first with message summaries, paged by cursor', async () => {
    const c = await startSidecar({ framing });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await c.create({ title: `s${i}` })).sessionId);
    await c.append({ sessionId: ids[1]!, records: [msg('user', `  first   ${'x'.repeat(200)}`), msg('assistant', [{ type: 'text', text: 'done' }])] });
    const first = await c.list({ limit: 2 });
    expect(first.sessions.map((s) => s.sessionId)).toEqual([ids[1], ids[4]]);
    expect(first.sessions[0]).toMatchObject({ title: 's1', lastSeq: 2, lastMessage: 'assistant: done' });
    expect(first.sessions[0]!.firstMessage).toHaveLength(120);
    expect(first.sessions[0]!.firstMessage!.startsWith('user: first xxx')).toBe(true);
    const rest = await c.list({ limit: 10, cursor: first.nextCursor });
    expect(rest.sessions.map((s) => s.sessionId)).toEqual([ids[3], ids[2], ids[0]]);
    expect(rest.nextCursor).toBeUndefined();
    expect((await rejection(c.list({ cursor: 'garbage' }))).code).toBe(-32602);
  });

  it('close then append is ReadOnly (not open); read still works; open read mode refuses appends', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    await c.append({ sessionId, records: [msg('user', 'x')] });
    expect(await c.close(sessionId)).toEqual({});
    const err = await rejection(c.append({ sessionId, records: [msg('user', 'y')] }));
    expect(err).toMatchObject({ code: -31009, data: { kind: 'ReadOnly', reason: 'notOpen' } });
    expect((await c.read({ sessionId })).lastSeq).toBe(1);
    expect((await c.open({ sessionId, mode: 'read' })).mode).toBe('read');
    expect((await rejection(c.append({ sessionId, records: [msg('user', 'y')] }))).kind).toBe('ReadOnly');
    expect((await c.open({ sessionId })).mode).toBe('write');
    expect(await c.append({ sessionId, records: [msg('user', 'y')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
  });

  it('a reader in another process sees records appended after it opened the session', async () => {
    const store = tempDir();
    const writer = await startSidecar({ framing, store });
    const { sessionId } = await writer.create({ title: 'shared' });
    await writer.append({ sessionId, records: [msg('user', 'one')] });
    const reader = await startSidecar({ framing, store });
    expect((await reader.open({ sessionId, mode: 'read' })).lastSeq).toBe(1);
    await writer.append({ sessionId, records: [msg('assistant', 'two'), msg('user', 'three')] });
    const page = await reader.read({ sessionId, afterSeq: 1 });
    expect(page.records.map((r) => ((r as { message?: { content: string } }).message as { content: string }).content)).toEqual(['two', 'three']);
    expect((await reader.open({ sessionId, mode: 'read' })).lastSeq).toBe(3);
    const listed = (await reader.list()).sessions[0];
    expect(listed).toMatchObject({ sessionId, lastSeq: 3, lastMessage: 'user: three' });
  });

  it('a second writer process is refused with SessionLocked naming the holder; readers are not', async () => {
    const store = tempDir();
    const a = await startSidecar({ framing, store });
    const { sessionId } = await a.create();
    await a.append({ sessionId, records: [msg('user', 'a1')] });
    const b = await startSidecar({ framing, store });
    const err = await rejection(b.open({ sessionId }));
    expect(err).toMatchObject({ code: -31014, data: { kind: 'SessionLocked', holder: { pid: a.child.pid } } });
    expect((await b.open({ sessionId, mode: 'read' })).lastSeq).toBe(1);
    await a.close(sessionId); // releases the lease
    expect((await b.open({ sessionId })).mode).toBe('write');
    expect(await b.append({ sessionId, records: [msg('user', 'b2')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    expect((await rejection(a.open({ sessionId }))).kind).toBe('SessionLocked');
  });

  it('unknown sessions and malformed ids get SessionNotFound and InvalidSessionId', async () => {
    const c = await startSidecar({ framing });
    for (const method of ['session/open', 'session/read', 'session/append']) {
      const params = { sessionId: '01ZZZZZZZZZZZZZZZZZZZZZZZZ', records: [msg('user', 'x')] };
      const p = method === 'session/append' ? params : { sessionId: params.sessionId };
      expect((await rejection(c.request(method, p))).code, method).toBe(-31001);
    }
    for (const bad of ['../etc', '.hidden', 'a/b', '', 'x'.repeat(129), 'ünï']) {
      const err = await rejection(c.open({ sessionId: bad }));
      expect(err.code, bad).toBe(-31002);
      expect(err.data?.kind).toBe('InvalidSessionId');
    }
  });

  it('invalid params get -32602 naming paths, never values, and change nothing on disk', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create();
    const before = snapshotTree(store);
    const cases: Array<[string, unknown, string]> = [
      ['session/append', { sessionId, records: [] }, 'records'],
      ['session/append', { sessionId, records: [{ kind: 'mystery', value: 'SECRET-VALUE-123' }] }, 'records[0].kind'],
      ['session/append', { sessionId, records: [{ kind: 'message', message: { role: 'user' }, seq: 5 }] }, 'records[0]'],
      ['session/append', { sessionId, records: [{ kind: 'message', message: { role: 42 } }] }, 'records[0].message.role'],
      ['session/read', { sessionId, limit: 0 }, 'limit'],
      ['session/create', { title: 7 }, 'title'],
      ['session/create', { llm: { apiKeyEnv: 'not a name' } }, 'llm.apiKeyEnv'],
      ['session/open', { sessionId, mode: 'rw' }, 'mode'],
      ['session/open', [sessionId], ''],
    ];
    for (const [method, params, where] of cases) {
      const err = await rejection(c.request(method, params));
      expect(err.code, `${method} ${where}`).toBe(-32602);
      expect(err.data?.kind).toBe('InvalidParams');
      const issues = err.data?.issues as Array<{ path: string; message: string }>;
      expect(issues.map((i) => i.path), `${method}`).toContain(where);
      expect(JSON.stringify(err)).not.toContain('SECRET-VALUE-123');
    }
    expect(snapshotTree(store)).toEqual(before);
  });

  it('a __proto__ member is refused, never silently dropped', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create();
    for (const [method, body] of [
      ['session/append', `{"sessionId":"${sessionId}","records":[{"kind":"message","message":{"role":"user","content":"x","__proto__":{"y":1}}}]}`],
      ['session/create', '{"metadata":{"__proto__":{"polluted":true},"a":2}}'],
    ] as const) {
      const id = `proto-${method}`;
      const answered = c.expectResponse(id);
      const frame = `{"jsonrpc":"2.0","id":"${id}","method":"${method}","params":${body}}`;
      c.writeRaw(framing === 'lsp' ? `Content-Length: ${Buffer.byteLength(frame)}\r\n\r\n${frame}` : `${frame}\n`);
      const err = await rejection(answered);
      expect(err.code).toBe(-32602);
      expect(err.message).toContain('__proto__');
    }
    expect((await c.read({ sessionId })).lastSeq).toBe(0);
    expect((await c.list()).sessions).toHaveLength(1);
  });

  it('nesting deeper than 128 levels is refused, not a crash', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    const depth = 100_000;
    const payload = `${'['.repeat(depth)}"leaf"${']'.repeat(depth)}`;
    const body = `{"jsonrpc":"2.0","id":"deep","method":"session/append","params":{"sessionId":"${sessionId}","records":[{"kind":"event","type":"deep","payload":${payload}}]}}`;
    const answered = c.expectResponse('deep');
    c.writeRaw(framing === 'lsp' ? `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` : `${body}\n`);
    const err = await rejection(answered);
    expect(err.code).toBe(-32602);
    expect(err.message).toContain('deeper than 128');
    expect((await c.read({ sessionId })).lastSeq).toBe(0);
  });

  it('a damaged journal line is reported as Corrupt with its line number; an unsafe journal as UnsafeStore', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create();
    await c.append({ sessionId, records: [msg('user', 'one'), msg('user', 'two'), msg('user', 'three')] });
    await c.shutdown();
    const file = path.join(store, 'sessions', sessionId, 'journal.jsonl');
    const bytes = fs.readFileSync(file);
    const at = bytes.indexOf('"two"') + 2;
    bytes[at] = 'X'.charCodeAt(0);
    fs.writeFileSync(file, bytes);
    fs.rmSync(path.join(store, 'index'), { recursive: true }); // no index: the open scans the journal
    const d = await startSidecar({ framing, store });
    const err = await rejection(d.open({ sessionId }));
    expect(err).toMatchObject({ code: -31004, data: { kind: 'Corrupt', line: 3 } });
    expect(fs.readFileSync(file)).toEqual(bytes);
    fs.chmodSync(file, 0o644);
    const unsafe = await rejection(d.open({ sessionId }));
    expect(unsafe).toMatchObject({ code: -31005, data: { kind: 'UnsafeStore' } });
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
  });

  it('a record larger than the maximum message is PayloadTooLarge and the connection carries on', async () => {
    const c = await startSidecar({ framing, args: ['--max-message-bytes', '65536'] });
    const { sessionId } = await c.create();
    const err = await rejection(c.append({ sessionId, records: [msg('user', 'x'.repeat(100_000))] }));
    expect(err).toMatchObject({ code: -31010, data: { kind: 'PayloadTooLarge', maxMessageBytes: 65536 } });
    expect(await c.append({ sessionId, records: [msg('user', 'small')] })).toEqual({ firstSeq: 1, lastSeq: 1 });
  });
});
