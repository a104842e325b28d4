/**
 * `node --import tsx compactOnce.ts ROOT ID`: compacts session ID of the store at ROOT through its
 * last seq, from outside any store instance — another process, as a real competing writer would
 * be. watchCompaction.test.ts runs it synchronously (spawnSync) from inside a reader's file-system
 * call, to force a compaction between two of the reader's reads.
 */
import { checkpointMembers, EMPTY_PREFIX } from '../../../src/core/commit/reduce.js';
import { compactJournal } from '../../../src/backends/file/journal/compact.js';
import { openJournal } from '../../../src/backends/file/journal/open.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { nodeFs } from '../../../src/durable/fsLayer.js';

const [root, id] = process.argv.slice(2) as [string, string];
const layout = new StoreLayout(root);
const handle = openJournal(nodeFs, layout, id, { writable: true });
try {
  await compactJournal(nodeFs, layout, handle, {
    throughSeq: handle.position.lastSeq,
    ts: new Date().toISOString(),
    // The members a checkpoint carries (the core reduces them; here, from an empty prefix: the seam's sessions hold notes only).
    checkpointText: JSON.stringify({
      ...checkpointMembers(handle.position.lastSeq, handle.generation + 1, EMPTY_PREFIX, {
        generation: handle.generation, records: handle.position.lastSeq - handle.firstSeq + 1, bytes: handle.position.bytes,
      }),
      summary: 'compacted by the seam',
    }),
    fence: () => undefined, // no lease: the test's writer has closed the session
  });
} finally {
  nodeFs.closeSync(handle.fd);
}
