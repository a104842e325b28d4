/**
 * `verify` for a PostgreSQL store: every session's header, every record of every generation
 * (checksum, seqs one by one, the session row's lastSeq and counts), state values, blobs
 * (sha256) and leases (one row per session, token, holder). Read-only; damage is reported per
 * item and verification goes on, so one bad session does not hide another.
 */
import { createHash } from 'node:crypto';
import { PgBackendError } from './errors.js';
import type { PgConnections } from './pool.js';
import { loadSession, readRange } from './sessions.js';
import { textCrc } from './types.js';

export interface VerifyIssue {
  problem: 'corrupt' | 'lastSeqMismatch' | 'recordCountMismatch' | 'stateChecksum' | 'blobChecksum' | 'leaseInvalid';
  sessionId?: string;
  generation?: number;
  seq?: number;
  sha256?: string;
}

export interface VerifyReport {
  sessions: number;
  records: number;
  blobs: number;
  stateValues: number;
  leases: number;
  issues: VerifyIssue[];
}

const PAGE = 1000;

export async function verifyStore(conns: PgConnections): Promise<VerifyReport> {
  const report: VerifyReport = { sessions: 0, records: 0, blobs: 0, stateValues: 0, leases: 0, issues: [] };
  let after = '';
  for (;;) {
    const ids = await conns.query<{ session_id: string }>('SELECT session_id FROM sessions WHERE session_id > $1 ORDER BY session_id LIMIT 200', [after]);
    if (ids.length === 0) break;
    for (const { session_id: id } of ids) {
      report.sessions++;
      await verifySession(conns, id, report);
    }
    after = ids[ids.length - 1]!.session_id;
  }
  const states = await conns.query<{ session_id: string; key: string; text: string; crc: string }>('SELECT session_id, key, text, crc FROM state_values');
  for (const s of states) {
    report.stateValues++;
    if (s.crc !== textCrc(`${s.session_id}\n${s.key}`, s.text)) report.issues.push({ problem: 'stateChecksum', sessionId: s.session_id });
  }
  const shas = await conns.query<{ sha256: string }>('SELECT sha256 FROM blobs ORDER BY sha256');
  for (const { sha256 } of shas) {
    report.blobs++;
    const rows = await conns.query<{ bytes: Buffer; size: string }>('SELECT bytes, size FROM blobs WHERE sha256 = $1', [sha256]);
    const row = rows[0];
    if (row && (createHash('sha256').update(row.bytes).digest('hex') !== sha256 || row.bytes.length !== Number(row.size))) {
      report.issues.push({ problem: 'blobChecksum', sha256 });
    }
  }
  const leases = await conns.query<{ session_id: string; token: string; released: boolean; holder_host: string; sidecar_id: string }>(
    'SELECT session_id, token, released_at IS NOT NULL AS released, holder_host, sidecar_id FROM leases');
  for (const l of leases) {
    report.leases++;
    // A held lease names its holder and has been acquired at least once.
    if (Number(l.token) < 0 || (!l.released && (Number(l.token) < 1 || l.holder_host === '' || l.sidecar_id === ''))) {
      report.issues.push({ problem: 'leaseInvalid', sessionId: l.session_id });
    }
  }
  return report;
}

async function verifySession(conns: PgConnections, id: string, report: VerifyReport): Promise<void> {
  let row;
  try {
    row = await loadSession(conns, id);
  } catch (err) {
    if (err instanceof PgBackendError && err.kind === 'Corrupt') return void report.issues.push({ problem: 'corrupt', sessionId: id, seq: 0 });
    throw err;
  }
  const gens = await conns.query<{ generation: number }>('SELECT generation FROM archived_generations WHERE session_id = $1 ORDER BY generation', [id]);
  for (const generation of [...gens.map((g) => g.generation), row.generation]) {
    let afterSeq = 0;
    let count = 0;
    let last = 0;
    try {
      for (;;) {
        const page = await readRange(conns, id, { generation, afterSeq, limit: PAGE });
        count += page.records.length;
        if (page.records.length > 0) last = page.records[page.records.length - 1]!.seq;
        if (page.records.length < PAGE) break;
        afterSeq = last;
      }
    } catch (err) {
      if (!(err instanceof PgBackendError) || err.kind !== 'Corrupt') throw err;
      report.issues.push({ problem: 'corrupt', sessionId: id, generation, ...(typeof err.details.seq === 'number' ? { seq: err.details.seq } : {}) });
      continue;
    }
    report.records += count;
    if (generation === row.generation) {
      // Rows past the session's lastSeq are invisible to reads; verify looks for them too.
      const agg = await conns.query<{ max: string | null; n: string }>(
        'SELECT max(seq) AS max, count(*) AS n FROM records WHERE session_id = $1 AND generation = $2', [id, generation]);
      if (last !== row.lastSeq || Number(agg[0]!.max ?? 0) !== row.lastSeq) report.issues.push({ problem: 'lastSeqMismatch', sessionId: id, generation });
      if (count !== row.records || Number(agg[0]!.n) !== row.records) report.issues.push({ problem: 'recordCountMismatch', sessionId: id, generation });
    }
  }
}
