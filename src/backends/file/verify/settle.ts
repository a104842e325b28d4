import path from 'node:path';
import type { Stats } from 'node:fs';
import type { CommittedRecord } from '../journal/scan.js';
import type { RecordSink } from './journalCheck.js';
import type { FileChecks } from './permissions.js';
import type { Finding, Location, SessionReport } from './report.js';

/**
 * A consistent view of one session for verify, while a sidecar may be writing it.
 *
 * verify reads a session's files one after another (journal, archives, index entry, state,
 * recovery, lease) without any lock: it never disturbs a writer. A writer's normal operation
 * between two of those reads — an append growing the journal, a compaction replacing it and
 * adding an archive, the index entry rewritten after a commit, a temp file of a write in flight
 * — would look like damage if the reads were judged together. So every file and folder of the
 * session is stamped (inode, size, mtime, ctime; the folders' entries too) before and after the
 * session is checked. Every write a writer makes changes a stamp: an append the journal's size,
 * a rename the inode at its name and its folder's entries, a temp file its folder's entries.
 * Equal stamps mean nothing was written while it was checked: the findings are of one state of
 * the session and stand. Otherwise the session is checked again, after a short pause, a few
 * times; a session that changes during every check (a writer never pausing that long) is
 * reported with only the findings that every check found — damage persists, a writer's
 * transient states do not — and a note saying so.
 *
 * What no stamp can show (a temp file that exists for the whole check while its write waits on
 * fsync) is judged by whether the session's writer is at work (recoveryCheck.ts writerLive).
 */
const ATTEMPTS = 6;
const FIRST_PAUSE_MS = 5;

export async function settledReport(fc: FileChecks, id: string, location: Location, check: () => SessionReport): Promise<SessionReport> {
  const reports: SessionReport[] = [];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await pause(FIRST_PAUSE_MS << (attempt - 1));
    const before = stampOf(fc, id, location);
    const report = check();
    if (stampOf(fc, id, location) === before) return report;
    reports.push(report);
  }
  return persisting(reports);
}

/** The last report, with only the findings every report has (and a note that the session kept changing). */
function persisting(reports: SessionReport[]): SessionReport {
  const key = (f: Finding) => JSON.stringify([f.severity, f.check, f.file ?? '', f.line ?? 0, f.message]);
  const everyTime = reports.slice(0, -1).reduce((kept, r) => {
    const here = new Set(r.findings.map(key));
    return new Set([...kept].filter((k) => here.has(k)));
  }, new Set((reports[reports.length - 1] as SessionReport).findings.map(key)));
  const last = reports[reports.length - 1] as SessionReport;
  const findings: Finding[] = [
    ...last.findings.filter((f) => everyTime.has(key(f))),
    { severity: 'note', check: 'journal', message: `the session changed during each of ${reports.length} checks (a writer at work): only what every check found is reported` },
  ];
  return { ...last, findings, ok: !findings.some((f) => f.severity === 'error') };
}

/** Every file and folder verify reads of the session, with the entries of its folders. */
function stampOf(fc: FileChecks, id: string, location: Location): string {
  const { layout } = fc;
  const parts: string[] = [];
  const visit = (p: string, depth: number) => {
    const st = fc.fsl.lstatSync(p);
    parts.push(`${path.basename(p)}=${st ? stamp(st) : '-'}`);
    if (!st?.isDirectory() || depth === 0) return;
    parts.push('[');
    for (const name of fc.list(p)) visit(path.join(p, name), depth - 1);
    parts.push(']');
  };
  if (location === 'trash') {
    visit(layout.trashSessionDir(id), 3); // session/, state/ inside it, history/, recovery/, index.json
  } else {
    visit(layout.sessionDir(id), 2); // the journal, its temp, state/ and its files, scratch/
    visit(layout.historySessionDir(id), 1);
    visit(layout.indexEntry(id), 0);
    visit(layout.recoverySessionDir(id), 1);
    visit(layout.lockDir(id), 0);
    visit(`${layout.lockDir(id)}.holder.json`, 0);
  }
  return parts.join(' ');
}

function stamp(st: Stats): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The extensions see each committed record once, though a session may be checked several
 * times: per file, only records past the last seq already handed on (a file's records come in
 * seq order; a compacted journal's records after its checkpoint are the old journal's, byte for
 * byte). A record met in the journal and, after a compaction, again in the archive it went to is
 * handed on under each file's name.
 */
export function onceEach(sink: RecordSink): RecordSink {
  const seen = new Map<string, number>();
  return (sessionId: string, record: CommittedRecord, file: string) => {
    const key = `${sessionId}\u0000${file}`;
    const seq = Number(record.seq);
    if (seq <= (seen.get(key) ?? -1)) return;
    seen.set(key, seq);
    sink(sessionId, record, file);
  };
}
