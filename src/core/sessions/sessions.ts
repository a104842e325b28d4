/**
 * # Sessions: the one SessionStore
 *
 * The session logic, written once, over one persistence backend behind the port
 * (src/core/port.ts): opening and the lease protocol's use (open.ts), appends, turns and
 * updates through the commit queue (write.ts), reads, list, history and subscribe (read.ts),
 * compaction, rewind, fork and the trash (lineage.ts), scratch and state (runtime.ts), blobs
 * (blobs.ts). Every value handed to the backend passes the final gate (src/core/gate.ts).
 *
 * What "acknowledged" means: a write is answered only after the backend's write that covers it
 * resolved (COMMIT returned with synchronous_commit = on; the bytes fdatasynced); a memory
 * backend promises no durability (ephemeral sessions, protocol §17).
 *
 * Fail-stop: after an unknown outcome the session's commit queue stops (CommitQueue, and
 * nowhere else); the session then gives its lease back and is read-only in this instance.
 */
import type { SessionUpdate } from '../../domain/sessionUpdate.js';
import type {
  AppendResult, CandidateQuery, CompactRequest, PurgeOutcome, ContextMessage, CreatedSession, HistoryEntry, ListOptions, ListPage, OpenedSession, OpenMode, PruneOptions, ReadOptions,
  ReadPage, RecordInput, RecordsText, RewindResult, CandidatePage, SecretsInput, SessionHeader, SessionHeaderInput, SessionStore, StoredRecord, TrashEntry, TurnChange, TurnKind,
  TurnState, UpdatedHeader, UsageReport,
} from '../../domain/types.js';
import { scrubText } from '../commit/header.js';
import type { KeepScratch } from '../../scratch/toolRuns.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import type { Backend } from '../port.js';
import { getBlob } from './blobs.js';
import { Core, type SessionsOptions } from './context.js';
import { compact, fork, listTrash, purgeTrashed, remove, restore, rewind } from './lineage.js';
import { close, closeAll, create, open } from './open.js';
import { context, getTurn, header, history, list, read, readText, usage, watch } from './read.js';
import { allocateScratch, deleteState, getState, setState } from './runtime.js';
import { append, startTurn, transitionTurn, update } from './write.js';

export type { SessionsOptions };

export class Sessions implements SessionStore {
  readonly root: string;
  readonly backend?: 'file' | 'postgres';
  private readonly c: Core;

  constructor(readonly port: Backend, opts: SessionsOptions = {}) {
    this.c = new Core(port, opts);
    this.root = port.display;
    if (port.kind !== 'memory') this.backend = port.kind;
  }

  get encrypted(): boolean {
    return this.port.encrypted === true;
  }

  setRequestsWaiting(probe: () => number): void {
    this.c.requestsWaiting = probe;
  }

  warmUp(): void {
    this.port.warmUp?.();
  }

  create(h: SessionHeaderInput, secrets?: SecretsInput, opts: { idempotencyKey?: string } = {}): Promise<CreatedSession> {
    return create(this.c, h, secrets, opts.idempotencyKey);
  }

  open(sessionId: string, mode: OpenMode, secrets?: SecretsInput): Promise<OpenedSession> {
    return open(this.c, sessionId, mode, secrets);
  }

  append(sessionId: string, records: RecordInput[], opts?: { expectedLastSeq?: number; idempotencyKey?: string }): Promise<AppendResult> {
    return append(this.c, sessionId, records, opts);
  }

  read(sessionId: string, opts?: ReadOptions): Promise<ReadPage> {
    return read(this.c, sessionId, opts);
  }

  readText(sessionId: string, opts?: Omit<ReadOptions, 'inline'>): Promise<RecordsText> {
    return readText(this.c, sessionId, opts);
  }

  list(opts?: ListOptions): Promise<ListPage> {
    return list(this.c, opts);
  }

  /**
   * session/search over the backend's index: after every write this instance was sent before
   * (read-your-writes, as each session's read gives the scan). The backend refuses what it
   * cannot match (sealed text: port.ts).
   */
  async searchCandidates(q: CandidateQuery): Promise<CandidatePage | undefined> {
    if (!this.port.searchCandidates) return undefined;
    await Promise.all([...this.c.sessions.keys()].map((id) => this.c.settled(id)));
    return this.port.searchCandidates(q);
  }

  update(sessionId: string, change: SessionUpdate, opts: { idempotencyKey?: string } = {}): Promise<UpdatedHeader> {
    return update(this.c, sessionId, change, opts.idempotencyKey);
  }

  close(sessionId: string): Promise<void> {
    return close(this.c, sessionId);
  }

  compact(sessionId: string, req: CompactRequest) {
    return compact(this.c, sessionId, req);
  }

  history(sessionId: string): Promise<HistoryEntry[]> {
    return history(this.c, sessionId);
  }

  fork(sessionId: string, atSeq?: number): Promise<{ sessionId: string }> {
    return fork(this.c, sessionId, atSeq);
  }

  delete(sessionId: string, purge?: boolean, opts?: { ifIdle?: boolean; dryRun?: boolean }): Promise<void> {
    return remove(this.c, sessionId, purge, opts);
  }

  listTrash(): Promise<TrashEntry[]> {
    return listTrash(this.c);
  }

  header(sessionId: string): Promise<SessionHeader> {
    return header(this.c, sessionId);
  }

  purgeTrashed(sessionId: string): Promise<PurgeOutcome> {
    return purgeTrashed(this.c, sessionId);
  }

  /** Finishes the purges a crash cut short (trash empty runs it first); none on a backend without such leftovers. */
  async finishPurges(): Promise<string[]> {
    this.c.refuseIfReadOnly('purge a session');
    return (await this.port.finishPurges?.()) ?? [];
  }

  restore(sessionId: string): Promise<void> {
    return restore(this.c, sessionId);
  }

  watch(sessionId: string, afterSeq: number, deliver: (records: StoredRecord[]) => boolean | Promise<boolean>, onEnd: (reason: 'stopped' | 'error') => void) {
    return watch(this.c, sessionId, afterSeq, deliver, onEnd);
  }

  usage(sessionId: string): Promise<UsageReport> {
    return usage(this.c, sessionId);
  }

  rewind(sessionId: string, toSeq: number, opts?: { expectedLastSeq?: number }): Promise<RewindResult> {
    return rewind(this.c, sessionId, toSeq, opts);
  }

  startTurn(sessionId: string, kind: TurnKind): Promise<{ turnId: string }> {
    return startTurn(this.c, sessionId, kind);
  }

  transitionTurn(sessionId: string, turnId: string, change: TurnChange): Promise<void> {
    return transitionTurn(this.c, sessionId, turnId, change);
  }

  getTurn(sessionId: string): Promise<TurnState | null> {
    return getTurn(this.c, sessionId);
  }

  context(sessionId: string, prune?: PruneOptions): Promise<{ messages: ContextMessage[]; turn: TurnState | null }> {
    return context(this.c, sessionId, prune);
  }

  allocateScratch(sessionId: string, _requestId: string, keep?: KeepScratch): Promise<{ toolSeq: number; dir: string; tmpDir: string }> {
    return allocateScratch(this.c, sessionId, keep);
  }

  setState(sessionId: string, key: string, value: unknown): Promise<{ redactions: Redaction[] }> {
    return setState(this.c, sessionId, key, value);
  }

  getState(sessionId: string, key: string): Promise<unknown> {
    return getState(this.c, sessionId, key);
  }

  deleteState(sessionId: string, key: string): Promise<boolean> {
    return deleteState(this.c, sessionId, key);
  }

  getBlob(sessionId: string, ref: string, offset?: number, length?: number): Promise<{ bytes: Buffer; offset: number; size: number }> {
    return getBlob(this.c, sessionId, ref, offset, length);
  }

  sessionIdOfPath(p: string): string {
    return this.port.sessionIdOfPath(p);
  }

  closeAll(): Promise<void> {
    return closeAll(this.c);
  }

  /**
   * Test seam: forgets every open session as a killed process would — no flush, no clean
   * release — so that a new instance in the same process can take over.
   */
  abandon(): void {
    this.c.sessions.clear();
    this.port.abandon?.();
  }

  scrub(text: string, extra: SecretsInput = {}): string {
    return scrubText(text, this.c.secrets, this.c.env, extra);
  }
}

