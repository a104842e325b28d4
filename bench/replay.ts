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

/**
 * Every record of a session through `session/read` pages of up to `limit` in a fresh sidecar.
 * `inFlight: 2` reads ahead as a client that knows the format can: it asks for the page after the
 * one it waits for before parsing it (afterSeq + limit: pages are runs of consecutive seqs unless
 * one stopped early at its byte cap, or the journal was compacted), and asks again when the page
 * it got says otherwise — so the sidecar reads and verifies page k+1 while the client parses page k.
 */
export async function pageThrough(
  root: string, sessionId: string, opts: { limit?: number; inFlight?: 1 | 2 } = {},
): Promise<{ ms: number; records: number; pages: number; missed: number; peakRssMB: number | undefined; sidecarCpuMs?: number; clientCpuMs: number }> {
  const limit = opts.limit ?? 10_000;
  const c = await startSidecar(root);
  const cpu0 = processCpuMs(c.child.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const ask = (afterSeq: number) => c.read({ sessionId, limit, ...(afterSeq === 0 ? {} : { afterSeq }) });
  let afterSeq = 0;
  let current = ask(0);
  let records = 0;
  let pages = 0;
  let missed = 0;
  for (;;) {
    const guess = afterSeq + limit;
    const ahead = opts.inFlight === 2 ? ask(guess) : undefined;
    const page = await current;
    records += page.records.length;
    pages++;
    if (page.nextAfterSeq === null) {
      await ahead; // past the end: an empty page, dropped
      break;
    }
    if (ahead && page.nextAfterSeq === guess) current = ahead;
    else {
      if (ahead) {
        missed++;
        await ahead; // a wrong guess: dropped (its records overlap or skip), asked again below
      }
      current = ask(page.nextAfterSeq);
    }
    afterSeq = page.nextAfterSeq;
  }
  const ms = performance.now() - t0;
  const client = process.cpuUsage(client0);
  const cpu1 = processCpuMs(c.child.pid);
  const sidecarCpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
  return { ms, records, pages, missed, peakRssMB: await stopSidecar(c), ...(sidecarCpuMs === undefined ? {} : { sidecarCpuMs }), clientCpuMs: (client.user + client.system) / 1000 };
}

export async function replay(work: string, sizeMB: number): Promise<Row[]> {
  const root = path.join(work, 'store-replay');
  const built = await buildSession(root, sizeMB * MB, 1024, 'replay');
  const mb = built.bytes / MB;
  const raw = rawParse(built.journal);
  if (raw.lines !== built.records + 1) throw new Error(`raw parse saw ${raw.lines} lines, expected ${built.records + 1}`);
  const rawMBs = mb / (raw.ms / 1000);
  const size = `${mb.toFixed(0)} MB, ${built.records.toLocaleString('en-US')} records of ~1 KB`;
  const rows: Row[] = [{
    scenario: `replay floor: readFileSync + JSON.parse of each journal line (${mb.toFixed(0)} MB)`, value: rawMBs, unit: 'MB/s',
    ratio: 1, ratioTo: 'JSON.parse', note: `${size}, ${raw.ms.toFixed(0)} ms`,
  }];
  // Pages of 10,000 (~10 MB frames): each page's parsed records outlive the young generation,
  // and the client's garbage collector costs more than its JSON.parse. Pages of 1,000 do not.
  const ways = [
    { limit: 10_000, inFlight: 1, label: 'session/read pages of 10,000' },
    { limit: 1_000, inFlight: 1, label: 'session/read pages of 1,000' },
    { limit: 1_000, inFlight: 2, label: 'session/read pages of 1,000, the next page asked for before this one is parsed' },
  ] as const;
  for (const way of ways) {
    const { ms, records, pages, missed, peakRssMB, sidecarCpuMs, clientCpuMs } = await pageThrough(root, built.sessionId, way);
    if (records !== built.records) throw new Error(`replay read ${records} records, the session has ${built.records}`);
    const sidecarMBs = mb / (ms / 1000);
    rows.push({
      scenario: `replay: ${way.label}, fresh sidecar (${mb.toFixed(0)} MB)`, value: sidecarMBs, unit: 'MB/s',
      ratio: sidecarMBs / rawMBs, ratioTo: 'JSON.parse', peakRssMB,
      note: `${size}, ${pages} pages${missed ? ` (${missed} asked again)` : ''}, ${ms.toFixed(0)} ms end to end: sidecar CPU ${sidecarCpuMs?.toFixed(0) ?? '?'} ms (read, verify, frame, write), client CPU ${clientCpuMs.toFixed(0)} ms (read the pipe, JSON.parse the frames)`,
    });
  }
  fs.rmSync(root, { recursive: true, force: true });
  return rows;
}
