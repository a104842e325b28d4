/**
 * A session open in one `Sessions` instance. In write mode it holds the lease (its fence goes
 * with every write) and the commit queue, whose committed view (lastSeq, turn, counters,
 * summaries) advances only after the backend's persist resolved.
 */
import type { CommitQueue } from '../commit/commitQueue.js';
import type { PlanState } from '../commit/layOut.js';
import { NO_RUNTIME } from '../../domain/runtimeCounters.js';
import type { SecretSet } from '../../domain/secrets/knownSecrets.js';
import { effectiveHeader, type HeaderState } from '../../domain/sessionUpdate.js';
import type { TurnState } from '../../domain/turns/turnState.js';
import type { OpenedSession, OpenMode, SecretsStatus, SessionHeader } from '../../domain/types.js';
import type { ScratchSpace, SessionTools } from '../../scratch/localScratch.js';
import type { Gated } from '../gate.js';
import { IdempotencyIndex } from './idempotency.js';
import type { Fence, SealedRecord } from '../port.js';

export type Queue = CommitQueue<Array<Gated<SealedRecord>>>;

export class LiveSession {
  /** The active generation writes land in (a compaction moves it). */
  generation: number;
  private toolRuns: SessionTools | undefined;
  /** The preparation of the last write handed to `inOrder` (settled, never rejected). */
  private intake: Promise<void> = Promise.resolve();
  /** Present while loading for a writer repaired a torn tail, until the open that did it answered. */
  recovered: { bytes: number; evidence: string } | undefined;
  /** The idempotency keys of this session's appends (idempotency.ts), filled as they commit and by one scan. */
  readonly idempotency = new IdempotencyIndex();

  constructor(
    readonly header: SessionHeader,
    readonly mode: OpenMode,
    /** The lease (write mode). */
    readonly fence: Fence | undefined,
    /** Write mode: the commit queue. */
    readonly queue: Queue | undefined,
    readonly secrets: SecretSet,
    public status: SecretsStatus,
    row: { generation: number; toolSeq: number },
    /** Where tool scratch directories go; none: toolSeqs are issued in memory only. */
    private readonly scratch: ScratchSpace | undefined,
  ) {
    this.generation = row.generation;
    this.reservedToolSeq = row.toolSeq;
  }

  /** toolSeqs reserved in the backend by any process (a toolStart never takes one again). */
  private readonly reservedToolSeq: number;

  get id(): string {
    return this.header.sessionId;
  }

  /** Tool runs (toolSeq issue and scratch directories) of a session open for writing. */
  tools(): SessionTools {
    if (!this.toolRuns) {
      const committed = (this.queue?.state.runtime ?? NO_RUNTIME).toolSeq;
      this.toolRuns = this.scratch ? this.scratch.tools(this.id, committed, this.header.keepScratch) : inMemoryTools(committed);
      this.toolRuns.issued = Math.max(this.toolRuns.issued, this.reservedToolSeq);
    }
    return this.toolRuns;
  }

  describe(lastSeq: number, turn: TurnState | null, header: HeaderState | undefined): OpenedSession {
    const { secretEnv: _names, idempotency: _key, ...shown } = effectiveHeader(this.header, header);
    const mode = this.queue?.stoppedReason ? 'read' : this.mode; // a fail-stopped writer writes no more
    const recovered = this.recovered;
    this.recovered = undefined; // reported by the open that repaired it, not by later ones
    return { ...shown, mode, lastSeq, secrets: this.status, turn, ...(recovered ? { recovered } : {}) };
  }

  /** The writer's committed view. */
  get committed(): { lastSeq: number; state: PlanState } | undefined {
    return this.queue && { lastSeq: this.queue.lastSeq, state: this.queue.state };
  }

  /**
   * Runs a write's preparation (which may wait for the backend: blob lookups and uploads)
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

  /** Waits for the writes called before it, removes unkept scratch directories; the caller releases the lease. */
  async drain(): Promise<void> {
    await this.intake; // the writes called before close reach the queue first, then drain
    await this.queue?.drain();
    await this.toolRuns?.cleanup();
  }
}

/** toolSeqs issued where there are no scratch directories (an ephemeral session: allocateScratch is refused). */
function inMemoryTools(committed: number): SessionTools {
  return {
    issued: committed,
    reserved: new Set<number>(),
    allocate: () => {
      throw new Error('no scratch space');
    },
    noteCommitted: () => {},
    cleanup: async () => {},
  };
}
