import type { PostgresBackend } from '../backend.js';
import type { Fence, SealedRecord, SessionRow, Snapshot } from '../../../backend/port.js';
import type { CommitQueue } from '../../../engine/commitQueue.js';
import { recordQueue } from '../../../engine/recordSink.js';
import type { PlanState } from '../../../engine/layOut.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import type { ScratchDirs } from '../../../scratch/toolRuns.js';
import { asCounters, NO_RUNTIME } from '../../../domain/runtimeCounters.js';
import { asUsage, NO_USAGE } from '../../../domain/usage.js';
import { ToolRuns } from '../../../scratch/toolRuns.js';
import type { SecretSet } from '../../../domain/secrets/knownSecrets.js';
import { summarizeRecord } from '../../../domain/summary.js';
import type { TurnState } from '../../../domain/turns/turnState.js';
import type { OpenedSession, OpenMode, SecretsStatus, SessionHeader } from '../../../domain/types.js';
import { pg } from './errors.js';
import { effectiveHeader, type HeaderState } from '../../../domain/sessionUpdate.js';

/** The engine state a session row's snapshot carries (texts the engine wrote itself). */
export function stateOfRow(row: SessionRow): PlanState {
  const turn = row.snapshot.turn === null ? null : (JSON.parse(row.snapshot.turn) as TurnState | null);
  const runtime = row.snapshot.runtime === null ? NO_RUNTIME : asCounters(JSON.parse(row.snapshot.runtime));
  const header = row.snapshot.header === null ? undefined : (JSON.parse(row.snapshot.header) as HeaderState);
  const usage = row.snapshot.usage === null ? NO_USAGE : asUsage(JSON.parse(row.snapshot.usage));
  return { turn, runtime, usage, ...(header ? { header } : {}) };
}

export function snapshotOf(state: PlanState, firstMessage: string | undefined, lastMessage: string | undefined): Snapshot {
  return {
    turn: state.turn === null ? null : JSON.stringify(state.turn),
    runtime: state.runtime === NO_RUNTIME ? null : JSON.stringify(state.runtime),
    usage: JSON.stringify(state.usage), // never null: null marks a row written before usage totals existed
    firstMessage: firstMessage ?? null,
    lastMessage: lastMessage ?? null,
    header: state.header === undefined ? null : JSON.stringify(state.header),
  };
}

/**
 * "role: text" summaries of the message records among `recs` (only messages are parsed).
 * Summaries are derived text (parts joined, whitespace folded, cut): they can put together a
 * registered secret that no record holds as such. One the gate refuses is left out (the session
 * row then keeps none for it, as the file store's index entry does).
 */
export function summariesOf(recs: readonly SealedRecord[], gate: (texts: string[]) => string | undefined): string[] {
  const out: string[] = [];
  for (const r of recs) {
    if (r.kind !== 'message') continue;
    const s = summarizeRecord(JSON.parse(r.text) as Record<string, unknown>);
    if (s !== undefined && gate([s]) === undefined) out.push(s);
  }
  return out;
}

/**
 * A session open in one PostgreSQL store instance. In write mode it holds the lease (its fence
 * is checked inside every write transaction) and the engine's commit queue, whose committed
 * view (lastSeq, turn, counters) is advanced only after the transaction's COMMIT returned.
 */
export class PgSession {
  readonly queue: CommitQueue<SealedRecord[]> | undefined;
  private toolRuns: ToolRuns | undefined;
  firstMessage: string | undefined;
  lastMessage: string | undefined;
  generation: number;
  /** toolSeqs reserved in the database by any process (a toolStart never takes one again). */
  private readonly reservedToolSeq: number;
  /** The preparation of the last write handed to `inOrder` (settled, never rejected). */
  private intake: Promise<void> = Promise.resolve();

  constructor(
    private readonly backend: PostgresBackend,
    readonly header: SessionHeader,
    row: SessionRow,
    readonly mode: OpenMode,
    readonly fence: Fence | undefined,
    readonly secrets: SecretSet,
    public status: SecretsStatus,
    gate: (texts: string[]) => string | undefined,
    clock: () => number,
    private readonly scratch: { fsl: FsLayer; layout: ScratchDirs; ensure(): void },
  ) {
    this.generation = row.generation;
    this.reservedToolSeq = row.toolSeq;
    this.firstMessage = row.snapshot.firstMessage ?? undefined;
    this.lastMessage = row.snapshot.lastMessage ?? undefined;
    const id = header.sessionId;
    this.queue = mode === 'write' && fence
      ? recordQueue({
        clock,
        gate,
        persist: async (recs, lastSeq, after) => {
          const summaries = summariesOf(recs, gate);
          const first = this.firstMessage ?? summaries[0];
          const last = summaries[summaries.length - 1] ?? this.lastMessage;
          await pg(() => backend.appendBatch(id, recs, { lastSeq, generation: this.generation }, fence, snapshotOf(after, first, last)));
          this.firstMessage = first;
          this.lastMessage = last;
        },
      }, row.lastSeq, stateOfRow(row))
      : undefined;
    // A fail-stopped session writes nothing more from this process: its lease is given back at
    // once (not heartbeated until the process exits), so another sidecar can take the session over.
    if (fence) this.queue?.onStopped(() => void backend.leases.release(fence).catch(() => undefined));
  }

  get id(): string {
    return this.header.sessionId;
  }

  /** Tool runs (toolSeq issue and local scratch directories) of a session open for writing. */
  tools(): ToolRuns {
    this.scratch.ensure();
    if (!this.toolRuns) {
      this.toolRuns = new ToolRuns(this.scratch.fsl, this.scratch.layout, this.id, (this.queue?.state.runtime ?? NO_RUNTIME).toolSeq, this.header.keepScratch);
      this.toolRuns.issued = Math.max(this.toolRuns.issued, this.reservedToolSeq); // like the file store's scratch directories
    }
    return this.toolRuns;
  }

  describe(lastSeq: number, turn: TurnState | null, header: HeaderState | undefined): OpenedSession {
    const { secretEnv: _names, ...shown } = effectiveHeader(this.header, header);
    const mode = this.queue?.stoppedReason ? 'read' : this.mode;
    return { ...shown, mode, lastSeq, secrets: this.status, turn };
  }

  /**
   * Runs a write's preparation (which may wait for the database: blob lookups and uploads)
   * after the preparation of every write called before it, so writes reach the commit queue —
   * and take their seqs — in call order, as the protocol promises ("per session, requests take
   * effect in arrival order"). `prepare` must enqueue synchronously once its awaits are done.
   */
  inOrder<T>(prepare: () => Promise<T>): Promise<T> {
    const run = this.intake.then(prepare);
    this.intake = run.then(() => undefined, () => undefined);
    return run;
  }

  /** Resolves once every write called before it has committed or failed. */
  async settled(): Promise<void> {
    await this.intake;
    await this.queue?.barrier();
  }

  async close(): Promise<void> {
    await this.intake; // the writes called before close reach the queue first, then drain
    await this.queue?.drain();
    await this.toolRuns?.cleanup();
    if (this.fence) await this.backend.leases.release(this.fence).catch(() => undefined); // a lease not released goes stale
  }
}
