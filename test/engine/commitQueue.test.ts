import { describe, expect, it } from 'vitest';
import type { SealedRecord } from '../../src/backend/port.js';
import { kindOf, recordQueue } from '../../src/engine/recordSink.js';
import type { PlanState } from '../../src/engine/layOut.js';
import { StoreError } from '../../src/store/errors.js';
import { NO_RUNTIME } from '../../src/store/runtime/counters.js';

const START: PlanState = { turn: null, runtime: NO_RUNTIME };
const rec = (i: number) => JSON.stringify({ kind: 'message', message: { role: 'user', content: `m${i}` } });

/** A sink that keeps persisted batches in memory; `next` decides how the next persist ends. */
function sink() {
  const batches: SealedRecord[][] = [];
  const held: Array<() => void> = [];
  let fail: unknown;
  let hold = false;
  return {
    batches,
    failNext(err: unknown) { fail = err; },
    holdNext() { hold = true; },
    release() { held.splice(0).forEach((r) => r()); },
    gate: (texts: string[]) => (texts.some((t) => t.includes('SECRET-VALUE')) ? 'raw' : undefined),
    clock: () => Date.parse('2026-01-01T00:00:00.000Z'),
    async persist(recs: SealedRecord[]) {
      if (hold) {
        hold = false;
        await new Promise<void>((r) => held.push(r));
      }
      if (fail !== undefined) {
        const e = fail;
        fail = undefined;
        throw e;
      }
      batches.push(recs);
    },
  };
}

describe('engine commit queue', () => {
  it('appends sent while a persist runs share the next one (group commit), with arrival-order gapless seqs', async () => {
    const s = sink();
    const q = recordQueue(s, 0, START);
    s.holdNext();
    const first = q.append({ texts: [rec(1)] });
    await new Promise((r) => setImmediate(r)); // the first persist is in flight
    const rest = [2, 3, 4].map((i) => q.append({ texts: [rec(i), rec(i + 10)] }));
    s.release();
    const answers = await Promise.all([first, ...rest]);
    expect(answers.map((a) => [a.firstSeq, a.lastSeq])).toEqual([[1, 1], [2, 3], [4, 5], [6, 7]]);
    expect(s.batches.map((b) => b.map((r) => r.seq))).toEqual([[1], [2, 3, 4, 5, 6, 7]]);
    expect(s.batches[1]!.every((r) => r.kind === 'message')).toBe(true);
    expect(q.lastSeq).toBe(7);
  });

  it('a request refused by expectedLastSeq or the final gate fails alone; the others of its batch commit', async () => {
    const s = sink();
    const q = recordQueue(s, 5, START);
    const ok = q.append({ texts: [rec(1)], expectedLastSeq: 5 });
    const stale = q.append({ texts: [rec(2)], expectedLastSeq: 5 });
    const secret = q.append({ texts: [JSON.stringify({ kind: 'event', v: 'SECRET-VALUE' })] });
    const after = q.append({ texts: [rec(3)] });
    await expect(ok).resolves.toMatchObject({ firstSeq: 6, lastSeq: 6 });
    await expect(stale).rejects.toMatchObject({ kind: 'Conflict', details: { expectedLastSeq: 5, lastSeq: 6 } });
    await expect(secret).rejects.toMatchObject({ kind: 'SecretRejected' });
    await expect(after).resolves.toMatchObject({ firstSeq: 7, lastSeq: 7 });
    expect(s.batches.flat().some((r) => r.text.includes('SECRET-VALUE'))).toBe(false);
  });

  it('a failed persist fails its whole batch and leaves the committed view; a certain failure keeps the queue writable', async () => {
    const s = sink();
    const q = recordQueue(s, 0, START);
    s.failNext(new StoreError('Unavailable', 'the database cannot be reached', { outcome: 'notWritten', retryable: true, retryAfterMs: 1000 }));
    const a = q.append({ texts: [rec(1)] });
    const b = q.append({ texts: [rec(2)] });
    await expect(a).rejects.toMatchObject({ kind: 'Unavailable' });
    await expect(b).rejects.toMatchObject({ kind: 'Unavailable' });
    expect(q.lastSeq).toBe(0);
    await expect(q.append({ texts: [rec(3)] })).resolves.toMatchObject({ firstSeq: 1 });
  });

  it('an unknown outcome (Unavailable during COMMIT) stops the queue for good', async () => {
    const s = sink();
    const q = recordQueue(s, 0, START);
    s.failNext(new StoreError('Unavailable', 'the connection broke during COMMIT', { outcome: 'unknown', retryable: true, retryAfterMs: 1000 }));
    await expect(q.append({ texts: [rec(1)] })).rejects.toMatchObject({ kind: 'Unavailable', details: { outcome: 'unknown' } });
    expect(q.stoppedReason).toBeDefined();
    await expect(q.append({ texts: [rec(2)] })).rejects.toMatchObject({ kind: 'ReadOnly', details: { reason: 'failStop' } });
    expect(s.batches).toEqual([]);
  });

  it('kindOf reads the kind of a prepared text and of an auto-mode text with its turnId first', () => {
    expect(kindOf('{"kind":"message","x":1}')).toBe('message');
    expect(kindOf('{"turnId":"01ABC","kind":"toolStart","toolSeq":1}')).toBe('toolStart');
    expect(kindOf('{"x":{"kind":"inner"},"kind":"outer"}')).toBe('outer');
  });
});
