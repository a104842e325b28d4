/**
 * Rows 8c/8d: the single executable (`npm run build:sea`, dist/sea/session-sidecar; built here
 * when missing or older than dist/src/cli.js) — its size next to the `node` binary it is a copy
 * of, and its cold start (spawn to the `initialize` result, on one store) next to
 * `node dist/src/cli.js`, the two spawned alternately in one run so both see the same load.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SidecarClient } from '../dist/src/client/index.js';
import { benchDir, median, MB, type Row, sizeOf, stopSidecar } from './util.js';

const ROOT = path.resolve(benchDir, '..');
const CLI = path.join(ROOT, 'dist/src/cli.js');
const EXE = path.join(ROOT, 'dist/sea/session-sidecar');

function ensureBuilt(): void {
  const exe = fs.statSync(EXE, { throwIfNoEntry: false });
  if (exe && exe.mtimeMs > fs.statSync(CLI).mtimeMs) return;
  execFileSync(process.execPath, [path.join(ROOT, 'scripts/sea.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
}

async function spawnToInit(command: string, args: string[], store: string): Promise<{ ms: number; rss: number }> {
  const t0 = performance.now();
  const c = new SidecarClient({ command, args, store });
  await c.initialize().catch(async (err: unknown) => {
    await c.exited;
    throw new Error(`${command}: ${String(err)}; stderr: ${c.stderr.slice(-2000)}`);
  });
  const ms = performance.now() - t0;
  return { ms, rss: (await stopSidecar(c)) ?? 0 };
}

export async function seaRows(work: string, n: number): Promise<Row[]> {
  ensureBuilt();
  const size = fs.statSync(EXE).size;
  const nodeSize = fs.statSync(process.execPath).size;
  const store = path.join(work, 'store-sea');
  const node: number[] = [];
  const sea: number[] = [];
  const nodeRss: number[] = [];
  const seaRss: number[] = [];
  await spawnToInit(EXE, ['serve'], store); // the store made, the executable's pages read once
  for (let i = 0; i < n; i++) {
    const a = await spawnToInit(process.execPath, [CLI, 'serve'], store);
    node.push(a.ms);
    nodeRss.push(a.rss);
    const b = await spawnToInit(EXE, ['serve'], store);
    sea.push(b.ms);
    seaRss.push(b.rss);
  }
  fs.rmSync(store, { recursive: true, force: true });
  const seaMs = median(sea);
  const nodeMs = median(node);
  const distMB = sizeOf(path.join(ROOT, 'dist/src')) / MB;
  return [
    {
      scenario: 'single executable: size of dist/sea/session-sidecar', value: size / MB, unit: 'MiB', ratio: size / nodeSize, ratioTo: 'the node binary',
      note: `\`node\` itself ${(nodeSize / MB).toFixed(1)} MiB; the injected blob (bundle + V8 code cache) ${((size - nodeSize) / MB).toFixed(1)} MiB; `
        + `\`node dist/src/cli.js\` needs node plus dist/src (${distMB.toFixed(1)} MiB with maps) and node_modules`,
    },
    {
      scenario: 'single executable: cold start, spawn to the initialize result', value: seaMs, unit: 'ms', ratio: seaMs / nodeMs, ratioTo: '`node dist/src/cli.js`',
      peakRssMB: median(seaRss) || undefined,
      note: `median of ${n} each, alternated; \`node dist/src/cli.js\`: ${nodeMs.toFixed(0)} ms, peak RSS ${median(nodeRss).toFixed(0)} MB; useCodeCache on, no snapshot (scripts/sea.mjs says why)`,
    },
  ];
}
