import { sessionContext, turnFail, turnFinish, turnGet, turnResume, turnSetPhase, turnStart } from '../../../protocol/index.js';
import type { SessionStore } from '../../domain/types.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** turn/* and session/context — each handler only translates params to one store call. */
export function turnHandlers(store: SessionStore): RequestHandler[] {
  return [
    handle(turnStart, (p) => store.startTurn(p.sessionId, p.kind)),
    handle(turnSetPhase, async (p) => (await store.transitionTurn(p.sessionId, p.turnId, { event: 'phase', phase: p.phase }), {})),
    handle(turnFail, async (p) => (await store.transitionTurn(p.sessionId, p.turnId, { event: 'fail', error: p.error }), {})),
    handle(turnResume, async (p) => (await store.transitionTurn(p.sessionId, p.turnId, { event: 'resume' }), {})),
    handle(turnFinish, async (p) => {
      await store.transitionTurn(p.sessionId, p.turnId, { event: 'finish', outcome: p.outcome, ...(p.error !== undefined ? { error: p.error } : {}) });
      return {};
    }),
    handle(turnGet, async (p) => ({ turn: await store.getTurn(p.sessionId) })),
    handle(sessionContext, (p) => store.context(p.sessionId, p.prune)),
  ];
}
