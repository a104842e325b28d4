import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, SessionId } from '../common.js';
import { Redaction } from '../secrets.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const MAX_STATE_VALUE_BYTES = 1 << 20;

export const StateKey = z.string().meta({
  description: 'A state key: [A-Za-z0-9._-]{1,128}, no "..", not starting with "." (checked by the store: InvalidArgument)',
});

export const StateSetParams = paramsObject({
  sessionId: SessionId,
  key: StateKey,
  value: z.unknown().meta({ description: `A string or any JSON value; at most ${MAX_STATE_VALUE_BYTES} bytes serialized` }),
}).meta({ id: 'StateSetParams' });

export const StateSetResult = resultObject({
  redactions: z.array(Redaction).optional().meta({ description: 'Well-known credentials redacted from the value (seq 0)' }),
}).meta({ id: 'StateSetResult' });

export const StateGetParams = paramsObject({ sessionId: SessionId, key: StateKey }).meta({ id: 'StateGetParams' });
export const StateGetResult = resultObject({
  value: z.unknown().meta({ description: 'The value last set, or null when the key has none' }),
}).meta({ id: 'StateGetResult' });

export const StateDeleteParams = paramsObject({ sessionId: SessionId, key: StateKey }).meta({ id: 'StateDeleteParams' });
export const StateDeleteResult = resultObject({
  deleted: z.boolean().meta({ description: 'false when the key had no value' }),
}).meta({ id: 'StateDeleteResult' });

export const stateSet = defineMethod({
  method: 'state/set', kind: 'request', direction: 'clientToServer', since: 1,
  params: StateSetParams, result: StateSetResult, capability: 'state',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, CONTENT_ERRORS, ['ReadOnly', 'LeaseLost', 'NotWritten', 'Uncertain']),
  summary: 'Replace a small named value of the session atomically and durably (secret-checked, size-capped).',
});
export const stateGet = defineMethod({
  method: 'state/get', kind: 'request', direction: 'clientToServer', since: 1,
  params: StateGetParams, result: StateGetResult, capability: 'state',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'Read a named value of the session (null when unset).',
});
export const stateDelete = defineMethod({
  method: 'state/delete', kind: 'request', direction: 'clientToServer', since: 1,
  params: StateDeleteParams, result: StateDeleteResult, capability: 'state',
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, ['ReadOnly', 'LeaseLost', 'NotWritten', 'Uncertain']),
  summary: 'Remove a named value of the session durably.',
});

export type StateSetParams = z.infer<typeof StateSetParams>;
export type StateGetParams = z.infer<typeof StateGetParams>;
export type StateDeleteParams = z.infer<typeof StateDeleteParams>;
