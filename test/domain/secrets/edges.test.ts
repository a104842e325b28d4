import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers.js';
import { store, storeError } from '../../backends/file/storeHelpers.js';

describe('secret-check edges', () => {
  it('JSON nested too deeply inside a string is refused as InvalidArgument, not a crash', async () => {
    const s = store(tempDir());
    const { sessionId } = await s.create({}, { values: ['S3cr3t-Canary-7f3a9b2c1d'] });
    const deep = `${'['.repeat(100_000)}"Bearer abcdefghijklmnop1234"${']'.repeat(100_000)}`;
    const err = await storeError(s.append(sessionId, [{ kind: 'event', type: 'deep', payload: deep }]), 'InvalidArgument');
    expect(err.details.path).toBe('records[0]');
    expect((await s.read(sessionId)).lastSeq).toBe(0);
    await s.closeAll();
  });

  it('a timestamp-like value cannot be registered (every journal line holds timestamps)', async () => {
    const s = store(tempDir());
    for (const v of ['2026-11-29T08', '2026-11-29', '08:00:00.000Z']) {
      const err = await storeError(s.create({}, { values: [v] }), 'InvalidArgument');
      expect(err.message).toContain('timestamp');
      expect(err.message).not.toContain(v);
    }
    const ok = await s.create({}, { values: ['4182736455463728'] }); // digits alone are fine
    expect(ok.secrets.registered).toBe(1);
    await s.closeAll();
  });
});
