/**
 * Idempotent retries of session/create (`idempotencyKey`), once for every backend.
 *
 * Where the key lives: as the header's member `idempotency` — `{"key", "digest", "redactions"?}`
 * — written in the creation's own durable write (the journal's header line, the row insert, the
 * memory backend's map), so a crash keeps the key exactly when it keeps the session. `digest`
 * is the SHA-256 of the header's fields as stored (after redaction; no id, no time): a retry must
 * repeat them. Nothing of the key is shown in results (SessionHeader's `idempotency` is dropped
 * wherever a header is shown or copied: a fork never inherits it).
 *
 * Scope: the store, live sessions only: deleting the session frees its key.
 *
 * Lookup: creates with one key run one at a time in this process (`oneAtATime`), so a retry
 * pipelined behind its original, or sent after a timeout, waits for it and then finds it here.
 * Otherwise the store's live sessions are searched in session/list order, the backend narrowing
 * by the stamp's exact text where it can (PostgreSQL's query). The first search of a process
 * reads every row; later ones only rows updated since a margin before the previous search began
 * (rows come newest first), since any session another process created since then is among them.
 *
 * The one case it cannot tell: two live processes creating with the same key at the same moment
 * (there is no store-wide lock; a retry after a crash, a timeout or an Uncertain is what a key is
 * for, and each of those finds its original).
 */
import { StoreError } from '../../domain/errors.js';
import type { Redaction, SessionHeader } from '../../domain/types.js';
import type { ListedRow, UpdateCursor } from '../port.js';
import type { Core } from './context.js';
import { digestOf } from './idempotency.js';

export interface CreateStamp {
  key: string;
  digest: string;
  /** The header's redactions (seq 0), as the original answered them. */
  redactions?: Redaction[];
}

/** A session another process may create while a search runs is at most this much older than its start. */
const CLOCK_MARGIN_MS = 5 * 60_000;
const PAGE = 500;

/** The digest of a header's stored fields (what a retry must repeat exactly). */
export function createDigest(fields: object): string {
  return digestOf(['session/create', JSON.stringify(fields)]);
}

/** The original of `key` in this store's live sessions: its id, createdAt and stamp. */
export async function findCreated(c: Core, key: string): Promise<{ sessionId: string; createdAt: string; stamp: CreateStamp } | undefined> {
  const started = c.clock();
  const cutoff = c.createKeysSearchedFrom;
  const fragment = `"idempotency":{"key":${JSON.stringify(key)},`;
  let before: UpdateCursor | undefined;
  // Only a search that read every row it had to moves the cutoff (one that found its key early did not).
  const searched = () => { c.createKeysSearchedFrom = new Date(started - CLOCK_MARGIN_MS).toISOString(); };
  for (;;) {
    const rows = await c.backend.listByUpdate({ ...(before ? { before } : {}), limit: PAGE, includeTrashed: false, narrow: { headerContains: [fragment] } });
    for (const row of rows) {
      if (cutoff !== undefined && updatedAtOf(row) < cutoff) return void searched();
      if (!row.headerText.includes(fragment)) continue;
      const stamp = (JSON.parse(row.headerText) as SessionHeader).idempotency;
      if (stamp?.key === key) return { sessionId: row.sessionId, createdAt: row.createdAt, stamp };
    }
    if (rows.length < PAGE) return void searched();
    const last = rows[rows.length - 1] as ListedRow;
    before = { updatedAt: updatedAtOf(last), sessionId: last.sessionId };
  }
}

/** As session/list orders rows: the later of the last record's ts and createdAt. */
function updatedAtOf(row: ListedRow): string {
  return row.lastTs !== null && row.lastTs > row.createdAt ? row.lastTs : row.createdAt;
}

/** The refusal of a key already used for a session created with other params (nothing is written). */
export function createKeyReused(sessionId: string): StoreError {
  return new StoreError('Conflict', `idempotencyKey was used to create another session (${sessionId}) with other params; nothing was written`, {
    reason: 'idempotencyKeyReused', sessionId,
  });
}
