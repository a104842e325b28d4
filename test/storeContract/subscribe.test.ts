/**
 * Store contract: watch (session/subscribe) — the backlog after afterSeq, then every record
 * committed by this or another instance, in order, each once; deliver returning false ends it.
 */
import { expect, it } from 'vitest';
import type { SessionStore, StoredRecord } from '../../src/domain/types.js';
import { eachBackend, note } from './backends.js';

/** Watches `id` from afterSeq until `until` seqs arrived (or deliver says stop); `hold` delays every delivery until it settles. */
async function collect(s: SessionStore, id: string, afterSeq: number, until: number, stopAt?: number, hold?: Promise<void>) {
  const got: number[] = [];
  const records: StoredRecord[] = [];
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  let ended: string | undefined;
  const w = await s.watch(id, afterSeq, async (recs: StoredRecord[]) => {
    await hold;
    records.push(...recs);
    got.push(...recs.map((r) => r.seq));
    if (got.length >= until) done();
    return stopAt === undefined || got.length < stopAt;
  }, (reason) => {
    ended = reason;
    done();
  });
  return { got, records, all, w, ended: () => ended };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

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

  it('a watcher in another instance, held in delivery while the writer compacts three times, gets every original once, in order', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [note(1), note(2)]);
    let release: () => void = () => {};
    const hold = new Promise<void>((r) => (release = r));
    const reader = await f.reopen();
    const c = await collect(reader, id, 0, 60, undefined, hold);
    for (let i = 3; i <= 60; i += 3) {
      await f.store.append(id, [note(i), note(i + 1), note(i + 2)].filter((r) => (r as unknown as { i: number }).i <= 60));
      if (i === 18 || i === 27) await f.store.compact(id, { summary: `through ${i}`, throughSeq: i });
      if (i === 45) await f.store.compact(id, { summary: 'through 44', throughSeq: 44 });
    }
    release();
    await c.all;
    expect(c.ended()).toBeUndefined();
    c.w.stop();
    expect(c.got).toEqual(range(1, 60));
    expect(c.records.map((r) => (r as unknown as { kind: string; i: number })).map((r) => [r.kind, r.i])).toEqual(range(1, 60).map((i) => ['note', i]));
  });

  it('a watcher in the writing instance follows its own compactions (from 0: the archived records first)', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    for (let i = 1; i <= 10; i++) await f.store.append(id, [note(i)]);
    await f.store.compact(id, { summary: 'a', throughSeq: 8 });
    const c = await collect(f.store, id, 0, 30);
    for (let i = 11; i <= 30; i++) {
      await f.store.append(id, [note(i)]);
      if (i % 5 === 0) await f.store.compact(id, { summary: `through ${i}`, throughSeq: i - 1 });
    }
    await c.all;
    c.w.stop();
    expect(c.got).toEqual(range(1, 30));
  });

  it('a fork of a compacted session is followed from its first record (the checkpoint it starts at stands for no record of its own)', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    for (let i = 1; i <= 6; i++) await f.store.append(id, [note(i)]);
    await f.store.compact(id, { summary: 'a', throughSeq: 4 });
    const { sessionId: fork } = await f.store.fork(id, 6);
    const before = await collect(f.store, fork, 0, 2);
    await before.all;
    before.w.stop();
    expect(before.got).toEqual([5, 6]);
    // compacted itself: its origin is now in its own generation 0
    await f.store.append(fork, [note(7), note(8)]);
    await f.store.compact(fork, { summary: 'b', throughSeq: 7 });
    await f.store.append(fork, [note(9)]);
    const after = await collect(f.store, fork, 0, 5);
    await after.all;
    after.w.stop();
    expect(after.got).toEqual([5, 6, 7, 8, 9]);
  });
});
