/**
 * session/search, once for every backend, over the store's own read path: the message records
 * of each session streamed page by page (session/read's pages: bounded in records and bytes),
 * so memory stays bounded by one page whatever the sessions' sizes. Hits come in (sessionId,
 * seq) order — sessions by id (ULIDs: creation order), records by seq — one per matching
 * record. The cursor names the last record looked at; a later page goes on after it.
 *
 * What is searched: the text of `message` records of the active generation (a content string,
 * and the `text` of content parts); not archived generations (the checkpoint's summary stands
 * for them), not strings stored as blobs (they are not in the record text). The snippet is
 * scrubbed like error text (registered secrets, well-known credentials), although the stored
 * text already passed the secret gate, for secrets registered after it was written.
 */
import { StoreError } from '../../domain/errors.js';
import type { ListPage, ReadOptions, ReadPage, SearchCandidate, SecretsInput, SessionStore } from '../../domain/types.js';
import { textOf } from '../../domain/summary.js';
import { searchByIndex } from './searchIndex.js';

import { DEFAULT_SEARCH_LIMIT } from '../../../protocol/methods/session.search.js';
import { parseExact } from '../../domain/exactJson.js';
export const SNIPPET_CHARS = 160;
/** Characters of context before the match. */
const SNIPPET_LEAD = 40;
/** Records read per page of a session (each page is also bounded in bytes by the read path). */
const PAGE_RECORDS = 500;

export interface SearchHit {
  sessionId: string;
  seq: number;
  snippet: string;
}

export interface SearchRequest {
  query: string;
  limit?: number;
  cursor?: string;
  sessionIds?: string[];
}

/** What search needs of a store: the list (ids of the live sessions), the read path, the scrubber; its index if it has one (searchIndex.ts). */
export interface Searchable {
  searchCandidates?: SessionStore['searchCandidates'];
  list(opts: { limit?: number; cursor?: string }): Promise<ListPage>;
  read(sessionId: string, opts?: ReadOptions): Promise<ReadPage>;
  scrub(text: string, extra?: SecretsInput): string;
}

export async function searchSessions(store: Searchable, req: SearchRequest): Promise<{ hits: SearchHit[]; nextCursor?: string }> {
  if (req.query.trim() === '') throw new StoreError('InvalidArgument', 'the query is empty', { path: 'query' });
  const after = req.cursor === undefined ? undefined : decodeSearchCursor(req.cursor);
  const limit = req.limit ?? DEFAULT_SEARCH_LIMIT;
  const pattern = new RegExp(req.query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'iu');
  // One match, snippet and scrub for both paths: a stored record (its seq and parsed members) to its hit.
  const hitOf = (sessionId: string, seq: number, rec: { message?: { content?: unknown } }): SearchHit | undefined => {
    const snippet = snippetOf(textOf(rec.message?.content, '\n'), pattern);
    return snippet === undefined ? undefined : { sessionId, seq, snippet: store.scrub(snippet) };
  };
  const indexed = await searchByIndex(store, req.query, { limit, ...(after ? { after } : {}), ...(req.sessionIds ? { sessionIds: req.sessionIds } : {}) },
    (c: SearchCandidate) => hitOf(c.sessionId, c.record.seq, parseExact(c.record.text) as object), (h) => encodeSearchCursor(h.sessionId, h.seq));
  if (indexed) return indexed;
  const explicit = req.sessionIds !== undefined;
  const ids = [...new Set(req.sessionIds ?? await liveIds(store))].sort();
  const hits: SearchHit[] = [];
  for (const id of ids) {
    if (after && id < after.sessionId) continue;
    let afterSeq = after && id === after.sessionId ? after.seq : 0;
    for (;;) {
      let page: ReadPage;
      try {
        page = await store.read(id, { afterSeq, limit: PAGE_RECORDS, kinds: ['message'] });
      } catch (err) {
        // a listed session deleted meanwhile is skipped; one the client named is its error
        if (!explicit && err instanceof StoreError && err.kind === 'SessionNotFound') break;
        throw err;
      }
      for (const rec of page.records) {
        const hit = hitOf(id, rec.seq, rec as { message?: { content?: unknown } });
        if (hit === undefined) continue;
        hits.push(hit);
        if (hits.length === limit) return { hits, nextCursor: encodeSearchCursor(id, rec.seq) };
      }
      if (page.nextAfterSeq === null) break;
      afterSeq = page.nextAfterSeq;
    }
  }
  return { hits };
}

async function liveIds(store: Searchable): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const s of page.sessions) ids.push(s.sessionId);
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

/**
 * At most SNIPPET_CHARS code points in all, each "…" included: from a little before the first
 * match, whitespace folded (folding only shortens, so the bound holds after it).
 */
export function snippetOf(text: string, pattern: RegExp): string | undefined {
  const m = pattern.exec(text);
  if (!m) return undefined;
  let start = Math.max(0, m.index - SNIPPET_LEAD);
  if (start > 0 && /[\uDC00-\uDFFF]/.test(text[start] as string)) start -= 1; // never half a surrogate pair
  const lead = start > 0 ? '…' : '';
  const budget = SNIPPET_CHARS - lead.length;
  let chars = Array.from(text.slice(start, start + (budget + 1) * 2)).slice(0, budget + 1);
  const cut = chars.length > budget || start + chars.join('').length < text.length;
  if (cut) chars = chars.slice(0, budget - 1);
  return `${lead}${chars.join('').replace(/\s+/g, ' ')}${cut ? '…' : ''}`;
}

function encodeSearchCursor(sessionId: string, seq: number): string {
  return Buffer.from(JSON.stringify([sessionId, seq])).toString('base64url');
}

function decodeSearchCursor(cursor: string): { sessionId: string; seq: number } {
  try {
    const [sessionId, seq] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof sessionId === 'string' && Number.isSafeInteger(seq)) return { sessionId, seq: seq as number };
  } catch {
    // fall through
  }
  throw new StoreError('InvalidArgument', 'invalid cursor: pass nextCursor from a previous session/search result', { path: 'cursor' });
}
