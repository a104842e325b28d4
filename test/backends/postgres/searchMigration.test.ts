/**
 * Migration 7 (the pg_trgm index of session/search) where its extension cannot be had: the
 * migration is recorded without its index, `serve` runs (no DDL after), and the search's SQL
 * gives the same candidates over the table. And the backend's refusals: an encrypted store is
 * never searched in SQL.
 */
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, type Migration } from '../../../src/backends/postgres/schema.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pass, pgSkip, pgUrl, snap } from './pgTestKit.js';
import type { Gated, SealedRecord } from '../../../src/core/port.js';
import { openPostgresBackend } from '../../../src/backends/postgres/backend.js';
import { loginRole, migrateAsOwner, ownerConnections, servingGrants } from './pgRoles.js';

function messages(texts: string[], from = 1): Array<Gated<SealedRecord>> {
  const t = texts.map((c) => JSON.stringify({ kind: 'message', message: { role: 'user', content: c } }));
  const sealed = pass.records(t, t.map(() => 'message'), from, new Date().toISOString());
  if (!('sealed' in sealed)) throw new Error('refused');
  return sealed.sealed;
}

describe.skipIf(pgSkip !== null)('PostgreSQL search index: migration 7 and its fallbacks', () => {
  it('an extension that cannot be created: the migration is recorded without its index, and the search SQL still answers', async () => {
    const seven = MIGRATIONS.find((m) => m.version === 7)!;
    const without: Migration[] = [...MIGRATIONS.filter((m) => m.version !== 7), { ...seven, extension: 'no_such_extension_here' }];
    const schema = freshSchema();
    const b = await backend({ schema, migrations: without });
    expect(b.migration.applied).toContain(7);
    const conns = (b as unknown as { conns: { query<R>(sql: string, p?: unknown[]): Promise<R[]> } }).conns;
    expect(await conns.query(`SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = 'records_message_trgm'`, [schema])).toEqual([]);
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), messages(['alpha needle', 'beta', 'gamma NEEDLE']), snap(), fence);
    expect((await b.searchCandidates({ needle: 'needle', limit: 10 }))!.candidates.map((c) => c.record.seq)).toEqual([1, 3]);
    await b.close();
    // A second start finds the schema current: nothing is applied again.
    const again = await backend({ schema, migrations: without });
    expect(again.migration.applied).toEqual([]);
  });

  it('a serving role (not the owner) never records migration 7 without its index: the ownership error, nothing recorded', async () => {
    const seven = MIGRATIONS.find((m) => m.version === 7)!;
    const without: Migration[] = [...MIGRATIONS.filter((m) => m.version !== 7), { ...seven, extension: 'no_such_extension_here' }];
    const schema = freshSchema('lp');
    await migrateAsOwner(schema, without.filter((m) => m.version !== 7));
    const { url } = await loginRole(schema, 'dml', (r) => servingGrants(schema, r));
    const err = await openPostgresBackend({ url, schema, migrations: without }).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ kind: 'UnsafeStore', details: { reason: 'privilege' } });
    expect((err as Error).message).toContain('it lacks the ownership of table records');
    const c = await ownerConnections(schema);
    try {
      expect((await c.query<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations WHERE version = 7`))).toEqual([]);
    } finally {
      await c.close();
    }
  }, 60_000);

  it('the real migration 7 builds the index over the extension, wherever the extension lives', async () => {
    const schema = freshSchema();
    const b = await backend({ schema });
    const conns = (b as unknown as { conns: { query<R>(sql: string, p?: unknown[]): Promise<R[]> } }).conns;
    const [idx] = await conns.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'records_message_trgm'`, [schema]);
    expect(idx!.indexdef).toMatch(/USING gin \(text \w+\.gin_trgm_ops\) WHERE \(kind = 'message'::text\)/);
    const [ext] = await conns.query<{ nspname: string }>(`SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`);
    expect(ext!.nspname).toBe('public'); // never a store's schema: dropping one store must not take it
  });

  it('never searches an encrypted store in SQL, and refuses a needle the core would not send', async () => {
    const b = await backend();
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), messages(['a needle']), snap(), fence);
    expect((await b.searchCandidates({ needle: 'needle', limit: 10 }))!.candidates).toHaveLength(1);
    await expect(b.searchCandidates({ needle: 'say "x"', limit: 10 })).rejects.toMatchObject({ kind: 'InvalidArgument' });
    Object.defineProperty(b, 'encrypted', { value: true });
    expect(await b.searchCandidates({ needle: 'needle', limit: 10 })).toBeUndefined();
    // Nor are list filters applied in its SQL: every row comes back for the core's filter.
    expect(await b.listByUpdate({ limit: 10, includeTrashed: false, narrow: { needle: 'no such text' } })).toHaveLength(1);
  });
  it('a database that is not UTF8 is never searched in SQL (one character is not one code point there)', async () => {
    const url = await pgUrl();
    const dbName = `ascii_${Date.now().toString(36)}`;
    const admin = await backend();
    const conns = (admin as unknown as { conns: { query<R>(sql: string, p?: unknown[]): Promise<R[]> } }).conns;
    await conns.query(`CREATE DATABASE ${dbName} ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`);
    // The same server, the other database: the URL's path names the database.
    const asciiUrl = url.replace(/\/([^/?]+)(\?|$)/, `/${dbName}$2`);
    expect(asciiUrl).toContain(dbName);
    const b = await backend({ url: asciiUrl });
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), messages(['a needle']), snap(), fence);
    expect(await b.searchCandidates({ needle: 'needle', limit: 10 })).toBeUndefined();
  });

  it('an encrypted store gets no list narrowing in SQL either (sealed header texts): every row comes back for the core to filter', async () => {
    const b = await backend();
    for (const t of ['alpha', 'beta']) {
      const id = newId();
      await b.create(header(id, t), [], snap(), await b.leases.acquire(id));
    }
    const narrow = { needle: 'alpha' };
    expect(await b.listByUpdate({ limit: 10, includeTrashed: false, narrow })).toHaveLength(1);
    Object.defineProperty(b, 'encrypted', { value: true });
    expect(await b.listByUpdate({ limit: 10, includeTrashed: false, narrow })).toHaveLength(2);
  });
  it('candidate pages: at most limit records and about maxBytes of text (at least one), `more` when cut, going on from `after`', async () => {
    const b = await backend();
    const id = newId();
    const body = (i: number) => `needle ${i} ${'x'.repeat(960)}`;
    await b.create(header(id), messages([0, 1, 2, 3, 4].map(body)), snap(), await b.leases.acquire(id));
    const size = Buffer.byteLength(JSON.stringify({ kind: 'message', message: { role: 'user', content: body(0) } }));
    const seqs = async (o: { limit: number; maxBytes?: number; after?: { sessionId: string; seq: number } }) => {
      const p = (await b.searchCandidates({ needle: 'needle', ...o }))!;
      return [p.candidates.map((c) => c.record.seq), p.more];
    };
    expect(await seqs({ limit: 10 })).toEqual([[1, 2, 3, 4, 5], false]);
    expect(await seqs({ limit: 5 })).toEqual([[1, 2, 3, 4, 5], false]);
    expect(await seqs({ limit: 2 })).toEqual([[1, 2], true]);
    expect(await seqs({ limit: 10, maxBytes: size * 2 + 1 })).toEqual([[1, 2, 3], true]);
    expect(await seqs({ limit: 10, maxBytes: 1 })).toEqual([[1], true]);
    expect(await seqs({ limit: 10, after: { sessionId: id, seq: 3 } })).toEqual([[4, 5], false]);
    expect(await seqs({ limit: 10, after: { sessionId: id, seq: 5 } })).toEqual([[], false]);
  });
});
