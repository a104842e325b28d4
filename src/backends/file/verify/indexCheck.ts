import { peekSeq } from '../journal/format.js';
import { lineEndingAt } from '../journal/lines.js';
import { crcOf } from '../journal/scan.js';
import { headOf, sameGeneration } from '../journal/identity.js';
import { type IndexEntry, readIndexEntry } from '../sessionIndex.js';
import { FILE_MODE, READ_FLAGS } from './common.js';
import type { ScannedJournal } from './journalCheck.js';
import type { FileChecks } from './permissions.js';
import type { Finding } from './report.js';
import { unlessWriting, writerLive } from './recoveryCheck.js';

/**
 * index/<id>.json against the verified journal. A cache may lag (it is written after commits,
 * without fsync), but what it records as committed must still be in the journal as recorded.
 * Returns whether there is an index entry (to count).
 */
export function verifyIndex(fc: FileChecks, id: string, file: string, journal: ScannedJournal | undefined, out: Finding[]): boolean {
  const rel = fc.rel(file);
  const st = fc.fsl.lstatSync(file);
  if (!st) {
    if (journal) out.push(unlessWriting({ severity: 'warning', check: 'index', message: 'no index entry (written by the next writable open of the session)', file: rel }, writerLive(fc, id)));
    return false;
  }
  if (st.isSymbolicLink() || !st.isFile()) {
    out.push({ severity: 'error', check: 'permissions', message: 'the index entry is not a regular file', file: rel });
    return true;
  }
  fc.fileMode(st, file, out);
  const entry = readIndexEntry(fc.fsl, fc.layout, id);
  if (!entry) {
    if ((st.mode & 0o777) === FILE_MODE) out.push({ severity: 'warning', check: 'index', message: 'the index entry is not valid (ignored and rebuilt from the journal)', file: rel });
    return true;
  }
  if (journal) compareEntry(fc, rel, entry, journal, out); // else nothing verified to compare with
  return true;
}

/** The head of the scanned journal, as its index entry records it (journal/identity.ts). */
function headOfScanned(journal: ScannedJournal): string {
  const generation = journal.checkpoint && journal.firstSeq === Number(journal.checkpoint.seq) ? Number(journal.checkpoint.generation) : 0;
  return headOf(crcOf(journal.headerLine), Number.isSafeInteger(generation) ? generation : 0, journal.firstSeq);
}

function drift(out: Finding[], rel: string, field: string, has: unknown, want: unknown): void {
  out.push({ severity: 'error', check: 'index', file: rel, message: `index drift: ${field} is ${show(has)} but the journal says ${show(want)}` });
}

function compareEntry(fc: FileChecks, rel: string, entry: IndexEntry, journal: ScannedJournal, out: Finding[]): void {
  if (entry.createdAt !== journal.header.createdAt) drift(out, rel, 'createdAt', entry.createdAt, journal.header.createdAt);
  if (!sameGeneration(entry, headOfScanned(journal), journal.ino)) {
    // A compaction replaces the journal, then rewrites the entry: between the two, a live writer's.
    // (A copy of the store keeps the head: an entry is judged by the journal's bytes, not its inode.)
    out.push(unlessWriting({ severity: 'warning', check: 'index', file: rel, message: 'the index entry describes a journal file that was replaced (stale; rebuilt by the next open)' }, writerLive(fc, entry.sessionId)));
    return;
  }
  if (!committedBytesVerify(fc, rel, entry, journal, out)) return;
  if (entry.bytes < journal.position.bytes) {
    const behind = journal.position.lastSeq - entry.lastSeq;
    out.push({ severity: 'note', check: 'index', file: rel, message: `the index entry is ${behind} record${behind === 1 ? '' : 's'} behind the journal (normal after a crash or while a sidecar writes)` });
    return;
  }
  if (entry.lastSeq !== journal.position.lastSeq) drift(out, rel, 'lastSeq', entry.lastSeq, journal.position.lastSeq);
  if (entry.records !== journal.position.records) drift(out, rel, 'records', entry.records, journal.position.records);
  // The title after the session's updates (session/update), which an entry at the journal's end names.
  const title = journal.position.header ? journal.position.header.title : journal.header.title;
  if ((entry.title ?? undefined) !== (title ?? undefined)) drift(out, rel, 'title', entry.title, title);
  compareState(rel, entry, journal, out);
}

/** What the index records as committed is in the journal, verified, ending with the line it recorded. */
function committedBytesVerify(fc: FileChecks, rel: string, entry: IndexEntry, journal: ScannedJournal, out: Finding[]): boolean {
  const verifiedEnd = journal.position.bytes;
  if (entry.bytes > journal.size) {
    out.push({ severity: 'error', check: 'index', file: rel, message: `the index records ${entry.bytes} bytes as committed but the journal has ${journal.size}: acknowledged records are missing` });
    return false;
  }
  if (entry.bytes > verifiedEnd) {
    if (journal.tail) tornTailIsCorruption(fc, entry.sessionId, journal, out);
    else out.push({ severity: 'error', check: 'index', file: rel, message: `the index records ${entry.bytes} bytes as committed but only ${verifiedEnd} verify: acknowledged records are damaged` });
    return false;
  }
  if (entry.records === 0 ? entry.bytes !== journal.dataStart || entry.lastSeq !== 0 : !lineMatches(fc, journal, entry)) {
    out.push({ severity: 'error', check: 'index', file: rel, message: `index drift: the journal line ending at byte ${entry.bytes} is not the one the index recorded (seq ${entry.lastSeq}, crc ${entry.lastCrc})` });
    return false;
  }
  return true;
}

/** What looked like a torn tail is in bytes that were acknowledged: corruption (as the store would say). */
function tornTailIsCorruption(fc: FileChecks, id: string, journal: ScannedJournal, out: Finding[]): void {
  const torn = out.findIndex((f) => f.check === 'journal' && f.message.startsWith('torn tail'));
  if (torn !== -1) out.splice(torn, 1);
  out.push({
    severity: 'error', check: 'journal', file: fc.rel(fc.layout.journal(id)), line: journal.position.records + 2,
    message: `journal line ${journal.position.records + 2} is damaged: ${journal.tail?.reason}, in bytes the index records as committed (acknowledged records are damaged)`,
  });
}

/** State the journal reduces to (turn, and whatever else positions carry): compared when both sides have it. */
function compareState(rel: string, entry: IndexEntry, journal: ScannedJournal, out: Finding[]): void {
  const pos = journal.position as unknown as Record<string, unknown>;
  for (const key of ['turn', 'runtime', 'usage']) {
    const has = (entry as unknown as Record<string, unknown>)[key];
    const want = pos[key];
    if (has === undefined || want === undefined) continue;
    if (canonical(has ?? null) !== canonical(want ?? null) && !(key === 'runtime' && isZeroRuntime(has) && isZeroRuntime(want))) drift(out, rel, key, has, want);
  }
}

function lineMatches(fc: FileChecks, journal: ScannedJournal, entry: IndexEntry): boolean {
  const { fsl } = fc;
  let fd: number | undefined;
  try {
    fd = fsl.openSync(fc.layout.journal(entry.sessionId), READ_FLAGS);
    if (fsl.fstatSync(fd).ino !== journal.ino) return true; // replaced since the scan: judged on the next run
    const last = lineEndingAt(fsl, fd, entry.bytes, journal.dataStart);
    return last !== undefined && last.bytes.length > 10 && crcOf(last.bytes) === entry.lastCrc && peekSeq(last.bytes) === entry.lastSeq;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fsl.closeSync(fd);
  }
}

/** JSON with sorted keys: member order does not matter for equality. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

function isZeroRuntime(v: unknown): boolean {
  const r = v as { apiSeq?: unknown; toolSeq?: unknown; openApi?: unknown } | null;
  return !r || (!r.apiSeq && !r.toolSeq && (!Array.isArray(r.openApi) || r.openApi.length === 0));
}

function show(v: unknown): string {
  if (v === undefined) return 'absent';
  const text = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
