import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../../src/backends/memory/memoryBackend.js';
import { FinalGate } from '../../../src/core/gate.js';
import type { Backend } from '../../../src/core/port.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';

const pass = new FinalGate(new SecretSet());
const snap = (turn: string | null = null) => pass.snapshot({ turn, runtime: null, usage: null, firstMessage: null, lastMessage: null, header: null });
function recs(from: number, n: number, kind = 'message') {
  const texts = Array.from({ length: n }, (_, i) => JSON.stringify({ kind, n: from + i }));
  const sealed = pass.records(texts, texts.map(() => kind), from, new Date().toISOString());
  if (!('sealed' in sealed)) throw new Error('refused');
  return sealed.sealed;
}
const header = (sessionId: string) => pass.header({ sessionId, createdAt: new Date().toISOString(), text: JSON.stringify({ sessionId }) }, 1 << 20);

async function kindOf(p: Promise<unknown>): Promise<string> {
  return p.then(() => 'resolved', (e: { kind: string }) => e.kind);
}

describe('memory backend (the port, in this process\'s memory)', () => {
  it('one writer per session; a write under an earlier fence is LeaseLost; one not at its position is Conflict; nothing of either is kept', async () => {
    const b: Backend = new MemoryBackend();
    const f1 = await b.leases.acquire('S');
    await b.create(header('S'), recs(1, 2), snap(), f1);
    expect(await kindOf(b.leases.acquire('S'))).toBe('SessionLocked');
    expect(await kindOf(b.persist(f1, recs(2, 1), snap('x'), { lastSeq: 1, generation: 0 }))).toBe('Conflict');
    await b.leases.release(f1);
    const f2 = await b.leases.acquire('S');
    expect(f2.token).toBe(f1.token + 1);
    expect(b.leases.check(f1)).toMatchObject({ kind: 'LeaseLost' });
    expect(await kindOf(b.persist(f1, recs(3, 1), snap('x'), { lastSeq: 2, generation: 0 }))).toBe('LeaseLost');
    await b.persist(f2, recs(3, 1), snap('y'), { lastSeq: 2, generation: 0 });
    expect(await b.load('S')).toMatchObject({ lastSeq: 3, records: 3, snapshot: { turn: 'y' } });
  });

  it('reads by seq and kind within a byte budget; rotate archives the generation whole', async () => {
    const b: Backend = new MemoryBackend();
    const f = await b.leases.acquire('S');
    await b.create(header('S'), [...recs(1, 2), ...recs(3, 2, 'api')], snap(), f);
    await b.persist(f, recs(5, 3), snap(), { lastSeq: 4, generation: 0 });
    expect((await b.readRange('S', { afterSeq: 2, limit: 2 })).records.map((r) => r.seq)).toEqual([3, 4]);
    expect(await b.readRange('S', { limit: 100, kinds: ['api'] })).toMatchObject({ scannedSeq: 7, lastSeq: 7 });
    expect((await b.readRange('S', { limit: 100, maxBytes: 1 })).records.map((r) => r.seq)).toEqual([1]);
    const checkpoint = pass.checkpoint({ seq: 3, ts: new Date().toISOString(), kind: 'checkpoint', text: '{"kind":"checkpoint"}' });
    expect(await kindOf(b.rotate(f, { throughSeq: 3, checkpoint, expect: { lastSeq: 6, generation: 0 } }))).toBe('Conflict');
    const r = await b.rotate(f, { throughSeq: 3, checkpoint, expect: { lastSeq: 7, generation: 0 } });
    expect(r).toMatchObject({ generation: 1, archived: { generation: 0, firstSeq: 1, lastSeq: 7, throughSeq: 3, records: 7 } });
    expect((await b.readRange('S', { limit: 100 })).records.map((x) => [x.seq, x.kind])).toEqual([[3, 'checkpoint'], [4, 'api'], [5, 'message'], [6, 'message'], [7, 'message']]);
    expect((await b.readRange('S', { generation: 0, limit: 100 })).records).toHaveLength(7);
    expect(await b.history('S')).toEqual([r.archived]);
  });

  it('keeps nothing a second net finds; close drops everything', async () => {
    const b = new MemoryBackend();
    b.secondNet((text) => (text.includes('planted-secret') ? 'raw' : undefined));
    const f = await b.leases.acquire('S');
    // A write path that forged the gate's brand: the net still stops it.
    expect(await kindOf(b.create(header('S'), [], pass.snapshot({ turn: null, runtime: null, usage: null, firstMessage: 'user: planted-secret', lastMessage: null, header: null }), f)))
      .toBe('SecretRejected');
    expect(await kindOf(b.load('S'))).toBe('SessionNotFound');
    await b.create(header('S'), [], snap(), f);
    await b.close();
    expect(await kindOf(b.load('S'))).toBe('SessionNotFound');
  });
});
