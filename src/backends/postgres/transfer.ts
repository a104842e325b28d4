/**
 * Export and import of whole sessions (`session-sidecar migrate`), under the seam: texts are
 * moved as stored, never interpreted.
 *
 * - exportSession: the session row (trashed too), every generation's records (checksums and
 *   seq continuity verified by readRange), state values (checksums verified).
 * - importSession: ONE transaction inserts the session row, every generation's records (with
 *   their checksums computed here), the archived-generation rows and the state values, then
 *   COMMITs with synchronous_commit = on. A crash or a failure before COMMIT leaves nothing: a
 *   session is in the destination whole or not at all. An existing session id is Conflict
 *   (reason exists) and nothing is written. No lease row is made: the first writer takes one.
 * - leaseHeld: whether a live writer holds the session now (its liveness connection alive and
 *   its heartbeat fresh): migrate refuses such a session.
 */
import { PgBackendError } from './errors.js';
import type { PgConnections } from './pool.js';
import { history, loadSession, readRange } from './sessions.js';
import { recordCrc, textCrc, type SealedRecord, type Snapshot } from './types.js';
import type { BundleGeneration, SessionBundle } from '../../core/port.js';

const PAGE = 5000;

async function allRecords(conns: PgConnections, id: string, generation: number): Promise<SealedRecord[]> {
  const out: SealedRecord[] = [];
  let afterSeq = 0;
  for (;;) {
    const page = await readRange(conns, id, { generation, afterSeq, limit: PAGE });
    out.push(...page.records);
    if (page.records.length < PAGE) return out;
    afterSeq = page.records[page.records.length - 1]!.seq;
  }
}

export async function exportSession(conns: PgConnections, id: string): Promise<SessionBundle> {
  const row = await loadSession(conns, id);
  const generations: BundleGeneration[] = [];
  for (const g of await history(conns, id)) {
    generations.push({ generation: g.generation, throughSeq: g.throughSeq, records: await allRecords(conns, id, g.generation) });
  }
  generations.push({ generation: row.generation, records: await allRecords(conns, id, row.generation) });
  const states = await conns.query<{ key: string; text: string; crc: string }>('SELECT key, text, crc FROM state_values WHERE session_id = $1 ORDER BY key', [id]);
  for (const s of states) {
    if (s.crc !== textCrc(`${id}\n${s.key}`, s.text)) throw new PgBackendError('Corrupt', 'a state value fails its checksum', { sessionId: id });
  }
  return {
    header: { sessionId: id, createdAt: row.createdAt, text: row.headerText }, trashed: row.trashed, generations,
    state: states.map((s) => ({ key: s.key, text: s.text })),
  };
}

export async function sessionIds(conns: PgConnections): Promise<string[]> {
  return (await conns.query<{ session_id: string }>('SELECT session_id FROM sessions ORDER BY session_id')).map((r) => r.session_id);
}

export async function leaseHeld(conns: PgConnections, id: string, staleMs: number): Promise<{ host: string; pid: number; sidecarId: string } | undefined> {
  const rows = await conns.query<{ holder_host: string; holder_pid: number; sidecar_id: string }>(
    `SELECT holder_host, holder_pid, sidecar_id FROM leases l WHERE session_id = $1 AND released_at IS NULL
        AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.conn_pid AND a.backend_start = l.conn_start)
        AND heartbeat_at >= now() - make_interval(secs => $2::double precision / 1000)`, [id, staleMs]);
  const r = rows[0];
  return r ? { host: r.holder_host, pid: r.holder_pid, sidecarId: r.sidecar_id } : undefined;
}

export async function importSession(conns: PgConnections, b: SessionBundle, snapshot: Snapshot, toolSeq: number): Promise<void> {
  const id = b.header.sessionId;
  const active = b.generations[b.generations.length - 1];
  if (!active) throw new PgBackendError('InvalidArgument', 'a session has at least its active generation', { path: 'generations' });
  const bytesOf = (rs: SealedRecord[]) => rs.reduce((n, r) => n + Buffer.byteLength(r.text, 'utf8'), 0);
  const last = active.records[active.records.length - 1];
  await conns.transaction(async (tx) => {
    const ins = await tx.query(
      `INSERT INTO sessions (session_id, header_text, header_crc, created_at, generation, first_seq, last_seq, last_ts, record_count, stored_bytes,
              turn_text, runtime_text, first_message, last_message, tool_seq, trashed_at, header_state, usage_text)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, CASE WHEN $16::boolean THEN now() END, $17, $18)
       ON CONFLICT (session_id) DO NOTHING RETURNING 1`,
      [id, b.header.text, textCrc(id, b.header.text), b.header.createdAt, active.generation, active.records[0]?.seq ?? 1, last?.seq ?? 0,
        last?.ts ?? null, active.records.length, bytesOf(active.records), snapshot.turn, snapshot.runtime, snapshot.firstMessage,
        snapshot.lastMessage, toolSeq, b.trashed, snapshot.header, snapshot.usage],
    );
    if (ins.length === 0) throw new PgBackendError('Conflict', 'a session with this id exists already; nothing was written', { reason: 'exists', sessionId: id });
    for (const g of b.generations) {
      for (let i = 0; i < g.records.length; i += PAGE) {
        const rs = g.records.slice(i, i + PAGE);
        await tx.query(
          `INSERT INTO records (session_id, generation, seq, ts, kind, text, crc)
           SELECT $1, $2, * FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])`,
          [id, g.generation, rs.map((r) => r.seq), rs.map((r) => r.ts), rs.map((r) => r.kind), rs.map((r) => r.text), rs.map((r) => recordCrc(id, r))],
        );
      }
      if (g === active) continue;
      await tx.query(
        `INSERT INTO archived_generations (session_id, generation, first_seq, last_seq, through_seq, record_count, stored_bytes)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, g.generation, g.records[0]?.seq ?? 1, g.records[g.records.length - 1]?.seq ?? 0, g.throughSeq ?? 0, g.records.length, bytesOf(g.records)],
      );
    }
    for (const s of b.state) {
      await tx.query('INSERT INTO state_values (session_id, key, text, crc) VALUES ($1, $2, $3, $4)', [id, s.key, s.text, textCrc(`${id}\n${s.key}`, s.text)]);
    }
  });
}
