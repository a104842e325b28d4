/**
 * Writes that append records: session/append, the turn methods, session/update. Each is
 * prepared (secret walk, redaction, blob extraction, size limits) before it is queued, laid out
 * at commit time against the committed state (turns, runtime counters, header state,
 * summaries), sealed through the final gate and persisted by the commit queue; it is answered
 * only once the backend's persist resolved.
 */
import type { RecordInput, AppendResult, TurnChange, TurnKind, UpdatedHeader } from '../../domain/types.js';
import { newTurnId } from '../../domain/turns/ids.js';
import type { TurnEvent } from '../../domain/turns/turnState.js';
import { baseState, type SessionUpdate } from '../../domain/sessionUpdate.js';
import { appendResult, planBatch, prepareBatch, prepareBatchSliced, turnEventPlan, wroteNothing } from '../commit/appendPlan.js';
import { prepareUpdate, updatedHeader, updatePlan } from '../commit/sessionUpdate.js';
import { StoreError } from '../../domain/errors.js';
import type { PlanState } from '../commit/layOut.js';
import type { Core, WritableSession } from './context.js';
import { answerOf, IDEMPOTENCY_MEMBER, checkIdempotencyKey, digestOf, reusedError, stamped, type Stamp } from './idempotency.js';
import { blobSinkFor } from './blobs.js';

export interface AppendOptions {
  expectedLastSeq?: number;
  /** idempotency.ts: a retry with this key answers the original append instead of writing again. */
  idempotencyKey?: string;
}

export async function append(c: Core, sessionId: string, records: RecordInput[], opts: AppendOptions = {}): Promise<AppendResult> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  const key = opts.idempotencyKey;
  if (key !== undefined) checkIdempotencyKey(key, c.secrets);
  refuseStampMember(records);
  // Everything up to the enqueue runs in call order (blob lookups wait for the backend).
  const prepared = await s.inOrder(async () => {
    const blobs = await blobSinkFor(c, s, records);
    const batch = await prepareBatchSliced(records, c.secrets, c.maxRecordBytes, blobs.sink);
    await blobs.flush(); // blobs are stored before the records that reference them
    const digest = key === undefined ? '' : digestOf(batch.texts);
    if (key !== undefined) {
      const original = await originalOf(c, s, key);
      if (original) return { replay: original.digest === digest ? answerOf(original) : reusedError(key, original) } as const;
    }
    const tools = s.tools();
    const planned = planBatch(batch, s.header.turns === 'auto', tools, (summary) => c.gate.admitsSummary(summary), c.secrets);
    let stamp: Stamp | undefined;
    const plan = key === undefined ? planned.plan : (state: PlanState, firstSeq: number) => {
      const out = planned.plan(state, firstSeq);
      const seqs = planned.recordSeqs();
      const { redactions } = appendResult({ firstSeq, lastSeq: firstSeq + out.texts.length - 1, ts: '' }, batch, seqs);
      stamp = { key, digest, firstSeq, lastSeq: firstSeq + out.texts.length - 1, ...(redactions ? { redactions } : {}) };
      const at = (seqs[0] as number) - firstSeq;
      const texts = out.texts.slice();
      texts[at] = stamped(texts[at] as string, stamp);
      return { ...out, texts };
    };
    const committing = c.commit(s, () => s.queue.append({ texts: batch.texts, expectedLastSeq: opts.expectedLastSeq, plan }));
    committing.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    if (key !== undefined) s.idempotency.begin(key, digest, committing.then(() => stamp as Stamp));
    return { batch, planned, tools, committing };
  });
  if ('replay' in prepared) {
    const { replay } = prepared as { replay: AppendResult | StoreError };
    if (replay instanceof StoreError) throw replay;
    return replay;
  }
  const { batch, planned, tools, committing } = prepared;
  const committed = await committing.catch((err: unknown) => {
    if (wroteNothing(err)) planned.giveBack();
    throw err;
  });
  tools.noteCommitted(batch.values);
  return appendResult(committed, batch, planned.recordSeqs());
}

/** `idempotency` is the store's member (idempotency.ts): a record bringing its own could fake another append's answer. */
function refuseStampMember(records: readonly RecordInput[]): void {
  records.forEach((r, i) => {
    if (Object.hasOwn(r, IDEMPOTENCY_MEMBER)) {
      throw new StoreError('InvalidArgument', `record ${i} uses the reserved member name ${IDEMPOTENCY_MEMBER}`, { path: `records[${i}].${IDEMPOTENCY_MEMBER}` });
    }
  });
}

/**
 * The committed append of `key` in this session's active generation, if any: found in this
 * process's map, or by the one scan of the generation; an original still committing is waited
 * for (a retry after a timeout): its stamp once committed, nothing if it failed.
 */
async function originalOf(c: Core, s: WritableSession, key: string): Promise<Stamp | undefined> {
  const found = await s.idempotency.find(key, (visit) => c.eachActiveRecord(s.id, visit, s.queue.lastSeq));
  return found && 'done' in found ? found.done : found;
}

export async function startTurn(c: Core, sessionId: string, kind: TurnKind): Promise<{ turnId: string }> {
  const turnId = newTurnId();
  await writeTurnEvent(c, sessionId, { kind: 'turn', turnId, event: 'start', turnKind: kind });
  return { turnId };
}

export async function transitionTurn(c: Core, sessionId: string, turnId: string, change: TurnChange): Promise<void> {
  await writeTurnEvent(c, sessionId, { kind: 'turn', turnId, ...change });
}

/** A transition is validated at commit time, against the state the appends before it left. */
async function writeTurnEvent(c: Core, sessionId: string, event: TurnEvent): Promise<void> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  const [text] = prepareBatch([event as unknown as RecordInput], c.secrets, c.maxRecordBytes).texts;
  await c.commitInOrder(s, () => s.queue.append({ texts: [], plan: turnEventPlan(text as string, JSON.parse(text as string) as TurnEvent) }));
}

/**
 * session/update: a `sessionUpdate` record through the commit queue, laid out against the header
 * state at commit time. With an idempotencyKey the record carries the stamp (idempotency.ts) in
 * the same write; the key shares the session's namespace with its appends' keys (the digest
 * starts with the record kind, so an update never matches an append's digest).
 */
export async function update(c: Core, sessionId: string, change: SessionUpdate, key?: string): Promise<UpdatedHeader> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  if (key !== undefined) checkIdempotencyKey(key, c.secrets);
  const prepared = prepareUpdate(change, c.secrets, c.maxRecordBytes);
  const digest = key === undefined ? '' : digestOf(['sessionUpdate', prepared.text]);
  const queued = await s.inOrder(async () => {
    if (key !== undefined) {
      const original = await originalOf(c, s, key);
      if (original) return { replay: original.digest === digest ? original : reusedError(key, original) } as const;
    }
    const planned = updatePlan(prepared, baseState(s.header), s.header, c.secrets, c.maxRecordBytes);
    let stamp: Stamp | undefined;
    const plan = key === undefined ? planned.plan : (state: PlanState, firstSeq: number) => {
      const out = planned.plan(state, firstSeq);
      const redactions = prepared.redactions.map((r) => ({ ...r, seq: firstSeq }));
      stamp = { key, digest, firstSeq, lastSeq: firstSeq, ...(redactions.length > 0 ? { redactions } : {}) };
      return { ...out, texts: [stamped(out.texts[0] as string, stamp)] };
    };
    const committing = c.commit(s, () => s.queue.append({ texts: [], plan }));
    committing.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    if (key !== undefined) s.idempotency.begin(key, digest, committing.then(() => stamp as Stamp));
    return { planned, committing };
  });
  if ('replay' in queued) {
    const { replay } = queued as { replay: Stamp | StoreError };
    if (replay instanceof StoreError) throw replay;
    // The original's seq and redactions; the header as it is now (later updates included).
    return updatedHeader(s.header, s.queue.state.header, replay.firstSeq, (replay.redactions ?? []).map(({ seq: _s, ...r }) => r));
  }
  const committed = await queued.committing;
  return updatedHeader(s.header, queued.planned.after(), committed.firstSeq, prepared.redactions);
}
