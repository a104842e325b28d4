import { sessionDelete, sessionFork, sessionPrune, sessionRestore } from '../../../protocol/index.js';
import type { SessionStore } from '../../domain/types.js';
import { pruneSessions } from '../../core/services/prune.js';
import { handle, type RequestHandler } from '../dispatch.js';

/** session/fork, session/delete, session/restore, session/prune — each only translates params to one store (or engine) call. */
export function lineageHandlers(store: SessionStore): RequestHandler[] {
  return [
    handle(sessionFork, (p) => store.fork(p.sessionId, p.atSeq)),
    handle(sessionDelete, async (p) => (await store.delete(p.sessionId, p.purge ?? false), {})),
    handle(sessionRestore, async (p) => (await store.restore(p.sessionId), {})),
    handle(sessionPrune, ({ _meta, ...req }) => pruneSessions(store, req, Date.now())),
  ];
}
