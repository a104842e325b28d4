/**
 * The seam between the engine (the domain: secrets, turns, counters, compaction and fork
 * rules, cursors, the commit queue) and a persistence backend. A backend keeps bytes and
 * guarantees durability, identity and fencing; it never interprets record text.
 *
 * Types only: the PostgreSQL backend (src/backends/postgres) speaks exactly these; the file
 * backend (src/backends/file/journal, src/backends/file/fileStore.ts) still speaks journal lines and byte
 * positions internally and meets the engine through the functions of src/engine/ (see
 * src/engine/README.md for what is shared and what is not yet).
 */

/** A record ready to store: `text` is exactly the JSON the secret gate checked; never rewritten. */
export interface SealedRecord {
  seq: number;
  ts: string;
  kind: string;
  text: string;
}

/** The header of a session exactly as sealed (the JSON text the secret gate checked). */
export interface SealedHeader {
  sessionId: string;
  createdAt: string;
  text: string;
}

/** Who holds a lease: shown in `SessionLocked`. */
export interface LeaseHolder {
  host: string;
  pid: number;
  sidecarId: string;
}

/** Proof of holding a session's lease; its token is checked inside every write transaction. */
export interface Fence {
  sessionId: string;
  token: number;
}

/**
 * What the engine derives from the records (turn, runtime counters, summaries) and the
 * backend stores beside them in the same transaction, so `open` need not replay everything.
 * The texts are the engine's own serialisation (already through the secret gate); a backend
 * never parses them.
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

export interface SessionRow {
  sessionId: string;
  headerText: string;
  createdAt: string;
  /** When the session last changed (ISO, database clock). */
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
}

export interface ArchivedGeneration {
  generation: number;
  firstSeq: number;
  lastSeq: number;
  throughSeq: number;
  records: number;
  storedBytes: number;
}

/**
 * One whole session as `session-sidecar migrate` moves it from one backend to another: exported
 * by the source, imported by the destination in one atomic step, exported again from there and
 * compared. Texts are exactly as stored (the header without any journal envelope; records and
 * state values as the secret gate checked them); no backend rewrites them.
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
