/**
 * The store's interface: what the server calls, and what a second backend (PostgreSQL, say)
 * implements to pass the same tests. It speaks in sessions and records, never in JSON-RPC.
 */

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

export interface SessionHeaderInput {
  cwd?: string;
  title?: string;
  systemPrompt?: string;
  llm?: LlmConfig;
  metadata?: Record<string, unknown>;
}

export interface SessionHeader extends SessionHeaderInput {
  sessionId: string;
  createdAt: string;
}

export type OpenMode = 'write' | 'read';

export interface OpenedSession extends SessionHeader {
  mode: OpenMode;
  lastSeq: number;
  /** Present when opening repaired a torn tail: bytes removed and where they were kept. */
  recovered?: { bytes: number; evidence: string };
}

export interface AppendResult {
  firstSeq: number;
  lastSeq: number;
}

export interface ReadOptions {
  afterSeq?: number;
  limit?: number;
  kinds?: readonly string[];
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
}

export interface ListPage {
  sessions: SessionSummary[];
  nextCursor?: string;
}

export interface SessionStore {
  /** Absolute path of the store. */
  readonly root: string;
  /** Creates a session durably and opens it for writing. */
  create(header: SessionHeaderInput): Promise<{ sessionId: string; createdAt: string }>;
  /** Opens (or re-opens) a session; `write` repairs a torn tail and allows appends. */
  open(sessionId: string, mode: OpenMode): Promise<OpenedSession>;
  /** Appends all records or none; resolves only once they are durable. */
  append(sessionId: string, records: RecordInput[], opts?: { expectedLastSeq?: number }): Promise<AppendResult>;
  /** Reads a page of records after `afterSeq`, verified, streamed from disk. */
  read(sessionId: string, opts?: ReadOptions): Promise<ReadPage>;
  /** Lists sessions, most recently updated first. */
  list(opts?: { limit?: number; cursor?: string }): Promise<ListPage>;
  /** Waits for in-flight appends, then closes the session in this store instance. */
  close(sessionId: string): Promise<void>;
  /** Closes every open session (process exit). */
  closeAll(): Promise<void>;
}
