/**
 * session/search over the store's index (SessionStore.searchCandidates; on PostgreSQL a pg_trgm
 * index, src/backends/postgres/search.ts) instead of reading every session: the index gives
 * candidate message records in (sessionId, seq) order from the cursor on, a page at a time; each
 * one goes through the scan's own match, snippet and scrub (`hitOf`), so the hits, their order
 * and the cursors are exactly the scan's (search.ts).
 *
 * When the index is not used (undefined: the scan runs instead):
 * - the query holds anything but printable ASCII, or a `"` or `\` — characters JSON text may
 *   hold escaped (`\"`, `\\`, `\n`, `\u…`), so the stored text need not contain the query as it
 *   is; non-ASCII also because case-insensitive Unicode matching is JavaScript's, not SQL's;
 * - the store has no index, or refuses (encrypted at rest; a database that is not UTF8; an
 *   instance holding ephemeral sessions, which are in no index).
 *
 * `sessionIds` as the scan takes them: each named session at or after the cursor is checked in
 * id order with the same read the scan makes, and the first one that fails (not found, in the
 * trash, an invalid id) fails the search with that read's error — once the sessions before it
 * gave their hits and the page is not full, exactly when the scan would reach it.
 */
import { PAGE_BYTES } from '../../domain/limits.js';
import type { ReadOptions, ReadPage, SearchCandidate, SessionStore } from '../../domain/types.js';

/** Candidates asked for per round trip (and at most PAGE_BYTES of their text: memory stays bounded as the scan's pages do). */
const CANDIDATE_PAGE = 200;
/** What may be searched for in the stored JSON text as it is. */
const INDEXABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

export interface Indexed {
  searchCandidates?: SessionStore['searchCandidates'];
  read(sessionId: string, opts?: ReadOptions): Promise<ReadPage>;
}

export function indexable(query: string): boolean {
  return INDEXABLE.test(query);
}

export async function searchByIndex<H extends { sessionId: string; seq: number }>(
  store: Indexed, query: string, o: { after?: { sessionId: string; seq: number }; limit: number; sessionIds?: string[] },
  hitOf: (c: SearchCandidate) => H | undefined, cursorOf: (hit: H) => string,
): Promise<{ hits: H[]; nextCursor?: string } | undefined> {
  if (!store.searchCandidates || !indexable(query)) return undefined;
  let ids: string[] | undefined;
  let failed: unknown;
  let failing = false;
  if (o.sessionIds !== undefined) {
    ids = [];
    for (const id of [...new Set(o.sessionIds)].sort()) {
      if (o.after && id < o.after.sessionId) continue;
      try {
        await store.read(id, { afterSeq: Number.MAX_SAFE_INTEGER, limit: 1, kinds: ['message'] });
      } catch (err) {
        failed = err;
        failing = true;
        break;
      }
      ids.push(id);
    }
  }
  const hits: H[] = [];
  let after = o.after;
  while (ids === undefined || ids.length > 0) {
    const page = await store.searchCandidates({
      needle: query, limit: CANDIDATE_PAGE, maxBytes: PAGE_BYTES, ...(after ? { after } : {}), ...(ids ? { sessionIds: ids } : {}),
    });
    if (page === undefined) return undefined; // nothing was returned yet: the scan starts from the same cursor
    for (const c of page.candidates) {
      const hit = hitOf(c);
      if (hit === undefined) continue;
      hits.push(hit);
      if (hits.length === o.limit) return { hits, nextCursor: cursorOf(hit) };
    }
    const last = page.candidates[page.candidates.length - 1];
    if (!page.more || !last) break;
    after = { sessionId: last.sessionId, seq: last.record.seq };
  }
  if (failing) throw failed;
  return { hits };
}
