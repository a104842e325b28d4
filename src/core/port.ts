/**
 * The port: what the core (src/core/sessions) asks of a persistence backend, and all it asks.
 * A backend keeps sealed bytes durably and answers for identity (session ids, generations,
 * seqs) and fencing (leases and their tokens); it never interprets record text, and it never
 * decides anything the protocol defines (turns, counters, secrets, list order, compaction
 * rules): those are the core's, once for every backend.
 *
 * Implemented by `PostgresBackend` (src/backends/postgres/backend.ts), `MemoryBackend`
 * (src/backends/memory, ephemeral sessions) and `FileBackend` (src/backends/file/fileBackend.ts,
 * the default; composed with the core in src/stores/fileStore.ts).
 *
 * Invariants every implementation keeps:
 * - Durability: a write resolves only once what it wrote survives a crash of this process and
 *   of the machine (fdatasync returned; COMMIT returned with synchronous_commit = on) — or, for
 *   the memory backend, which promises no durability, once it is in memory. It is all or
 *   nothing: a rejected write stored nothing, unless the error says the outcome is unknown
 *   (Uncertain; Unavailable with outcome "unknown"), after which the core fail-stops.
 * - The gate: every byte a backend stores arrives as a `Gated` value, produced only by the
 *   core's final secret gate (src/core/gate.ts) after every transformation. A backend stores
 *   those bytes exactly (no re-serialization) and adds only its own framing (ids, seqs, ts,
 *   checksums).
 * - Fencing: every write names the `Fence` of the writer's lease; a write under a fence that is
 *   no longer the lease's is LeaseLost and stores nothing, whatever the writer's clock.
 * - Errors: a method rejects with a StoreError of the protocol's kinds (domain/errors.ts), its
 *   message free of stored content; never with a driver's or file system's error.
 * - Reads verify (checksums, seqs following one by one) and never return damaged bytes:
 *   Corrupt names the generation and seq.
 */
import type { StoreError } from '../domain/errors.js';
import type { Gated } from './gate.js';
import type { CandidatePage, CandidateQuery, SearchCandidate } from '../domain/types.js';

export type { CandidatePage, CandidateQuery, SearchCandidate };

export type { Gated };

/** A record ready to store: `text` is exactly the JSON the secret gate checked; never rewritten. */
export interface SealedRecord {
  seq: number;
  ts: string;
  /** The record's kind, carried beside its text (reads filter by it; no backend parses the text). */
  kind: string;
  text: string;
}

/** The header of a session exactly as sealed (the JSON text the secret gate checked). */
export interface SealedHeader {
  sessionId: string;
  createdAt: string;
  text: string;
}

/** Who holds a lease (a backend's own record of it; SessionLocked shows it as the protocol's holder). */
export interface LeaseHolder {
  host: string;
  pid: number;
  sidecarId: string;
}

/** Proof of holding a session's lease; its token is checked by every write of that session. */
export interface Fence {
  sessionId: string;
  token: number;
}

/**
 * What the core derives from the records (turn, runtime counters, usage, summaries, header
 * state) and the backend stores beside them, in the same atomic step as the records they
 * follow, so `load` need not replay everything. The texts are the core's own serialization
 * (src/core/sessions/snapshot.ts), through the gate; a backend never parses them.
 */
export interface Snapshot {
  turn: string | null;
  runtime: string | null;
  /** Usage totals (domain/usage.ts); null only in rows written before they existed (then reduced from the records). */
  usage: string | null;
  firstMessage: string | null;
  lastMessage: string | null;
  /** The effective title/metadata/tags after the session's updates (null: never updated). */
  header: string | null;
}

/** A session/list row: the members of a SessionRow that its summary is made of. */
export type ListedRow = Pick<SessionRow, 'sessionId' | 'headerText' | 'createdAt' | 'lastTs' | 'lastSeq' | 'storedBytes' | 'snapshot' | 'trashed'>;

export interface SessionRow {
  sessionId: string;
  headerText: string;
  createdAt: string;
  /** When the session last changed (ISO, the backend's clock). */
  updatedAt: string;
  generation: number;
  /** First seq of the active generation: 1, or the checkpoint's seq after a compaction. */
  firstSeq: number;
  lastSeq: number;
  lastTs: string | null;
  /** Records and UTF-8 bytes of record text in the active generation ("stored size"). */
  records: number;
  storedBytes: number;
  snapshot: Snapshot;
  trashed: boolean;
  /** The highest toolSeq reserved (handed out by tool/allocateScratch) in any process. */
  toolSeq: number;
  /** Present when loading for a writer repaired a torn tail: bytes removed and where they were kept. */
  recovered?: { bytes: number; evidence: string };
}

export interface ArchivedGeneration {
  generation: number;
  firstSeq: number;
  lastSeq: number;
  throughSeq: number;
  records: number;
  storedBytes: number;
}

/** Where a write must land: the session's active generation and last seq as the writer knows them. */
export interface Position {
  lastSeq: number;
  generation: number;
}

export interface ReadRangeOptions {
  /** Default: the active generation. */
  generation?: number;
  afterSeq?: number;
  limit: number;
  kinds?: readonly string[];
  /** Stop once this many bytes of text were returned (at least one record is). */
  maxBytes?: number;
}

export interface ReadRangeResult {
  generation: number;
  records: SealedRecord[];
  /** Every seq up to here was looked at (returned, or filtered out by kinds). */
  scannedSeq: number;
  /** The generation's last seq when the read started. */
  lastSeq: number;
}

/** A session in the trash, as the backend keeps it. */
export interface TrashedSession {
  sessionId: string;
  headerText: string;
  /** When it was moved to the trash (ISO). */
  deletedAt: string;
  /** Stored bytes of its records (all generations a listing counts). */
  storedBytes: number;
}

/** A state value as stored: its key and its exact text (`{"value":...}\n`). */
export interface StateEntry {
  key: string;
  text: string;
}

/** session/list's keyset: rows after (older than) this (updatedAt, sessionId). */
export interface UpdateCursor {
  updatedAt: string;
  sessionId: string;
}

/**
 * session/list's filters as a backend may apply them in its query (Backend.listByUpdate's
 * `narrow`, from core/commit/listFilter.ts narrowingOf): every member keeps at least the rows the
 * core's filter keeps, which still runs on each row returned.
 */
export interface ListNarrowing {
  /** Exact: updatedAt (the later of last ts and createdAt, as summaryOfRow computes it) compared as strings. */
  updatedAfter?: string;
  updatedBefore?: string;
  /** Each occurs verbatim in the header text or the header state text. */
  headerContains?: string[];
  /**
   * Printable ASCII other than `"` and `\`, lowercase: occurs in the header, header state, first
   * or last message text with ASCII letters of either case (i also U+0130, k also U+212A: what
   * JavaScript's toLowerCase turns into them).
   */
  needle?: string;
}

export interface Leases {
  /** Takes the session's writer lease (a takeover increments the token), or SessionLocked naming the holder. */
  acquire(sessionId: string): Promise<Fence>;
  /**
   * Before an operation that runs alone in the commit queue (compaction, state, scratch): an
   * error when this process may no longer write under `fence`. A backend whose every write
   * checks its fence atomically (PostgreSQL) may answer undefined and let the write tell.
   */
  check(fence: Fence): StoreError | undefined;
  /** Gives the lease up (only if still `fence`'s); the next acquirer needs no takeover. Never rejects for a lease already gone. */
  release(fence: Fence): Promise<void>;
}

export interface BlobStore {
  /** Stores a blob once per store (content-addressed by its sha256); durable before it resolves with its address. */
  put(bytes: Gated<Buffer>): Promise<{ sha256: string; size: number }>;
  /** Its size in bytes, or undefined when absent. */
  size(sha256: string): Promise<number | undefined>;
  /** Its bytes (or a range of them), verified against its address; undefined when absent. */
  read(sha256: string, range?: { offset: number; length: number }): Promise<Buffer | undefined>;
  /**
   * Optional (a backend whose purge deletes unreferenced blobs: PostgreSQL): before a commit
   * whose records name these blobs, stored earlier, marks them as just vouched for, so that a
   * concurrent purge's blob GC spares them; resolves with those that are gone, which the core
   * puts again (it holds their bytes) before the commit.
   */
  touch?(sha256s: readonly string[]): Promise<string[]>;
}

export interface StateStore {
  /** Replaces a state value atomically and durably, fenced. */
  set(fence: Fence, entry: Gated<StateEntry>): Promise<void>;
  /** The value's exact text (verified), or undefined. */
  get(sessionId: string, key: string): Promise<string | undefined>;
  /** Removes a state value, fenced; true when there was one. */
  delete(fence: Fence, key: string): Promise<boolean>;
}

export interface Backend {
  /** Which backend keeps the bytes (initialize's store.backend for file and postgres). */
  readonly kind: 'file' | 'postgres' | 'memory';
  /** What may be shown as the store's root: a directory, or a URL without its password. */
  readonly display: string;
  /** Whether the bytes are encrypted at rest. */
  readonly encrypted?: boolean;
  readonly leases: Leases;
  /**
   * The session's row (trashed sessions too, with trashed: true), or SessionNotFound.
   * `writer`: loaded under that lease, for writing (a backend may then repair a torn tail).
   */
  load(sessionId: string, opts?: { writer?: Fence }): Promise<SessionRow>;
  /**
   * Creates a session holding `initial` records (a fork's copies: seqs 1, 2, ... or starting at a
   * checkpoint), all or nothing; Conflict (reason exists) when the id is taken.
   */
  create(header: Gated<SealedHeader>, initial: ReadonlyArray<Gated<SealedRecord>>, snapshot: Gated<Snapshot>, fence: Fence): Promise<void>;
  /**
   * Appends `records` (seqs following `at.lastSeq` one by one) and stores `snapshot` with them,
   * atomically and durably; Conflict (reason expectedLastSeq) when the session is not at `at`.
   * `alone`: nothing is queued behind this batch (a backend may then skip work meant for groups).
   */
  persist(fence: Fence, records: ReadonlyArray<Gated<SealedRecord>>, snapshot: Gated<Snapshot>, at: Position & { alone?: boolean }): Promise<void>;
  readRange(sessionId: string, range: ReadRangeOptions): Promise<ReadRangeResult>;
  /**
   * Compaction, atomically: the active generation is archived whole; the next one holds the
   * checkpoint (seq = throughSeq) and the records after throughSeq, copied as stored.
   */
  rotate(fence: Fence, r: { throughSeq: number; checkpoint: Gated<SealedRecord>; expect: Position }): Promise<{ generation: number; archived: ArchivedGeneration }>;
  /** The archived generations, oldest first. */
  history(sessionId: string): Promise<ArchivedGeneration[]>;
  /** Moves a live session to the trash (restorable). */
  trash(fence: Fence): Promise<void>;
  /**
   * Whether a session of this id is in the trash even though `load` finds a live one (the file
   * store: a live copy put back by hand beside the deleted one; its restore is then Conflict
   * exists). Absent: a live row means nothing of the id is in the trash.
   */
  inTrash?(sessionId: string): Promise<boolean>;
  /** Brings a trashed session back; SessionNotFound when it is not in the trash. */
  restore(fence: Fence): Promise<void>;
  /** Removes a session (live or trashed) and everything it owns, for good; the fence ends with it (its lease is gone). */
  purge(fence: Fence): Promise<void>;
  /**
   * trash empty's purge: removes the session only while it is in the trash — the check and the
   * removal one step under the fence; SessionNotFound when it is live (restored first) or gone.
   * Once purged, the fence ends with it (as `purge`).
   */
  purgeTrashed(fence: Fence): Promise<void>;
  /**
   * Whether parts of a delete or purge a crash cut short are left under this id where `load`
   * finds no session (the file store: a trash whose moves did not all happen, a purge past its
   * commit point): the repeated delete or purge then completes them. Absent: never.
   */
  leftovers?(sessionId: string): Promise<boolean>;
  /** Finishes every purge a crash cut short (each under its session's lease); the ids finished. */
  finishPurges?(): Promise<string[]>;
  /**
   * Rows in session/list order (updatedAt, then id, newest first) after `before`, at most
   * `limit`: what a summary is made of (a backend may answer from a derived index without
   * reading the session). A session that cannot be read is left out and reported by the
   * backend's warning channel, never fails the listing. `narrow`: hints a backend may apply in
   * its query to leave out rows the core's filter would drop (never one it would keep).
   */
  listByUpdate(o: { before?: UpdateCursor; limit: number; includeTrashed: boolean; narrow?: ListNarrowing }): Promise<ListedRow[]>;
  /** Every session in the trash (any order). */
  listTrash(): Promise<TrashedSession[]>;
  /**
   * Optional: session/search's candidates from an index. The `message` records of the active
   * generation of every live (not trashed) session whose stored text contains `needle` with
   * ASCII letters of either case (k also U+212A KELVIN SIGN, s also U+017F LONG S: the
   * characters JavaScript's case-insensitive Unicode matching makes equal to them), in
   * (sessionId, seq) order — byte order of the ids — after `after`, at most `limit` and about
   * `maxBytes` of text (at least one record), `more` when the page was cut, verified
   * as readRange verifies. A superset of the hits: the core applies its own match to each.
   * Only what is committed when it is called. undefined: no SQL search here (the store is
   * encrypted, the database cannot match these bytes): the core reads every session instead.
   */
  searchCandidates?(q: CandidateQuery): Promise<CandidatePage | undefined>;
  /**
   * The next toolSeq, durable before it is returned: max(reserved so far, floor) + 1. A reserved
   * number is never handed out again, even if no tool ran.
   */
  reserveToolSeq(fence: Fence, floor: number): Promise<number>;
  readonly blobs: BlobStore;
  readonly state: StateStore;
  /**
   * Calls `poke` whenever the session may have changed (committed here or by another process):
   * a hint only, subscribers re-read by seq. Returns the unsubscribe.
   */
  changes(sessionId: string, poke: () => void): () => void;
  /** The session a path names (its directory or journal), or an error when paths name no session here. */
  sessionIdOfPath(path: string): string;
  /** Loads, while the client is idle, what the first write open will need. */
  warmUp?(): void;
  /**
   * A backend's own second net under the core's gate, in the one place its bytes leave
   * (PostgreSQL: every statement's parameters): `find` names the rule a registered secret
   * matches in a text, and the backend refuses (SecretRejected, nothing sent) what it finds.
   * Installed once by the core, over the secrets it gates against.
   */
  secondNet?(find: (text: string) => string | undefined, findInBytes?: (bytes: Buffer) => string | undefined): void;
  /** Closes everything the backend holds; held leases become takeable. */
  close(): Promise<void>;
  /** Test seam: drops every lease and handle as a killed process would (nothing released cleanly). */
  abandon?(): void;
}

/**
 * One whole session as `session-sidecar migrate` moves it from one backend to another: exported
 * by the source, imported by the destination in one atomic step, exported again from there and
 * compared. Texts are exactly as stored (the header without any journal envelope; records and
 * state values as the secret gate checked them); no backend rewrites them. (Each backend's
 * transfer primitives are its own, beside the port: src/migrate/ends.ts.)
 */
export interface SessionBundle {
  header: SealedHeader;
  /** In the trash (deleted, not purged). */
  trashed: boolean;
  /** Oldest first; the last is the active generation, the others archived (compaction history). */
  generations: BundleGeneration[];
  /** State values, by key, as stored (`{"value":...}\n`). */
  state: Array<{ key: string; text: string }>;
}

export interface BundleGeneration {
  generation: number;
  /** Archived generations: the seq the next generation's checkpoint stands for. */
  throughSeq?: number;
  records: SealedRecord[];
}
