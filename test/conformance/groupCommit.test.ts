import { describe, expect, it } from 'vitest';
import { startSidecar } from './harness.js';

describe('group commit', () => {
  it('8 lanes pipelining 10,000 appends into one session: all durable, ordered per lane, gapless, no duplicates', async () => {
    const c = await startSidecar();
    const { sessionId } = await c.create();
    const lanes = 8;
    const perLane = 1250;
    const acked: Array<{ lane: number; i: number; seq: number }> = [];
    await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
      const inFlight: Array<Promise<void>> = [];
      for (let i = 0; i < perLane; i++) {
        inFlight.push(c.append({ sessionId, records: [{ kind: 'event', type: 'lane', payload: { lane, i } }] })
          .then((r) => void acked.push({ lane, i, seq: r.firstSeq })));
      }
      await Promise.all(inFlight);
    }));
    expect(acked).toHaveLength(lanes * perLane);
    const records: Array<Record<string, unknown>> = [];
    for (let afterSeq = 0; ;) {
      const page = await c.read({ sessionId, afterSeq, limit: 5000 });
      records.push(...page.records);
      if (page.nextAfterSeq === null) break;
      afterSeq = page.nextAfterSeq;
    }
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: lanes * perLane }, (_, i) => i + 1));
    const bySeq = new Map(records.map((r) => [r.seq, r.payload as { lane: number; i: number }]));
    for (const a of acked) expect(bySeq.get(a.seq)).toEqual({ lane: a.lane, i: a.i });
    for (let lane = 0; lane < lanes; lane++) {
      const order = records.filter((r) => (r.payload as { lane: number }).lane === lane).map((r) => (r.payload as { i: number }).i);
      expect(order).toEqual(Array.from({ length: perLane }, (_, i) => i));
    }
    await c.shutdown();
  });
});
