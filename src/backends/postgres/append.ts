/**
 * persist: records of one session committed in ONE statement (one round trip, its own
 * transaction), with the snapshot they leave.
 *
 * The core's commit queue calls it one batch at a time per session (its group commit gathers
 * the requests that arrived meanwhile into that batch), so there is no queue here. The
 * statement (autocommit: it is its own transaction):
 *   - UPDATE sessions ... WHERE generation = g AND last_seq = expected AND not trashed AND
 *     writer_token = our token — the fence (fence.ts): no lease row is locked;
 *   - INSERT every record (exact text + crc), only when that UPDATE matched.
 * It returns once COMMIT is done (synchronous_commit = on: the WAL is flushed first); then the
 * hint goes out (notify.ts), never inside the transaction. When the UPDATE matched nothing, a
 * second read says why (LeaseLost, SessionNotFound or Conflict). Any failure stores nothing —
 * unless the connection broke while the statement ran (Unavailable with outcome `unknown`):
 * then `confirmBatch` tells, once the database is back, whether it landed.
 */
import { PgBackendError } from './errors.js';
import { leaseLost } from './fence.js';
import type { PgConnections, Tx } from './pool.js';
import { recordCrc, type Fence, type Position, type SealedRecord, type Snapshot } from './types.js';

const APPEND = `
WITH advanced AS (
  UPDATE sessions SET last_seq = $5, last_ts = $6, record_count = record_count + $7, stored_bytes = stored_bytes + $8,
         turn_text = $9, runtime_text = $10, first_message = $11, last_message = $12, header_state = $13, usage_text = $14, updated_at = now()
   WHERE session_id = $1 AND generation = $2 AND last_seq = $3 AND trashed_at IS NULL AND writer_token = $4
   RETURNING 1
), stored AS (
  INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
  SELECT $1, $2, r.* FROM unnest($15::bigint[], $16::text[], $17::text[], $18::text[], $19::text[]) AS r
   WHERE EXISTS (SELECT 1 FROM advanced)
  RETURNING 1
)
SELECT (SELECT count(*) FROM advanced)::int AS advanced, (SELECT count(*) FROM stored)::int AS stored`;

export async function persistBatch(
  conns: PgConnections, fence: Fence, recs: readonly SealedRecord[], after: Snapshot, at: Position,
): Promise<void> {
  if (recs.length === 0) throw new PgBackendError('InvalidArgument', 'an append needs at least one record', { path: 'records' });
  recs.forEach((r, i) => {
    if (r.seq !== at.lastSeq + 1 + i) throw new PgBackendError('InvalidArgument', 'record seqs must follow expect.lastSeq one by one', { path: `records.${i}.seq` });
  });
  const sessionId = fence.sessionId;
  const lastRec = recs[recs.length - 1]!;
  const bytes = recs.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0);
  const rows = await conns.writeStatement<{ advanced: number; stored: number }>(APPEND, [
    sessionId, at.generation, at.lastSeq, fence.token, lastRec.seq, lastRec.ts, recs.length, bytes,
    after.turn, after.runtime, after.firstMessage, after.lastMessage, after.header, after.usage,
    recs.map((r) => r.seq), recs.map((r) => r.ts), recs.map((r) => r.kind), recs.map((r) => r.text), recs.map((r) => recordCrc(sessionId, r)),
  ], 'ss_append_v5');
  // The INSERT runs exactly when the UPDATE matched (its rows or the statement fails): advanced says it all.
  if (rows[0]!.advanced === 1) return;
  throw await whyNotAppended(conns, fence);
}

/** The UPDATE matched nothing (so nothing was written): the fence, the session, or its position. */
async function whyNotAppended(conns: PgConnections, fence: Fence): Promise<PgBackendError> {
  const rows = await conns.query<{ writer_token: string | null }>('SELECT writer_token FROM sessions WHERE session_id = $1', [fence.sessionId]);
  const row = rows[0];
  // NULL (no writer of this version yet) is Number(null) = 0, never a token (they start at 1).
  if (row && Number(row.writer_token) !== fence.token) return leaseLost(fence.sessionId);
  if (!row) {
    // No session: a fence that is not the lease's is named first, as create's check would.
    const lease = await conns.query<{ token: string; released: boolean }>('SELECT token, released_at IS NOT NULL AS released FROM leases WHERE session_id = $1', [fence.sessionId]);
    if (!lease[0] || Number(lease[0].token) !== fence.token || lease[0].released) return leaseLost(fence.sessionId);
  }
  return whyNotUpdated(conns, fence.sessionId);
}

/** Why a guarded UPDATE of a session matched no row: gone, trashed, or moved on. */
export async function whyNotUpdated(tx: Tx, sessionId: string): Promise<PgBackendError> {
  const rows = await tx.query<{ generation: number; last_seq: string; trashed: boolean }>(
    'SELECT generation, last_seq, trashed_at IS NOT NULL AS trashed FROM sessions WHERE session_id = $1',
    [sessionId],
  );
  const row = rows[0];
  if (!row || row.trashed) return new PgBackendError('SessionNotFound', 'the session does not exist (or is in the trash); nothing was written', { sessionId });
  return new PgBackendError('Conflict', 'the session changed since it was read (lastSeq or generation); nothing was written', {
    reason: 'expectedLastSeq', lastSeq: Number(row.last_seq), generation: row.generation, outcome: 'notWritten',
  });
}

/**
 * After an Unavailable with outcome `unknown`: did the batch ending with `last` commit? The
 * transaction is atomic, so its last record being stored (same crc) means all of it is.
 * 'absent' is definitive only when the connection that sent COMMIT is gone (a database
 * restart, as after a crash, guarantees that).
 */
export async function confirmBatch(
  conns: PgConnections, sessionId: string, generation: number, last: SealedRecord, open?: (stored: SealedRecord) => string,
): Promise<'committed' | 'absent'> {
  const rows = await conns.query<{ crc: string; ts: string; kind: string; text: string }>(
    'SELECT crc, ts, kind, text FROM records WHERE session_id = $1 AND generation = $2 AND seq = $3', [sessionId, generation, last.seq]);
  const row = rows[0];
  if (!row) return 'absent';
  // Sealed (fresh nonce per seal): the stored text differs from any other sealing of the same
  // record, so it is opened and compared as plaintext; its crc is still checked first.
  if (open) {
    const stored = { seq: last.seq, ts: row.ts, kind: row.kind, text: row.text };
    if (row.crc !== recordCrc(sessionId, stored)) return 'absent';
    return row.ts === last.ts && row.kind === last.kind && open(stored) === last.text ? 'committed' : 'absent';
  }
  if (row.crc !== recordCrc(sessionId, last)) return 'absent';
  return 'committed';
}
