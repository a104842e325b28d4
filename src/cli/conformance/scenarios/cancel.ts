import { expect, expectEqual, expectResult, type Scenario } from '../context.js';
import { newSession, user } from './util.js';

/** §3.4: $/cancelRequest — a request is answered exactly once, with its result or -32800. */
export const cancel: Scenario = {
  name: 'cancel',
  summary: '$/cancelRequest: each request answered once (result or -32800); unknown ids ignored',
  async run(t) {
    const p = await t.started();
    const sessionId = await newSession(p);
    await t.check('cancelled-or-answered', async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
      const answers = ids.map((id) => p.request('session/append', { sessionId, records: [user(id)] }, { id }));
      for (const id of ids) p.notify('$/cancelRequest', { id });
      const got = await Promise.all(answers);
      for (const a of got) expect(a.error === undefined || a.error.code === -32800, `an answer other than a result or -32800: ${a.error?.code}`);
      const { lastSeq } = await p.call<{ lastSeq: number }>('session/read', { sessionId, limit: 1 });
      expectEqual(lastSeq, got.filter((a) => a.error === undefined).length, 'records written = appends answered with a result');
      const counted = p.received.filter((m) => typeof m.id === 'string' && ids.includes(m.id)).length;
      expectEqual(counted, ids.length, 'answers (each request exactly once)');
    });
    await t.check('unknown-id-ignored', async () => {
      const before = p.received.length;
      p.notify('$/cancelRequest', { id: 'never-sent' });
      expectResult(await p.request('session/list', {}));
      expectEqual(p.received.length, before + 1, 'messages received');
    });
  },
};
