/**
 * A database of its own on the shared test cluster, for tests that need one: a restore target
 * (backup/restore), or a test whose measurement other tests must not disturb — pruning of dead
 * row versions (what HOT updates rely on) is held back by any old snapshot or open transaction
 * of a backend in the SAME database (PostgreSQL 14+ horizons are per database), and the other
 * tests of a run all connect to `postgres`.
 */
import pg from 'pg';
import { sharedCluster } from './pgServer.js';

/** `url` naming another database of the same server (the URL's path is the database). */
export function inDatabase(url: string, db: string): string {
  const moved = url.replace(/^(postgres(?:ql)?:\/\/[^/?]*)\/[^?]*/, `$1/${db}`);
  if (moved === url) throw new Error('the test cluster URL has an unexpected shape');
  return moved;
}

/** One statement on a fresh connection (CREATE/DROP DATABASE cannot run in a transaction). */
export async function runSql<R extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(sql, params)).rows;
  } finally {
    await c.end();
  }
}

/** A new database (name: [a-z0-9_], unique to the caller); its URL and how to drop it. */
export async function ownDatabase(name: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = (await sharedCluster()).url;
  const db = name.slice(0, 63);
  if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error('a database name of [a-z0-9_]');
  await runSql(base, `CREATE DATABASE "${db}"`);
  return { url: inDatabase(base, db), drop: async () => void (await runSql(base, `DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`)) };
}
