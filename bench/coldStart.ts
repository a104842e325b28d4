/**
 * Row 8b: cold start — from spawning the sidecar to the `initialize` result, median of several
 * spawns on one store, next to the start of a bare `node` that does nothing; and the sidecar's
 * peak RSS once idle.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SidecarClient } from '../dist/src/client/index.js';
import { median, type Row, stopSidecar } from './util.js';

function bareNodeMs(): number {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  return performance.now() - t0;
}

export async function coldStart(work: string, n: number): Promise<Row> {
  const root = path.join(work, 'store-cold');
  const times: number[] = [];
  const rss: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < n; i++) {
    bare.push(bareNodeMs());
    const t0 = performance.now();
    const c = new SidecarClient({ store: root });
    await c.initialize().catch(async (err: unknown) => {
      await c.exited;
      throw new Error(`cold start ${i + 1}: ${String(err)}; stderr: ${c.stderr.slice(-2000)}`);
    });
    times.push(performance.now() - t0);
    rss.push((await stopSidecar(c)) ?? 0);
  }
  fs.rmSync(root, { recursive: true, force: true });
  const sorted = [...times].sort((a, b) => a - b);
  const ms = median(times);
  const bareMs = median(bare);
  return {
    scenario: 'cold start: spawn to the initialize result', value: ms, unit: 'ms', ratio: ms / bareMs, ratioTo: 'bare node start', peakRssMB: median(rss) || undefined,
    note: `median of ${n}; min ${sorted[0]!.toFixed(0)} ms, max ${sorted[n - 1]!.toFixed(0)} ms; \`node -e 0\` alone: ${bareMs.toFixed(0)} ms`,
  };
}
