import { expect, expectEqual, expectError, type Scenario } from '../context.js';
import type { Answer, Json } from '../wire.js';
import { readAll } from './util.js';

/**
 * §4.7/§6.3: idempotencyKey. Appends pipelined with a key each, SIGKILL mid-pipeline, a new
 * server, EVERY unanswered append resent with its key: each record exactly once, in order,
 * answered seqs kept; the same key with other records is Conflict idempotencyKeyReused.
 */
export const idempotency: Scenario = {
  name: 'idempotency',
  summary: 'idempotencyKey: retry answers the original seqs; SIGKILL mid-pipeline then every unanswered append resent: each record once, in order; reuse is Conflict idempotencyKeyReused',
  async run(t) {
    const store = t.newStore();
    const setup = await t.started(store);
    const sessionId = (await setup.call<{ sessionId: string }>('session/create', {})).sessionId;
    await t.check('retry-same-key', async () => {
      const params = { sessionId, idempotencyKey: 'first', records: [{ kind: 'event', type: 'n', payload: { i: -1 } }] };
      expectEqual((await setup.request('session/append', params)).result, { firstSeq: 1, lastSeq: 1 }, 'first answer');
      expectEqual((await setup.request('session/append', params)).result, { firstSeq: 1, lastSeq: 1 }, 'retry answer');
      const e = expectError(await setup.request('session/append', { ...params, records: [{ kind: 'event', type: 'other', payload: {} }] }), -31003, 'Conflict');
      expectEqual(e.data?.reason, 'idempotencyKeyReused', 'data.reason');
    });
    await setup.shutdown();
    await t.check('kill-and-retry-every-unanswered', async () => {
      const p = await t.started(store);
      await p.call('session/open', { sessionId });
      const requests = Array.from({ length: 200 }, (_, i) => ({
        sessionId, idempotencyKey: `k${i}`, records: [{ kind: 'event', type: 'n', payload: { i } }, { kind: 'message', message: { role: 'user', content: `#${i}` } }],
      }));
      const sent = requests.map((r) => p.request('session/append', r));
      await p.until(() => p.received.filter((m) => m.id !== undefined).length >= 30, '30 answers');
      await p.kill('SIGKILL');
      const answers = await Promise.all(sent.map((a) => a.catch(() => ({ id: null } as Answer))));
      const q = await t.started(store);
      await q.call('session/open', { sessionId });
      const resent = requests.map((r, i) => (answers[i]?.result ? undefined : q.request('session/append', r)));
      const retried = await Promise.all(resent);
      const stored = await readAll(q, sessionId);
      expectEqual(stored.map((r) => r.seq), stored.map((_, i) => i + 1), 'seqs (gapless from 1)');
      const payloads = stored.slice(1).filter((r) => r.kind === 'event').map((r) => (r.payload as Json).i);
      expectEqual(payloads, requests.map((_, i) => i), 'each append exactly once, in order');
      requests.forEach((_, i) => {
        const res = (answers[i]?.result ?? retried[i]?.result) as { firstSeq: number; lastSeq: number } | undefined;
        expect(res, `append ${i} has no answer`);
        expectEqual([stored[res.firstSeq - 1]?.payload, res.lastSeq - res.firstSeq], [{ i }, 1], `append ${i}'s seqs`);
      });
      await q.shutdown();
    });
  },
};
