import type { LeaseSeen, VerifyIssue, VerifyReport as PgReport } from '../backends/postgres/verify.js';
import type { Finding, SessionReport, VerifyReport } from '../backends/file/verify/report.js';
import { CliError } from './common.js';
import { openReadOnlyBackend, type StoreTarget } from './storeTarget.js';

/** `{"$blob":"sha256:<hex>","bytes":N`: how a stored record or state value references a blob. */
const BLOB_REF = /\{"\$blob":"sha256:([0-9a-f]{64})","bytes":(\d+)/g;

/**
 * `verify` over a PostgreSQL store, as the same report the file store's verify gives: the
 * backend's read-only check (src/backends/postgres/verify.ts: header and record checksums,
 * seqs one by one per generation, the session row's lastSeq and counts, state value checksums,
 * blob digests and sizes, lease rows) plus what needs the records' meaning, done here: the
 * blobs records reference (present, of the referenced size) and the blobs nothing references.
 */
export async function verifyPostgres(target: Extract<StoreTarget, { kind: 'postgres' }>, sessionId: string | undefined): Promise<VerifyReport> {
  const backend = await openReadOnlyBackend(target, (m) => new CliError(m));
  const refs = new Map<string, { bytes: Set<number>; sessions: Set<string> }>();
  let pg: PgReport;
  try {
    pg = await backend.verify({
      ...(sessionId !== undefined ? { sessionId } : {}),
      onText: (id, text) => {
        for (const m of text.matchAll(BLOB_REF)) {
          const ref = refs.get(m[1] as string) ?? { bytes: new Set<number>(), sessions: new Set<string>() };
          ref.bytes.add(Number(m[2]));
          ref.sessions.add(id);
          refs.set(m[1] as string, ref);
        }
      },
    });
    // A single session: its blobs are looked up one by one (the store-wide list is not read).
    if (sessionId !== undefined) {
      for (const sha of refs.keys()) {
        const size = await backend.blobs.size(sha);
        if (size !== undefined) pg.blobRows.push({ sha256: sha, size });
      }
    }
  } finally {
    await backend.close();
  }
  if (sessionId !== undefined && pg.sessions === 0) throw new CliError(`session ${sessionId} not found in ${target.display}`);
  return toReport(target.display, pg, refs, sessionId === undefined);
}

function toReport(root: string, pg: PgReport, refs: Map<string, { bytes: Set<number>; sessions: Set<string> }>, whole: boolean): VerifyReport {
  const bySession = new Map<string, Finding[]>();
  const add = (id: string, f: Finding) => bySession.set(id, [...(bySession.get(id) ?? []), f]);
  const store: Finding[] = [];
  for (const issue of pg.issues) {
    const f: Finding = { severity: 'error', check: issue.problem === 'leaseInvalid' ? 'lease' : issue.problem.startsWith('blob') ? 'blobs' : 'records', message: issueText(issue) };
    if (issue.sessionId !== undefined) add(issue.sessionId, f);
    else store.push(f);
  }
  const sizes = new Map(pg.blobRows.map((b) => [b.sha256, b.size]));
  for (const [sha, ref] of refs) {
    const size = sizes.get(sha);
    for (const id of ref.sessions) {
      if (size === undefined) add(id, { severity: 'error', check: 'blobs', message: `blob sha256:${sha} is referenced but missing` });
      else if ([...ref.bytes].some((b) => b !== size)) add(id, { severity: 'error', check: 'blobs', message: `blob sha256:${sha} holds ${size} bytes, not the ${[...ref.bytes].join(' or ')} referenced` });
    }
  }
  if (whole) {
    for (const b of pg.blobRows) {
      if (!refs.has(b.sha256)) store.push({ severity: 'note', check: 'blobs', message: `blob sha256:${b.sha256} (${b.size} bytes) is referenced by no session (harmless; blobs are never deleted)` });
    }
  }
  for (const l of pg.leaseRows) {
    const f = leaseFinding(l);
    if (f) add(l.sessionId, f);
  }
  const sessions: SessionReport[] = pg.sessionsSeen.map((s) => {
    const findings = bySession.get(s.sessionId) ?? [];
    bySession.delete(s.sessionId);
    return {
      sessionId: s.sessionId, location: s.trashed ? 'trash' : 'live', findings,
      journal: { bytes: s.bytes, records: s.records, lastSeq: s.lastSeq, firstSeq: s.firstSeq, generation: s.generation },
      archives: s.archives, bytes: s.bytes, ok: !findings.some((f) => f.severity === 'error'),
    };
  });
  // Findings about ids with no session row (a lease, a state value of a purged session).
  for (const [id, findings] of bySession) {
    if (findings.some((f) => f.severity !== 'note')) store.push(...findings.map((f) => ({ ...f, message: `${id}: ${f.message}` })));
  }
  const all = [...store, ...sessions.flatMap((s) => s.findings)];
  const count = (sev: Finding['severity']) => all.filter((f) => f.severity === sev).length;
  return {
    root, ok: count('error') === 0, store, sessions,
    totals: {
      sessions: sessions.length, journals: sessions.length, archives: sessions.reduce((a, s) => a + s.archives, 0), indexEntries: 0,
      bytes: sessions.reduce((a, s) => a + s.bytes, 0), errors: count('error'), warnings: count('warning'), notes: count('note'),
    },
  };
}

function issueText(i: VerifyIssue): string {
  const where = `${i.generation !== undefined ? ` of generation ${i.generation}` : ''}`;
  switch (i.problem) {
    case 'corrupt': return i.seq === 0 ? 'the session header fails its checksum' : `record ${i.seq ?? '?'}${where} fails its checksum or is missing (seqs must follow one by one)`;
    case 'lastSeqMismatch': return `the records${where} do not end at the session's lastSeq`;
    case 'recordCountMismatch': return `the records${where} do not match the session's record count`;
    case 'stateChecksum': return 'a state value fails its checksum';
    case 'blobChecksum': return `blob sha256:${i.sha256 ?? '?'} does not match its digest or size`;
    case 'leaseInvalid': return 'the lease row is invalid (no holder, or a bad token)';
  }
}

function leaseFinding(l: LeaseSeen): Finding | undefined {
  const who = `pid ${l.holder.pid} on ${l.holder.host} (sidecar ${l.holder.sidecarId}, token ${l.token})`;
  if (l.state === 'held') return { severity: 'note', check: 'lease', message: `open for writing by ${who}: a live holder` };
  if (l.state === 'stale') return { severity: 'note', check: 'lease', message: `lease left by ${who}: stale (its holder is gone or silent; the next writer takes it over)` };
  return undefined;
}
