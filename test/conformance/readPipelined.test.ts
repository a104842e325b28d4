/**
 * session/read pages are built in reused output buffers (journal/readText.ts), handed back only
 * once their response has been written out. Pipelined reads of large pages make the sidecar build
 * the next pages while the first is still being written to a full pipe: every page must still
 * arrive byte for byte. (With the buffers handed back before the write completes, a later page
 * overwrites an earlier one in flight and this test fails.)
 */
import { describe, expect, it } from 'vitest';
import { FRAMINGS, startSidecar } from './harness.js';

describe.each(FRAMINGS)('pipelined large session/read pages (%s)', (framing) => {
  it('every page of four pipelined reads arrives intact while the pipe is full', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    // ~250 KB, distinct per record (under the default blobThreshold of 256 KiB: stored inline)
    const text = (i: number) => `${i}:`.padEnd(250_000, String.fromCharCode(97 + (i % 26)));
    const perPage = 60; // ~15 MB: a page of four 4 MiB output buffers
    for (let i = 0; i < 4 * perPage; i += 6) await c.append({ sessionId, records: [0, 1, 2, 3, 4, 5].map((k) => ({ kind: 'message', message: { role: 'user', content: text(i + k) } })) });
    // four pages requested at once: the first response is still in the pipe when the next pages are read
    const pages = await Promise.all([0, 1, 2, 3].map((p) => c.read({ sessionId, afterSeq: p * perPage, limit: perPage })));
    pages.forEach((page, p) => {
      expect(page.records).toHaveLength(perPage);
      page.records.forEach((r, k) => {
        const i = p * perPage + k;
        expect(r.seq).toBe(i + 1);
        expect(((r as { message?: { content?: unknown } }).message?.content) === text(i)).toBe(true);
      });
    });
    await c.shutdown();
  });
});
