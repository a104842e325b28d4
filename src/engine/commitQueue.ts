/**
 * The commit queue of one session for a backend that persists a batch of sealed records
 * atomically (the PostgreSQL backend: one transaction). The file backend keeps its own
 * JournalWriter (journal/writer.ts), which shares the domain half (layOutRequest) and differs
 * only in how a batch becomes durable (one write + fdatasync, byte positions, fstat checks).
 *
 * Invariants (the same as the JournalWriter's): seqs are assigned in arrival order at commit
 * time, gapless; requests queued while a batch is persisted go together into the next batch
 * (group commit); a request is answered only after the persist that covers it resolved; a
 * failed persist fails every request in it; after an unknown outcome (Uncertain, or
 * Unavailable with outcome "unknown") the queue is stopped for good (fail-stop).
 */
import { StoreError } from '../store/errors.js';
import type { SealedRecord } from '../backend/port.js';
import { type AppendRequest, type CommittedAppend, finalGateError, layOutRequest, type PlanState } from './layOut.js';

/** Text of records persisted in one batch at most (one request may exceed it alone). */
export const MAX_BATCH_TEXT = 8 << 20;

export interface CommitSink {
  /** Persists `recs` (seqs following `lastSeq`) durably, all or nothing; `after` is the state they leave. */
  persist(recs: SealedRecord[], lastSeq: number, after: PlanState): Promise<void>;
  /** The final secret gate over one request's exact texts: the rule that matched, if any. */
  gate(texts: string[]): string | undefined;
  clock(): number;
}

interface Pending extends AppendRequest {
  resolve: (r: CommittedAppend) => void;
  reject: (e: unknown) => void;
  run?: () => Promise<unknown>;
}

export class CommitQueue {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private stopped: string | undefined;

  constructor(
    private readonly sink: CommitSink,
    /** The committed view: advanced only after a persist resolved. */
    public lastSeq: number,
    public state: PlanState,
    public lastTs: string | undefined,
  ) {}

  get stoppedReason(): string | undefined {
    return this.stopped;
  }

  failStop(reason: string): void {
    this.stopped ??= reason;
  }

  append(request: AppendRequest): Promise<CommittedAppend> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise((resolve, reject) => this.push({ ...request, resolve, reject }));
  }

  /** Runs `op` alone once every request queued before it is committed; nothing is persisted meanwhile. */
  exclusive<T>(op: () => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise<T>((resolve, reject) => this.push({ texts: [], run: op, resolve: resolve as (r: CommittedAppend) => void, reject }));
  }

  /** Resolves once every request queued before it is committed or failed (read-your-writes). */
  async barrier(): Promise<void> {
    if (this.queue.length === 0 && !this.flushing) return;
    await new Promise<void>((resolve) => this.push({ texts: [], resolve: () => resolve(), reject: () => resolve() }));
  }

  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private push(p: Pending): void {
    this.queue.push(p);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    await Promise.resolve(); // requests of the same tick join the first batch
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        const op = batch[0]?.run;
        if (op) {
          await this.runExclusive(batch[0] as Pending, op);
          continue;
        }
        await this.commit(batch).catch((err: unknown) => batch.forEach((p) => p.reject(this.failure(err))));
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private take(): Pending[] {
    if (this.queue[0]?.run) return this.queue.splice(0, 1);
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && !this.queue[n]?.run) {
      bytes += (this.queue[n] as Pending).texts.reduce((sum, t) => sum + t.length, 0);
      if (n > 0 && bytes > MAX_BATCH_TEXT) break;
      n += 1;
    }
    return this.queue.splice(0, n);
  }

  private async runExclusive(p: Pending, op: () => Promise<unknown>): Promise<void> {
    if (this.stopped) return p.reject(this.readOnlyError());
    try {
      p.resolve((await op()) as CommittedAppend);
    } catch (err) {
      p.reject(this.failure(err));
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    if (this.stopped) return batch.forEach((p) => p.reject(this.readOnlyError()));
    const ts = new Date(this.sink.clock()).toISOString();
    const recs: SealedRecord[] = [];
    const accepted: Array<{ p: Pending; c: CommittedAppend }> = [];
    let seq = this.lastSeq;
    let state = this.state;
    for (const p of batch) {
      if (p.texts.length === 0 && !p.plan) {
        accepted.push({ p, c: { firstSeq: seq + 1, lastSeq: seq, ts } }); // a barrier
        continue;
      }
      const laid = layOutRequest(p, seq, state);
      if ('refused' in laid) {
        p.reject(laid.refused);
        continue;
      }
      const rule = this.sink.gate(laid.texts);
      if (rule) {
        p.reject(finalGateError(rule));
        continue;
      }
      laid.texts.forEach((text, i) => recs.push({ seq: seq + 1 + i, ts, kind: kindOf(text), text }));
      accepted.push({ p, c: { firstSeq: seq + 1, lastSeq: seq + laid.texts.length, ts } });
      seq += laid.texts.length;
      state = laid.state;
    }
    if (recs.length > 0) {
      try {
        await this.sink.persist(recs, this.lastSeq, state);
      } catch (err) {
        const e = this.failure(err);
        return accepted.forEach(({ p }) => p.reject(e));
      }
      this.lastSeq = seq;
      this.state = state;
      this.lastTs = ts;
    }
    for (const { p, c } of accepted) p.resolve(c);
  }

  /** Unknown outcomes stop the queue; every error leaves here as a StoreError. */
  private failure(err: unknown): unknown {
    if (!(err instanceof StoreError)) {
      this.stopped ??= 'an unexpected error during a commit';
      return new StoreError('Uncertain', 'the commit failed unexpectedly; the session is read-only in this process');
    }
    if (err.kind === 'Uncertain' || (err.kind === 'Unavailable' && err.details.outcome === 'unknown') || err.kind === 'LeaseLost') {
      this.stopped ??= err.kind === 'LeaseLost' ? 'a lost lease' : 'a commit with an unknown outcome';
    }
    return err;
  }

  private readOnlyError(): StoreError {
    return new StoreError('ReadOnly', `session is read-only in this process after ${this.stopped}; reopen it in a new process`, { reason: 'failStop' });
  }
}

/**
 * The kind of a laid-out record's text: read from its start when it begins with `{"kind":"..."`
 * or `{"turnId":"...","kind":"..."` (every prepared record does), parsed otherwise.
 */
export function kindOf(text: string): string {
  const m = /^\{(?:"turnId":"[0-9A-Za-z]*",)?"kind":("(?:[^"\\]|\\.)*")/.exec(text); // auto mode puts turnId first (autoTurns.ts)
  const kind = m ? (JSON.parse(m[1] as string) as unknown) : (JSON.parse(text) as { kind?: unknown }).kind;
  if (typeof kind !== 'string') throw new StoreError('InvalidArgument', 'a record has no kind', { path: 'records' });
  return kind;
}
