/**
 * The store-level encryption marker of a PostgreSQL store: the one row of `store_encryption`
 * (migration 8), the file store's encryption.json in the schema (STORAGE.md, "PostgreSQL:
 * encryption at rest"). No row: a plaintext store. A row with `key_id`: encrypted under that key
 * (its id, storeKey.ts: a slow KDF of the key; never the key). A row with `rekeying` true: a
 * rekey from `rekey_from` to `rekey_to` (NULL: plaintext) was started and has not finished;
 * every open is refused (rekeyUnfinished) until the same rekey is run again.
 *
 * The refusals use the file store's words and reasons (KeyMismatch: keyRequired, wrongKey,
 * notEncrypted, rekeyUnfinished), at open, before anything is read or written.
 */
import type { StoreKey } from '../../durable/storeKey.js';
import { keyMismatch } from './sealing.js';
import type { Tx } from './pool.js';
import { PgBackendError } from './errors.js';

export interface EncryptionRow {
  keyId: string | null;
  rekeying: boolean;
  from: string | null;
  to: string | null;
}

interface DbRow { key_id: string | null; rekeying: boolean; rekey_from: string | null; rekey_to: string | null }

/** Whether the schema has the marker table (a schema a binary before migration 8 serves has not). */
export async function hasMarkerTable(tx: Tx, schema: string): Promise<boolean> {
  const rows = await tx.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`"${schema}".store_encryption`]);
  return Boolean(rows[0]?.t);
}

export async function readEncryptionRow(tx: Tx): Promise<EncryptionRow | undefined> {
  const rows = await tx.query<DbRow>('SELECT key_id, rekeying, rekey_from, rekey_to FROM store_encryption');
  const r = rows[0];
  return r ? { keyId: r.key_id, rekeying: r.rekeying, from: r.rekey_from, to: r.rekey_to } : undefined;
}

/** Whether the store holds any session data (a key is then accepted only with a marker). */
async function holdsData(tx: Tx): Promise<boolean> {
  const rows = await tx.query<{ n: boolean }>('SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM blobs) AS n');
  return rows[0]?.n === true;
}

export const KEY_REQUIRED = 'the store is encrypted: give its key (--encryption-key-env NAME or --encryption-key-file PATH)';
export const REKEY_UNFINISHED = 'a rekey of this store was interrupted: run the same session-sidecar rekey command again to finish it';

/**
 * Checks the key a store is opened with against its marker (as the file store's checkMarker):
 * with a key, the marker must name it; a store without a marker is accepted only when it holds
 * no session and no blob, and then (unless `readOnly`) the marker is written first — in one
 * statement that writes it only while the store is still empty — so the store is encrypted
 * from its first value. Without a key, no marker may exist.
 */
export async function checkEncryption(tx: Tx, schema: string, key: StoreKey | undefined, readOnly: boolean): Promise<void> {
  if (!(await hasMarkerTable(tx, schema))) {
    if (!key) return;
    throw new PgBackendError('UnsafeStore', 'encryption at rest needs store schema version 8: run \'session-sidecar pg migrate\' as the schema owner', { reason: 'schemaOlder' });
  }
  let row = await readEncryptionRow(tx);
  if (!row && key && !readOnly) {
    await tx.query(
      `INSERT INTO store_encryption (key_id) SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM sessions) AND NOT EXISTS (SELECT 1 FROM blobs)
       ON CONFLICT DO NOTHING`, [key.id]);
    row = await readEncryptionRow(tx);
  }
  if (row?.rekeying) throw keyMismatch(REKEY_UNFINISHED, 'rekeyUnfinished');
  if (!key) {
    if (row) throw keyMismatch(KEY_REQUIRED, 'keyRequired');
    return;
  }
  if (row) {
    if (!key.names(row.keyId)) throw keyMismatch('the encryption key given is not the store\'s key', 'wrongKey');
    return;
  }
  if (await holdsData(tx)) {
    throw keyMismatch('the store is not encrypted but an encryption key was given: encrypt it first with session-sidecar rekey --store URL --to-env NAME', 'notEncrypted');
  }
}

/**
 * Before every write open (a lease acquisition), as the file store re-reads encryption.json:
 * the marker must still say what it said at open. A rekey since (or the first keyed open of a
 * store this instance found empty and plaintext) is KeyMismatch before anything is written.
 * One SELECT; `hasTable` is what open found (a schema without migration 8 has no marker).
 */
export async function recheckEncryption(tx: Tx, key: StoreKey | undefined, hasTable: boolean): Promise<void> {
  if (!hasTable) return;
  const row = await readEncryptionRow(tx);
  if (row?.rekeying) throw keyMismatch(REKEY_UNFINISHED, 'rekeyUnfinished');
  if (!key) {
    if (row) throw keyMismatch(KEY_REQUIRED, 'keyRequired');
    return;
  }
  if (!row) throw keyMismatch('the store is not encrypted (any more) but an encryption key was given', 'notEncrypted');
  if (!key.names(row.keyId)) throw keyMismatch('the encryption key given is not the store\'s key', 'wrongKey');
}
