/**
 * Start-up migrations: every missing migration is applied in ONE transaction, under a
 * transaction-scoped advisory lock keyed by the schema, and recorded in `schema_migrations`.
 *
 * Concurrency: sidecars starting at once serialise on the advisory lock; each one, once it
 * holds the lock, reads the recorded versions and applies only what is missing — so the
 * first applies everything and the others find nothing to do. A crash mid-way rolls the whole
 * transaction back (DDL is transactional in PostgreSQL): a schema is at a recorded version or
 * untouched. A schema recorded at a version newer than this sidecar knows is refused
 * (UnsafeStore) rather than written with assumptions that may no longer hold.
 */
import { PgBackendError } from './errors.js';
import type { PgConnections } from './pool.js';
import { MIGRATIONS, type Migration } from './schema.js';

/** First key of the advisory lock: "ssmg" — the second is hashtext(schema). */
const LOCK_CLASS = 0x73736d67;

export interface MigrationResult {
  /** Versions this call applied (empty when the schema was current). */
  applied: number[];
  version: number;
}

export async function migrate(conns: PgConnections, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  return conns.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LOCK_CLASS, schema]);
    // The name is validated (checkSchemaName) and quoted; it cannot be a bind parameter.
    await tx.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await tx.query(`SET LOCAL search_path = "${schema}"`);
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const rows = await tx.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    const have = new Set(rows.map((r) => r.version));
    const known = Math.max(0, ...migrations.map((m) => m.version));
    const newest = Math.max(0, ...have);
    if (newest > known) {
      throw new PgBackendError('UnsafeStore', `the store schema is at version ${newest}, newer than this sidecar knows (${known})`, { reason: 'schemaNewer' });
    }
    const applied: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (have.has(m.version)) continue;
      await tx.query(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    return { applied, version: known };
  });
}

/**
 * For a read-only store (the CLI's inspection commands): the schema must exist and be at a
 * version this sidecar knows. Nothing is created or upgraded: a missing schema is UnsafeStore
 * with reason `noSchema` (so `list` against a mistyped schema never creates one).
 */
export async function inspectSchema(conns: PgConnections, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  const exists = await conns.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`"${schema}".schema_migrations`]);
  if (!exists[0]?.t) throw new PgBackendError('UnsafeStore', 'there is no session store in this PostgreSQL schema', { reason: 'noSchema' });
  const rows = await conns.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  const known = Math.max(0, ...migrations.map((m) => m.version));
  const newest = Math.max(0, ...rows.map((r) => r.version));
  if (newest > known) {
    throw new PgBackendError('UnsafeStore', `the store schema is at version ${newest}, newer than this sidecar knows (${known})`, { reason: 'schemaNewer' });
  }
  if (newest < known) throw new PgBackendError('UnsafeStore', `the store schema is at version ${newest}: start a sidecar (serve) once to upgrade it`, { reason: 'schemaOlder' });
  return { applied: [], version: newest };
}
