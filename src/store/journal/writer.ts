import { appendDurably } from '../../durable/durableFile.js';
import { AppendFailure } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../errors.js';
import { encodeRecordLine } from './format.js';
import { crcOf, type JournalPosition } from './scan.js';

/** One append request: its records already serialized (JSON.stringify of each record). */
interface PendingAppend {
  texts: string[];
  expectedLastSeq?: number;
  resolve: (r: CommittedAppend) => void;
  reject: (e: unknown) => void;
}

/** Bytes of records written by one write + fdatasync at most (one request may exceed it alone). */
export const MAX_COMMIT_BYTES = 64 << 20;

export interface CommittedAppend {
  firstSeq: number;
  lastSeq: number;
  ts: string;
}

/**
 * The single writer of one journal, with group commit: the first append is written at once;
 * appends that arrive while its fdatasync runs are written together by the next single
 * write + fdatasync. Invariants: seqs are assigned in arrival order at commit time, gapless;
 * a request is answered only after the sync that covers it; a failed write fails every
 * request in it; after a failed or unknown sync the writer is stopped for good (fail-stop).
 */
export class JournalWriter {
  private queue: PendingAppend[] = [];
  private flushing: Promise<void> | undefined;
  private stopped: string | undefined;

  constructor(
    private readonly fsl: FsLayer,
    private readonly fd: number,
    /** Committed position: advanced only after a successful sync. */
    readonly position: JournalPosition,
    private readonly clock: () => number,
    /** The final secret gate over each request's bytes: the rule that matched, if any. */
    private readonly gate: (bytes: Buffer) => string | undefined,
  ) {}

  /** Why the writer refuses appends, if it does. */
  get stoppedReason(): string | undefined {
    return this.stopped;
  }

  append(texts: string[], expectedLastSeq?: number): Promise<CommittedAppend> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise((resolve, reject) => {
      this.queue.push({ texts, expectedLastSeq, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** Resolves once every append queued before this call is committed or failed (read-your-writes). */
  async barrier(): Promise<void> {
    if (this.queue.length === 0 && !this.flushing) return;
    await new Promise<void>((resolve) => {
      this.queue.push({ texts: [], resolve: () => resolve(), reject: () => resolve() });
      this.flushing ??= this.flush();
    });
  }

  /** Resolves once every queued append is committed or failed. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.takeCommit();
        try {
          await this.commit(batch);
        } catch (err) {
          const e = this.failure(err); // settled promises ignore a second settlement
          batch.forEach((p) => p.reject(e));
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** The next requests to commit together: all queued ones, up to MAX_COMMIT_BYTES (at least one). */
  private takeCommit(): PendingAppend[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length) {
      bytes += (this.queue[n] as PendingAppend).texts.reduce((sum, t) => sum + t.length, 0);
      if (n > 0 && bytes > MAX_COMMIT_BYTES) break;
      n += 1;
    }
    return this.queue.splice(0, n);
  }

  private async commit(batch: PendingAppend[]): Promise<void> {
    if (this.stopped) return batch.forEach((p) => p.reject(this.readOnlyError()));
    const ts = new Date(this.clock()).toISOString();
    const lines: Buffer[] = [];
    const accepted: Array<{ p: PendingAppend; c: CommittedAppend }> = [];
    let seq = this.position.lastSeq;
    for (const p of batch) {
      if (p.texts.length === 0) {
        accepted.push({ p, c: { firstSeq: seq + 1, lastSeq: seq, ts } }); // a barrier: answered with its batch
        continue;
      }
      if (p.expectedLastSeq !== undefined && p.expectedLastSeq !== seq) {
        p.reject(new StoreError('Conflict', `expectedLastSeq ${p.expectedLastSeq} does not match lastSeq ${seq}`, {
          expectedLastSeq: p.expectedLastSeq, lastSeq: seq,
        }));
        continue;
      }
      const firstSeq = seq + 1;
      const batchEnd = p.texts.length > 1 ? seq + p.texts.length : undefined;
      const own = p.texts.map((text, i) => encodeRecordLine(firstSeq + i, ts, batchEnd, text));
      const rule = this.gate(own.length === 1 ? (own[0] as Buffer) : Buffer.concat(own));
      if (rule) {
        p.reject(new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, {
          path: '(serialized line)', rule,
        }));
        continue;
      }
      lines.push(...own);
      seq += own.length;
      accepted.push({ p, c: { firstSeq, lastSeq: seq, ts } });
    }
    if (lines.length === 0) return accepted.forEach(({ p, c }) => p.resolve(c));
    const buf = Buffer.concat(lines);
    if (this.fsl.fstatSync(this.fd).size !== this.position.bytes) {
      // Someone else wrote to this journal (another process without coordination): writing at
      // our offset would overwrite their bytes. Stop before touching the file.
      this.stopped = 'the journal was changed by another writer';
      const e = new StoreError('Conflict', 'the journal was changed by another writer; nothing was written and the session is read-only in this process', {
        reason: 'journalChanged',
      });
      return accepted.forEach(({ p }) => p.reject(e));
    }
    try {
      await appendDurably(this.fsl, this.fd, buf, this.position.bytes);
    } catch (err) {
      const e = this.failure(err);
      return accepted.forEach(({ p }) => p.reject(e));
    }
    const last = lines[lines.length - 1] as Buffer;
    Object.assign(this.position, {
      bytes: this.position.bytes + buf.length,
      lastSeq: seq,
      records: this.position.records + lines.length,
      lastCrc: crcOf(last.subarray(0, last.length - 1)),
      lastTs: ts,
    });
    for (const { p, c } of accepted) p.resolve(c);
  }

  private failure(err: unknown): StoreError {
    if (!(err instanceof AppendFailure)) {
      this.stopped = 'an unexpected error during append';
      return new StoreError('Uncertain', 'append failed unexpectedly; the session is read-only in this process');
    }
    const errno = err.errno ? { errno: err.errno } : {};
    switch (err.outcome) {
      case 'notWritten':
        return new StoreError('NotWritten', `append not written (${err.errno ?? 'I/O error'}); nothing changed`, errno);
      case 'rolledBack':
        return new StoreError('RolledBack', `append failed (${err.errno ?? 'I/O error'}) and was rolled back; nothing changed`, errno);
      case 'uncertain':
        this.stopped = `a failed sync (${err.errno ?? 'I/O error'})`;
        return new StoreError('Uncertain', `append may or may not be durable (${err.errno ?? 'I/O error'}); the session is read-only in this process`, errno);
    }
  }

  private readOnlyError(): StoreError {
    return new StoreError('ReadOnly', `session is read-only in this process after ${this.stopped}; reopen it in a new process`, {
      reason: 'failStop',
    });
  }
}
