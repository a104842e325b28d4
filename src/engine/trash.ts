import { StoreError } from '../domain/errors.js';
import { parseDuration } from '../domain/retention.js';
import type { SessionStore, TrashEntry } from '../domain/types.js';

/**
 * `trash empty`: the only way (with session/delete purge) bytes leave the store. Purges, one
 * at a time by the store's own purge (crash-safe: a purge cut short is completed by the next),
 * the trashed sessions deleted more than `olderThan` ago (all of them without it).
 */
export async function emptyTrash(store: SessionStore, opts: { olderThan?: string; dryRun?: boolean }, now: number): Promise<{ dryRun: boolean; sessions: TrashEntry[] }> {
  const cutoff = opts.olderThan === undefined ? Infinity : now - parseDuration(opts.olderThan, 'olderThan');
  const selected = (await trashOf(store)).filter((e) => Date.parse(e.deletedAt) < cutoff);
  const purged: TrashEntry[] = [];
  for (const e of selected) {
    // A live session with the same id (a restore refused with Conflict "exists") is never purged with it.
    if (store.header && await store.header(e.sessionId).then(() => true, () => false)) continue;
    if (!opts.dryRun) {
      try {
        await store.delete(e.sessionId, true);
      } catch (err) {
        if (err instanceof StoreError && err.kind === 'SessionNotFound') continue; // restored or purged meanwhile
        throw err;
      }
    }
    purged.push(e);
  }
  return { dryRun: opts.dryRun ?? false, sessions: purged };
}

export async function trashOf(store: SessionStore, olderThan?: string, now = Date.now()): Promise<TrashEntry[]> {
  if (!store.listTrash) throw new StoreError('InvalidArgument', 'this store cannot list its trash', { path: 'store' });
  const all = await store.listTrash();
  if (olderThan === undefined) return all;
  const cutoff = now - parseDuration(olderThan, 'olderThan');
  return all.filter((e) => Date.parse(e.deletedAt) < cutoff);
}
