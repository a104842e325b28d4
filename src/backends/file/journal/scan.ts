import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import { decodeLine, JOURNAL_FORMAT, JOURNAL_VERSION, openHeader } from './format.js';
import { type JournalCipher, storeKeyOf } from './cipher.js';
import { applyTurn, type TurnEvent, type TurnState } from '../../../domain/turns/turnState.js';
import { firstLine, type Line, scanLines } from './lines.js';
import { type HeaderState, reduceHeader } from '../../../domain/sessionUpdate.js';
import { NO_RUNTIME, reduceRuntime, type RuntimeCounters } from '../../../domain/runtimeCounters.js';
import { NO_USAGE, reduceUsage, type UsageTotals } from '../../../domain/usage.js';
import { PARSE_SLICE_BYTES, yieldToLoop } from './slices.js';

/** Where a verified journal prefix ends: everything a reader or writer needs to continue. */
export interface JournalPosition {
  /** Offset just past the last line of the last complete batch. */
  bytes: number;
  lastSeq: number;
  /** Record lines in the verified prefix (line number of a record = 1 + its index). */
  records: number;
  /** Checksum of the line ending at `bytes` (the header's when there are no records). */
  lastCrc: string;
  /** `ts` of the last record, if any. */
  lastTs?: string;
  /** The turn state after the last record (null: no turn yet). */
  turn?: TurnState | null;
  /** The apiSeq/toolSeq counters after the last record (absent: all zero). */
  runtime?: RuntimeCounters;
  /** The effective title/metadata/tags after the session's updates (absent: never updated). */
  header?: HeaderState;
  /** The usage totals after the last record (absent: none counted). */
  usage?: UsageTotals;
}

/** The session state a position ends in: what the next append is planned against. */
export function stateOf(p: JournalPosition): { turn: TurnState | null; runtime: RuntimeCounters; usage: UsageTotals; header?: HeaderState } {
  return { turn: p.turn ?? null, runtime: p.runtime ?? NO_RUNTIME, usage: p.usage ?? NO_USAGE, ...(p.header ? { header: p.header } : {}) };
}

export interface ScanResult {
  position: JournalPosition;
  /** Bytes after `position.bytes` that are not a complete, valid batch: a torn tail. */
  tail?: { offset: number; bytes: number; reason: string };
}

export type CommittedRecord = Record<string, unknown> & { seq: number; kind: string };

/** The checksum text of a verified line. */
export function crcOf(line: Buffer): string {
  return line.toString('latin1', line.length - 10, line.length - 2);
}

export function corrupt(lineNo: number, reason: string, extra: Record<string, unknown> = {}): StoreError {
  return new StoreError('Corrupt', `journal line ${lineNo} is damaged: ${reason}`, { line: lineNo, reason, ...extra });
}

/**
 * Reads and verifies the header (line 1), opening it with the store's key (cipher.ts): `cipher`
 * is what the journal's record lines are read with (absent: a plaintext journal).
 */
export function readHeader(fsl: FsLayer, fd: number, size: number): { header: Record<string, unknown>; line: Line; cipher?: JournalCipher } {
  const line = firstLine(fsl, fd, 0, size);
  if (!line || !line.terminated) throw corrupt(1, 'missing or unterminated header');
  const decoded = decodeLine(line.bytes);
  if (!decoded.ok) throw corrupt(1, `header ${decoded.reason}`);
  if (decoded.value.format !== JOURNAL_FORMAT) throw corrupt(1, 'not a session-sidecar journal');
  if (decoded.value.version !== JOURNAL_VERSION) throw corrupt(1, `unsupported journal version ${String(decoded.value.version)}`);
  const opened = openHeader(decoded.value, storeKeyOf(fsl));
  if (!opened.ok) throw corrupt(1, `header ${opened.reason}`);
  return { header: opened.value, line, ...(opened.cipher ? { cipher: opened.cipher } : {}) };
}

/**
 * Verifies the record lines in [from.bytes, end). Rules (STORAGE.md, "Recovery"):
 * - every line must decode (checksum, canonical JSON) and carry the next seq;
 * - a damaged or unterminated line with only damage after it, or a batch cut short at the
 *   end, is a torn tail: reported, not part of the position;
 * - a damaged line followed by a valid one, or a valid line out of sequence, is corruption.
 * `onCommit` sees each record once its batch is complete. `base`: the header's title/metadata/tags
 * (what the first `sessionUpdate` applies to).
 */
export function scanRecords(
  fsl: FsLayer,
  fd: number,
  from: JournalPosition,
  end: number,
  onCommit?: (record: CommittedRecord) => void,
  base: HeaderState = {},
  cipher?: JournalCipher,
): ScanResult {
  let position = { ...from };
  let expected = from.lastSeq + 1;
  let lineNo = 1 + from.records;
  let batch: { end: number; records: CommittedRecord[] } | undefined;
  let damage: { line: number; reason: string } | undefined;
  for (const line of scanLines(fsl, fd, from.bytes, end)) {
    lineNo += 1;
    const decoded = line.terminated ? decodeLine(line.bytes, cipher) : ({ ok: false, reason: 'unterminated' } as const);
    if (!decoded.ok) {
      // A line whose checksum holds but that does not authenticate was not torn: it was altered or moved.
      if ('fatal' in decoded && decoded.fatal) throw corrupt(lineNo, decoded.reason);
      damage ??= { line: lineNo, reason: decoded.reason };
      continue;
    }
    if (damage) throw corrupt(damage.line, `${damage.reason}, followed by valid line ${lineNo}`);
    const rec = decoded.value as CommittedRecord;
    if (rec.kind === 'checkpoint') {
      // A compacted journal's first record line stands for every record up to its own seq.
      if (lineNo !== 2 || rec.batchEnd !== undefined) throw corrupt(lineNo, 'a checkpoint that is not the first record line');
      if (!Number.isSafeInteger(rec.seq) || rec.seq < 1) throw corrupt(lineNo, 'invalid checkpoint seq');
      expected = rec.seq;
    }
    if (rec.seq !== expected) throw corrupt(lineNo, `seq ${String(rec.seq)} where ${expected} was expected`);
    const batchEnd = rec.batchEnd;
    if (batch && batchEnd !== batch.end) throw corrupt(lineNo, 'batch interrupted by another batch');
    if (batchEnd !== undefined && (!Number.isSafeInteger(batchEnd) || (batchEnd as number) < rec.seq)) {
      throw corrupt(lineNo, 'invalid batchEnd');
    }
    delete rec.batchEnd;
    batch ??= { end: typeof batchEnd === 'number' ? batchEnd : rec.seq, records: [] };
    batch.records.push(rec);
    expected += 1;
    if (rec.seq === batch.end) {
      let turn = position.turn ?? null;
      let runtime = position.runtime ?? NO_RUNTIME;
      let header = position.header;
      let usage = position.usage ?? NO_USAGE;
      for (const r of batch.records) {
        header = reduceHeader(header, base, r);
        if (r.kind === 'turn') turn = reduceOnDisk(turn, r, lineNo - (batch.end - r.seq));
        else if (r.kind === 'checkpoint' || r.kind === 'rewind') turn = (r.turn as TurnState | null | undefined) ?? null;
        runtime = reduceRuntime(runtime, r);
        usage = reduceUsage(usage, r);
        onCommit?.(r);
      }
      position = {
        bytes: line.end,
        lastSeq: rec.seq,
        records: position.records + batch.records.length,
        lastCrc: crcOf(line.bytes),
        lastTs: typeof rec.ts === 'string' ? rec.ts : position.lastTs,
        turn,
        runtime,
        ...(header ? { header } : {}),
        usage,
      };
      batch = undefined;
    }
  }
  if (position.bytes >= end) return { position };
  const reason = damage?.reason ?? 'incomplete batch';
  return { position, tail: { offset: position.bytes, bytes: end - position.bytes, reason } };
}

/**
 * scanRecords over [from.bytes, end) in windows of about PARSE_SLICE_BYTES, yielding to the event
 * loop after each: the same result, because a window always restarts at the end of the last
 * complete batch before it (`position`). A window's cut leaves an unterminated line or an
 * incomplete batch at its end, which scanRecords reports as a tail and does not commit; the next
 * window reads those lines again, with what follows them, and judges them as one scan would
 * (damage followed by a valid line is corruption wherever the window ended). A batch longer than
 * a window gets a window twice as long, until it fits. Only the last window, which ends at
 * `end`, can report the real tail.
 */
export async function scanRecordsInSlices(
  fsl: FsLayer, fd: number, from: JournalPosition, end: number, onCommit?: (record: CommittedRecord) => void, base: HeaderState = {}, cipher?: JournalCipher,
): Promise<ScanResult> {
  let position = from;
  let window = PARSE_SLICE_BYTES;
  for (;;) {
    const stop = Math.min(end, position.bytes + window);
    const scan = scanRecords(fsl, fd, position, stop, onCommit, base, cipher);
    if (stop >= end) return scan;
    if (scan.position.bytes === position.bytes) {
      window *= 2;
    } else {
      position = scan.position;
      window = PARSE_SLICE_BYTES;
    }
    await yieldToLoop();
  }
}

/** A transition on disk that the rules refuse is corruption: the journal was not written by them. */
function reduceOnDisk(turn: TurnState | null, rec: CommittedRecord, lineNo: number): TurnState {
  try {
    return applyTurn(turn, rec as unknown as TurnEvent, rec.seq);
  } catch (err) {
    throw corrupt(lineNo, `impossible turn transition (${err instanceof StoreError ? err.message : 'invalid'})`);
  }
}
