import path from 'node:path';
import type { CommittedRecord } from '../journal/scan.js';
import { generationOf } from './common.js';
import { type RecordSink, type ScannedJournal, scanFile } from './journalCheck.js';
import type { FileChecks } from './permissions.js';
import type { Finding } from './report.js';
import { unlessWriting, writerLive } from './recoveryCheck.js';

/**
 * history/<id>/: every generation before the active one must be there, whole, with the
 * journal's header, starting where the previous compaction left off, and matching what the
 * next generation's checkpoint says it archived.
 */
export function verifyArchives(
  fc: FileChecks, onRecord: RecordSink, id: string, dir: string, journal: ScannedJournal | undefined, out: Finding[],
): { count: number; bytes: number } {
  const found = listArchives(fc, id, dir, out);
  const active = journal?.checkpoint ? generationOf(journal.checkpoint) : 0;
  let bytes = 0;
  const scanned = new Map<number, ScannedJournal>();
  for (const [g, p] of [...found].sort((a, b) => a[0] - b[0])) {
    const stale = journal !== undefined && g >= active;
    const before = out.length;
    const a = scanFile(fc, onRecord, id, p, 'archive', out, stale ? 'warning' : 'error');
    if (stale && out.length === before) {
      out.push({ severity: 'note', check: 'archive', message: `generation ${g} is not older than the active one (${active}): left by a compaction that did not complete; the next compaction replaces it`, file: fc.rel(p) });
    }
    bytes += a?.size ?? fc.fsl.lstatSync(p)?.size ?? 0;
    if (!a) continue;
    scanned.set(g, a);
    if (!stale) checkArchiveStart(fc.rel(p), g, a, journal, out);
  }
  if (journal) checkChain(fc, dir, active, journal, found, scanned, out);
  return { count: found.size, bytes };
}

/** The archives (generation -> file) of a history folder; temp and stray files are reported. */
function listArchives(fc: FileChecks, id: string, dir: string, out: Finding[]): Map<number, string> {
  const names = fc.list(dir);
  const dst = fc.fsl.lstatSync(dir);
  if (dst) fc.dirMode(dst, dir, out);
  const found = new Map<number, string>();
  for (const name of names) {
    const p = path.join(dir, name);
    if (/^\d+\.jsonl$/.test(name)) found.set(Number.parseInt(name, 10), p);
    else if (name.endsWith('.tmp')) out.push(unlessWriting({ severity: 'warning', check: 'archive', message: 'a temporary file left by a compaction that did not complete (removed by the next writable open)', file: fc.rel(p) }, writerLive(fc, id)));
    else out.push({ severity: 'warning', check: 'archive', message: 'unexpected file in the session\'s history', file: fc.rel(p) });
  }
  return found;
}

/** An archive keeps the journal's header byte for byte and starts with its own generation's checkpoint (none for generation 0). */
function checkArchiveStart(rel: string, g: number, a: ScannedJournal, journal: ScannedJournal | undefined, out: Finding[]): void {
  if (journal && !a.headerLine.equals(journal.headerLine)) {
    // A sealed header sealed apart (another nonce) opens to the same members: a rekey of an
    // earlier version re-sealed each copy. Harmless (readers and migrate compare the members).
    out.push(JSON.stringify(a.header) === JSON.stringify(journal.header)
      ? { severity: 'note', check: 'archive', message: 'its header line is sealed apart from the journal\'s (the same header: re-sealed by an earlier rekey)', file: rel, line: 1 }
      : { severity: 'error', check: 'archive', message: 'its header differs from the journal\'s (compaction keeps it byte for byte)', file: rel, line: 1 });
  }
  if (g === 0 && a.checkpoint) out.push({ severity: 'error', check: 'archive', message: 'generation 0 starts with a checkpoint', file: rel, line: 2 });
  if (g > 0 && (!a.checkpoint || generationOf(a.checkpoint) !== g)) {
    out.push({ severity: 'error', check: 'archive', message: `generation ${g} does not start with the checkpoint of generation ${g}`, file: rel, line: 2 });
  }
}

/** Every generation before the active one is there and is what the next generation's checkpoint says it archived. */
function checkChain(
  fc: FileChecks, dir: string, active: number, journal: ScannedJournal, found: ReadonlyMap<number, string>, scanned: ReadonlyMap<number, ScannedJournal>, out: Finding[],
): void {
  for (let g = 0; g < active; g++) {
    const a = scanned.get(g);
    const rel = fc.rel(path.join(dir, `${g}.jsonl`));
    if (!found.has(g)) {
      out.push({ severity: 'error', check: 'archive', message: `generation ${g} is missing: the records it archived exist nowhere else`, file: rel });
      continue;
    }
    if (!a || a.tail) continue; // damaged: already reported
    // The checkpoint that starts generation g + 1 describes archive g.
    const next = g + 1 === active ? journal : scanned.get(g + 1);
    if (next?.checkpoint) checkArchived(rel, g, a, next.checkpoint, out);
  }
}

function checkArchived(rel: string, g: number, a: ScannedJournal, cp: CommittedRecord, out: Finding[]): void {
  const archived = (cp.archived ?? {}) as { generation?: unknown; records?: unknown; bytes?: unknown };
  const through = Number(cp.throughSeq ?? cp.seq);
  if (archived.generation !== g) out.push({ severity: 'error', check: 'archive', message: `the checkpoint of generation ${g + 1} names archive ${String(archived.generation)}, not ${g}`, file: rel });
  // archived.bytes is not compared: it is the size as the backend that compacted counted it (the
  // archive file's bytes here; the record texts' bytes on PostgreSQL, which keeps no batchEnd
  // markers), so a session moved between stores differs there without any damage. A lost or
  // damaged line shows in the record count, the checksums and the seqs.
  if (typeof archived.records === 'number' && archived.records !== a.position.records) {
    out.push({ severity: 'error', check: 'archive', message: `${a.position.records} records where the checkpoint of generation ${g + 1} recorded ${archived.records}`, file: rel });
  }
  if (!(through >= a.firstSeq - (a.checkpoint ? 0 : 1) && through <= a.position.lastSeq)) {
    out.push({ severity: 'error', check: 'archive', message: `the checkpoint of generation ${g + 1} stands for records through seq ${through}, but this archive holds seqs ${a.firstSeq}..${a.position.lastSeq}`, file: rel });
  }
}
