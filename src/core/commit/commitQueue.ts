/**
 * The commit queue of one session, for every backend: the file backend's journal writer
 * (backends/file/journal/writer.ts: a batch is one write + fdatasync) and the core's sessions
 * over the port (core/sessions/commitSink.ts: a batch is one Backend.persist — one transaction
 * on PostgreSQL). The domain half — arrival order, expectedLastSeq,
 * turn plans and runtime counters (layOutRequest), the per-request final secret gate, group
 * commit, fail-stop — lives here once; a backend supplies only how a request's records are
 * sealed into its own unit (encoded journal lines, database rows) and how a batch of them
 * becomes durable.
 *
 * Invariants: seqs are assigned in arrival order at commit time, gapless; requests queued while
 * a batch is persisted go together into the next batch (group commit); a request is answered
 * only after the persist that covers it resolved (the bytes fdatasynced, or COMMIT returned); a
 * failed persist fails every request in it; after an unknown outcome (Uncertain, LeaseLost, a
 * journal changed underneath, or Unavailable with outcome "unknown") nothing is persisted again
 * by this queue (fail-stop: a failed fsync is never retried, and a later write could land on
 * bytes whose fate is unknown).
 */
import { StoreError } from '../../domain/errors.js';
import { type AppendRequest, type CommittedAppend, finalGateError, layOutRequest, type PlanState } from './layOut.js';

/** What the next batch is planned against: the backend's committed position. */
export interface CommittedView {
  lastSeq: number;
  state: PlanState;
}

/**
 * A backend's half of a commit. `S` is one request's records sealed for that backend (the file
 * backend: its encoded journal lines; PostgreSQL: SealedRecords).
 */
export interface CommitSink<S> {
  /**
   * The committed view, read at every commit: a sink advances it in `persist`, and an exclusive
   * operation (a compaction) may change it.
   */
  committed(): CommittedView;
  /**
   * One request's texts sealed as records `firstSeq`.. at `ts`, through the final secret gate
   * over the exact bytes that will be stored: the rule that matched refuses this request alone.
   * `kinds`: each text's record kind, when the request's plan gave them.
   */
  seal(texts: string[], firstSeq: number, ts: string, kinds?: string[]): { sealed: S } | { rule: string };
  /**
   * Persists the sealed requests of one batch, in order, durably and all or nothing, then
   * advances the committed view to `after` at seq `lastSeq`. `alone`: the batch is one request and
   * nothing is queued behind it (a sink may then skip overlapping work). Throws a StoreError (or a FailStop
   * when this queue must never persist again); nothing of the batch is acknowledged then.
   */
  persist(batch: S[], view: { lastSeq: number; after: PlanState; ts: string; alone: boolean }): Promise<void>;
  /** Checked before an exclusive operation runs: an error when this process may no longer write. */
  fence?(): StoreError | undefined;
  clock(): number;
}

/** An error after which the queue never persists again; `reason` is shown in every later ReadOnly. */
export class FailStop extends Error {
  constructor(readonly error: StoreError, readonly reason: string) {
    super(error.message);
    this.name = 'FailStop';
  }
}

interface Pending extends AppendRequest {
  resolve: (r: CommittedAppend) => void;
  reject: (e: unknown) => void;
  /** An exclusive operation (a compaction, a state write, a scratch allocation): runs alone. */
  run?: () => unknown;
  /** An append prepared once everything before it is committed (a rewind reads the committed records): runs alone. */
  prepare?: () => AppendRequest | Promise<AppendRequest>;
}

export class CommitQueue<S> {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private stopped: string | undefined;

  constructor(
    private readonly sink: CommitSink<S>,
    /** Text of the requests persisted in one batch at most (one request may exceed it alone). */
    private readonly maxBatchText: number,
  ) {}

  get lastSeq(): number {
    return this.sink.committed().lastSeq;
  }

  get state(): PlanState {
    return this.sink.committed().state;
  }

  /** Why the queue refuses appends, if it does. */
  get stoppedReason(): string | undefined {
    return this.stopped;
  }

  /** Records an unknown outcome of a write beside the records: nothing more is persisted. */
  failStop(reason: string): void {
    this.stop(reason);
  }

  private readonly stopListeners: Array<(reason: string) => void> = [];

  /**
   * Called once when the queue fail-stops (at once if it has): where a session gives its lease
   * back (it will never write again in this process, so the next holder need not wait for this
   * process to exit) and its store records it. Fail-stop is decided here and nowhere else.
   */
  onStopped(listener: (reason: string) => void): void {
    if (this.stopped !== undefined) listener(this.stopped);
    else this.stopListeners.push(listener);
  }

  /** The one place the queue stops: the first reason is kept; listeners hear it once. */
  private stop(reason: string): void {
    if (this.stopped !== undefined) return;
    this.stopped = reason;
    for (const l of this.stopListeners.splice(0)) {
      try {
        l(reason);
      } catch {
        // a listener's failure (a lease already gone, say) changes nothing here
      }
    }
  }

  append(request: AppendRequest): Promise<CommittedAppend> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise((resolve, reject) => this.push({ ...request, resolve, reject }));
  }

  /** Runs `op` alone once every request queued before it is committed; nothing is persisted meanwhile. */
  exclusive<T>(op: () => T | Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise<T>((resolve, reject) => this.push({ texts: [], run: op, resolve: resolve as (r: CommittedAppend) => void, reject }));
  }

  /**
   * An append whose request is prepared when its turn comes: every request queued before it is
   * committed, nothing is persisted meanwhile, so `prepare` may read the committed records
   * (arrival order kept: requests queued after it wait). The prepared request is then committed
   * alone, as any append (expectedLastSeq, plan, final gate, fail-stop).
   */
  appendPrepared(prepare: () => AppendRequest | Promise<AppendRequest>): Promise<CommittedAppend> {
    if (this.stopped) return Promise.reject(this.readOnlyError());
    return new Promise((resolve, reject) => this.push({ texts: [], prepare, resolve, reject }));
  }

  /** Resolves once every request queued before it is committed or failed (read-your-writes). */
  async barrier(): Promise<void> {
    if (this.queue.length === 0 && !this.flushing) return;
    await new Promise<void>((resolve) => this.push({ texts: [], resolve: () => resolve(), reject: () => resolve() }));
  }

  /** Resolves once every queued request is committed or failed. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private push(p: Pending): void {
    this.queue.push(p);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    // Yield to the event loop once (a macrotask, not a microtask): `flushing` must be set before
    // this can finish, and requests called in the same tick join the first batch even when each
    // reaches the queue after a few promise hops of its own preparation (LiveSession.inOrder).
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.queue.length > 0) {
        const batch = this.take();
        const op = batch[0]?.run;
        if (op) {
          await this.runExclusive(batch[0] as Pending, op);
          continue;
        }
        const prepare = batch[0]?.prepare;
        if (prepare) {
          await this.commitPrepared(batch[0] as Pending, prepare);
          continue;
        }
        // settled promises ignore a second settlement
        await this.commit(batch).catch((err: unknown) => batch.forEach((p) => p.reject(this.failure(err))));
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** The next requests to commit together: all queued ones up to maxBatchText (at least one), stopping before an exclusive one. */
  private take(): Pending[] {
    if (this.queue[0]?.run || this.queue[0]?.prepare) return this.queue.splice(0, 1);
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && !this.queue[n]?.run && !this.queue[n]?.prepare) {
      bytes += (this.queue[n] as Pending).texts.reduce((sum, t) => sum + t.length, 0); // plans add only small turn records
      if (n > 0 && bytes > this.maxBatchText) break;
      n += 1;
    }
    return this.queue.splice(0, n);
  }

  private async runExclusive(p: Pending, op: () => unknown): Promise<void> {
    // Queued behind a commit whose outcome is unknown: after that nothing is written, ever.
    if (this.stopped) return p.reject(this.readOnlyError());
    let fenced: StoreError | undefined;
    try {
      fenced = this.sink.fence?.(); // a writer that lost its lease may not compact or write state either
    } catch (err) {
      const errno = (err as { code?: unknown } | null)?.code;
      return p.reject(new StoreError('NotWritten', `the lease could not be checked (${typeof errno === 'string' ? errno : 'I/O error'}); nothing changed`, {
        stage: 'preCommit', ...(typeof errno === 'string' ? { errno } : {}),
      }));
    }
    if (fenced) {
      this.stop(fenced.message);
      return p.reject(new StoreError(fenced.kind, fenced.message, { ...fenced.details, stage: 'preCommit' }));
    }
    try {
      p.resolve((await op()) as CommittedAppend);
    } catch (err) {
      // An operation maps its own errors; only a StoreError can say the outcome is unknown.
      p.reject(err instanceof StoreError || err instanceof FailStop ? this.failure(err) : err);
    }
  }

  private async commitPrepared(p: Pending, prepare: NonNullable<Pending['prepare']>): Promise<void> {
    if (this.stopped) return p.reject(this.readOnlyError());
    let request: AppendRequest;
    try {
      request = await prepare(); // reads only: a failure here changed nothing
    } catch (err) {
      return p.reject(err);
    }
    const { prepare: _p, ...rest } = p;
    await this.commit([{ ...rest, ...request }]).catch((err: unknown) => p.reject(this.failure(err)));
  }

  private async commit(batch: Pending[]): Promise<void> {
    if (this.stopped) return batch.forEach((p) => p.reject(this.readOnlyError()));
    const ts = new Date(this.sink.clock()).toISOString();
    const sealed: S[] = [];
    const accepted: Array<{ p: Pending; c: CommittedAppend }> = [];
    const view = this.sink.committed();
    let seq = view.lastSeq;
    let state = view.state;
    for (const p of batch) {
      if (p.texts.length === 0 && !p.plan) {
        accepted.push({ p, c: { firstSeq: seq + 1, lastSeq: seq, ts } }); // a barrier: answered with its batch
        continue;
      }
      const laid = layOutRequest(p, seq, state);
      if ('refused' in laid) {
        p.reject(laid.refused);
        continue;
      }
      const own = this.sink.seal(laid.texts, seq + 1, ts, laid.kinds);
      if ('rule' in own) {
        p.reject(finalGateError(own.rule));
        continue;
      }
      sealed.push(own.sealed);
      accepted.push({ p, c: { firstSeq: seq + 1, lastSeq: seq + laid.texts.length, ts } });
      seq += laid.texts.length;
      state = laid.state;
    }
    if (sealed.length > 0) {
      try {
        // alone: one request and nothing queued behind it (a serial client): no group to wait for
        await this.sink.persist(sealed, { lastSeq: seq, after: state, ts, alone: batch.length === 1 && this.queue.length === 0 });
      } catch (err) {
        const e = this.failure(err);
        return accepted.forEach(({ p }) => p.reject(e));
      }
    }
    for (const { p, c } of accepted) p.resolve(c);
  }

  /** Unknown outcomes stop the queue; every error leaves here as a StoreError. */
  private failure(err: unknown): unknown {
    if (err instanceof FailStop) {
      this.stop(err.reason);
      return err.error;
    }
    if (!(err instanceof StoreError)) {
      this.stop('an unexpected error during a commit');
      return new StoreError('Uncertain', 'the commit failed unexpectedly; the session is read-only in this process');
    }
    if (err.kind === 'Uncertain' || (err.kind === 'Unavailable' && err.details.outcome === 'unknown') || err.kind === 'LeaseLost') {
      this.stop(err.kind === 'LeaseLost' ? 'a lost lease' : 'a commit with an unknown outcome');
    }
    // The session's storage changed under its writer (another program wrote it without the
    // lease): nothing was written, and nothing more may be — this writer's view is no longer true.
    if (err.kind === 'Conflict' && err.details.reason === 'journalChanged') this.stop('its journal changed under it');
    return err;
  }

  private readOnlyError(): StoreError {
    return new StoreError('ReadOnly', `session is read-only in this process after ${this.stopped}; reopen it in a new process`, { reason: 'failStop' });
  }
}
