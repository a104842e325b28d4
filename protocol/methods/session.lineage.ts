import * as z from 'zod';
import { defineMethod, EmptyResult, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

/** Provenance of a session: the session it continues (after a compaction into a new session) or forks. */
export const ParentLink = z
  .strictObject({
    sessionId: SessionId,
    relation: z.enum(['continuation', 'fork']),
    atSeq: Seq.optional().meta({ description: 'The parent seq the new session starts from' }),
    summary: z.strictObject({ provider: z.string(), model: z.string(), agentId: z.string().optional() }).optional()
      .meta({ description: 'Who summarized the parent, for a continuation' }),
  })
  .meta({ id: 'ParentLink' });

export const SessionForkParams = paramsObject({
  sessionId: SessionId,
  atSeq: Seq.optional().meta({ description: 'Copy the records up to this seq (default: all)' }),
}).meta({ id: 'SessionForkParams' });
export const SessionForkResult = resultObject({ sessionId: SessionId }).meta({ id: 'SessionForkResult' });

export const SessionDeleteParams = paramsObject({
  sessionId: SessionId,
  purge: z.boolean().optional().meta({ description: 'Remove for good (also from the trash) instead of moving to trash/' }),
}).meta({ id: 'SessionDeleteParams' });
export const SessionRestoreParams = paramsObject({ sessionId: SessionId }).meta({ id: 'SessionRestoreParams' });

export const sessionFork = defineMethod({
  method: 'session/fork', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.fork',
  params: SessionForkParams, result: SessionForkResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, CONTENT_ERRORS, ['OutOfRange', 'Conflict', 'NotWritten', 'Uncertain']),
  summary: 'A new session holding a copy of the records up to atSeq, linked to its parent; the original is untouched.',
});
export const sessionDelete = defineMethod({
  method: 'session/delete', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.delete',
  params: SessionDeleteParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, ['SessionLocked', 'Conflict', 'NotWritten', 'Uncertain']),
  summary: 'Move a session (journal, history, index entry) to trash/, or remove it for good with purge.',
});
export const sessionRestore = defineMethod({
  method: 'session/restore', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.delete',
  params: SessionRestoreParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, ['Conflict', 'NotWritten', 'Uncertain']),
  summary: 'Bring a deleted session back from trash/.',
});
