import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { FRAMINGS, rejection, spawnSidecar, startSidecar } from './harness.js';

const INVALID_PARAMS = -32602;
const UNSAFE_STORE = -31005;
const READ_ONLY = -31009;

type Rec = Record<string, unknown>;

describe.each(FRAMINGS)('runtime journals over %s', (framing) => {
  it('api and tool records get server-assigned apiSeq/toolSeq that continue after a SIGKILL', async () => {
    const store = tempDir('sidecar-store-');
    const a = await startSidecar({ framing, store });
    const { sessionId } = await a.create({});
    const scratch = await a.allocateScratch({ sessionId, requestId: 'req-1' });
    expect(scratch.toolSeq).toBe(1);
    expect(fs.statSync(scratch.tmpDir).isDirectory()).toBe(true);
    expect(scratch.dir.startsWith(path.join(store, 'sessions', sessionId))).toBe(true);
    const bytes = Buffer.from([0, 1, 2, 254, 255]);
    await a.append({ sessionId, records: [
      { kind: 'api', direction: 'request', payload: { model: 'm', messages: [] } },
      { kind: 'toolStart', toolSeq: scratch.toolSeq, requestId: 'req-1', tool: 'bash', toolUseId: 'call_1', agent: 'main' },
      { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text: 'ünïcode ok\n' },
      { kind: 'toolStream', toolSeq: 1, stream: 'stderr', dataBase64: bytes.toString('base64') },
      { kind: 'toolFinish', toolSeq: 1, requestId: 'req-1', status: 'exited', exitCode: 0, success: true, outputLen: 12 },
      { kind: 'api', direction: 'response', payload: { id: 'resp' } },
      { kind: 'api', direction: 'request', payload: { model: 'm' } },
    ] });
    await a.kill('SIGKILL');
    const b = await startSidecar({ framing, store });
    await b.open({ sessionId });
    await b.append({ sessionId, records: [
      { kind: 'api', direction: 'response', payload: {} },
      { kind: 'toolStart', requestId: 'req-2', tool: 'read' },
    ] });
    const { records } = await b.read({ sessionId });
    const counters = (records as Rec[]).map((r) => `${String(r.kind)}:${String(r.apiSeq ?? r.toolSeq)}`);
    expect(counters).toEqual([
      'api:1', 'toolStart:1', 'toolStream:1', 'toolStream:1', 'toolFinish:1', 'api:1', 'api:2', 'api:2', 'toolStart:2',
    ]);
    expect((records[2] as Rec).text).toBe('ünïcode ok\n');
    expect(Buffer.from((records[3] as Rec).dataBase64 as string, 'base64')).toEqual(bytes);
    const messagesOnly = await b.read({ sessionId, kinds: ['toolFinish'] });
    expect((messagesOnly.records as Rec[]).map((r) => r.seq)).toEqual([5]);
    const orphan = await rejection(b.append({ sessionId, records: [{ kind: 'api', direction: 'response', payload: {} }] }));
    expect(orphan.code).toBe(INVALID_PARAMS);
    expect(orphan.message).toMatch(/no open request/);
    const both = await rejection(b.append({ sessionId, records: [{ kind: 'toolStream', toolSeq: 1, stream: 'stdout', text: 'a', dataBase64: 'YQ==' }] }));
    expect(both.code).toBe(INVALID_PARAMS);
    await b.shutdown();
    const { capabilities } = await spawnSidecar({ framing, store: tempDir('sidecar-store-') }).initialize();
    expect(capabilities.recordKinds).toEqual(expect.arrayContaining(['api', 'toolStart', 'toolFinish', 'toolStream']));
    expect(capabilities).toMatchObject({ tool: { scratch: true }, state: { maxValueBytes: 1 << 20 }, blob: { defaultThreshold: 256 << 10, maxChunk: 8 << 20 } });
  });

  it('state values: set, get, delete, secret checks, refused without the writer', async () => {
    const store = tempDir('sidecar-store-');
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ secrets: { values: ['sekrit-value-123456'] } });
    await c.setState(sessionId, 'bashState', { cwd: '/w', env: { A: '1' } });
    expect(await c.getState(sessionId, 'bashState')).toEqual({ cwd: '/w', env: { A: '1' } });
    expect(await c.getState(sessionId, 'missing')).toBeNull();
    expect((await rejection(c.setState(sessionId, '../escape', 1))).code).toBe(INVALID_PARAMS);
    const leaked = await rejection(c.setState(sessionId, 'env', 'TOKEN=sekrit-value-123456'));
    expect(leaked.kind).toBe('SecretRejected');
    expect(JSON.stringify(leaked)).not.toContain('sekrit-value-123456');
    expect(await c.deleteState(sessionId, 'bashState')).toBe(true);
    expect(await c.getState(sessionId, 'bashState')).toBeNull();
    await c.close(sessionId);
    expect((await rejection(c.setState(sessionId, 'k', 1))).code).toBe(READ_ONLY);
    await c.shutdown();
  });

  it('blobs: big strings at a BlobRef position stored once, refs by default, inline on request, blob/get in chunks; elsewhere inline; $attach refused', async () => {
    const store = tempDir('sidecar-store-');
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ blobThreshold: 4096 });
    const image = Buffer.alloc(100_000, 3).toString('base64');
    const longText = 'line\n'.repeat(2000);
    const call = (args: string) => ({ kind: 'message' as const, message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: args }] } });
    await c.append({ sessionId, records: [
      call(image),
      { kind: 'message', message: { role: 'user', content: longText } },
      { kind: 'interruption', reason: 'cancelled', phase: 'providerStream', assistantText: image },
      { kind: 'api', direction: 'request', payload: { image } },
    ] });
    const { records } = await c.read({ sessionId });
    const ref = (((records[0] as Rec).message as Rec).toolCalls as Rec[])[0]?.arguments as Rec;
    expect(ref).toEqual({ $blob: expect.any(String), bytes: image.length });
    expect(String(ref.$blob)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(((records[1] as Rec).message as Rec).content).toBe(longText); // message content is not a BlobRef position
    expect((records[2] as Rec).assistantText).toEqual(ref); // stored once
    expect(((records[3] as Rec).payload as Rec).image).toBe(image); // nor is an api payload
    expect((await c.readBlob(sessionId, String(ref.$blob), 10_000)).toString()).toBe(image);
    const inlined = await c.read({ sessionId, inline: true });
    expect(((((inlined.records[0] as Rec).message as Rec).toolCalls as Rec[])[0] as Rec).arguments).toBe(image);
    const attach = await rejection(c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: [{ type: 'image', data: { $attach: image, mediaType: 'image/png' } }] } }] }));
    expect(attach.code).toBe(INVALID_PARAMS);
    expect(attach.message).toContain('may stand only where the schema allows a BlobRef');
    const missing = await rejection(c.blobGet({ sessionId, ref: `sha256:${'0'.repeat(64)}` }));
    expect(missing.kind).toBe('Corrupt');
    expect((await rejection(c.blobGet({ sessionId, ref: 'md5:abc' }))).code).toBe(INVALID_PARAMS);
    await c.shutdown();
  });

  it('session/open by path: a journal or session directory inside the store; outside it is UnsafeStore', async () => {
    const store = tempDir('sidecar-store-');
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ title: 'by path' });
    await c.close(sessionId);
    const dir = path.join(store, 'sessions', sessionId);
    expect((await c.open({ path: path.join(dir, 'journal.jsonl'), mode: 'read' })).sessionId).toBe(sessionId);
    expect((await c.open({ path: dir })).title).toBe('by path');
    const outside = tempDir();
    fs.writeFileSync(path.join(outside, 'journal.jsonl'), fs.readFileSync(path.join(dir, 'journal.jsonl')));
    fs.symlinkSync(outside, path.join(store, 'sessions', 'elsewhere'));
    // a symlink is judged by where it leads: into the store is fine (a linked workspace), out of it is not
    fs.symlinkSync(dir, path.join(outside, 'link'));
    expect((await c.open({ path: path.join(outside, 'link') })).sessionId).toBe(sessionId);
    for (const p of [outside, path.join(outside, 'journal.jsonl'), path.join(store, 'sessions', 'elsewhere', 'journal.jsonl'), path.join(dir, '..', '..', '..')]) {
      const err = await rejection(c.open({ path: p }));
      expect(err.code, p).toBe(UNSAFE_STORE);
    }
    expect((await rejection(c.open({ path: path.join(store, 'index') }))).code).toBe(INVALID_PARAMS);
    expect((await rejection(c.open({ sessionId, path: dir }))).code).toBe(INVALID_PARAMS);
    expect((await rejection(c.open({}))).code).toBe(INVALID_PARAMS);
    await c.shutdown();
  });
});
