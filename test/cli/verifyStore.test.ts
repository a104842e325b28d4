import { describe, expect, it } from 'vitest';
import { type VerifyExtension, verifyStore } from '../../src/store/verify.js';
import { makeStore } from './helpers.js';

/** verifyStore's extension point (where a blobs check plugs in), called in-process. */

describe('verifyStore extensions', () => {
  it('see every committed record of journals and archives, and add store-wide findings', async () => {
    const f = await makeStore();
    const seen: string[] = [];
    const ext: VerifyExtension = {
      name: 'sample',
      onRecord: (id, rec, file) => seen.push(`${id === f.compacted ? 'C' : id === f.chat ? 'A' : 'F'}${String(rec.seq)}:${file.startsWith('history') ? 'h' : 'j'}`),
      finish: (ctx) => [{ severity: 'warning', check: 'sample', message: `saw ${ctx.sessionIds.length} sessions` }],
    };
    const report = await verifyStore(f.root, { extensions: [ext] });
    expect(report.ok).toBe(true);
    expect(report.store).toEqual([{ severity: 'warning', check: 'sample', message: 'saw 3 sessions' }]);
    expect(seen.filter((s) => s.startsWith('C'))).toEqual(['C2:j', 'C3:j', 'C1:h', 'C2:h']) // the journal, then its archives; each in seq order;
    expect(seen.filter((s) => s.startsWith('A'))).toHaveLength(8);
  });

  it('a failing extension is an error finding, not a crash', async () => {
    const f = await makeStore();
    const report = await verifyStore(f.root, { extensions: [{ name: 'broken', finish: () => { throw Object.assign(new Error('secret text'), { code: 'EIO' }); } }] });
    expect(report.ok).toBe(false);
    expect(report.store).toEqual([{ severity: 'error', check: 'broken', message: 'the broken check failed: Error EIO' }]);
  });

  it('reports progress with the total known up front', async () => {
    const f = await makeStore();
    const seen: Array<[number, number]> = [];
    await verifyStore(f.root, { onProgress: (p) => seen.push([p.done, p.total]) });
    expect(seen).toEqual([[0, 3], [1, 3], [2, 3], [3, 3]]);
  });
});
