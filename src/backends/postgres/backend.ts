/**
 * # The PostgreSQL backend (below the SessionBackend seam)
 *
 * `openPostgresBackend({ url, schema })` connects, applies migrations (migrations.ts), starts
 * the LISTEN/liveness connection (changes.ts) and the lease heartbeat, and returns a
 * `PostgresBackend`. It persists what the engine hands it and never interprets record text:
 * planning, secrets, turns, counters, cursors and compaction planning stay above the seam.
 *
 * ```ts
 * const b = await openPostgresBackend({ url: 'postgres://u:p@h/db', schema: 'session_sidecar', holder: { sidecarId } });
 * b.display                                          // URL without password: initialize's store.root
 * const fence = await b.leases.acquire(id)           // SessionLocked {holder} | takeover (+1 token)
 * await b.create(header, initialRecords, snapshot, fence?)          // all or nothing
 * const row = await b.load(id)                       // SessionRow: header text, generation, lastSeq, snapshot
 * await b.appendBatch(id, recs, { lastSeq, generation }, fence, snapshotAfter) // COMMIT, then resolve
 * await b.confirmBatch(id, generation, lastRec)      // after Unavailable{outcome:'unknown'}
 * await b.readRange(id, { generation?, afterSeq, limit, kinds?, maxBytes? })   // crc-verified
 * await b.rotate(id, { throughSeq, checkpoint, expect, fence })                 // one transaction
 * await b.history(id); await b.list({ after?, limit, trashed? }); await b.listByUpdate({ before?, limit, includeTrashed }); await b.remove(id, 'trash'|'restore'|'purge'|'purgeTrashed', fence)
 * const stop = b.changes(id, poke)                   // LISTEN/NOTIFY hint; re-read by seq
 * await b.blobs.put(bytes) / size(sha) / read(sha, range?)
 * await b.state.set(fence, key, text) / get(id, key) / keys(id) / delete(fence, key)
 * await b.reserveToolSeq(fence, floor)
 * await b.leases.release(fence); await b.close()
 * ```
 *
 * Errors: every failure is a `PgBackendError` (errors.ts) whose kind is a protocol error kind
 * or the new `Unavailable`; database text never appears in it.
 * Durability: a write resolves only after its transaction's COMMIT returned with
 * synchronous_commit = on, i.e. after the WAL holding it was flushed on the server.
 * `pg` is loaded lazily by pool.ts: importing this module does not load the driver.
 *
 * ## Plugging it under the engine (for the integrator)
 * - Port types are in types.ts (SealedRecord, SealedHeader, Fence, Snapshot, SessionRow):
 *   move them to src/backend/port.ts. Snapshot members are opaque engine texts.
 * - `open(id, mode)` of the seam = `load(id)` (header text + snapshot at lastSeq; trashed
 *   sessions come back with trashed: true) + `readRange` for anything after it; write mode
 *   first takes `leases.acquire(id)`. There is no torn tail to repair on this backend.
 * - Map `PgBackendError` to `StoreError` (same kind names) and add `Unavailable` to
 *   StoreErrorKind and protocol/errors.ts (a new code), with data {reason, retryable,
 *   retryAfterMs, outcome}. On Unavailable with outcome 'unknown' the engine must not
 *   reuse those seqs until `confirmBatch` answers (or fail-stop the session as for Uncertain).
 * - Group commit exists here per session; the engine's own commit queue may keep one call in
 *   flight per session, or pipeline: calls commit in call order.
 * - `list` pages by session id (keyset); wrap `nextAfter` in the engine's cursor codec.
 * - Blobs are never deleted (no refcount yet); purge leaves them. Scratch stays local.
 * - The connection sets options in the startup packet (`-c synchronous_commit=on ...`):
 *   transaction-pooling proxies that reject startup options need session pooling.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { AppendQueue, confirmBatch, type AppendExpect } from './append.js';
import { ChangeListener, channelOf } from './changes.js';
import { PgBackendError } from './errors.js';
import { Leases } from './leases.js';
import { inspectSchema, migrate, type MigrationResult } from './migrations.js';
import { checkSchemaName, PgConnections } from './pool.js';
import { blobSize, deleteState, getState, putBlob, readBlob, reserveToolSeq, setState, stateKeys } from './runtime.js';
import {
  createSession, history, listByUpdate, listSessions, loadSession, readRange, removeSession, rotate, type ReadRangeOptions, type ReadRangeResult,
} from './sessions.js';
import type { ArchivedGeneration, Fence, LeaseHolder, SealedHeader, SealedRecord, SessionRow, Snapshot } from './types.js';
import { parsePostgresUrl } from './url.js';
import { exportSession, importSession, leaseHeld, sessionIds } from './transfer.js';
import type { SessionBundle } from '../../backend/port.js';
import { verifyStore, type VerifyOptions, type VerifyReport } from './verify.js';
import { DEFAULT_PG_SCHEMA } from './url.js';

export { DEFAULT_PG_SCHEMA };

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
  poolMax?: number;
  connectTimeoutMs?: number;
  /** application_name of every connection (default session-sidecar): shows in pg_stat_activity. */
  applicationName?: string;
  /**
   * Inspection only (the CLI): no migration (a missing or outdated schema is UnsafeStore,
   * reasons noSchema / schemaOlder / schemaNewer), every connection read-only at the server
   * (default_transaction_read_only), no lease ever acquired.
   */
  readOnly?: boolean;
  /** Background failures (idle connection lost, heartbeat failed): mapped, text-free. */
  onError?: (err: PgBackendError) => void;
  /** A held lease was found taken over (by the heartbeat). */
  onLeaseLost?: (sessionId: string) => void;
}

export class PostgresBackend {
  readonly kind = 'postgres' as const;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly appends: AppendQueue;

  private constructor(
    readonly display: string,
    readonly schema: string,
    readonly migration: MigrationResult,
    private readonly conns: PgConnections,
    private readonly listener: ChangeListener,
    readonly leases: Leases,
    private readonly channel: string,
  ) {
    this.appends = new AppendQueue(conns, channel);
  }

  /** Every statement's parameters pass `net` before they are sent (PgConnections.guardParams). */
  guardParams(net: (text: string) => string | undefined): void {
    this.conns.guardParams(net);
  }

  static async open(o: PostgresBackendOptions): Promise<PostgresBackend> {
    const target = parsePostgresUrl(o.url);
    const schema = checkSchemaName(o.schema ?? DEFAULT_PG_SCHEMA);
    const onError = o.onError ?? (() => undefined);
    const conns = await PgConnections.open({ target, schema, max: o.poolMax ?? 8, connectTimeoutMs: o.connectTimeoutMs ?? 5000, onError,
      ...(o.readOnly ? { readOnly: true } : {}),
      ...(o.applicationName !== undefined ? { applicationName: o.applicationName } : {}) });
    try {
      const migration = o.readOnly ? await inspectSchema(conns, schema) : await migrate(conns, schema);
      const channel = channelOf(schema);
      const staleMs = o.leaseStaleMs ?? 15_000;
      const holder: LeaseHolder = { host: o.holder?.host ?? os.hostname(), pid: o.holder?.pid ?? process.pid, sidecarId: o.holder?.sidecarId ?? randomUUID() };
      let leases: Leases | undefined;
      const listener = new ChangeListener(conns, channel, async () => {
        // A new liveness connection: re-assert held leases under it before anyone sees them as orphaned.
        await leases?.heartbeat().catch(onError);
      }, onError);
      leases = new Leases(conns, holder, () => listener.current(), staleMs, o.onLeaseLost, o.readOnly === true);
      await listener.start();
      const b = new PostgresBackend(target.display, schema, migration, conns, listener, leases, channel);
      b.heartbeatTimer = setInterval(() => void leases!.heartbeat().catch(onError), o.heartbeatMs ?? Math.max(100, Math.floor(staleMs / 3)));
      b.heartbeatTimer.unref();
      return b;
    } catch (err) {
      await conns.close();
      throw err;
    }
  }

  create(header: SealedHeader, initial: SealedRecord[], after: Snapshot, fence?: Fence): Promise<void> {
    return createSession(this.conns, this.channel, header, initial, after, fence);
  }

  load(sessionId: string): Promise<SessionRow> {
    return loadSession(this.conns, sessionId);
  }

  appendBatch(sessionId: string, recs: SealedRecord[], expect: AppendExpect, fence: Fence, after: Snapshot): Promise<void> {
    return this.appends.append(sessionId, recs, expect, fence, after);
  }

  confirmBatch(sessionId: string, generation: number, last: SealedRecord): Promise<'committed' | 'absent'> {
    return confirmBatch(this.conns, sessionId, generation, last);
  }

  readRange(sessionId: string, o: ReadRangeOptions): Promise<ReadRangeResult> {
    return readRange(this.conns, sessionId, o);
  }

  rotate(sessionId: string, p: { throughSeq: number; checkpoint: SealedRecord; expect: AppendExpect; fence: Fence }): Promise<{ generation: number; archived: ArchivedGeneration }> {
    return rotate(this.conns, this.channel, sessionId, p);
  }

  history(sessionId: string): Promise<ArchivedGeneration[]> {
    return history(this.conns, sessionId);
  }

  list(o: { after?: string; limit: number; trashed?: boolean }): Promise<{ sessions: SessionRow[]; nextAfter: string | null }> {
    return listSessions(this.conns, o);
  }

  listByUpdate(o: { before?: { updatedAt: string; sessionId: string }; limit: number; includeTrashed: boolean }): Promise<SessionRow[]> {
    return listByUpdate(this.conns, o);
  }

  async remove(sessionId: string, op: 'trash' | 'restore' | 'purge' | 'purgeTrashed', fence: Fence): Promise<void> {
    await removeSession(this.conns, this.channel, sessionId, op, fence);
    if (op === 'purge' || op === 'purgeTrashed') this.leases.forget(sessionId);
  }

  changes(sessionId: string, poke: () => void): () => void {
    return this.listener.subscribe(sessionId, poke);
  }

  readonly blobs = {
    put: (bytes: Buffer) => putBlob(this.conns, bytes),
    size: (sha256: string) => blobSize(this.conns, sha256),
    read: (sha256: string, range?: { offset: number; length: number }) => readBlob(this.conns, sha256, range),
  };

  readonly state = {
    set: (fence: Fence, key: string, text: string) => setState(this.conns, fence, key, text),
    get: (sessionId: string, key: string) => getState(this.conns, sessionId, key),
    keys: (sessionId: string) => stateKeys(this.conns, sessionId),
    delete: (fence: Fence, key: string) => deleteState(this.conns, fence, key),
  };

  reserveToolSeq(fence: Fence, floor: number): Promise<number> {
    return reserveToolSeq(this.conns, fence, floor);
  }

  /** Whole sessions, for `migrate` (transfer.ts): export, import in one transaction, ids, live lease. */
  readonly transfer = {
    ids: () => sessionIds(this.conns),
    export: (sessionId: string) => exportSession(this.conns, sessionId),
    import: (bundle: SessionBundle, snapshot: Snapshot, toolSeq: number) => importSession(this.conns, this.channel, bundle, snapshot, toolSeq),
    leaseHeld: (sessionId: string) => leaseHeld(this.conns, sessionId, this.leases.staleMs),
  };

  /** Read-only check of the whole store (the CLI's `verify`): see verify.ts. */
  verify(o: VerifyOptions = {}): Promise<VerifyReport> {
    return verifyStore(this.conns, { staleMs: this.leases.staleMs, ...o });
  }

  /** Group-commit transactions so far, and LISTEN connections made (tests, stats). */
  stats(): { appendTransactions: number; listenConnects: number } {
    return { appendTransactions: this.appends.transactions, listenConnects: this.listener.connects };
  }

  /** Resolves once the LISTEN connection is up again after a loss (tests). */
  listenerSettled(): Promise<void> {
    return this.listener.settled();
  }

  /** Stops the heartbeat and closes every connection; held leases become takeable at once. */
  async close(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    await this.listener.stop();
    await this.conns.close();
  }
}

export function openPostgresBackend(o: PostgresBackendOptions): Promise<PostgresBackend> {
  return PostgresBackend.open(o);
}
