import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/backends/postgres/migrations.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { MIGRATIONS } from '../../../src/backends/postgres/schema.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { pgSkip, pgUrl } from './pgTestKit.js';

const NEXT = Math.max(...MIGRATIONS.map((m) => m.version)) + 1;

async function connections(schema: string, n: number): Promise<PgConnections[]> {
  const target = parsePostgresUrl(await pgUrl());
  return Promise.all(Array.from({ length: n }, () => PgConnections.open({ target, schema, max: 2 })));
}

describe.skipIf(pgSkip)('postgres migrations', () => {
  it('4 sidecars starting at once: one applies the migrations, the others find them applied', async () => {
    const schema = freshSchema('mig');
    const conns = await connections(schema, 4);
    try {
      const results = await Promise.all(conns.map((c) => migrate(c, schema)));
      const applied = results.map((r) => r.applied);
      expect(applied.filter((a) => a.length > 0)).toEqual([MIGRATIONS.map((m) => m.version)]);
      expect(applied.filter((a) => a.length === 0)).toHaveLength(3);
      const rows = await conns[0]!.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      const tables = await conns[0]!.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema]);
      expect(tables.map((t) => t.table_name)).toEqual(['archived_generations', 'blobs', 'leases', 'records', 'schema_migrations', 'sessions', 'state_values', 'store_encryption']);
    } finally {
      await Promise.all(conns.map((c) => c.close()));
    }
  });

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
});
