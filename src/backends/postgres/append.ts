/**
 * appendBatch: records of one session committed in ONE transaction, with group commit.
 *
 * Calls for a session are committed in call order. While a transaction for a session is in
 * flight, further calls queue; the next transaction takes every queued call with the same
 * fence, up to GROUP_MAX_BYTES of text (pipelined batches share one transaction and COMMIT). Each call's `expect` must
 * chain onto the previous call's last seq (checked here before the transaction; a call that
 * does not chain fails Conflict alone). Inside the transaction:
 *   1. checkFence: the lease token is still ours (row share-locked until COMMIT);
 *   2. UPDATE sessions ... WHERE generation = g AND last_seq = expected AND not trashed;
 *   3. INSERT every record (exact text + crc);
 *   4. pg_notify(channel, sessionId) — delivered only if the transaction commits.
 * Then COMMIT (synchronous_commit = on: the WAL is flushed before COMMIT returns), then every
 * call of the group resolves. Any failure fails the whole group with the same mapped error
 * and nothing of it is stored — unless the connection broke during COMMIT (Unavailable with
 * outcome `unknown`): then `confirmBatch` tells, once the database is back, whether it landed.
 */
import { PgBackendError } from './errors.js';
import { checkFence } from './leases.js';
import type { PgConnections, Tx } from './pool.js';
import { recordCrc, type Fence, type SealedRecord, type Snapshot } from './types.js';

export interface AppendExpect {
  lastSeq: number;
  generation: number;
}

/** A group stops growing past this much text (bounds one transaction's statement size). */
const GROUP_MAX_BYTES = 8 << 20;

interface Pending {
  recs: SealedRecord[];
  expect: AppendExpect;
  fence: Fence;
  after: Snapshot;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class AppendQueue {
  private readonly queues = new Map<string, Pending[]>();
  /** Transactions committed so far (for tests of group commit). */
  transactions = 0;

  constructor(
    private readonly conns: PgConnections,
    private readonly channel: string,
  ) {}

  append(sessionId: string, recs: SealedRecord[], expect: AppendExpect, fence: Fence, after: Snapshot): Promise<void> {
    if (recs.length === 0) return Promise.reject(new PgBackendError('InvalidArgument', 'an append needs at least one record', { path: 'records' }));
    for (let i = 0; i < recs.length; i++) {
      if (recs[i]!.seq !== expect.lastSeq + 1 + i) {
        return Promise.reject(new PgBackendError('InvalidArgument', 'record seqs must follow expect.lastSeq one by one', { path: `records.${i}.seq` }));
      }
    }
    if (fence.sessionId !== sessionId) return Promise.reject(new PgBackendError('LeaseLost', 'the fence is for another session', { sessionId }));
    return new Promise<void>((resolve, reject) => {
      let q = this.queues.get(sessionId);
      const start = !q;
      if (!q) this.queues.set(sessionId, (q = []));
      q.push({ recs, expect, fence, after, resolve, reject });
      if (start) void this.drain(sessionId, q);
    });
  }

  /** Runs transactions for a session until its queue is empty; then removes the queue. */
  private async drain(sessionId: string, q: Pending[]): Promise<void> {
    while (q.length > 0) {
      const group: Pending[] = [];
      let last = q[0]!.expect;
      let size = 0;
      while (q.length > 0 && (group.length === 0 || (q[0]!.fence.token === group[0]!.fence.token && size < GROUP_MAX_BYTES))) {
        const p = q.shift()!;
        size += p.recs.reduce((n, r) => n + r.text.length, 0);
        if (group.length > 0 && (p.expect.lastSeq !== last.lastSeq || p.expect.generation !== last.generation)) {
          p.reject(new PgBackendError('Conflict', 'expected lastSeq does not follow the batch committed before it; nothing was written', {
            reason: 'expectedLastSeq', lastSeq: last.lastSeq,
          }));
          continue;
        }
        group.push(p);
        last = { lastSeq: p.recs[p.recs.length - 1]!.seq, generation: p.expect.generation };
      }
      try {
        await this.conns.transaction((tx) => this.commitGroup(tx, sessionId, group));
        this.transactions++;
        for (const p of group) p.resolve();
      } catch (err) {
        for (const p of group) p.reject(err);
      }
    }
    this.queues.delete(sessionId);
  }

  private async commitGroup(tx: Tx, sessionId: string, group: Pending[]): Promise<void> {
    const first = group[0]!;
    const recs = group.flatMap((p) => p.recs);
    const lastRec = recs[recs.length - 1]!;
    const after = group[group.length - 1]!.after;
    await checkFence(tx, first.fence);
    const bytes = recs.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0);
    const updated = await tx.query(
      `UPDATE sessions SET last_seq = $4, last_ts = $5, record_count = record_count + $6, stored_bytes = stored_bytes + $7,
              turn_text = $8, runtime_text = $9, first_message = $10, last_message = $11, header_state = $12, usage_text = $13, updated_at = now()
        WHERE session_id = $1 AND generation = $2 AND last_seq = $3 AND trashed_at IS NULL RETURNING 1`,
      [sessionId, first.expect.generation, first.expect.lastSeq, lastRec.seq, lastRec.ts, recs.length, bytes,
        after.turn, after.runtime, after.firstMessage, after.lastMessage, after.header, after.usage],
    );
    if (updated.length === 0) throw await whyNotUpdated(tx, sessionId);
    await tx.query(
      `INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
       SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])`,
      [sessionId, first.expect.generation, recs.map((r) => r.seq), recs.map((r) => r.ts), recs.map((r) => r.kind),
        recs.map((r) => r.text), recs.map((r) => recordCrc(sessionId, r))],
    );
    await tx.query('SELECT pg_notify($1, $2)', [this.channel, sessionId]);
  }
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
