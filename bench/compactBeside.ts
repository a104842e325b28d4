/**
 * Row 8b: what a compaction costs the other sessions of the same sidecar. One session holds a
 * large journal (built as for row 8a); while the sidecar compacts it (throughSeq = lastSeq − 10),
 * a client appends ~1 KB message records to another session of the same sidecar, one at a time,
 * each sent when the previous one was answered, until the compaction is answered. Reported: the
 * latency of those appends (p50, p99, max) and the compaction's duration; for reference, the same
 * appends' latency on the same sidecar before the compaction started. Target: p99 ≤ 50 ms.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSession } from './bigSession.js';
import { MB, messageRecord, percentile, type Row, startSidecar, stopSidecar, text } from './util.js';

/** Serial 1 KB appends to `sessionId` until `until()` is true (or `count` of them); their latencies in ms, sorted. */
async function appendsWhile(c: Awaited<ReturnType<typeof startSidecar>>, sessionId: string, until: () => boolean, count = Infinity): Promise<number[]> {
  const record = messageRecord(1024, 'user');
  const ms: number[] = [];
  while (!until() && ms.length < count) {
    const t = performance.now();
    await c.append({ sessionId, records: [record] });
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b);
}

const shown = (ms: number) => (ms >= 10 ? ms.toFixed(0) : ms.toFixed(1));

export async function compactionBeside(work: string, sizeMB: number): Promise<Row> {
  const root = path.join(work, `store-compact-beside-${sizeMB}`);
  const built = await buildSession(root, sizeMB * MB, 1024, 'compact');
  const mb = built.bytes / MB;
  const c = await startSidecar(root);
  const { lastSeq } = await c.open({ sessionId: built.sessionId, mode: 'write' });
  const { sessionId: other } = await c.create({ title: 'beside the compaction' });
  await appendsWhile(c, other, () => false, 20); // warm up
  const alone = await appendsWhile(c, other, () => false, 300);

  let compactMs = 0;
  let done = false;
  const t0 = performance.now();
  const compaction = c.request('session/compact', { sessionId: built.sessionId, throughSeq: lastSeq - 10, summary: text(4000) }).finally(() => {
    compactMs = performance.now() - t0;
    done = true;
  });
  const during = await appendsWhile(c, other, () => done);
  await compaction;
  const peakRssMB = await stopSidecar(c);
  fs.rmSync(root, { recursive: true, force: true });
  if (during.length === 0) throw new Error('no append was answered during the compaction');
  const p50 = percentile(during, 0.5);
  const p99 = percentile(during, 0.99);
  const max = during[during.length - 1] as number;
  return {
    scenario: `1 KB append to another session while the same sidecar compacts a ${mb.toFixed(0)} MB session (p99)`, value: p99, unit: 'ms',
    p50Us: p50 * 1000, p99Us: p99 * 1000, peakRssMB,
    note: `${during.length} serial appends during a compaction of ${(compactMs / 1000).toFixed(2)} s; max ${shown(max)} ms; `
      + `before it (same sidecar, ${alone.length} appends): p50 ${shown(percentile(alone, 0.5))} ms, p99 ${shown(percentile(alone, 0.99))} ms; target p99 ≤ 50 ms`,
  };
}
