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
import type { Core } from './context.js';
import { blobSinkFor } from './blobs.js';

export async function append(c: Core, sessionId: string, records: RecordInput[], opts: { expectedLastSeq?: number } = {}): Promise<AppendResult> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  // Everything up to the enqueue runs in call order (blob lookups wait for the backend).
  const { batch, planned, tools, committing } = await s.inOrder(async () => {
    const blobs = await blobSinkFor(c, s, records);
    const batch = await prepareBatchSliced(records, c.secrets, c.maxRecordBytes, blobs.sink);
    await blobs.flush(); // blobs are stored before the records that reference them
    const tools = s.tools();
    const planned = planBatch(batch, s.header.turns === 'auto', tools, (summary) => c.gate.admitsSummary(summary), c.secrets);
    const committing = c.commit(s, () => s.queue.append({ texts: batch.texts, expectedLastSeq: opts.expectedLastSeq, plan: planned.plan }));
    committing.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    return { batch, planned, tools, committing };
  });
  const committed = await committing.catch((err: unknown) => {
    if (wroteNothing(err)) planned.giveBack();
    throw err;
  });
  tools.noteCommitted(batch.values);
  return appendResult(committed, batch, planned.recordSeqs());
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

/** session/update: a `sessionUpdate` record through the commit queue, laid out against the header state at commit time. */
export async function update(c: Core, sessionId: string, change: SessionUpdate): Promise<UpdatedHeader> {
  const s = c.writable(sessionId) ?? await c.notWritable(sessionId);
  const prepared = prepareUpdate(change, c.secrets, c.maxRecordBytes);
  const planned = updatePlan(prepared, baseState(s.header), s.header, c.secrets, c.maxRecordBytes);
  const committed = await c.commitInOrder(s, () => s.queue.append({ texts: [], plan: planned.plan }));
  return updatedHeader(s.header, planned.after(), committed.firstSeq, prepared.redactions);
}
