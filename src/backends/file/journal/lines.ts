import type { FsLayer } from '../../../durable/fsLayer.js';

export interface Line {
  /** Offset of the line's first byte. */
  start: number;
  /** Offset just past the newline (or past the last byte of an unterminated line). */
  end: number;
  /** The line without its newline. */
  bytes: Buffer;
  terminated: boolean;
}

const CHUNK = 1 << 20;
const SMALL_CHUNK = 1 << 16;
const NL = 0x0a;
/** nextLineStart's read buffer, reused (it is synchronous and keeps no view of it): a page's bisecting seek allocates nothing. */
let seekBuf: Buffer | undefined;

function readAt(fsl: FsLayer, fd: number, buf: Buffer, position: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = fsl.readSync(fd, buf, got, buf.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}

/**
 * Lines of `fd` in [start, end), read in large chunks; a line may span many chunks. `firstChunk`
 * sizes the first read: a caller that wants one line (a header) reads 64 KiB, not 1 MiB.
 */
export function* scanLines(fsl: FsLayer, fd: number, start: number, end: number, firstChunk = CHUNK): Generator<Line> {
  let pos = start;
  let lineStart = start;
  let parts: Buffer[] = [];
  let size = firstChunk;
  while (pos < end) {
    const chunk = Buffer.allocUnsafe(Math.min(size, end - pos));
    size = CHUNK;
    const n = readAt(fsl, fd, chunk, pos);
    let from = 0;
    for (let nl = chunk.indexOf(NL, from); nl !== -1 && nl < n; nl = chunk.indexOf(NL, from)) {
      const piece = chunk.subarray(from, nl);
      const bytes = parts.length > 0 ? Buffer.concat([...parts, piece]) : piece;
      parts = [];
      yield { start: lineStart, end: pos + nl + 1, bytes, terminated: true };
      lineStart = pos + nl + 1;
      from = nl + 1;
    }
    if (from < n) parts.push(chunk.subarray(from, n));
    pos += n;
    if (n < chunk.length) break; // the file is shorter than expected: stop at what exists
  }
  if (parts.length > 0) yield { start: lineStart, end: pos, bytes: Buffer.concat(parts), terminated: false };
}

/** The first line of [start, end), or undefined when there is none. */
export function firstLine(fsl: FsLayer, fd: number, start: number, end: number): Line | undefined {
  const first = scanLines(fsl, fd, start, end, SMALL_CHUNK).next();
  return first.done ? undefined : first.value;
}

/** The complete line whose newline is the byte at `end - 1`, or undefined if there is none. */
export function lineEndingAt(fsl: FsLayer, fd: number, end: number, floor: number): Line | undefined {
  if (end <= floor) return undefined;
  const last = Buffer.alloc(1);
  if (readAt(fsl, fd, last, end - 1) !== 1 || last[0] !== NL) return undefined;
  const parts: Buffer[] = [];
  let pos = end - 1;
  while (pos > floor) {
    const len = Math.min(SMALL_CHUNK, pos - floor);
    const buf = Buffer.allocUnsafe(len);
    if (readAt(fsl, fd, buf, pos - len) !== len) return undefined;
    const nl = buf.lastIndexOf(NL);
    if (nl !== -1) {
      parts.unshift(buf.subarray(nl + 1));
      return { start: pos - len + nl + 1, end, bytes: Buffer.concat(parts), terminated: true };
    }
    parts.unshift(buf);
    pos -= len;
  }
  return { start: floor, end, bytes: Buffer.concat(parts), terminated: true };
}

/** Offset of the first line start at or after `from` (the byte after the next newline), or `limit`. */
export function nextLineStart(fsl: FsLayer, fd: number, from: number, limit: number): number {
  let pos = from;
  seekBuf ??= Buffer.allocUnsafe(SMALL_CHUNK);
  while (pos < limit) {
    const buf = seekBuf.subarray(0, Math.min(SMALL_CHUNK, limit - pos));
    const n = readAt(fsl, fd, buf, pos);
    const nl = buf.subarray(0, n).indexOf(NL);
    if (nl !== -1) return pos + nl + 1;
    if (n < buf.length) return limit;
    pos += n;
  }
  return limit;
}

/** The first `length` bytes at `position`. */
export function readPrefix(fsl: FsLayer, fd: number, position: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  return buf.subarray(0, readAt(fsl, fd, buf, position));
}
