import path from 'node:path';
import { ISSUED_FILE } from '../../../scratch/toolRuns.js';
import { verifyArchives } from './archiveCheck.js';
import { generationOf } from './common.js';
import { verifyIndex } from './indexCheck.js';
import { type RecordSink, type ScannedJournal, scanFile } from './journalCheck.js';
import type { FileChecks } from './permissions.js';
import { unlessWriting, verifyLease, verifyRecovery, writerLive } from './recoveryCheck.js';
import { type Finding, type SessionReport, sessionReport } from './report.js';

/** One session, live (sessions/<id>/ with its history, index entry, recovery evidence and lease) or deleted (trash/<id>/). */
export class SessionChecker {
  /** Live sessions whose index entry was seen (at their last check: a session may be checked again, settle.ts). */
  private readonly indexed = new Set<string>();

  get indexEntries(): number {
    return this.indexed.size;
  }

  constructor(
    private readonly fc: FileChecks,
    private readonly onRecord: RecordSink,
  ) {}

  verifyLive(id: string): SessionReport {
    const { fc } = this;
    const { layout } = fc;
    const findings: Finding[] = [];
    const dir = layout.sessionDir(id);
    const dst = fc.fsl.lstatSync(dir);
    let journal: ScannedJournal | undefined;
    let bytes = 0;
    if (dst && dst.isSymbolicLink()) {
      findings.push({ severity: 'error', check: 'permissions', message: 'the session directory is a symbolic link (the sidecar refuses it)', file: fc.rel(dir) });
    } else if (dst && !dst.isDirectory()) {
      findings.push({ severity: 'error', check: 'layout', message: 'the session entry is not a directory', file: fc.rel(dir) });
    } else if (dst) {
      fc.dirMode(dst, dir, findings);
      this.sessionFiles(id, dir, findings);
      journal = this.liveJournal(id, findings);
      bytes += journal?.size ?? fc.fsl.lstatSync(layout.journal(id))?.size ?? 0;
    }
    const archives = verifyArchives(fc, this.onRecord, id, layout.historySessionDir(id), journal, findings);
    bytes += archives.bytes;
    if (verifyIndex(fc, id, layout.indexEntry(id), journal, findings)) this.indexed.add(id);
    else this.indexed.delete(id);
    verifyRecovery(fc, layout.recoverySessionDir(id), findings);
    verifyLease(fc, id, findings);
    return sessionReport(id, 'live', findings, journalSummary(journal), archives.count, bytes);
  }

  verifyTrashed(id: string): SessionReport {
    const { fc } = this;
    const findings: Finding[] = [];
    const trash = fc.layout.trashSessionDir(id);
    fc.directory(trash, findings);
    const file = path.join(trash, 'session', 'journal.jsonl');
    let journal: ScannedJournal | undefined;
    let bytes = 0;
    if (fc.fsl.lstatSync(file)) {
      journal = scanFile(fc, this.onRecord, id, file, 'journal', findings);
      bytes += journal?.size ?? 0;
    } else if (fc.list(trash).length > 0) {
      findings.push({ severity: 'warning', check: 'journal', message: 'deleted session without a journal (a delete or restore that did not complete)', file: fc.rel(trash) });
    }
    const archives = verifyArchives(fc, this.onRecord, id, path.join(trash, 'history'), journal, findings);
    bytes += archives.bytes;
    verifyRecovery(fc, path.join(trash, 'recovery'), findings);
    return sessionReport(id, 'trash', findings, journalSummary(journal), archives.count, bytes);
  }

  /** The journal of a live session, or what stands where it belongs. */
  private liveJournal(id: string, out: Finding[]): ScannedJournal | undefined {
    const { fc } = this;
    const { layout } = fc;
    if (fc.fsl.lstatSync(layout.journal(id))) return scanFile(fc, this.onRecord, id, layout.journal(id), 'journal', out);
    const temp = fc.fsl.lstatSync(layout.journalTemp(id));
    out.push(temp
      ? { severity: 'note', check: 'journal', message: 'no journal, only the temporary file of a create that crashed: not a session', file: fc.rel(layout.journalTemp(id)) }
      : { severity: 'warning', check: 'journal', message: 'session directory without a journal', file: fc.rel(layout.sessionDir(id)) });
    return undefined;
  }

  /** What sits next to the journal: state/, scratch/, a temporary journal, anything else. */
  private sessionFiles(id: string, dir: string, out: Finding[]): void {
    const { fc } = this;
    for (const name of fc.list(dir)) {
      if (name === 'journal.jsonl') continue;
      const p = path.join(dir, name);
      if (name === 'state') verifyState(fc, id, p, out);
      else if (name === 'scratch') verifyScratch(fc, p, out);
      else if (name === 'journal.jsonl.tmp') out.push(unlessWriting({ severity: 'warning', check: 'layout', message: 'a temporary journal left by a crashed create or compaction (removed by the next writable open)', file: fc.rel(p) }, writerLive(fc, id)));
      else out.push({ severity: 'warning', check: 'layout', message: 'unexpected file in the session directory', file: fc.rel(p) });
    }
  }
}

function journalSummary(journal: ScannedJournal | undefined): SessionReport['journal'] {
  if (!journal) return undefined;
  return {
    bytes: journal.size, records: journal.position.records, lastSeq: journal.position.lastSeq, firstSeq: journal.firstSeq,
    generation: journal.checkpoint ? generationOf(journal.checkpoint) : 0,
  };
}

/** sessions/<id>/state/: one 0600 file per state value (a state write may leave its <key>.json.<random>.tmp after a crash). */
function verifyState(fc: FileChecks, id: string, dir: string, out: Finding[]): void {
  if (!fc.directory(dir, out)?.isDirectory()) return;
  for (const { name, path: p, st } of fc.entries(dir)) {
    if (!st.isFile()) out.push({ severity: 'error', check: 'permissions', message: 'a state value that is not a regular file', file: fc.rel(p) });
    else if (name.endsWith('.json')) fc.fileMode(st, p, out);
    else out.push(unlessWriting({ severity: 'warning', check: 'layout', message: 'a temporary file left by a state write that did not complete', file: fc.rel(p) }, writerLive(fc, id)));
  }
}

/** sessions/<id>/scratch/: tool runs' private directories (0700), and the issued-toolSeq record (0600); what tools put inside is theirs. */
function verifyScratch(fc: FileChecks, dir: string, out: Finding[]): void {
  if (!fc.directory(dir, out)?.isDirectory()) return;
  for (const { path: p, st } of fc.entries(dir)) {
    if (path.basename(p) === ISSUED_FILE && st.isFile()) fc.fileMode(st, p, out);
    else fc.dirMode(st, p, out);
  }
}
