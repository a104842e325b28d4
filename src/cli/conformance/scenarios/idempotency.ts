import { expect, expectEqual, expectError, type Scenario } from '../context.js';
import type { Answer, Json } from '../wire.js';
import { readAll } from './util.js';

/**
 * §4.7/§6.3: idempotencyKey. Appends pipelined with a key each, SIGKILL mid-pipeline, a new
 * server, EVERY unanswered append resent with its key: each record exactly once, in order,
 * answered seqs kept; the same key with other records is Conflict idempotencyKeyReused. The
 * same for session/create (a retry answers the original session) and session/update (its seq).
 */
export const idempotency: Scenario = {
  name: 'idempotency',
  summary: 'idempotencyKey on append, create and update: a retry answers the original; SIGKILL mid-pipeline then every unanswered request resent: each record and session once, in order; reuse is Conflict idempotencyKeyReused',
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
    await t.check('create-and-update-retry-same-key', async () => {
      const p = await t.started(store);
      const a = await p.request('session/create', { title: 'keyed', idempotencyKey: 'create-a' });
      const b = await p.request('session/create', { title: 'keyed', idempotencyKey: 'create-a' });
      expect(a.result !== undefined, 'the create is answered');
      expectEqual(b.result, a.result, 'the retried create answers the original');
      const id = (a.result as { sessionId: string }).sessionId;
      const e = expectError(await p.request('session/create', { title: 'other', idempotencyKey: 'create-a' }), -31003, 'Conflict');
      expectEqual([e.data?.reason, e.data?.sessionId], ['idempotencyKeyReused', id], 'data');
      const u = { sessionId: id, title: 'renamed', idempotencyKey: 'update-a' };
      const first = await p.call<{ seq: number }>('session/update', u);
      await p.call('session/append', { sessionId: id, records: [{ kind: 'event', type: 'n', payload: {} }] });
      expectEqual((await p.call<{ seq: number }>('session/update', u)).seq, first.seq, 'the retried update answers the original seq');
      expectEqual((await readAll(p, id)).map((r) => r.kind), ['sessionUpdate', 'event'], 'one update record');
      // After session/close, and in a new process after a clean exit, the key still finds it.
      await p.call('session/close', { sessionId: id });
      expectEqual((await p.call<{ sessionId: string }>('session/create', { title: 'keyed', idempotencyKey: 'create-a' })).sessionId, id, 'the retry after session/close answers the original');
      await p.shutdown();
      const q = await t.started(store);
      expectEqual((await q.call<{ sessionId: string }>('session/create', { title: 'keyed', idempotencyKey: 'create-a' })).sessionId, id, 'the retry in a new process after a clean exit answers the original');
      await q.shutdown();
    });
    await t.check('kill-and-retry-every-unanswered-create-and-update', async () => {
      const p = await t.started(store);
      const creates = Array.from({ length: 60 }, (_, i) => ({ title: `run ${i}`, tags: ['killed'], idempotencyKey: `c${i}` }));
      const sent = creates.map((c) => p.request('session/create', c));
      await p.until(() => p.received.filter((m) => m.id !== undefined).length >= 8, '8 answers');
      await p.kill('SIGKILL');
      const answers = await Promise.all(sent.map((a) => a.catch(() => ({ id: null } as Answer))));
      const q = await t.started(store);
      const retried = await Promise.all(creates.map((c, i) => (answers[i]?.result ? undefined : q.request('session/create', c))));
      const ids = creates.map((_, i) => ((answers[i]?.result ?? retried[i]?.result) as { sessionId: string } | undefined)?.sessionId);
      ids.forEach((id, i) => expect(id !== undefined, `create ${i} has no answer`));
      const listed = await q.call<{ sessions: Array<{ sessionId: string; title?: string }> }>('session/list', { tags: ['killed'], limit: 1000 });
      expectEqual(listed.sessions.map((x) => x.title).sort(), creates.map((c) => c.title).sort(), 'each session exactly once');
      expectEqual(new Set(listed.sessions.map((x) => x.sessionId)), new Set(ids), 'the answered ids are the stored ones');
      const target = ids[0] as string;
      await q.call('session/open', { sessionId: target }); // answered by the killed server: not open in this one
      const updates = Array.from({ length: 120 }, (_, i) => ({ sessionId: target, metadata: { [`m${i}`]: i }, idempotencyKey: `u${i}` }));
      const sentUpdates = updates.map((u) => q.request('session/update', u));
      await q.until(() => q.received.filter((m) => m.id !== undefined && (m.result as { seq?: number } | undefined)?.seq !== undefined).length >= 10, '10 update answers');
      await q.kill('SIGKILL');
      const uAnswers = await Promise.all(sentUpdates.map((a) => a.catch(() => ({ id: null } as Answer))));
      const r = await t.started(store);
      await r.call('session/open', { sessionId: target });
      const uRetried = await Promise.all(updates.map((u, i) => (uAnswers[i]?.result ? undefined : r.request('session/update', u))));
      const stored = (await readAll(r, target)).filter((x) => x.kind === 'sessionUpdate');
      expectEqual(stored.map((x) => Object.keys(x.metadata as Json)[0]), updates.map((_, i) => `m${i}`), 'each update exactly once, in order');
      updates.forEach((_, i) => {
        const seq = ((uAnswers[i]?.result ?? uRetried[i]?.result) as { seq: number } | undefined)?.seq;
        expectEqual(seq, stored[i]?.seq, `update ${i}'s seq`);
      });
      await r.shutdown();
    });
  },
};
