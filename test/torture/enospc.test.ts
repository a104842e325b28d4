import { describe, expect, it } from 'vitest';
import { runEnospc } from './enospc.js';
import { testSeed } from './seed.js';

/** The short version of `npm run torture` scenario 3: a full disk (a 2 MiB tmpfs), over the binary. */
describe('torture: ENOSPC on a 2 MiB tmpfs', () => {
  it('appends fail NotWritten/RolledBack, the journal stays valid, appends succeed once space is freed', async (ctx) => {
    const result = await runEnospc({ seed: testSeed(), rounds: 6 });
    if ('skipped' in result) {
      console.warn(`ENOSPC torture skipped: ${result.skipped}`);
      ctx.skip();
      return;
    }
    const { stats } = result;
    expect(stats.rounds).toBe(6);
    expect(stats.notWritten + stats.rolledBack).toBeGreaterThan(6);
    expect(stats.appendsAfterFree).toBeGreaterThanOrEqual(12);
    expect(stats.records).toBeGreaterThan(0);
  }, 120_000);
});
