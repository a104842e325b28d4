import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { UsageCounts } from '../usage.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const SessionUsageParams = paramsObject({ sessionId: SessionId }).meta({ id: 'SessionUsageParams' });

export const SessionUsageResult = resultObject({
  lastSeq: Seq.meta({ description: 'The totals count the records up to this seq' }),
  records: z.number().int().min(0).meta({ description: 'Records whose usage object was counted' }),
  total: UsageCounts,
  byModel: z.record(z.string(), UsageCounts).meta({ description: 'By model name (the record\'s, else the session\'s llm.model, else "unknown")' }),
}).meta({ id: 'SessionUsageResult' });

export const sessionUsage = defineMethod({
  method: 'session/usage', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.usage',
  params: SessionUsageParams, result: SessionUsageResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'Token usage summed from the usage objects of api responses and messages, overall and by model; kept at commit time, never read from the journal.',
});

export type SessionUsageResult = z.infer<typeof SessionUsageResult>;
