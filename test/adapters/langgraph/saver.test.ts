/**
 * SidecarCheckpointSaver beyond LangGraph's validation suite: deleteThread moves to the trash
 * (session/restore brings the thread back), registered secrets are refused everywhere a value is
 * stored, credentials are redacted, and serialized bytes round-trip exactly (text, binary, blobs).
 * All against the built adapter and the built binary on a real file store.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR } from '@langchain/langgraph-checkpoint';
import { threadTag } from '../../../dist/src/adapters/langgraph/index.js';
import { allBytes, checkpoint, cpId, openSaver, SidecarCheckpointSaver, SidecarError, tmpStore } from './helpers.js';

const meta = { source: 'input' as const, step: -1, parents: {} };
const SECRET = 'correct-horse-battery-staple-42';

async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SidecarError);
  expect(String((err as Error).message)).not.toContain(SECRET);
  return (err as SidecarError).kind;
}

describe('deleteThread', () => {
  it('moves every namespace of the thread to the trash; session/restore brings it back', async () => {
    const store = tmpStore();
    const saver = await openSaver(store);
    const root = { configurable: { thread_id: 'doomed', checkpoint_ns: '' } };
    const child = { configurable: { thread_id: 'doomed', checkpoint_ns: 'child' } };
    const kept = { configurable: { thread_id: 'kept', checkpoint_ns: '' } };
    await saver.put(root, checkpoint(cpId(1), { a: 1 }), meta, { a: 1 });
    await saver.put(child, checkpoint(cpId(2), { b: 2 }), meta, { b: 1 });
    await saver.put(kept, checkpoint(cpId(3), { c: 3 }), meta, { c: 1 });
    const { sessions } = await saver.client.list({ tags: [threadTag('doomed')] });
    expect(sessions).toHaveLength(2);

    await saver.deleteThread('doomed');
    expect(await saver.getTuple(root)).toBeUndefined();
    expect(await saver.getTuple(child)).toBeUndefined();
    expect((await saver.getTuple(kept))?.checkpoint.channel_values).toEqual({ c: 3 });
    const left = [];
    for await (const t of saver.list({})) left.push(t.checkpoint.id);
    expect(left).toEqual([cpId(3)]);

    // In the trash, not gone: listed as deleted, its files under trash/.
    const trashed = await saver.client.list({ tags: [threadTag('doomed')], includeDeleted: true });
    expect(trashed.sessions.map((s) => s.deleted)).toEqual([true, true]);
    for (const s of sessions) expect(fs.existsSync(path.join(store, 'trash', s.sessionId))).toBe(true);

    for (const s of sessions) await saver.client.request('session/restore', { sessionId: s.sessionId });
    expect((await saver.getTuple(root))?.checkpoint.channel_values).toEqual({ a: 1 });
    expect((await saver.getTuple(child))?.checkpoint.channel_values).toEqual({ b: 2 });
  });

  it('is a no-op for a thread that has no session', async () => {
    const saver = await openSaver(tmpStore());
    await expect(saver.deleteThread('never-was')).resolves.toBeUndefined();
  });
});

describe('secrets', () => {
  it('refuses a registered secret in a channel value, a pending write, binary bytes or the thread id; nothing is stored', async () => {
    const store = tmpStore();
    const saver = await openSaver(store, { secrets: { values: [SECRET] } });
    const config = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    const stored = await saver.put(config, checkpoint(cpId(1), { msg: 'hello' }), meta, { msg: 1 });

    expect(await refusal(saver.put(stored, checkpoint(cpId(2), { msg: `the key is ${SECRET}` }, { msg: 2 }), meta, { msg: 2 }))).toBe('SecretRejected');
    expect(await refusal(saver.put(stored, checkpoint(cpId(3), { msg: 'ok' }, { msg: 2 }), { ...meta, note: SECRET } as never, { msg: 2 }))).toBe('SecretRejected');
    expect(await refusal(saver.putWrites(stored, [['msg', SECRET]], 'task'))).toBe('SecretRejected');
    expect(await refusal(saver.putWrites(stored, [[ERROR, { error: SECRET }]], 'task'))).toBe('SecretRejected');
    // Non-UTF-8 bytes travel as base64: the sidecar's checks see through it.
    const binary = new Uint8Array([0xff, 0xfe, ...Buffer.from(SECRET), 0x80]);
    expect(await refusal(saver.put(stored, checkpoint(cpId(4), { raw: binary }), meta, { raw: 1 }))).toBe('SecretRejected');
    expect(await refusal(saver.put({ configurable: { thread_id: `thread-${SECRET}` } }, checkpoint(cpId(5), {}), meta, {}))).toBe('SecretRejected');

    const latest = await saver.getTuple(config);
    expect(latest?.checkpoint.id).toBe(cpId(1));
    expect(latest?.pendingWrites).toEqual([]);
    const all = [];
    for await (const t of saver.list({})) all.push(t.checkpoint.id);
    expect(all).toEqual([cpId(1)]);
    expect(allBytes(store)).not.toContain(SECRET);
  });

  it('registers the secrets again when a restarted sidecar reopens an existing thread', async () => {
    const store = tmpStore();
    const config = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    const first = await openSaver(store, { secrets: { values: [SECRET] } });
    const stored = await first.put(config, checkpoint(cpId(1), { msg: 'hello' }), meta, { msg: 1 });
    await first.client.kill('SIGKILL');

    const second = await openSaver(store, { secrets: { values: [SECRET] } });
    expect(await refusal(second.putWrites(stored, [['msg', SECRET]], 'task'))).toBe('SecretRejected');
    expect((await second.getTuple(config))?.pendingWrites).toEqual([]);
    expect(allBytes(store)).not.toContain(SECRET);
  });

  it('redacts a well-known credential (the only change to what was given)', async () => {
    const store = tmpStore();
    const saver = await openSaver(store);
    const config = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    const stored = await saver.put(config, checkpoint(cpId(1), { msg: 'aws AKIAIOSFODNN7EXAMPLE here' }), meta, { msg: 1 });
    const tuple = await saver.getTuple(stored);
    expect(tuple?.checkpoint.channel_values.msg).toBe('aws <redacted:aws-access-key-id> here');
    expect(allBytes(store)).not.toContain('AKIAIOSFODNN7EXAMPLE');
  });
});

describe('bytes', () => {
  it('round-trips binary, BOM-led and astral text, and large values, exactly', async () => {
    const store = tmpStore();
    const saver = await openSaver(store);
    const config = { configurable: { thread_id: 'bytes', checkpoint_ns: '' } };
    const binary = new Uint8Array([0x00, 0xff, 0x80, 0xc3, 0x28, 0x0a, 0xfe]);
    const utf8Bytes = new Uint8Array(Buffer.from('\ufeffplain 😀 text', 'utf8'));
    const big = 'x'.repeat(300 * 1024) + '😀';
    const values = { binary, utf8Bytes, text: '\ufeff😀 "quoted" \\ \u0000 end', big };
    const stored = await saver.put(config, checkpoint(cpId(1), values), meta, { binary: 1, utf8Bytes: 1, text: 1, big: 1 });
    await saver.putWrites(stored, [['binary', binary]], 'task');

    await saver.client.kill('SIGKILL');
    const reopened = await openSaver(store);
    const tuple = await reopened.getTuple(stored);
    const got = tuple!.checkpoint.channel_values as Record<string, unknown>;
    expect(Buffer.from(got.binary as Uint8Array).equals(Buffer.from(binary))).toBe(true);
    expect(Buffer.from(got.utf8Bytes as Uint8Array).equals(Buffer.from(utf8Bytes))).toBe(true);
    expect(got.text).toBe(values.text);
    expect(got.big).toBe(big);
    expect(Buffer.from(tuple!.pendingWrites![0]![2] as Uint8Array).equals(Buffer.from(binary))).toBe(true);

    // How they were stored: non-UTF-8 bytes as base64, UTF-8 as text, the large value as text too
    // (an event payload is not a BlobRef position, protocol §15.4: it stays in the record).
    const { sessions } = await reopened.client.list({ tags: [threadTag('bytes')] });
    const { records } = await reopened.client.read({ sessionId: sessions[0]!.sessionId, limit: 1 });
    const byChannel = Object.fromEntries((records[0] as { payload: { values: Array<[string, number, Record<string, unknown>]> } }).payload.values.map(([ch, , v]) => [ch, v]));
    expect(byChannel.binary).toEqual({ type: 'bytes', base64: Buffer.from(binary).toString('base64') });
    expect(byChannel.utf8Bytes).toEqual({ type: 'bytes', text: '\ufeffplain 😀 text' });
    expect(JSON.stringify(byChannel.big)).not.toContain('"$blob"');
    expect(byChannel.big!.text).toContain('x'.repeat(1000));
  });
});

describe('open', () => {
  it('refuses a sidecar that lacks what the checkpointer needs, and stops it', async () => {
    const dir = tmpStore();
    // A stand-in sidecar that answers initialize without session/delete or state/*.
    const fake = path.join(dir, 'old-sidecar.cjs');
    const pidFile = path.join(dir, 'pid');
    // It lives until its stdin closes (so it can never outlive this test run).
    fs.writeFileSync(fake, `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
    let answered = false;
    process.stdin.on('data', (line) => {
      if (answered) return;
      answered = true;
      const { id } = JSON.parse(String(line).split('\\n')[0]);
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: 1, serverInfo: { name: 'old' }, capabilities: { session: { list: { filters: true } } } } }) + '\\n');
    });
    process.stdin.on('end', () => process.exit(0));`);
    const err = await SidecarCheckpointSaver.open({ store: dir, spawn: { command: process.execPath, args: [fake] } }).catch((e: unknown) => e);
    expect(String(err)).toMatch(/lacks session\/list filters, session\/delete or state/);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    const alive = () => { try { process.kill(pid, 0); return true; } catch { return false; } };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toBe(false);
  });
});
