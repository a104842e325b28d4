import { appendDurably } from '../../../durable/durableFile.js';
import { AppendFailure } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { CommitQueue, type CommitSink, FailStop } from '../../../engine/commitQueue.js';
import { StoreError } from '../../../domain/errors.js';
import { encodeRecordLine } from './format.js';
import type { JournalCipher } from './cipher.js';
import { crcOf, type JournalPosition, stateOf } from './scan.js';

export type { AppendRequest, CommittedAppend, PlanState } from '../../../engine/layOut.js';

/** Bytes of records written by one write + fdatasync at most (one request may exceed it alone). */
export const MAX_COMMIT_BYTES = 64 << 20;

/**
 * The single writer of one journal: the engine's commit queue (arrival order, plans, the
 * per-request final gate, group commit, fail-stop) over a sink whose durability step is one
 * write + fdatasync of the batch's lines at the end of the committed prefix. The first append
 * is written at once; appends that arrive while its fdatasync runs are written together by the
 * next one. A request is answered only after the sync that covers it; after a failed or
 * unknown sync nothing is written again (a failed fdatasync is never retried).
 */
export class JournalWriter extends CommitQueue<Buffer[]> {
  constructor(
    fsl: FsLayer,
    /** The journal's fd, read at each commit: a compaction swaps it; its cipher (encryption at rest), if any. */
    file: { fd: number; cipher?: JournalCipher },
    /** Committed position: advanced only after a successful sync (a compaction rewrites it in place). */
    position: JournalPosition,
    clock: () => number,
    /** The final secret gate over each request's bytes: the rule that matched, if any. */
    gate: (bytes: Buffer) => string | undefined,
    /**
     * Checked before every write: an error when this process may no longer write the journal
     * (its lease was lost, or its path names another file now).
     */
    fence: () => StoreError | undefined = () => undefined,
    /**
     * More requests are on their way (the server has read others it has not answered): a lone
     * request then is not alone, and its sync goes to the thread pool so that they can group.
     * The JSON-RPC connection dispatches each request in its own macrotask, so the queue alone
     * cannot see them coming.
     */
    othersWaiting: () => boolean = () => true,
  ) {
    super(journalSink(fsl, file, position, clock, gate, fence, othersWaiting), MAX_COMMIT_BYTES);
  }
}

function journalSink(
  fsl: FsLayer, file: { fd: number; cipher?: JournalCipher }, position: JournalPosition, clock: () => number,
  gate: (bytes: Buffer) => string | undefined, fence: () => StoreError | undefined, othersWaiting: () => boolean,
): CommitSink<Buffer[]> {
  return {
    committed: () => ({ lastSeq: position.lastSeq, state: stateOf(position) }),
    clock,
    fence,
    /**
     * A request of several records carries `batchEnd` on each line: all or nothing on reopen.
     * The gate runs over the plaintext lines; encryption (if any) comes after it, last before the write.
     */
    seal(texts, firstSeq, ts) {
      const batchEnd = texts.length > 1 ? firstSeq + texts.length - 1 : undefined;
      const lines = texts.map((text, i) => encodeRecordLine(firstSeq + i, ts, batchEnd, text));
      const rule = gate(lines.length === 1 ? (lines[0] as Buffer) : Buffer.concat(lines));
      if (rule) return { rule };
      const { cipher } = file;
      return { sealed: cipher ? texts.map((text, i) => encodeRecordLine(firstSeq + i, ts, batchEnd, text, cipher)) : lines };
    },
    async persist(batch, next) {
      const lines = batch.flat();
      const buf = Buffer.concat(lines);
      const fenced = fence();
      if (fenced) throw new FailStop(fenced, fenced.message);
      if (fsl.fstatSync(file.fd).size !== position.bytes) {
        // Someone else wrote to this journal (another process without coordination), or replaced
        // it (its path names another file now): writing would overwrite their bytes or go to a
        // file nobody reads. Stop before touching the file.
        throw new FailStop(new StoreError('Conflict', 'the journal was changed by another writer; nothing was written and the session is read-only in this process', {
          reason: 'journalChanged',
        }), 'the journal was changed by another writer');
      }
      try {
        await appendDurably(fsl, file.fd, buf, position.bytes, { alone: next.alone && !othersWaiting() });
      } catch (err) {
        throw failure(err);
      }
      const last = lines[lines.length - 1] as Buffer;
      Object.assign(position, {
        bytes: position.bytes + buf.length,
        lastSeq: next.lastSeq,
        records: position.records + lines.length,
        lastCrc: crcOf(last.subarray(0, last.length - 1)),
        lastTs: next.ts,
        turn: next.after.turn,
        runtime: next.after.runtime,
        header: next.after.header,
        usage: next.after.usage,
      });
    },
  };
}

/** A failed append as the protocol says it: nothing changed (NotWritten, RolledBack), or the outcome unknown (Uncertain). */
export function appendFailureError(err: unknown): unknown {
  if (!(err instanceof AppendFailure)) return err; // the final gate's own refusal, or unexpected: the caller decides
  const errno = err.errno ? { errno: err.errno } : {};
  const cause = err.errno ?? 'I/O error';
  switch (err.outcome) {
    case 'notWritten':
      return new StoreError('NotWritten', `append not written (${cause}); nothing changed`, errno);
    case 'rolledBack':
      return new StoreError('RolledBack', `append failed (${cause}) and was rolled back; nothing changed`, errno);
    case 'uncertain':
      return new StoreError('Uncertain', `append may or may not be durable (${cause}); the session is read-only in this process`, errno);
  }
}

/** As appendFailureError, an unknown outcome stopping this queue for good (FailStop). */
function failure(err: unknown): unknown {
  const mapped = appendFailureError(err);
  if (mapped instanceof StoreError && mapped.kind === 'Uncertain' && err instanceof AppendFailure) {
    return new FailStop(mapped, `a failed sync (${err.errno ?? 'I/O error'})`);
  }
  return mapped;
}
