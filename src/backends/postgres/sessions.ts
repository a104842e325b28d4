/**
 * Session-level operations: create, load, readRange, rotate (compaction), history, list,
 * trash/restore/purge. Appends are in append.ts; leases in leases.ts.
 *
 * Reads verify before returning: the header's crc, every record's crc (over session id, seq,
 * ts, kind and exact text) and, for unfiltered reads, that seqs follow one by one. Damage is
 * `Corrupt` naming generation and seq; a damaged record is never returned.
 */
import { whyNotUpdated } from './append.js';
import { BLOB_GRACE_MS, blobsOf, deleteUnreferenced } from './blobGc.js';
import { PgBackendError } from './errors.js';
import { checkFence, checkLeaseFence } from './fence.js';
import type { PgConnections, Tx } from './pool.js';
import {
  recordCrc, textCrc, type ArchivedGeneration, type Fence, type ReadRangeOptions, type ReadRangeResult, type SealedHeader, type SealedRecord, type SessionRow,
  type Snapshot,
} from './types.js';
import type { ListNarrowing, TrashedSession } from '../../core/port.js';
import { NEEDLE, needlePattern } from './search.js';

export const EMPTY_SNAPSHOT: Snapshot = { turn: null, runtime: null, usage: null, firstMessage: null, lastMessage: null, header: null };

interface DbSession {
  session_id: string; header_text: string; header_crc: string; created_at: string; updated_at: Date;
  generation: number; first_seq: string; last_seq: string; last_ts: string | null; record_count: string;
  stored_bytes: string; turn_text: string | null; runtime_text: string | null; usage_text: string | null; first_message: string | null;
  last_message: string | null; trashed: boolean; tool_seq: string; header_state: string | null;
}

const SESSION_COLUMNS = `session_id, header_text, header_crc, created_at, updated_at, generation, first_seq, last_seq, last_ts,
  record_count, stored_bytes, turn_text, runtime_text, usage_text, first_message, last_message, trashed_at IS NOT NULL AS trashed, tool_seq, header_state`;

function toRow(r: DbSession): SessionRow {
  if (r.header_crc !== textCrc(r.session_id, r.header_text)) {
    throw new PgBackendError('Corrupt', 'the session header fails its checksum', { sessionId: r.session_id, seq: 0 });
  }
  return {
    sessionId: r.session_id, headerText: r.header_text, createdAt: r.created_at, updatedAt: r.updated_at.toISOString(),
    generation: r.generation, firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq), lastTs: r.last_ts,
    records: Number(r.record_count), storedBytes: Number(r.stored_bytes), trashed: r.trashed, toolSeq: Number(r.tool_seq),
    snapshot: { turn: r.turn_text, runtime: r.runtime_text, usage: r.usage_text, firstMessage: r.first_message, lastMessage: r.last_message, header: r.header_state },
  };
}

export async function createSession(conns: PgConnections, header: SealedHeader, initial: readonly SealedRecord[], after: Snapshot, fence?: Fence): Promise<void> {
  // Seqs follow one by one from 1 — or from a checkpoint's seq (a fork of a compacted session
  // starts at the checkpoint it copies, which is then the new session's first record).
  const firstSeq = initial[0]?.seq ?? 1;
  initial.forEach((r, i) => {
    if (r.seq !== firstSeq + i || (i === 0 && firstSeq !== 1 && r.kind !== 'checkpoint')) {
      throw new PgBackendError('InvalidArgument', 'initial record seqs must be 1, 2, ... (or start at a checkpoint)', { path: `initial[${i}].seq` });
    }
  });
  const last = initial[initial.length - 1];
  await conns.transaction(async (tx) => {
    if (fence) await checkLeaseFence(tx, fence);
    const bytes = initial.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0);
    const ins = await tx.query(
      `INSERT INTO sessions (session_id, header_text, header_crc, created_at, last_seq, last_ts, record_count, stored_bytes,
              turn_text, runtime_text, first_message, last_message, first_seq, header_state, usage_text, writer_token)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT (session_id) DO NOTHING RETURNING 1`,
      [header.sessionId, header.text, textCrc(header.sessionId, header.text), header.createdAt, last?.seq ?? 0, last?.ts ?? null,
        initial.length, bytes, after.turn, after.runtime, after.firstMessage, after.lastMessage, firstSeq, after.header, after.usage, fence?.token ?? null],
    );
    if (ins.length === 0) throw new PgBackendError('Conflict', 'a session with this id exists already; nothing was written', { reason: 'exists', sessionId: header.sessionId });
    if (initial.length > 0) {
      await tx.query(
        `INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
         SELECT $1, 0, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])`,
        [header.sessionId, initial.map((r) => r.seq), initial.map((r) => r.ts), initial.map((r) => r.kind), initial.map((r) => r.text),
          initial.map((r) => recordCrc(header.sessionId, r))],
      );
    }
  });
}

/**
 * The session row (header verified), or SessionNotFound. Trashed sessions load with trashed: true.
 * `conns`: the pool (autocommit), or one transaction's connection (several reads of one snapshot: verify).
 */
export async function loadSession(conns: Tx, sessionId: string): Promise<SessionRow> {
  const rows = await conns.query<DbSession>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = $1`, [sessionId]);
  if (!rows[0]) throw new PgBackendError('SessionNotFound', 'no such session', { sessionId });
  return toRow(rows[0]);
}

export async function readRange(conns: Tx, sessionId: string, o: ReadRangeOptions): Promise<ReadRangeResult> {
  const s = await loadSession(conns, sessionId);
  let generation = s.generation;
  let firstSeq = s.firstSeq;
  let lastSeq = s.lastSeq;
  if (o.generation !== undefined && o.generation !== s.generation) {
    const g = await conns.query<{ first_seq: string; last_seq: string }>(
      'SELECT first_seq, last_seq FROM archived_generations WHERE session_id = $1 AND generation = $2', [sessionId, o.generation]);
    if (!g[0]) throw new PgBackendError('InvalidArgument', 'no such generation', { path: 'generation' });
    generation = o.generation;
    firstSeq = Number(g[0].first_seq);
    lastSeq = Number(g[0].last_seq);
  }
  const after = Math.max(o.afterSeq ?? 0, firstSeq - 1);
  const rows = await conns.query<{ seq: string; ts: string; kind: string; text: string; crc: string }>(
    `SELECT seq, ts, kind, text, crc FROM records
      WHERE session_id = $1 AND generation = $2 AND seq > $3 AND seq <= $4 ${o.kinds ? 'AND kind = ANY($6::text[])' : ''}
      ORDER BY seq LIMIT $5`,
    [sessionId, generation, after, lastSeq, o.limit, ...(o.kinds ? [o.kinds] : [])],
  );
  const records: SealedRecord[] = [];
  let bytes = 0;
  let expectSeq = after + 1;
  for (const row of rows) {
    const r: SealedRecord = { seq: Number(row.seq), ts: row.ts, kind: row.kind, text: row.text };
    if (row.crc !== recordCrc(sessionId, r)) {
      throw new PgBackendError('Corrupt', `record ${r.seq} of generation ${generation} fails its checksum`, { sessionId, generation, seq: r.seq });
    }
    if (!o.kinds && r.seq !== expectSeq) {
      throw new PgBackendError('Corrupt', `record ${expectSeq} of generation ${generation} is missing`, { sessionId, generation, seq: expectSeq });
    }
    expectSeq = r.seq + 1;
    if (o.maxBytes !== undefined && records.length > 0 && bytes + Buffer.byteLength(r.text, 'utf8') > o.maxBytes) break;
    records.push(r);
    bytes += Buffer.byteLength(r.text, 'utf8');
  }
  const full = rows.length < o.limit && records.length === rows.length;
  if (!o.kinds && full && expectSeq !== lastSeq + 1 && lastSeq > after) {
    throw new PgBackendError('Corrupt', `record ${expectSeq} of generation ${generation} is missing`, { sessionId, generation, seq: expectSeq });
  }
  const scannedSeq = full ? Math.max(lastSeq, after) : records.length > 0 ? records[records.length - 1]!.seq : after;
  return { generation, records, scannedSeq, lastSeq };
}

/**
 * Compaction in one transaction: the active generation g stays stored as archived generation
 * g; generation g+1 is the checkpoint (seq = throughSeq) followed by copies of g's records
 * after throughSeq, crc copied verbatim (so damage stays detectable, never laundered).
 */
export async function rotate(
  conns: PgConnections, sessionId: string,
  p: { throughSeq: number; checkpoint: SealedRecord; expect: { lastSeq: number; generation: number }; fence: Fence },
): Promise<{ generation: number; archived: ArchivedGeneration }> {
  if (p.checkpoint.seq !== p.throughSeq) throw new PgBackendError('InvalidArgument', 'the checkpoint carries seq throughSeq', { path: 'checkpoint.seq' });
  return conns.transaction(async (tx) => {
    await checkFence(tx, p.fence, 'update');
    const rows = await tx.query<DbSession>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = $1 FOR UPDATE`, [sessionId]);
    const s = rows[0] && !rows[0].trashed ? toRow(rows[0]) : undefined;
    if (!s || s.generation !== p.expect.generation || s.lastSeq !== p.expect.lastSeq) throw await whyNotUpdated(tx, sessionId);
    if (p.throughSeq < s.firstSeq || p.throughSeq > s.lastSeq) {
      throw new PgBackendError('OutOfRange', `throughSeq must be between ${s.firstSeq} and ${s.lastSeq}`, { path: 'throughSeq', min: s.firstSeq, max: s.lastSeq });
    }
    const g = s.generation;
    const archived: ArchivedGeneration = { generation: g, firstSeq: s.firstSeq, lastSeq: s.lastSeq, throughSeq: p.throughSeq, records: s.records, storedBytes: s.storedBytes };
    await tx.query(
      `INSERT INTO archived_generations (session_id, generation, first_seq, last_seq, through_seq, record_count, stored_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [sessionId, g, archived.firstSeq, archived.lastSeq, archived.throughSeq, archived.records, archived.storedBytes],
    );
    const cp = p.checkpoint;
    await tx.query('INSERT INTO records (session_id, generation, seq, ts, kind, text, crc) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [sessionId, g + 1, cp.seq, cp.ts, cp.kind, cp.text, recordCrc(sessionId, cp)]);
    const copied = await tx.query<{ n: string; bytes: string | null }>(
      `WITH c AS (INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
                  SELECT session_id, $2, seq, ts, kind, text, crc FROM records WHERE session_id = $1 AND generation = $3 AND seq > $4
                  RETURNING text)
       SELECT count(*) AS n, sum(octet_length(text)) AS bytes FROM c`,
      [sessionId, g + 1, g, p.throughSeq],
    );
    await tx.query(
      `UPDATE sessions SET generation = $2, first_seq = $3, record_count = $4, stored_bytes = $5, updated_at = now() WHERE session_id = $1`,
      [sessionId, g + 1, p.throughSeq, 1 + Number(copied[0]!.n), Buffer.byteLength(cp.text, 'utf8') + Number(copied[0]!.bytes ?? 0)],
    );
    return { generation: g + 1, archived };
  });
}

export async function history(conns: PgConnections, sessionId: string): Promise<ArchivedGeneration[]> {
  await loadSession(conns, sessionId);
  const rows = await conns.query<{ generation: number; first_seq: string; last_seq: string; through_seq: string; record_count: string; stored_bytes: string }>(
    'SELECT * FROM archived_generations WHERE session_id = $1 ORDER BY generation', [sessionId]);
  return rows.map((r) => ({
    generation: r.generation, firstSeq: Number(r.first_seq), lastSeq: Number(r.last_seq), throughSeq: Number(r.through_seq),
    records: Number(r.record_count), storedBytes: Number(r.stored_bytes),
  }));
}

/**
 * A session's updatedAt as the store shows it (core/sessions/read.ts summaryOfRow: the later of its last
 * record's ts and its createdAt), compared byte by byte as JavaScript compares these ASCII
 * strings — never by the database's collation. Not indexed (migration 6 dropped migration 4's
 * index over it): it changes on every commit, and an index over it would make every append's
 * row update a non-HOT one. A page is a scan of the live rows with a top-N sort (LIMIT): the
 * same rows in the same order, computed from the rows themselves, so never stale.
 */
const UPDATED_AT = 'GREATEST(COALESCE(last_ts, created_at) COLLATE "C", created_at COLLATE "C")';

/**
 * Rows in session/list order (updatedAt, then session id, newest first) after the cursor's
 * (updatedAt, sessionId), at most `limit`; live rows only unless `includeTrashed`.
 */
export async function listByUpdate(
  conns: PgConnections, o: { before?: { updatedAt: string; sessionId: string }; limit: number; includeTrashed: boolean; narrow?: ListNarrowing },
): Promise<SessionRow[]> {
  const where = [o.includeTrashed ? 'TRUE' : 'trashed_at IS NULL'];
  const args: unknown[] = [];
  if (o.before) {
    args.push(o.before.updatedAt, o.before.sessionId);
    where.push(`(${UPDATED_AT}, session_id COLLATE "C") < ($1 COLLATE "C", $2 COLLATE "C")`);
  }
  // The core's filter in SQL where it can be (port.ts ListNarrowing): only rows it may keep come back.
  const n = o.narrow;
  if (n?.updatedAfter !== undefined) where.push(`${UPDATED_AT} > $${args.push(n.updatedAfter)} COLLATE "C"`);
  if (n?.updatedBefore !== undefined) where.push(`${UPDATED_AT} < $${args.push(n.updatedBefore)} COLLATE "C"`);
  for (const text of n?.headerContains ?? []) {
    const at = args.push(text);
    where.push(`(strpos(header_text, $${at}) > 0 OR strpos(COALESCE(header_state, ''), $${at}) > 0)`);
  }
  if (n?.needle !== undefined && NEEDLE.test(n.needle)) {
    where.push(`concat_ws(' ', header_text, header_state, first_message, last_message) ~ $${args.push(needlePattern(n.needle, 'lower'))}`);
  }
  args.push(o.limit);
  const rows = await conns.query<DbSession>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE ${where.join(' AND ')} ORDER BY ${UPDATED_AT} DESC, session_id COLLATE "C" DESC LIMIT $${args.length}`,
    args,
  );
  return rows.map(toRow);
}

/**
 * The trash listing: one statement over the trashed rows only, just the columns an entry is
 * made of (no snapshot texts), each header verified. deletedAt is updated_at, which the trash
 * move sets (removeSession) and nothing else changes while a session is in the trash.
 */
export async function listTrashed(conns: PgConnections): Promise<TrashedSession[]> {
  const rows = await conns.query<{ session_id: string; header_text: string; header_crc: string; updated_at: Date; stored_bytes: string }>(
    'SELECT session_id, header_text, header_crc, updated_at, stored_bytes FROM sessions WHERE trashed_at IS NOT NULL ORDER BY session_id',
  );
  return rows.map((r) => {
    if (r.header_crc !== textCrc(r.session_id, r.header_text)) {
      throw new PgBackendError('Corrupt', 'the session header fails its checksum', { sessionId: r.session_id, seq: 0 });
    }
    return { sessionId: r.session_id, headerText: r.header_text, deletedAt: r.updated_at.toISOString(), storedBytes: Number(r.stored_bytes) };
  });
}

/** Keyset page by session id (ids are ULIDs: creation order). `after` is the last id seen. */
export async function listSessions(conns: PgConnections, o: { after?: string; limit: number; trashed?: boolean }): Promise<{ sessions: SessionRow[]; nextAfter: string | null }> {
  const rows = await conns.query<DbSession>(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE (trashed_at IS NOT NULL) = $1 AND session_id > $2 ORDER BY session_id LIMIT $3`,
    [o.trashed ?? false, o.after ?? '', o.limit + 1],
  );
  const page = rows.slice(0, o.limit).map(toRow);
  return { sessions: page, nextAfter: rows.length > o.limit ? page[page.length - 1]!.sessionId : null };
}

/**
 * trash / restore / purge, fenced by the caller's lease (purge also drops the lease row and
 * deletes the blobs only the purged session referenced: blobGc.ts).
 * purgeTrashed (trash empty): the row is deleted only while it is in the trash — the check and
 * the delete are one statement, so a restore committed first leaves it live (SessionNotFound).
 */
export async function removeSession(
  conns: PgConnections, sessionId: string, op: 'trash' | 'restore' | 'purge' | 'purgeTrashed', fence: Fence, blobGraceMs: number | null = BLOB_GRACE_MS,
): Promise<void> {
  await conns.transaction(async (tx) => {
    await checkFence(tx, fence, 'update');
    const purging = op === 'purge' || op === 'purgeTrashed';
    // Blob GC in the purge's own transaction (blobGc.ts): its candidates before its rows go.
    // None (null) where references cannot be read in SQL (sealed texts).
    const blobs = purging && blobGraceMs !== null ? await blobsOf(tx, sessionId) : [];
    const sql = {
      trash: 'UPDATE sessions SET trashed_at = now(), updated_at = now() WHERE session_id = $1 AND trashed_at IS NULL RETURNING 1',
      restore: 'UPDATE sessions SET trashed_at = NULL, updated_at = now() WHERE session_id = $1 AND trashed_at IS NOT NULL RETURNING 1',
      purge: 'DELETE FROM sessions WHERE session_id = $1 RETURNING 1',
      purgeTrashed: 'DELETE FROM sessions WHERE session_id = $1 AND trashed_at IS NOT NULL RETURNING 1',
    }[op];
    const done = await tx.query(sql, [sessionId]);
    if (done.length === 0) throw new PgBackendError('SessionNotFound', op === 'restore' || op === 'purgeTrashed' ? 'the session is not in the trash' : 'no such session', { sessionId });
    if (purging) {
      await tx.query('DELETE FROM leases WHERE session_id = $1', [sessionId]);
      await deleteUnreferenced(tx, blobs, blobGraceMs ?? Infinity);
    }
  });
}
