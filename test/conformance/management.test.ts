import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { FRAMINGS, rejection, spawnSidecar, startSidecar } from './harness.js';

const user = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

describe.each(FRAMINGS)('session/update, list filters and session/search over %s', (framing) => {
  it('advertises the capabilities', async () => {
    const c = spawnSidecar({ framing });
    const init = await c.initialize();
    expect(init.capabilities.session).toMatchObject({ update: { maxTags: 32 }, search: { maxLimit: 500 }, list: { filters: true } });
    await c.shutdown();
  });

  it('an update is a journal record that survives a restart and the loss of the index; list and open reflect it', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ title: 'old', cwd: '/w', metadata: { keep: 1, drop: 2 }, tags: ['a'] });
    const res = await c.update({ sessionId, title: 'Renamed\u0000', metadata: { drop: null, add: { x: 1 } }, tags: ['b', 'c:d'] });
    expect(res).toMatchObject({ sessionId, seq: 1, title: 'Renamed', tags: ['b', 'c:d'], metadata: { keep: 1, add: { x: 1 } }, cwd: '/w' });
    await c.shutdown();
    const journal = fs.readFileSync(path.join(store, 'sessions', sessionId, 'journal.jsonl'), 'utf8').split('\n');
    expect(journal[0]).toContain('"title":"old"'); // the header line is never rewritten
    expect(journal[1]).toContain('"kind":"sessionUpdate"');
    fs.rmSync(path.join(store, 'index'), { recursive: true, force: true });
    const d = await startSidecar({ framing, store });
    expect((await d.list({ tags: ['b'] })).sessions.map((s) => [s.sessionId, s.title])).toEqual([[sessionId, 'Renamed']]);
    expect(await d.open({ sessionId, mode: 'read' })).toMatchObject({ title: 'Renamed', tags: ['b', 'c:d'], metadata: { keep: 1, add: { x: 1 } } });
    expect((await rejection(d.update({ sessionId, title: 'x' }))).data).toMatchObject({ kind: 'ReadOnly' });
    expect((await rejection(d.update({ sessionId, tags: ['bad tag'] }))).code).toBe(-32602);
    await d.shutdown();
  });

  it('list filters and search page with their cursors', async () => {
    const c = await startSidecar({ framing });
    const a = (await c.create({ cwd: '/p/one', tags: ['x'] })).sessionId;
    const b = (await c.create({ cwd: '/p/two', tags: ['x', 'y'] })).sessionId;
    await c.append({ sessionId: a, records: [user('alpha needle'), user('beta')] });
    await c.append({ sessionId: b, records: [user('Needle two'), user('needle three')] });
    expect((await c.list({ tags: ['x', 'y'] })).sessions.map((s) => s.sessionId)).toEqual([b]);
    expect((await c.list({ cwdPrefix: '/p', limit: 1 })).nextCursor).toEqual(expect.any(String));
    expect((await c.list({ query: 'BETA' })).sessions.map((s) => s.sessionId)).toEqual([a]);
    expect((await rejection(c.list({ updatedBefore: 'now' }))).code).toBe(-32602);
    const p1 = await c.search({ query: 'needle', limit: 2 });
    expect(p1.hits.map((h) => [h.sessionId, h.seq, h.snippet])).toEqual([[a, 1, 'alpha needle'], [b, 1, 'Needle two']]);
    const p2 = await c.search({ query: 'needle', limit: 2, cursor: p1.nextCursor });
    expect(p2.hits.map((h) => [h.sessionId, h.seq])).toEqual([[b, 2]]);
    await c.shutdown();
  });
});
