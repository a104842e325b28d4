/**
 * Where the time of one serial durable append goes (issue 17, target 1): the parts of the
 * append's p50 that are not the sidecar's doing, measured next to it on the same disk.
 *
 * - the disk: write + fdatasync appending to a file (row 1, the limit) and overwriting a file
 *   whose blocks were written and synced before (no size change, so fdatasync flushes data only,
 *   no file-system journal commit) — the cost a preallocated journal would pay instead;
 * - the round trip: a request that touches no file (`turn/get` of an open session) over the same
 *   pipes, client and JSON-RPC dispatch — what any answer costs before it does any work;
 * - the sidecar's CPU per append (user + system from /proc over the appends, after a warm-up).
 */
import fs from 'node:fs';
import path from 'node:path';
import { appendRecord } from './appends.js';
import { percentile, processCpuMs, type Row, startSidecar, stopSidecar } from './util.js';

/** write + fdatasync of `n` ~1 KB lines over a file written and synced beforehand. */
export function overwriteLimit(work: string, n: number, limit: number): Row {
  const line = Buffer.alloc(1024, 0x61);
  line[1023] = 0x0a;
  const file = path.join(work, 'raw-preallocated.jsonl');
  const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_RDWR | fs.constants.O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, Buffer.alloc(n * line.length));
    fs.fsyncSync(fd);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      fs.writeSync(fd, line, 0, line.length, i * line.length);
      fs.fdatasyncSync(fd);
    }
    const ms = performance.now() - t0;
    const value = (n * 1000) / ms;
    return {
      scenario: 'disk: write + fdatasync over a preallocated, already synced file (no size change)', value, unit: 'appends/s', ratio: value / limit, ratioTo: 'limit',
      note: `${(ms * 1000 / n).toFixed(0)} µs per write + fdatasync, against ${(1e6 / limit).toFixed(0)} µs appending`,
    };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file);
  }
}

/** p50 of a no-op request and of an append, alternating, in one sidecar; and its CPU per append. */
export async function serialAnatomy(work: string, n: number, limit: number): Promise<Row[]> {
  const store = path.join(work, 'store-anatomy');
  const c = await startSidecar(store);
  const { sessionId } = await c.create({ title: 'anatomy' });
  const noop = () => c.request('turn/get', { sessionId });
  for (let i = 0; i < 200; i++) { // warm-up: both paths compiled before they are timed
    await noop();
    await c.append({ sessionId, records: [appendRecord] });
  }
  const rt: number[] = [];
  const ap: number[] = [];
  const cpu0 = processCpuMs(c.child.pid);
  let apMs = 0;
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    await noop();
    rt.push((performance.now() - t) * 1000);
    t = performance.now();
    await c.append({ sessionId, records: [appendRecord] });
    const d = performance.now() - t;
    apMs += d;
    ap.push(d * 1000);
  }
  const cpu1 = processCpuMs(c.child.pid);
  const peakRssMB = await stopSidecar(c);
  fs.rmSync(store, { recursive: true, force: true });
  rt.sort((a, b) => a - b);
  ap.sort((a, b) => a - b);
  const rt50 = percentile(rt, 0.5);
  const ap50 = percentile(ap, 0.5);
  // CPU per append: both requests' CPU, less the no-op's share (taken as its round trip's
  // sidecar half is small); reported as measured, both requests together.
  const cpuPerPair = cpu0 === undefined || cpu1 === undefined ? undefined : ((cpu1 - cpu0) * 1000) / n;
  const appends = (n * 1000) / apMs;
  return [
    {
      scenario: 'round trip of a request that touches no file (turn/get), 1 in flight', value: 1e6 / rt50, unit: 'requests/s', p50Us: rt50, p99Us: percentile(rt, 0.99),
      note: 'pipes, client, JSON-RPC dispatch: what every answer costs before any work',
    },
    {
      scenario: 'sidecar NDJSON, 1 in flight, timed between the no-op requests', value: appends, unit: 'appends/s', ratio: appends / limit, ratioTo: 'limit', p50Us: ap50, p99Us: percentile(ap, 0.99), peakRssMB,
      note: `p50 ${ap50.toFixed(0)} µs = round trip ${rt50.toFixed(0)} µs + ${(ap50 - rt50).toFixed(0)} µs of append work (the limit's write + fdatasync alone: ${(1e6 / limit).toFixed(0)} µs)${cpuPerPair === undefined ? '' : `; sidecar CPU ${cpuPerPair.toFixed(0)} µs per append + no-op pair (10 ms ticks of /proc)`}`,
    },
  ];
}
