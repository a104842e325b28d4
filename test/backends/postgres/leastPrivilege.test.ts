import { describe, expect, it } from 'vitest';
import { openPostgresBackend } from '../../../src/backends/postgres/backend.js';
import { migrate } from '../../../src/backends/postgres/migrations.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { MIGRATIONS, type Migration } from '../../../src/backends/postgres/schema.js';
import { parsePostgresUrl } from '../../../src/backends/postgres/url.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pgSkip, recs, snap } from './pgTestKit.js';
import { loginRole, migrateAsOwner, ownerConnections, servingGrants } from './pgRoles.js';

/** What an open or a call rejected with (an error is expected). */
async function failure(p: Promise<unknown>): Promise<{ kind?: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { kind?: string; message: string; details?: Record<string, unknown> };
  }
  throw new Error('expected a failure');
}

describe.skipIf(pgSkip)('postgres least privilege: a DML-only role serves a migrated schema', () => {
  it('after pg migrate (owner), a role with exactly the documented GRANTs serves appends, reads and leases', async () => {
    const schema = freshSchema('lp');
    expect([...await migrateAsOwner(schema)].sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
    const { url } = await loginRole(schema, 'dml', (r) => servingGrants(schema, r));
    const a = await backend({ url, schema });
    const id = newId();
    const fence = await a.leases.acquire(id);
    await a.create(header(id, 'dml'), recs(1, 2), snap('s0'), fence);
    await a.persist(fence, recs(3, 2), snap('s1'), { lastSeq: 2, generation: 0 });
    expect((await a.readRange(id, { afterSeq: 0, limit: 10 })).records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    await a.state.set(fence, { key: 'k', text: '"v"' } as never);
    expect((await a.listByUpdate({ limit: 10, includeTrashed: false })).map((r) => r.sessionId)).toEqual([id]);
    // A second sidecar of the same role: locked out while held, takes over once released.
    const b = await backend({ url, schema });
    await expect(b.leases.acquire(id)).rejects.toMatchObject({ kind: 'SessionLocked' });
    await a.leases.release(fence);
    const f2 = await b.leases.acquire(id);
    expect(f2.token).toBeGreaterThan(fence.token);
    await b.persist(f2, recs(5, 1), snap('s2'), { lastSeq: 4, generation: 0 });
    expect((await b.load(id)).lastSeq).toBe(5);
  }, 120_000);

  it('the same role against an un-migrated schema: the error names the privilege and says to run pg migrate', async () => {
    // No schema at all: creating it needs CREATE on the database.
    const none = freshSchema('lp');
    const { url } = await loginRole(none, 'dml');
    const e1 = await failure(openPostgresBackend({ url, schema: none }));
    expect(e1).toMatchObject({ kind: 'UnsafeStore', details: { reason: 'privilege', sqlstate: '42501' } });
    expect(e1.message).toContain('CREATE privilege on database postgres');
    expect(e1.message).toContain(`session-sidecar pg migrate --store URL --pg-schema ${none}`);
    expect(e1.message).not.toMatch(/retry later/);

    // A migrated schema but no USAGE on it: the check itself is refused, and says so.
    const noUsage = freshSchema('lp');
    await migrateAsOwner(noUsage);
    const { url: url3 } = await loginRole(noUsage, 'dml', (r) => servingGrants(noUsage, r).slice(1));
    const e3 = await failure(openPostgresBackend({ url: url3, schema: noUsage }));
    expect(e3).toMatchObject({ kind: 'UnsafeStore', details: { reason: 'privilege', privilege: 'USAGE', object: `schema ${noUsage}` } });
    expect(e3.message).toContain(`it lacks the USAGE privilege on schema ${noUsage}`);

    // A schema one migration behind, with the serving GRANTs: the missing index needs the table's owner.
    const older = freshSchema('lp');
    await migrateAsOwner(older, MIGRATIONS.slice(0, -1));
    const { url: url2 } = await loginRole(older, 'dml', (r) => servingGrants(older, r));
    const e2 = await failure(openPostgresBackend({ url: url2, schema: older }));
    expect(e2).toMatchObject({ kind: 'UnsafeStore', details: { reason: 'privilege' } });
    expect(e2.message).toContain(`cannot apply the missing schema migrations (${MIGRATIONS.at(-1)!.version})`);
    expect(e2.message).toMatch(/it lacks (the ownership of table (sessions|records)|the CREATE privilege on schema)/); // an ALTER of sessions, a new index on records, or (migration 8) a new table
    expect(e2.message).toContain('pg migrate');
    // Nothing was applied by the failed attempt.
    const c = await ownerConnections(older);
    try {
      const rows = await c.query<{ version: number }>(`SELECT version FROM "${older}".schema_migrations ORDER BY version`);
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.slice(0, -1).map((m) => m.version));
    } finally {
      await c.close();
    }
  }, 120_000);

  it('a missing privilege on an ordinary statement names the privilege and the table, not "retry later"', async () => {
    const schema = freshSchema('lp');
    await migrateAsOwner(schema);
    // SELECT only: the schema check passes, the lease INSERT is refused.
    const { url } = await loginRole(schema, 'ro', (r) => [`GRANT USAGE ON SCHEMA "${schema}" TO "${r}"`, `GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${r}"`]);
    const b = await backend({ url, schema });
    const secret = newId();
    const e = await failure(b.leases.acquire(secret));
    expect(e).toMatchObject({ kind: 'UnsafeStore', details: { reason: 'privilege', privilege: 'INSERT', object: 'table leases' } });
    expect(e.message).toContain('INSERT privilege on table leases');
    expect(e.message).not.toMatch(/retry later/);
    expect(JSON.stringify({ m: e.message, d: e.details })).not.toContain(secret); // no parameter value
  }, 120_000);

  it('serve on a current schema issues no DDL (a DDL event trigger records none)', async () => {
    const schema = freshSchema('lp');
    await migrateAsOwner(schema);
    const app = `ddlwatch_${schema}`.slice(0, 63);
    const trigger = `et_${schema}`.slice(0, 63);
    const c = await ownerConnections(schema);
    await c.query(`CREATE TABLE "${schema}".ddl_log (tag text NOT NULL)`);
    await c.query(`CREATE FUNCTION "${schema}".log_ddl() RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
      BEGIN IF current_setting('application_name') = '${app}' THEN INSERT INTO "${schema}".ddl_log VALUES (tg_tag); END IF; END $$`);
    await c.query(`CREATE EVENT TRIGGER "${trigger}" ON ddl_command_start EXECUTE FUNCTION "${schema}".log_ddl()`);
    try {
      const log = async () => (await c.query<{ tag: string }>(`SELECT tag FROM "${schema}".ddl_log`)).map((r) => r.tag);
      // The trigger sees what the old start-up ran (CREATE SCHEMA IF NOT EXISTS on an existing schema).
      const probe = await ownerConnections(schema);
      const { PgConnections } = await import('../../../src/backends/postgres/pool.js');
      const watched = await PgConnections.open({ ...probe.options, applicationName: app });
      await probe.close();
      await watched.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await watched.close();
      expect(await log()).toEqual(['CREATE SCHEMA']);
      await c.query(`DELETE FROM "${schema}".ddl_log`);

      const b = await backend({ schema, applicationName: app });
      const id = newId();
      const fence = await b.leases.acquire(id);
      await b.create(header(id), recs(1, 1), snap(), fence);
      await b.persist(fence, recs(2, 1), snap(), { lastSeq: 1, generation: 0 });
      await b.leases.release(fence);
      await b.close();
      expect(await log()).toEqual([]);
    } finally {
      await c.query(`DROP EVENT TRIGGER IF EXISTS "${trigger}"`);
      await c.close();
    }
  }, 120_000);

  it('a non-superuser owner with CREATE on the database migrates (a CONCURRENTLY index too); default privileges cover a table a later migration adds', async () => {
    const schema = freshSchema('lp');
    const { role: owner, url: ownerUrl } = await loginRole(schema, 'own', (r) => [`GRANT CREATE ON DATABASE postgres TO "${r}"`]);
    const { role: dml, url } = await loginRole(schema, 'dml');
    const oc = await PgConnections.open({ target: parsePostgresUrl(ownerUrl), schema, max: 2 });
    try {
      expect([...(await migrate(oc, schema)).applied].sort((a, b) => a - b)).toEqual(MIGRATIONS.map((m) => m.version));
      for (const g of servingGrants(schema, dml)) await oc.query(g);
      await oc.query(`ALTER DEFAULT PRIVILEGES FOR ROLE "${owner}" IN SCHEMA "${schema}" GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "${dml}"`);
      const next = Math.max(...MIGRATIONS.map((m) => m.version)) + 1;
      const newer: Migration[] = [...MIGRATIONS,
        { version: next, name: 'a table', sql: 'CREATE TABLE extra (a int);', additive: true },
        { version: next + 1, name: 'an index', sql: 'CREATE INDEX CONCURRENTLY extra_a ON extra (a)', concurrently: true, index: 'extra_a', additive: true }];
      expect((await migrate(oc, schema, newer)).applied).toEqual([next, next + 1]);
    } finally {
      await oc.close();
    }
    const b = await backend({ url, schema, migrations: [...MIGRATIONS] });
    const id = newId();
    const fence = await b.leases.acquire(id);
    await b.create(header(id), recs(1, 1), snap(), fence);
    const dc = await PgConnections.open({ target: parsePostgresUrl(url), schema, max: 1 });
    try {
      await dc.query(`INSERT INTO "${schema}".extra VALUES (1)`, [], 'write');
      expect(await dc.query(`SELECT a FROM "${schema}".extra`)).toEqual([{ a: 1 }]);
    } finally {
      await dc.close();
    }
  }, 120_000);
});
