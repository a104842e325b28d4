import { describe, expect, it } from 'vitest';
import { runReaders } from '../torture/readers.js';
import { testSeed } from '../torture/seed.js';
import { CLI, startSidecar } from './harness.js';

/**
 * Readers in other processes follow a session across frequent compactions (protocol/README.md
 * §14.1; STORAGE.md "Following a session across compactions"), over the built binary: a writer
 * sidecar appends and compacts while a subscriber sidecar and `session-sidecar tail -f` follow
 * from the first record; each gets exactly the acknowledged seqs 1..N, once, in order, as stored
 * (test/torture/readers.ts). The long form (tens of thousands of records, hundreds of
 * compactions) runs with SIDECAR_READERS_LONG=1, and in `npm run torture` (phase readers).
 * A failure names its seed (replay: TORTURE_SEED=<seed>).
 */

const cli = { command: process.execPath, args: [CLI] };
const LONG = process.env.SIDECAR_READERS_LONG === '1';

describe('readers across compactions by a writer in another process', () => {
  it('a subscriber sidecar and tail -f receive seqs 1..N once, in order, as stored, while the writer compacts every 100–180 records', async () => {
    const seed = testSeed();
    const stats = await runReaders({ records: 4000, compactEvery: [100, 180], seed, start: startSidecar, cli }).catch((err: Error) => {
      throw new Error(`seed ${seed}: ${err.message}`);
    });
    expect(stats.compactions).toBeGreaterThanOrEqual(20);
    expect(stats.subscriberDelivered).toBe(stats.records);
    expect(stats.tailDelivered).toBe(stats.records);
  }, 300_000);

  it('the same on a store encrypted at rest (sealed journal and archives)', async () => {
    const seed = testSeed();
    const stats = await runReaders({ records: 3000, compactEvery: [100, 160], seed, encrypted: true, start: startSidecar, cli }).catch((err: Error) => {
      throw new Error(`seed ${seed}: ${err.message}`);
    });
    expect(stats.compactions).toBeGreaterThanOrEqual(18);
    expect(stats.subscriberDelivered).toBe(stats.records);
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
    expect(stats.tailDelivered).toBe(stats.records);
  }, 1_800_000);
});
