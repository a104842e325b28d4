/**
 * Rows 1-3: the physical limit of the disk (a raw loop of write + fdatasync through Node's sync
 * calls), and durable appends of ~1 KB message records through the sidecar over stdio: serial in
 * both framings, pipelined on one session, and spread over several sessions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Framing, messageRecord, percentile, processCpuMs, type Row, startSidecar, stopSidecar } from './util.js';

export const appendRecord = messageRecord(1024);

/** One journal-like line of `appendRecord`, as the sidecar would write it. */
export function appendLine(): Buffer {
  return Buffer.from(`${JSON.stringify({ seq: 1, ts: new Date().toISOString(), ...appendRecord, crc: '00000000' })}\n`);
}

export function rawLimit(work: string, n: number): Row {
  const fd = fs.openSync(path.join(work, 'raw.jsonl'), 'w', 0o600);
  const buf = appendLine();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    fs.writeSync(fd, buf);
    fs.fdatasyncSync(fd);
  }
  const ms = performance.now() - t0;
  fs.closeSync(fd);
  fs.rmSync(path.join(work, 'raw.jsonl'));
  return { scenario: 'limit: write + fdatasync (Node sync calls)', value: (n * 1000) / ms, unit: 'appends/s', ratio: 1, ratioTo: 'limit' };
}

export async function sidecarAppends(work: string, n: number, limit: number, framing: Framing, inFlight: number, sessions = 1): Promise<Row> {
  const store = path.join(work, `store-${framing}-${inFlight}-${sessions}`);
  const c = await startSidecar(store, framing);
  const ids: string[] = [];
  for (let s = 0; s < sessions; s++) ids.push((await c.create({ title: 'bench' })).sessionId);
  const lat: number[] = [];
  let next = 0;
  const cpu0 = processCpuMs(c.child.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const lane = async (lane: number) => {
    while (next < n) {
      next += 1;
      const t = performance.now();
      await c.append({ sessionId: ids[lane % sessions] as string, records: [appendRecord] });
      lat.push((performance.now() - t) * 1000);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, i) => lane(i)));
  const ms = performance.now() - t0;
  const cpu1 = processCpuMs(c.child.pid);
  const client = process.cpuUsage(client0);
  const peakRssMB = await stopSidecar(c);
  fs.rmSync(store, { recursive: true, force: true });
  lat.sort((a, b) => a - b);
  const label = sessions > 1 ? `${sessions} sessions, ${inFlight} in flight` : `${inFlight} in flight on one session${inFlight > 1 ? ' (group commit)' : ''}`;
  const opsPerSec = (n * 1000) / ms;
  return {
    scenario: `sidecar ${framing === 'lsp' ? 'LSP' : 'NDJSON'}, ${label}`, value: opsPerSec, unit: 'appends/s', ratio: opsPerSec / limit, ratioTo: 'limit',
    p50Us: percentile(lat, 0.5), p99Us: percentile(lat, 0.99), peakRssMB,
    // CPU per append of both processes (they share the machine's cores): with n in flight the
    // throughput is bounded by the busier one, not by the disk
    note: `CPU per append: sidecar ${cpu0 === undefined || cpu1 === undefined ? '?' : (((cpu1 - cpu0) * 1000) / n).toFixed(0)} µs (all its threads, 10 ms ticks), client ${(((client.user + client.system) / n)).toFixed(0)} µs`,
  };
}
