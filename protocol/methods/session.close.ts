import * as z from 'zod';
import { EmptyResult, defineMethod, paramsObject, SessionId } from '../common.js';
import { SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const SessionCloseParams = paramsObject({ sessionId: SessionId }).meta({ id: 'SessionCloseParams' });

export const sessionClose = defineMethod({
  method: 'session/close', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionCloseParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS),
  summary: 'Finish in-flight appends and close the session in this connection.',
});

export type SessionCloseParams = z.infer<typeof SessionCloseParams>;
