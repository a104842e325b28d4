/**
 * Store contract: `readText` (what session/read sends without building objects) is byte for
 * byte the JSON of `read`'s records, on every backend — for records whose text is not plain
 * ASCII, whose numbers and escapes JSON writes in one way only, with blob refs, counters and
 * turn ids the store put in, filtered by kind, paged, and of an archived generation.
 */
import { expect, it } from 'vitest';
import type { ReadOptions, SessionStore } from '../../src/domain/types.js';
import { eachBackend, note, user } from './backends.js';

async function same(s: SessionStore, id: string, opts: Omit<ReadOptions, 'inline'>): Promise<number> {
  const page = await s.read(id, opts);
  const text = await s.readText!(id, opts);
  expect(Buffer.concat(text.body).toString('utf8')).toBe(page.records.map((r) => JSON.stringify(r)).join(','));
  expect([text.count, text.lastSeq, text.nextAfterSeq]).toEqual([page.records.length, page.lastSeq, page.nextAfterSeq]);
  text.release?.();
  return page.records.length;
}

eachBackend('readText', (setup) => {
  it('is the JSON of read\'s records, byte for byte', async () => {
    const { store: s } = await setup();
    expect(s.readText).toBeTypeOf('function');
    const { sessionId } = await s.create({ turns: 'auto', blobThreshold: 1024 });
    await s.append(sessionId, [
      user('héllo \u2028 "quoted" \\ back\tslash 😀'),
      { kind: 'message', message: { role: 'assistant', content: 'done', n: [1e21, -0, 0.1, 5e-324, 123456789012345680000] } },
      note(1, { nested: { a: [null, true, false, {}], empty: '', lone: 'x\ud800y' } }),
      user('y'.repeat(3000)),
      { kind: 'api', direction: 'request', payload: { model: 'm' } },
      { kind: 'toolStart', name: 'bash' },
    ]);
    await s.update(sessionId, { title: 'übertitel', tags: ['a', 'b'] });
    expect(await same(s, sessionId, {})).toBeGreaterThan(6);
    await same(s, sessionId, { kinds: ['message', 'turn'] });
    await same(s, sessionId, { afterSeq: 2, limit: 3 });
    await same(s, sessionId, { afterSeq: 1000 });
    await s.compact(sessionId, { summary: 'sum', throughSeq: 3 });
    await same(s, sessionId, {});
    await same(s, sessionId, { generation: 0, afterSeq: 1 });
  });
});
