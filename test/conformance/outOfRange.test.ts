import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { rejection, startSidecar } from './harness.js';

type Rec = Record<string, unknown>;
const OUT_OF_RANGE = -31018;
const msg = (content: string) => ({ kind: 'message' as const, message: { role: 'user', content } });

/**
 * A well-formed value refused because of the session's current state is OutOfRange (-31018) with
 * the range it must be in; -32602 stays for shape. A compaction a kept rewind forbids names it.
 */
describe('OutOfRange: well-formed but outside the session\'s current range', () => {
  it('rewind, compact and read answer OutOfRange with path, min and max; nothing is written', async () => {
    const store = tempDir('sidecar-store-');
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({});
    await c.append({ sessionId, records: [msg('a'), msg('b'), msg('c'), msg('d'), msg('e')] });

    const rewind = await rejection(c.request('session/rewind', { sessionId, toSeq: 99 }));
    expect([rewind.code, rewind.data]).toEqual([OUT_OF_RANGE, { kind: 'OutOfRange', path: 'toSeq', min: 0, max: 5 }]);

    const compact = await rejection(c.request('session/compact', { sessionId, summary: 's', throughSeq: 6 }));
    expect([compact.code, compact.data]).toEqual([OUT_OF_RANGE, { kind: 'OutOfRange', path: 'throughSeq', min: 1, max: 5 }]);


    await c.request('session/compact', { sessionId, summary: 's', throughSeq: 3 });
    const below = await rejection(c.request('session/rewind', { sessionId, toSeq: 2 }));
    expect([below.code, below.data]).toEqual([OUT_OF_RANGE, { kind: 'OutOfRange', path: 'toSeq', min: 3, max: 5 }]);
    await c.shutdown();
  });

  it('a compaction before a kept rewind\'s target: -32602 at throughSeq with data.rewindSeq and data.toSeq', async () => {
    const store = tempDir('sidecar-store-');
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({});
    await c.append({ sessionId, records: [msg('a'), msg('b'), msg('c'), msg('d')] });
    expect(await c.request('session/rewind', { sessionId, toSeq: 1 })).toEqual({ seq: 5, toSeq: 1, turn: null });
    const err = await rejection(c.request('session/compact', { sessionId, summary: 's', throughSeq: 3 }));
    expect(err.code).toBe(-32602);
    expect(err.data).toEqual({ kind: 'InvalidParams', issues: [{ path: 'throughSeq', message: expect.any(String) }], rewindSeq: 5, toSeq: 1 });
    await c.shutdown();
  });
});
