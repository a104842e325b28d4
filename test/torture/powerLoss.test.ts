import { describe, expect, it } from 'vitest';
import { runPowerLoss } from './powerLoss.js';
import { testSeed } from './seed.js';

/** The short version of `npm run torture` scenario 2: simulated power loss at every sync point. */
describe('torture (simulated, in process over a recording fs layer): power loss at every sync point', () => {
  it('every crash image opens without Corrupt and holds every record acknowledged before the crash (blobs intact) and every acknowledged state value; readers, a killed writer, fork/delete/restore/purge strand nothing', async () => {
    // 12 operations per workload (50 in `npm run torture`): the scheduled forks, deletes,
    // restores, purges and the killed writer add about a hundred sync points of their own.
    const stats = await runPowerLoss({ workloads: 3, ops: 12, seed: testSeed() });
    expect(stats.crashPoints).toBeGreaterThan(40);
    expect(stats.images).toBeGreaterThan(stats.crashPoints);
    expect(stats.variants.torn).toBeGreaterThan(0);
    expect(stats.variants['torn+index']).toBeGreaterThan(0);
    expect(stats.variants.zeros).toBeGreaterThan(0);
    expect(stats.variants['synced+index']).toBeGreaterThan(0);
    expect(stats.records).toBeGreaterThan(0);
    expect(stats.recovered).toBeGreaterThan(0); // some images end in a torn tail that is cut, with evidence
    expect(stats.moves).toEqual({ fork: 3, delete: 6, restore: 3, purge: 3 });
    expect(stats.abandons).toBe(3);
    expect(Object.values(stats.readerOps).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(6);
  }, 120_000);
});
