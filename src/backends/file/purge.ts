import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import type { StoreLayout } from './layout.js';
import type { SessionLease } from './leases.js';
import { finishPurging, liveLeftovers, purgingLeftovers } from './lineage.js';

/**
 * Purges under the session's lock (protocol/STORAGE.md, "Purge" and "Trash empty").
 *
 * A purge decides from what it sees (is a live session using this id? is it in the trash?) and
 * then removes. Between the two, another process could restore the session and append to it;
 * a purge that acted on its stale answer would remove acknowledged records. So the check and
 * the removal are one step under the session's writer lease — its kernel lock on this machine
 * (flock, held for as long as this process lives: a stall of any length keeps it) and its lease
 * directory elsewhere. Restore, delete and every writer take the same lease, so while a purge
 * holds it nothing can make its check untrue; a purge that finds it held skips the session.
 *
 * Crash reasoning: the lock is a process's, never on disk — a crash drops it (the lease
 * directory it leaves is taken over at once by the next holder on this host, leases.ts). The
 * purge's own steps and commit point are lineage.ts's (rename of trash/<id>/ to
 * trash/.purging-<id>/), unchanged: a crash before the rename leaves the session in the trash,
 * whole; after it the session is gone and the leftover tree is removed by finishPurges, also
 * under the id's lock. Once the id has nothing left in the store, the lock file itself is
 * removed while still held (SessionLease.release removeKernelLock).
 */
export interface PurgeContext {
  fsl: FsLayer;
  layout: StoreLayout;
  /** The session's writer lease (undefined: a store without leases, the only writer of its root). */
  lease(id: string): Promise<SessionLease | undefined>;
  /** Test seam: called after the check, before the removal, with the lock held. */
  checked?: (sessionId: string) => void | Promise<void>;
}

/**
 * Finishes every purge a crash cut short after its commit point (trash/.purging-<id>/ left),
 * each under its id's lock; one whose lock is held, or that cannot be removed now, is left for
 * a later purge (its holder may be finishing it; every reader already ignores it). `holding`: an id whose lock the caller takes itself next (its leftover is
 * removed by that purge). Returns the ids finished.
 */
export async function finishPurges(ctx: PurgeContext, holding?: string): Promise<string[]> {
  const done: string[] = [];
  for (const id of purgingLeftovers(ctx.fsl, ctx.layout)) {
    if (id === holding) continue;
    const lease = await leaseOrSkip(ctx, id).catch(() => 'open' as const); // an id no lease can name: left alone
    if (lease === 'open') continue;
    try {
      finishPurging(ctx.fsl, ctx.layout, id);
      done.push(id);
    } catch {
      // best effort: that session is gone already; its leftover is tried again by the next purge
    } finally {
      await lease?.release({ removeKernelLock: nothingLeft(ctx.fsl, ctx.layout, id) });
    }
  }
  return done;
}

async function leaseOrSkip(ctx: PurgeContext, id: string): Promise<SessionLease | undefined | 'open'> {
  try {
    return await ctx.lease(id);
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'SessionLocked') return 'open';
    throw err;
  }
}

/** Nothing of the id is left in the store (so its lock file may go). */
export function nothingLeft(fsl: FsLayer, layout: StoreLayout, id: string): boolean {
  return !fsl.lstatSync(layout.sessionDir(id)) && !fsl.lstatSync(layout.trashSessionDir(id)) && !liveLeftovers(fsl, layout, id);
}
