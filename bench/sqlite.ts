/**
 * Row 4, a durable peer: SQLite (better-sqlite3) in WAL mode with synchronous=FULL, one
 * transaction per inserted ~1 KB record — each commit fsyncs the WAL, as each sidecar append
 * fdatasyncs the journal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { appendRecord } from './appends.js';
import type { Row } from './util.js';

/**
 * better-sqlite3 is an optional peer (package.json peerDependenciesMeta), so `npm ci` does not
 * compile it for people who never run the bench: without it this row is skipped with the reason.
 */
export const SQLITE_HINT = 'better-sqlite3 is not installed (an optional peer): `npm install --no-save better-sqlite3@12` to add the SQLite row';

export async function sqliteInserts(work: string, n: number, limit: number): Promise<Row[]> {
  let Database: typeof import('better-sqlite3').default;
  try {
    Database = (await import('better-sqlite3')).default;
  } catch {
    process.stderr.write(`bench: skipped the SQLite row: ${SQLITE_HINT}\n`);
    return [];
  }
  const dir = fs.mkdtempSync(path.join(work, 'sqlite-'));
  const db = new Database(path.join(dir, 'sessions.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const { v: version } = db.prepare('SELECT sqlite_version() AS v').get() as { v: string };
  const mode = db.pragma('journal_mode', { simple: true });
  if (mode !== 'wal') throw new Error(`sqlite journal_mode is ${String(mode)}, not wal`);
  db.exec('CREATE TABLE records (session TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, seq))');
  const insert = db.prepare('INSERT INTO records (session, seq, ts, body) VALUES (?, ?, ?, ?)');
  const one = db.transaction((seq: number) => insert.run('bench', seq, new Date().toISOString(), JSON.stringify(appendRecord)));
  one(0); // warm the statement and the WAL file
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) one(i);
  const ms = performance.now() - t0;
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const perSec = (n * 1000) / ms;
  return [{
    scenario: 'peer: SQLite (better-sqlite3), WAL, synchronous=FULL, 1 transaction per record', value: perSec, unit: 'inserts/s',
    ratio: perSec / limit, ratioTo: 'limit', note: `SQLite ${version}, ${n} inserts`,
  }];
}
