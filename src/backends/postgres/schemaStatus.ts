/**
 * What a binary can do with a store schema, found with SELECTs only (no DDL, no lock): what
 * `serve` checks before anything else, so a DML-only role serves a current schema, and what
 * `pg migrate --status` prints.
 *
 * Compatibility rule (expand/contract, see schema.ts): a binary that knows versions ≤ N serves
 * a schema at version M > N when every recorded migration N+1..M says (in
 * `schema_migrations.compatible_down_to`) that binaries down to N may serve after it. A row
 * without the column or with NULL there (written before the column existed) is not compatible:
 * the safe default.
 */
import { PgBackendError } from './errors.js';
import type { PgConnections } from './pool.js';
import { MIGRATIONS, type Migration } from './schema.js';

export type SchemaState =
  /** Every migration this binary knows is recorded, nothing newer. */
  | 'current'
  /** Newer migrations are recorded and all of them let this binary serve. */
  | 'newerCompatible'
  /** A newer migration is recorded that this binary may not serve after (schemaNewer). */
  | 'newerIncompatible'
  /** Migrations this binary knows are not recorded (apply them: pg migrate). */
  | 'missing'
  /** No schema_migrations table: no store here yet. */
  | 'noSchema';

export interface SchemaStatus {
  state: SchemaState;
  /** Highest recorded version (0: none). */
  version: number;
  /** Highest version this binary knows. */
  known: number;
  /** Versions this binary knows that are not recorded, ascending. */
  missing: number[];
  /** Recorded versions newer than `known`, with what they allow (null: not compatible). */
  newer: Array<{ version: number; name: string; compatibleDownTo: number | null }>;
}

export function knownVersion(migrations: readonly Migration[]): number {
  return Math.max(0, ...migrations.map((m) => m.version));
}

/** The state of a schema given its recorded rows (pure: the rule above). */
export function evaluate(rows: ReadonlyArray<{ version: number; name: string; compatible_down_to?: number | null }>, migrations: readonly Migration[]): SchemaStatus {
  const known = knownVersion(migrations);
  const have = new Set(rows.map((r) => r.version));
  const version = Math.max(0, ...have);
  const missing = migrations.map((m) => m.version).filter((v) => !have.has(v)).sort((a, b) => a - b);
  const newer = rows.filter((r) => r.version > known).sort((a, b) => a.version - b.version)
    .map((r) => ({ version: r.version, name: r.name, compatibleDownTo: typeof r.compatible_down_to === 'number' ? r.compatible_down_to : null }));
  let state: SchemaState;
  if (newer.some((n) => n.compatibleDownTo === null || n.compatibleDownTo > known)) state = 'newerIncompatible';
  else if (missing.length > 0) state = 'missing';
  else state = newer.length > 0 ? 'newerCompatible' : 'current';
  return { state, version, known, missing, newer };
}

/**
 * Reads the schema's recorded migrations: two SELECTs, nothing else. `SELECT *` so that a table
 * created before `compatible_down_to` existed reads as well (the column is then undefined).
 */
export async function readSchemaStatus(conns: PgConnections, schema: string, migrations: readonly Migration[] = MIGRATIONS): Promise<SchemaStatus> {
  // The name is validated (checkSchemaName) and quoted; it is a value here, never SQL.
  const exists = await conns.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`"${schema}".schema_migrations`]);
  if (!exists[0]?.t) return { state: 'noSchema', version: 0, known: knownVersion(migrations), missing: migrations.map((m) => m.version).sort((a, b) => a - b), newer: [] };
  const rows = await conns.query<{ version: number; name: string; compatible_down_to?: number | null }>(`SELECT * FROM "${schema}".schema_migrations ORDER BY version`);
  return evaluate(rows, migrations);
}

/** The existing refusal, naming both versions (UnsafeStore, reason schemaNewer). */
export function schemaNewerError(s: SchemaStatus): PgBackendError {
  const blocking = s.newer.find((n) => n.compatibleDownTo === null || n.compatibleDownTo > s.known);
  const why = blocking ? `; migration ${blocking.version} is not compatible with binaries that know only ${s.known}` : '';
  return new PgBackendError('UnsafeStore', `the store schema is at version ${s.version}, newer than this sidecar knows (${s.known})${why}: upgrade this sidecar`, {
    reason: 'schemaNewer', version: s.version, known: s.known,
  });
}

/** Whether this binary may serve the schema as it is (no migration needed). */
export function servable(s: SchemaStatus): boolean {
  return s.state === 'current' || s.state === 'newerCompatible';
}
