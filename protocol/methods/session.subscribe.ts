import * as z from 'zod';
import { defineMethod, EmptyResult, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { StoredRecord } from '../records.js';
import { TurnState } from '../turns.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const SessionSubscribeParams = paramsObject({
  sessionId: SessionId,
  afterSeq: Seq.optional().meta({ description: 'Deliver the stored records after this seq first (default 0: all), then each new one' }),
}).meta({ id: 'SessionSubscribeParams' });
export const SessionSubscribeResult = resultObject({ lastSeq: Seq }).meta({ id: 'SessionSubscribeResult' });
export const SessionUnsubscribeParams = paramsObject({ sessionId: SessionId }).meta({ id: 'SessionUnsubscribeParams' });

export const SessionDidAppendParams = z
  .object({ sessionId: SessionId, records: z.array(StoredRecord) })
  .meta({ id: 'SessionDidAppendParams' });
export const SessionDidOverflowParams = z
  .object({ sessionId: SessionId, lastDeliveredSeq: Seq })
  .meta({ id: 'SessionDidOverflowParams' });
export const TurnDidChangeParams = z
  .object({ sessionId: SessionId, turn: TurnState.nullable() })
  .meta({ id: 'TurnDidChangeParams' });

export const sessionSubscribe = defineMethod({
  method: 'session/subscribe', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.subscribe',
  params: SessionSubscribeParams, result: SessionSubscribeResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'Receive the records after afterSeq, then every record appended (by any process), as session/didAppend.',
});
export const sessionUnsubscribe = defineMethod({
  method: 'session/unsubscribe', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.subscribe',
  params: SessionUnsubscribeParams, result: EmptyResult,
  errors: [],
  summary: 'Stop a subscription.',
});
export const sessionDidAppend = defineMethod({
  method: 'session/didAppend', kind: 'notification', direction: 'serverToClient', since: 1, capability: 'session.subscribe',
  params: SessionDidAppendParams, summary: 'Records of a subscribed session, in seq order, each exactly once.',
});
export const sessionDidOverflow = defineMethod({
  method: 'session/didOverflow', kind: 'notification', direction: 'serverToClient', since: 1, capability: 'session.subscribe',
  params: SessionDidOverflowParams, summary: 'The subscription was dropped (the client fell too far behind, or its next records cannot be read); resubscribe after lastDeliveredSeq.',
});
export const turnDidChange = defineMethod({
  method: 'turn/didChange', kind: 'notification', direction: 'serverToClient', since: 1, capability: 'session.subscribe',
  params: TurnDidChangeParams, summary: 'The turn state of a subscribed session after turn records were delivered.',
});
