import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/domain/errors.js';
import { backend, header, newId, pgSkip, recs, snap, pass } from './pgTestKit.js';

async function kindOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError); // the port answers in the store's error kinds
    return (err as StoreError).kind;
  }
  return 'resolved';
}

describe.skipIf(pgSkip)('postgres backend: sessions and records', () => {
  it('creates a session with its initial records, loads it, reads records back as stored', async () => {
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    const h = header(id, 'first');
    await b.create(h, recs(1, 2), snap('s0'), fence);
    const row = await b.load(id);
    expect(row).toMatchObject({ sessionId: id, headerText: h.text, generation: 0, firstSeq: 1, lastSeq: 2, records: 2, trashed: false });
    expect(row.snapshot.turn).toBe('s0');
    await b.persist(fence, recs(3, 3), snap('s1'), { lastSeq: 2, generation: 0 });
    const page = await b.readRange(id, { afterSeq: 0, limit: 100 });
    expect(page.records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(page.records[2]!.text).toBe(JSON.stringify({ kind: 'message', message: { role: 'user', content: 'hello 3' } }));
    expect(page.scannedSeq).toBe(5);
    expect((await b.load(id)).snapshot.turn).toBe('s1');
  });

  it('create is all or nothing: a duplicate id is Conflict, a bad initial batch leaves no session', async () => {
    const b = await backend();
    const id = newId();
    await b.create(header(id), recs(1, 1), snap());
    expect(await kindOf(b.create(header(id), recs(1, 1), snap()))).toBe('Conflict');
    const id2 = newId();
    // The second record's text breaks the database (a NUL is not storable in text): the whole create rolls back.
    const bad = recs(1, 2);
    bad[1]!.text = 'x\u0000y';
    expect(await kindOf(b.create(header(id2), bad, snap()))).toBe('NotWritten');
    expect(await kindOf(b.load(id2))).toBe('SessionNotFound');
  });

  it('an append whose expected lastSeq or generation is stale is Conflict and writes nothing', async () => {
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), recs(1, 2), snap(), fence);
    await expect(b.persist(fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 })).rejects.toMatchObject({ kind: 'Conflict', details: { lastSeq: 2 } });
    expect(await kindOf(b.persist(fence, recs(3, 1), snap(), { lastSeq: 2, generation: 1 }))).toBe('Conflict');
    expect((await b.load(id)).lastSeq).toBe(2);
    expect(await kindOf(b.persist({ sessionId: newId(), token: fence.token }, recs(1, 1), snap(), { lastSeq: 0, generation: 0 }))).toBe('LeaseLost');
  });

  it('a persist is one transaction; of two racing for the same position one commits, the other is Conflict and stores nothing', async () => {
    // Group commit is the core's (its commit queue sends one batch per session at a time);
    // the backend still never lets two batches land on the same seqs.
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), [], snap(), fence);
    const before = b.stats().appendTransactions;
    for (let i = 0; i < 5; i++) await b.persist(fence, recs(i * 2 + 1, 2), snap(`after ${i}`), { lastSeq: i * 2, generation: 0 });
    expect(b.stats().appendTransactions - before).toBe(5);
    const [first, second] = await Promise.all([
      kindOf(b.persist(fence, recs(11, 1, 'message', 'first'), snap('a'), { lastSeq: 10, generation: 0 })),
      kindOf(b.persist(fence, recs(11, 1, 'message', 'second'), snap('b'), { lastSeq: 10, generation: 0 })),
    ]);
    expect([first, second].sort()).toEqual(['Conflict', 'resolved']);
    const page = await b.readRange(id, { limit: 100 });
    expect(page.records.map((r) => r.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    expect((await b.load(id)).snapshot.turn).toBe(first === 'resolved' ? 'a' : 'b');
    expect(page.records[10]!.text).toContain(first === 'resolved' ? 'first 11' : 'second 11');
  });

  it('reads by seq: afterSeq, limit, kinds filter, maxBytes', async () => {
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), [...recs(1, 2), ...recs(3, 2, 'api')], snap(), fence);
    await b.persist(fence, recs(5, 3), snap(), { lastSeq: 4, generation: 0 });
    const p1 = await b.readRange(id, { afterSeq: 2, limit: 2 });
    expect(p1.records.map((r) => r.seq)).toEqual([3, 4]);
    expect(p1.scannedSeq).toBe(4);
    const p2 = await b.readRange(id, { afterSeq: 0, limit: 100, kinds: ['message'] });
    expect(p2.records.map((r) => r.seq)).toEqual([1, 2, 5, 6, 7]);
    expect(p2.scannedSeq).toBe(7);
    const p3 = await b.readRange(id, { afterSeq: 0, limit: 100, kinds: ['api'] });
    expect(p3.records.map((r) => r.seq)).toEqual([3, 4]);
    expect(p3.scannedSeq).toBe(7); // nothing after 4 matches: the reader need not look again
    const p4 = await b.readRange(id, { afterSeq: 0, limit: 100, maxBytes: 1 });
    expect(p4.records.map((r) => r.seq)).toEqual([1]);
    expect(p4.scannedSeq).toBe(1);
  });

  it('rotate archives the generation and starts the next with the checkpoint and the records after it', async () => {
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), recs(1, 5), snap(), fence);
    const checkpoint = pass.checkpoint({ seq: 3, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint","generation":1,"throughSeq":3}' });
    expect(await kindOf(b.rotate(fence, { throughSeq: 3, checkpoint, expect: { lastSeq: 4, generation: 0 } }))).toBe('Conflict');
    const r = await b.rotate(fence, { throughSeq: 3, checkpoint, expect: { lastSeq: 5, generation: 0 } });
    expect(r).toMatchObject({ generation: 1, archived: { generation: 0, firstSeq: 1, lastSeq: 5, throughSeq: 3, records: 5 } });
    const active = await b.readRange(id, { limit: 100 });
    expect(active.generation).toBe(1);
    expect(active.records.map((x) => [x.seq, x.kind])).toEqual([[3, 'checkpoint'], [4, 'message'], [5, 'message']]);
    const old = await b.readRange(id, { generation: 0, limit: 100 });
    expect(old.records.map((x) => x.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await b.history(id)).toEqual([r.archived]);
    await b.persist(fence, recs(6, 1), snap(), { lastSeq: 5, generation: 1 });
    expect(await kindOf(b.persist(fence, recs(7, 1), snap(), { lastSeq: 6, generation: 0 }))).toBe('Conflict');
    expect((await b.load(id))).toMatchObject({ generation: 1, firstSeq: 3, lastSeq: 6, records: 4 });
  });

  it('lists with a keyset cursor; trash, restore and purge', async () => {
    const b = await backend();
    const ids = [newId(), newId(), newId()];
    const fences = [];
    for (const id of ids) {
      const f = await b.leases.acquire(id);
      fences.push(f);
      await b.create(header(id), recs(1, 1), snap(), f);
    }
    const p1 = await b.list({ limit: 2 });
    expect(p1.sessions.map((s) => s.sessionId)).toEqual(ids.slice(0, 2));
    const p2 = await b.list({ limit: 2, after: p1.nextAfter! });
    expect(p2.sessions.map((s) => s.sessionId)).toEqual(ids.slice(2));
    expect(p2.nextAfter).toBeNull();
    await b.trash(fences[1]!);
    expect((await b.list({ limit: 10 })).sessions.map((s) => s.sessionId)).toEqual([ids[0], ids[2]]);
    expect((await b.list({ limit: 10, trashed: true })).sessions.map((s) => s.sessionId)).toEqual([ids[1]]);
    expect(await kindOf(b.persist(fences[1]!, recs(2, 1), snap(), { lastSeq: 1, generation: 0 }))).toBe('SessionNotFound');
    await b.restore(fences[1]!);
    await b.persist(fences[1]!, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
    await b.purge(fences[1]!);
    expect(await kindOf(b.load(ids[1]!))).toBe('SessionNotFound');
    expect(await kindOf(b.restore(fences[0]!))).toBe('SessionNotFound');
  });

  it('blobs are content-addressed, stored once, read whole or by range', async () => {
    const b = await backend();
    const bytes = Buffer.from('a blob body '.repeat(100));
    const ref = await b.blobs.put(pass.blob(bytes));
    const again = await b.blobs.put(pass.blob(Buffer.from(bytes)));
    expect(again).toEqual(ref);
    expect(await b.blobs.size(ref.sha256)).toBe(bytes.length);
    expect((await b.blobs.read(ref.sha256))!.equals(bytes)).toBe(true);
    expect((await b.blobs.read(ref.sha256, { offset: 2, length: 4 }))!.toString()).toBe('blob');
    expect(await b.blobs.size('0'.repeat(64))).toBeUndefined();
  });

  it('state values and toolSeq reservations are fenced and durable', async () => {
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), [], snap(), fence);
    await b.state.set(fence, pass.stateEntry({ key: 'k', text: '"v1"' }));
    await b.state.set(fence, pass.stateEntry({ key: 'k', text: '"v2"' }));
    expect(await b.state.get(id, 'k')).toBe('"v2"');
    expect(await b.state.keys(id)).toEqual(['k']);
    expect(await b.state.delete(fence, 'k')).toBe(true);
    expect(await b.state.get(id, 'k')).toBeUndefined();
    expect(await b.reserveToolSeq(fence, 0)).toBe(1);
    expect(await b.reserveToolSeq(fence, 0)).toBe(2);
    expect(await b.reserveToolSeq(fence, 10)).toBe(11);
    expect(await kindOf(b.state.set({ sessionId: id, token: fence.token + 1 }, pass.stateEntry({ key: 'k', text: '"x"' })))).toBe('LeaseLost');
    expect(await kindOf(b.reserveToolSeq({ sessionId: id, token: fence.token - 1 }, 0))).toBe('LeaseLost');
  });
});
