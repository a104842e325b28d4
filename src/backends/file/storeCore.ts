import path from 'node:path';
import { UnsafeFileError } from '../../durable/errors.js';
import { type FsLayer, nodeFs } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import { checkSessionId } from '../../domain/ids.js';
import type { CompactionStep } from './journal/compact.js';
import { removeStaleTemps } from './history.js';
import { catchUp, type JournalHandle, openJournal } from './journal/open.js';
import { type AppendRequest, JournalWriter } from './journal/writer.js';
import { StoreLayout } from './layout.js';
import { DEFAULT_LEASE_STALE_MS, preloadLeases, SessionLease } from './leases.js';
import { ListCache } from './listCache.js';
import { readIndexEntry } from './sessionIndex.js';
import { OpenSession } from './openSession.js';
import { gateFs } from '../../domain/secrets/finalGate.js';
import { SecretSet, type Vocabulary } from '../../domain/secrets/knownSecrets.js';
import { resolveSecrets } from '../../domain/secrets/sessionSecrets.js';
import type { OpenedSession, OpenMode, SecretsInput, SecretsStatus } from '../../domain/types.js';
import { oneAtATime } from '../../engine/oneAtATime.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { checkBytes } from '../../domain/secrets/finalGate.js';
import { attachKey, storeKeyOf } from './journal/cipher.js';
import { checkMarker } from './encryptionMarker.js';
import { openStoreRoot } from './storeRoot.js';
import { KernelLock, kernelLocksAvailable } from './kernelLock.js';
import { ensurePrivateDir } from '../../durable/durableFile.js';
import { keyMismatch } from './journal/cipher.js';


export interface FileStoreOptions {
  /** The file-system seam; tests inject failures through it. */
  fs?: FsLayer;
  clock?: () => number;
  /** Largest serialized record (default 32 MiB). */
  maxRecordBytes?: number;
  /** Where warnings go (stderr in the server). Never given record content. */
  warn?: (message: string) => void;
  /** Words every record contains (the protocol's vocabulary): no secret may occur in them. */
  vocabulary?: Vocabulary;
  /** Where env var names given as secrets are resolved (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** How old an unrefreshed writer lease must be before another process takes it over (default 10 s, at least 5 s). */
  leaseStaleMs?: number;
  /**
   * Cross-process writer leases (default true). Turn them off only where this store instance
   * is provably the only writer of its root (unit tests that simulate restarts in one process).
   */
  leases?: boolean;
  /**
   * Inspection only (the command line's list, show, verify, ...): the store is never changed —
   * no folders created, no index entry refreshed, no write open, no lease taken.
   */
  readOnly?: boolean;
  /**
   * The secrets this instance gates against and adds its sessions' secrets to; given, it is
   * shared with another store instance of the same process (an ephemeral store beside the
   * durable one: a secret registered for either reaches neither's bytes).
   */
  secrets?: SecretSet;
  /**
   * Encryption at rest (STORAGE.md): every journal line, header, index entry, state value and
   * blob of the store is sealed with this key; absent, the store is plaintext. The store's
   * encryption.json must name it (checkMarker). The key is registered as a secret.
   */
  encryptionKey?: StoreKey;
  /**
   * Test seams: compactionStep, awaited after each step of a compaction (a test may throw
   * there, or wait); purgeChecked, inside trash empty's purge after its check, with the
   * session's lock held (a test may stall there, purge.ts).
   */
  hooks?: { compactionStep?: (step: CompactionStep) => void | Promise<void>; purgeChecked?: (sessionId: string) => void | Promise<void> };
}


/**
 * The sessions open in one store instance and how they are opened, leased, fenced, read and
 * closed: what every operation of FileSessionStore stands on.
 */
export abstract class StoreCore {
  readonly root: string;
  readonly backend = 'file' as const;
  protected readonly fsl: FsLayer;
  protected readonly layout: StoreLayout;
  protected readonly clock: () => number;
  protected readonly maxRecordBytes: number;
  protected readonly warn: (message: string) => void;
  protected readonly vocabulary: Vocabulary;
  protected readonly env: NodeJS.ProcessEnv;
  protected readonly hooks: NonNullable<FileStoreOptions['hooks']>;
  protected readonly leaseStaleMs: number;
  protected readonly useLeases: boolean;
  protected readonly readOnly: boolean;
  /** Every secret registered in this instance, kept to scrub error and log text. */
  protected readonly allSecrets: SecretSet;
  protected readonly sessions = new Map<string, OpenSession>();
  protected readonly opening = new Map<string, Promise<unknown>>();
  protected readonly watchers = new Map<string, Set<{ poke(): void }>>();
  /** Sessions whose writer stopped after an unknown outcome: read-only for the life of this instance. */
  protected readonly failStopped = new Set<string>();
  /** session/list's summary table (listCache.ts): loaded at the first list, saved at closeAll. */
  protected readonly listCache: ListCache;
  /** Requests read and not yet answered by the server (SessionStore.setRequestsWaiting); unknown: many. */
  private requestsWaiting: () => number = () => Infinity;

  setRequestsWaiting(probe: () => number): void {
    this.requestsWaiting = probe;
  }

  constructor(root: string, opts: FileStoreOptions = {}) {
    this.root = path.resolve(root);
    this.allSecrets = opts.secrets ?? new SecretSet();
    // Every write of this store passes the final secret gate (secrets/finalGate.ts).
    this.fsl = gateFs(opts.fs ?? nodeFs, this.allSecrets);
    this.layout = new StoreLayout(this.root);
    if ((opts.leases ?? true) && !opts.readOnly && !kernelLocksAvailable()) {
      (opts.warn ?? (() => {}))('no kernel locks here (neither util-linux flock nor perl on PATH, or SESSION_SIDECAR_KERNEL_LOCKS=off): writer leases are fenced by their stale time alone (STORAGE.md, Fencing)');
    }
    this.listCache = new ListCache(this.fsl, this.layout);
    this.clock = opts.clock ?? Date.now;
    this.maxRecordBytes = opts.maxRecordBytes ?? 32 << 20;
    this.warn = opts.warn ?? (() => {});
    this.vocabulary = opts.vocabulary ?? [];
    this.env = opts.env ?? process.env;
    this.hooks = opts.hooks ?? {};
    this.leaseStaleMs = Math.max(5000, opts.leaseStaleMs ?? DEFAULT_LEASE_STALE_MS);
    this.useLeases = opts.leases ?? true;
    this.readOnly = opts.readOnly ?? false;
    const key = opts.encryptionKey;
    this.encryptionKey = key;
    if (key) {
      key.registerWith(this.allSecrets); // the key may never be stored, in any encoding
      attachKey(this.fsl, { key, gate: (plain) => checkBytes(this.allSecrets, plain) });
    }
    openStoreRoot(this.fsl, this.layout, key, this.readOnly);
  }

  /** Whether the store is encrypted at rest (initialize's capabilities.encryptionAtRest). */
  get encrypted(): boolean {
    return this.encryptionKeyId !== undefined;
  }

  protected get encryptionKeyId(): string | undefined {
    return storeKeyOf(this.fsl)?.key.id;
  }

  /** The store's kernel lock, shared, while this instance serves (lockForServing). */
  private serving: KernelLock | undefined;
  private readonly encryptionKey: StoreKey | undefined;

  /**
   * Marks a store as served by this process for as long as it lives: a shared kernel lock on
   * locks/.store.flock, which a rekey takes exclusively (rekey.ts). Taken before the store is
   * opened (its encryption marker read), so a rekey under way is told apart from an interrupted
   * one: KeyMismatch rekeyInProgress. While it is held, no rekey starts. Hand it to the instance
   * with `holdServingLock`.
   */
  static async lockForServing(root: string, fsl: FsLayer = nodeFs): Promise<KernelLock | undefined> {
    const layout = new StoreLayout(path.resolve(root));
    let lock: KernelLock | undefined;
    try {
      ensurePrivateDir(fsl, layout.root);
      ensurePrivateDir(fsl, layout.locksDir);
      lock = await KernelLock.tryAcquire(fsl, layout.storeLock, 'shared');
    } catch (err) {
      if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `store refused: ${err.path} ${err.reason}`, { reason: err.reason });
      throw err;
    }
    if (!lock) throw keyMismatch('the store is being rekeyed by another process: start the sidecar again when session-sidecar rekey has finished', 'rekeyInProgress');
    return lock;
  }

  /** This instance serves the store: it keeps the lock until closeAll. */
  holdServingLock(lock: KernelLock | undefined): void {
    this.serving = lock;
  }

  /**
   * Before every write open and create: the lease, and the store still under the key this
   * instance started with — a rekey that ran meanwhile (from a host our store lock does not
   * reach) is KeyMismatch here, before anything is written under the old key.
   */
  protected async acquireLease(id: string): Promise<SessionLease | undefined> {
    if (!this.useLeases) return undefined;
    checkMarker(this.fsl, this.layout, this.encryptionKey, true);
    return SessionLease.acquire(this.fsl, this.layout, id, this.leaseStaleMs);
  }

  protected refuseIfReadOnly(what: string): void {
    if (this.readOnly) throw new StoreError('ReadOnly', `cannot ${what}: the store is open for inspection only`, { reason: 'readOnlyStore' });
  }

  protected mustExist(id: string): void {
    if (this.fsl.lstatSync(this.layout.journal(id)) === undefined) {
      throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
    }
  }

  /** Commits in this process reach their watchers at once (others, by polling). */
  protected pokeWatchers(sessionId: string): void {
    for (const w of this.watchers.get(sessionId) ?? []) w.poke();
  }

  /**
   * The session open in this instance, with a read-only one brought up to date: caught up with
   * records another writer appended, or reopened when a compaction replaced its journal.
   */
  protected async freshReader(sessionId: string): Promise<OpenSession | undefined> {
    const open = this.sessions.get(sessionId);
    if (!open || open.writer) return open;
    if (this.fsl.lstatSync(this.layout.journal(sessionId))?.ino === open.handle.ino) {
      catchUp(this.fsl, open.handle);
      return open;
    }
    this.sessions.delete(sessionId);
    await open.close();
    await this.openNow(sessionId, 'read', {});
    return this.sessions.get(sessionId);
  }

  /** Opens of one session run one at a time (an upgrade closes and reopens the journal). */
  async open(sessionId: string, mode: OpenMode, secretsInput: SecretsInput = {}): Promise<OpenedSession> {
    checkSessionId(sessionId);
    return oneAtATime(this.opening, sessionId, () => this.openNow(sessionId, mode, secretsInput));
  }

  protected async openNow(sessionId: string, mode: OpenMode, secretsInput: SecretsInput): Promise<OpenedSession> {
    if (mode === 'write') this.refuseIfReadOnly('open a session for writing');
    if (mode === 'write' && this.failStopped.has(sessionId)) throw failStopError(sessionId);
    const existing = await this.freshReader(sessionId);
    if (existing && (existing.mode === 'write' || mode === 'read')) {
      existing.addSecrets(resolveSecrets({ input: secretsInput }, this.env, this.vocabulary, existing.secrets).status);
      this.allSecrets.addAll(existing.secrets);
      return existing.describe();
    }
    const prior = existing?.secrets;
    if (existing) await this.close(sessionId); // upgrade read -> write: reopen writable
    if (mode === 'write') this.mustExist(sessionId);
    // The lease comes first: recovery (which may cut a torn tail) runs only under it.
    const lease = mode === 'write' ? await this.acquireLease(sessionId) : undefined;
    let handle: JournalHandle;
    let resolved;
    try {
      if (mode === 'write') removeStaleTemps(this.fsl, this.layout, sessionId);
      handle = openJournal(this.fsl, this.layout, sessionId, { writable: mode === 'write', hint: this.readIndexHint(sessionId) });
      try {
        resolved = resolveSecrets({ apiKeyEnv: handle.header.llm?.apiKeyEnv, headerEnv: handle.header.secretEnv, input: secretsInput },
          this.env, this.vocabulary, prior);
      } catch (err) {
        this.fsl.closeSync(handle.fd);
        throw err;
      }
    } catch (err) {
      await lease?.release();
      throw err;
    }
    const session = this.adopt(handle, mode, resolved.set, resolved.status, lease);
    if (mode === 'write') session.scheduleIndexWrite();
    const opened = session.describe();
    handle.recovered = undefined; // reported by the open that repaired it, not by later ones
    return opened;
  }

  /**
   * A read-only handle. An index entry found stale is left as it is: a reader cannot know whether
   * the bytes past it were synced (a writer killed before its fdatasync leaves whole batches in
   * the page cache), and the index may vouch only for durable bytes. The next writer rewrites it.
   */
  protected openForReading(sessionId: string, generation?: number): JournalHandle {
    if (generation !== undefined) {
      const current = this.openForReading(sessionId);
      this.fsl.closeSync(current.fd);
      if (generation === current.generation) return this.openForReading(sessionId);
      if (generation > current.generation) {
        throw new StoreError('InvalidArgument', `generation ${generation} does not exist (the current one is ${current.generation})`, { path: 'generation' });
      }
      return openJournal(this.fsl, this.layout, sessionId, { writable: false, file: this.layout.archive(sessionId, generation) });
    }
    return openJournal(this.fsl, this.layout, sessionId, { writable: false, hint: this.readIndexHint(sessionId) });
  }

  protected readIndexHint(id: string) {
    return readIndexEntry(this.fsl, this.layout, id);
  }

  protected adopt(handle: JournalHandle, mode: OpenMode, secrets: SecretSet, status: SecretsStatus, lease?: SessionLease): OpenSession {
    this.allSecrets.addAll(secrets);
    const id = handle.header.sessionId;
    const gate = (bytes: Buffer) => this.allSecrets.findInBytes(bytes);
    const journal = this.layout.journal(id);
    const fence = () => lease?.check(id) ?? (this.fsl.lstatSync(journal)?.ino === handle.ino ? undefined : new StoreError('Conflict',
      'the journal was replaced by another program; nothing was written and the session is read-only in this process', { reason: 'journalChanged' }));
    const writer = mode === 'write' ? new JournalWriter(this.fsl, handle, handle.position, this.clock, gate, fence, () => this.requestsWaiting() > 1) : undefined;
    // A fail-stopped session writes nothing more here: read-only in this process for good, and
    // its lease given back at once (its kernel lock released; the next holder takes it over).
    writer?.onStopped(() => {
      this.failStopped.add(id);
      lease?.markLost();
    });
    const session = new OpenSession(this.fsl, this.layout, handle, mode, writer, this.warn, secrets, status, lease, (e) => this.listCache.noteEntry(e, this.fsl.lstatSync(journal)));
    this.sessions.set(handle.header.sessionId, session);
    return session;
  }

  /** Commits a request, or one prepared when its turn in the queue comes (JournalWriter.appendPrepared). */
  protected async commit(session: OpenSession, request: AppendRequest | (() => AppendRequest | Promise<AppendRequest>)) {
    const writer = session.writer as JournalWriter;
    const committed = await (typeof request === 'function' ? writer.appendPrepared(request) : writer.append(request)).catch((err: unknown) => {
      if (writer.stoppedReason) this.failStopped.add(session.id);
      throw err;
    });
    this.pokeWatchers(session.id);
    return committed;
  }

  protected writable(sessionId: string): OpenSession {
    checkSessionId(sessionId);
    const session = this.sessions.get(sessionId);
    if (session?.writer) return session;
    if (!session && this.fsl.lstatSync(this.layout.journal(sessionId)) === undefined) {
      throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
    }
    throw new StoreError('ReadOnly', `session ${sessionId} is not open for writing; call session/open with mode "write" first`, {
      sessionId, reason: session ? 'openedReadOnly' : 'notOpen',
    });
  }

  /**
   * Runs `use` on the session's committed view: its open handle (after the appends sent before
   * this call committed, or caught up with another writer's), or a transient read-only one.
   */
  protected async withReadHandle<T>(sessionId: string, generation: number | undefined, use: (handle: JournalHandle) => T): Promise<T> {
    checkSessionId(sessionId);
    let open = await this.freshReader(sessionId);
    await open?.writer?.barrier();
    if (generation !== undefined && generation !== (open?.handle ?? undefined)?.generation) {
      open = undefined; // an archived generation: its own read-only handle
    }
    const handle = open?.handle ?? this.openForReading(sessionId, generation);
    try {
      return use(handle);
    } finally {
      if (!open) this.fsl.closeSync(handle.fd);
    }
  }

  async close(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    const session = this.sessions.get(sessionId);
    if (!session) {
      if (this.fsl.lstatSync(this.layout.journal(sessionId)) === undefined) {
        throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
      }
      return;
    }
    // A fail-stopped session stays: its committed position is this process's only true view
    // (the journal may hold bytes of the failed sync that must not be read as committed).
    if (this.failStopped.has(sessionId)) return;
    this.sessions.delete(sessionId);
    await session.close();
  }

  /**
   * Test seam: forget every open session as a killed process would — no flush, no index
   * write, no clean release — so a new store instance in the same process can take over.
   */
  abandon(): void {
    for (const s of this.sessions.values()) s.abandon();
    this.sessions.clear();
  }

  warmUp(): void {
    if (this.useLeases) preloadLeases();
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.close()));
    if (!this.readOnly) await this.listCache.save();
    this.serving?.release();
    this.serving = undefined;
  }
}

function failStopError(sessionId: string): StoreError {
  return new StoreError('ReadOnly', `session ${sessionId} is read-only in this process after a failed write; open it in a new process`, {
    sessionId, reason: 'failStop',
  });
}
