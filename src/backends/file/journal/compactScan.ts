import { baseState } from '../../../domain/sessionUpdate.js';
import { EMPTY_PREFIX, type PrefixState, reducePrefix } from '../../../engine/reduce.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { peekSeq } from './format.js';
import { scanLines } from './lines.js';
import type { JournalHandle } from './open.js';
import { readPage, seekAfterSeq } from './read.js';
import { PARSE_SLICE_BYTES, yieldToLoop } from './slices.js';

/**
 * The reads a compaction (and a rewind) makes of the active journal before it writes anything:
 * where the kept suffix starts, the rewinds in it, and the state the checkpoint carries. The
 * two whole-range reads page through the journal PARSE_SLICE_BYTES at a time and yield to the event
 * loop between pages (slices.ts); the caller holds the session's commit queue, so the journal
 * does not change under them.
 */

/**
 * Offset of the first line with seq > throughSeq (the journal's end when there is none). Bounded
 * work, not a scan: a bisecting seek lands within 64 KiB of the line, then a line or two is read.
 */
export function offsetAfter(fsl: FsLayer, handle: JournalHandle, throughSeq: number): number {
  const end = handle.position.bytes;
  const from = seekAfterSeq(fsl, handle.fd, handle.dataStart, end, throughSeq);
  for (const line of scanLines(fsl, handle.fd, from, end)) {
    const seq = peekSeq(line.bytes);
    if (seq !== undefined && seq > throughSeq) return line.start;
  }
  return end;
}

/** The session state as of `seq` of the active generation (for session/rewind): the reduction a checkpoint carries. */
export async function stateAt(fsl: FsLayer, handle: JournalHandle, seq: number): Promise<PrefixState> {
  return prefixState(fsl, handle, offsetAfter(fsl, handle, seq), seq);
}

const REWIND: ReadonlySet<string> = new Set(['rewind']);

/** The rewind records after throughSeq (their lines are the only ones parsed; the others' checksums and seqs are checked). */
export async function keptRewinds(fsl: FsLayer, handle: JournalHandle, suffixAt: number, throughSeq: number): Promise<Array<{ seq: number; toSeq: number }>> {
  const out: Array<{ seq: number; toSeq: number }> = [];
  let afterSeq = throughSeq;
  let from = suffixAt;
  const end = handle.position.bytes;
  while (afterSeq < handle.position.lastSeq) {
    const page = readPage(fsl, handle.fd, { from, end, afterSeq, limit: 10_000, maxBytes: PARSE_SLICE_BYTES, firstSeq: handle.firstSeq, kinds: REWIND, cipher: handle.cipher });
    for (const r of page.records) out.push({ seq: r.seq, toSeq: Number((r as { toSeq?: unknown }).toSeq) });
    if (page.scannedSeq === afterSeq) break;
    afterSeq = page.scannedSeq;
    from = seekAfterSeq(fsl, handle.fd, handle.dataStart, end, afterSeq);
    await yieldToLoop();
  }
  return out;
}

/** The turn state and runtime counters at throughSeq, and how many records the checkpoint stands for in all. */
export async function prefixState(fsl: FsLayer, handle: JournalHandle, end: number, throughSeq: number): Promise<PrefixState> {
  let s = EMPTY_PREFIX;
  const base = baseState(handle.header);
  let afterSeq = 0;
  let from = handle.dataStart;
  while (afterSeq < throughSeq) {
    const page = readPage(fsl, handle.fd, { from, end, afterSeq, limit: 10_000, maxBytes: PARSE_SLICE_BYTES, firstSeq: handle.firstSeq, cipher: handle.cipher });
    if (page.records.length === 0) break;
    for (const rec of page.records as Array<Record<string, unknown> & { seq: number; kind: string }>) s = reducePrefix(s, rec, base);
    afterSeq = page.scannedSeq;
    from = seekAfterSeq(fsl, handle.fd, handle.dataStart, end, afterSeq);
    await yieldToLoop();
  }
  return s;
}
