import * as z from 'zod';
import { defineMethod, EmptyResult, paramsObject, resultObject, SessionId } from '../common.js';
import { TurnKind, TurnOutcome, TurnPhase, TurnState } from '../turns.js';
import { CONTENT_ERRORS, READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, WRITE_ERRORS, errorsOf } from '../methodErrors.js';

const TurnRef = { sessionId: SessionId, turnId: z.string().min(1).max(128) };

export const TurnStartParams = paramsObject({ sessionId: SessionId, kind: TurnKind }).meta({ id: 'TurnStartParams' });
export const TurnStartResult = resultObject({ turnId: z.string() }).meta({ id: 'TurnStartResult' });
export const TurnSetPhaseParams = paramsObject({ ...TurnRef, phase: TurnPhase }).meta({ id: 'TurnSetPhaseParams' });
export const TurnFailParams = paramsObject({ ...TurnRef, error: z.string().min(1).max(65_536) }).meta({ id: 'TurnFailParams' });
export const TurnResumeParams = paramsObject(TurnRef).meta({ id: 'TurnResumeParams' });
export const TurnFinishParams = paramsObject({ ...TurnRef, outcome: TurnOutcome, error: z.string().max(65_536).optional() })
  .meta({ id: 'TurnFinishParams' });
export const TurnGetParams = paramsObject({ sessionId: SessionId }).meta({ id: 'TurnGetParams' });
export const TurnGetResult = resultObject({ turn: TurnState.nullable() }).meta({ id: 'TurnGetResult' });

export const turnStart = defineMethod({
  method: 'turn/start', kind: 'request', direction: 'clientToServer', since: 1, capability: 'turns',
  params: TurnStartParams, result: TurnStartResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['InvalidTurnTransition']),
  summary: 'Start a turn (phase accepted); refused while another turn is pending.',
});
export const turnSetPhase = defineMethod({
  method: 'turn/setPhase', kind: 'request', direction: 'clientToServer', since: 1, capability: 'turns',
  params: TurnSetPhaseParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['InvalidTurnTransition']),
  summary: 'Move a pending turn to another phase.',
});
export const turnFail = defineMethod({
  method: 'turn/fail', kind: 'request', direction: 'clientToServer', since: 1, capability: 'turns',
  params: TurnFailParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['InvalidTurnTransition']),
  summary: 'Record a retryable failure of the active turn (it becomes retryable).',
});
export const turnResume = defineMethod({
  method: 'turn/resume', kind: 'request', direction: 'clientToServer', since: 1, capability: 'turns',
  params: TurnResumeParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['InvalidTurnTransition']),
  summary: 'Resume a retryable turn, or a turn still active after a crash.',
});
export const turnFinish = defineMethod({
  method: 'turn/finish', kind: 'request', direction: 'clientToServer', since: 1, capability: 'turns',
  params: TurnFinishParams, result: EmptyResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, CONTENT_ERRORS, ['InvalidTurnTransition']),
  summary: 'Finish a pending turn; a retryable turn can only be abandoned.',
});
export const turnGet = defineMethod({
  method: 'turn/get', kind: 'request', direction: 'clientToServer', since: 1, capability: 'turns',
  params: TurnGetParams, result: TurnGetResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'The current or last turn of a session, or null.',
});
