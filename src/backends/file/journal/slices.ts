import type { FsLayer } from '../../../durable/fsLayer.js';
import { readPrefix } from './lines.js';

/**
 * Long whole-journal operations of a serving sidecar (compaction, fork) run in slices: about
 * SLICE_BYTES of reading, copying or parsing, then the event loop runs. Between two slices every
 * other session's requests are read and answered, and the lease refresh timer (proper-lockfile,
 * on the event loop) keeps the lease alive. The operation's own session is held by its commit
 * queue meanwhile (CommitQueue.exclusive), so nothing else writes its journal.
 *
 * Every call still goes through the FsLayer (the fault-injection seam and the final secret
 * gate); only the order in which calls of different sessions interleave changes.
 */
export const SLICE_BYTES = 1 << 20;

/**
 * Bytes of records parsed in one slice (a page of readPage): parsing, the canonical check and the
 * reduction cost about 8 ms per MiB of ~1 KB records here, copying about 1 ms per MiB, so a parse
 * slice is an eighth of a copy slice: each takes about a millisecond. (Measured with the bench
 * row of appends beside a compaction: 128 KiB pages and syncs every 4 MiB halved that row's p50
 * and p99 against 256 KiB and 8 MiB, for a compaction about 5% longer.)
 */
export const PARSE_SLICE_BYTES = 128 << 10;

/**
 * A big copy is fdatasynced every SYNC_EVERY bytes on its way (in the thread pool), not only at its
 * end: with ext4's ordered data mode a journal commit writes out the data of every block allocated
 * in its transaction, so one sync of 100 MB of dirty pages would make every other session's small
 * fdatasync wait behind all of it. These syncs only bound that wait; the one after the copy is the
 * one the copy's durability rests on (a failed one fails the copy, which is then discarded).
 */
export const SYNC_EVERY = 4 << 20;

/** Lets the event loop run once: I/O callbacks, timers and other requests come first. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Writes all of `buf` at `at` (a short write that moves nothing is EIO, never a loop). */
export function writeAll(fsl: FsLayer, fd: number, buf: Buffer, at: number): void {
  for (let done = 0; done < buf.length; ) {
    const n = fsl.writeSync(fd, buf, done, buf.length - done, at + done);
    if (n <= 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
    done += n;
  }
}

/**
 * Copies bytes [start, end) of `from` to `to` at offset `at`, in chunks of whole lines, yielding
 * to the event loop after each chunk (and fdatasyncing `to` after every `syncEvery` bytes, if
 * given). Returns the offset in `to` after the copy.
 */
export async function copyRange(fsl: FsLayer, from: number, start: number, end: number, to: number, at: number, syncEvery = Infinity): Promise<number> {
  let pos = start;
  let out = at;
  let unsynced = 0;
  while (pos < end) {
    const chunk = wholeLines(fsl, from, pos, end);
    if (chunk.length === 0) throw Object.assign(new Error('journal shorter than expected'), { code: 'EIO' });
    writeAll(fsl, to, chunk, out);
    pos += chunk.length;
    out += chunk.length;
    unsynced += chunk.length;
    if (pos >= end) break;
    if (unsynced >= syncEvery) {
      unsynced = 0;
      await fsl.fdatasync(to);
    } else {
      await yieldToLoop();
    }
  }
  return out;
}

/**
 * The next chunk of a copy, cut after its last newline: the final secret gate checks each write
 * call on its own, so a chunk never splits a line (a line longer than a chunk is read whole).
 */
export function wholeLines(fsl: FsLayer, from: number, pos: number, end: number): Buffer {
  for (let want = Math.min(SLICE_BYTES, end - pos); ; want = Math.min(want * 2, end - pos)) {
    const chunk = readPrefix(fsl, from, pos, want);
    if (pos + chunk.length >= end || chunk.length < want) return chunk;
    const nl = chunk.lastIndexOf(0x0a);
    if (nl !== -1) return chunk.subarray(0, nl + 1);
  }
}
