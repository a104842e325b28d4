import { describe, expect, it } from 'vitest';
import type { Backend, SealedRecord } from '../../../src/core/port.js';
import { FinalGate } from '../../../src/core/gate.js';
import { commitQueue } from '../../../src/core/sessions/commitSink.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import { CommitQueue, type CommitSink, FailStop } from '../../../src/core/commit/commitQueue.js';
import type { PlanState } from '../../../src/core/commit/layOut.js';
import { StoreError } from '../../../src/domain/errors.js';
import { NO_RUNTIME } from '../../../src/domain/runtimeCounters.js';
import { NO_USAGE } from '../../../src/domain/usage.js';

const START: PlanState = { turn: null, runtime: NO_RUNTIME, usage: NO_USAGE };
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

/** The core's commit queue (core/sessions/commitSink.ts) over a backend whose persist is `s`'s; SECRET-VALUE is registered. */
function recordQueue(s: ReturnType<typeof sink>, lastSeq: number, state: PlanState) {
  const secrets = new SecretSet();
  secrets.add('SECRET-VALUE');
  const backend = { leases: { check: () => undefined }, persist: (_f: unknown, recs: SealedRecord[]) => s.persist(recs) } as unknown as Backend;
  return commitQueue({ backend, gate: new FinalGate(secrets), fence: { sessionId: 'S', token: 1 }, clock: s.clock, generation: () => 0, othersWaiting: () => false }, lastSeq, state);
}

const kinds = (n: number, kind = 'message') => Array.from({ length: n }, () => kind);

describe('engine commit queue', () => {
  it('appends sent while a persist runs share the next one (group commit), with arrival-order gapless seqs', async () => {
    const s = sink();
    const q = recordQueue(s, 0, START);
    s.holdNext();
    const first = q.append({ texts: [rec(1)], kinds: kinds(1) });
    await new Promise((r) => setImmediate(r)); // the first persist is in flight
    const rest = [2, 3, 4].map((i) => q.append({ texts: [rec(i), rec(i + 10)], kinds: kinds(2) }));
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
    const ok = q.append({ texts: [rec(1)], kinds: kinds(1), expectedLastSeq: 5 });
    const stale = q.append({ texts: [rec(2)], kinds: kinds(1), expectedLastSeq: 5 });
    const secret = q.append({ texts: [JSON.stringify({ kind: 'event', v: 'SECRET-VALUE' })], kinds: kinds(1, 'event') });
    const after = q.append({ texts: [rec(3)], kinds: kinds(1) });
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
    const a = q.append({ texts: [rec(1)], kinds: kinds(1) });
    const b = q.append({ texts: [rec(2)], kinds: kinds(1) });
    await expect(a).rejects.toMatchObject({ kind: 'Unavailable' });
    await expect(b).rejects.toMatchObject({ kind: 'Unavailable' });
    expect(q.lastSeq).toBe(0);
    await expect(q.append({ texts: [rec(3)], kinds: kinds(1) })).resolves.toMatchObject({ firstSeq: 1 });
  });

  it('an unknown outcome (Unavailable during COMMIT) stops the queue for good', async () => {
    const s = sink();
    const q = recordQueue(s, 0, START);
    s.failNext(new StoreError('Unavailable', 'the connection broke during COMMIT', { outcome: 'unknown', retryable: true, retryAfterMs: 1000 }));
    await expect(q.append({ texts: [rec(1)], kinds: kinds(1) })).rejects.toMatchObject({ kind: 'Unavailable', details: { outcome: 'unknown' } });
    expect(q.stoppedReason).toBeDefined();
    await expect(q.append({ texts: [rec(2)], kinds: kinds(1) })).rejects.toMatchObject({ kind: 'ReadOnly', details: { reason: 'failStop' } });
    expect(s.batches).toEqual([]);
  });

  it('a FailStop from persist answers its error and stops the queue; exclusive operations behind it are refused', async () => {
    const view = { lastSeq: 0, state: START };
    let persisted = 0;
    let fail: unknown;
    const s: CommitSink<string[]> = {
      committed: () => view,
      clock: () => 0,
      seal: (texts) => ({ sealed: texts }),
      async persist(batch, next) {
        if (fail) throw fail;
        persisted += batch.flat().length;
        view.lastSeq = next.lastSeq;
      },
    };
    const q = new CommitQueue(s, 1 << 20);
    await expect(q.append({ texts: [rec(1)], kinds: kinds(1) })).resolves.toMatchObject({ firstSeq: 1, lastSeq: 1 });
    fail = new FailStop(new StoreError('Conflict', 'changed underneath', { reason: 'journalChanged' }), 'the journal was changed by another writer');
    const failed = q.append({ texts: [rec(2)], kinds: kinds(1) });
    const op = q.exclusive(() => 'ran');
    await expect(failed).rejects.toMatchObject({ kind: 'Conflict', details: { reason: 'journalChanged' } });
    await expect(op).rejects.toMatchObject({ kind: 'ReadOnly', details: { reason: 'failStop' } });
    expect(q.stoppedReason).toBe('the journal was changed by another writer');
    expect(persisted).toBe(1);
    expect(q.lastSeq).toBe(1);
  });

  it('an exclusive operation runs only behind the fence: fenced is refused preCommit and stops the queue; a failed check changes nothing', async () => {
    let fence: () => StoreError | undefined = () => { throw Object.assign(new Error('lstat failed'), { code: 'EIO' }); };
    const s: CommitSink<string[]> = {
      committed: () => ({ lastSeq: 0, state: START }), clock: () => 0, seal: (texts) => ({ sealed: texts }), persist: async () => undefined,
      fence: () => fence(),
    };
    const q = new CommitQueue(s, 1 << 20);
    let ran = 0;
    await expect(q.exclusive(() => ++ran)).rejects.toMatchObject({ kind: 'NotWritten', details: { stage: 'preCommit', errno: 'EIO' } });
    expect(q.stoppedReason).toBeUndefined();
    fence = () => undefined;
    await expect(q.exclusive(() => ++ran)).resolves.toBe(1);
    // an operation's own non-store error passes through and does not stop the queue
    const raw = new Error('raw');
    await expect(q.exclusive(() => { throw raw; })).rejects.toBe(raw);
    expect(q.stoppedReason).toBeUndefined();
    fence = () => new StoreError('LeaseLost', 'lost', { sessionId: 'S' });
    await expect(q.exclusive(() => ++ran)).rejects.toMatchObject({ kind: 'LeaseLost', details: { stage: 'preCommit' } });
    expect(ran).toBe(1);
    await expect(q.append({ texts: [rec(1)], kinds: kinds(1) })).rejects.toMatchObject({ kind: 'ReadOnly' });
  });

  it('records carry the kinds their request gave, never parsed back from the text', async () => {
    const s = sink();
    const q = recordQueue(s, 0, START);
    await q.append({ texts: ['{"turnId":"01ABC","kind":"toolStart","toolSeq":1}', '{"x":{"kind":"inner"},"kind":"outer"}'], kinds: ['toolStart', 'outer'] });
    expect(s.batches.flat().map((r) => [r.seq, r.kind])).toEqual([[1, 'toolStart'], [2, 'outer']]);
  });
});
