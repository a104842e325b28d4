import { expect, expectEqual, type Scenario } from '../context.js';
import type { Answer, Json } from '../wire.js';
import { canonical, readAll } from './util.js';

/** §8: SIGKILL during pipelined appends; every acknowledged record is there, identical. */
export const durability: Scenario = {
  name: 'durability',
  summary: 'SIGKILL during pipelined appends (3 rounds): every acknowledged record present and identical, seqs gapless',
  async run(t) {
    const store = t.newStore();
    const setup = await t.started(store);
    const sessionId = (await setup.call<{ sessionId: string }>('session/create', {})).sessionId;
    await setup.shutdown();
    const acked = new Map<number, Json>();
    for (let round = 0; round < 3; round++) {
      await t.check(`kill-round-${round}`, async () => {
        const p = await t.started(store);
        await p.call('session/open', { sessionId });
        const sent: Array<Promise<Answer>> = [];
        const records: Json[][] = [];
        for (let i = 0; i < 200; i++) {
          const recs = [{ kind: 'event', type: 'n', payload: { round, i, pad: 'x'.repeat(i % 7 * 50) } }, { kind: 'message', message: { role: 'user', content: `r${round} #${i}` } }];
          records.push(recs);
          sent.push(p.request('session/append', { sessionId, records: recs }));
        }
        const wait = 5 + round * 20;
        await p.until(() => p.received.filter((m) => m.id !== undefined).length >= wait, `${wait} answers`);
        await p.kill('SIGKILL');
        const answers = await Promise.all(sent.map((a) => a.catch(() => ({ id: null } as Answer))));
        answers.forEach((a, i) => {
          const r = a.result as { firstSeq: number } | undefined;
          if (r) (records[i] as Json[]).forEach((rec, k) => acked.set(r.firstSeq + k, rec));
        });
        const q = await t.started(store);
        await q.call('session/open', { sessionId });
        const stored = await readAll(q, sessionId);
        expectEqual(stored.map((r) => r.seq), stored.map((_, i) => i + 1), 'seqs (gapless from 1)');
        for (const [seq, rec] of acked) {
          const got = stored[seq - 1];
          expect(got, `acknowledged seq ${seq} is missing`);
          const { seq: _s, ts: _t, ...rest } = got;
          expectEqual(canonical(rest), canonical(rec), `record ${seq}`);
        }
        await q.shutdown();
      });
    }
  },
};
