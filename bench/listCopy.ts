/**
 * Rows 7c: `session-sidecar list` (the built binary, a process per run, as a person at a terminal
 * runs it) of 2,000 sessions on the store, on a `cp -a` copy of it (every journal on a new
 * inode), and on the copy after `session-sidecar reindex` — the copy's ratio to the original is
 * the number issue 31 asked for (it was 12-25 s against 0.6-1.8 s when entries were keyed on the
 * inode). For scale, the same copy without its index/ (a scan of every journal). Median of 3 runs
 * each, all in one run of the bench.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildManySessions } from './bigSession.js';
import type { Row } from './util.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/src/cli.js');

function listMs(root: string, n: number): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const out = execFileSync(process.execPath, [CLI, 'list', '--store', root, '--all', '--json', 'sessionId', '--no-pager'], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] });
    times.push(performance.now() - t0);
    const seen = (JSON.parse(out.toString('utf8')) as unknown[]).length;
    if (seen !== n) throw new Error(`list of ${root} showed ${seen} sessions, the store has ${n}`);
  }
  return times.sort((a, b) => a - b)[1] as number;
}

export async function listCopy(work: string, n: number): Promise<Row[]> {
  const root = path.join(work, 'store-listcopy');
  await buildManySessions(root, n);
  const copy = `${root}-copy`;
  const scan = `${root}-noindex`;
  execFileSync('cp', ['-a', root, copy]);
  execFileSync('cp', ['-a', root, scan]);
  fs.rmSync(path.join(scan, 'index'), { recursive: true, force: true });
  fs.mkdirSync(path.join(scan, 'index'), { mode: 0o700 });
  const original = listMs(root, n);
  const copied = listMs(copy, n);
  const scanned = listMs(scan, n);
  execFileSync(process.execPath, [CLI, 'reindex', '--store', scan], { stdio: 'ignore' });
  const reindexed = listMs(scan, n);
  for (const d of [root, copy, scan]) fs.rmSync(d, { recursive: true, force: true });
  const label = `${n.toLocaleString('en-US')} sessions`;
  return [
    { scenario: `list (binary) of ${label}: the original store`, value: original, unit: 'ms', note: 'median of 3 process runs, --all --json sessionId' },
    { scenario: `list (binary) of ${label}: a cp -a copy`, value: copied, unit: 'ms', ratio: copied / original, ratioTo: 'the original store' },
    { scenario: `list (binary) of ${label}: the copy without index/ (a scan)`, value: scanned, unit: 'ms', ratio: scanned / original, ratioTo: 'the original store' },
    { scenario: `list (binary) of ${label}: that copy after reindex`, value: reindexed, unit: 'ms', ratio: reindexed / original, ratioTo: 'the original store' },
  ];
}
