/**
 * Rows 9: the file backend and the PostgreSQL backend side by side, in one run, on the same
 * appends of ~1 KB message records through the real binary over stdio:
 *   - serial: one session, one append in flight;
 *   - 8 sessions × 8 in flight (64 appends in flight in one sidecar);
 *   - 4 sidecar processes at once, each appending serially to its own session.
 * PostgreSQL is a throwaway cluster this run starts (test/pg/pgServer.ts: initdb + pg_ctl as the
 * postgres user, fsync=on, synchronous_commit=on, unix socket, data on the same disk as the file
 * rows) and removes at the end; without PostgreSQL binaries its rows are skipped with the reason
 * printed. File rows are compared with the disk's limit (row 1), PostgreSQL rows with the file
 * row of the same shape. Peak RSS of a multi-process row is the largest of its processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SidecarClient, type SpawnOptions } from '../dist/src/client/index.js';
import { destroyCluster, pgAvailability, startThrowawayCluster, type PgCluster } from '../test/pg/pgServer.js';
import { appendRecord } from './appends.js';
import { notifyLockWaits, pgbenchTps } from './pgbench.js';
import { percentile, type Row, stopSidecar } from './util.js';

interface Target {
  name: 'file' | 'PostgreSQL';
  /** How to spawn a sidecar on store `tag` (processes of one scenario share the tag). */
  spawn(tag: string): SpawnOptions;
}

interface Shape {
  label: string;
  processes: number;
  sessions: number;
  inFlight: number;
}

const SHAPES: Shape[] = [
  { label: 'serial, 1 in flight', processes: 1, sessions: 1, inFlight: 1 },
  { label: '8 sessions × 8 in flight', processes: 1, sessions: 8, inFlight: 8 },
  { label: '4 sidecar processes × 1 session each, serial', processes: 4, sessions: 1, inFlight: 1 },
  // The fleet of issue 28: every session of every sidecar appending, one in flight each.
  { label: 'fleet: 8 sidecar processes × 32 sessions, 1 in flight each', processes: 8, sessions: 32, inFlight: 1 },
];

/** Appends a shape runs: at least a few per lane, so that its lanes all overlap. */
const appendsFor = (n: number, s: Shape) => Math.max(n, s.processes * s.sessions * s.inFlight * 8);

/** n appends spread over the shape's processes, sessions and lanes; returns throughput and latencies. */
async function runShape(target: Target, tag: string, n: number, shape: Shape): Promise<{ opsPerSec: number; lat: number[]; rss?: number }> {
  const clients = await Promise.all(Array.from({ length: shape.processes }, () => SidecarClient.start(target.spawn(tag))));
  const ids: string[][] = [];
  for (const c of clients) {
    const mine: string[] = [];
    for (let s = 0; s < shape.sessions; s++) mine.push((await c.create({ title: 'bench' })).sessionId);
    ids.push(mine);
  }
  const lat: number[] = [];
  let next = 0;
  const lane = async (p: number, session: string) => {
    while (next < n) {
      next += 1;
      const t = performance.now();
      await clients[p]!.append({ sessionId: session, records: [appendRecord] });
      lat.push((performance.now() - t) * 1000);
    }
  };
  const lanes: Array<Promise<void>> = [];
  const t0 = performance.now();
  clients.forEach((_, p) => ids[p]!.forEach((id) => {
    for (let k = 0; k < shape.inFlight; k++) lanes.push(lane(p, id));
  }));
  await Promise.all(lanes).catch((err: unknown) => {
    throw new Error(`${target.name}, ${shape.label}: ${String(err)}; stderr: ${clients.map((c) => c.stderr.slice(-1500)).join('\n')}`);
  });
  const ms = performance.now() - t0;
  const rss = Math.max(...(await Promise.all(clients.map((c) => stopSidecar(c)))).map((r) => r ?? 0));
  lat.sort((a, b) => a - b);
  return { opsPerSec: (n * 1000) / ms, lat, ...(rss > 0 ? { rss } : {}) };
}

/**
 * The transport's floor: serial requests a sidecar answers without touching its store (an
 * unknown method, answered MethodNotFound) — framing, dispatch and the two pipes, in both
 * processes. Serial appends cannot beat 1 / (this + the database's own transaction time).
 */
async function floorRate(target: Target, n: number): Promise<number> {
  const c = await SidecarClient.start(target.spawn(`floor_${Date.now().toString(36)}`));
  for (let i = 0; i < 200; i++) await c.request('bench/floor').catch(() => undefined);
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await c.request('bench/floor').catch(() => undefined);
  const ops = (n * 1000) / (performance.now() - t0);
  await stopSidecar(c);
  return ops;
}

/**
 * pgbench of the append-like statement at 1 and 32 clients (bench/pgbench.ts), the serial
 * PostgreSQL row as a ratio of the 1-client rate and of the ceiling the transport floor leaves
 * (1 / (pgbench's time + the floor's)), and the notification-lock waits the server logged
 * during the rows above.
 */
function pgbenchRows(cluster: PgCluster, rows: Row[], pgNote: string, floor: number): Row[] {
  const waits = notifyLockWaits(cluster);
  const text = JSON.stringify(appendRecord);
  const one = pgbenchTps(cluster, text, 1, 5);
  const many = pgbenchTps(cluster, text, 32, 5);
  const serial = rows.find((r) => r.scenario === 'backends: PostgreSQL, serial, 1 in flight');
  return [
    { scenario: 'backends: pgbench, the append-like statement, 1 client', value: one, unit: 'appends/s', note: pgNote },
    { scenario: 'backends: pgbench, the append-like statement, 32 clients', value: many, unit: 'appends/s', note: pgNote },
    ...(serial ? [{ scenario: 'backends: PostgreSQL serial appends over pgbench at 1 client', value: serial.value, unit: 'appends/s' as const, ratio: serial.value / one, ratioTo: 'pgbench, 1 client' }] : []),
    { scenario: 'backends: sidecar transport floor, serial requests answered without the store', value: floor, unit: 'requests/s', note: 'an unknown method (MethodNotFound) over the same stdio pipes: framing, dispatch, both processes' },
    ...(serial ? [{
      scenario: 'backends: PostgreSQL serial appends over the ceiling 1 / (pgbench 1-client time + the floor)', value: serial.value, unit: 'appends/s' as const,
      ratio: serial.value * (1 / one + 1 / floor), ratioTo: 'pgbench + transport floor',
    }] : []),
    { scenario: 'backends: PostgreSQL notification-lock waits logged during the rows above', value: waits, unit: 'count', note: 'count of "waiting for AccessExclusiveLock on object 0 of class 1262" lines in server.log (log_lock_waits, over 1 s); 0 expected' },
  ];
}

export async function backendRows(work: string, n: number, limit: number): Promise<Row[]> {
  const targets: Target[] = [{ name: 'file', spawn: (tag) => ({ store: path.join(work, `backends-${tag}`) }) }];
  const skip = (() => {
    try {
      return process.env.SESSION_SIDECAR_TEST_PG ? null : pgAvailability();
    } catch (err) {
      return (err as Error).message;
    }
  })();
  let cluster: PgCluster | undefined;
  let url = process.env.SESSION_SIDECAR_TEST_PG;
  if (!skip && !url) {
    cluster = await startThrowawayCluster(fs.mkdtempSync(path.join('/tmp', 'ss-bench-pg-')));
    url = cluster.url;
  }
  const workspace = path.join(work, 'pg-workspace'); // tool scratch dirs only; must exist
  fs.mkdirSync(workspace, { recursive: true });
  const version = cluster ? `PostgreSQL ${/postgresql\/(\d+)\//.exec(cluster.local!.binDir)?.[1] ?? ''}`.trim() : 'the PostgreSQL server of SESSION_SIDECAR_TEST_PG';
  const pgNote = cluster ? `local throwaway ${version} on the same disk, unix socket, fsync=on, synchronous_commit=on` : version;
  if (url) targets.push({ name: 'PostgreSQL', spawn: (tag) => ({ store: url, args: ['serve', '--workspace', workspace, '--pg-schema', `bench_${tag}`] }) });
  else process.stderr.write(`bench: PostgreSQL rows skipped: ${skip}\n`);
  const rows: Row[] = [];
  try {
    for (const [i, shape] of SHAPES.entries()) {
      let fileOps = 0;
      for (const target of targets) {
        const tag = `${i}_${Date.now().toString(36)}`;
        const r = await runShape(target, tag, appendsFor(n, shape), shape);
        if (target.name === 'file') fileOps = r.opsPerSec;
        rows.push({
          scenario: `backends: ${target.name}, ${shape.label}`, value: r.opsPerSec, unit: 'appends/s',
          ...(target.name === 'file' ? { ratio: r.opsPerSec / limit, ratioTo: 'limit' } : { ratio: r.opsPerSec / fileOps, ratioTo: 'file backend' }),
          p50Us: percentile(r.lat, 0.5), p99Us: percentile(r.lat, 0.99), ...(r.rss ? { peakRssMB: r.rss } : {}),
          ...(target.name === 'PostgreSQL' ? { note: pgNote } : {}),
        });
        if (target.name === 'file') fs.rmSync(path.join(work, `backends-${tag}`), { recursive: true, force: true });
      }
    }
    const pg = targets.find((t) => t.name === 'PostgreSQL');
    if (cluster && pg) rows.push(...pgbenchRows(cluster, rows, pgNote, await floorRate(pg, Math.max(500, n))));
  } finally {
    if (cluster) destroyCluster(cluster);
  }
  return rows;
}
