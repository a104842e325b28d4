/**
 * How SidecarCheckpointSaver finds things: a per-thread index (a saved copy in the session's
 * state, caught up from the journal), so getTuple/list read the records they return and not the
 * thread's history; the copy may lag the journal (a SIGKILL) or be unusable, and results stay
 * exact. Pending writes merge exactly as LangGraph's MemorySaver does. The sidecar binary does not
 * load LangChain.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR, INTERRUPT, MemorySaver, type BaseCheckpointSaver, type CheckpointTuple } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { threadTag } from '../../../dist/src/adapters/langgraph/index.js';
import { checkpoint, cpId, later, openSaver, SidecarClient, tmpStore } from './helpers.js';

const meta = (step: number) => ({ source: 'loop' as const, step, parents: {} });
const thread = { configurable: { thread_id: 'long', checkpoint_ns: '' } };

/** `count` checkpoints in a chain, each changing channel `n` (and keeping `fixed` from the first), each with one pending write. */
async function chain(saver: BaseCheckpointSaver, count: number): Promise<void> {
  let config: RunnableConfig = thread;
  for (let i = 0; i < count; i++) {
    const values = { n: i, fixed: 'from the first' };
    config = await saver.put(config, checkpoint(cpId(i), values, { n: i + 1, fixed: 1 }), meta(i), i === 0 ? { n: 1, fixed: 1 } : { n: i + 1 });
    await saver.putWrites(config, [['n', i + 1]], `task-${i}`);
  }
}

async function all(saver: BaseCheckpointSaver, config: object, options?: object): Promise<CheckpointTuple[]> {
  const out = [];
  for await (const t of saver.list(config, options)) out.push(t);
  return out;
}

/** A connected client that counts the records its session/read calls return. */
async function countingClient(store: string): Promise<{ client: SidecarClient; recordsRead: () => number }> {
  const client = await SidecarClient.start({ store });
  later(() => client.shutdown());
  let read = 0;
  const request = client.request.bind(client);
  client.request = (async (method: string, params?: unknown) => {
    const result = await request(method, params);
    if (method === 'session/read') read += (result as { records: unknown[] }).records.length;
    return result;
  }) as typeof client.request;
  return { client, recordsRead: () => read };
}

describe('the per-thread index', () => {
  it('serves getTuple and list from the index copy plus the journal tail, exactly, after a SIGKILL', async () => {
    const store = tmpStore();
    const first = await openSaver(store);
    await chain(first, 100); // 200 records: the saved copy is behind the journal
    const expected = await all(first, thread);
    await first.client.kill('SIGKILL');

    const { client, recordsRead } = await countingClient(store);
    const saver = await openSaver(store, { client });
    const latest = await saver.getTuple(thread);
    expect(latest).toEqual(expected[0]);
    expect(latest?.checkpoint.channel_values).toEqual({ n: 99, fixed: 'from the first' });
    expect(latest?.pendingWrites).toEqual([['task-99', 'n', 100]]);
    // The tail after the saved copy (< 64 records) and the three records the tuple is made of.
    expect(recordsRead()).toBeLessThan(64 + 3);

    const before = recordsRead();
    const three = await all(saver, thread, { limit: 3 });
    expect(three).toEqual(expected.slice(0, 3));
    expect(recordsRead() - before).toBeLessThanOrEqual(3 * 3);

    const atTen = await saver.getTuple({ configurable: { ...thread.configurable, checkpoint_id: cpId(10) } });
    expect(atTen).toEqual(expected[89]);
    expect(atTen?.parentConfig?.configurable?.checkpoint_id).toBe(cpId(9));
    expect(await all(saver, thread)).toEqual(expected);
    expect(await all(saver, thread, { before: { configurable: { checkpoint_id: cpId(5) } } })).toEqual(expected.slice(95));
    expect(await all(saver, {}, { filter: { step: 42 } })).toEqual([expected[57]]);
  });

  it('rebuilds from the journal when the saved copy is unusable', async () => {
    const store = tmpStore();
    const first = await openSaver(store);
    await chain(first, 70);
    const expected = await all(first, thread);
    await first.close();

    const client = await SidecarClient.start({ store });
    later(() => client.shutdown());
    const { sessions } = await client.list({ tags: [threadTag('long')] });
    const sessionId = sessions[0]!.sessionId;
    expect(await client.getState(sessionId, 'langgraph-index')).toMatchObject({ v: 1, seq: 140 });
    await client.open({ sessionId, mode: 'write' });
    await client.setState(sessionId, 'langgraph-index', { v: 99, garbage: true });
    await client.close(sessionId);

    const saver = await openSaver(store, { client });
    expect(await all(saver, thread)).toEqual(expected);
  });

  it('leaves a given client running at close, its sessions closed', async () => {
    const store = tmpStore();
    const client = await SidecarClient.start({ store });
    later(() => client.shutdown());
    const saver = await openSaver(store, { client });
    await saver.put(thread, checkpoint(cpId(1), { a: 1 }), meta(0), { a: 1 });
    await saver.close();
    const { sessions } = await client.list({ tags: [threadTag('long')] });
    const err = await client.append({ sessionId: sessions[0]!.sessionId, records: [{ kind: 'event', type: 'x', payload: null }] }).catch((e: unknown) => e);
    expect((err as { kind?: string }).kind).toBe('ReadOnly');
  });

  it('applies each record once under concurrent calls (reads catching up, parallel putWrites)', async () => {
    const store = tmpStore();
    const first = await openSaver(store);
    await chain(first, 3);
    await first.client.kill('SIGKILL'); // no saved copy: the concurrent reads below all catch up from seq 0

    const saver = await openSaver(store);
    const tuples = await Promise.all(Array.from({ length: 6 }, () => saver.getTuple(thread)));
    for (const t of tuples) expect(t?.pendingWrites).toEqual([['task-2', 'n', 3]]);
    const latest = { configurable: { ...thread.configurable, checkpoint_id: cpId(2) } };
    await Promise.all(Array.from({ length: 8 }, (_, i) => saver.putWrites(latest, [['w', i]], `parallel-${i}`)));
    const after = await saver.getTuple(thread);
    expect(after?.pendingWrites?.map(([task]) => task).sort()).toEqual(['task-2', ...Array.from({ length: 8 }, (_, i) => `parallel-${i}`)].sort());
    await saver.close();

    // The saved copy lists every record exactly once.
    const client = await SidecarClient.start({ store });
    later(() => client.shutdown());
    const { sessions } = await client.list({ tags: [threadTag('long')] });
    const copy = (await client.getState(sessions[0]!.sessionId, 'langgraph-index')) as { seq: number; checkpoints: unknown[]; writes: Array<[string, number[]]> };
    expect(copy.seq).toBe(6 + 8);
    expect(copy.checkpoints).toHaveLength(3);
    const writeSeqs = copy.writes.flatMap(([, seqs]) => seqs);
    expect(writeSeqs.sort((a, b) => a - b)).toEqual([2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it('creates one session for a new thread under concurrent first calls', async () => {
    const saver = await openSaver(tmpStore());
    const config = { configurable: { thread_id: 'racy', checkpoint_ns: '' } };
    const c = { configurable: { ...config.configurable, checkpoint_id: cpId(1) } };
    await Promise.all([saver.put(config, checkpoint(cpId(1), { a: 1 }), meta(0), { a: 1 }), saver.putWrites(c, [['a', 2]], 'task'), saver.putWrites(c, [['b', 3]], 'task-b')]);
    expect((await saver.client.list({ tags: [threadTag('racy')] })).sessions).toHaveLength(1);
    expect((await saver.getTuple(config))?.pendingWrites).toHaveLength(2);
  });
});

describe('pending writes', () => {
  it('merge and order exactly as MemorySaver', async () => {
    const memory = new MemorySaver();
    const saver = await openSaver(tmpStore());
    const run = async (s: BaseCheckpointSaver) => {
      const c0 = await s.put(thread, checkpoint(cpId(0), { a: 1 }), meta(0), { a: 1 });
      await s.putWrites(c0, [['a', 'first'], ['b', 'second']], 'task-z', '~b');
      await s.putWrites(c0, [['a', 'again: not stored'], ['c', 'idx 1 exists: not stored either']], 'task-z', '~b');
      await s.putWrites(c0, [[ERROR, 'error 1']], 'task-a', '~a');
      await s.putWrites(c0, [[ERROR, 'error 2: replaces error 1']], 'task-a', '~a');
      await s.putWrites(c0, [[INTERRUPT, { value: 'stop' }], ['x', 1], ['y', 2]], 'task-m');
      const c1 = await s.put(c0, checkpoint(cpId(1), { a: 2 }, { a: 2 }), meta(1), { a: 2 });
      await s.putWrites(c1, [['a', 3]], 'task-1', '');
      return { latest: await s.getTuple(thread), first: await s.getTuple(c0), listed: await all(s, {}) };
    };
    const [fromMemory, fromSidecar] = [await run(memory), await run(saver)];
    expect(fromSidecar.first?.pendingWrites).toEqual(fromMemory.first?.pendingWrites);
    expect(fromSidecar).toEqual(fromMemory);
    // task-z: a, b (the repeats dropped); task-a: error 2 only; task-m: interrupt, x, y.
    expect(fromSidecar.first?.pendingWrites?.map(([task, channel]) => `${task}/${channel}`)).toEqual(
      ['task-m/__interrupt__', 'task-m/x', 'task-m/y', 'task-a/__error__', 'task-z/a', 'task-z/b'],
    );
  });
});

it('the sidecar binary and client do not load LangChain', () => {
  const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../dist/src');
  const files = ['cli.js', 'index.js', 'client/index.js', ...fs.readdirSync(path.join(dist, 'bundle')).filter((f) => f.endsWith('.js')).map((f) => `bundle/${f}`)];
  for (const f of files) expect(fs.readFileSync(path.join(dist, f), 'utf8'), f).not.toContain('@langchain');
  expect(fs.readFileSync(path.join(dist, 'adapters/langgraph/saver.js'), 'utf8')).toContain('@langchain/langgraph-checkpoint');
});

it('is the package subpath session-sidecar/adapters/langgraph (exports: types and default)', () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }> };
  const entry = pkg.exports['./adapters/langgraph']!;
  expect(fs.existsSync(path.join(root, entry.types))).toBe(true);
  // Resolved by Node through the package's own name (self-reference), as a user's import would be.
  const out = execFileSync(process.execPath, ['--input-type=module', '-e',
    "const m = await import('session-sidecar/adapters/langgraph'); console.log(typeof m.SidecarCheckpointSaver, import.meta.resolve('session-sidecar/adapters/langgraph'))"], { cwd: root, encoding: 'utf8' });
  expect(out.trim()).toBe(`function ${pathToFileURL(path.join(root, entry.default)).href}`);
});

describe('a compacted thread session', () => {
  it.each([
    { how: 'with its saved index copy', saved: true },
    { how: 'without one (a SIGKILL before any save)', saved: false },
  ])('still serves every checkpoint, $how', async ({ saved }) => {
    const store = tmpStore();
    const first = await openSaver(store);
    await chain(first, 6); // 12 records
    const expected = await all(first, thread);
    const { sessions } = await first.client.list({ tags: [threadTag('long')] });
    const sessionId = sessions[0]!.sessionId;
    // Twice: the records up to 5, then up to 9, move to archived generations 0 and 1.
    await first.client.request('session/compact', { sessionId, throughSeq: 5, summary: 'first half' });
    await first.client.request('session/compact', { sessionId, throughSeq: 9, summary: 'more' });
    expect(await all(first, thread)).toEqual(expected); // from this saver's cache and index
    if (saved) await first.close();
    else await first.client.kill('SIGKILL');

    const saver = await openSaver(store);
    expect(await all(saver, thread)).toEqual(expected);
    // A new checkpoint whose unchanged channel `fixed` was stored by the first record, now archived.
    const c = { configurable: { ...thread.configurable, checkpoint_id: cpId(5) } };
    await saver.put(c, checkpoint(cpId(6), { n: 6, fixed: 'from the first' }, { n: 7, fixed: 1 }), meta(6), { n: 7 });
    expect((await saver.getTuple(thread))?.checkpoint.channel_values).toEqual({ n: 6, fixed: 'from the first' });
  });
});
