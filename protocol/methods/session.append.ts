import * as z from 'zod';
import { defineMethod, IdempotencyKey, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { Record } from '../records.js';
import { Redaction } from '../secrets.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, WRITE_ERRORS, errorsOf } from '../methodErrors.js';

export const MAX_APPEND_RECORDS = 10_000;

export const SessionAppendParams = paramsObject({
  sessionId: SessionId,
  records: z.array(Record).min(1).max(MAX_APPEND_RECORDS),
  expectedLastSeq: Seq.optional().meta({
    description: 'Append only if the session lastSeq is exactly this; otherwise Conflict and nothing is written',
  }),
  idempotencyKey: IdempotencyKey.optional().meta({
    description: 'Per session: a retry with the same key and the same records answers the original result (same seqs) and writes nothing; '
      + 'the same key with other records is Conflict (reason idempotencyKeyReused). 1..128 printable ASCII characters; kept while the record holding it is uncompacted (§6.3)',
  }),
}).meta({ id: 'SessionAppendParams' });

export const SessionAppendResult = resultObject({
  firstSeq: Seq,
  lastSeq: Seq,
  redactions: z.array(Redaction).optional().meta({ description: 'What was redacted on write, when anything was (no values)' }),
}).meta({ id: 'SessionAppendResult' });

export const sessionAppend = defineMethod({
  method: 'session/append', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionAppendParams, result: SessionAppendResult, capability: 'session.append',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['InvalidTurnTransition']),
  summary: 'Append records all-or-nothing in one write; answered only after fdatasync. Refused if a record holds a registered secret; well-known credentials are redacted.',
});

export type SessionAppendParams = z.infer<typeof SessionAppendParams>;
export type SessionAppendResult = z.infer<typeof SessionAppendResult>;
