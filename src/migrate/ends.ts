/**
 * The two ends of a `migrate`: a file store or a PostgreSQL store, each through its backend's
 * own transfer primitives (src/backends/file/transfer, src/backends/postgres/transfer.ts). The source
 * end is read-only (the file store through a read-only FsLayer; PostgreSQL with
 * default_transaction_read_only and no migration); the destination writes every byte through
 * a secret gate holding the session's secrets.
 */
import { openPostgresBackend, type PostgresBackend } from '../backends/postgres/backend.js';
import type { SessionBundle, Snapshot } from '../core/port.js';
import type { FsLayer } from '../durable/fsLayer.js';
import { asStoreErrors, storeErrorOf } from '../backends/postgres/errors.js';
import { blobSize, putBlob, readBlob } from '../backends/file/blobs/blobFiles.js';
import { StoreError } from '../domain/errors.js';
import { FinalGate } from '../core/gate.js';
import { StoreLayout } from '../backends/file/layout.js';
import { gateFs } from '../domain/secrets/finalGate.js';
import type { SecretSet } from '../domain/secrets/knownSecrets.js';
import { DEFAULT_LEASE_STALE_MS } from '../backends/file/leases.js';
import { exportFileSession, fileLeaseHeld, fileSessionIds, placeOf } from '../backends/file/transfer/exportFile.js';
import { importFileSession, settleImport } from '../backends/file/transfer/importFile.js';
import type { StoreKey } from '../durable/storeKey.js';
import { attachKey } from '../backends/file/journal/cipher.js';
import { openStoreRoot } from '../backends/file/storeRoot.js';
import { type ByteFinder, checkBytes } from '../domain/secrets/finalGate.js';
import { SecretSet as Secrets } from '../domain/secrets/knownSecrets.js';

export interface TransferEnd {
  readonly display: string;
  ids(): Promise<string[]>;
  exists(id: string): Promise<boolean>;
  /** Who holds the session's writer lease now (a live writer), or undefined. */
  leaseHolder(id: string): Promise<string | undefined>;
  export(id: string): Promise<SessionBundle>;
  /** All or nothing; Conflict (reason exists) when the session is there already. */
  import(b: SessionBundle, snapshot: Snapshot, toolSeq: number, secrets: SecretSet): Promise<void>;
  /** The session is there already (a rerun): removes what a crash after its import's commit point left (a directory store's staging). */
  settle?(id: string): Promise<void>;
  /** The blob's bytes, verified against its digest; undefined when absent. */
  blob(sha256: string): Promise<Buffer | undefined>;
  hasBlob(sha256: string): Promise<boolean>;
  putBlob(bytes: Buffer, secrets: SecretSet): Promise<void>;
  close(): Promise<void>;
}

/**
 * A directory store's end. `key`: its encryption key (sealed journals and files are opened on
 * export and sealed on import: the bundle is plaintext between the ends). Its marker must agree
 * (openStoreRoot: KeyMismatch otherwise), the destination's checked before anything is written.
 */
export function fileEnd(root: string, base: FsLayer, key?: StoreKey, readOnly = false): TransferEnd {
  const layout = new StoreLayout(root);
  const ownKey = keySecrets(key);
  // The plaintext about to be sealed passes the session's secrets and the key itself (cipher.ts sealGated).
  const keyed = (layer: FsLayer, secrets?: ByteFinder): FsLayer => {
    if (key) attachKey(layer, { key, gate: (plain) => { if (secrets) checkBytes(secrets, plain); checkBytes(ownKey, plain); } });
    return layer;
  };
  // A layer of its own: the key is attached to this end's layer only.
  const fsl = keyed(Object.create(base) as FsLayer);
  openStoreRoot(fsl, layout, key, readOnly);
  return {
    display: root,
    ids: async () => fileSessionIds(fsl, layout),
    exists: async (id) => placeOf(fsl, layout, id) !== undefined,
    leaseHolder: async (id) => {
      const h = fileLeaseHeld(fsl, layout, id, DEFAULT_LEASE_STALE_MS);
      return h ? `pid ${h.pid} on ${h.host}` : undefined;
    },
    export: async (id) => exportFileSession(fsl, layout, id),
    import: async (b, _snapshot, _toolSeq, secrets) => importFileSession(keyed(gateFs(fsl, secrets), secrets), layout, b),
    settle: async (id) => settleImport(fsl, layout, id),
    blob: async (sha) => (blobSize(fsl, layout, `sha256:${sha}`) === undefined ? undefined : readBlob(fsl, layout, `sha256:${sha}`).bytes),
    hasBlob: async (sha) => blobSize(fsl, layout, `sha256:${sha}`) !== undefined,
    putBlob: async (bytes, secrets) => {
      layout.init(fsl);
      await putBlob(keyed(gateFs(fsl, secrets), secrets), layout, bytes);
    },
    close: async () => {},
  };
}

/** A PostgreSQL call with its errors as the store's. */
const pg = asStoreErrors;

/**
 * A PostgreSQL end. `readOnly` (the source): no migration (a missing schema is an error) and
 * every connection read-only at the server. The destination's schema is created or upgraded as
 * by `serve`.
 */
export async function pgEnd(url: string, schema: string, display: string, readOnly: boolean, key?: StoreKey): Promise<TransferEnd> {
  const db: PostgresBackend = await pg(() => openPostgresBackend({
    url, schema, readOnly, poolMax: 4, applicationName: 'session-sidecar-migrate', ...(key ? { encryptionKey: key } : {}),
  }));
  // Sealing gates plaintext against the key itself too (the bundle was gated by the caller).
  if (key) db.secondNet((text) => keySecrets(key).findInBytes(Buffer.from(text, 'utf8')));
  const exists = async (id: string) => {
    try {
      await db.load(id);
      return true;
    } catch (err) {
      if ((storeErrorOf(err) as StoreError).kind === 'SessionNotFound') return false;
      throw storeErrorOf(err);
    }
  };
  return {
    display,
    ids: () => pg(() => db.transfer.ids()),
    exists,
    leaseHolder: async (id) => {
      const h = await pg(() => db.transfer.leaseHeld(id));
      return h ? `pid ${h.pid} on ${h.host} (sidecar ${h.sidecarId})` : undefined;
    },
    export: (id) => pg(() => db.transfer.export(id)),
    import: async (b, snapshot, toolSeq, secrets) => {
      // The final gate before any byte leaves for the database, as for appends.
      const texts = [b.header.text, ...b.generations.flatMap((g) => g.records.map((r) => r.text)), ...b.state.map((s) => s.text)];
      for (const t of texts) {
        const rule = secrets.findInBytes(Buffer.from(t, 'utf8'));
        if (rule) throw new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, { rule });
      }
      await pg(() => db.transfer.import(b, snapshot, toolSeq));
    },
    blob: (sha) => pg(() => db.blobs.read(sha)),
    hasBlob: async (sha) => (await pg(() => db.blobs.size(sha))) !== undefined,
    putBlob: async (bytes, secrets) => {
      await db.blobs.put(new FinalGate(secrets).blob(bytes)); // the final gate before any byte leaves for the database
    },
    close: () => db.close(),
  };
}

/** The keys are secrets of this process: no plaintext holding one is ever sealed. */
function keySecrets(key: StoreKey | undefined): Secrets {
  const s = new Secrets();
  key?.registerWith(s);
  return s;
}

