import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, SessionId, Timestamp, Count } from '../common.js';
import { READ_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

/** Retention (§18): move the sessions not updated for a while to the trash, never silently. */
export const SessionPruneParams = paramsObject({
  olderThan: z.string().max(64).meta({
    description: 'Sessions last updated more than this long ago: <n><unit> with unit s, m, h, d or w (30d, 12h, 90m), or ISO 8601 PnW/PnDTnHnMnS (P30D)',
  }),
  keepLast: z.number().int().min(0).max(1_000_000).optional().meta({ description: 'Of the sessions selected, keep the N most recently updated' }),
  tags: z.array(z.string().max(256)).max(64).optional().meta({ description: 'Only sessions whose header tags include every one of these' }),
  dryRun: z.boolean().optional().meta({ description: 'Report what would be moved and what skipped (the real prune\'s reasons); move nothing' }),
}).meta({ id: 'SessionPruneParams' });

export const PrunedSession = z.object({
  sessionId: SessionId,
  title: z.string().optional(),
  updatedAt: Timestamp,
  bytes: Count.optional().meta({ description: 'Stored size as session/list reports it' }),
}).meta({ id: 'PrunedSession' });

export const SessionPruneResult = resultObject({
  dryRun: z.boolean(),
  sessions: z.array(PrunedSession).meta({ description: 'Moved to the trash (with dryRun: that would be), most recently updated first' }),
  skipped: z.array(z.object({
    sessionId: SessionId,
    reason: z.enum(['open', 'gone', 'inTrash']).meta({ description: 'open: open for writing by a process; gone: deleted meanwhile; inTrash: a deleted session with this id is in the trash' }),
  })).meta({ description: 'Selected but left where they are (with dryRun: that would be, for the same reasons)' }),
}).meta({ id: 'SessionPruneResult' });

export const sessionPrune = defineMethod({
  method: 'session/prune', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionPruneParams, result: SessionPruneResult, capability: 'session.prune',
  errors: errorsOf(STORE_ERRORS, READ_ERRORS, ['NotWritten', 'Uncertain']),
  summary: 'Move the sessions not updated for olderThan (keepLast, tags) to the trash, one at a time; report them.',
});

export type SessionPruneParams = z.infer<typeof SessionPruneParams>;
export type SessionPruneResult = z.infer<typeof SessionPruneResult>;
