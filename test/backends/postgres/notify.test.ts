import { describe, expect, it, vi } from 'vitest';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pgSkip, recs, snap } from './pgTestKit.js';

describe.skipIf(pgSkip)('postgres LISTEN/NOTIFY changes', () => {
  it('a subscriber on one pool is poked by appends committed through another, only for its session', async () => {
    const schema = freshSchema();
    const writer = await backend({ schema });
    const reader = await backend({ schema });
    const id = newId();
    const other = newId();
    const fence = await writer.leases.acquire(id);
    const otherFence = await writer.leases.acquire(other);
    await writer.create(header(id), [], snap(), fence);
    await writer.create(header(other), [], snap(), otherFence);
    const pokes: string[] = [];
    const stop = reader.changes(id, () => pokes.push('poke'));
    await writer.persist(otherFence, recs(1, 1), snap(), { lastSeq: 0, generation: 0 });
    await writer.persist(fence, recs(1, 2), snap(), { lastSeq: 0, generation: 0 });
    await vi.waitFor(() => expect(pokes.length).toBeGreaterThan(0), { timeout: 10_000 });
    // The hint comes after the commit: reading by seq now sees the records.
    expect((await reader.readRange(id, { limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2]);
    stop();
    const before = pokes.length;
    await writer.persist(fence, recs(3, 1), snap(), { lastSeq: 2, generation: 0 });
    // A marker on the other session proves the channel delivered past the unsubscribed append.
    const marker: string[] = [];
    reader.changes(other, () => marker.push('x'));
    await writer.persist(otherFence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
    await vi.waitFor(() => expect(marker.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(pokes.length).toBe(before);
  });

  it('a failed (rolled back) append notifies nobody', async () => {
    const schema = freshSchema();
    const writer = await backend({ schema });
    const reader = await backend({ schema });
    const id = newId();
    const fence = await writer.leases.acquire(id);
    const pokes: number[] = [];
    reader.changes(id, () => pokes.push(1));
    await writer.create(header(id), recs(1, 1), snap(), fence);
    // The create's own notification arrives asynchronously: wait for it, then start counting.
    await vi.waitFor(() => expect(pokes).toEqual([1]), { timeout: 10_000 });
    pokes.length = 0;
    await expect(writer.persist({ sessionId: id, token: 99 }, recs(2, 1), snap(), { lastSeq: 1, generation: 0 })).rejects.toMatchObject({ kind: 'LeaseLost' });
    const bad = recs(2, 1);
    bad[0]!.text = 'a\u0000b'; // fails in the INSERT, after the UPDATE: the transaction (and its NOTIFY) rolls back
    await expect(writer.persist(fence, bad, snap(), { lastSeq: 1, generation: 0 })).rejects.toMatchObject({ kind: 'NotWritten' });
    expect((await writer.load(id)).lastSeq).toBe(1);
    await writer.persist(fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
    await vi.waitFor(() => expect(pokes.length).toBeGreaterThan(0), { timeout: 10_000 });
    expect(pokes).toEqual([1]);
  });
});
