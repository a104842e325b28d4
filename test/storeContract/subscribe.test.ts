/**
 * Store contract: watch (session/subscribe) — the backlog after afterSeq, then every record
 * committed by this or another instance, in order, each once; deliver returning false ends it.
 */
import { expect, it } from 'vitest';
import type { SessionStore, StoredRecord } from '../../src/domain/types.js';
import { eachBackend, note } from './backends.js';

/** Watches `id` from afterSeq until `until` seqs arrived (or deliver says stop). */
async function collect(s: SessionStore, id: string, afterSeq: number, until: number, stopAt?: number) {
  const got: number[] = [];
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  let ended: string | undefined;
  const w = await s.watch(id, afterSeq, (recs: StoredRecord[]) => {
    got.push(...recs.map((r) => r.seq));
    if (got.length >= until) done();
    return stopAt === undefined || got.length < stopAt;
  }, (reason) => {
    ended = reason;
    done();
  });
  return { got, all, w, ended: () => ended };
}

eachBackend('subscribe', (setup) => {
  it('delivers the backlog after afterSeq, then live appends of this and another instance, in order, each once', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [note(1), note(2), note(3)]);
    const reader = await f.reopen();
    const c = await collect(reader, id, 1, 5);
    expect(c.w.lastSeq).toBe(3);
    await f.store.append(id, [note(4), note(5)]);
    await f.store.close(id);
    const writer2 = await f.reopen();
    await writer2.open(id, 'write');
    await writer2.append(id, [note(6)]);
    await c.all;
    c.w.stop();
    expect(c.got).toEqual([2, 3, 4, 5, 6]);
  });

  it('a watcher in the writing instance sees its appends; stop() and deliver returning false end it', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    const a = await collect(f.store, id, 0, 2, 2);
    await f.store.append(id, [note(1)]);
    await f.store.append(id, [note(2)]);
    await a.all;
    await f.store.append(id, [note(3)]);
    const b = await collect(f.store, id, 2, 1);
    await b.all;
    b.w.stop();
    expect(b.got).toEqual([3]);
    expect(a.got.slice(0, 2)).toEqual([1, 2]);
    expect(a.got).not.toContain(3); // ended by deliver → false
  });
});
