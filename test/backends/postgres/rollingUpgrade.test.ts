import { describe, expect, it } from 'vitest';
import { migrate } from '../../../src/backends/postgres/migrations.js';
import { PgConnections } from '../../../src/backends/postgres/pool.js';
import { MIGRATIONS, type Migration } from '../../../src/backends/postgres/schema.js';
import { readSchemaStatus } from '../../../src/backends/postgres/schemaStatus.js';
import { freshSchema } from '../../pg/pgServer.js';
import { backend, header, newId, pgSkip, recs, snap } from './pgTestKit.js';
import { migrateAsOwner, ownerConnections } from './pgRoles.js';

/** The binary under test knows MIGRATIONS; a "newer binary" knows these on top (test-only lists). */
const OLD = Math.max(...MIGRATIONS.map((m) => m.version));
const additive: Migration[] = [
  { version: OLD + 1, name: 'a nullable column', sql: 'ALTER TABLE sessions ADD COLUMN note text;', additive: true },
  { version: OLD + 2, name: 'records by kind', sql: 'CREATE INDEX CONCURRENTLY records_by_kind ON records (kind)', concurrently: true, index: 'records_by_kind', additive: true },
  { version: OLD + 3, name: 'a new table', sql: 'CREATE TABLE notes (session_id text PRIMARY KEY, note text);', compatibleDownTo: OLD },
];
const contract: Migration = { version: OLD + 4, name: 'a column every writer must fill', sql: "ALTER TABLE sessions ADD COLUMN must text NOT NULL DEFAULT '';" };

async function indexValid(schema: string, index: string): Promise<Array<{ valid: boolean; oid: number }>> {
  const c = await ownerConnections(schema);
  try {
    return await c.query<{ valid: boolean; oid: number }>(
      `SELECT i.indisvalid AS valid, c.oid::int AS oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = $2`, [schema, index]);
  } finally {
    await c.close();
  }
}


/**
 * Cancels the migrator's statement starting with `prefix` once it waits for a lock (and `ready`
 * holds): the interrupted CONCURRENTLY step the next migrate must finish.
 */
async function cancelWhenWaiting(c: PgConnections, app: string, prefix: string, ready: () => Promise<boolean> = async () => true): Promise<void> {
  for (let i = 0; ; i++) {
    const waiting = await c.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE $2 AND wait_event_type = 'Lock'", [app, `${prefix}%`]);
    if (waiting.length > 0 && await ready()) {
      await c.query('SELECT pg_cancel_backend($1)', [waiting[0]!.pid]);
      return;
    }
    if (i > 600) throw new Error(`${prefix} never waited`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(pgSkip)('postgres rolling upgrade (expand/contract)', () => {
  it('a newer binary migrates while an older one serves; the older one still starts after additive migrations and refuses a contract one', async () => {
    const schema = freshSchema('ru');
    await migrateAsOwner(schema);
    const old = await backend({ schema });
    const id = newId();
    const fence = await old.leases.acquire(id);
    await old.create(header(id), recs(1, 1), snap(), fence);
    // The older binary appends all along while the newer one migrates.
    let seq = 1;
    let migrating = true;
    const appends = (async () => {
      while (migrating || seq < 12) {
        await old.persist(fence, recs(seq + 1, 1), snap(), { lastSeq: seq, generation: 0 });
        seq++;
      }
    })();
    const newer = [...MIGRATIONS, ...additive];
    const c = await ownerConnections(schema);
    let applied: number[];
    try {
      applied = (await migrate(c, schema, newer)).applied;
    } finally {
      migrating = false;
      await c.close();
    }
    await appends;
    // The transactional ones first (one transaction), then the CONCURRENTLY build alone.
    expect(applied).toEqual([OLD + 1, OLD + 3, OLD + 2]);
    expect(await indexValid(schema, 'records_by_kind')).toMatchObject([{ valid: true }]);
    expect((await old.readRange(id, { afterSeq: 0, limit: 100 })).records.map((r) => r.seq)).toEqual(Array.from({ length: seq }, (_, i) => i + 1));

    // A fresh start of the older binary: the schema is newer, but only by compatible migrations.
    const c2 = await ownerConnections(schema);
    try {
      const s = await readSchemaStatus(c2, schema);
      expect(s).toMatchObject({ state: 'newerCompatible', version: OLD + 3, known: OLD });
      expect(s.newer.map((n) => n.compatibleDownTo)).toEqual([1, 1, OLD]);
    } finally {
      await c2.close();
    }
    const again = await backend({ schema });
    expect((await again.load(id)).lastSeq).toBe(seq);
    // The newer binary serves it too, and so does a binary in between.
    await backend({ schema, migrations: newer });
    await backend({ schema, migrations: newer.slice(0, -1) });
    // An older binary's migrate has nothing to do and does not refuse.
    expect(await migrateAsOwner(schema)).toEqual([]);

    // A contract migration: older binaries refuse to start, naming both versions.
    expect(await migrateAsOwner(schema, [...newer, contract])).toEqual([contract.version]);
    await expect(backend({ schema })).rejects.toMatchObject({ kind: 'UnsafeStore', details: { reason: 'schemaNewer' } });
    const refusal = await backend({ schema, migrations: newer }).then(() => undefined, (e: Error) => e.message);
    expect(refusal).toContain(`version ${contract.version}, newer than this sidecar knows (${OLD + 3})`);
    await expect(migrateAsOwner(schema)).rejects.toMatchObject({ kind: 'UnsafeStore', details: { reason: 'schemaNewer' } });
    await backend({ schema, migrations: [...newer, contract] });
  }, 180_000);

  it('an INVALID index left by an interrupted CONCURRENTLY build is dropped and rebuilt; the version is recorded only once it is valid', async () => {
    const schema = freshSchema('ru');
    await migrateAsOwner(schema);
    const table: Migration = { version: OLD + 1, name: 'a table', sql: 'CREATE TABLE dup (a int); INSERT INTO dup VALUES (1), (1);', additive: true };
    const unique: Migration = { version: OLD + 2, name: 'unique a', sql: 'CREATE UNIQUE INDEX CONCURRENTLY dup_a ON dup (a)', concurrently: true, index: 'dup_a', additive: true };
    const list = [...MIGRATIONS, table, unique];
    // The build fails half-way (a duplicate), as a crash or a cancel would leave it: INVALID, not recorded.
    await expect(migrateAsOwner(schema, list)).rejects.toMatchObject({ kind: 'Conflict' });
    expect(await indexValid(schema, 'dup_a')).toMatchObject([{ valid: false }]);
    const c = await ownerConnections(schema);
    try {
      expect((await readSchemaStatus(c, schema, list))).toMatchObject({ state: 'missing', missing: [unique.version] });
      await c.query(`DELETE FROM "${schema}".dup; INSERT INTO "${schema}".dup VALUES (1), (2)`);
      // A migrate in between that knows only the table has nothing to do (the leftover stays).
      expect(await migrateAsOwner(schema, [...MIGRATIONS, table])).toEqual([]);
      expect(await migrateAsOwner(schema, list)).toEqual([unique.version]);
      const rebuilt = await indexValid(schema, 'dup_a');
      expect(rebuilt).toMatchObject([{ valid: true }]);

      // A crash after a build and before its recording: the VALID index is kept, only recorded.
      const byA: Migration = { version: OLD + 3, name: 'a again', sql: 'CREATE INDEX CONCURRENTLY dup_b ON dup (a)', concurrently: true, index: 'dup_b', additive: true };
      await c.query(`CREATE INDEX dup_b ON "${schema}".dup (a)`);
      const before = await indexValid(schema, 'dup_b');
      expect(await migrateAsOwner(schema, [...list, byA])).toEqual([byA.version]);
      expect(await indexValid(schema, 'dup_b')).toEqual(before);
      const rows = await c.query<{ version: number; compatible_down_to: number }>(`SELECT version, compatible_down_to FROM "${schema}".schema_migrations WHERE version > $1 ORDER BY version`, [OLD]);
      expect(rows).toEqual([{ version: OLD + 1, compatible_down_to: 1 }, { version: OLD + 2, compatible_down_to: 1 }, { version: OLD + 3, compatible_down_to: 1 }]);
    } finally {
      await c.close();
    }
  }, 180_000);

  it('a CONCURRENTLY build cancelled while it waits for a writer leaves an INVALID index that the next migrate rebuilds', async () => {
    const schema = freshSchema('ru');
    await migrateAsOwner(schema);
    const idx: Migration = { version: OLD + 1, name: 'records by ts', sql: 'CREATE INDEX CONCURRENTLY records_by_ts ON records (ts)', concurrently: true, index: 'records_by_ts', additive: true };
    const list = [...MIGRATIONS, idx];
    const c = await ownerConnections(schema);
    // A writer's open transaction: the build commits its INVALID catalog entry, then waits for it.
    const writer = await c.dedicatedClient(() => undefined);
    const app = `mig_${schema}`.slice(0, 63);
    const migrator = await PgConnections.open({ ...c.options, applicationName: app });
    try {
      await writer.query('BEGIN');
      await writer.query(`LOCK TABLE "${schema}".records IN ROW EXCLUSIVE MODE`);
      const run = migrate(migrator, schema, list).then(() => 'done', (e: { kind?: string }) => e.kind ?? 'error');
      await cancelWhenWaiting(c, app, 'CREATE INDEX CONCURRENTLY', async () => (await indexValid(schema, 'records_by_ts')).length === 1);
      expect(await run).not.toBe('done');
      await writer.query('ROLLBACK');
      expect(await indexValid(schema, 'records_by_ts')).toMatchObject([{ valid: false }]);
      expect((await readSchemaStatus(c, schema, list)).missing).toEqual([idx.version]);
      expect(await migrateAsOwner(schema, list)).toEqual([idx.version]);
      expect(await indexValid(schema, 'records_by_ts')).toMatchObject([{ valid: true }]);
    } finally {
      await writer.end().catch(() => undefined);
      await migrator.close();
      await c.close();
    }
  }, 180_000);

  it('migration 6 (drop sessions_by_update CONCURRENTLY, fillfactor) while a v5 binary appends and lists: it goes on, starts again after it, lists in the same order', async () => {
    const schema = freshSchema('ru');
    const v5 = MIGRATIONS.filter((m) => m.version <= 5);
    // The binary that brings migration 6 (later migrations of this binary are not the subject).
    const v6 = MIGRATIONS.filter((m) => m.version <= 6);
    await migrateAsOwner(schema, v5);
    const old = await backend({ schema, migrations: v5 });
    const ids = [newId(), newId(), newId()];
    const fences = [];
    for (const id of ids) {
      const f = await old.leases.acquire(id);
      await old.create(header(id), recs(1, 1), snap(), f);
      fences.push(f);
    }
    const listed = async (b: typeof old) => (await b.listByUpdate({ limit: 10, includeTrashed: false })).map((r) => r.sessionId);
    let seq = 1;
    let migrating = true;
    const appends = (async () => {
      while (migrating || seq < 12) {
        // Round robin: the last one appended to is the newest.
        await old.persist(fences[seq % 3]!, recs(Math.floor((seq - 1) / 3) + 2, 1), snap(), { lastSeq: Math.floor((seq - 1) / 3) + 1, generation: 0 });
        seq++;
        await listed(old);
      }
    })();
    const c = await ownerConnections(schema);
    try {
      expect((await migrate(c, schema, v6)).applied).toEqual([6]);
    } finally {
      migrating = false;
    }
    try {
      await appends;
      expect(await indexValid(schema, 'sessions_by_update')).toEqual([]);
      const [rel] = await c.query<{ opts: string[] }>(`SELECT reloptions AS opts FROM pg_class WHERE oid = $1::regclass`, [`"${schema}".sessions`]);
      expect(rel?.opts).toEqual(['fillfactor=75']);
      const s = await readSchemaStatus(c, schema, v5);
      expect(s).toMatchObject({ state: 'newerCompatible', version: 6, known: 5 });
      expect(s.newer.map((n) => n.compatibleDownTo)).toEqual([1]);
    } finally {
      await c.close();
    }
    // A fresh start of the v5 binary serves it; its list (no index now) and the new binary's agree.
    const again = await backend({ schema, migrations: v5 });
    const now = await backend({ schema, migrations: v6 });
    const order = await listed(now);
    expect(await listed(again)).toEqual(order);
    // The list order (updatedAt = the later of last record ts and createdAt, then id; newest first), from the rows.
    const rows = await Promise.all(ids.map((id) => now.load(id)));
    const key = (r: (typeof rows)[number]) => `${[r.lastTs ?? r.createdAt, r.createdAt].sort().pop()} ${r.sessionId}`;
    expect(order).toEqual(rows.sort((a, b) => (key(a) < key(b) ? 1 : -1)).map((r) => r.sessionId));
    expect(await migrateAsOwner(schema, v5)).toEqual([]);
  }, 180_000);

  it('a DROP INDEX CONCURRENTLY cancelled while it waits for a writer is not recorded; the next pg migrate finishes it', async () => {
    const schema = freshSchema('ru');
    const v5 = MIGRATIONS.filter((m) => m.version <= 5);
    // The binary that brings migration 6 (later migrations of this binary are not the subject).
    const v6 = MIGRATIONS.filter((m) => m.version <= 6);
    await migrateAsOwner(schema, v5);
    const c = await ownerConnections(schema);
    const writer = await c.dedicatedClient(() => undefined);
    const app = `mig_${schema}`.slice(0, 63);
    const migrator = await PgConnections.open({ ...c.options, applicationName: app });
    try {
      // A writer's open transaction: the drop marks the index INVALID, commits, then waits for it.
      await writer.query('BEGIN');
      await writer.query(`LOCK TABLE "${schema}".sessions IN ROW EXCLUSIVE MODE`);
      const run = migrate(migrator, schema, v6).then(() => 'done', (e: { kind?: string }) => e.kind ?? 'error');
      await cancelWhenWaiting(c, app, 'DROP INDEX CONCURRENTLY');
      expect(await run).not.toBe('done');
      await writer.query('ROLLBACK');
      // Left behind: the index, no longer valid (the planner ignores it); version 6 not recorded.
      expect(await indexValid(schema, 'sessions_by_update')).toMatchObject([{ valid: false }]);
      expect((await readSchemaStatus(c, schema, v6)).missing).toEqual([6]);
      // A v5 binary still serves meanwhile (its schema is current for it).
      const old = await backend({ schema, migrations: v5 });
      const id = newId();
      await old.create(header(id), recs(1, 1), snap(), await old.leases.acquire(id));
      expect((await old.listByUpdate({ limit: 5, includeTrashed: false })).map((r) => r.sessionId)).toEqual([id]);
      expect(await migrateAsOwner(schema, v6)).toEqual([6]);
      expect(await indexValid(schema, 'sessions_by_update')).toEqual([]);
      expect(await migrateAsOwner(schema, v6)).toEqual([]);
    } finally {
      await writer.end().catch(() => undefined);
      await migrator.close();
      await c.close();
    }
  }, 180_000);
});
