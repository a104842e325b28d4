/**
 * The store's interface: what the server calls, and what a second backend (PostgreSQL, say)
 * implements to pass the same tests. It speaks in sessions and records, never in JSON-RPC.
 */

import type { TurnKind, TurnOutcome, TurnPhase, TurnState } from './turns/turnState.js';
import type { ShownCounts } from './usage.js';

export type { TurnKind, TurnOutcome, TurnPhase, TurnState };

/** A record as appended: a JSON object with a string `kind` (validated by the caller). */
export type RecordInput = { kind: string } & Record<string, unknown>;
/** A record as stored: the appended members plus `seq` and `ts`. */
export type StoredRecord = RecordInput & { seq: number; ts: string };

export interface LlmConfig {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
}

export interface ParentLink {
  sessionId: string;
  relation: 'continuation' | 'fork';
  atSeq?: number;
  summary?: { provider: string; model: string; agentId?: string };
}

export interface SessionHeaderInput {
  /** The session this one continues or forks. */
  parent?: ParentLink;
  /** manual (default): turns only through the turn methods; auto: messages drive them. */
  turns?: 'manual' | 'auto';
  cwd?: string;
  title?: string;
  systemPrompt?: string;
  llm?: LlmConfig;
  metadata?: Record<string, unknown>;
  /** Labels (`[A-Za-z0-9._:-]`, at most 32); replaced as a set by session/update. */
  tags?: string[];
  /** When tool scratch directories survive session/close (default never). */
  keepScratch?: 'always' | 'onFailure' | 'never';
  /** String members longer than this many UTF-8 bytes are stored as blobs (default 256 KiB). */
  blobThreshold?: number;
}

export interface SessionHeader extends SessionHeaderInput {
  sessionId: string;
  createdAt: string;
  /** Names of the env vars whose values are this session's secrets (never the values). */
  secretEnv?: string[];
  /** session/create's idempotencyKey stamp (core/sessions/createIdempotency.ts); never shown. */
  idempotency?: { key: string; digest: string; redactions?: Redaction[] };
}

export type OpenMode = 'write' | 'read';

/** Secrets a client registers for a session: env var names (resolved here) and values (memory only). */
export interface SecretsInput {
  env?: string[];
  values?: string[];
}

/** How many secrets guard the session, and which named env vars were not set. */
export interface SecretsStatus {
  registered: number;
  unsetEnv?: string[];
}

/** A redaction applied on write: where (within the record, or the header for seq 0) and which rule. */
export interface Redaction {
  seq: number;
  path: string;
  rule: string;
}

export interface OpenedSession extends SessionHeader {
  mode: OpenMode;
  lastSeq: number;
  secrets: SecretsStatus;
  turn: TurnState | null;
  /** Present when opening repaired a torn tail: bytes removed and where they were kept. */
  recovered?: { bytes: number; evidence: string };
}

export interface AppendResult {
  firstSeq: number;
  lastSeq: number;
  /** Present when something was redacted. */
  redactions?: Redaction[];
}

export interface CreatedSession {
  sessionId: string;
  createdAt: string;
  secrets: SecretsStatus;
  redactions?: Redaction[];
}

export interface ReadOptions {
  /** An archived generation (default: the active journal). */
  generation?: number;
  afterSeq?: number;
  limit?: number;
  kinds?: readonly string[];
  /** Replace every BlobRef by the string it stands for. */
  inline?: boolean;
}

export interface ReadPage {
  records: StoredRecord[];
  lastSeq: number;
  nextAfterSeq: number | null;
}

export interface SessionSummary {
  sessionId: string;
  title?: string;
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
  bytes: number;
  firstMessage?: string;
  lastMessage?: string;
  parent?: ParentLink;
  /** Kept in this process's memory only (session/create ephemeral): listed only here. */
  ephemeral?: true;
  cwd?: string;
  tags?: string[];
  /** In the trash (listed only with includeDeleted). */
  deleted?: true;
}

/**
 * What purgeTrashed did: 'purged'; 'live': a live session has the id (restored meanwhile), left
 * alone; 'open': another process holds the session's lock (a restore, a writer), left alone;
 * 'gone': no longer in the trash (purged meanwhile).
 */
export type PurgeOutcome = 'purged' | 'live' | 'open' | 'gone';

/** A session in the trash (deleted, restorable until purged). */
export interface TrashEntry {
  sessionId: string;
  title?: string;
  /** When it was moved to the trash. */
  deletedAt: string;
  /** Its stored bytes (journal and archived generations). */
  bytes: number;
}

/** session/list's filters (all optional; they combine with AND). */
export interface ListFilter {
  cwd?: string;
  cwdPrefix?: string;
  /** Sessions carrying every one of these tags. */
  tags?: string[];
  parentId?: string;
  updatedAfter?: string;
  updatedBefore?: string;
  includeDeleted?: boolean;
  /** Case-insensitive substring of the title, a tag, or the first/last message summary. */
  query?: string;
}

export interface ListOptions extends ListFilter {
  limit?: number;
  cursor?: string;
}

/** The header after session/update, and the seq of the update record. */
export type UpdatedHeader = Omit<SessionHeader, 'secretEnv' | 'idempotency'> & { seq: number; redactions?: Redaction[] };

export interface ListPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

/** What session/search asks of an index (SessionStore / Backend searchCandidates): a literal needle, where to go on from, how many. */
export interface CandidateQuery {
  /** Printable ASCII other than `"` and `\` (characters JSON text holds as they are); never empty. */
  needle: string;
  /** Only records after this (sessionId, seq), in (sessionId, seq) order. */
  after?: { sessionId: string; seq: number };
  /** Only these sessions (sorted, distinct). */
  sessionIds?: readonly string[];
  limit: number;
  /** Stop once this many bytes of text were returned (at least one record is). */
  maxBytes?: number;
}

/** A page of candidates; `more`: there may be candidates after the last (the limit or maxBytes cut the page). */
export interface CandidatePage {
  candidates: SearchCandidate[];
  more: boolean;
}

/** A stored message record session/search may hit, with its session: its exact stored text. */
export interface SearchCandidate {
  sessionId: string;
  record: { seq: number; ts: string; kind: string; text: string };
}

export interface SessionStore {
  /** Absolute path of the store (file backend), or its URL without the password (postgres). */
  readonly root: string;
  /** Which persistence backend keeps the bytes (initialize's store.backend; file when absent). */
  readonly backend?: 'file' | 'postgres';
  /** Whether the store is encrypted at rest (initialize's capabilities.encryptionAtRest.active). */
  readonly encrypted?: boolean;
  /**
   * How many requests the server has read and not yet answered (the current one included). A
   * store may commit a lone request without waiting for company when this is 1 (the file store
   * then fdatasyncs on the main thread instead of the thread pool); above 1, more requests are
   * coming and it groups them. Unset: never alone.
   */
  setRequestsWaiting?(probe: () => number): void;
  /**
   * Loads, in the background, what the first write open will need and start-up left out (the
   * file store's lease library): called once the client said `initialized`, while it is idle.
   */
  warmUp?(): void;
  /** Creates a session durably and opens it for writing; no secret of `secrets` may be in the header. */
  create(header: SessionHeaderInput, secrets?: SecretsInput, opts?: { idempotencyKey?: string }): Promise<CreatedSession>;
  /**
   * Creates a session kept in this process's memory only (protocol §17): never written to disk
   * or database, gone at close and at exit. Optional: a store without it refuses `ephemeral`.
   */
  createEphemeral?(header: SessionHeaderInput, secrets?: SecretsInput): Promise<CreatedSession>;
  /** Opens (or re-opens) a session; `write` repairs a torn tail and allows appends. Adds `secrets`. */
  open(sessionId: string, mode: OpenMode, secrets?: SecretsInput): Promise<OpenedSession>;
  /** Appends all records or none; resolves only once they are durable. */
  append(sessionId: string, records: RecordInput[], opts?: { expectedLastSeq?: number; idempotencyKey?: string }): Promise<AppendResult>;
  /** Reads a page of records after `afterSeq`, verified, streamed from disk. */
  read(sessionId: string, opts?: ReadOptions): Promise<ReadPage>;
  /**
   * The same page as the records' stored JSON bytes (never `inline`), for a server that passes
   * them on without building objects. Optional: a store without it is read with `read`.
   */
  readText?(sessionId: string, opts?: Omit<ReadOptions, 'inline'>): Promise<RecordsText>;
  /** Lists sessions, most recently updated first. */
  list(opts?: ListOptions): Promise<ListPage>;
  /**
   * Appends a `sessionUpdate` record (through the commit queue, like any append) and returns the
   * effective header after it.
   */
  update(sessionId: string, update: { title?: string; metadata?: Record<string, unknown>; tags?: string[] }, opts?: { idempotencyKey?: string }): Promise<UpdatedHeader>;
  /** Waits for in-flight appends, then closes the session in this store instance. */
  close(sessionId: string): Promise<void>;
  /** Compacts the records up to throughSeq into a checkpoint, archiving the journal first. */
  compact(sessionId: string, req: CompactRequest): Promise<{ generation: number; checkpointSeq: number; archived: { generation: number; records: number; bytes: number } }>;
  /** The archived generations of a session. */
  history(sessionId: string): Promise<HistoryEntry[]>;
  /** A new session with a copy of the records up to atSeq, linked to its parent; opened for writing. */
  fork(sessionId: string, atSeq?: number): Promise<{ sessionId: string }>;
  /**
   * Moves a session to the trash (or removes it for good with purge). `ifIdle`: a session open
   * for writing in this instance is refused (SessionLocked, reason openHere) instead of closed
   * first — as one open in another process always is. `dryRun` (with ifIdle; prune's dry run):
   * every check the move makes, the writer lease taken and given back at once, nothing moved —
   * resolving exactly when the move would go ahead, and refused as it would be.
   */
  delete(sessionId: string, purge?: boolean, opts?: { ifIdle?: boolean; dryRun?: boolean }): Promise<void>;
  /** The sessions in the trash, most recently deleted first. Optional: a store without it has no trash listing. */
  /**
   * session/search's candidates from the backend's index (Backend.searchCandidates), after the
   * writes sent before this call; undefined when there is none for this store (the search then
   * reads every session). Absent: none.
   */
  searchCandidates?(q: CandidateQuery): Promise<CandidatePage | undefined>;
  listTrash?(): Promise<TrashEntry[]>;
  /**
   * trash empty's purge of one deleted session: removed for good only if no live session has its
   * id and it is in the trash — checked and done as one step under the session's lock (so a
   * restore meanwhile either waits its turn or was first). See PurgeOutcome. Optional: without
   * it, trash empty checks and then purges with delete (not one step).
   */
  purgeTrashed?(sessionId: string): Promise<PurgeOutcome>;
  /** Finishes purges a crash cut short after their commit point (file store: trash/.purging-<id>/); the ids finished. */
  finishPurges?(): Promise<string[]>;
  /** The session's stored header (for a prune's tag filter). Optional: without it, no session has tags. */
  header?(sessionId: string): Promise<SessionHeader>;
  /** Brings a deleted session back from the trash. */
  restore(sessionId: string): Promise<void>;
  /**
   * Delivers the records after afterSeq, then every newly committed one (by this or another
   * process), in order, each once; `deliver` returning false ends it.
   */
  watch(sessionId: string, afterSeq: number, deliver: (records: StoredRecord[]) => boolean | Promise<boolean>, onEnd: (reason: 'stopped' | 'error') => void): Promise<{ lastSeq: number; stop(): void }>;
  /** Token usage totals, overall and by model, as of the last committed record (domain/usage.ts). */
  usage(sessionId: string): Promise<UsageReport>;
  /** Appends a `rewind` record undoing in place what followed toSeq (domain/rewind.ts); write mode. */
  rewind(sessionId: string, toSeq: number, opts?: { expectedLastSeq?: number }): Promise<RewindResult>;
  /** Starts a turn; refused (InvalidTurnTransition) while one is pending. */
  startTurn(sessionId: string, kind: TurnKind): Promise<{ turnId: string }>;
  /** One turn transition, validated against the committed state and written as a `turn` record. */
  transitionTurn(sessionId: string, turnId: string, change: TurnChange): Promise<void>;
  /** The current or last turn, or null. */
  getTurn(sessionId: string): Promise<TurnState | null>;
  /** What to send to the provider on resume. */
  context(sessionId: string, prune?: PruneOptions): Promise<{ messages: ContextMessage[]; turn: TurnState | null }>;
  /** Reserves the next toolSeq and creates its private scratch directory (write mode). */
  allocateScratch(sessionId: string, requestId: string, keep?: 'always' | 'onFailure' | 'never'): Promise<{ toolSeq: number; dir: string; tmpDir: string }>;
  /** Replaces a named state value atomically and durably (write mode); secret-checked. */
  setState(sessionId: string, key: string, value: unknown): Promise<{ redactions: Array<{ path: string; rule: string }> }>;
  /** A named state value, or null. */
  getState(sessionId: string, key: string): Promise<unknown>;
  /** Removes a named state value (write mode); false when it had none. */
  deleteState(sessionId: string, key: string): Promise<boolean>;
  /** A chunk of a blob a record references. */
  getBlob(sessionId: string, ref: string, offset?: number, length?: number): Promise<{ bytes: Buffer; offset: number; size: number }>;
  /** The session a path inside the store names (its directory or journal); UnsafeStore outside. */
  sessionIdOfPath(path: string): string;
  /** Closes every open session (process exit). */
  closeAll(): Promise<void>;
  /**
   * `text` with every secret registered in this store, the secrets named in `extra` (those of a
   * request that failed), and every well-known credential redacted: for errors and logs.
   */
  scrub(text: string, extra?: SecretsInput): string;
}

export interface UsageReport {
  /** The totals count the records up to here. */
  lastSeq: number;
  /** Records whose usage object was counted. */
  records: number;
  total: ShownCounts;
  byModel: Record<string, ShownCounts>;
}

export interface RewindResult {
  /** seq of the rewind record. */
  seq: number;
  toSeq: number;
  /** The turn state from now on (the one as of toSeq). */
  turn: TurnState | null;
}

export type TurnChange =
  | { event: 'phase'; phase: TurnPhase }
  | { event: 'fail'; error: string }
  | { event: 'resume' }
  | { event: 'finish'; outcome: TurnOutcome; error?: string };

export interface PruneOptions {
  keepRecentToolOutputs?: number;
  maxToolOutputChars?: number;
}

/** A provider chat message as rebuilt by session/context. */
export type ContextMessage = { role: string } & Record<string, unknown>;

export interface CompactRequest {
  summary: string;
  throughSeq: number;
  provider?: string;
  model?: string;
  expectedLastSeq?: number;
}

export interface HistoryEntry {
  generation: number;
  throughSeq: number;
  records: number;
  bytes: number;
  createdAt: string;
}

/**
 * A page of records as their stored JSON (what session/read returns, byte for byte): `body`'s
 * concatenation is the comma-separated records, the inside of the result's `records` array.
 */
export interface RecordsText {
  body: Buffer[];
  count: number;
  lastSeq: number;
  nextAfterSeq: number | null;
  /**
   * Called once `body` has been written out and will never be read again: a backend may then
   * reuse its buffers for a later page (so paging through a large session holds about one page).
   */
  release?: () => void;
}
