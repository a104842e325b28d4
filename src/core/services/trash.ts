import { StoreError } from '../../domain/errors.js';
import { parseDuration } from '../../domain/retention.js';
import type { SessionStore, TrashEntry } from '../../domain/types.js';
import { type Work, WorkInterrupted } from '../../domain/work.js';

/** Why trash empty left a selected session: a live session has its id, or another process holds its lock. */
export type TrashSkipReason = 'live' | 'open';

export interface EmptyTrashResult {
  dryRun: boolean;
  /** Removed for good (or, with dryRun, that would be). */
  sessions: TrashEntry[];
  /** Selected but left where they are, with why (never with dryRun). */
  skipped: Array<{ sessionId: string; reason: TrashSkipReason }>;
}

/**
 * `trash empty`: the only way (with session/delete purge) bytes leave the store. Purges, one
 * at a time, the trashed sessions deleted more than `olderThan` ago (all of them without it).
 * Each purge is the store's purgeTrashed: the check that no live session uses the id (a restore
 * meanwhile, or a live session under the same id) and the removal are one step under the
 * session's lock — a session restored before it is skipped ('live'), one whose lock another
 * process holds is skipped ('open'), and a restore that comes while it runs waits its turn
 * (SessionLocked). Purges a crash cut short after their commit point are finished first.
 */
export async function emptyTrash(store: SessionStore, opts: { olderThan?: string; dryRun?: boolean; work?: Work }, now: number): Promise<EmptyTrashResult> {
  const cutoff = opts.olderThan === undefined ? Infinity : now - parseDuration(opts.olderThan, 'olderThan');
  if (!opts.dryRun) await store.finishPurges?.();
  const selected = (await trashOf(store)).filter((e) => Date.parse(e.deletedAt) < cutoff);
  const result: EmptyTrashResult = { dryRun: opts.dryRun ?? false, sessions: [], skipped: [] };
  opts.work?.phase?.(opts.dryRun ? 'checking' : 'removing', selected.length, 'sessions');
  for (const e of selected) {
    // A safe point: each purge is whole (STORAGE.md, "Purge"); a rerun removes the rest.
    if (await opts.work?.shouldStop?.()) throw Object.assign(new WorkInterrupted(`${result.sessions.length} session(s) removed`), { result });
    opts.work?.step?.();
    if (opts.dryRun || !store.purgeTrashed) {
      // What it would do (or, for a store without purgeTrashed, a check apart from the purge):
      // a live session with the same id is never purged with it.
      if (store.header && await store.header(e.sessionId).then(() => true, () => false)) continue;
      if (!opts.dryRun && !await purgeWithDelete(store, e.sessionId)) continue;
      result.sessions.push(e);
      continue;
    }
    const outcome = await store.purgeTrashed(e.sessionId);
    if (outcome === 'purged') result.sessions.push(e);
    else if (outcome !== 'gone') result.skipped.push({ sessionId: e.sessionId, reason: outcome });
  }
  return result;
}

async function purgeWithDelete(store: SessionStore, sessionId: string): Promise<boolean> {
  try {
    await store.delete(sessionId, true);
    return true;
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'SessionNotFound') return false; // restored or purged meanwhile
    throw err;
  }
}

export async function trashOf(store: SessionStore, olderThan?: string, now = Date.now()): Promise<TrashEntry[]> {
  if (!store.listTrash) throw new StoreError('InvalidArgument', 'this store cannot list its trash', { path: 'store' });
  const all = await store.listTrash();
  if (olderThan === undefined) return all;
  const cutoff = now - parseDuration(olderThan, 'olderThan');
  return all.filter((e) => Date.parse(e.deletedAt) < cutoff);
}
