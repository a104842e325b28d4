/**
 * Row 6: replaying a large session — every record, through `session/read` pages of up to 10,000
 * records over the real binary (afterSeq = nextAfterSeq until it is null) — against the floor of
 * any JSONL replay: reading the journal file and JSON.parse of each of its lines, in this process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSession } from './bigSession.js';
import { MB, processCpuMs, type Row, startSidecar, stopSidecar } from './util.js';

/** Reads the whole journal and parses each line: the cost a plain JSONL reader pays at least. */
function rawParse(journal: string): { ms: number; lines: number } {
  const t0 = performance.now();
  const buf = fs.readFileSync(journal);
  let lines = 0;
  for (let start = 0; start < buf.length;) {
    let end = buf.indexOf(10, start);
    if (end === -1) end = buf.length;
    if (end > start) {
      JSON.parse(buf.toString('utf8', start, end));
      lines++;
    }
    start = end + 1;
  }
  return { ms: performance.now() - t0, lines };
}

/** Every record of a session through `session/read` pages of up to 10,000 in a fresh sidecar. */
export async function pageThrough(root: string, sessionId: string): Promise<{ ms: number; records: number; pages: number; peakRssMB: number | undefined; sidecarCpuMs?: number; clientCpuMs: number }> {
  const c = await startSidecar(root);
  const cpu0 = processCpuMs(c.child.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  let afterSeq: number | undefined;
  let records = 0;
  let pages = 0;
  for (;;) {
    const page = await c.read({ sessionId, limit: 10_000, ...(afterSeq === undefined ? {} : { afterSeq }) });
    records += page.records.length;
    pages++;
    if (page.nextAfterSeq === null) break;
    afterSeq = page.nextAfterSeq;
  }
  const ms = performance.now() - t0;
  const client = process.cpuUsage(client0);
  const cpu1 = processCpuMs(c.child.pid);
  const sidecarCpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
  return { ms, records, pages, peakRssMB: await stopSidecar(c), ...(sidecarCpuMs === undefined ? {} : { sidecarCpuMs }), clientCpuMs: (client.user + client.system) / 1000 };
}

export async function replay(work: string, sizeMB: number): Promise<Row[]> {
  const root = path.join(work, 'store-replay');
  const built = await buildSession(root, sizeMB * MB, 1024, 'replay');
  const mb = built.bytes / MB;
  const raw = rawParse(built.journal);

  const { ms, records, pages, peakRssMB, sidecarCpuMs, clientCpuMs } = await pageThrough(root, built.sessionId);
  fs.rmSync(root, { recursive: true, force: true });
  if (records !== built.records) throw new Error(`replay read ${records} records, the session has ${built.records}`);
  if (raw.lines !== built.records + 1) throw new Error(`raw parse saw ${raw.lines} lines, expected ${built.records + 1}`);

  const rawMBs = mb / (raw.ms / 1000);
  const sidecarMBs = mb / (ms / 1000);
  const size = `${mb.toFixed(0)} MB, ${built.records.toLocaleString('en-US')} records of ~1 KB`;
  return [
    {
      scenario: `replay floor: readFileSync + JSON.parse of each journal line (${mb.toFixed(0)} MB)`, value: rawMBs, unit: 'MB/s',
      ratio: 1, ratioTo: 'JSON.parse', note: `${size}, ${raw.ms.toFixed(0)} ms`,
    },
    {
      scenario: `replay: session/read pages of 10,000, fresh sidecar (${mb.toFixed(0)} MB)`, value: sidecarMBs, unit: 'MB/s',
      ratio: sidecarMBs / rawMBs, ratioTo: 'JSON.parse', peakRssMB, note: `${size}, ${pages} pages, ${ms.toFixed(0)} ms end to end: sidecar CPU ${sidecarCpuMs?.toFixed(0) ?? '?'} ms (read, verify, frame, write), client CPU ${clientCpuMs.toFixed(0)} ms (read the pipe, JSON.parse the frames)`,
    },
  ];
}
