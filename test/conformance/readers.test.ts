import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { runReaders } from '../torture/readers.js';
import { testSeed } from '../torture/seed.js';
import { CLI, rejection, startSidecar } from './harness.js';

/**
 * Readers in other processes follow a session across frequent compactions (protocol/README.md
 * §14.1; STORAGE.md "Following a session across compactions"), over the built binary: a writer
 * sidecar appends and compacts while a subscriber sidecar, `session-sidecar tail -f` and a
 * subscription in the writer itself follow from the first record; each gets exactly the acknowledged seqs 1..N, once, in order, as stored
 * (test/torture/readers.ts). The long form (tens of thousands of records, hundreds of
 * compactions) runs with SIDECAR_READERS_LONG=1, and in `npm run torture` (phase readers).
 * A failure names its seed (replay: TORTURE_SEED=<seed>).
 */

const cli = { command: process.execPath, args: [CLI] };
const LONG = process.env.SIDECAR_READERS_LONG === '1';

describe('readers across compactions by a writer in another process', () => {
  it('a subscriber sidecar, tail -f and the writer’s own subscription receive seqs 1..N once, in order, as stored, while the writer compacts every 100–180 records', async () => {
    const seed = testSeed();
    const stats = await runReaders({ records: 4000, compactEvery: [100, 180], seed, start: startSidecar, cli }).catch((err: Error) => {
      throw new Error(`seed ${seed}: ${err.message}`);
    });
    expect(stats.compactions).toBeGreaterThanOrEqual(20);
    expect(stats.subscriberDelivered).toBe(stats.records);
    expect(stats.ownDelivered).toBe(stats.records);
    expect(stats.tailDelivered).toBe(stats.records);
  }, 300_000);

  it('the same on a store encrypted at rest (sealed journal and archives)', async () => {
    const seed = testSeed();
    const stats = await runReaders({ records: 3000, compactEvery: [100, 160], seed, encrypted: true, start: startSidecar, cli }).catch((err: Error) => {
      throw new Error(`seed ${seed}: ${err.message}`);
    });
    expect(stats.compactions).toBeGreaterThanOrEqual(18);
    expect(stats.subscriberDelivered).toBe(stats.records);
    expect(stats.ownDelivered).toBe(stats.records);
    expect(stats.tailDelivered).toBe(stats.records);
  }, 300_000);

  it.runIf(LONG)('long form: 40,000 records, a compaction every 100–300 records', async () => {
    const seed = testSeed();
    const stats = await runReaders({
      records: 40_000, compactEvery: [100, 300], seed, start: startSidecar, cli, progress: (l) => process.stderr.write(`${l}\n`),
    }).catch((err: Error) => {
      throw new Error(`seed ${seed}: ${err.message}`);
    });
    process.stderr.write(`readers (long): ${JSON.stringify(stats)}\n`);
    expect(stats.compactions).toBeGreaterThanOrEqual(100);
    expect(stats.subscriberDelivered).toBe(stats.records);
    expect(stats.ownDelivered).toBe(stats.records);
    expect(stats.tailDelivered).toBe(stats.records);
  }, 1_800_000);

  it('an archived generation removed under a subscriber: the records before it, then session/didOverflow at the last one; resubscribing is Corrupt (archiveMissing)', async () => {
    const store = tempDir();
    const writer = await startSidecar({ store });
    const { sessionId } = await writer.create();
    const one = (i: number) => ({ kind: 'message' as const, message: { role: 'user', content: `m${i}` } });
    for (let i = 1; i <= 10; i++) await writer.append({ sessionId, records: [one(i)] });
    await writer.request('session/compact', { sessionId, summary: 'through 10', throughSeq: 10 });
    for (let i = 11; i <= 20; i++) await writer.append({ sessionId, records: [one(i)] });
    await writer.request('session/compact', { sessionId, summary: 'through 20', throughSeq: 20 });
    fs.rmSync(path.join(store, 'history', sessionId, '1.jsonl')); // it alone held 11..20
    const reader = await startSidecar({ store });
    await reader.request('session/subscribe', { sessionId, afterSeq: 0 });
    for (const end = Date.now() + 30_000; !reader.notifications.some((n) => n.method === 'session/didOverflow');) {
      if (Date.now() > end) throw new Error('no session/didOverflow');
      await new Promise((r) => setTimeout(r, 25));
    }
    const seqs = reader.notifications.filter((n) => n.method === 'session/didAppend')
      .flatMap((n) => (n.params as { records: Array<{ seq: number }> }).records.map((r) => r.seq));
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(reader.notifications.at(-1)).toEqual({ method: 'session/didOverflow', params: { sessionId, lastDeliveredSeq: 10 } });
    const err = await rejection(reader.request('session/subscribe', { sessionId, afterSeq: 10 }));
    expect(err.code).toBe(-31004);
    expect(err.data).toMatchObject({ kind: 'Corrupt', reason: 'archiveMissing', generation: 1, seq: 11 });
    await reader.shutdown();
    await writer.shutdown();
  });
});
