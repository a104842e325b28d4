import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId, Timestamp, Count } from '../common.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, WRITE_ERRORS, errorsOf } from '../methodErrors.js';

export const SessionCompactParams = paramsObject({
  sessionId: SessionId,
  summary: z.string().max(8 << 20).meta({ description: 'The summary of the records up to throughSeq (written by the agent\'s model)' }),
  throughSeq: Seq.min(1).meta({ description: 'The last seq the summary covers; later records stay active' }),
  provider: z.string().max(256).optional(),
  model: z.string().max(256).optional(),
  expectedLastSeq: Seq.optional().meta({ description: 'Compact only if lastSeq is exactly this (otherwise Conflict, nothing changes)' }),
}).meta({ id: 'SessionCompactParams' });

export const ArchivedGeneration = z
  .object({ generation: Count, records: Count, bytes: Count })
  .meta({ id: 'ArchivedGeneration' });

export const SessionCompactResult = resultObject({
  generation: Count.meta({ description: 'The new active generation' }),
  checkpointSeq: Seq.meta({ description: 'seq of the checkpoint record (= throughSeq)' }),
  archived: ArchivedGeneration,
}).meta({ id: 'SessionCompactResult' });

export const SessionHistoryParams = paramsObject({ sessionId: SessionId }).meta({ id: 'SessionHistoryParams' });
export const SessionHistoryResult = resultObject({
  generations: z.array(z.object({
    generation: Count, throughSeq: Seq, records: Count, bytes: Count, createdAt: Timestamp,
  })),
}).meta({ id: 'SessionHistoryResult' });

export const sessionCompact = defineMethod({
  method: 'session/compact', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.compact',
  params: SessionCompactParams, result: SessionCompactResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['OutOfRange']),
  summary: 'Replace the records up to throughSeq by a checkpoint; the whole journal is archived first, crash-safe at every step.',
});
export const sessionHistory = defineMethod({
  method: 'session/history', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.compact',
  params: SessionHistoryParams, result: SessionHistoryResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'The archived generations of a session (read them with session/read generation).',
});
