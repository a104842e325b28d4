import { baseState, type HeaderState } from '../../../domain/sessionUpdate.js';
import { StoreError } from '../../../domain/errors.js';
import { decodeLine } from '../journal/format.js';
import type { JournalCipher } from '../journal/cipher.js';
import { type Line, scanLines } from '../journal/lines.js';
import { type CommittedRecord, crcOf, type JournalPosition, readHeader, type ScanResult, scanRecords } from '../journal/scan.js';
import { describe, READ_FLAGS, reasonOf } from './common.js';
import type { FileChecks } from './permissions.js';
import type { Finding, Severity } from './report.js';

/** A journal file (the active journal or an archive) whose header and records verified. */
export interface ScannedJournal {
  header: Record<string, unknown>;
  headerLine: Buffer;
  position: JournalPosition;
  size: number;
  ino: number;
  dataStart: number;
  firstSeq: number;
  /** The checkpoint starting the file, if any. */
  checkpoint?: CommittedRecord;
  tail?: { offset: number; bytes: number; reason: string };
}

/** Where every committed record goes (the extensions' onRecord); `file` is relative to the store root. */
export type RecordSink = (sessionId: string, record: CommittedRecord, file: string) => void;

/** Damaged lines listed after the first one (the rest are counted). */
const MORE_DAMAGE_LISTED = 5;

interface Scan {
  fc: FileChecks;
  id: string;
  file: string;
  rel: string;
  what: 'journal' | 'archive';
  out: Finding[];
  /** The severity of damage (a stale archive's is only a warning). */
  severity: Severity;
  onRecord: RecordSink;
}

/**
 * One journal file, fully: its mode, header, and every record line with the store's own
 * scanner. Undefined when its records could not be read.
 */
export function scanFile(
  fc: FileChecks, onRecord: RecordSink, id: string, file: string, what: 'journal' | 'archive', out: Finding[], severity: Severity = 'error',
): ScannedJournal | undefined {
  const s: Scan = { fc, id, file, rel: fc.rel(file), what, out, severity, onRecord };
  const fd = openChecked(s);
  if (fd === undefined) return undefined;
  try {
    return scanOpen(s, fd);
  } finally {
    fc.fsl.closeSync(fd);
  }
}

/** The file opened for reading after its type and mode are checked; undefined when it cannot be. */
function openChecked(s: Scan): number | undefined {
  const { fc, file, rel, what, out } = s;
  const st = fc.fsl.lstatSync(file);
  if (!st) {
    out.push({ severity: s.severity, check: what, message: `${what} missing`, file: rel });
    return undefined;
  }
  if (st.isSymbolicLink()) {
    out.push({ severity: 'error', check: 'permissions', message: `the ${what} is a symbolic link (the sidecar refuses it)`, file: rel });
    return undefined;
  }
  if (!st.isFile()) {
    out.push({ severity: 'error', check: 'permissions', message: `the ${what} is not a regular file`, file: rel });
    return undefined;
  }
  fc.fileMode(st, file, out);
  try {
    return fc.fsl.openSync(file, READ_FLAGS);
  } catch (err) {
    out.push({ severity: 'error', check: what, message: `cannot be read (${describe(err)})`, file: rel });
    return undefined;
  }
}

function scanOpen(s: Scan, fd: number): ScannedJournal | undefined {
  const fst = s.fc.fsl.fstatSync(fd);
  if (!fst.isFile()) {
    s.out.push({ severity: 'error', check: 'permissions', message: `the ${s.what} is not a regular file`, file: s.rel });
    return undefined;
  }
  const head = checkedHeader(s, fd, fst.size);
  if (!head) return undefined;
  let checkpoint: CommittedRecord | undefined;
  let firstSeq: number | undefined;
  const onCommit = (rec: CommittedRecord) => {
    firstSeq ??= rec.seq;
    if (rec.kind === 'checkpoint') checkpoint = { ...rec };
    s.onRecord(s.id, rec, s.rel);
  };
  const scanned = scanBody(s, fd, head.line, fst.size, onCommit, baseState(head.header), head.cipher);
  if (!scanned) return undefined;
  const { position, tail } = scanned;
  if (tail) reportTail(s, position, tail);
  return {
    header: head.header, headerLine: head.line.bytes, position, size: scanned.size, ino: fst.ino, dataStart: head.line.end,
    firstSeq: firstSeq ?? (checkpoint ? Number(checkpoint.seq) : 1), ...(checkpoint ? { checkpoint } : {}), ...(tail ? { tail } : {}),
  };
}

/** The header, if it verifies and names this session. */
function checkedHeader(s: Scan, fd: number, size: number): { header: Record<string, unknown>; line: Line; cipher?: JournalCipher } | undefined {
  let head;
  try {
    head = readHeader(s.fc.fsl, fd, size);
  } catch (err) {
    s.out.push({ severity: s.severity, check: s.what, message: `header: ${reasonOf(err)}`, file: s.rel, line: 1 });
    return undefined;
  }
  if (head.header.sessionId !== s.id) {
    s.out.push({ severity: s.severity, check: s.what, message: 'the header names another session', file: s.rel, line: 1 });
    return undefined;
  }
  return head;
}

/** The record lines after the header; undefined (with the damage reported) when they are corrupt. */
function scanBody(
  s: Scan, fd: number, header: Line, size: number, onCommit: (rec: CommittedRecord) => void, base: HeaderState, cipher?: JournalCipher,
): (ScanResult & { size: number }) | undefined {
  const { fsl } = s.fc;
  const origin: JournalPosition = { bytes: header.end, lastSeq: 0, records: 0, lastCrc: crcOf(header.bytes) };
  try {
    let scan = scanRecords(fsl, fd, origin, size, onCommit, base, cipher);
    if (scan.tail && s.what === 'journal') {
      // A sidecar may be writing right now: what looked torn may be a batch being written.
      const now = fsl.fstatSync(fd).size;
      if (now > size) {
        size = now;
        scan = scanRecords(fsl, fd, scan.position, size, onCommit, base, cipher);
      }
    }
    return { ...scan, size };
  } catch (err) {
    reportDamage(s, fd, err, header.end, size, cipher);
    return undefined;
  }
}

function reportDamage(s: Scan, fd: number, err: unknown, dataStart: number, size: number, cipher?: JournalCipher): void {
  const { out, what, rel, severity } = s;
  const lineNo = err instanceof StoreError && typeof err.details.line === 'number' ? err.details.line : undefined;
  out.push({ severity, check: what, message: reasonOf(err), file: rel, ...(lineNo !== undefined ? { line: lineNo } : {}) });
  if (lineNo === undefined) return;
  const more = moreDamage(s, fd, dataStart, size, lineNo, cipher);
  if (more.count === 0) return;
  const listed = more.lines.join(', ');
  out.push({ severity, check: what, message: `${more.count} more damaged line${more.count === 1 ? '' : 's'} after it (line${more.lines.length === 1 ? '' : 's'} ${listed}${more.count > more.lines.length ? ', …' : ''})`, file: rel });
}

function reportTail(s: Scan, position: JournalPosition, tail: NonNullable<ScanResult['tail']>): void {
  if (s.what === 'journal') {
    s.out.push({
      severity: s.severity === 'error' ? 'warning' : s.severity, check: s.what, file: s.rel, line: position.records + 2,
      message: `torn tail: ${tail.bytes} bytes after seq ${position.lastSeq} (${tail.reason}): an append that was never acknowledged, or one being written now; the next writable open moves it to recovery/`,
    });
  } else {
    s.out.push({
      severity: s.severity, check: s.what, file: s.rel, line: position.records + 2,
      message: `damaged: the last ${tail.bytes} bytes do not verify (${tail.reason}); an archive is written whole, so this is not a torn write`,
    });
  }
}

/** Damaged lines after the first one, found by decoding each line on its own. */
function moreDamage(s: Scan, fd: number, dataStart: number, size: number, firstBad: number, cipher?: JournalCipher): { count: number; lines: number[] } {
  const lines: number[] = [];
  let count = 0;
  let lineNo = 1;
  for (const line of scanLines(s.fc.fsl, fd, dataStart, size)) {
    lineNo += 1;
    if (lineNo <= firstBad) continue;
    const ok = line.terminated && decodeLine(line.bytes, cipher).ok;
    if (ok) continue;
    count += 1;
    if (lines.length < MORE_DAMAGE_LISTED) lines.push(lineNo);
  }
  return { count, lines };
}
