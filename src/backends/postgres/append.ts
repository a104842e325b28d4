/**
 * The append statement: the batches of one or more sessions committed in ONE statement (one
 * round trip, its own transaction), each with the snapshot it leaves. groupCommit.ts decides
 * which batches go together; the core's commit queue sends one batch per session at a time.
 *
 * The statement (autocommit: it is its own transaction):
 *   - UPDATE sessions ... FROM the members WHERE session_id = ANY(the members' ids) (so the rows
 *     are found by the primary key whatever the planner thinks of unnest) AND generation = g AND last_seq = expected AND not
 *     trashed AND writer_token = the member's token — the fence (fence.ts): no lease row is
 *     locked, and each member's row is checked against its own fence;
 *   - INSERT the records of exactly the members whose row advanced (exact text + crc).
 * It returns once COMMIT is done (synchronous_commit = on: the WAL is flushed first); then the
 * hint goes out (notify.ts), never inside the transaction. A member whose row did not advance
 * had nothing written; a second read says why (LeaseLost, SessionNotFound or Conflict). An
 * ERROR from the server rolled everything back (outcome notWritten); a connection that broke
 * while the statement ran leaves the outcome `unknown`: then `confirmBatch` tells, once the
 * database is back, whether a member's batch landed (all members did, or none).
 */
import { PgBackendError } from './errors.js';
import { leaseLost } from './fence.js';
import type { PgConnections, Tx } from './pool.js';
import { recordCrc, type Fence, type Position, type SealedRecord, type Snapshot } from './types.js';

const APPEND_MANY = `
WITH batch AS (
  SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::bigint[],
                       $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
    AS b(session_id, generation, expect_seq, token, last_seq, last_ts, n, bytes, turn_text, runtime_text, first_message, last_message, header_state, usage_text)
), advanced AS (
  UPDATE sessions s SET last_seq = b.last_seq, last_ts = b.last_ts, record_count = s.record_count + b.n, stored_bytes = s.stored_bytes + b.bytes,
         turn_text = b.turn_text, runtime_text = b.runtime_text, first_message = b.first_message, last_message = b.last_message,
         header_state = b.header_state, usage_text = b.usage_text, updated_at = now()
    FROM batch b
   WHERE s.session_id = ANY($1::text[]) AND s.session_id = b.session_id AND s.generation = b.generation AND s.last_seq = b.expect_seq AND s.trashed_at IS NULL AND s.writer_token = b.token
  RETURNING s.session_id
), stored AS (
  INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
  SELECT r.* FROM unnest($15::text[], $16::int[], $17::bigint[], $18::text[], $19::text[], $20::text[], $21::text[])
           AS r(session_id, generation, seq, ts, kind, text, crc)
   WHERE r.session_id IN (SELECT session_id FROM advanced)
  RETURNING 1
)
SELECT ARRAY(SELECT session_id FROM advanced) AS advanced`;

/** The same for one member (a lone writer's statement: no unnest of the members, no join). */
const APPEND_ONE = `
WITH advanced AS (
  UPDATE sessions SET last_seq = $5, last_ts = $6, record_count = record_count + $7, stored_bytes = stored_bytes + $8,
         turn_text = $9, runtime_text = $10, first_message = $11, last_message = $12, header_state = $13, usage_text = $14, updated_at = now()
   WHERE session_id = $1 AND generation = $2 AND last_seq = $3 AND trashed_at IS NULL AND writer_token = $4
   RETURNING session_id
), stored AS (
  INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
  SELECT $1, $2, r.* FROM unnest($15::bigint[], $16::text[], $17::text[], $18::text[], $19::text[]) AS r
   WHERE EXISTS (SELECT 1 FROM advanced)
  RETURNING 1
)
SELECT ARRAY(SELECT session_id FROM advanced) AS advanced`;

/** One session's batch: its records (seqs following at.lastSeq), the snapshot they leave, its fence. */
export interface AppendMember {
  fence: Fence;
  records: readonly SealedRecord[];
  after: Snapshot;
  at: Position;
}

/** The member's records must follow its position one by one (checked before anything is sent). */
export function checkMember(m: AppendMember): void {
  if (m.records.length === 0) throw new PgBackendError('InvalidArgument', 'an append needs at least one record', { path: 'records' });
  m.records.forEach((r, i) => {
    if (r.seq !== m.at.lastSeq + 1 + i) throw new PgBackendError('InvalidArgument', 'record seqs must follow expect.lastSeq one by one', { path: `records[${i}].seq` });
  });
}

/** Sends the members' batches as one statement; resolves with the sessions whose row advanced (their records are committed). */
export async function appendMany(conns: PgConnections, members: readonly AppendMember[]): Promise<Set<string>> {
  if (members.length === 1) return appendOne(conns, members[0]!);
  const col = <T>(f: (m: AppendMember) => T) => members.map(f);
  const recs = members.flatMap((m) => m.records.map((r) => ({ m, r })));
  const rows = await conns.writeStatement<{ advanced: string[] }>(APPEND_MANY, [
    col((m) => m.fence.sessionId), col((m) => m.at.generation), col((m) => m.at.lastSeq), col((m) => m.fence.token),
    col((m) => m.records[m.records.length - 1]!.seq), col((m) => m.records[m.records.length - 1]!.ts), col((m) => m.records.length),
    col((m) => m.records.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0)),
    col((m) => m.after.turn ?? null), col((m) => m.after.runtime ?? null), col((m) => m.after.firstMessage ?? null),
    col((m) => m.after.lastMessage ?? null), col((m) => m.after.header ?? null), col((m) => m.after.usage ?? null),
    recs.map(({ m }) => m.fence.sessionId), recs.map(({ m }) => m.at.generation), recs.map(({ r }) => r.seq), recs.map(({ r }) => r.ts),
    recs.map(({ r }) => r.kind), recs.map(({ r }) => r.text), recs.map(({ m, r }) => recordCrc(m.fence.sessionId, r)),
  ], 'ss_append_many_v5');
  // The INSERT takes exactly the advanced members' records (its rows, or the statement fails).
  return new Set(rows[0]!.advanced);
}

async function appendOne(conns: PgConnections, m: AppendMember): Promise<Set<string>> {
  const sessionId = m.fence.sessionId;
  const recs = m.records;
  const last = recs[recs.length - 1]!;
  const rows = await conns.writeStatement<{ advanced: string[] }>(APPEND_ONE, [
    sessionId, m.at.generation, m.at.lastSeq, m.fence.token, last.seq, last.ts, recs.length, recs.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0),
    m.after.turn ?? null, m.after.runtime ?? null, m.after.firstMessage ?? null, m.after.lastMessage ?? null, m.after.header ?? null, m.after.usage ?? null,
    recs.map((r) => r.seq), recs.map((r) => r.ts), recs.map((r) => r.kind), recs.map((r) => r.text), recs.map((r) => recordCrc(sessionId, r)),
  ], 'ss_append_one_v5');
  return new Set(rows[0]!.advanced);
}

/** The UPDATE matched nothing (so nothing was written): the fence, the session, or its position. */
export async function whyNotAppended(conns: PgConnections, fence: Fence): Promise<PgBackendError> {
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
