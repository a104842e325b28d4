import { describe, expect, it } from 'vitest';
import { FRAMINGS, startSidecar } from './harness.js';

describe.each(FRAMINGS)('smoke over %s', (framing) => {
  it('creates, appends and reads a session', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create({ title: 't' });
    const r = await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hi' } }] });
    expect(r).toEqual({ firstSeq: 1, lastSeq: 1 });
    const page = await c.read({ sessionId });
    expect(page.records.map((x) => x.seq)).toEqual([1]);
    expect(await c.shutdown()).toEqual({ code: 0, signal: null });
  });
});
