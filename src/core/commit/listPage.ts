import { StoreError } from '../../domain/errors.js';
import type { SessionSummary } from '../../domain/types.js';

/**
 * session/list's order and cursor, once for every backend: most recently updated first (ties:
 * newer id first); the cursor names the last summary returned, so a page after it is stable
 * while sessions are added or updated.
 */
/** The page size when session/list gives no limit. */
export const DEFAULT_LIST_LIMIT = 100;

export function pageOf<T extends CursorKey = SessionSummary>(all: T[], opts: { limit?: number; cursor?: string }): { sessions: T[]; nextCursor?: string } {
  const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
  // those after the cursor first, then sorted: a later page sorts only what is left
  const rest = after ? all.filter((s) => newestFirst(s, after) > 0) : all;
  rest.sort(newestFirst);
  const limit = opts.limit ?? DEFAULT_LIST_LIMIT;
  const sessions = rest.slice(0, limit);
  const last = sessions[sessions.length - 1];
  return rest.length > limit && last ? { sessions, nextCursor: encodeCursor(last) } : { sessions };
}

type CursorKey = Pick<SessionSummary, 'updatedAt' | 'sessionId'>;

function newestFirst(a: CursorKey, b: CursorKey): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

function encodeCursor(s: CursorKey): string {
  return Buffer.from(JSON.stringify([s.updatedAt, s.sessionId])).toString('base64url');
}

export function decodeCursor(cursor: string): CursorKey {
  try {
    const [updatedAt, sessionId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof updatedAt === 'string' && typeof sessionId === 'string') return { updatedAt, sessionId };
  } catch {
    // fall through
  }
  throw new StoreError('InvalidArgument', 'invalid cursor: pass nextCursor from a previous session/list result', { path: 'cursor' });
}
