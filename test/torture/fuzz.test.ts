import { describe, expect, it } from 'vitest';
import { snapshotTree } from '../helpers.js';
import { runFuzz } from './fuzz.js';
import { testSeed } from './seed.js';

/** The short version of `npm run torture` scenario 5: more than 10 000 hostile frames against the binary. */
describe('torture: bad input', () => {
  it('>= 10 000 frames: the process keeps serving, every id is answered well-formed, the store is unchanged', async () => {
    const stats = await runFuzz({ seed: testSeed(), frames: 10_000, perProcess: 1000, snapshot: snapshotTree });
    expect(stats.frames).toBeGreaterThanOrEqual(10_000);
    expect(stats.responses).toBeGreaterThan(5000);
    expect(Object.keys(stats.terminal).length).toBeGreaterThanOrEqual(12);
  }, 180_000);
});
