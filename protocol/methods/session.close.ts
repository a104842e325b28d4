import * as z from 'zod';
import { EmptyResult, defineMethod, paramsObject, SessionId } from '../common.js';

export const SessionCloseParams = paramsObject({ sessionId: SessionId }).meta({ id: 'SessionCloseParams' });

export const sessionClose = defineMethod({
  method: 'session/close', kind: 'request', direction: 'clientToServer', since: 1,
  params: SessionCloseParams, result: EmptyResult,
  summary: 'Finish in-flight appends and close the session in this connection.',
});

export type SessionCloseParams = z.infer<typeof SessionCloseParams>;
