import { z } from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId, Timestamp } from '../common.js';
import { ParentLink } from './session.lineage.js';

export const MAX_LIST_LIMIT = 1_000;
export const DEFAULT_LIST_LIMIT = 100;

export const SessionListParams = paramsObject({
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
  cursor: z.string().max(512).optional().meta({ description: 'nextCursor of the previous page' }),
}).meta({ id: 'SessionListParams' });

export const SessionSummary = z
  .object({
    sessionId: SessionId,
    title: z.string().optional(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastSeq: Seq,
    bytes: z.number().int().meta({ description: 'Size of the journal in bytes' }),
    firstMessage: z.string().optional().meta({ description: '"role: text" of the first message, cut at 120 characters' }),
    lastMessage: z.string().optional().meta({ description: '"role: text" of the last message, cut at 120 characters' }),
    parent: ParentLink.optional(),
    ephemeral: z.literal(true).optional().meta({ description: 'An ephemeral session of this process (listed only here, before the durable ones)' }),
  })
  .meta({ id: 'SessionSummary' });

export const SessionListResult = resultObject({
  sessions: z.array(SessionSummary),
  nextCursor: z.string().optional(),
}).meta({ id: 'SessionListResult' });

export const sessionList = defineMethod({
  method: 'session/list', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionListParams, result: SessionListResult, capability: 'session.list',
  summary: 'List sessions, most recently updated first, from the index.',
});

export type SessionListParams = z.infer<typeof SessionListParams>;
export type SessionListResult = z.infer<typeof SessionListResult>;
export type SessionSummary = z.infer<typeof SessionSummary>;
