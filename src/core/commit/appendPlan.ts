/**
 * The append pipeline's domain, once for every backend: records prepared (secret gate,
 * redaction, blobs, size), then laid out at commit time (runtime counters, turn planning),
 * then the answer (seqs and redactions). A backend's store runs:
 *
 *   const batch = prepareBatch(records, secrets, maxBytes, blobs);   // before queueing
 *   const planned = planBatch(batch, auto, tools);                   // the queue calls planned.plan
 *   committed = await queue.append({ texts: [], plan: planned.plan, expectedLastSeq })
 *     .catch((e) => { if (wroteNothing(e)) planned.giveBack(); throw e; });
 *   return appendResult(committed, batch, planned.recordSeqs());
 */
import { StoreError } from '../../domain/errors.js';
import type { BlobSink } from '../../domain/blobRefs.js';
import { assignRuntime, reduceRuntime, type ToolSeqIssuer } from '../../domain/runtimeCounters.js';
import { carryAcross, type SplitRefusal } from '../../domain/secrets/carryOver.js';
import { type SecretSet, SLICED_SCAN_CHARS } from '../../domain/secrets/knownSecrets.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import { prepareRecord, prepareRecordSliced } from '../../domain/serialize.js';
import { planAppend } from '../../domain/turns/autoTurns.js';
import { applyNewTurnEvent, type TurnEvent } from '../../domain/turns/turnState.js';
import type { AppendResult, RecordInput } from '../../domain/types.js';
import { reduceUsage } from '../../domain/usage.js';
import { checkRewindTurn, type RewindRecord } from '../../domain/rewind.js';
import { summarizeRecord } from '../../domain/summary.js';
import type { AppendRequest, CommittedAppend, MessageSummaries, PlanState } from './layOut.js';

export interface PreparedBatch {
  texts: string[];
  values: RecordInput[];
  redactions: Redaction[][];
  /** Each record as stored but with its large strings in place (blobs not yet extracted): what the carry-over reads. */
  plain: unknown[];
}

/**
 * prepareBatch for a request that may hold large records: each record through
 * prepareRecordSliced (other sessions' requests are answered meanwhile).
 */
export async function prepareBatchSliced(records: RecordInput[], secrets: SecretSet, maxBytes: number, blobs?: BlobSink): Promise<PreparedBatch> {
  const prepared: Array<ReturnType<typeof prepareRecord>> = [];
  let since = 0; // characters prepared since the last yield: many small records add up too
  for (let i = 0; i < records.length; i++) {
    const p = await prepareRecordSliced(records[i] as RecordInput, i, secrets, maxBytes, blobs);
    prepared.push(p);
    since += p.text.length;
    if (since >= SLICED_SCAN_CHARS && i + 1 < records.length) {
      since = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return batchOf(prepared);
}

/** Every record of a batch prepared, or the first refusal thrown (then nothing is appended). */
export function prepareBatch(records: RecordInput[], secrets: SecretSet, maxBytes: number, blobs?: BlobSink): PreparedBatch {
  return batchOf(records.map((r, i) => prepareRecord(r, i, secrets, maxBytes, blobs)));
}

function batchOf(prepared: ReadonlyArray<ReturnType<typeof prepareRecord>>): PreparedBatch {
  return {
    texts: prepared.map((p) => p.text), values: prepared.map((p) => p.value as RecordInput),
    redactions: prepared.map((p) => p.redactions), plain: prepared.map((p) => p.plain),
  };
}

export interface PlannedBatch {
  plan: NonNullable<AppendRequest['plan']>;
  /** The seq each input record got (known once the plan ran). */
  recordSeqs(): number[];
  /** Returns allocated toolSeqs after a commit that provably wrote nothing. */
  giveBack(): void;
}

/**
 * The plan of one append: counters assigned and turns planned against the state at commit time.
 * `summaries` (a backend that keeps first/last message summaries in its snapshot): which
 * summaries may be kept (the final gate's admitsSummary); the plan then advances them.
 * `secrets`: the carry-over (domain/secrets/carryOver.ts) is checked against the state the
 * requests before this one leave, and a secret completed across records refuses this request.
 */
export function planBatch(batch: PreparedBatch, auto: boolean, tools: ToolSeqIssuer, summaries?: (text: string) => boolean, secrets?: SecretSet): PlannedBatch {
  let recordSeqs: number[] = [];
  let giveBack = () => {};
  return {
    plan: (state: PlanState, firstSeq: number) => {
      const carried = secrets ? carryAcross(secrets, state.carry, batch.plain) : { carry: state.carry };
      if ('refused' in carried) throw splitError(carried.refused);
      const runtime = assignRuntime(batch.values, batch.texts, state.runtime, tools);
      const planned = planAppend(batch.values, runtime.texts, state.turn, firstSeq, auto);
      runtime.take();
      giveBack = runtime.giveBack;
      recordSeqs = planned.recordSeqs;
      const usage = batch.values.reduce(reduceUsage, state.usage);
      const messages = summaries ? { messages: nextSummaries(state.messages, batch.values, summaries) } : {};
      return { ...state, texts: planned.texts, kinds: planned.kinds, turn: planned.turn, runtime: runtime.counters, usage, ...messages, carry: carried.carry };
    },
    recordSeqs: () => recordSeqs,
    giveBack: () => giveBack(),
  };
}

/**
 * The first and last message summaries after `values`: the first admitted one of the batch
 * when the session has none yet, and the batch's last admitted one (records in between are
 * summarized only when the ends are refused or not messages).
 */
export function nextSummaries(before: MessageSummaries | undefined, values: ReadonlyArray<Record<string, unknown>>, admits: (text: string) => boolean): MessageSummaries {
  const admitted = (r: Record<string, unknown>) => {
    const s = summarizeRecord(r);
    return s !== undefined && admits(s) ? s : undefined;
  };
  let last: string | undefined;
  let lastAt = values.length;
  while (last === undefined && lastAt > 0) last = admitted(values[--lastAt] as Record<string, unknown>);
  if (last === undefined) return before ?? {};
  let first = before?.first;
  for (let i = 0; first === undefined && i <= lastAt; i++) first = i === lastAt ? last : admitted(values[i] as Record<string, unknown>);
  return { first, last };
}

/** The plan of one turn record (start or transition), validated against the committed turn. */
export function turnEventPlan(text: string, value: TurnEvent): NonNullable<AppendRequest['plan']> {
  return (state, firstSeq) => ({ ...state, texts: [text], kinds: ['turn'], turn: applyNewTurnEvent(state.turn, value, firstSeq) });
}

/**
 * The plan of one rewind record (domain/rewind.ts), prepared by CommitQueue.appendPrepared once
 * every request before it committed (its toSeq checked against that view and its state reduced
 * from the records up to toSeq, which never change): the turn rule is checked against the turn
 * the plan is laid out against, and the record's state becomes the session's.
 */
export function rewindPlan(text: string, rec: RewindRecord): NonNullable<AppendRequest['plan']> {
  return (state) => {
    checkRewindTurn(state.turn, rec.toSeq);
    return { ...state, texts: [text], kinds: ['rewind'], turn: rec.turn, runtime: reduceRuntime(state.runtime, rec as unknown as RecordInput) };
  };
}

/** The refusal of a request that completes a registered secret begun by the text before it (never echoes either). */
function splitError(r: SplitRefusal): StoreError {
  return new StoreError('SecretRejected', `a registered secret completes across record ${r.index} and the text streamed before it (rule: ${r.rule}); nothing was written`, {
    path: r.path, rule: r.rule,
  });
}

/** True when the error proves the commit wrote nothing (allocated toolSeqs may be reused). */
export function wroteNothing(err: unknown): boolean {
  return err instanceof StoreError && (err.kind === 'NotWritten' || err.kind === 'RolledBack' || err.kind === 'SecretRejected');
}

export function appendResult(committed: CommittedAppend, batch: PreparedBatch, recordSeqs: number[]): AppendResult {
  const redactions = batch.redactions.flatMap((rs, i) => rs.map((r) => ({ seq: recordSeqs[i] as number, ...r })));
  return { firstSeq: committed.firstSeq, lastSeq: committed.lastSeq, ...(redactions.length > 0 ? { redactions } : {}) };
}
