/**
 * # The PostgreSQL backend: `class PostgresBackend implements Backend` (src/core/port.ts)
 *
 * `openPostgresBackend({ url, schema })` connects, checks the schema with SELECTs only and
 * applies missing migrations only when there are some (migrations.ts prepareSchema), starts
 * the LISTEN/liveness connection (changes.ts) and the lease heartbeat, and returns a
 * `PostgresBackend`. It persists what the core hands it (gated values only) and never
 * interprets record text: planning, secrets, turns, counters, cursors and compaction planning
 * are the core's (src/core/sessions), over the port.
 *
 * ```ts
 * const b = await openPostgresBackend({ url: 'postgres://u:p@h/db', schema: 'session_sidecar', holder: { sidecarId } });
 * b.display                                          // URL without password: initialize's store.root
 * const fence = await b.leases.acquire(id)           // SessionLocked {holder} | takeover (+1 token)
 * await b.create(header, initialRecords, snapshot, fence)        // all or nothing
 * const row = await b.load(id)                       // SessionRow: header text, generation, lastSeq, snapshot
 * await b.persist(fence, recs, snapshotAfter, { lastSeq, generation })   // one transaction: COMMIT, then resolve
 * await b.confirmBatch(id, generation, lastRec)      // after Unavailable{outcome:'unknown'}
 * await b.readRange(id, { generation?, afterSeq, limit, kinds?, maxBytes? })   // crc-verified
 * await b.rotate(fence, { throughSeq, checkpoint, expect })                    // one transaction
 * await b.history(id); await b.listByUpdate({ before?, limit, includeTrashed, narrow? }); await b.listTrash()
 * await b.searchCandidates({ needle, after?, sessionIds?, limit, maxBytes? })   // search.ts: pg_trgm index
 * await b.trash(fence); await b.restore(fence); await b.purge(fence); await b.purgeTrashed(fence)
 * const stop = b.changes(id, poke)                   // LISTEN/NOTIFY hint; re-read by seq
 * await b.blobs.put(bytes) / size(sha) / read(sha, range?) / touch(shas)   // a purge's blob GC: blobGc.ts
 * await b.state.set(fence, { key, text }) / get(id, key) / keys(id) / delete(fence, key)
 * await b.reserveToolSeq(fence, floor)
 * await b.leases.release(fence); await b.close()
 * ```
 *
 * Errors: every port method rejects with a StoreError of the protocol's kinds (storeErrorOf:
 * Unavailable for a database that cannot be reached, with its outcome); database text never
 * appears in it. What is beside the port (open, confirmBatch, list, transfer, verify) and
 * background failures (heartbeat, idle connections, given to `onError`) are PgBackendErrors
 * (errors.ts), mapped by their callers with storeErrorOf.
 * Durability: a write resolves only after its transaction's COMMIT returned with
 * synchronous_commit = on, i.e. after the WAL holding it was flushed on the server.
 * `pg` is loaded lazily by pool.ts: importing this module does not load the driver.
 *
 * Notes:
 * - There is no torn tail to repair on this backend: `load(id, { writer })` is `load(id)`.
 * - Group commit within a session is the core's (its commit queue sends one batch per session
 *   at a time); across sessions it is groupCommit.ts's: batches waiting for a connection share
 *   one statement and one COMMIT.
 * - A purge deletes the blobs nothing else references (blobGc.ts, in the purge's transaction;
 *   a blob put or touched within the grace period is spared) — not on an encrypted store, whose
 *   references are sealed: its blobs are never deleted. Scratch stays local.
 * - Encryption at rest (`encryptionKey`): the store's marker is checked at open
 *   (encryptionRow.ts); every value is sealed here, at the port, after the second net over
 *   its plaintext, and opened on the way back (sealedValues.ts, sealedRuntime.ts); the SQL
 *   below sees ciphertext only, and its checksums cover it.
 * - The connection sets options in the startup packet (`-c synchronous_commit=on ...`):
 *   transaction-pooling proxies that reject startup options need session pooling.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Backend, CandidatePage, CandidateQuery, Gated, ListNarrowing, Leases as PortLeases, TrashedSession, UpdateCursor } from '../../core/port.js';
import { StoreError } from '../../domain/errors.js';
import { checkMember, confirmBatch } from './append.js';
import { GroupCommit } from './groupCommit.js';
import { ChangeListener, channelOf } from './changes.js';
import { CommitNotifier } from './notify.js';
import { asStoreErrors, type PgBackendError } from './errors.js';
import { Leases } from './leases.js';
import { inspectSchema, prepareSchema, type MigrationResult } from './migrations.js';
import { checkSchemaName, PgConnections } from './pool.js';
import { reserveToolSeq } from './runtime.js';
import { createSession, history, listByUpdate, listSessions, listTrashed, loadSession, readRange, removeSession, rotate } from './sessions.js';
import type {
  ArchivedGeneration, Fence, LeaseHolder, Position, ReadRangeOptions, ReadRangeResult, SealedHeader, SealedRecord, SessionBundle, SessionRow, Snapshot,
} from './types.js';
import { parsePostgresUrl } from './url.js';
import { exportSession, importSession, leaseHeld, sessionIds } from './transfer.js';
import { isUtf8, searchCandidates } from './search.js';
import { BLOB_GRACE_MS } from './blobGc.js';
import { verifyStore, type VerifyOptions, type VerifyReport } from './verify.js';
import { DEFAULT_PG_SCHEMA } from './url.js';
import { noPathsHere } from '../shared.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { checkEncryption, hasMarkerTable, recheckEncryption } from './encryptionRow.js';
import { KeyCodec, PLAINTEXT, type PgCodec, type PlainNet } from './sealing.js';
import { openBundle, openHeaderText, openRecord, openRow, sealBundle, sealHeader, sealRecord, sealSnapshot } from './sealedValues.js';
import { blobPort, statePort, verifyOpen } from './sealedRuntime.js';
import { DEFAULT_POOL_MAX, type PostgresBackendOptions } from './options.js';

export { DEFAULT_PG_SCHEMA };

export { DEFAULT_POOL_MAX, type PostgresBackendOptions } from './options.js';

export class PostgresBackend implements Backend {
  readonly kind = 'postgres' as const;
  /** Blob GC's grace period (blobGc.ts). */
  private blobGraceMs = BLOB_GRACE_MS;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeatRun: Promise<void> | undefined;
  private closed = false;
  /** Hints after COMMIT (notify.ts). */
  private readonly notifier: CommitNotifier;
  /** Batches persisted so far, one per session per commit of the core's group commit (its tests read it). */
  private appendTransactions = 0;
  /** Append statements: batches of several sessions waiting together share one (groupCommit.ts). */
  private readonly groupCommit: GroupCommit;
  /** The lease protocol as the port speaks it (the lease table itself: `leaseTable`). */
  readonly leases: PortLeases;
  /** The second net over plaintext, applied right before a value is sealed (secondNet). */
  private plainNet: PlainNet | undefined;
  /** Sealing of every stored value (sealing.ts): PLAINTEXT without a key. */
  readonly codec: PgCodec;

  private constructor(
    readonly display: string,
    readonly schema: string,
    readonly migration: MigrationResult,
    private readonly conns: PgConnections,
    private readonly listener: ChangeListener,
    private readonly leaseTable: Leases,
    channel: string,
    onError: (err: PgBackendError) => void,
    key: StoreKey | undefined,
    markerTable: boolean,
  ) {
    this.codec = key ? new KeyCodec(key, () => this.plainNet) : PLAINTEXT;
    this.blobs = blobPort(conns, this.codec);
    this.state = statePort(conns, this.codec);
    this.notifier = new CommitNotifier(conns, channel, (id) => listener.pokeLocal(id), onError);
    // One pooled connection stays free of appends: reads, the heartbeat, lease changes.
    this.groupCommit = new GroupCommit(conns, { maxInFlight: Math.max(1, conns.max - 1) });
    listener.origin = this.notifier.origin;
    this.leases = {
      acquire: (sessionId) => asStoreErrors(async () => {
        // The store still under this instance's key (or still plaintext): a rekey meanwhile is KeyMismatch before anything is written.
        await recheckEncryption(conns, key, markerTable);
        return leaseTable.acquire(sessionId);
      }),
      // Every write checks its fence in the database (fence.ts): nothing to check before.
      check: () => undefined,
      release: (fence) => asStoreErrors(() => leaseTable.release(fence)),
    };
  }

  /** Every statement's parameters pass `find` before they are sent (PgConnections.guardParams): the second net under the core's gate. */
  secondNet(find: (text: string) => string | undefined): void {
    this.conns.guardParams(find);
    this.plainNet = find;
  }

  /** Whether the bytes are encrypted at rest (a key is in use): SQL over texts (search indexes) cannot be used. */
  get encrypted(): boolean {
    return this.codec.key !== undefined;
  }

  static async open(o: PostgresBackendOptions): Promise<PostgresBackend> {
    const target = parsePostgresUrl(o.url);
    const schema = checkSchemaName(o.schema ?? DEFAULT_PG_SCHEMA);
    const onError = o.onError ?? (() => undefined);
    const staleMs = o.leaseStaleMs ?? 15_000;
    const conns = await PgConnections.open({ target, schema, max: o.poolMax ?? DEFAULT_POOL_MAX, connectTimeoutMs: o.connectTimeoutMs ?? 5000, onError,
      // A holder frozen inside a transaction (its process stopped) holds the session row's lock:
      // the server ends that transaction after half the stale time, well before a newcomer's
      // lock wait (lock_timeout, 10 s) gives up, so a takeover waits at most about that long.
      idleInTransactionMs: Math.min(30_000, Math.max(1000, Math.floor(staleMs / 2))),
      ...(o.lockTimeoutMs !== undefined ? { lockTimeoutMs: o.lockTimeoutMs } : {}),
      ...(o.pooler ? { pooler: o.pooler } : {}),
      ...(o.listenUrl !== undefined ? { listenTarget: parsePostgresUrl(o.listenUrl) } : {}),
      ...(o.readOnly ? { readOnly: true } : {}),
      ...(o.applicationName !== undefined ? { applicationName: o.applicationName } : {}) });
    try {
      const migration = o.readOnly ? await inspectSchema(conns, schema, o.migrations) : await prepareSchema(conns, schema, o.migrations);
      await conns.transaction((tx) => checkEncryption(tx, schema, o.encryptionKey, o.readOnly === true), 'read committed', o.readOnly ? 'read' : 'write');
      const markerTable = await hasMarkerTable(conns, schema);
      const channel = channelOf(schema);
      const holder: LeaseHolder = { host: o.holder?.host ?? os.hostname(), pid: o.holder?.pid ?? process.pid, sidecarId: o.holder?.sidecarId ?? randomUUID() };
      let leases: Leases | undefined;
      const listener = new ChangeListener(conns, channel, async () => {
        // A new liveness connection: re-assert held leases under it before anyone sees them as orphaned.
        await leases?.heartbeat().catch(onError);
      }, onError, undefined, o.readOnly ? undefined : schema);
      leases = new Leases(conns, holder, () => listener.current(), staleMs, o.onLeaseLost, o.readOnly === true);
      await listener.start();
      const b = new PostgresBackend(target.display, schema, migration, conns, listener, leases, channel, onError, o.encryptionKey, markerTable);
      b.blobGraceMs = o.blobGraceMs ?? BLOB_GRACE_MS;
      b.scheduleHeartbeat(o.heartbeatMs ?? Math.max(100, Math.floor(staleMs / 3)), onError);
      return b;
    } catch (err) {
      await conns.close();
      throw err;
    }
  }

  /**
   * The heartbeat: the next run is scheduled only once the last one has ended, so runs never
   * overlap (a slow database makes them rarer, never piles them up).
   */
  private scheduleHeartbeat(everyMs: number, onError: (err: PgBackendError) => void): void {
    if (this.closed) return;
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatRun = this.leaseTable.heartbeat().catch(onError).finally(() => {
        this.heartbeatRun = undefined;
        this.scheduleHeartbeat(everyMs, onError);
      });
    }, everyMs);
    this.heartbeatTimer.unref();
  }

  /** A write that commits a change of `sessionId`, its hint sent after COMMIT (notify.ts). */
  private async notifying<T>(sessionId: string, write: () => Promise<T>): Promise<T> {
    const out = await asStoreErrors(write);
    this.notifier.committed(sessionId);
    return out;
  }

  /** `fence` may be left out only by tools that make sessions outside any writer (tests). */
  create(header: Gated<SealedHeader>, initial: ReadonlyArray<Gated<SealedRecord>>, after: Gated<Snapshot>, fence?: Fence): Promise<void> {
    const c = this.codec;
    const id = header.sessionId;
    return this.notifying(id, () => createSession(this.conns, sealHeader(c, header), initial.map((r) => sealRecord(c, id, r)), sealSnapshot(c, id, after), fence));
  }

  load(sessionId: string): Promise<SessionRow> {
    return asStoreErrors(async () => openRow(this.codec, await loadSession(this.conns, sessionId)));
  }

  async persist(fence: Fence, recs: ReadonlyArray<Gated<SealedRecord>>, after: Gated<Snapshot>, at: Position): Promise<void> {
    const c = this.codec;
    const id = fence.sessionId;
    const member = { fence, records: recs.map((r) => sealRecord(c, id, r)), after: sealSnapshot(c, id, after), at: { lastSeq: at.lastSeq, generation: at.generation } };
    await this.notifying(id, () => {
      checkMember(member);
      return this.groupCommit.append(member);
    });
    this.appendTransactions++;
  }

  /** After an Unavailable with outcome `unknown`: did the batch ending with `last` commit? */
  confirmBatch(sessionId: string, generation: number, last: SealedRecord): Promise<'committed' | 'absent'> {
    return confirmBatch(this.conns, sessionId, generation, last, this.encrypted ? (stored) => openRecord(this.codec, sessionId, generation, stored).text : undefined);
  }

  readRange(sessionId: string, o: ReadRangeOptions): Promise<ReadRangeResult> {
    return asStoreErrors(async () => {
      const r = await readRange(this.conns, sessionId, o);
      return this.encrypted ? { ...r, records: r.records.map((rec) => openRecord(this.codec, sessionId, r.generation, rec)) } : r;
    });
  }

  rotate(fence: Fence, p: { throughSeq: number; checkpoint: Gated<SealedRecord>; expect: Position }): Promise<{ generation: number; archived: ArchivedGeneration }> {
    return this.notifying(fence.sessionId, () => rotate(this.conns, fence.sessionId, { ...p, checkpoint: sealRecord(this.codec, fence.sessionId, p.checkpoint), fence }));
  }

  history(sessionId: string): Promise<ArchivedGeneration[]> {
    return asStoreErrors(() => history(this.conns, sessionId));
  }

  /** Keyset page by session id (ids are ULIDs: creation order); `after` is the last id seen. */
  async list(o: { after?: string; limit: number; trashed?: boolean }): Promise<{ sessions: SessionRow[]; nextAfter: string | null }> {
    const page = await listSessions(this.conns, o);
    return { ...page, sessions: page.sessions.map((row) => openRow(this.codec, row)) };
  }

  async listByUpdate(o: { before?: UpdateCursor; limit: number; includeTrashed: boolean; narrow?: ListNarrowing }): Promise<SessionRow[]> {
    // Sealed texts (encryption at rest) cannot be matched in SQL, nor texts in another encoding
    // than UTF8 (a filter's characters may have no equivalent there): the core's filter alone then.
    const { narrow, ...rest } = o;
    const narrowed = narrow && this.encrypted !== true && await this.isUtf8();
    return asStoreErrors(async () => (await listByUpdate(this.conns, narrowed ? { ...rest, narrow } : rest)).map((row) => openRow(this.codec, row)));
  }

  /** Trashed rows, in one statement (sessions.ts listTrashed); deletedAt is the row's updated_at, which the trash move sets. */
  listTrash(): Promise<TrashedSession[]> {
    return asStoreErrors(async () => (await listTrashed(this.conns)).map((t) => ({ ...t, headerText: openHeaderText(this.codec, t.sessionId, t.headerText) })));
  }

  /** Whether the database is UTF8 (search.ts), asked at the first search. */
  private utf8: Promise<boolean> | undefined;

  private isUtf8(): Promise<boolean> {
    this.utf8 ??= asStoreErrors(() => isUtf8(this.conns)).catch((e: unknown) => {
      this.utf8 = undefined; // asked again next time
      throw e;
    });
    return this.utf8;
  }

  /** session/search in SQL (search.ts); undefined when this database cannot match as the core does. */
  async searchCandidates(q: CandidateQuery): Promise<CandidatePage | undefined> {
    if (this.encrypted === true) return undefined; // sealed text cannot be matched in SQL
    if (!await this.isUtf8()) return undefined;
    return asStoreErrors(() => searchCandidates(this.conns, q));
  }

  trash(fence: Fence): Promise<void> {
    return this.notifying(fence.sessionId, () => removeSession(this.conns, fence.sessionId, 'trash', fence));
  }

  restore(fence: Fence): Promise<void> {
    return this.notifying(fence.sessionId, () => removeSession(this.conns, fence.sessionId, 'restore', fence));
  }

  async purge(fence: Fence): Promise<void> {
    await this.notifying(fence.sessionId, () => removeSession(this.conns, fence.sessionId, 'purge', fence, this.blobGc()));
    this.leaseTable.forget(fence.sessionId);
  }

  /** Blob GC's grace period, or null (no GC) when the store's texts are sealed: references to blobs cannot be read in SQL. */
  private blobGc(): number | null {
    return this.encrypted === true ? null : this.blobGraceMs;
  }

  /** trash empty's purge: the row is deleted only while it is in the trash (one statement; sessions.ts). */
  async purgeTrashed(fence: Fence): Promise<void> {
    await this.notifying(fence.sessionId, () => removeSession(this.conns, fence.sessionId, 'purgeTrashed', fence, this.blobGc()));
    this.leaseTable.forget(fence.sessionId);
  }

  changes(sessionId: string, poke: () => void): () => void {
    return this.listener.subscribe(sessionId, poke);
  }

  sessionIdOfPath(): string {
    throw noPathsHere('this store is a PostgreSQL database: sessions are opened by id, not by path');
  }

  readonly blobs: ReturnType<typeof blobPort>;
  readonly state: ReturnType<typeof statePort>;

  reserveToolSeq(fence: Fence, floor: number): Promise<number> {
    return asStoreErrors(() => reserveToolSeq(this.conns, fence, floor));
  }

  /**
   * Whole sessions, for `migrate` (transfer.ts): export, import in one transaction, ids, live
   * lease. Bundles are plaintext (opened after export, sealed before import on an encrypted store).
   */
  readonly transfer = {
    ids: () => sessionIds(this.conns),
    export: async (sessionId: string) => openBundle(this.codec, await exportSession(this.conns, sessionId)),
    import: async (bundle: SessionBundle, snapshot: Snapshot, toolSeq: number) => {
      const id = bundle.header.sessionId;
      await importSession(this.conns, sealBundle(this.codec, bundle), sealSnapshot(this.codec, id, snapshot), toolSeq);
      this.notifier.committed(bundle.header.sessionId);
    },
    leaseHeld: (sessionId: string) => leaseHeld(this.conns, sessionId, this.leaseTable.staleMs),
  };

  /** Read-only check of the whole store (the CLI's `verify`): see verify.ts. */
  verify(o: VerifyOptions = {}): Promise<VerifyReport> {
    const open = verifyOpen(this.codec);
    return verifyStore(this.conns, { staleMs: this.leaseTable.staleMs, ...(open ? { open } : {}), ...o });
  }

  /** Append transactions so far, and LISTEN connections made (tests, stats). */
  stats(): { appendTransactions: number; appendStatements: number; listenConnects: number } {
    return { appendTransactions: this.appendTransactions, appendStatements: this.groupCommit.statements, listenConnects: this.listener.connects };
  }

  /** Resolves once the LISTEN connection is up again after a loss (tests). */
  listenerSettled(): Promise<void> {
    return this.listener.settled();
  }

  /** Stops the heartbeat and closes every connection; held leases become takeable at once. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    await this.heartbeatRun;
    await this.notifier.close();
    await this.listener.stop();
    await this.conns.close();
  }
}

export function openPostgresBackend(o: PostgresBackendOptions): Promise<PostgresBackend> {
  return PostgresBackend.open(o);
}
