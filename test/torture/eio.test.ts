import { describe, expect, it } from 'vitest';
import { runEio } from './eio.js';
import { testSeed } from './seed.js';

/** The short version of `npm run torture` scenario 4: EIO from every sync call of a workload, in turn. */
describe('torture (simulated, in process over a faulting fs layer): EIO from fdatasync/fsync', () => {
  it('nothing is acknowledged, the session fail-stops, a fresh store opens it cleanly with the acknowledged records', async () => {
    const stats = await runEio({ workloads: 1, ops: 30, seed: testSeed() });
    expect(stats.injections).toBeGreaterThan(20);
    expect(stats.byCall.fdatasync).toBeGreaterThan(0);
    expect(stats.byCall.fsync).toBeGreaterThan(0);
    expect(stats.uncertain).toBeGreaterThan(0);
    expect(stats.refusedAfterFailStop).toBeGreaterThan(0);
    expect(stats.freshOpens).toBeGreaterThan(stats.injections);
  }, 120_000);
});
