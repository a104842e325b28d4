/**
 * SessionStore over PostgreSQL: the engine (src/engine: prepare, plan, commit queue, list
 * order, watch loop, reductions) over the PostgreSQL backend (src/backends/postgres). Reads
 * and lineage are in reads.ts; runtime storage (scratch, state, blobs) in runtime.ts.
 *
 * What "acknowledged" means here: an append (or create, compact, state write) is answered
 * after its transaction's COMMIT returned with synchronous_commit = on. Tool scratch
 * directories stay on this machine's disk, under the workspace's .session-sidecar/scratch.
 */
import path from 'node:path';
import type { PostgresBackend } from '../backend.js';
import { EMPTY_SNAPSHOT } from '../sessions.js';
import type { SealedRecord } from '../../../backend/port.js';
import { appendResult, planBatch, prepareBatch, turnEventPlan, wroteNothing } from '../../../engine/appendPlan.js';
import { EMPTY_PREFIX, reducePrefix } from '../../../engine/reduce.js';
import { checkSealedHeader, guardHeader, scrubText } from '../../../engine/header.js';
import { type FsLayer, nodeFs } from '../../../durable/fsLayer.js';
import { ensurePrivateDir } from '../../../durable/durableFile.js';
import { baseState, type HeaderState, type SessionUpdate } from '../../../domain/sessionUpdate.js';
import { prepareUpdate, updatedHeader, updatePlan } from '../../../engine/sessionUpdate.js';
import { StoreError } from '../../../domain/errors.js';
import { checkSessionId, newSessionId } from '../../../domain/ids.js';
import type { ScratchDirs } from '../../../scratch/toolRuns.js';
import { gateFs } from '../../../domain/secrets/finalGate.js';
import { SecretSet, type Vocabulary } from '../../../domain/secrets/knownSecrets.js';
import { resolveSecrets } from '../../../domain/secrets/sessionSecrets.js';
import type { Redaction } from '../../../domain/secrets/redact.js';
import { newTurnId } from '../../../domain/turns/ids.js';
import type { TurnEvent } from '../../../domain/turns/turnState.js';
import type {
  AppendResult, CreatedSession, OpenedSession, OpenMode, RecordInput, SecretsInput, SecretsStatus, SessionHeader, SessionHeaderInput,
  TurnChange, TurnKind, UpdatedHeader,
} from '../../../domain/types.js';
import { pg } from './errors.js';
import { PgSession, snapshotOf, stateOfRow, summariesOf } from './session.js';
import { oneAtATime } from '../../../engine/oneAtATime.js';
import type { SessionRow } from '../../../backend/port.js';
import { PAGE_BYTES } from '../../../domain/limits.js';
import { NO_USAGE, reduceUsage } from '../../../domain/usage.js';

export interface PostgresStoreOptions {
  /** Where tool scratch directories go: <workspace>/.session-sidecar (scratch/ inside). */
  localRoot: string;
  clock?: () => number;
  maxRecordBytes?: number;
  warn?: (message: string) => void;
  vocabulary?: Vocabulary;
  env?: NodeJS.ProcessEnv;
  /**
   * Inspection only (the CLI): every write and every writable open is refused (ReadOnly,
   * reason readOnlyStore) before the backend is asked; the backend should be read-only too.
   */
  readOnly?: boolean;
  /** Shared with another store instance of this process (as FileStoreOptions.secrets). */
  secrets?: SecretSet;
}

/** A session open for writing in this instance (it holds the lease and a commit queue). */
export type WritableSession = PgSession & { queue: NonNullable<PgSession['queue']>; fence: NonNullable<PgSession['fence']> };

/** Sessions open in this instance, how they are opened, leased and written. */
export class PgStoreCore {
  readonly root: string;
  readonly backend = 'postgres' as const;
  protected readonly clock: () => number;
  protected readonly maxRecordBytes: number;
  protected readonly warn: (message: string) => void;
  protected readonly vocabulary: Vocabulary;
  protected readonly env: NodeJS.ProcessEnv;
  protected readonly allSecrets: SecretSet;
  protected readonly sessions = new Map<string, PgSession>();
  protected readonly opening = new Map<string, Promise<unknown>>();
  protected readonly failStopped = new Set<string>();
  protected readonly scratch: { fsl: FsLayer; layout: ScratchDirs; ensure(): void };
  protected readonly readOnly: boolean;

  constructor(readonly db: PostgresBackend, opts: PostgresStoreOptions) {
    this.root = db.display;
    this.allSecrets = opts.secrets ?? new SecretSet();
    this.readOnly = opts.readOnly ?? false;
    this.clock = opts.clock ?? Date.now;
    this.maxRecordBytes = opts.maxRecordBytes ?? 32 << 20;
    this.warn = opts.warn ?? (() => {});
    this.vocabulary = opts.vocabulary ?? [];
    this.env = opts.env ?? process.env;
    // The second net, in the one place statements are issued (the first: this.gate and the
    // summaries' gate, before anything is handed to the backend).
    db.guardParams((text) => (this.allSecrets.size === 0 ? undefined : this.allSecrets.findInText(text)));
    const fsl = gateFs(nodeFs, this.allSecrets);
    const localRoot = path.resolve(opts.localRoot);
    const scratchRoot = path.join(localRoot, 'scratch');
    this.scratch = {
      fsl,
      layout: { scratchDir: (id: string) => path.join(scratchRoot, id) },
      ensure: () => {
        ensurePrivateDir(fsl, localRoot);
        ensurePrivateDir(fsl, scratchRoot);
      },
    };
  }

  /** The final gate over the exact texts sent to the database, as the UTF-8 bytes the driver sends (as the file store's gate over line bytes). */
  protected readonly gate = (texts: string[]): string | undefined =>
    this.allSecrets.size === 0 ? undefined : this.allSecrets.findInBytes(Buffer.from(texts.join('\n'), 'utf8'));

  async create(input: SessionHeaderInput, secretsInput: SecretsInput = {}): Promise<CreatedSession> {
    if (input.parent) await this.loadLive(checkSessionId(input.parent.sessionId)); // a parent in the trash is not found, as on the file backend
    return this.createWith(input, secretsInput, []);
  }

  protected refuseIfReadOnly(what: string): void {
    if (this.readOnly) throw new StoreError('ReadOnly', `cannot ${what}: the store is open for inspection only`, { reason: 'readOnlyStore' });
  }

  /** A new session holding `initial` records (a fork's copies), opened for writing; all or nothing. */
  protected async createWith(input: SessionHeaderInput, secretsInput: SecretsInput, initial: SealedRecord[]): Promise<CreatedSession> {
    this.refuseIfReadOnly('create a session');
    const { set, status } = resolveSecrets({ apiKeyEnv: input.llm?.apiKeyEnv, input: secretsInput }, this.env, this.vocabulary);
    const now = this.clock();
    const sessionId = newSessionId(now);
    const createdAt = new Date(now).toISOString();
    this.allSecrets.addAll(set);
    const guarded = guardHeader(input, secretsInput, this.allSecrets);
    const header: SessionHeader = { sessionId, createdAt, ...guarded.value };
    const text = JSON.stringify(header);
    checkSealedHeader(Buffer.from(text, 'utf8'), this.allSecrets, this.maxRecordBytes);
    const rule = initial.length > 0 ? this.gate(initial.map((r) => r.text)) : undefined;
    if (rule) throw new StoreError('SecretRejected', `the records to fork hold a registered secret (rule: ${rule}); nothing was written`, { path: 'records', rule });
    const fence = await pg(() => this.db.leases.acquire(sessionId));
    const snapshot = initial.length > 0 ? this.initialSnapshot(initial, header) : EMPTY_SNAPSHOT;
    try {
      await pg(() => this.db.create({ sessionId, createdAt, text }, initial, snapshot, fence));
    } catch (err) {
      await this.db.leases.release(fence).catch(() => undefined);
      throw err;
    }
    const row = await pg(() => this.db.load(sessionId));
    this.adopt(header, row, 'write', fence, set, status);
    const redactions = guarded.redactions.map((r: Redaction) => ({ seq: 0, ...r }));
    return { sessionId, createdAt, secrets: status, ...(redactions.length > 0 ? { redactions } : {}) };
  }

  /** The turn, counters and summaries a fork's copied records leave. */
  private initialSnapshot(initial: SealedRecord[], header: SessionHeader) {
    let state = EMPTY_PREFIX;
    const base = baseState(header);
    for (const r of initial) state = reducePrefix(state, { ...(JSON.parse(r.text) as Record<string, unknown>), seq: r.seq, kind: r.kind }, base);
    const summaries = summariesOf(initial, this.gate);
    return snapshotOf(state, summaries[0], summaries[summaries.length - 1]);
  }

  protected adopt(header: SessionHeader, row: Awaited<ReturnType<PostgresBackend['load']>>, mode: OpenMode, fence: PgSession['fence'], secrets: SecretSet, status: SecretsStatus): PgSession {
    this.allSecrets.addAll(secrets);
    const s = new PgSession(this.db, header, row, mode, fence, secrets, status, this.gate, this.clock, this.scratch);
    this.sessions.set(header.sessionId, s);
    return s;
  }

  async open(sessionId: string, mode: OpenMode, secretsInput: SecretsInput = {}): Promise<OpenedSession> {
    checkSessionId(sessionId);
    return oneAtATime(this.opening, sessionId, () => this.openNow(sessionId, mode, secretsInput));
  }

  private async openNow(sessionId: string, mode: OpenMode, secretsInput: SecretsInput): Promise<OpenedSession> {
    if (mode === 'write') this.refuseIfReadOnly('open a session for writing');
    if (mode === 'write' && this.failStopped.has(sessionId)) {
      throw new StoreError('ReadOnly', `session ${sessionId} is read-only in this process after a failed write; open it in a new process`, { sessionId, reason: 'failStop' });
    }
    const existing = this.sessions.get(sessionId);
    if (existing && (existing.mode === 'write' || mode === 'read')) {
      existing.status = resolveSecrets({ input: secretsInput }, this.env, this.vocabulary, existing.secrets).status;
      this.allSecrets.addAll(existing.secrets);
      const v = await this.view(existing);
      return existing.describe(v.lastSeq, v.turn, v.header);
    }
    const prior = existing?.secrets;
    if (existing) await this.close(sessionId);
    let row = await this.loadLive(sessionId);
    const fence = mode === 'write' ? await pg(() => this.db.leases.acquire(sessionId)) : undefined;
    let session: PgSession;
    try {
      if (fence) row = await this.withUsage(await this.loadLive(sessionId)); // the committed state under the lease
      const header = JSON.parse(row.headerText) as SessionHeader;
      const resolved = resolveSecrets({ apiKeyEnv: header.llm?.apiKeyEnv, headerEnv: header.secretEnv, input: secretsInput }, this.env, this.vocabulary, prior);
      session = this.adopt(header, row, mode, fence, resolved.set, resolved.status);
    } catch (err) {
      if (fence) await this.db.leases.release(fence).catch(() => undefined);
      throw err;
    }
    return session.describe(row.lastSeq, stateOfRow(row).turn, stateOfRow(row).header);
  }

  /**
   * The row with its usage totals: a row written before they existed (usage NULL) gets them
   * reduced from its active records once (a checkpoint of that time carries none: they count
   * from it); the next commit stores them.
   */
  protected async withUsage(row: SessionRow): Promise<SessionRow> {
    if (row.snapshot.usage !== null) return row;
    let usage = NO_USAGE;
    let afterSeq = 0;
    for (;;) {
      const page = await pg(() => this.db.readRange(row.sessionId, { afterSeq, limit: 10_000, maxBytes: PAGE_BYTES, kinds: ['api', 'message', 'checkpoint'] }));
      for (const r of page.records) if (r.seq <= row.lastSeq) usage = reduceUsage(usage, JSON.parse(r.text) as Record<string, unknown>);
      if (page.scannedSeq >= row.lastSeq || page.scannedSeq === afterSeq) break;
      afterSeq = page.scannedSeq;
    }
    return { ...row, snapshot: { ...row.snapshot, usage: JSON.stringify(usage) } };
  }

  protected async loadLive(sessionId: string) {
    const row = await pg(() => this.db.load(sessionId));
    if (row.trashed) throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
    return row;
  }

  /** lastSeq and turn: the writer's committed view (after the requests sent before), or the database's. */
  protected async view(s: PgSession | undefined, sessionId?: string): Promise<{ lastSeq: number; turn: ReturnType<typeof stateOfRow>['turn']; header?: HeaderState }> {
    if (s?.queue) {
      await s.settled(); // every write called before this one has committed or failed
      return { lastSeq: s.queue.lastSeq, turn: s.queue.state.turn, header: s.queue.state.header };
    }
    const row = await this.loadLive(s?.id ?? (sessionId as string));
    const state = stateOfRow(row);
    return { lastSeq: row.lastSeq, turn: state.turn, header: state.header };
  }

  /** The session open for writing in this instance, or undefined (see notWritable). */
  protected writable(sessionId: string): WritableSession | undefined {
    checkSessionId(sessionId);
    const s = this.sessions.get(sessionId);
    return s?.queue && s.fence ? (s as WritableSession) : undefined;
  }

  /**
   * Why a write is refused when `writable` found no writer: SessionNotFound when there is no
   * live session with this id (as on the file backend), else ReadOnly notOpen/openedReadOnly.
   * Only reached on the refusal path, so a write that proceeds never waits here.
   */
  protected async notWritable(sessionId: string): Promise<never> {
    const s = this.sessions.get(sessionId);
    if (!s) await this.loadLive(sessionId);
    throw new StoreError('ReadOnly', `session ${sessionId} is not open for writing; call session/open with mode "write" first`, {
      sessionId, reason: s ? 'openedReadOnly' : 'notOpen',
    });
  }

  protected async commit<T>(s: WritableSession, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (s.queue.stoppedReason) this.failStopped.add(s.id);
      throw err;
    } finally {
      this.poked(s.id);
    }
  }

  /**
   * `commit(s, run)` after every write of this session called before it has reached the commit
   * queue (see PgSession.inOrder): writes that enqueue at once (turn events, state, scratch,
   * compaction) never overtake an append still preparing.
   */
  protected commitInOrder<T>(s: WritableSession, run: () => Promise<T>): Promise<T> {
    return s.inOrder(async () => {
      const committing = this.commit(s, run);
      committing.catch(() => undefined); // awaited by the caller; not an unhandled rejection meanwhile
      return { committing };
    }).then(({ committing }) => committing);
  }

  /** Watchers in this process learn of a commit at once (others through NOTIFY). */
  protected poked(_sessionId: string): void {}

  async append(sessionId: string, records: RecordInput[], opts: { expectedLastSeq?: number } = {}): Promise<AppendResult> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    // Everything up to the enqueue runs in call order (blob lookups wait for the database).
    const { batch, planned, tools, committing } = await s.inOrder(async () => {
      const blobs = await this.blobSinkFor(s, records);
      const batch = prepareBatch(records, this.allSecrets, this.maxRecordBytes, blobs.sink);
      await blobs.flush(); // blobs are stored before the records that reference them
      const tools = s.tools();
      const planned = planBatch(batch, s.header.turns === 'auto', tools);
      const committing = this.commit(s, () => s.queue.append({ texts: batch.texts, expectedLastSeq: opts.expectedLastSeq, plan: planned.plan }));
      committing.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      return { batch, planned, tools, committing };
    });
    const committed = await committing.catch((err: unknown) => {
      if (wroteNothing(err)) planned.giveBack();
      throw err;
    });
    tools.noteCommitted(batch.values);
    return appendResult(committed, batch, planned.recordSeqs());
  }

  /** Overridden in runtime.ts: where a session's large strings go. */
  protected async blobSinkFor(_s: PgSession, _records: RecordInput[]): Promise<{ sink: undefined | import('../../../domain/blobRefs.js').BlobSink; flush(): Promise<void> }> {
    return { sink: undefined, flush: async () => {} };
  }

  async startTurn(sessionId: string, kind: TurnKind): Promise<{ turnId: string }> {
    const turnId = newTurnId();
    await this.writeTurnEvent(sessionId, { kind: 'turn', turnId, event: 'start', turnKind: kind });
    return { turnId };
  }

  async transitionTurn(sessionId: string, turnId: string, change: TurnChange): Promise<void> {
    await this.writeTurnEvent(sessionId, { kind: 'turn', turnId, ...change });
  }

  private async writeTurnEvent(sessionId: string, event: TurnEvent): Promise<void> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    const [text] = prepareBatch([event as unknown as RecordInput], this.allSecrets, this.maxRecordBytes).texts;
    await this.commitInOrder(s, () => s.queue.append({ texts: [], plan: turnEventPlan(text as string, JSON.parse(text as string) as TurnEvent) }));
  }

  /** session/update: a `sessionUpdate` record through the commit queue, laid out against the header state at commit time. */
  async update(sessionId: string, update: SessionUpdate): Promise<UpdatedHeader> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    const prepared = prepareUpdate(update, this.allSecrets, this.maxRecordBytes);
    const planned = updatePlan(prepared, baseState(s.header), s.header, this.allSecrets, this.maxRecordBytes);
    const committed = await this.commitInOrder(s, () => s.queue.append({ texts: [], plan: planned.plan }));
    return updatedHeader(s.header, planned.after(), committed.firstSeq, prepared.redactions);
  }

  async getTurn(sessionId: string) {
    checkSessionId(sessionId);
    return (await this.view(this.sessions.get(sessionId), sessionId)).turn ?? null;
  }

  async close(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    const s = this.sessions.get(sessionId);
    if (!s) {
      await pg(() => this.db.load(sessionId));
      return;
    }
    if (this.failStopped.has(sessionId)) return;
    this.sessions.delete(sessionId);
    await s.close();
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.close()));
    await this.db.close();
  }

  scrub(text: string, extra: SecretsInput = {}): string {
    return scrubText(text, this.allSecrets, this.env, extra);
  }

  sessionIdOfPath(_p: string): string {
    throw new StoreError('InvalidArgument', 'this store is a PostgreSQL database: sessions are opened by id, not by path', { path: 'path' });
  }
}
