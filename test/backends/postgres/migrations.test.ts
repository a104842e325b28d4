import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/backends/postgres/migrations.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { MIGRATIONS, type Migration } from '../../../src/backends/postgres/schema.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { pgSkip, pgUrl } from './pgTestKit.js';

const NEXT = Math.max(...MIGRATIONS.map((m) => m.version)) + 1;

async function connections(schema: string, n: number): Promise<PgConnections[]> {
  const target = parsePostgresUrl(await pgUrl());
  return Promise.all(Array.from({ length: n }, () => PgConnections.open({ target, schema, max: 2 })));
}

describe.skipIf(pgSkip)('postgres migrations', () => {
  it('4 pg migrate runs at once on a fresh schema (a CONCURRENTLY build and drop among the migrations): all succeed, each migration applied once, every index VALID', async () => {
    const schema = freshSchema('mig');
    // A binary one version newer, whose last migration builds an index CONCURRENTLY: the
    // holder's build waits for every older snapshot, so a waiting migrator that held one (a
    // blocked pg_advisory_lock) would deadlock it (lockSchema polls instead).
    const build: Migration = { version: NEXT, name: 'records by kind', sql: 'CREATE INDEX CONCURRENTLY records_by_kind ON records (kind)', concurrently: true, index: 'records_by_kind', additive: true };
    const list = [...MIGRATIONS, build];
    const versions = list.map((m) => m.version).sort((a, b) => a - b);
    const conns = await connections(schema, 4);
    try {
      const results = await Promise.all(conns.map((c) => migrate(c, schema, list)));
      const applied = results.map((r) => r.applied);
      // The transactional ones first (one transaction), then the concurrently ones in order.
      const order = [...list.filter((m) => !m.concurrently), ...list.filter((m) => m.concurrently)].map((m) => m.version);
      expect(applied.filter((a) => a.length > 0)).toEqual([order]);
      expect(applied.filter((a) => a.length === 0)).toHaveLength(3);
      expect(results.map((r) => r.version)).toEqual([NEXT, NEXT, NEXT, NEXT]);
      const rows = await conns[0]!.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(versions);
      const indexes = await conns[0]!.query<{ name: string; valid: boolean; ready: boolean }>(
        `SELECT c.relname AS name, i.indisvalid AS valid, i.indisready AS ready FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1`, [schema]);
      expect(indexes.map((x) => x.name)).toContain('records_by_kind');
      expect(indexes.map((x) => x.name)).not.toContain('sessions_by_update');
      expect(indexes.filter((x) => !x.valid || !x.ready)).toEqual([]);
      const tables = await conns[0]!.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema]);
      expect(tables.map((t) => t.table_name)).toEqual(['archived_generations', 'blobs', 'leases', 'records', 'schema_migrations', 'sessions', 'state_values', 'store_encryption']);
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  }, 120_000);

  it('a failing migration leaves nothing behind (one transaction), and a later version applies on top', async () => {
    const schema = freshSchema('mig');
    const [c] = await connections(schema, 1);
    try {
      await migrate(c!, schema);
      const broken = [...MIGRATIONS, { version: NEXT, name: 'half', sql: 'CREATE TABLE extra (a int); SELECT 1/0;' }];
      await expect(migrate(c!, schema, broken)).rejects.toMatchObject({ kind: 'NotWritten' });
      const extra = await c!.query('SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2', [schema, 'extra']);
      expect(extra).toHaveLength(0);
      const good = [...MIGRATIONS, { version: NEXT, name: 'extra', sql: 'CREATE TABLE extra (a int);' }];
      expect((await migrate(c!, schema, good)).applied).toEqual([NEXT]);
      // This sidecar's own list is now older than the schema: it refuses to write there.
      await expect(migrate(c!, schema)).rejects.toMatchObject({ kind: 'UnsafeStore', details: { reason: 'schemaNewer' } });
    } finally {
      await c!.close();
    }
  });

  it('a concurrently migration names the index it builds or drops, exactly one; index and dropIndex only go with concurrently', async () => {
    const schema = freshSchema('mig');
    const [c] = await connections(schema, 1);
    try {
      const bad: Migration[] = [
        { version: NEXT, name: 'neither', sql: 'SELECT 1', concurrently: true },
        { version: NEXT, name: 'both', sql: 'SELECT 1', concurrently: true, index: 'a_idx', dropIndex: 'b_idx' },
        { version: NEXT, name: 'not a name', sql: 'SELECT 1', concurrently: true, dropIndex: 'x; DROP TABLE records' },
        { version: NEXT, name: 'drop in a transaction', sql: 'SELECT 1', dropIndex: 'a_idx' },
        { version: NEXT, name: 'build in a transaction', sql: 'SELECT 1', index: 'a_idx' },
      ];
      for (const m of bad) await expect(migrate(c!, schema, [...MIGRATIONS, m]), m.name).rejects.toThrow(/migration \d+: /);
      // Nothing was applied: the list is checked before anything runs.
      expect(await c!.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).toEqual([]);
    } finally {
      await c!.close();
    }
  });
});
