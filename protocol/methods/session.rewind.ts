import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, Seq, SessionId } from '../common.js';
import { TurnState } from '../turns.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, WRITE_ERRORS, errorsOf } from '../methodErrors.js';

export const SessionRewindParams = paramsObject({
  sessionId: SessionId,
  toSeq: Seq.meta({ description: 'The seq to go back to: 0 (before any record), or the checkpoint\'s seq or later after a compaction, up to lastSeq' }),
  expectedLastSeq: Seq.optional().meta({ description: 'Rewind only if lastSeq is exactly this (otherwise Conflict, nothing changes)' }),
}).meta({ id: 'SessionRewindParams' });

export const SessionRewindResult = resultObject({
  seq: Seq.min(1).meta({ description: 'seq of the rewind record' }),
  toSeq: Seq,
  turn: TurnState.nullable().meta({ description: 'The turn state from now on: the one as of toSeq' }),
}).meta({ id: 'SessionRewindResult' });

export const sessionRewind = defineMethod({
  method: 'session/rewind', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.rewind',
  params: SessionRewindParams, result: SessionRewindResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS, WRITE_ERRORS, ['OutOfRange']),
  summary: 'Undo in place: append a rewind record; context, turn and open api requests are then those as of toSeq plus what follows.',
});
