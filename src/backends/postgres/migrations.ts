/**
 * Applying migrations (`session-sidecar pg migrate`, and `serve` on a schema that misses some):
 * the owner's path. `serve` on a current schema never comes here (schemaStatus.ts: SELECTs only).
 *
 * On one dedicated connection (not pooled, closed at the end):
 * 1. `pg_try_advisory_lock(LOCK_CLASS, hashtext(schema))` polled (lockSchema), session-level, held to the end: migrators
 *    serialise on it; each one, once it holds it, reads the recorded versions and applies only
 *    what is missing — the first applies everything, the others find nothing to do.
 * 2. ONE transaction: the schema, `schema_migrations` and its `compatible_down_to` column when
 *    they are missing (only then: no DDL when there is nothing to do), then every missing
 *    transactional migration, each recorded. A crash rolls it all back (DDL is transactional):
 *    the schema is at a recorded version or untouched.
 * 3. Each missing `concurrently` migration alone, outside any transaction (CREATE INDEX
 *    CONCURRENTLY blocks no writer), in version order. Crash-safe: a build that was interrupted
 *    (crash, cancel, a failed unique build) leaves an INVALID index; it is dropped (DROP INDEX
 *    CONCURRENTLY) and rebuilt here on the next run; a VALID one left by a crash between the
 *    build and the recording is kept. The version is recorded only after the index is VALID,
 *    so a recorded version always means a usable index.
 *    A `dropIndex` migration runs its `sql` (one idempotent statement, autocommit), then
 *    DROP INDEX CONCURRENTLY IF EXISTS (no writer blocked; it waits for the transactions that
 *    may use the index). Interrupted, it leaves the index INVALID or still there: the next run
 *    repeats both (the sql is idempotent, IF EXISTS finishes the drop). The version is recorded
 *    only once the index is gone, so a recorded version always means it is.
 * 4. `pg_advisory_unlock`; closing the connection would release it too (a crashed migrator's
 *    lock goes with its connection).
 * A schema recorded at a version this binary may not serve after (schemaStatus.ts) is refused
 * (UnsafeStore, schemaNewer) before anything is applied.
 */
import type { Client } from 'pg';
import { mapPgError, PgBackendError, privilegeText } from './errors.js';
import type { PgConnections } from './pool.js';
import { compatibleDownToOf, MIGRATIONS, type Migration } from './schema.js';
import { evaluate, knownVersion, readSchemaStatus, schemaNewerError, type SchemaStatus } from './schemaStatus.js';

/** First key of the advisory lock: "ssmg" — the second is hashtext(schema). */
const LOCK_CLASS = 0x73736d67;
const INDEX_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** Lock waits of the transactional DDL (ALTER TABLE queues writers behind it while it waits). */
const DDL_LOCK_TIMEOUT = '10s';

export interface MigrationResult {
  /** Versions this call applied (empty when the schema was current), in the order applied. */
  applied: number[];
  /** The schema's version afterwards (highest recorded). */
  version: number;
}

export interface MigrateOptions {
  /** Told each migration as it is recorded (the CLI prints it). */
  onApplied?: (m: Migration) => void;
}

export async function migrate(conns: PgConnections, schema: string, migrations: readonly Migration[] = MIGRATIONS, o: MigrateOptions = {}): Promise<MigrationResult> {
  for (const m of migrations) checkMigration(m);
  // Errors of this connection surface through its queries; the event only must not go unhandled.
  const client = await conns.dedicatedClient(() => undefined);
  const run = async <R>(sql: string, params: unknown[] = []): Promise<R[]> => {
    try {
      return (await client.query(sql, params)).rows as R[];
    } catch (err) {
      throw mapPgError(err, 'write', sql);
    }
  };
  try {
    // Waiting for another migrator (it may be building an index) has no time limit.
    await run('SET lock_timeout = 0');
    await lockSchema(run, schema);
    const applied: number[] = [];
    let status: SchemaStatus;
    try {
      status = await transactional(client, run, schema, migrations, applied, o);
      const pending = migrations.filter((m) => m.concurrently && status.missing.includes(m.version)).sort((a, b) => a.version - b.version);
      // The name is validated (checkSchemaName) and quoted; it cannot be a bind parameter.
      if (pending.length > 0) await run(`SET search_path = "${schema}"`);
      for (const m of pending) {
        await (m.dropIndex !== undefined ? dropIndexConcurrently(run, schema, m) : concurrentIndex(run, schema, m));
        applied.push(m.version);
        o.onApplied?.(m);
      }
    } finally {
      await run('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_CLASS, schema]).catch(() => undefined);
    }
    return { applied, version: Math.max(status.version, ...applied) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

type Run = <R>(sql: string, params?: unknown[]) => Promise<R[]>;

/**
 * The schema's advisory lock, polled instead of waited for: a statement blocked in
 * pg_advisory_lock holds a snapshot, and the holder's CREATE INDEX CONCURRENTLY waits for every
 * older snapshot — a deadlock PostgreSQL breaks by failing one (an INVALID index left). Between
 * tries this connection holds none.
 */
async function lockSchema(run: Run, schema: string): Promise<void> {
  for (let delay = 50; ; delay = Math.min(1000, delay * 2)) {
    const [row] = await run<{ got: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS got', [LOCK_CLASS, schema]);
    if (row?.got) return;
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** Step 2: one transaction; returns the status read in it (before its own migrations). */
async function transactional(client: Client, run: Run, schema: string, migrations: readonly Migration[], applied: number[], o: MigrateOptions): Promise<SchemaStatus> {
  await run('BEGIN');
  try {
    await run(`SET LOCAL lock_timeout = '${DDL_LOCK_TIMEOUT}'`);
    const ns = await run<{ one: number }>('SELECT 1 AS one FROM pg_namespace WHERE nspname = $1', [schema]);
    if (ns.length === 0) await run(`CREATE SCHEMA "${schema}"`);
    await run(`SET LOCAL search_path = "${schema}"`);
    const table = await run<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`"${schema}".schema_migrations`]);
    if (!table[0]?.t) {
      await run(`CREATE TABLE schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), compatible_down_to integer)`);
    } else {
      const col = await run<{ one: number }>(
        `SELECT 1 AS one FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'compatible_down_to' AND NOT attisdropped`, [`"${schema}".schema_migrations`]);
      // Bookkeeping, not a store migration: older binaries read the table with SELECT *.
      if (col.length === 0) await run('ALTER TABLE schema_migrations ADD COLUMN compatible_down_to integer');
    }
    const status = evaluate(await run(`SELECT * FROM schema_migrations ORDER BY version`), migrations);
    if (status.state === 'newerIncompatible') throw schemaNewerError(status);
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (m.concurrently || !status.missing.includes(m.version)) continue;
      await run(m.sql);
      await record(run, m);
      applied.push(m.version);
    }
    await run('COMMIT');
    for (const v of applied) o.onApplied?.(migrations.find((m) => m.version === v)!);
    return status;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Step 3 for one migration: drop an INVALID leftover, build unless a VALID one exists, check, record. */
async function concurrentIndex(run: Run, schema: string, m: Migration): Promise<void> {
  const index = m.index!;
  const validity = async () => (await run<{ valid: boolean }>(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2`, [schema, index]))[0]?.valid;
  const before = await validity();
  if (before === false) await run(`DROP INDEX CONCURRENTLY IF EXISTS "${schema}"."${index}"`);
  let sql = m.sql;
  if (before !== true && m.extension !== undefined) {
    const extSchema = await withExtension(run, m.extension);
    if (extSchema === undefined && await ownsSchema(run, schema)) return record(run, m); // recorded without its index (schema.ts: extension)
    // Not the owner (a serving role on an older schema): the build below fails with the
    // ownership error, which names the privilege — never recorded without the index by a role
    // that could not have built it anyway.
    sql = sql.replaceAll('{extschema}', `"${(extSchema ?? 'public').replaceAll('"', '""')}"`);
  }
  if (before !== true) await run(sql);
  if ((await validity()) !== true) {
    throw new PgBackendError('UnsafeStore', `migration ${m.version} did not leave its index ${index} valid; run 'session-sidecar pg migrate' again`, { reason: 'indexInvalid', version: m.version });
  }
  await record(run, m);
}

/**
 * Step 3 for a dropIndex migration: its statement, the drop, record. The DROP returning means
 * the index is gone (IF EXISTS: or was already — a crash after the drop, before the recording);
 * any failure (a cancel while it waits, a lock) throws before the recording.
 */
async function dropIndexConcurrently(run: Run, schema: string, m: Migration): Promise<void> {
  if (m.sql.trim() !== '') await run(m.sql);
  await run(`DROP INDEX CONCURRENTLY IF EXISTS "${schema}"."${m.dropIndex!}"`);
  await record(run, m);
}

/**
 * The schema `extension` is installed in — created first in `public` when it is nowhere in the
 * database (so that no store schema owns it: a DROP SCHEMA ... CASCADE of one store would take
 * it, and every other store's index over it, along) — or undefined when it cannot be had (the
 * server lacks it, or this role may not create it: pg_trgm is trusted from PostgreSQL 13, so
 * CREATE on the database and on `public` suffices). A concurrent migrator of another schema
 * that created it first is found on the second look.
 */
async function withExtension(run: Run, extension: string): Promise<string | undefined> {
  const where = async () => (await run<{ nspname: string }>(
    'SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1', [extension]))[0]?.nspname;
  const found = await where();
  if (found !== undefined) return found;
  try {
    await run(`CREATE EXTENSION IF NOT EXISTS "${extension}" SCHEMA public`);
  } catch {
    // Not available or not permitted: the caller records the migration without its index.
  }
  return where();
}

/** Whether this role owns the store's schema (its owner, or a member of the owning role). */
async function ownsSchema(run: Run, schema: string): Promise<boolean> {
  const [row] = await run<{ owns: boolean }>(`SELECT pg_has_role(nspowner, 'USAGE') AS owns FROM pg_namespace WHERE nspname = $1`, [schema]);
  return row?.owns === true;
}

async function record(run: Run, m: Migration): Promise<void> {
  await run('INSERT INTO schema_migrations (version, name, compatible_down_to) VALUES ($1, $2, $3)', [m.version, m.name, compatibleDownToOf(m)]);
}

function checkMigration(m: Migration): void {
  if (m.extension !== undefined && !(m.concurrently && INDEX_NAME.test(m.extension))) {
    throw new Error(`migration ${m.version}: only a concurrently migration names an extension ([a-z_][a-z0-9_]*)`);
  }
  const named = (x: string | undefined) => x !== undefined && INDEX_NAME.test(x);
  if (m.concurrently && named(m.index) === named(m.dropIndex)) {
    throw new Error(`migration ${m.version}: a concurrently migration names the index it builds (index) or drops (dropIndex), one of them: [a-z_][a-z0-9_]*`);
  }
  if (!m.concurrently && (m.index !== undefined || m.dropIndex !== undefined)) {
    throw new Error(`migration ${m.version}: index and dropIndex are for concurrently migrations`);
  }
  if (m.compatibleDownTo !== undefined && !(Number.isSafeInteger(m.compatibleDownTo) && m.compatibleDownTo >= 1 && m.compatibleDownTo <= m.version)) {
    throw new Error(`migration ${m.version}: compatibleDownTo must be from 1 to ${m.version}`);
  }
}

/**
 * For a read-only store (the CLI's inspection commands) — SELECTs only: the schema must exist
 * and be one this binary may serve. A missing schema is UnsafeStore `noSchema` (so `list`
 * against a mistyped schema never creates one); one missing migrations is `schemaOlder`.
 */
export async function inspectSchema(conns: PgConnections, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  const s = await readSchemaStatus(conns, schema, migrations);
  if (s.state === 'noSchema') throw new PgBackendError('UnsafeStore', 'there is no session store in this PostgreSQL schema', { reason: 'noSchema' });
  if (s.state === 'newerIncompatible') throw schemaNewerError(s);
  if (s.state === 'missing') {
    throw new PgBackendError('UnsafeStore', `the store schema is at version ${s.version}, this binary needs ${knownVersion(migrations)}: run 'session-sidecar pg migrate' as the schema owner to upgrade it`, { reason: 'schemaOlder' });
  }
  return { applied: [], version: s.version };
}

/**
 * What `serve` does at start. A schema this binary may serve as it is (current, or newer by
 * compatible migrations only) is found with SELECTs alone and nothing else is run: a DML-only
 * role serves it. Otherwise the missing migrations are applied here (a convenience for
 * development: an owner role starting the first sidecar); when the role may not, the error
 * names the privilege and says to run `pg migrate` as the owner.
 */
export async function prepareSchema(conns: PgConnections, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  const s = await readSchemaStatus(conns, schema, migrations).catch((e: unknown) => { throw ownerHint(e, schema, undefined); });
  if (s.state === 'current' || s.state === 'newerCompatible') return { applied: [], version: s.version };
  if (s.state === 'newerIncompatible') throw schemaNewerError(s);
  try {
    return await migrate(conns, schema, migrations);
  } catch (e) {
    throw ownerHint(e, schema, s);
  }
}

function ownerHint(e: unknown, schema: string, s: SchemaStatus | undefined): unknown {
  if (!(e instanceof PgBackendError) || e.details.reason !== 'privilege') return e;
  const lacks = privilegeText(e.details);
  const what = s === undefined ? `cannot read the schema's migration record`
    : s.state === 'noSchema' ? 'cannot create the store schema' : `cannot apply the missing schema migrations (${s.missing.join(', ')})`;
  return new PgBackendError('UnsafeStore',
    `this database role ${what}: it lacks ${lacks}; run 'session-sidecar pg migrate --store URL --pg-schema ${schema}' as the schema owner (serving then needs only the DML GRANTs of protocol/STORAGE.md)`,
    { ...e.details });
}
