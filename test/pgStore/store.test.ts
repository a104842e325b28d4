/**
 * The PostgreSQL SessionStore beyond the conformance suite: two store instances on one schema
 * stand for two machines (each its own connections, lease holder and LISTEN connection).
 */
import { describe, expect, it } from 'vitest';
import type { StoredRecord } from '../../src/domain/types.js';
import { freshSchema, pgAvailability } from '../pg/pgServer.js';
import { sharedPgStores } from './pgStoreKit.js';

const pgSkip = pgAvailability();
const { store } = sharedPgStores();

const msg = (content: string) => ({ kind: 'message', message: { role: 'user', content } });

describe.skipIf(pgSkip)('PostgreSQL store', () => {
  it('a fail-stopped session gives its lease back at once (it was heartbeated until the process exited)', async () => {
    const schema = freshSchema('fs');
    const a = await store(schema);
    const { sessionId } = await a.create({ title: 'stops' });
    await a.append(sessionId, [msg('one')]);
    const b = await store(schema);
    await expect(b.open(sessionId, 'write')).rejects.toMatchObject({ kind: 'SessionLocked' });
    // What an unknown commit outcome does to the session's commit queue (the trigger is covered by
    // test/conformance/pgCrash.test.ts): it stops, for good, in this process.
    const queue = (a as unknown as { c: { sessions: Map<string, { queue: { failStop(r: string): void } }> } }).c.sessions.get(sessionId)!.queue;
    queue.failStop('a commit with an unknown outcome');
    await expect(a.append(sessionId, [msg('two')])).rejects.toMatchObject({ kind: 'ReadOnly' });
    let opened: string | undefined;
    for (let i = 0; i < 100 && !opened; i++) {
      opened = await b.open(sessionId, 'write').then((o) => o.mode, () => undefined);
      if (!opened) await new Promise((r) => setTimeout(r, 20));
    }
    expect(opened).toBe('write');
    expect(await b.append(sessionId, [msg('three')])).toEqual({ firstSeq: 2, lastSeq: 2 });
  });

  it('a fork of a compacted session starts at the checkpoint and carries its turn and counters', async () => {
    const a = await store(freshSchema('f'));
    const { sessionId } = await a.create({ title: 'parent' });
    await a.append(sessionId, [msg('one'), msg('two'), { kind: 'api', direction: 'request', payload: {} }, msg('three')]);
    await a.compact(sessionId, { summary: 'one and two', throughSeq: 3 });
    await a.append(sessionId, [msg('four')]);
    const fork = await a.fork(sessionId);
    const page = await a.read(fork.sessionId);
    expect(page.records.map((r) => [r.seq, r.kind])).toEqual([[3, 'checkpoint'], [4, 'message'], [5, 'message']]);
    // The counters came with the checkpoint: the fork's next api request is apiSeq 2.
    await a.append(fork.sessionId, [{ kind: 'api', direction: 'request', payload: {} }]);
    const last = (await a.read(fork.sessionId, { afterSeq: 5 })).records[0] as StoredRecord & { apiSeq?: number };
    expect(last).toMatchObject({ seq: 6, apiSeq: 2 });
    expect((await a.list()).sessions.find((s) => s.sessionId === fork.sessionId)?.parent).toEqual({ sessionId, relation: 'fork', atSeq: 5 });
  });

  it('a toolSeq reserved by one instance is never issued by the next writer, even if its tool never started', async () => {
    const schema = freshSchema('t');
    const a = await store(schema);
    const { sessionId } = await a.create({});
    const scratch = await a.allocateScratch(sessionId, 'r1');
    expect(scratch.toolSeq).toBe(1);
    await a.close(sessionId);
    const b = await store(schema);
    await b.open(sessionId, 'write');
    await b.append(sessionId, [{ kind: 'toolStart', name: 'grep', input: {} }]);
    const [rec] = (await b.read(sessionId)).records as Array<StoredRecord & { toolSeq?: number }>;
    expect(rec).toMatchObject({ kind: 'toolStart', toolSeq: 2 });
  });

  it('a subscriber on one instance receives what another instance appends (LISTEN/NOTIFY), in order, once', async () => {
    const schema = freshSchema('w');
    const a = await store(schema);
    const b = await store(schema);
    const { sessionId } = await a.create({});
    await a.append(sessionId, [msg('before')]);
    const got: number[] = [];
    let done: () => void = () => {};
    const all = new Promise<void>((r) => (done = r));
    const w = await b.watch(sessionId, 0, (recs) => {
      got.push(...recs.map((r) => r.seq));
      if (got.length >= 4) done();
      return true;
    }, () => {});
    await a.append(sessionId, [msg('x'), msg('y')]);
    await a.append(sessionId, [msg('z')]);
    await all;
    w.stop();
    expect(got).toEqual([1, 2, 3, 4]);
  });
});
