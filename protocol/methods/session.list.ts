import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId, Timestamp, Count } from '../common.js';
import { ParentLink } from './session.lineage.js';
import { MAX_TAGS, Tag } from '../tags.js';
import { READ_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const MAX_LIST_LIMIT = 1_000;
export const DEFAULT_LIST_LIMIT = 100;

export const SessionListParams = paramsObject({
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
  cursor: z.string().max(512).optional().meta({ description: 'nextCursor of the previous page' }),
  cwd: z.string().max(4096).optional().meta({ description: 'Only sessions created with exactly this cwd (capability session.list.filters)' }),
  cwdPrefix: z.string().max(4096).optional().meta({ description: 'Only sessions whose cwd is this directory or below it (not with cwd)' }),
  tags: z.array(Tag).max(MAX_TAGS).optional().meta({ description: 'Only sessions carrying all of these tags' }),
  parentId: SessionId.optional().meta({ description: 'Only continuations and forks of this session' }),
  updatedAfter: Timestamp.optional().meta({ description: 'Only sessions updated strictly after this RFC 3339 time' }),
  updatedBefore: Timestamp.optional().meta({ description: 'Only sessions updated strictly before this RFC 3339 time' }),
  includeDeleted: z.boolean().optional().meta({ description: 'Also list sessions in the trash (marked deleted: true)' }),
  query: z.string().min(1).max(1024).optional().meta({ description: 'Case-insensitive substring of the title, a tag, or the first/last message summary' }),
}).meta({ id: 'SessionListParams' });

export const SessionSummary = z
  .object({
    sessionId: SessionId,
    title: z.string().optional(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    lastSeq: Seq,
    bytes: Count.meta({ description: 'Size of the journal in bytes' }),
    firstMessage: z.string().optional().meta({ description: '"role: text" of the first message, cut at 120 characters' }),
    lastMessage: z.string().optional().meta({ description: '"role: text" of the last message, cut at 120 characters' }),
    parent: ParentLink.optional(),
    ephemeral: z.literal(true).optional().meta({ description: 'An ephemeral session of this process (listed only here, before the durable ones)' }),
    cwd: z.string().optional(),
    tags: z.array(z.string()).optional().meta({ description: 'The session\'s tags (after session/update)' }),
    deleted: z.literal(true).optional().meta({ description: 'The session is in the trash (listed with includeDeleted only)' }),
  })
  .meta({ id: 'SessionSummary' });

export const SessionListResult = resultObject({
  sessions: z.array(SessionSummary),
  nextCursor: z.string().optional(),
}).meta({ id: 'SessionListResult' });

export const sessionList = defineMethod({
  method: 'session/list', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionListParams, result: SessionListResult, capability: 'session.list',
  errors: errorsOf(STORE_ERRORS, READ_ERRORS),
  summary: 'List sessions, most recently updated first, from the index.',
});

export type SessionListParams = z.infer<typeof SessionListParams>;
export type SessionListResult = z.infer<typeof SessionListResult>;
export type SessionSummary = z.infer<typeof SessionSummary>;
