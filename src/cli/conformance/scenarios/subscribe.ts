import { expectEqual, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { canonical, newSession, readAll, user } from './util.js';

/** §14: session/subscribe in the same process and from a second one. */
export const subscribe: Scenario = {
  name: 'subscribe',
  summary: 'didAppend: backlog then live, each record once in order; turn/didChange; a second process; unsubscribe',
  async run(t) {
    const store = t.newStore();
    const p = await t.started(store);
    const sessionId = await newSession(p, { turns: 'auto' });
    await p.call('session/append', { sessionId, records: [user('one')] });
    const delivered = (peer: typeof p) => peer.notifications('session/didAppend').filter((n) => (n.params as Json).sessionId === sessionId).flatMap((n) => (n.params as { records: Json[] }).records);
    await t.check('same-process', async () => {
      expectEqual(expectResult(await p.request('session/subscribe', { sessionId })), { lastSeq: 2 }, 'result');
      await p.call('session/append', { sessionId, records: [{ kind: 'message', message: { role: 'assistant', content: 'two' } }] });
      await p.until(() => delivered(p).length >= 4, 'four records delivered');
      expectEqual(canonical(delivered(p)), canonical(await readAll(p, sessionId)), 'delivered records = stored records');
    });
    await t.check('turn-didChange', async () => {
      await p.until(() => p.notifications('turn/didChange').length > 0, 'turn/didChange');
      const last = p.notifications('turn/didChange').at(-1)!.params as Json;
      expectEqual([last.sessionId, (last.turn as Json).status], [sessionId, 'completed'], 'the last turn/didChange');
    });
    await t.check('second-process', async () => {
      const q = await t.started(store);
      expectEqual(expectResult(await q.request('session/subscribe', { sessionId, afterSeq: 4 })), { lastSeq: 4 }, 'result');
      await p.call('session/append', { sessionId, records: [user('three')] });
      await q.until(() => delivered(q).length >= 2, 'records appended by the other process');
      expectEqual(delivered(q).map((r) => r.seq), [5, 6], 'seqs delivered to the second process');
    });
    await t.check('unsubscribe', async () => {
      expectEqual(expectResult(await p.request('session/unsubscribe', { sessionId })), {}, 'result');
      const before = delivered(p).length;
      await p.call('session/append', { sessionId, records: [{ kind: 'event', type: 'e', payload: 1 }] });
      await p.call('session/list', {});
      expectEqual(delivered(p).length, before, 'records delivered after unsubscribe');
    });
  },
};
