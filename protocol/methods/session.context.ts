import * as z from 'zod';
import { defineMethod, paramsObject, resultObject, SessionId } from '../common.js';
import { ChatMessage } from '../records.js';
import { TurnState } from '../turns.js';
import { READ_ERRORS, SESSION_ERRORS, STORE_ERRORS, errorsOf } from '../methodErrors.js';

export const SessionContextParams = paramsObject({
  sessionId: SessionId,
  prune: z
    .strictObject({
      keepRecentToolOutputs: z.number().int().min(0).optional().meta({ description: 'Tool outputs left whole, counting back from the newest (default 3)' }),
      maxToolOutputChars: z.number().int().min(0).optional().meta({ description: 'Older tool outputs are cut to this many characters (default 2000)' }),
    })
    .optional()
    .meta({ description: 'Opt-in: shorten old large tool outputs; the stored records are never touched' }),
}).meta({ id: 'SessionContextParams' });

export const SessionContextResult = resultObject({
  messages: z.array(ChatMessage),
  turn: TurnState.nullable(),
}).meta({ id: 'SessionContextResult' });

export const sessionContext = defineMethod({
  method: 'session/context', kind: 'request', direction: 'clientToServer', since: 1, capability: 'session.context',
  params: SessionContextParams, result: SessionContextResult,
  errors: errorsOf(STORE_ERRORS, SESSION_ERRORS, READ_ERRORS),
  summary: 'The conversation to send to the provider on resume: well-formed even after a crash mid-turn.',
});

export type SessionContextParams = z.infer<typeof SessionContextParams>;
