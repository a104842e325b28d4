import { describe, expect, it } from 'vitest';
import { runKillTorture } from './kill.js';
import { testSeed } from './seed.js';

/**
 * The short version of `npm run torture` scenario 1: 200 SIGKILLs of the built binary under
 * random pipelined workloads (appends, turn transitions, compactions, state values, runtime
 * records, blobs), three stores at a time. A failure names the seed
 * (replay: TORTURE_SEED=<seed> npx vitest run test/torture/kill.test.ts).
 */
describe('torture: SIGKILL at random instants', () => {
  it('200 kills: every acknowledged record (blobs inline), turn transition, compaction and state value survives; apiSeq/toolSeq continuous; seqs gapless; no Corrupt; torn tails recovered with evidence', async () => {
    const seed = testSeed();
    const stats = await runKillTorture({ runs: 200, seed, lanes: 3 });
    expect(stats.kills).toBe(200);
    expect(stats.checks).toBeGreaterThan(75);
    expect(stats.records).toBeGreaterThan(500);
    expect(stats.uniqueRecords).toBeGreaterThan(250);
    expect(stats.turns).toBeGreaterThan(0);
    expect(stats.compactions).toBeGreaterThan(0);
    expect(stats.runtimeRecords).toBeGreaterThan(0);
    expect(stats.blobRecords).toBeGreaterThan(0);
    expect(stats.stateKeys).toBeGreaterThan(0);
  }, 300_000);
});
