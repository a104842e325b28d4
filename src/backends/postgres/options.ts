/**
 * What a PostgreSQL backend is opened with (backend.ts `openPostgresBackend`): the store, who we
 * are in lease rows, the connection limits and timeouts, and the key of an encrypted store.
 */
import type { StoreKey } from '../../durable/storeKey.js';
import type { PgBackendError } from './errors.js';
import type { Migration } from './schema.js';
import type { LeaseHolder } from './types.js';

/** `--pg-pool-max` unless given: pooled connections per sidecar (the LISTEN connection is one more). */
export const DEFAULT_POOL_MAX = 4;

export interface PostgresBackendOptions {
  url: string;
  /** `--pg-schema` (default session_sidecar). */
  schema?: string;
  /** Who we are in lease rows (defaults: os.hostname(), process.pid, a random id). */
  holder?: Partial<LeaseHolder>;
  /** `--lease-stale-ms`: a lease whose heartbeat is older may be taken over (default 15000). */
  leaseStaleMs?: number;
  /** Heartbeat period (default leaseStaleMs / 3). */
  heartbeatMs?: number;
  /** `--pg-pool-max`: pooled connections (default DEFAULT_POOL_MAX); the LISTEN connection is one more. */
  poolMax?: number;
  connectTimeoutMs?: number;
  /**
   * `--pg-pooler transaction`: `url` is a transaction-pooling proxy (PgBouncer pool_mode =
   * transaction): no startup settings, SET LOCAL in every transaction (pool.ts). `listenUrl`
   * (`--pg-listen-url`, default `url`) must then reach the server directly: LISTEN and the lease
   * liveness identity need a connection of their own.
   */
  pooler?: 'transaction';
  listenUrl?: string;
  /** Lock waits longer than this fail (default 10 s; a lease acquisition then says SessionLocked). */
  lockTimeoutMs?: number;
  /** application_name of every connection (default session-sidecar): shows in pg_stat_activity. */
  applicationName?: string;
  /**
   * Inspection only (the CLI): no migration (a missing or outdated schema is UnsafeStore,
   * reasons noSchema / schemaOlder / schemaNewer), every connection read-only at the server
   * (default_transaction_read_only), no lease ever acquired.
   */
  readOnly?: boolean;
  /**
   * The migrations this binary knows (default MIGRATIONS): tests stand in an older or a newer
   * binary with their own list. A current schema is checked with SELECTs only (migrations.ts
   * prepareSchema); missing migrations are applied, when this role may.
   */
  migrations?: readonly Migration[];
  /** Blob GC's grace period (blobGc.ts; default BLOB_GRACE_MS, 1 h): tests shorten it. */
  blobGraceMs?: number;
  /** Background failures (idle connection lost, heartbeat failed): mapped, text-free. */
  onError?: (err: PgBackendError) => void;
  /** A held lease was found taken over (by the heartbeat). */
  onLeaseLost?: (sessionId: string) => void;
  /**
   * Encryption at rest (`--encryption-key-env`/`--encryption-key-file`): every text of session
   * data and every blob is sealed with it (sealedValues.ts); the store's marker must agree
   * (encryptionRow.ts: KeyMismatch otherwise).
   */
  encryptionKey?: StoreKey;
}
