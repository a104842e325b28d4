import { StoreError } from '../../domain/errors.js';
import { parseDuration, selectForPrune } from '../../domain/retention.js';
import type { SessionStore, SessionSummary } from '../../domain/types.js';

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

/**
 * session/prune and the CLI's prune, once for every backend: the store's durable sessions
 * (ephemeral ones are never pruned) selected by domain/retention.ts, then moved to the trash one
 * at a time by the store's own delete — so each move is exactly as crash-safe as session/delete
 * (a crash leaves every session where it was or in the trash, restorable whole: STORAGE.md), and
 * a crash between two moves leaves the rest untouched. A session open for writing anywhere (its
 * lease held, in this process or another) is never moved: skipped, reason "open". Tags come
 * from the summary when it has them, else from each aged candidate's header.
 */
export async function pruneSessions(store: SessionStore, req: PruneRequest, now: number, onMoved?: (id: string) => void): Promise<PruneResult> {
  const olderThanMs = parseDuration(req.olderThan, 'olderThan');
  const all: Array<SessionSummary & { tags?: string[] }> = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ limit: 1000, ...(cursor ? { cursor } : {}) });
    all.push(...page.sessions.filter((s) => !s.ephemeral));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const aged = all.filter((s) => Date.parse(s.updatedAt) < now - olderThanMs);
  if (req.tags && req.tags.length > 0) {
    // A summary that carries tags (the effective ones, after session/update) is authoritative;
    // otherwise they are read from the stored header.
    for (const s of aged) s.tags ??= await tagsOf(store, s.sessionId);
  }
  const selected = selectForPrune(aged, { olderThanMs, keepLast: req.keepLast, tags: req.tags }, now);
  const result: PruneResult = { dryRun: req.dryRun ?? false, sessions: [], skipped: [] };
  for (const s of selected) {
    const entry: PrunedSession = { sessionId: s.sessionId, ...(s.title !== undefined ? { title: s.title } : {}), updatedAt: s.updatedAt, bytes: s.bytes };
    if (!result.dryRun) {
      const skipped = await moveToTrash(store, s.sessionId);
      if (skipped) {
        result.skipped.push({ sessionId: s.sessionId, reason: skipped });
        continue;
      }
      onMoved?.(s.sessionId);
    }
    result.sessions.push(entry);
  }
  return result;
}

async function tagsOf(store: SessionStore, sessionId: string): Promise<string[] | undefined> {
  const header = await store.header?.(sessionId).catch(() => undefined);
  const tags = (header as { tags?: unknown } | undefined)?.tags;
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : undefined;
}

/** One session to the trash; the reason it stays where it is, if it does. */
async function moveToTrash(store: SessionStore, sessionId: string): Promise<SkipReason | undefined> {
  try {
    await store.delete(sessionId, false, { ifIdle: true });
    return undefined;
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    if (err.kind === 'SessionLocked') return 'open';
    if (err.kind === 'SessionNotFound') return 'gone'; // deleted by someone else since it was listed
    if (err.kind === 'Conflict' && err.details.reason === 'inTrash') return 'inTrash';
    throw err;
  }
}
