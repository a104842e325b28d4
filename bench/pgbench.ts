/**
 * The database's own rate for an append's work, as a reference for the PostgreSQL rows: pgbench
 * (the server's benchmark tool, from the same installation) running ONE statement per
 * transaction that does what an append does — advance a session row and insert one ~1 KB
 * record (append.ts's statement, without the fence and the snapshot columns) — from 1 and from
 * 32 clients, each client its own session, prepared statements, on the bench's throwaway
 * cluster (fsync=on, synchronous_commit=on, unix socket).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { PgCluster } from '../test/pg/pgServer.js';

const SETUP = `
DROP SCHEMA IF EXISTS pgb CASCADE;
CREATE SCHEMA pgb;
CREATE TABLE pgb.sessions (id bigint PRIMARY KEY, last_seq bigint NOT NULL DEFAULT 0, last_ts text, updated_at timestamptz);
CREATE TABLE pgb.records (session_id bigint NOT NULL, seq bigint NOT NULL, ts text NOT NULL, text text NOT NULL, crc text NOT NULL, PRIMARY KEY (session_id, seq));
INSERT INTO pgb.sessions (id) SELECT g FROM generate_series(1, 64) g;
`;

function script(recordText: string): string {
  const literal = `'${recordText.replace(/'/g, "''")}'`;
  return `WITH u AS (UPDATE pgb.sessions SET last_seq = last_seq + 1, last_ts = now()::text, updated_at = now() WHERE id = :client_id + 1 RETURNING last_seq)
INSERT INTO pgb.records (session_id, seq, ts, text, crc) SELECT :client_id + 1, last_seq, now()::text, ${literal}, 'deadbeef' FROM u;
`;
}

function asPostgres(cmd: string, args: string[]): string {
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Transactions per second of the append-like statement at `clients` clients for `seconds`. */
export function pgbenchTps(cluster: PgCluster, recordText: string, clients: number, seconds: number): number {
  const l = cluster.local!;
  const dir = fs.mkdtempSync(path.join(l.baseDir, 'pgbench-'));
  fs.chmodSync(dir, 0o755);
  const file = path.join(dir, 'append.sql');
  fs.writeFileSync(file, script(recordText), { mode: 0o644 });
  const conn = ['-h', l.socketDir, '-p', String(l.port), '-U', 'postgres'];
  asPostgres(path.join(l.binDir, 'psql'), [...conn, '-q', '-v', 'ON_ERROR_STOP=1', '-c', SETUP, 'postgres']);
  const out = asPostgres(path.join(l.binDir, 'pgbench'), [
    ...conn, '-n', '-M', 'prepared', '-f', file, '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(seconds), 'postgres',
  ]);
  const tps = /tps = ([\d.]+)/.exec(out);
  if (!tps) throw new Error(`pgbench printed no tps: ${out.slice(-400)}`);
  return Number(tps[1]);
}

/** Notification-queue lock waits the server logged (log_lock_waits): commits serialised behind NOTIFY. */
export function notifyLockWaits(cluster: PgCluster): number {
  const log = path.join(cluster.local!.baseDir, 'server.log');
  if (!fs.existsSync(log)) return 0;
  return fs.readFileSync(log, 'utf8').split('\n').filter((l) => /waiting for AccessExclusiveLock on object 0 of class 1262/.test(l)).length;
}
