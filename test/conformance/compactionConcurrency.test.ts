import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { type SidecarClient, startSidecar } from './harness.js';

/**
 * session/compact of a big journal over real pipes against the built binary: it runs in slices
 * that yield to the event loop (journal/slices.ts), so one sidecar keeps serving its other
 * sessions while one of them compacts, and that session's own appends wait for the compaction
 * and land after it, in order. Only the order of the answers is asserted, never a duration.
 */

type Stored = Record<string, unknown> & { seq: number; kind: string };
const msg = (role: string, content: string) => ({ kind: 'message' as const, message: { role, content } });

async function readAll(c: SidecarClient, sessionId: string, generation?: number): Promise<Stored[]> {
  const out: Stored[] = [];
  for (let afterSeq = 0; ;) {
    const page = await c.request<{ records: Stored[]; nextAfterSeq: number | null }>('session/read', {
      sessionId, afterSeq, limit: 1000, ...(generation === undefined ? {} : { generation }),
    });
    out.push(...page.records);
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

describe('session/compact of a big journal does not hold up the sidecar', () => {
  it('another session\'s appends are answered before the compaction; the compacting session\'s appends after it, in order; every record readable', async () => {
    const store = tempDir();
    const c = await startSidecar({ store });
    const { sessionId: x } = await c.create({ title: 'big' });
    const { sessionId: y } = await c.create({ title: 'small' });
    // ~48 MB: 12 appends of 40 records of ~100 KB (below the blob threshold: they stay in the journal).
    const batches = 12;
    const perBatch = 40;
    const body = 'The build failed because the linker could not find libssl; install it and re-run make. '.repeat(1150);
    for (let b = 0; b < batches; b++) {
      const records = Array.from({ length: perBatch }, (_, i) => msg(i % 2 === 0 ? 'user' : 'assistant', `${b}.${i} ${body}`));
      await c.append({ sessionId: x, records });
    }
    const lastSeq = batches * perBatch;
    const throughSeq = lastSeq - 10;

    const order: string[] = [];
    const noted = <T>(name: string, p: Promise<T>) => p.then((r) => (order.push(name), r));
    const compaction = noted('compact', c.request<{ generation: number; checkpointSeq: number; archived: { records: number } }>('session/compact', {
      sessionId: x, summary: 'everything before', throughSeq,
    }));
    // Sent right behind it, without waiting: two to the compacting session, three to another.
    const xs = [1, 2].map((i) => noted(`x${i}`, c.append({ sessionId: x, records: [msg('user', `after ${i}`)] })));
    const ys = [1, 2, 3].map((i) => noted(`y${i}`, c.append({ sessionId: y, records: [msg('user', `meanwhile ${i}`)] })));
    const [compacted, x1, x2, ...yr] = await Promise.all([compaction, ...xs, ...ys]);

    expect(compacted).toMatchObject({ generation: 1, checkpointSeq: throughSeq, archived: { records: lastSeq } });
    const at = (name: string) => order.indexOf(name);
    for (const name of ['y1', 'y2', 'y3']) expect(at(name), `${name} answered before the compaction: ${order.join(' ')}`).toBeLessThan(at('compact'));
    expect(at('x1'), order.join(' ')).toBeGreaterThan(at('compact'));
    expect(at('x2'), order.join(' ')).toBeGreaterThan(at('x1'));
    expect([x1, x2]).toEqual([{ firstSeq: lastSeq + 1, lastSeq: lastSeq + 1 }, { firstSeq: lastSeq + 2, lastSeq: lastSeq + 2 }]);
    expect(yr).toEqual([1, 2, 3].map((i) => ({ firstSeq: i, lastSeq: i })));

    // Every record of X: all of them in the archive, the checkpoint + the kept ones + the two appends in the active journal.
    const archived = await readAll(c, x, 0);
    expect(archived.map((r) => r.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
    expect(archived.every((r, i) => String((r.message as { content: string }).content).startsWith(`${Math.floor(i / perBatch)}.${i % perBatch} `))).toBe(true);
    const active = await readAll(c, x);
    expect(active.map((r) => [r.seq, r.kind])).toEqual([
      [throughSeq, 'checkpoint'], ...Array.from({ length: 10 }, (_, i) => [throughSeq + 1 + i, 'message']), [lastSeq + 1, 'message'], [lastSeq + 2, 'message'],
    ]);
    expect(active.slice(1, 11)).toEqual(archived.slice(throughSeq));
    expect(active.slice(-2).map((r) => (r.message as { content: string }).content)).toEqual(['after 1', 'after 2']);
    expect((await readAll(c, y)).map((r) => (r.message as { content: string }).content)).toEqual(['meanwhile 1', 'meanwhile 2', 'meanwhile 3']);
    const { code } = await c.shutdown();
    expect(code).toBe(0);

    // Another process sees the same.
    const d = await startSidecar({ store });
    expect((await d.open({ sessionId: x, mode: 'write' })).lastSeq).toBe(lastSeq + 2);
    expect((await readAll(d, x)).length).toBe(13);
    await d.shutdown();
  });
});
