import type { FsLayer } from '../../../durable/fsLayer.js';
import { peekSeq } from './format.js';
import { scanLines } from './lines.js';
import type { JournalHandle } from './open.js';
import { seekAfterSeq } from './read.js';

/** Where a compaction's kept suffix starts in the active journal (the core planned what the checkpoint holds). */

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
