/**
 * The commit queue of a session open for writing, over the port: a request's laid-out texts are
 * sealed as records through the final gate (with the kinds their plan gave, never parsed back
 * from the texts), and a batch becomes durable as one `Backend.persist` — the records and the
 * snapshot of the state they leave, in one atomic step. The committed view lives here and is
 * advanced only after persist resolved (COMMIT returned, the bytes synced).
 */
import { CommitQueue, type CommitSink, type CommittedView } from '../commit/commitQueue.js';
import type { PlanState } from '../commit/layOut.js';
import type { FinalGate, Gated } from '../gate.js';
import type { Backend, Fence, SealedRecord } from '../port.js';
import { snapshotOf } from './snapshot.js';

/** Text of records persisted in one batch at most (one request may exceed it alone). */
export const MAX_BATCH_TEXT = 8 << 20;

export interface SinkOptions {
  backend: Backend;
  gate: FinalGate;
  fence: Fence;
  clock: () => number;
  /** The active generation the writes land in (a compaction moves it). */
  generation: () => number;
  /** More requests are on their way (the server read some it has not answered). */
  othersWaiting: () => boolean;
}

export function commitQueue(o: SinkOptions, lastSeq: number, state: PlanState): CommitQueue<Array<Gated<SealedRecord>>> {
  const view: CommittedView = { lastSeq, state };
  const sink: CommitSink<Array<Gated<SealedRecord>>> = {
    committed: () => view,
    clock: o.clock,
    fence: () => o.backend.leases.check(o.fence),
    seal(texts, firstSeq, ts, kinds) {
      // Every request the core queues is laid out by a plan, which names its records' kinds.
      if (!kinds || kinds.length !== texts.length) throw new Error('a request reached the commit queue without its records\' kinds');
      return o.gate.records(texts, kinds, firstSeq, ts);
    },
    async persist(batch, next) {
      const snapshot = o.gate.snapshot(snapshotOf(next.after));
      await o.backend.persist(o.fence, batch.flat(), snapshot, { lastSeq: view.lastSeq, generation: o.generation(), alone: next.alone && !o.othersWaiting() });
      Object.assign(view, { lastSeq: next.lastSeq, state: next.after });
    },
  };
  return new CommitQueue(sink, MAX_BATCH_TEXT);
}
