import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { StoredRecord } from '../records.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const MAX_READ_LIMIT = 10_000;
export const DEFAULT_READ_LIMIT = 1_000;

export const SessionReadParams = paramsObject({
  sessionId: SessionId,
  generation: z.number().int().min(0).optional().meta({ description: 'Read an archived generation (session/history) instead of the active journal' }),
  afterSeq: Seq.optional().meta({ description: 'Return records with seq > afterSeq (default 0: from the start)' }),
  limit: z.number().int().min(1).max(MAX_READ_LIMIT).optional().meta({ description: `At most this many records (default ${DEFAULT_READ_LIMIT})` }),
  kinds: z.array(z.string()).min(1).optional().meta({ description: 'Only records of these kinds (lines of other kinds are checked but not parsed)' }),
  inline: z.boolean().optional().meta({ description: 'Replace every BlobRef by the string it stands for (default false)' }),
}).meta({ id: 'SessionReadParams' });

export const SessionReadResult = resultObject({
  records: z.array(StoredRecord),
  lastSeq: Seq.meta({ description: 'The session lastSeq when the page was read' }),
  nextAfterSeq: Seq.nullable().meta({
    description: 'Pass as afterSeq to read on; null when this page reached lastSeq',
  }),
}).meta({ id: 'SessionReadResult' });

export const sessionRead = defineMethod({
  method: 'session/read', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionReadParams, result: SessionReadResult, capability: 'session.read',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, ['OutOfRange']),
  summary: 'Read a page of stored records, streamed from disk and checksum-verified.',
});

export type SessionReadParams = z.infer<typeof SessionReadParams>;
export type SessionReadResult = z.infer<typeof SessionReadResult>;
