import type http from 'node:http';
import { StoreError } from '../../domain/errors.js';
import type { SessionStore, SessionSummary } from '../../domain/types.js';
import { searchSessions } from '../../core/services/search.js';
import { listAll, openSession, CliError } from '../common.js';
import { safeText } from '../output.js';
import { APP_JS } from './assetApp.js';
import { pageHtml } from './assetPage.js';
import { STYLE_CSS } from './assetStyle.js';
import { streamEvents } from './events.js';
import { sessionView } from './model.js';
import { type Handler, sendJson, sendText } from './server.js';

/** How many message hits a search looks at (the sessions they are in join the list). */
const SEARCH_HITS = 500;

export interface SessionRow {
  sessionId: string;
  title: string | null;
  firstMessage: string | null;
  updatedAt: string;
  lastSeq: number;
  bytes: number;
  tags: string[];
  /** Where the search text was found in a message (a search only). */
  snippet?: string;
}

/**
 * The viewer's routes (behind server.ts's guards): the page and its two assets, and the
 * read-only JSON/SSE endpoints. Nothing here writes to the store.
 */
export function routes(store: SessionStore, token: string, onDone: (stop: () => void) => () => void): Handler {
  return async (_req, res, url) => {
    const p = url.pathname;
    if (p === '/') return sendText(res, 200, pageHtml(token), 'text/html; charset=utf-8');
    if (p === '/app.js') return sendText(res, 200, APP_JS, 'text/javascript; charset=utf-8');
    if (p === '/style.css') return sendText(res, 200, STYLE_CSS, 'text/css; charset=utf-8');
    if (p === '/api/sessions') return sendJson(res, 200, await sessions(store, url.searchParams.get('q') ?? ''));
    const m = /^\/api\/session\/([^/]+)(\/events)?$/.exec(p);
    if (!m) return sendJson(res, 404, { error: 'not found' });
    let id: string;
    try {
      id = decodeURIComponent(m[1] as string);
    } catch {
      return sendJson(res, 400, { error: 'bad session id' });
    }
    try {
      const session = await openSession(store, id);
      if (!m[2]) return sendJson(res, 200, await sessionView(store, session));
      const after = Number(url.searchParams.get('after') ?? session.lastSeq);
      return await streamEvents(store, session.sessionId, Number.isSafeInteger(after) && after >= 0 ? after : session.lastSeq, res, onDone);
    } catch (e) {
      if (e instanceof StoreError && e.kind === 'SessionNotFound') return sendJson(res, 404, { error: `no session ${safeText(id)}` });
      if (e instanceof CliError || e instanceof StoreError) return sendJson(res, 409, { error: safeText(e.message) });
      throw e;
    }
  };
}

/** The sessions, most recently updated first; with `q`, those whose title, tags or summaries hold it (list --grep) or a message of which does (search). */
export async function sessions(store: SessionStore, q: string): Promise<SessionRow[]> {
  const query = q.trim();
  const listed = await listAll(store, query ? { query } : {});
  const snippets = new Map<string, string>();
  if (query) {
    const { hits } = await searchSessions(store, { query, limit: SEARCH_HITS });
    for (const h of hits) if (!snippets.has(h.sessionId)) snippets.set(h.sessionId, h.snippet);
  }
  const byId = new Map<string, SessionSummary>(listed.map((s) => [s.sessionId, s]));
  if (snippets.size > 0) for (const s of await listAll(store)) if (snippets.has(s.sessionId)) byId.set(s.sessionId, s);
  return [...byId.values()]
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.sessionId.localeCompare(a.sessionId))
    .map((s) => ({
      sessionId: s.sessionId, title: s.title === undefined ? null : safeText(s.title), firstMessage: s.firstMessage === undefined ? null : safeText(s.firstMessage),
      updatedAt: s.updatedAt, lastSeq: s.lastSeq, bytes: s.bytes, tags: (s.tags ?? []).map(safeText),
      ...(snippets.has(s.sessionId) ? { snippet: safeText(snippets.get(s.sessionId) as string) } : {}),
    }));
}
