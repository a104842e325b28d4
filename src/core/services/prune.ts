import { StoreError } from '../../domain/errors.js';
import { parseDuration, selectForPrune } from '../../domain/retention.js';
import type { SessionStore, SessionSummary } from '../../domain/types.js';
import { type Work, WorkInterrupted } from '../../domain/work.js';

export interface PruneRequest {
  olderThan: string;
  keepLast?: number;
  tags?: readonly string[];
  dryRun?: boolean;
}

export interface PrunedSession {
  sessionId: string;
  title?: string;
  updatedAt: string;
  bytes?: number;
}

export type SkipReason = 'open' | 'gone' | 'inTrash';

export interface PruneResult {
  dryRun: boolean;
  /** Moved to the trash (or, with dryRun, that would be), most recently updated first. */
  sessions: PrunedSession[];
  /** Selected but left where they are, with why. */
  skipped: Array<{ sessionId: string; reason: SkipReason }>;
}

/** Sessions listed per page: what prune holds in memory at once (besides its result). */
const PAGE = 500;

/**
 * session/prune and the CLI's prune, once for every backend: the store's durable sessions
 * (ephemeral ones are never pruned) selected by domain/retention.ts, then moved to the trash one
 * at a time by the store's own delete — so each move is exactly as crash-safe as session/delete
 * (a crash leaves every session where it was or in the trash, restorable whole: STORAGE.md), and
 * a crash between two moves leaves the rest untouched. A session open for writing anywhere (its
 * lease held, in this process or another) is never moved: skipped, reason "open". A dry run
 * makes each move's checks without the move (delete's dryRun), so it reports what the real prune
 * would do now: the same sessions, the same skips with the same reasons. Tags come
 * from the summary when it has them, else from each aged candidate's header.
 *
 * In pages, memory bounded by one page: session/list's order (updatedAt, then id, newest
 * first) is selectForPrune's, so the sessions are taken as the list gives them, page after
 * page, each aged one with the tags asked for counted, the first `keepLast` of those kept and
 * every later one moved before the next page is read (the event loop runs between pages). The
 * list's keyset cursor goes on after the last session seen, so moves behind it change nothing
 * ahead. The result is the one selecting everything first gave (selectForPrune), in its order.
 */
export async function pruneSessions(
  store: SessionStore, req: PruneRequest, now: number, onMoved?: (id: string) => void, o: { pageSize?: number; work?: Work } = {},
): Promise<PruneResult> {
  const olderThanMs = parseDuration(req.olderThan, 'olderThan');
  const selection = { olderThanMs, tags: req.tags };
  const result: PruneResult = { dryRun: req.dryRun ?? false, sessions: [], skipped: [] };
  let matching = 0;
  let cursor: string | undefined;
  // The total is not known before the last page: the progress counts the sessions looked at.
  o.work?.phase?.(result.dryRun ? 'checking' : 'moving', 0, 'sessions looked at');
  do {
    const page = await store.list({ limit: o.pageSize ?? PAGE, ...(cursor ? { cursor } : {}) });
    for (const s of page.sessions as Array<SessionSummary & { tags?: string[] }>) {
      // A safe point: every session so far is moved (or skipped) whole; a rerun finds the rest.
      if (await o.work?.shouldStop?.()) throw Object.assign(new WorkInterrupted(`${result.sessions.length} session(s) moved`), { result });
      o.work?.step?.();
      if (s.ephemeral || Date.parse(s.updatedAt) >= now - olderThanMs) continue;
      // A summary that carries tags (the effective ones, after session/update) is authoritative;
      // otherwise they are read from the stored header.
      if (req.tags && req.tags.length > 0) s.tags ??= await tagsOf(store, s.sessionId);
      if (selectForPrune([s], selection, now).length === 0) continue;
      if (++matching <= (req.keepLast ?? 0)) continue;
      const entry: PrunedSession = { sessionId: s.sessionId, ...(s.title !== undefined ? { title: s.title } : {}), updatedAt: s.updatedAt, bytes: s.bytes };
      // A dry run makes the move's every check (the lease taken and given back at once) and
      // moves nothing: it skips what the real prune would skip, for the same reason.
      const skipped = await moveToTrash(store, s.sessionId, result.dryRun);
      if (skipped) {
        result.skipped.push({ sessionId: s.sessionId, reason: skipped });
        continue;
      }
      if (!result.dryRun) onMoved?.(s.sessionId);
      result.sessions.push(entry);
    }
    cursor = page.nextCursor;
    if (cursor !== undefined) await new Promise<void>((resolve) => setImmediate(resolve));
  } while (cursor !== undefined);
  return result;
}

async function tagsOf(store: SessionStore, sessionId: string): Promise<string[] | undefined> {
  const header = await store.header?.(sessionId).catch(() => undefined);
  const tags = (header as { tags?: unknown } | undefined)?.tags;
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : undefined;
}

/** One session to the trash (dryRun: only its checks); the reason it stays where it is, if it does. */
async function moveToTrash(store: SessionStore, sessionId: string, dryRun: boolean): Promise<SkipReason | undefined> {
  try {
    await store.delete(sessionId, false, { ifIdle: true, ...(dryRun ? { dryRun } : {}) });
    return undefined;
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    if (err.kind === 'SessionLocked') return 'open';
    if (err.kind === 'SessionNotFound') return 'gone'; // deleted by someone else since it was listed
    if (err.kind === 'Conflict' && err.details.reason === 'inTrash') return 'inTrash';
    throw err;
  }
}
