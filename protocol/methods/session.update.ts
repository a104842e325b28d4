import * as z from 'zod';
import { defineMethod, IdempotencyKey, paramsObject, resultObject, Seq, SessionId, Timestamp, Count } from '../common.js';
import { IdempotencyStamp, Redaction } from '../secrets.js';
import { LlmConfig } from './session.create.js';
import { ParentLink } from './session.lineage.js';
import { KeepScratch } from './tool.js';
import { Tags } from '../tags.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, WRITE_ERRORS, errorsOf } from '../methodErrors.js';

export { MAX_TAGS, Tag, Tags } from '../tags.js';


export const SessionUpdateParams = paramsObject({
  sessionId: SessionId,
  title: z.string().max(1024).optional().meta({ description: 'Replaces the title (one line, control characters removed; empty removes it)' }),
  metadata: z.record(z.string(), z.unknown()).optional().meta({ description: 'A JSON merge patch (RFC 7396) over the session\'s metadata' }),
  tags: Tags.optional().meta({ description: 'Replaces the set of tags (empty removes them)' }),
  idempotencyKey: IdempotencyKey.optional().meta({
    description: 'Per session (shared with session/append\'s keys): a retry with the same key and the same change answers the original seq and writes nothing; '
      + 'the same key with another change is Conflict (reason idempotencyKeyReused). Kept while the sessionUpdate record holding it is uncompacted (§6.3)',
  }),
}).meta({ id: 'SessionUpdateParams' });

/** The `sessionUpdate` record as stored (written by session/update; never appended by a client). */
export const StoredSessionUpdateRecord = z
  .strictObject({
    seq: Seq.min(1), ts: Timestamp, kind: z.literal('sessionUpdate'),
    title: z.string().optional(), metadata: z.record(z.string(), z.unknown()).optional(), tags: z.array(z.string()).optional(),
    idempotency: IdempotencyStamp.optional().meta({ description: 'When the update was sent with an idempotencyKey: the key and its original seq (§6.3)' }),
  })
  .meta({ id: 'StoredSessionUpdateRecord' });

export const SessionUpdateResult = resultObject({
  sessionId: SessionId,
  createdAt: Timestamp,
  seq: Seq.meta({ description: 'The seq of the sessionUpdate record' }),
  title: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
  cwd: z.string().optional(),
  systemPrompt: z.string().optional(),
  llm: LlmConfig.optional(),
  parent: ParentLink.optional(),
  turns: z.enum(['manual', 'auto']).optional(),
  keepScratch: KeepScratch.optional(),
  blobThreshold: Count.optional(),
  redactions: z.array(Redaction).optional().meta({ description: 'What was redacted in the update, when anything was' }),
}).meta({ id: 'SessionUpdateResult' });

export const sessionUpdate = defineMethod({
  method: 'session/update', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionUpdateParams, result: SessionUpdateResult, capability: 'session.update',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS),
  summary: 'Rename a session, patch its metadata, replace its tags: a durable sessionUpdate record; returns the new header.',
});

export type SessionUpdateParams = z.infer<typeof SessionUpdateParams>;
export type SessionUpdateResult = z.infer<typeof SessionUpdateResult>;
