/**
 * Row 8a: `session/compact` of a large session (all but its last 10 records replaced by a
 * summary checkpoint; the whole journal archived first), timed in a fresh sidecar after a write
 * open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSession } from './bigSession.js';
import { MB, type Row, startSidecar, stopSidecar, text } from './util.js';

export async function compaction(work: string, sizeMB: number): Promise<Row> {
  const root = path.join(work, 'store-compact');
  const built = await buildSession(root, sizeMB * MB, 1024, 'compact');
  const mb = built.bytes / MB;
  const c = await startSidecar(root);
  const { lastSeq } = await c.open({ sessionId: built.sessionId, mode: 'write' });
  const t0 = performance.now();
  const r = await c.request<{ generation: number; archived: { bytes: number } }>('session/compact', {
    sessionId: built.sessionId, throughSeq: lastSeq - 10, summary: text(4000),
  });
  const ms = performance.now() - t0;
  const after = fs.statSync(built.journal).size;
  const peakRssMB = await stopSidecar(c);
  fs.rmSync(root, { recursive: true, force: true });
  return {
    scenario: `session/compact of a ${mb.toFixed(0)} MB session (throughSeq = lastSeq − 10)`, value: ms / 1000, unit: 's', peakRssMB,
    note: `${built.records.toLocaleString('en-US')} records of ~1 KB; ${(mb / (ms / 1000)).toFixed(0)} MB/s; archived ${(r.archived.bytes / MB).toFixed(0)} MB; active journal after: ${(after / 1024).toFixed(0)} KB`,
  };
}
