/**
 * §6.3 reconcile with idempotencyKey, against the built binary: many appends pipelined, each
 * with its own key; the sidecar SIGKILLed mid-pipeline; a new sidecar opens the session and
 * EVERY unanswered request is retried with its key (in the order first sent). The session then
 * holds each record exactly once, in order of first sending, answered appends keep their seqs,
 * and a retry answers the seqs the records really have.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { FRAMINGS, readAll, rejection, startSidecar } from './harness.js';

type Rec = { kind: 'message'; message: { role: string; content: string } };


const APPENDS = 400;

describe.each(FRAMINGS)('idempotent retry after SIGKILL mid-pipeline (%s)', (framing) => {
  it('every unanswered append retried with its key: each record exactly once, in order, answered seqs kept', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ title: 'idem' });
    await c.open({ sessionId });
    const requests = Array.from({ length: APPENDS }, (_, i) => ({
      idempotencyKey: `append-${i}`,
      records: Array.from({ length: 1 + (i % 3) }, (_, k): Rec => ({ kind: 'message', message: { role: 'user', content: `a${i}-k${k}-${'p'.repeat(i % 200)}` } })),
    }));
    const answered = new Map<number, { firstSeq: number; lastSeq: number }>();
    const killAfter = 40 + Math.floor(Math.random() * 120);
    await Promise.all(requests.map((r, i) => c.append({ sessionId, ...r }).then((res) => {
      answered.set(i, res);
      if (answered.size === killAfter) c.child.kill('SIGKILL');
    }, () => undefined)));
    await c.exited;
    expect(answered.size).toBeGreaterThanOrEqual(killAfter);
    expect(answered.size).toBeLessThan(APPENDS); // killed mid-pipeline: some were unanswered

    const d = await startSidecar({ framing, store });
    const { lastSeq: landedThrough } = await d.open({ sessionId });
    const retried = new Map<number, { firstSeq: number; lastSeq: number }>();
    // Every unanswered request, pipelined again with its key, in the order first sent.
    await Promise.all(requests.map(async (r, i) => {
      if (!answered.has(i)) retried.set(i, await d.append({ sessionId, ...r }));
    }));
    // Unanswered appends that had landed before the kill were answered from their keys, not written again.
    const landedUnanswered = [...retried.values()].filter((r) => r.lastSeq <= landedThrough).length;
    console.log(`${framing}: ${answered.size} answered, ${retried.size} retried, of which ${landedUnanswered} had landed before the kill`);
    // An answered one retried too answers its original seqs.
    const [someAnswered, original] = [...answered][0]!;
    expect(await d.append({ sessionId, ...requests[someAnswered]! })).toEqual(original);

    const stored = await readAll(d, sessionId);
    expect(stored.map((r) => r.seq)).toEqual(stored.map((_, i) => i + 1));
    const contents = stored.map((r) => (r.message as { content: string }).content);
    expect(contents).toEqual(requests.flatMap((r) => r.records.map((x) => x.message.content))); // exactly once, in order
    const seqOf = new Map(stored.map((r) => [(r.message as { content: string }).content, r.seq as number]));
    for (const [i, res] of [...answered, ...retried]) {
      const recs = requests[i]!.records;
      expect(res, `append ${i}`).toEqual({ firstSeq: seqOf.get(recs[0]!.message.content), lastSeq: seqOf.get(recs.at(-1)!.message.content) });
    }
    // The same key with other records is refused, data without the key.
    const err = await rejection(d.append({ sessionId, idempotencyKey: 'append-0', records: [{ kind: 'message', message: { role: 'user', content: 'other' } }] }));
    expect(err.code).toBe(-31003);
    expect(err.data).toMatchObject({ kind: 'Conflict', reason: 'idempotencyKeyReused', firstSeq: 1 });
    await d.shutdown();
    fs.rmSync(store, { recursive: true, force: true });
  });
});
