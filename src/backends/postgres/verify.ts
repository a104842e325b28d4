/**
 * `verify` for a PostgreSQL store: every session's header, every record of every generation
 * (checksum, seqs one by one, the session row's lastSeq and counts), state values, blobs
 * (sha256) and leases (one row per session, token, holder). Read-only; damage is reported per
 * item and verification goes on, so one bad session does not hide another.
 */
import { createHash } from 'node:crypto';
import { PgBackendError } from './errors.js';
import type { PgConnections, Tx } from './pool.js';
import { loadSession, readRange } from './sessions.js';
import { textCrc, type SealedRecord } from './types.js';

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
  /** Each session verified: where it is, its active generation, and what was read of it. */
  sessionsSeen: SessionSeen[];
  /** Every lease row, with whether its holder is live (the CLI lists them). */
  leaseRows: LeaseSeen[];
  /** Every blob: its address and size (digests checked; damage is in issues). */
  blobRows: Array<{ sha256: string; size: number }>;
}

export interface SessionSeen {
  sessionId: string;
  trashed: boolean;
  generation: number;
  firstSeq: number;
  lastSeq: number;
  /** Records read in all generations, and their UTF-8 bytes of text. */
  records: number;
  bytes: number;
  archives: number;
}

/**
 * A lease row. `held`: not released and its holder's liveness connection is alive and its
 * heartbeat fresh (a writer is there now); `stale`: not released but the holder is gone or
 * silent past `staleMs` (the next writer takes it over); `released`: given up.
 */
export interface LeaseSeen {
  sessionId: string;
  state: 'held' | 'stale' | 'released';
  token: number;
  holder: { host: string; pid: number; sidecarId: string };
}

export interface VerifyOptions {
  /** Only this session (its state values and lease too); blobs are then not listed. */
  sessionId?: string;
  /** Every verified record and state value text, handed over uninterpreted (the CLI finds blob references in them). */
  onText?: (sessionId: string, text: string) => void;
  /** A lease whose heartbeat is older than this is stale (default 15000). */
  staleMs?: number;
  /**
   * An encrypted store (backend.ts fills it from its codec): every value is opened before it is
   * checked or handed to onText; one that does not open is reported as damage (checksums are
   * over the stored, sealed text and are checked first).
   */
  open?: VerifyOpen;
}

export interface VerifyOpen {
  record(sessionId: string, generation: number, r: SealedRecord): string;
  state(sessionId: string, key: string, stored: string): string;
  blob(sha256: string, stored: Buffer): Buffer;
}

const PAGE = 1000;

export async function verifyStore(conns: PgConnections, o: VerifyOptions = {}): Promise<VerifyReport> {
  const report: VerifyReport = { sessions: 0, records: 0, blobs: 0, stateValues: 0, leases: 0, issues: [], sessionsSeen: [], leaseRows: [], blobRows: [] };
  const only = o.sessionId;
  let after = '';
  for (;;) {
    const ids = only !== undefined
      ? (after === '' ? await conns.query<{ session_id: string }>('SELECT session_id FROM sessions WHERE session_id = $1', [only]) : [])
      : await conns.query<{ session_id: string }>('SELECT session_id FROM sessions WHERE session_id > $1 ORDER BY session_id LIMIT 200', [after]);
    if (ids.length === 0) break;
    for (const { session_id: id } of ids) {
      // One snapshot per session: its row, generations, records and counts as of one instant, so
      // a sidecar appending or compacting meanwhile never shows as a mismatch between them.
      await conns.transaction((tx) => verifySession(tx, id, report, o.onText, o.open), 'snapshot');
    }
    after = ids[ids.length - 1]!.session_id;
  }
  const states = await conns.query<{ session_id: string; key: string; text: string; crc: string }>(
    `SELECT session_id, key, text, crc FROM state_values ${only !== undefined ? 'WHERE session_id = $1' : ''} ORDER BY session_id, key`, only !== undefined ? [only] : []);
  for (const s of states) {
    report.stateValues++;
    if (s.crc !== textCrc(`${s.session_id}\n${s.key}`, s.text)) report.issues.push({ problem: 'stateChecksum', sessionId: s.session_id });
    else {
      let text = s.text;
      if (o.open) {
        try {
          text = o.open.state(s.session_id, s.key, s.text);
        } catch (err) {
          if (!(err instanceof PgBackendError) || err.kind !== 'Corrupt') throw err;
          report.issues.push({ problem: 'stateChecksum', sessionId: s.session_id });
          continue;
        }
      }
      o.onText?.(s.session_id, text);
    }
  }
  const shas = only !== undefined ? [] : await conns.query<{ sha256: string }>('SELECT sha256 FROM blobs ORDER BY sha256');
  for (const { sha256 } of shas) {
    report.blobs++;
    const rows = await conns.query<{ bytes: Buffer; size: string }>('SELECT bytes, size FROM blobs WHERE sha256 = $1', [sha256]);
    const row = rows[0];
    if (row) report.blobRows.push({ sha256, size: Number(row.size) });
    let bytes = row?.bytes;
    if (row && o.open) {
      try {
        bytes = o.open.blob(sha256, row.bytes);
      } catch (err) {
        if (!(err instanceof PgBackendError) || err.kind !== 'Corrupt') throw err;
        bytes = undefined;
      }
    }
    if (row && (!bytes || createHash('sha256').update(bytes).digest('hex') !== sha256 || bytes.length !== Number(row.size))) {
      report.issues.push({ problem: 'blobChecksum', sha256 });
    }
  }
  const leases = await conns.query<{ session_id: string; token: string; released: boolean; holder_host: string; holder_pid: number; sidecar_id: string; live: boolean }>(
    `SELECT session_id, token, released_at IS NOT NULL AS released, holder_host, holder_pid, sidecar_id,
            EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.conn_pid AND a.backend_start = l.conn_start)
              AND heartbeat_at >= now() - make_interval(secs => $1::double precision / 1000) AS live
       FROM leases l ${only !== undefined ? 'WHERE session_id = $2' : ''} ORDER BY session_id`,
    [o.staleMs ?? 15_000, ...(only !== undefined ? [only] : [])]);
  for (const l of leases) {
    report.leases++;
    report.leaseRows.push({
      sessionId: l.session_id, state: l.released ? 'released' : l.live ? 'held' : 'stale', token: Number(l.token),
      holder: { host: l.holder_host, pid: l.holder_pid, sidecarId: l.sidecar_id },
    });
    // A held lease names its holder and has been acquired at least once.
    if (Number(l.token) < 0 || (!l.released && (Number(l.token) < 1 || l.holder_host === '' || l.sidecar_id === ''))) {
      report.issues.push({ problem: 'leaseInvalid', sessionId: l.session_id });
    }
  }
  return report;
}

async function verifySession(conns: Tx, id: string, report: VerifyReport, onText?: VerifyOptions['onText'], open?: VerifyOpen): Promise<void> {
  let row;
  try {
    row = await loadSession(conns, id);
  } catch (err) {
    if (err instanceof PgBackendError && err.kind === 'SessionNotFound') return; // purged since the ids were listed
    report.sessions++;
    if (err instanceof PgBackendError && err.kind === 'Corrupt') return void report.issues.push({ problem: 'corrupt', sessionId: id, seq: 0 });
    throw err;
  }
  report.sessions++;
  const gens = await conns.query<{ generation: number }>('SELECT generation FROM archived_generations WHERE session_id = $1 ORDER BY generation', [id]);
  const seen: SessionSeen = { sessionId: id, trashed: row.trashed, generation: row.generation, firstSeq: row.firstSeq, lastSeq: row.lastSeq, records: 0, bytes: 0, archives: gens.length };
  report.sessionsSeen.push(seen);
  for (const generation of [...gens.map((g) => g.generation), row.generation]) {
    let afterSeq = 0;
    let count = 0;
    let last = 0;
    try {
      for (;;) {
        const page = await readRange(conns, id, { generation, afterSeq, limit: PAGE });
        count += page.records.length;
        for (const r of page.records) {
          seen.bytes += Buffer.byteLength(r.text, 'utf8');
          const text = open ? open.record(id, generation, r) : r.text; // Corrupt when it does not open: caught below
          onText?.(id, text);
        }
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
    seen.records += count;
    if (generation === row.generation) {
      // Rows past the session's lastSeq are invisible to reads; verify looks for them too.
      const agg = await conns.query<{ max: string | null; n: string }>(
        'SELECT max(seq) AS max, count(*) AS n FROM records WHERE session_id = $1 AND generation = $2', [id, generation]);
      if (last !== row.lastSeq || Number(agg[0]!.max ?? 0) !== row.lastSeq) report.issues.push({ problem: 'lastSeqMismatch', sessionId: id, generation });
      if (count !== row.records || Number(agg[0]!.n) !== row.records) report.issues.push({ problem: 'recordCountMismatch', sessionId: id, generation });
    }
  }
}
