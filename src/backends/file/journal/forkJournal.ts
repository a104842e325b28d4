import { openPrivate } from '../../../durable/durableFile.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import type { JournalCipher } from './cipher.js';
import { encodeRecordLine } from './format.js';
import type { JournalHandle } from './open.js';
import { readPage, seekAfterSeq } from './read.js';
import { PARSE_SLICE_BYTES, yieldToLoop } from './slices.js';

/**
 * What a fork reads: the source journal as one verified prefix, on a descriptor of the fork's own.
 * A journal is only ever appended to (a compaction writes a new file and renames it over the path,
 * never changes the old one), so the bytes [0, end) of this inode stay what they were verified as
 * for as long as the descriptor is open — whatever the source's writer appends or compacts while
 * the fork reads in slices (a compaction closes the writer's descriptor; this one stays open).
 */
export interface ForkSource {
  fd: number;
  dataStart: number;
  end: number;
  firstSeq: number;
  cipher?: JournalCipher;
}

/**
 * Pins the journal `handle` stands for (called with the handle's committed view, synchronously):
 * a new read-only descriptor on the file at the journal's path, which must be the handle's file.
 */
export function forkSource(fsl: FsLayer, layout: StoreLayout, handle: JournalHandle): ForkSource {
  const id = handle.header.sessionId;
  const fd = openPrivate(fsl, layout.journal(id), false);
  if (fsl.fstatSync(fd).ino !== handle.ino) {
    fsl.closeSync(fd);
    // Another process renamed a file over the journal between this instance's view and now.
    throw new StoreError('Conflict', `the journal of session ${id} was replaced while the fork started; nothing was written, repeat the request`, {
      reason: 'journalChanged', sessionId: id,
    });
  }
  return { fd, dataStart: handle.dataStart, end: handle.position.bytes, firstSeq: handle.firstSeq, ...(handle.cipher ? { cipher: handle.cipher } : {}) };
}

/**
 * The record lines of a fork: the source's records from its first record line (a checkpoint
 * when it was compacted: a fork starts there, not from the archives) up to atSeq, seqs and
 * timestamps kept, each re-encoded as a batch of its own (plaintext: sealed for the fork by the
 * writer, after the gates) — the fork is written whole under a temporary name and renamed, so
 * no batch of it can be torn. Read page by page (PARSE_SLICE_BYTES), yielding to the event loop
 * after each; every page's lines are checked for a registered secret (`findSecret`, the rule
 * that matched) before more is read: the first match stops the fork, with nothing written.
 * A page holds whole lines, as every write of the fork does (the final gate's contract).
 */
export async function forkLines(
  fsl: FsLayer, source: ForkSource, atSeq: number, findSecret: (bytes: Buffer) => string | undefined,
): Promise<{ lines: Buffer[]; rule?: string }> {
  const lines: Buffer[] = [];
  let afterSeq = 0;
  let from = source.dataStart;
  while (afterSeq < atSeq) {
    const page = readPage(fsl, source.fd, {
      from, end: source.end, afterSeq, limit: 10_000, maxBytes: PARSE_SLICE_BYTES, firstSeq: source.firstSeq, cipher: source.cipher,
    });
    const own: Buffer[] = [];
    let done = false;
    for (const rec of page.records) {
      if (rec.seq > atSeq) {
        done = true;
        break;
      }
      const { seq, ts, ...body } = rec;
      if (body.kind === 'checkpoint') {
        // The fork has no archives of its own: its checkpoint starts generation 0 and names none.
        delete body.archived;
        body.generation = 0;
      }
      own.push(encodeRecordLine(seq, ts, undefined, JSON.stringify(body)));
    }
    const rule = own.length > 0 ? findSecret(own.length === 1 ? (own[0] as Buffer) : Buffer.concat(own)) : undefined;
    if (rule) return { lines: [], rule };
    lines.push(...own);
    if (done || page.records.length === 0 || page.scannedSeq === afterSeq) break;
    afterSeq = page.scannedSeq;
    from = seekAfterSeq(fsl, source.fd, source.dataStart, source.end, afterSeq); // a few small reads, not a rescan
    await yieldToLoop();
  }
  return { lines };
}
