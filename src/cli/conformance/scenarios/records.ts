import { expectEqual, expectResult, type Scenario } from '../context.js';
import { appended, canonical, newSession, readAll, type Rec } from './util.js';

/** Every record kind a client appends, as sent; the records of a page, as stored. */
const SAMPLES: Record<string, Rec> = {
  message: {
    kind: 'message',
    message: {
      role: 'assistant', content: [{ type: 'text', text: 'héllo \u2028 ✓ 😀' }], vendorField: { n: 1.5e300, z: -0, big: 12345678901234567890 },
      toolCalls: [{ id: 'c1', name: 'bash', arguments: '{"cmd":"ls"}' }], reasoningDetails: [{ signature: 'AbC=' }],
    },
  },
  interruption: { kind: 'interruption', reason: 'cancelled', phase: 'executingTools', assistantText: 'partial', toolResults: [{ id: 'c1', name: 'bash', result: 'ok' }] },
  event: { kind: 'event', type: 'x.custom', payload: { nested: [1, 'two', null, true] } },
  api: { kind: 'api', direction: 'request', payload: { model: 'm', messages: [] } },
  toolStart: { kind: 'toolStart', toolSeq: 1, requestId: 'r1', tool: 'bash', toolUseId: 'c1' },
  toolStream: { kind: 'toolStream', toolSeq: 1, stream: 'stdout', text: 'out\n' },
  toolFinish: { kind: 'toolFinish', toolSeq: 1, requestId: 'r1', success: true, exitCode: 0, outputLen: 4 },
};

/** §5: records of every kind round-trip (values exact); paging; kinds filter. */
export const records: Scenario = {
  name: 'records',
  summary: 'every record kind round-trips value-exact; paging with afterSeq/limit; kinds filter',
  async run(t) {
    const p = await t.started();
    const sessionId = await newSession(p);
    const kinds = Object.keys(SAMPLES);
    await t.check('append-every-kind', async () => {
      expectEqual(expectResult(await p.request('session/append', { sessionId, records: Object.values(SAMPLES) })), { firstSeq: 1, lastSeq: kinds.length }, 'result');
    });
    for (const [i, kind] of kinds.entries()) {
      await t.check(`round-trip-${kind}`, async () => {
        const r = expectResult<{ records: Rec[] }>(await p.request('session/read', { sessionId, afterSeq: i, limit: 1 }));
        const stored = r.records[0] as Rec;
        expectEqual(stored.seq, i + 1, 'seq');
        expectEqual(canonical(appended(stored)), canonical(SAMPLES[kind]), 'the record as appended');
      });
    }
    await t.check('api-seq-assigned', async () => {
      const r = expectResult<{ records: Rec[] }>(await p.request('session/read', { sessionId, kinds: ['api'] }));
      expectEqual(r.records.map((x) => x.apiSeq), [1], 'apiSeq');
    });
    await t.check('paging', async () => {
      const s = await newSession(p);
      const sent = Array.from({ length: 25 }, (_, i) => ({ kind: 'event', type: 'n', payload: i }));
      await p.call('session/append', { sessionId: s, records: sent });
      const pages: Array<number | null> = [];
      let afterSeq = 0;
      const got: Rec[] = [];
      for (;;) {
        const r = expectResult<{ records: Rec[]; nextAfterSeq: number | null; lastSeq: number }>(await p.request('session/read', { sessionId: s, afterSeq, limit: 10 }));
        got.push(...r.records);
        pages.push(r.nextAfterSeq);
        if (r.nextAfterSeq === null || pages.length > 5) break;
        afterSeq = r.nextAfterSeq;
      }
      expectEqual(pages, [10, 20, null], 'nextAfterSeq of each page');
      expectEqual(got.map((x) => x.payload), sent.map((x) => x.payload), 'payloads in order');
    });
    await t.check('kinds-filter', async () => {
      const all = await readAll(p, sessionId, { kinds: ['event', 'toolStream'] });
      expectEqual(all.map((x) => x.kind), ['event', 'toolStream'], 'kinds');
    });
  },
};
