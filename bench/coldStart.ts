/**
 * Row 8b: cold start — from spawning the sidecar to the `initialize` result, median of several
 * spawns on one store; and its peak RSS once idle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SidecarClient } from '../dist/src/client/index.js';
import { median, type Row, stopSidecar } from './util.js';

export async function coldStart(work: string, n: number): Promise<Row> {
  const root = path.join(work, 'store-cold');
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < n; i++) {
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
  return {
    scenario: 'cold start: spawn to the initialize result', value: median(times), unit: 'ms', peakRssMB: median(rss) || undefined,
    note: `median of ${n}; min ${sorted[0]!.toFixed(0)} ms, max ${sorted[n - 1]!.toFixed(0)} ms`,
  };
}
