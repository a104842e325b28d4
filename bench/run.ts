/**
 * npm run bench — appends/s of the sidecar next to the physical limit on the same disk.
 * Flags: --records N (per scenario, default 2000), --dir DIR (default: a temp dir under ./bench/out).
 * Prints a markdown table and writes bench/results.json. Never part of the tests.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SidecarClient } from '../dist/src/client/index.js';
import { secretBench } from './secrets.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '2000' }, dir: { type: 'string' } } });
const N = Number(values.records);
const base = values.dir ?? path.join(path.dirname(new URL(import.meta.url).pathname), 'out');
fs.mkdirSync(base, { recursive: true });
const work = fs.mkdtempSync(path.join(base, 'run-'));

const record = { kind: 'message' as const, message: { role: 'assistant', content: 'x'.repeat(900) } };

interface Row { scenario: string; opsPerSec: number; p50Us?: number; p99Us?: number }
const rows: Row[] = [];

function rawLimit(): Row {
  const file = path.join(work, 'raw.jsonl');
  const fd = fs.openSync(file, 'w', 0o600);
  const buf = Buffer.from(`${JSON.stringify({ seq: 1, ts: new Date().toISOString(), ...record, crc: '00000000' })}\n`);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    fs.writeSync(fd, buf);
    fs.fdatasyncSync(fd);
  }
  const ms = performance.now() - t0;
  fs.closeSync(fd);
  return { scenario: 'limit: write + fdatasync (Node sync calls)', opsPerSec: (N * 1000) / ms };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number;
}

async function sidecar(framing: 'ndjson' | 'lsp', inFlight: number, sessions = 1): Promise<Row> {
  const c = await SidecarClient.start({ framing, store: path.join(work, `store-${framing}-${inFlight}-${sessions}`) });
  const ids: string[] = [];
  for (let s = 0; s < sessions; s++) ids.push((await c.create({ title: 'bench' })).sessionId);
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const lane = async (lane: number) => {
    while (next < N) {
      next += 1;
      const t = performance.now();
      await c.append({ sessionId: ids[lane % sessions] as string, records: [record] });
      lat.push((performance.now() - t) * 1000);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, i) => lane(i)));
  const ms = performance.now() - t0;
  await c.shutdown();
  lat.sort((a, b) => a - b);
  const label = sessions > 1 ? `${sessions} sessions, ${inFlight} in flight` : `${inFlight} in flight on one session`;
  return { scenario: `sidecar ${framing}: ${label}`, opsPerSec: (N * 1000) / ms, p50Us: percentile(lat, 0.5), p99Us: percentile(lat, 0.99) };
}

rows.push(rawLimit());
for (const framing of ['ndjson', 'lsp'] as const) rows.push(await sidecar(framing, 1));
rows.push(await sidecar('ndjson', 8));
rows.push(await sidecar('ndjson', 32));
rows.push(await sidecar('ndjson', 8, 8));

const limit = rows[0]!.opsPerSec;
const fmt = (n: number | undefined) => (n === undefined ? '' : Math.round(n).toLocaleString('en-US'));
const lines = [
  `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${N} appends of a ~1 KB message record per scenario`,
  '',
  '| scenario | appends/s | ratio to limit | p50 µs | p99 µs |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => `| ${r.scenario} | ${fmt(r.opsPerSec)} | ${(r.opsPerSec / limit).toFixed(2)} | ${fmt(r.p50Us)} | ${fmt(r.p99Us)} |`),
];
const secretRows = await secretBench(work);
lines.push('', '| secret safety | measured |', '| --- | --- |', ...secretRows.map((r) => `| ${r.scenario} | ${r.value} |`));
process.stdout.write(`${lines.join('\n')}\n`);
const results = { date: new Date().toISOString(), node: process.version, records: N, rows, secrets: secretRows };
fs.writeFileSync(path.join(path.dirname(new URL(import.meta.url).pathname), 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
fs.rmSync(work, { recursive: true, force: true });
