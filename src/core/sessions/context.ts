/**
 * What every operation of `Sessions` stands on: the backend behind the port, the final gate,
 * the sessions open in this instance, and how a write finds its writer and reaches its
 * commit queue. Knows nothing of SQL, files or JSON-RPC.
 */
import { StoreError } from '../../domain/errors.js';
import { checkSessionId } from '../../domain/ids.js';
import { SecretSet, type Vocabulary } from '../../domain/secrets/knownSecrets.js';
import { inlineBlobs, isBlobRef, digestOf } from '../../domain/blobRefs.js';
import type { HeaderState } from '../../domain/sessionUpdate.js';
import type { TurnState } from '../../domain/turns/turnState.js';
import type { StoredRecord } from '../../domain/types.js';
import { NO_USAGE, reduceUsage } from '../../domain/usage.js';
import type { ScratchSpace } from '../../scratch/localScratch.js';
import { FinalGate } from '../gate.js';
import type { Backend, SealedRecord, SessionRow } from '../port.js';
import type { LiveSession } from './live.js';
import { stateOf } from './snapshot.js';
import { parseExact } from '../../domain/exactJson.js';

/** Bytes of records one page of a whole-session read takes before it yields (about a few ms of parsing). */
const SLICE_READ_BYTES = 256 << 10;

export interface SessionsOptions {
  clock?: () => number;
  /** Largest serialized record (default 32 MiB). */
  maxRecordBytes?: number;
  /** Where warnings go (stderr in the server). Never given record content. */
  warn?: (message: string) => void;
  /** Words every record contains (the protocol's vocabulary): no secret may occur in them. */
  vocabulary?: Vocabulary;
  /** Where env var names given as secrets are resolved (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * Inspection only (the CLI): every write and every writable open is refused (ReadOnly,
   * reason readOnlyStore) before the backend is asked; the backend should be read-only too.
   */
  readOnly?: boolean;
  /**
   * The secrets this instance gates against and adds its sessions' secrets to; given, it is
   * shared with another instance of this process (ephemeral sessions beside durable ones: a
   * secret registered for either reaches neither's bytes).
   */
  secrets?: SecretSet;
  /** Where tool scratch directories go (scratch/localScratch.ts scratchAt); none: allocateScratch is refused. */
  scratch?: (secrets: SecretSet) => ScratchSpace;
}

/** A session open for writing in this instance (it holds the lease and a commit queue). */
export type WritableSession = LiveSession & { queue: NonNullable<LiveSession['queue']>; fence: NonNullable<LiveSession['fence']> };

export class Core {
  readonly clock: () => number;
  readonly maxRecordBytes: number;
  readonly warn: (message: string) => void;
  readonly vocabulary: Vocabulary;
  readonly env: NodeJS.ProcessEnv;
  readonly readOnly: boolean;
  /** Every secret registered in this instance: what the gate refuses, what scrub redacts. */
  readonly secrets: SecretSet;
  readonly gate: FinalGate;
  readonly scratch: ScratchSpace | undefined;
  readonly sessions = new Map<string, LiveSession>();
  /** Opens of one session, one at a time (oneAtATime). */
  readonly opening = new Map<string, Promise<unknown>>();
  /** session/create's with one idempotencyKey, one at a time (createIdempotency.ts). */
  readonly creatingKeys = new Map<string, Promise<unknown>>();
  /** Rows updated before this were searched for create keys already (createIdempotency.ts). */
  createKeysSearchedFrom: string | undefined;
  /**
   * Sessions whose commit queue fail-stopped: read-only for the life of this instance. Filled
   * only by the queue's onStopped (fail-stop is decided in CommitQueue and nowhere else).
   */
  readonly failStopped = new Set<string>();
  readonly watchers = new Map<string, Set<{ poke(): void }>>();
  /** Requests read and not yet answered by the server (SessionStore.setRequestsWaiting); unknown: many. */
  requestsWaiting: () => number = () => Infinity;

  constructor(readonly backend: Backend, opts: SessionsOptions) {
    this.secrets = opts.secrets ?? new SecretSet();
    this.gate = new FinalGate(this.secrets);
    this.readOnly = opts.readOnly ?? false;
    this.clock = opts.clock ?? Date.now;
    this.maxRecordBytes = opts.maxRecordBytes ?? 32 << 20;
    this.warn = opts.warn ?? (() => {});
    this.vocabulary = opts.vocabulary ?? [];
    this.env = opts.env ?? process.env;
    this.scratch = opts.scratch?.(this.secrets);
    // The backend's second net (if it has one), over the same secrets: what the gate missed is refused there.
    backend.secondNet?.(
      (text) => (this.secrets.size === 0 ? undefined : this.secrets.findInText(text)),
      (bytes) => (this.secrets.size === 0 ? undefined : this.secrets.findInBytes(bytes)),
    );
  }

  refuseIfReadOnly(what: string): void {
    if (this.readOnly) throw new StoreError('ReadOnly', `cannot ${what}: the store is open for inspection only`, { reason: 'readOnlyStore' });
  }

  /** The session's row; a session in the trash is not found. */
  async loadLive(sessionId: string): Promise<SessionRow> {
    const row = await this.backend.load(sessionId);
    if (row.trashed) throw new StoreError('SessionNotFound', `session ${sessionId} not found`, { sessionId });
    return row;
  }

  /**
   * The row with its usage totals: a row written before they existed (usage NULL) gets them
   * reduced from its active records once (a checkpoint of that time carries none: they count
   * from it); the next commit stores them.
   */
  async withUsage(row: SessionRow): Promise<SessionRow> {
    if (row.snapshot.usage !== null) return row;
    let usage = NO_USAGE;
    for (const r of await this.activeRecords(row.sessionId, row.lastSeq, ['api', 'message', 'checkpoint'])) {
      usage = reduceUsage(usage, JSON.parse(r.text) as Record<string, unknown>);
    }
    return { ...row, snapshot: { ...row.snapshot, usage: JSON.stringify(usage) } };
  }

  /** lastSeq, turn and header state: the writer's committed view (after the requests sent before), or the backend's. */
  async view(s: LiveSession | undefined, sessionId: string): Promise<{ lastSeq: number; turn: TurnState | null; header?: HeaderState }> {
    if (s?.queue) {
      await s.settled(); // every write called before this one has committed or failed
      return { lastSeq: s.queue.lastSeq, turn: s.queue.state.turn, header: s.queue.state.header };
    }
    const row = await this.loadLive(sessionId);
    const state = stateOf(row);
    return { lastSeq: row.lastSeq, turn: state.turn, header: state.header };
  }

  /** Committed records after the requests sent before this call (read-your-writes). */
  async settled(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    await this.sessions.get(sessionId)?.settled();
  }

  /**
   * The session open for writing in this instance, or undefined (then `notWritable` says why).
   * Synchronous on purpose: a write that finds its writer reaches LiveSession.inOrder in the
   * tick it was called, so nothing called after it can overtake it.
   */
  writable(sessionId: string): WritableSession | undefined {
    checkSessionId(sessionId);
    const s = this.sessions.get(sessionId);
    return s?.queue && s.fence ? (s as WritableSession) : undefined;
  }

  /**
   * Why a write is refused when `writable` found no writer: SessionNotFound when there is no
   * live session with this id, else ReadOnly notOpen/openedReadOnly. Only reached on the
   * refusal path, so a write that proceeds never waits here.
   */
  async notWritable(sessionId: string): Promise<never> {
    const s = this.sessions.get(sessionId);
    // SessionNotFound when there is no such session; any other trouble reading it (damage) is
    // for the open to report: the write is refused as never opened.
    if (!s) await this.loadLive(sessionId).catch((err: unknown) => { if (err instanceof StoreError && err.kind === 'SessionNotFound') throw err; });
    throw new StoreError('ReadOnly', `session ${sessionId} is not open for writing; call session/open with mode "write" first`, {
      sessionId, reason: s ? 'openedReadOnly' : 'notOpen',
    });
  }

  /** Runs a commit of `s`; its watchers in this process learn of it at once (others through the backend's changes). */
  async commit<T>(s: WritableSession, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } finally {
      this.poked(s.id);
    }
  }

  /**
   * `commit(s, run)` after every write of this session called before it has reached the commit
   * queue (LiveSession.inOrder): writes that enqueue at once (turn events, state, scratch,
   * compaction) never overtake an append still preparing.
   */
  commitInOrder<T>(s: WritableSession, run: () => Promise<T>): Promise<T> {
    return s.inOrder(async () => {
      const committing = this.commit(s, run);
      committing.catch(() => undefined); // awaited by the caller; not an unhandled rejection meanwhile
      return { committing };
    }).then(({ committing }) => committing);
  }

  poked(sessionId: string): void {
    for (const w of this.watchers.get(sessionId) ?? []) w.poke();
  }

  /** Every record of the active generation up to `through` (all when undefined), in seq order. */
  async activeRecords(sessionId: string, through?: number, kinds?: readonly string[]): Promise<SealedRecord[]> {
    const out: SealedRecord[] = [];
    await this.eachActiveRecord(sessionId, (r) => out.push(r), through, kinds);
    return out;
  }

  /** activeRecords one page at a time: `visit` sees each record, none is kept (a scan of a long session holds one page). */
  async eachActiveRecord(sessionId: string, visit: (r: SealedRecord) => void, through?: number, kinds?: readonly string[]): Promise<void> {
    let afterSeq = 0;
    for (;;) {
      const page = await this.backend.readRange(sessionId, { afterSeq, limit: 10_000, maxBytes: SLICE_READ_BYTES, ...(kinds ? { kinds } : {}) });
      const end = through ?? page.lastSeq;
      for (const r of page.records) if (r.seq <= end) visit(r);
      if (page.scannedSeq >= end || page.scannedSeq === afterSeq) return;
      afterSeq = page.scannedSeq;
      // A whole-session read (a compaction's plan, usage totals) yields to the event loop between
      // pages, so other sessions' requests are read and answered meanwhile.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }


  /** Records with every BlobRef replaced by its (verified) string. */
  async inline(records: StoredRecord[]): Promise<StoredRecord[]> {
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (v === null || typeof v !== 'object') return;
      if (isBlobRef(v)) refs.add(v.$blob);
      else for (const w of Object.values(v)) walk(w);
    };
    records.forEach(walk);
    const loaded = new Map<string, string>();
    for (const ref of refs) {
      const bytes = await this.backend.blobs.read(digestOf(ref) ?? '');
      if (!bytes) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
      loaded.set(ref, bytes.toString('utf8'));
    }
    return records.map((r) => inlineBlobs(r, (ref) => loaded.get(ref) as string) as StoredRecord);
  }
}

/** A stored record as the protocol shows it: seq and ts, then the members of its exact text. */
export function storedOf(r: SealedRecord): StoredRecord {
  return { seq: r.seq, ts: r.ts, ...(parseExact(r.text) as { kind: string }) };
}
