import type { FsLayer } from '../../../durable/fsLayer.js';
import type { StoredRecord } from '../../../domain/types.js';
import { checksumOk, decodeLine, peekKind, peekSeq, recordBytesOfLine } from './format.js';
import { nextLineStart, readPrefix, scanLines } from './lines.js';
import { corrupt } from './scan.js';
import type { JournalCipher } from './cipher.js';
import { stringifyExact } from '../../../domain/exactJson.js';

const SEEK_WINDOW = 1 << 16;
/** scanLines' own chunk size: what a page with a large byte limit reads first. */
const FIRST_CHUNK = 1 << 20;
/** Lines of unwanted kinds a page may skip: this many times its byte limit (they are not parsed). */
const SKIP_BUDGET_PAGES = 4;

/**
 * A line start at or before the line with seq `afterSeq + 1`, found by bisecting byte offsets:
 * seqs grow by one per line, so a few small reads replace a scan from the start.
 * `lo` must be a line start whose seq is at most `afterSeq + 1`.
 */
export function seekAfterSeq(fsl: FsLayer, fd: number, lo: number, hi: number, afterSeq: number): number {
  while (hi - lo > SEEK_WINDOW) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const p = nextLineStart(fsl, fd, mid, hi);
    if (p >= hi) {
      hi = mid;
      continue;
    }
    const seq = peekSeq(readPrefix(fsl, fd, p, 32));
    if (seq === undefined) break; // damaged: the linear read from `lo` reports it
    if (seq <= afterSeq) lo = p;
    else hi = p;
  }
  return lo;
}

export interface PageRequest {
  from: number;
  end: number;
  afterSeq: number;
  limit: number;
  kinds?: ReadonlySet<string>;
  /** Stop after this many bytes of lines (at least one record is returned). */
  maxBytes: number;
  /** Seq of the journal's first record line (greater than 1 after a compaction). */
  firstSeq: number;
  /** Return each record's stored JSON bytes (in `texts`) instead of objects (in `records`). */
  asText?: boolean;
  /** The journal's cipher (encryption at rest): every line is opened, none passed on as stored. */
  cipher?: JournalCipher;
}

/** One record's JSON as slices of its journal line (their concatenation is the record). */
export type RecordBytes = Buffer[];

export interface Page {
  records: StoredRecord[];
  /** With `asText`: each record's stored JSON bytes, its line's checksum and seq verified. */
  texts: RecordBytes[];
  /** Seq of the last line examined (returned or filtered out). */
  scannedSeq: number;
}

const CLOSE = Buffer.from('}');

/** A line's record bytes when its checksum holds and its envelope is the writer's; else undefined (parse it). */
function asStored(line: Buffer): { seq: number; parts: RecordBytes } | undefined {
  if (!checksumOk(line)) return undefined; // the parse path reports the damage
  const r = recordBytesOfLine(line);
  return r && { seq: r.seq, parts: [...r.parts, CLOSE] };
}

function skippable(line: Buffer, kinds: ReadonlySet<string>): boolean {
  const kind = peekKind(line);
  return kind !== undefined && !kinds.has(kind);
}

/** Reads verified records after `afterSeq`; every returned line passed its checksum. */
export function readPage(fsl: FsLayer, fd: number, req: PageRequest): Page {
  const records: StoredRecord[] = [];
  const texts: RecordBytes[] = [];
  let scannedSeq = Math.max(req.afterSeq, req.firstSeq - 1);
  const lineOf = (seq: number) => 2 + seq - req.firstSeq;
  let bytes = 0;
  let skipped = 0;
  // A small page (a slice of a compaction's or a fork's scan) reads about its own size first, not
  // a whole 1 MiB chunk: `from` may lie up to a seek window before the first wanted line.
  for (const line of scanLines(fsl, fd, req.from, req.end, Math.min(FIRST_CHUNK, req.maxBytes + SEEK_WINDOW))) {
    const peeked = peekSeq(line.bytes);
    if (peeked !== undefined && peeked <= req.afterSeq) continue;
    const expected = scannedSeq + 1;
    if (req.kinds && line.terminated && skippable(line.bytes, req.kinds)) {
      // Not wanted: its checksum and seq are checked, its JSON is not parsed (runtime records
      // can be most of a journal's bytes; a reader of messages does not pay for them).
      if (!checksumOk(line.bytes)) throw corrupt(lineOf(expected), 'checksum mismatch', { seq: expected });
      if (peeked !== expected) throw corrupt(lineOf(expected), `seq ${String(peeked)} where ${expected} was expected`);
      scannedSeq = expected;
      skipped += line.bytes.length;
      if (skipped >= SKIP_BUDGET_PAGES * req.maxBytes) break; // one call never blocks on a whole huge journal
      continue;
    }
    const passed = req.asText && !req.cipher && line.terminated && (!req.kinds || peekKind(line.bytes) !== undefined) ? asStored(line.bytes) : undefined;
    if (passed) {
      // Passed on as stored: the checksum proves these are the bytes a writer wrote, and every
      // line a position covers was parsed and checked canonical when it was written or scanned.
      if (passed.seq !== expected) throw corrupt(lineOf(expected), `seq ${passed.seq} where ${expected} was expected`);
      scannedSeq = expected;
      bytes += line.bytes.length;
      texts.push(passed.parts); // a kind not wanted was skipped above
    } else {
      const decoded = line.terminated ? decodeLine(line.bytes, req.cipher) : ({ ok: false, reason: 'unterminated' } as const);
      if (!decoded.ok) throw corrupt(lineOf(expected), decoded.reason, { seq: expected });
      const rec = decoded.value as StoredRecord;
      if (rec.seq !== expected) throw corrupt(lineOf(expected), `seq ${String(rec.seq)} where ${expected} was expected`);
      scannedSeq = rec.seq;
      bytes += line.bytes.length;
      delete (rec as Record<string, unknown>).batchEnd;
      if (!req.kinds || req.kinds.has(rec.kind)) {
        if (req.asText) texts.push([Buffer.from(stringifyExact(rec))]);
        else records.push(rec);
      }
    }
    if (records.length + texts.length >= req.limit || bytes >= req.maxBytes) break;
  }
  return { records, texts, scannedSeq };
}
