/**
 * npm run bench — the sidecar next to the physical limit of the same disk, its peers, and the
 * costs of reading, opening, listing, compacting and starting. Every scenario lives in its own
 * file under bench/; this one only reads the flags, runs them in order, prints a markdown table
 * and writes bench/results.json. Never part of the tests, and no test asserts on a timing.
 *
 * Flags (sizes in MB of journal):
 *   --records N          appends per append scenario (default 2000)
 *   --replay-mb N        size of the replayed session (default 100)
 *   --open-sizes A,B,C   sizes of the sessions opened in a fresh sidecar (default 1,100,1000)
 *   --compact-mb N       size of the compacted session (default 100), also for the row of appends
 *                        to another session beside that compaction
 *   --list-sessions N    sessions listed (default 10000)
 *   --cold-starts N      spawns timed for the cold start (default 10), and for each of the
 *                        two in the single executable's row (bench/sea.ts)
 *   --quick              every size shrunk so the whole run takes well under a minute
 *   --dir DIR            where the data goes (default: a temp dir under ./bench/out, removed at the end)
 *   --only A,B           run only the scenarios whose step name starts with one of these (the
 *                        limit row always runs: ratios need it), e.g. `--only backends`;
 *                        `secrets` names the secret-safety table (with its cost rows:
 *                        bench/secretCost.ts, secret work per record over JSON.parse +
 *                        JSON.stringify, hostile inputs over `"x"` repeated). The table then holds only
 *                        those rows, and bench/results.json (a full run's) is left alone.
 *
 * The appends-beside-a-hostile-append rows (bench/secretBeside.ts: an 8 MB message of each of
 * the detector's costliest classes, five secrets registered) run after the compaction rows.
 * The appends-beside-a-compaction row also runs for a 500 MB session (about 20 s more, most of it
 * building the session; not with --quick; BENCH_COMPACT_500=0 leaves it out).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { serialAnatomy, overwriteLimit } from './anatomy.js';
import { rawLimit, sidecarAppends } from './appends.js';
import { appendFileNoSync } from './appendFile.js';
import { backendRows } from './backends.js';
import { searchRows } from './search.js';
import { exactNumberRows } from './exactNumbers.js';
import { coldStart } from './coldStart.js';
import { seaRows } from './sea.js';
import { compaction } from './compact.js';
import { compactionBeside } from './compactBeside.js';
import { secretBeside } from './secretBeside.js';
import { listAll } from './list.js';
import { listCopy } from './listCopy.js';
import { openTimes } from './open.js';
import { replay } from './replay.js';
import { secretGateBench } from './secretGate.js';
import { secretCostBench } from './secretCost.js';
import { secretBench } from './secrets.js';
import { sqliteInserts } from './sqlite.js';
import { type StageRow, stageBench } from './stages.js';
import { benchDir, type Row } from './util.js';

const started = performance.now();
const { values } = parseArgs({
  options: {
    records: { type: 'string' }, 'replay-mb': { type: 'string' }, 'open-sizes': { type: 'string' }, 'compact-mb': { type: 'string' },
    'list-sessions': { type: 'string' }, 'cold-starts': { type: 'string' }, quick: { type: 'boolean', default: false }, dir: { type: 'string' },
    only: { type: 'string' },
  },
});
const quick = values.quick === true;
const only = values.only?.split(',').map((s) => s.trim()).filter(Boolean);
const selected = (what: string) => !only || what === 'limit' || only.some((o) => what.startsWith(o));
const num = (v: string | undefined, full: number, small: number): number => {
  const n = Number(v ?? (quick ? small : full));
  if (!Number.isFinite(n) || n <= 0) throw new Error(`not a positive number: ${v}`);
  return n;
};
const N = num(values.records, 2000, 300);
const replayMB = num(values['replay-mb'], 100, 10);
const openSizes = (values['open-sizes'] ?? (quick ? '1,10,50' : '1,100,1000')).split(',').map((s) => num(s, 0, 0));
const compactMB = num(values['compact-mb'], 100, 10);
const listSessions = num(values['list-sessions'], 10_000, 1000);
const coldStarts = num(values['cold-starts'], 10, 5);

const base = values.dir ?? path.join(benchDir, 'out');
fs.mkdirSync(base, { recursive: true });
const work = fs.mkdtempSync(path.join(base, 'run-'));

function filesystem(dir: string): string {
  try {
    const [, line] = execFileSync('df', ['-T', dir], { encoding: 'utf8' }).trim().split('\n');
    const [device, type] = (line ?? '').split(/\s+/);
    return `${type} on ${device}`;
  } catch {
    return 'unknown';
  }
}

const machine = {
  cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'cpu', kernel: os.release(), node: process.version, filesystem: filesystem(work),
  memoryGB: Math.round(os.totalmem() / (1 << 30)), loadAverageAtStart: Number(os.loadavg()[0]!.toFixed(2)),
};
const params = { records: N, replayMB, openSizesMB: openSizes, compactMB, listSessions, coldStarts, quick, ...(only ? { only } : {}) };

const rows: Row[] = [];
const step = async (what: string, f: () => Row | Row[] | Promise<Row | Row[]>) => {
  if (!selected(what)) return;
  const t = performance.now();
  let r: Row | Row[];
  try {
    r = await f();
  } catch (err) {
    throw new Error(`bench: ${what} failed`, { cause: err });
  }
  rows.push(...(Array.isArray(r) ? r : [r]));
  process.stderr.write(`bench: ${what} done in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
};

let secretRows: Awaited<ReturnType<typeof secretBench>> = [];
let stageRows: StageRow[] = [];
try {
  await step('limit', () => rawLimit(work, N));
  const limit = rows[0]!.value;
  for (const framing of ['ndjson', 'lsp'] as const) await step(`serial ${framing}`, () => sidecarAppends(work, N, limit, framing, 1));
  await step('anatomy', async () => [overwriteLimit(work, N, limit), ...await serialAnatomy(work, N, limit)]);
  await step('8 in flight', () => sidecarAppends(work, N, limit, 'ndjson', 8));
  await step('32 in flight', () => sidecarAppends(work, N, limit, 'ndjson', 32));
  await step('8 sessions', () => sidecarAppends(work, N, limit, 'ndjson', 8, 8));
  await step('sqlite', () => sqliteInserts(work, N, limit));
  await step('appendFileSync', () => appendFileNoSync(work, N * 10, limit));
  await step('replay', () => replay(work, replayMB));
  await step('open', () => openTimes(work, openSizes));
  await step('list', () => listAll(work, listSessions));
  await step('list copy', () => listCopy(work, 2_000)); // issue 31: always 2,000 (the reported store), --quick too
  await step('compact', () => compaction(work, compactMB));
  await step('compact beside', () => compactionBeside(work, compactMB));
  if (process.env.BENCH_COMPACT_500 !== '0' && !quick) await step('compact beside 500', () => compactionBeside(work, 500));
  await step('secret beside', () => secretBeside(work, quick ? 2 : 8));
  await step('cold start', () => coldStart(work, coldStarts));
  await step('single executable', () => seaRows(work, coldStarts));
  await step('backends', () => backendRows(work, N, limit));
  await step('search', () => searchRows(work, quick ? 500 : 5_000));
  await step('exact numbers', () => exactNumberRows(quick));
  await step('stages', () => {
    stageRows = stageBench(quick ? 5_000 : 20_000);
    return [];
  });
  if (selected('secrets')) {
    secretRows = await secretBench(work);
    await step('secrets: gate', () => {
      secretRows.push(...secretGateBench());
      return [];
    });
    await step('secrets: cost', () => {
      secretRows.push(...secretCostBench(quick));
      return [];
    });
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}

const group = (n: number) => Math.round(n).toLocaleString('en-US');
const fmt = (n: number | undefined) => (n === undefined ? '' : n >= 100 ? group(n) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const seconds = (performance.now() - started) / 1000;
const lines = [
  `Machine: ${machine.cpus} × ${machine.cpu}, ${machine.memoryGB} GB, Linux ${machine.kernel}, ${machine.filesystem}, Node ${machine.node}, load average ${machine.loadAverageAtStart} at start`,
  `Sizes: ${N} appends of a ~1 KB message record per append row; replay ${replayMB} MB; open ${openSizes.join(', ')} MB; `
    + `compact ${compactMB} MB; list ${listSessions} sessions${quick ? ' (--quick)' : ''}`,
  '',
  '| scenario | result | ratio | p50 µs | p99 µs | peak RSS MB | notes |',
  '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ...rows.map((r) => `| ${r.scenario} | ${fmt(r.value)} ${r.unit} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)} × ${r.ratioTo}`} `
    + `| ${r.p50Us === undefined ? '' : group(r.p50Us)} | ${r.p99Us === undefined ? '' : group(r.p99Us)} | ${r.peakRssMB === undefined ? '' : group(r.peakRssMB)} | ${r.note ?? ''} |`),
  ...(stageRows.length > 0
    ? ['', '| CPU per ~1 KB record, by stage (in process, CPU µs; the write + fdatasync excluded) | µs |', '| --- | ---: |', ...stageRows.map((r) => `| ${r.stage} | ${r.us.toFixed(1)} |`)]
    : []),
  ...(secretRows.length > 0 ? ['', '| secret safety | measured |', '| --- | --- |', ...secretRows.map((r) => `| ${r.scenario} | ${r.value} |`)] : []),
  '',
  `Whole run: ${seconds.toFixed(0)} s`,
];
process.stdout.write(`${lines.join('\n')}\n`);
const results = { date: new Date().toISOString(), machine, params, seconds, rows, stages: stageRows, secrets: secretRows };
if (!only) fs.writeFileSync(path.join(benchDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
