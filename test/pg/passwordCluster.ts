/**
 * A dedicated throwaway PostgreSQL cluster that checks passwords (the shared one trusts every
 * local connection, so a password there is carried but never verified): pg_hba.conf
 *   local all postgres             trust           (setup and raw checks, unix socket)
 *   host  all postgres 127.0.0.1/32 trust
 *   local all all                  scram-sha-256
 *   host  all all      127.0.0.1/32 scram-sha-256
 * and a login role `pwrole` with PASSWORD, CREATE on the database (it creates and owns the
 * store schemas it serves).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { destroyCluster, startCluster, startThrowawayCluster, stopCluster, type PgCluster } from './pgServer.js';

export const ROLE = 'pwrole';
export const ROLE_PASSWORD = 'Pw-role-Kq7Zt3Xv9Lm2';

export interface PasswordCluster {
  cluster: PgCluster;
  port: number;
  /** The role's TCP URL, with `password` in it when given. */
  url(password?: string): string;
  /** Runs SQL as the superuser over the unix socket. */
  sql<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params?: unknown[]): Promise<R[]>;
  stop(): void;
  start(): void;
  destroy(): void;
}

export async function startPasswordCluster(): Promise<PasswordCluster> {
  const cluster = await startThrowawayCluster();
  const l = cluster.local!;
  const sql = async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []) => {
    const c = new pg.Client({ host: l.socketDir, port: l.port, user: 'postgres', database: 'postgres' });
    await c.connect();
    try {
      return (await c.query<R>(text, params)).rows;
    } finally {
      await c.end();
    }
  };
  try {
    fs.writeFileSync(path.join(l.dataDir, 'pg_hba.conf'), [
      'local all postgres trust',
      'host all postgres 127.0.0.1/32 trust',
      'local all all scram-sha-256',
      'host all all 127.0.0.1/32 scram-sha-256',
      '',
    ].join('\n'));
    await sql(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${ROLE_PASSWORD}'`);
    await sql(`GRANT CREATE ON DATABASE postgres TO ${ROLE}`);
    await sql('SELECT pg_reload_conf()');
  } catch (e) {
    destroyCluster(cluster);
    throw e;
  }
  return {
    cluster, port: l.port, sql,
    url: (password) => `postgres://${ROLE}${password !== undefined ? `:${encodeURIComponent(password)}` : ''}@127.0.0.1:${l.port}/postgres`,
    stop: () => stopCluster(cluster, 'fast'),
    start: () => startCluster(cluster),
    destroy: () => destroyCluster(cluster),
  };
}
