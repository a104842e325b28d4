import path from 'node:path';
import { DEFAULT_PG_SCHEMA, openPostgresBackend, type PostgresBackend } from '../backends/postgres/backend.js';
import { PgBackendError } from '../backends/postgres/errors.js';
import { isPostgresUrl, parsePostgresUrl, PgUrlError } from '../backends/postgres/url.js';
import { storeErrorOf } from '../backends/postgres/errors.js';
import { Sessions } from '../core/sessions/sessions.js';
import { scratchAt } from '../scratch/localScratch.js';
import type { SessionStore } from '../domain/types.js';
import type { StoreKey } from '../durable/storeKey.js';

/**
 * Which store a command works on: a directory (the file backend) or a PostgreSQL database and
 * schema. `display` is what may be printed: the directory, or the URL without its password
 * (the password is never printed, not even in an error).
 */
export type StoreTarget =
  | { kind: 'file'; root: string; display: string; /** Encryption at rest: the store's key (never printed). */ key?: StoreKey }
  | { kind: 'postgres'; url: string; schema: string; display: string; /** Encryption at rest: the store's key (never printed). */ key?: StoreKey };

export const PG_SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A store given as DIR or URL (with its --pg-schema); `usage` makes a command-line error. */
export function targetOf(store: string, schema: string | undefined, usage: (m: string) => Error): StoreTarget {
  if (!isPostgresUrl(store)) {
    if (schema !== undefined) throw usage('--pg-schema needs a PostgreSQL store (postgres://...)');
    const root = path.resolve(store);
    return { kind: 'file', root, display: root };
  }
  const chosen = schema ?? DEFAULT_PG_SCHEMA;
  if (!PG_SCHEMA_NAME.test(chosen)) throw usage('--pg-schema must match [a-z_][a-z0-9_]{0,62}');
  let display: string;
  try {
    display = parsePostgresUrl(store).display;
  } catch (e) {
    // PgUrlError messages never quote the URL (it may hold a password).
    throw usage(e instanceof PgUrlError ? e.message : 'the PostgreSQL store URL is malformed');
  }
  return { kind: 'postgres', url: store, schema: chosen, display: `${display} (schema ${chosen})` };
}

/**
 * The PostgreSQL backend of an inspection command: read-only at the server (every connection
 * has default_transaction_read_only = on), no migration (a missing schema is an error, never
 * created), no lease. Errors come back as StoreErrors whose text is free of database content.
 */
export async function openReadOnlyBackend(t: Extract<StoreTarget, { kind: 'postgres' }>, noStore: (m: string) => Error): Promise<PostgresBackend> {
  try {
    return await openPostgresBackend({ url: t.url, schema: t.schema, readOnly: true, poolMax: 2, applicationName: 'session-sidecar-cli', ...(t.key ? { encryptionKey: t.key } : {}) });
  } catch (e) {
    if (e instanceof PgBackendError && e.details.reason === 'noSchema') {
      throw noStore(`no session store in schema ${t.schema} of ${t.display.replace(/ \(schema .*\)$/, '')} (nothing was created; 'session-sidecar pg migrate --store URL' creates it, as does a first 'serve' with an owner role)`);
    }
    throw storeErrorOf(e);
  }
}

/** A read-only PostgreSQL SessionStore over `openReadOnlyBackend` (no scratch directory is ever made). */
export async function openReadOnlyPgStore(t: Extract<StoreTarget, { kind: 'postgres' }>, noStore: (m: string) => Error, warn: (m: string) => void): Promise<SessionStore> {
  const backend = await openReadOnlyBackend(t, noStore);
  return new Sessions(backend, { scratch: scratchAt(path.join(process.cwd(), '.session-sidecar')), readOnly: true, warn });
}
