import { sessionRewind, sessionUsage } from '../../../protocol/index.js';
import type { SessionStore } from '../../domain/types.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** session/usage and session/rewind — each only translates params to one store call. */
export function historyHandlers(store: SessionStore): RequestHandler[] {
  return [
    handle(sessionUsage, (p) => store.usage(p.sessionId)),
    handle(sessionRewind, (p) => store.rewind(p.sessionId, p.toSeq, { expectedLastSeq: p.expectedLastSeq })),
  ];
}
