import { crc32 } from 'node:zlib';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { corrupt } from './scan.js';

/**
 * session/read's fast path: a page of records copied as stored (less `batchEnd` and `crc`) into
 * a few large buffers, `r1,r2,…` — the body of the result's `records` array — without a string,
 * an object or a Buffer view per record beyond the one crc32 needs. Every line passed on is
 * terminated, carries the CRC-32 of its bytes, has the writer's envelope and the next seq.
 *
 * It handles only the common case, the records of the writer's envelope with no kind filter. At
 * the first line it does not handle (an envelope it does not recognise, a line without its
 * checksum, a line cut by the end of the readable bytes) it returns undefined and the caller
 * reads the page through the general path (journal/read.ts), which parses and reports exactly.
 * A line whose checksum is wrong or whose seq is not the next is Corrupt here, as it is there.
 */
export interface TextPage {
  /** The records, comma-separated, in order (their concatenation is the array's body). */
  chunks: Buffer[];
  count: number;
  /** Seq of the last line examined. */
  scannedSeq: number;
  /** Gives the chunks' buffers back to the pool: call only once nothing will read `chunks` again. */
  release(): void;
}

export interface TextPageRequest {
  from: number;
  end: number;
  afterSeq: number;
  limit: number;
  maxBytes: number;
  firstSeq: number;
}

const READ_CHUNK = 1 << 20;
const OUT_CHUNK = 4 << 20;
const NL = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE = 0x7d;
const SEQ_PREFIX = Buffer.from('{"seq":');
const TS_PREFIX = Buffer.from(',"ts":"');
const BATCH_PREFIX = Buffer.from(',"batchEnd":');
const CRC_PREFIX = Buffer.from(',"crc":"');
const CRC_SUFFIX_LENGTH = ',"crc":"00000000"}'.length;

/** Whether `buf` holds `what` at `at`. */
function has(buf: Buffer, at: number, what: Buffer): boolean {
  if (at + what.length > buf.length) return false;
  for (let i = 0; i < what.length; i++) if (buf[at + i] !== what[i]) return false;
  return true;
}

/** The decimal at `at` (1-16 digits, as the writer writes them): [value, end], or undefined. */
function digits(buf: Buffer, at: number, limit: number): [number, number] | undefined {
  let n = 0;
  let i = at;
  for (; i < limit && i - at < 16; i++) {
    const d = (buf[i] as number) - 48;
    if (d < 0 || d > 9) break;
    n = n * 10 + d;
  }
  return i === at ? undefined : [n, i];
}

/** The 8 lowercase hex digits at `at` as a number (what hex8 wrote), or -1. */
function hex8At(buf: Buffer, at: number): number {
  let n = 0;
  for (let i = at; i < at + 8; i++) {
    const c = buf[i] as number;
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

/**
 * Output buffers of OUT_CHUNK bytes that pages handed back (TextPage.release) once their bytes
 * were written out, so paging through a large session reuses about one page's worth of memory
 * instead of leaving every page's buffers to the garbage collector (external memory, which V8
 * collects late). Invariant: a buffer is here only while no page references it.
 */
const pool: Buffer[] = [];
const POOL_MAX = 8; // 32 MiB: two pages of PAGE_BYTES in flight at most are kept

/** The read buffer, reused by every page (readTextPage is synchronous: one page at a time). */
let readBuf: Buffer | undefined;

/** Output buffers filled in order; a record never spans two. */
class Out {
  readonly chunks: Buffer[] = [];
  /** Every pooled buffer this page took (the chunks are views of them). */
  private readonly owned: Buffer[] = [];
  private cur: Buffer = Buffer.alloc(0);
  private used = 0;

  private take(need: number): Buffer {
    if (need > OUT_CHUNK) return Buffer.allocUnsafe(need); // a record larger than a chunk: not pooled
    const b = pool.pop() ?? Buffer.allocUnsafe(OUT_CHUNK); // every byte handed out is written first
    this.owned.push(b);
    return b;
  }

  release(): void {
    for (const b of this.owned.splice(0)) if (pool.length < POOL_MAX) pool.push(b);
  }

  /** Appends `[a, b)` then `[c, d)` of `src`, then `}` (after a comma unless first). */
  push(src: Buffer, a: number, b: number, c: number, d: number, first: boolean): void {
    const need = (first ? 0 : 1) + (b - a) + (d - c) + 1;
    if (this.used + need > this.cur.length) {
      this.seal();
      this.cur = this.take(need);
    }
    if (!first) this.cur[this.used++] = COMMA;
    this.used += src.copy(this.cur, this.used, a, b);
    if (c < d) this.used += src.copy(this.cur, this.used, c, d); // only a batch line has a second piece
    this.cur[this.used++] = CLOSE;
  }

  seal(): void {
    if (this.used > 0) this.chunks.push(this.cur.subarray(0, this.used));
    this.cur = Buffer.alloc(0);
    this.used = 0;
  }
}

/** Reads a page as stored bytes; undefined when a line needs the general path (see above). */
export function readTextPage(fsl: FsLayer, fd: number, req: TextPageRequest): TextPage | undefined {
  const out = new Out();
  let count = 0;
  let bytes = 0;
  let scannedSeq = Math.max(req.afterSeq, req.firstSeq - 1);
  const lineOf = (seq: number) => 2 + seq - req.firstSeq;
  readBuf ??= Buffer.allocUnsafe(READ_CHUNK);
  let buf: Buffer = readBuf; // grown (and then not kept) only for a line longer than READ_CHUNK
  let pos = req.from; // file offset of buf[0]
  let have = 0; // bytes of buf read
  for (;;) {
    // fill: keep the unfinished line at the front, read after it
    if (pos + have < req.end && have < buf.length) {
      const n = fsl.readSync(fd, buf, have, Math.min(buf.length - have, req.end - pos - have), pos + have);
      if (n === 0) return finish(); // shorter than its position says: the general path reports it
      have += n;
    }
    let start = 0;
    let nl = buf.indexOf(NL, 0);
    if (nl === -1 || nl >= have) {
      if (pos + have >= req.end) return have === 0 ? finish() : bail(); // an unterminated last line
      if (have === buf.length) buf = grow(buf, have); // a line longer than the buffer
      continue;
    }
    while (nl !== -1 && nl < have) {
      const r = line(buf, start, nl);
      if (r === undefined) return bail();
      if (r.seq > req.afterSeq) {
        const expected = scannedSeq + 1;
        if (!r.crcOk) throw bail(corrupt(lineOf(expected), 'checksum mismatch', { seq: expected }));
        if (r.seq !== expected) throw bail(corrupt(lineOf(expected), `seq ${r.seq} where ${expected} was expected`));
        out.push(buf, start, r.cut, r.resume, r.bodyEnd, count === 0);
        scannedSeq = expected;
        count += 1;
        bytes += nl + 1 - start;
        if (count >= req.limit || bytes >= req.maxBytes) return finish();
      }
      start = nl + 1;
      nl = buf.indexOf(NL, start);
    }
    // move the unfinished line to the front
    if (start < have) buf.copy(buf, 0, start, have);
    pos += start;
    have -= start;
    if (pos >= req.end) return finish();
  }

  /** The page is abandoned (the general path takes over, or it is Corrupt): nothing references its buffers. */
  function bail(): undefined;
  function bail<E>(err: E): E;
  function bail<E>(err?: E): E | undefined {
    out.release();
    return err;
  }

  function finish(): TextPage {
    out.seal();
    let released = false;
    return {
      chunks: out.chunks, count, scannedSeq,
      release: () => {
        if (!released) out.release();
        released = true;
      },
    };
  }
}

function grow(buf: Buffer, have: number): Buffer {
  const bigger = Buffer.allocUnsafe(buf.length * 2);
  buf.copy(bigger, 0, 0, have);
  return bigger;
}

/**
 * One line at [start, nl): its seq, whether its checksum holds, and the record's bytes as
 * [start, cut) + [resume, bodyEnd) (batchEnd cut out) + `}`; undefined when the envelope is not
 * the writer's `{"seq":N,"ts":"…",["batchEnd":M,]` or there is no checksum member.
 */
function line(buf: Buffer, start: number, nl: number): { seq: number; crcOk: boolean; cut: number; resume: number; bodyEnd: number } | undefined {
  if (nl - start < CRC_SUFFIX_LENGTH + 2 || !has(buf, start, SEQ_PREFIX)) return undefined;
  const seq = digits(buf, start + SEQ_PREFIX.length, nl);
  if (!seq || !has(buf, seq[1], TS_PREFIX)) return undefined;
  const ts = seq[1] + TS_PREFIX.length; // 1-40 bytes, no quote or backslash, then its quote
  let i = ts;
  while (i < nl && i <= ts + 40 && buf[i] !== QUOTE && buf[i] !== BACKSLASH) i++;
  if (i === ts || i > ts + 40 || buf[i] !== QUOTE) return undefined;
  const afterTs = i + 1; // at the comma before the next member
  let cut = afterTs;
  let resume = afterTs;
  if (has(buf, afterTs, BATCH_PREFIX)) {
    const batch = digits(buf, afterTs + BATCH_PREFIX.length, nl);
    if (!batch || buf[batch[1]] !== COMMA) return undefined;
    resume = batch[1];
  }
  const bodyEnd = nl - CRC_SUFFIX_LENGTH;
  if (bodyEnd < resume || !has(buf, bodyEnd, CRC_PREFIX) || buf[nl - 2] !== QUOTE || buf[nl - 1] !== CLOSE) return undefined;
  const stored = hex8At(buf, bodyEnd + CRC_PREFIX.length);
  if (stored < 0) return undefined;
  if (cut === resume) cut = resume = bodyEnd; // no batchEnd: one piece
  return { seq: seq[0], crcOk: crc32(buf.subarray(start, bodyEnd)) === stored, cut, resume, bodyEnd };
}
