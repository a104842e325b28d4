import { appendDurably } from '../../durable/durableFile.js';
import { AppendFailure, errnoOf } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../errors.js';
import { encodeRecordLine } from './format.js';
import { type AppendRequest, type CommittedAppend, finalGateError, layOutRequest, type PlanState } from '../../engine/layOut.js';
import { crcOf, type JournalPosition, stateOf } from './scan.js';

export type { AppendRequest, CommittedAppend, PlanState } from '../../engine/layOut.js';

interface PendingAppend extends AppendRequest {
  resolve: (r: CommittedAppend) => void;
  reject: (e: unknown) => void;
  /** An exclusive operation (a compaction): runs alone, after every request before it. */
  run?: () => unknown;
}

/** Bytes of records written by one write + fdatasync at most (one request may exceed it alone). */
export const MAX_COMMIT_BYTES = 64 << 20;

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
    /** The journal's fd, read at each commit: a compaction swaps it. */
    private readonly file: { fd: number },
    /** Committed position: advanced only after a successful sync. */
    readonly position: JournalPosition,
    private readonly clock: () => number,
    /** The final secret gate over each request's bytes: the rule that matched, if any. */
    private readonly gate: (bytes: Buffer) => string | undefined,
    /**
     * Checked before every write: an error when this process may no longer write the journal
     * (its lease was lost, or its path names another file now).
     */
    private readonly fence: () => StoreError | undefined = () => undefined,
  ) {}

  /** Why the writer refuses appends, if it does. */
  get stoppedReason(): string | undefined {
    return this.stopped;
  }

  /** Records an unknown outcome of a write beside the journal: nothing more is written. */
  failStop(reason: string): void {
    this.stopped ??= reason;
  }

  append(request: AppendRequest): Promise<CommittedAppend> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise((resolve, reject) => {
      this.queue.push({ ...request, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** Runs `op` alone once every request queued before it is committed; nothing is written meanwhile. */
  exclusive<T>(op: () => T): Promise<T> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ texts: [], run: op, resolve: resolve as unknown as (r: CommittedAppend) => void, reject });
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
    // Yield once: `flushing` must be set before this can finish (an exclusive operation runs
    // without awaiting), and appends of the same tick join the first write.
    await Promise.resolve();
    try {
      while (this.queue.length > 0) {
        const batch = this.takeCommit();
        const op = batch[0]?.run;
        if (op) {
          this.runExclusive(batch[0] as PendingAppend, op);
          continue;
        }
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

  /**
   * The lines of one request at `seq`, checked in arrival order against the state the requests
   * before it leave: expectedLastSeq, the turn plan, the final secret gate. Undefined when the
   * request was refused (and answered).
   */
  private layOut(p: PendingAppend, seq: number, state: PlanState, ts: string): { lines: Buffer[]; state: PlanState } | undefined {
    if (p.texts.length === 0 && !p.plan) return { lines: [], state }; // a barrier: answered with its batch
    const laid = layOutRequest(p, seq, state);
    if ('refused' in laid) {
      p.reject(laid.refused);
      return undefined;
    }
    const { texts, state: after } = laid;
    const batchEnd = texts.length > 1 ? seq + texts.length : undefined;
    const own = texts.map((text, i) => encodeRecordLine(seq + 1 + i, ts, batchEnd, text));
    const rule = this.gate(own.length === 1 ? (own[0] as Buffer) : Buffer.concat(own));
    if (rule) {
      p.reject(finalGateError(rule));
      return undefined;
    }
    return { lines: own, state: after };
  }

  private runExclusive(p: PendingAppend, op: () => unknown): void {
    // Queued behind an append whose sync failed: after a failed sync nothing is written, ever.
    if (this.stopped) return p.reject(this.readOnlyError());
    let fenced: StoreError | undefined;
    try {
      fenced = this.fence(); // a writer that lost its lease may not compact either
    } catch (err) {
      const errno = errnoOf(err);
      return p.reject(new StoreError('NotWritten', `the lease could not be checked (${errno ?? 'I/O error'}); nothing changed`, {
        stage: 'preCommit', ...(errno ? { errno } : {}),
      }));
    }
    if (fenced) {
      this.stopped = fenced.message;
      return p.reject(new StoreError(fenced.kind, fenced.message, { ...fenced.details, stage: 'preCommit' }));
    }
    try {
      p.resolve(op() as CommittedAppend);
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'Uncertain') this.stopped = 'a failed sync';
      p.reject(err);
    }
  }

  /**
   * The next requests to commit together: all queued ones, up to MAX_COMMIT_BYTES (at least
   * one), stopping before an exclusive operation (which is taken alone).
   */
  private takeCommit(): PendingAppend[] {
    if (this.queue[0]?.run) return this.queue.splice(0, 1);
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && !this.queue[n]?.run) {
      bytes += (this.queue[n] as PendingAppend).texts.reduce((sum, t) => sum + t.length, 0); // plans add only small turn records
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
    let state = stateOf(this.position);
    for (const p of batch) {
      const laid = this.layOut(p, seq, state, ts);
      if (!laid) continue;
      lines.push(...laid.lines);
      accepted.push({ p, c: { firstSeq: seq + 1, lastSeq: seq + laid.lines.length, ts } });
      seq += laid.lines.length;
      state = laid.state;
    }
    if (lines.length === 0) return accepted.forEach(({ p, c }) => p.resolve(c));
    const buf = Buffer.concat(lines);
    const fenced = this.fence();
    if (fenced) {
      this.stopped = fenced.message;
      return accepted.forEach(({ p }) => p.reject(fenced));
    }
    if (this.fsl.fstatSync(this.file.fd).size !== this.position.bytes) {
      // Someone else wrote to this journal (another process without coordination), or replaced
      // it (its path names another file now): writing would overwrite their bytes or go to a
      // file nobody reads. Stop before touching the file.
      this.stopped = 'the journal was changed by another writer';
      const e = new StoreError('Conflict', 'the journal was changed by another writer; nothing was written and the session is read-only in this process', {
        reason: 'journalChanged',
      });
      return accepted.forEach(({ p }) => p.reject(e));
    }
    try {
      await appendDurably(this.fsl, this.file.fd, buf, this.position.bytes);
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
      turn: state.turn,
      runtime: state.runtime,
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
