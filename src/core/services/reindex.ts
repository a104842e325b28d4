import { StoreError } from '../../domain/errors.js';
import type { SessionStore } from '../../domain/types.js';
import { type Work, WorkInterrupted } from '../../domain/work.js';

/**
 * Every named session's index entry written anew from its journal (`session-sidecar reindex`,
 * and after `migrate` into a directory and `rekey`): each session is opened for writing — its
 * writer lease taken, its journal verified to its end (a torn tail cut, with its evidence kept)
 * — and released, and the release writes the entry (a writer's entry is the only kind that
 * vouches for bytes: they were synced under its lease). A session a sidecar holds is skipped:
 * its writer keeps its own entry current. Damaged sessions are reported, the others go on.
 *
 * Crash-safe at every step: an entry is a cache written by rename (sessionIndex.ts); a crash
 * leaves each entry old, new or absent, all three of which the store handles (absent or stale:
 * a scan). Interrupted (`work.shouldStop`), it stops between sessions; a rerun does the rest.
 */
export interface ReindexResult {
  reindexed: number;
  skipped: Array<{ sessionId: string; reason: 'open' | 'gone' }>;
  failed: Array<{ sessionId: string; kind: string; message: string }>;
}

export async function reindexSessions(store: SessionStore, ids: readonly string[], work?: Work): Promise<ReindexResult> {
  const result: ReindexResult = { reindexed: 0, skipped: [], failed: [] };
  work?.phase?.('indexing', ids.length, 'sessions');
  for (const id of ids) {
    if (await work?.shouldStop?.()) throw Object.assign(new WorkInterrupted(`${result.reindexed} of ${ids.length} entries written`), { result });
    try {
      await store.open(id, 'write');
      await store.close(id);
      result.reindexed++;
    } catch (e) {
      if (!(e instanceof StoreError)) throw e;
      if (e.kind === 'SessionLocked') result.skipped.push({ sessionId: id, reason: 'open' });
      else if (e.kind === 'SessionNotFound') result.skipped.push({ sessionId: id, reason: 'gone' });
      else result.failed.push({ sessionId: id, kind: e.kind, message: e.message });
    }
    work?.step?.();
  }
  return result;
}
