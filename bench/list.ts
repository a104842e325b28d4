/**
 * Row 7b: `session/list` over many sessions (each with a user and an assistant message), in a
 * fresh sidecar: every page at the largest limit (1000), cursor after cursor, until the last.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildManySessions } from './bigSession.js';
import { type Row, startSidecar, stopSidecar } from './util.js';

export async function listAll(work: string, n: number): Promise<Row> {
  const root = path.join(work, 'store-list');
  const built = await buildManySessions(root, n);
  const floorMs = statFloor(root);
  const c = await startSidecar(root);
  const t0 = performance.now();
  let cursor: string | undefined;
  let seen = 0;
  let pages = 0;
  let firstPageMs = 0;
  do {
    const page = await c.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    if (pages === 0) firstPageMs = performance.now() - t0;
    seen += page.sessions.length;
    pages++;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const ms = performance.now() - t0;
  const peakRssMB = await stopSidecar(c);
  fs.rmSync(root, { recursive: true, force: true });
  if (seen !== n) throw new Error(`session/list returned ${seen} sessions, the store has ${n}`);
  return {
    scenario: `session/list of ${n.toLocaleString('en-US')} sessions, all pages of 1,000, fresh sidecar`, value: ms, unit: 'ms', peakRssMB,
    note: `${pages} page${pages === 1 ? '' : 's'}; first page ${firstPageMs.toFixed(0)} ms (its floor, a readdir of sessions/ + an lstat of every journal through Node's sync calls in process: ${floorMs.toFixed(0)} ms); ${Math.round((n * 1000) / ms).toLocaleString('en-US')} sessions/s; created in ${(built.buildMs / 1000).toFixed(1)} s`,
  };
}

/**
 * What any correct first page pays at least: the sessions folder listed and every journal
 * lstat'ed (a session appended by another process since may now be the newest). Median of 5.
 */
function statFloor(root: string): number {
  const dir = path.join(root, 'sessions');
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    for (const name of fs.readdirSync(dir)) fs.lstatSync(path.join(dir, name, 'journal.jsonl'), { throwIfNoEntry: false });
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[2] as number;
}
