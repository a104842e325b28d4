/**
 * Row 7a: `session/open` of sessions of growing size, each timed in a fresh sidecar process
 * (spawn, initialize, then only the open is timed). The open trusts the store's index and does
 * not scan the journal, so its time should stay flat; one more open of the largest session with
 * its index entry deleted shows what a scan costs instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSession } from './bigSession.js';
import { pageThrough } from './replay.js';
import { MB, median, type Row, startSidecar, stopSidecar } from './util.js';

const REPS = 5;

async function timeOpen(root: string, sessionId: string, mode: 'write' | 'read'): Promise<{ ms: number; rss: number | undefined; lastSeq: number }> {
  const c = await startSidecar(root);
  const t0 = performance.now();
  const r = await c.open({ sessionId, mode });
  const ms = performance.now() - t0;
  const rss = await stopSidecar(c);
  return { ms, rss, lastSeq: r.lastSeq };
}

export async function openTimes(work: string, sizesMB: number[]): Promise<Row[]> {
  const rows: Row[] = [];
  let base: number | undefined;
  let last: { root: string; sessionId: string; mb: number } | undefined;
  for (const sizeMB of sizesMB) {
    const root = path.join(work, `store-open-${sizeMB}`);
    const built = await buildSession(root, sizeMB * MB, 64 << 10, `open ${sizeMB} MB`);
    const mb = built.bytes / MB;
    const runs: Array<{ ms: number; rss: number | undefined }> = [];
    const readRuns: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const w = await timeOpen(root, built.sessionId, 'write');
      if (w.lastSeq !== built.records) throw new Error(`open reported lastSeq ${w.lastSeq}, the session has ${built.records}`);
      runs.push(w);
      readRuns.push((await timeOpen(root, built.sessionId, 'read')).ms);
    }
    const ms = median(runs.map((r) => r.ms));
    base ??= ms;
    rows.push({
      scenario: `session/open (write) of a ${fmtMB(mb)} session, fresh sidecar`, value: ms, unit: 'ms', ratio: ms / base, ratioTo: `open of ${fmtMB(sizesMB[0]!)}`,
      peakRssMB: Math.max(...runs.map((r) => r.rss ?? 0)) || undefined,
      note: `median of ${REPS}; ${built.records.toLocaleString('en-US')} records of ~64 KB; read mode ${median(readRuns).toFixed(1)} ms; built in ${(built.buildMs / 1000).toFixed(1)} s`,
    });
    if (last) fs.rmSync(last.root, { recursive: true, force: true });
    last = { root, sessionId: built.sessionId, mb };
  }
  if (last) {
    // Target 3's memory bound: the largest session paged through, ~16 MiB per page at most
    const paged = await pageThrough(last.root, last.sessionId);
    rows.push({
      scenario: `session/read pages through the ${fmtMB(last.mb)} session, fresh sidecar`, value: last.mb / (paged.ms / 1000), unit: 'MB/s',
      peakRssMB: paged.peakRssMB, note: `${paged.records.toLocaleString('en-US')} records of ~64 KB in ${paged.pages} pages (a page stops after ~16 MiB); the RSS row of target 3`,
    });
    fs.rmSync(path.join(last.root, 'index', `${last.sessionId}.json`), { force: true });
    const scan = await timeOpen(last.root, last.sessionId, 'write');
    rows.push({
      scenario: `session/open (write) of the ${fmtMB(last.mb)} session with its index entry deleted (full scan)`, value: scan.ms, unit: 'ms',
      ratio: base === undefined ? undefined : scan.ms / base, ratioTo: `open of ${fmtMB(sizesMB[0]!)}`, peakRssMB: scan.rss,
      note: 'what the index saves',
    });
    fs.rmSync(last.root, { recursive: true, force: true });
  }
  return rows;
}

function fmtMB(mb: number): string {
  return `${Math.round(mb).toLocaleString('en-US')} MB`;
}
