/**
 * The serving lock of a PostgreSQL store: the file store's kernel store lock, as a PostgreSQL
 * advisory lock keyed by the schema. Every sidecar that may write (serve, and the CLI commands
 * that change a store) holds it SHARED on its LISTEN connection for as long as that connection
 * lives (changes.ts); `session-sidecar rekey` takes it EXCLUSIVE on a connection of its own and
 * holds it to the end (rekey.ts). So a rekey never runs beside a writer — whether or not that
 * writer holds any session's lease — and a writer cannot start while a rekey runs. A crashed
 * process's lock goes with its connection (the server drops session-level advisory locks of a
 * connection that ended).
 */
import type { Client } from 'pg';
import { PgBackendError } from './errors.js';

/** First key of the advisory lock: "sssv" (the migrators' is "ssmg") — the second is hashtext(schema). */
const SERVE_CLASS = 0x73737376;

/** Takes the shared serving lock on `client`; KeyMismatch (rekeyInProgress) while a rekey holds it. */
export async function holdServing(client: Client, schema: string): Promise<void> {
  const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock_shared($1, hashtext($2)) AS ok', [SERVE_CLASS, schema]);
  if (r.rows[0]?.ok !== true) {
    throw new PgBackendError('KeyMismatch', 'a rekey of this store is running: wait for it to finish, then start again', { reason: 'rekeyInProgress' });
  }
}

/** Takes the serving lock exclusively on `client`, or SessionLocked (storeServed) while any writer (or another rekey) holds it. */
export async function excludeServers(client: Client, schema: string): Promise<void> {
  const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [SERVE_CLASS, schema]);
  if (r.rows[0]?.ok !== true) {
    throw new PgBackendError('SessionLocked', 'a sidecar is serving this store (or another rekey is running): stop it first; nothing was changed', { reason: 'storeServed' });
  }
}
