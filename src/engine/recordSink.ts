/**
 * A commit sink for a backend that stores records as rows (PostgreSQL): a request's texts are
 * sealed as SealedRecords (kind read from the text, the final gate over the exact texts sent),
 * and the committed view lives here, advanced only after the backend's persist resolved.
 */
import type { SealedRecord } from '../backend/port.js';
import { StoreError } from '../domain/errors.js';
import { CommitQueue, type CommitSink, type CommittedView } from './commitQueue.js';
import type { PlanState } from './layOut.js';

/** Text of records persisted in one batch (one transaction) at most (one request may exceed it alone). */
export const MAX_BATCH_TEXT = 8 << 20;

export interface RecordPersistence {
  /** Persists `recs` (seqs following `lastSeq`) durably, all or nothing; `after` is the state they leave. */
  persist(recs: SealedRecord[], lastSeq: number, after: PlanState): Promise<void>;
  /** The final secret gate over one request's exact texts: the rule that matched, if any. */
  gate(texts: string[]): string | undefined;
  clock(): number;
}

/** The commit queue of a record-storing backend, starting from its committed view. */
export function recordQueue(backend: RecordPersistence, lastSeq: number, state: PlanState): CommitQueue<SealedRecord[]> {
  const view: CommittedView = { lastSeq, state };
  const sink: CommitSink<SealedRecord[]> = {
    committed: () => view,
    clock: () => backend.clock(),
    seal(texts, firstSeq, ts) {
      const rule = backend.gate(texts);
      return rule ? { rule } : { sealed: texts.map((text, i) => ({ seq: firstSeq + i, ts, kind: kindOf(text), text })) };
    },
    async persist(batch, next) {
      await backend.persist(batch.flat(), view.lastSeq, next.after);
      Object.assign(view, { lastSeq: next.lastSeq, state: next.after });
    },
  };
  return new CommitQueue(sink, MAX_BATCH_TEXT);
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
