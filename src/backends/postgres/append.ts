/**
 * persist: records of one session committed in ONE transaction, with the snapshot they leave.
 *
 * The core's commit queue calls it one batch at a time per session (its group commit gathers
 * the requests that arrived meanwhile into that batch), so there is no queue here. Inside the
 * transaction:
 *   1. checkFence: the lease token is still ours (row share-locked until COMMIT);
 *   2. UPDATE sessions ... WHERE generation = g AND last_seq = expected AND not trashed;
 *   3. INSERT every record (exact text + crc);
 *   4. pg_notify(channel, sessionId) — delivered only if the transaction commits.
 * Then COMMIT (synchronous_commit = on: the WAL is flushed before COMMIT returns), then it
 * resolves. Any failure stores nothing — unless the connection broke during COMMIT
 * (Unavailable with outcome `unknown`): then `confirmBatch` tells, once the database is back,
 * whether it landed.
 */
import { PgBackendError } from './errors.js';
import { checkFence } from './leases.js';
import type { PgConnections, Tx } from './pool.js';
import { recordCrc, type Fence, type Position, type SealedRecord, type Snapshot } from './types.js';

export async function persistBatch(
  conns: PgConnections, channel: string, fence: Fence, recs: readonly SealedRecord[], after: Snapshot, at: Position,
): Promise<void> {
  if (recs.length === 0) throw new PgBackendError('InvalidArgument', 'an append needs at least one record', { path: 'records' });
  recs.forEach((r, i) => {
    if (r.seq !== at.lastSeq + 1 + i) throw new PgBackendError('InvalidArgument', 'record seqs must follow expect.lastSeq one by one', { path: `records.${i}.seq` });
  });
  await conns.transaction((tx) => commitBatch(tx, channel, fence, recs, after, at));
}

async function commitBatch(tx: Tx, channel: string, fence: Fence, recs: readonly SealedRecord[], after: Snapshot, at: Position): Promise<void> {
  const sessionId = fence.sessionId;
  const lastRec = recs[recs.length - 1]!;
  await checkFence(tx, fence);
  const bytes = recs.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0);
  const updated = await tx.query(
    `UPDATE sessions SET last_seq = $4, last_ts = $5, record_count = record_count + $6, stored_bytes = stored_bytes + $7,
            turn_text = $8, runtime_text = $9, first_message = $10, last_message = $11, header_state = $12, usage_text = $13, updated_at = now()
      WHERE session_id = $1 AND generation = $2 AND last_seq = $3 AND trashed_at IS NULL RETURNING 1`,
    [sessionId, at.generation, at.lastSeq, lastRec.seq, lastRec.ts, recs.length, bytes,
      after.turn, after.runtime, after.firstMessage, after.lastMessage, after.header, after.usage],
  );
  if (updated.length === 0) throw await whyNotUpdated(tx, sessionId);
  await tx.query(
    `INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
     SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])`,
    [sessionId, at.generation, recs.map((r) => r.seq), recs.map((r) => r.ts), recs.map((r) => r.kind),
      recs.map((r) => r.text), recs.map((r) => recordCrc(sessionId, r))],
  );
  await tx.query('SELECT pg_notify($1, $2)', [channel, sessionId]);
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
export async function confirmBatch(conns: PgConnections, sessionId: string, generation: number, last: SealedRecord): Promise<'committed' | 'absent'> {
  const rows = await conns.query<{ crc: string }>('SELECT crc FROM records WHERE session_id = $1 AND generation = $2 AND seq = $3', [sessionId, generation, last.seq]);
  if (rows.length === 0) return 'absent';
  if (rows[0]!.crc !== recordCrc(sessionId, last)) return 'absent';
  return 'committed';
}
