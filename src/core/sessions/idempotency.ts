/**
 * Idempotent retries of session/append (`idempotencyKey`), once for every backend.
 *
 * Where the key lives: as the store's member `idempotency` of the first record the client sent
 * in that append — `{"key", "digest", "firstSeq", "lastSeq", "redactions"?}`, the original
 * answer — written in the same durable write as the records it stands for. A crash therefore
 * keeps the key exactly when it keeps the records: there is no second place that could disagree.
 * `digest` is the SHA-256 of the request's records as prepared (after redaction and blob
 * extraction, before the commit-time layout): the same text the journal holds, so it tells
 * nothing a reader of the journal does not know already.
 *
 * Scope: per session. Kept as long as the record holding it is in the session's active
 * generation: a compaction that folds the record into its checkpoint drops the key (the records
 * after throughSeq are copied as stored, keys included).
 *
 * Lookup: per open session (LiveSession) a map key -> original answer, filled as appends commit
 * in this process; on the first miss the active generation's records are scanned once (every key
 * of the generation then is in the map), so a retry after a crash — a new process, a new open —
 * finds what the old process wrote. A retry arriving while its original is still committing in
 * this process waits for it (`pending`) and answers what it answers.
 */
import { createHash } from 'node:crypto';
import { StoreError } from '../../domain/errors.js';
import { guardValue } from '../../domain/secrets/gate.js';
import type { SecretSet } from '../../domain/secrets/knownSecrets.js';
import type { AppendResult } from '../../domain/types.js';
import type { SealedRecord } from '../port.js';

/** The store's member holding the key (reserved: a client's record never carries it). */
export const IDEMPOTENCY_MEMBER = 'idempotency';
export const MAX_IDEMPOTENCY_KEY = 128;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
const MARK = `"${IDEMPOTENCY_MEMBER}":{`;

export interface Stamp {
  key: string;
  digest: string;
  firstSeq: number;
  lastSeq: number;
  redactions?: AppendResult['redactions'];
}

/**
 * Refuses a key that is not 1..128 printable ASCII characters (InvalidArgument), or that holds
 * a secret: it is a client text stored to disk, so it passes the secret walk like every record
 * text — a registered secret is refused (SecretRejected) and so is a well-known credential
 * (a key is never stored redacted: a redacted key would not find its original).
 */
export function checkIdempotencyKey(key: string, secrets: SecretSet): void {
  if (typeof key !== 'string' || key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY || !PRINTABLE_ASCII.test(key)) {
    throw new StoreError('InvalidArgument', `idempotencyKey must be 1..${MAX_IDEMPOTENCY_KEY} printable ASCII characters`, { path: 'idempotencyKey' });
  }
  const guarded = guardValue(key, secrets, 'idempotencyKey');
  if (guarded.redactions.length > 0) {
    throw new StoreError('SecretRejected', 'idempotencyKey looks like a credential; nothing was written', { path: 'idempotencyKey', rule: guarded.redactions[0]?.rule });
  }
}

/** The digest of a request's prepared record texts (what a retry must repeat exactly). */
export function digestOf(texts: readonly string[]): string {
  const h = createHash('sha256');
  for (const t of texts) h.update(`${t.length}:${t}\n`);
  return h.digest('base64url');
}

/** `text` (a record's JSON, an object) with the stamp as its last member. */
export function stamped(text: string, stamp: Stamp): string {
  return `${text.slice(0, -1)},${JSON.stringify(IDEMPOTENCY_MEMBER)}:${JSON.stringify(stamp)}}`;
}

/** The original answer of a stamp. */
export function answerOf(stamp: Stamp): AppendResult {
  return { firstSeq: stamp.firstSeq, lastSeq: stamp.lastSeq, ...(stamp.redactions && stamp.redactions.length > 0 ? { redactions: stamp.redactions } : {}) };
}

/** The refusal of a key already used for an append of other records (nothing is written). */
export function reusedError(key: string, stamp: Stamp): StoreError {
  void key; // never echoed: the message and data name the original append only
  return new StoreError('Conflict', `idempotencyKey was used for another append (seqs ${stamp.firstSeq}..${stamp.lastSeq}); nothing was written`, {
    reason: 'idempotencyKeyReused', firstSeq: stamp.firstSeq, lastSeq: stamp.lastSeq,
  });
}

/** The keys of one open session: committed ones, and those still committing in this process. */
export class IdempotencyIndex {
  private readonly committed = new Map<string, Stamp>();
  private readonly pending = new Map<string, { digest: string; done: Promise<Stamp | undefined> }>();
  private scanned = false;

  /**
   * The stamp (or in-flight original) of `key`, or undefined when no append of this session's
   * active generation used it. `scan`: visits the active generation's committed records (run once).
   */
  async find(key: string, scan: (visit: (r: SealedRecord) => void) => Promise<void>): Promise<Stamp | { digest: string; done: Promise<Stamp | undefined> } | undefined> {
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const hit = this.committed.get(key);
    if (hit || this.scanned) return hit;
    await scan((r) => {
      const stamp = stampOf(r.text);
      if (stamp && !this.committed.has(stamp.key)) this.committed.set(stamp.key, stamp);
    });
    this.scanned = true;
    return this.pending.get(key) ?? this.committed.get(key);
  }

  /** `key` is committing (its original's outcome decides what a retry meanwhile answers). */
  begin(key: string, digest: string, commit: Promise<Stamp>): void {
    const done = commit.then((stamp) => {
      this.committed.set(key, stamp); // set before pending is dropped: a retry always finds one
      return stamp;
    }, () => undefined).finally(() => {
      if (this.pending.get(key)?.done === done) this.pending.delete(key);
    });
    this.pending.set(key, { digest, done });
  }
}

/** The stamp a stored record's text carries at its top level, if any. */
export function stampOf(text: string): Stamp | undefined {
  if (!text.includes(MARK)) return undefined; // a member inside a string value is escaped (\"): no false hit
  const value = JSON.parse(text) as Record<string, unknown>;
  const s = value[IDEMPOTENCY_MEMBER] as Stamp | undefined;
  return s && typeof s === 'object' && typeof s.key === 'string' ? s : undefined;
}
