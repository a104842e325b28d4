import path from 'node:path';
import { ensurePrivateDir, fsyncDir } from '../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import { isSessionId } from '../../domain/ids.js';
import type { StoreLayout } from './layout.js';

/** Everything a session owns in the store, by where it lives and where it goes in the trash. */
function parts(layout: StoreLayout, id: string): Array<{ live: string; trashed: string }> {
  const trash = layout.trashSessionDir(id);
  return [
    { live: layout.sessionDir(id), trashed: path.join(trash, 'session') },
    { live: layout.historySessionDir(id), trashed: path.join(trash, 'history') },
    { live: layout.indexEntry(id), trashed: path.join(trash, 'index.json') },
    { live: layout.recoverySessionDir(id), trashed: path.join(trash, 'recovery') },
  ];
}

/**
 * Delete, restore and purge move a session by renames, one part at a time (each rename made
 * durable by fsyncing the destination directory, then the source). The session directory
 * (its journal) is the commit point: where it is, the session is. So that a crash at any step
 * leaves a state the next request completes, the other parts move *after* it on a delete and
 * *before* it on a restore: a live session always has all its parts in place, and a session in
 * the trash may have some of them still (or again) in their live places until the repeated
 * delete, the restore or the purge moves or removes them (protocol/STORAGE.md, Crash recovery).
 */
export function trashSession(fsl: FsLayer, layout: StoreLayout, id: string): void {
  outcomeOf(id, 'deleted', (moved) => trashSteps(fsl, layout, id, moved));
}

function trashSteps(fsl: FsLayer, layout: StoreLayout, id: string, moved: () => void): void {
  const trash = layout.trashSessionDir(id);
  // An empty trash/<id>/ holds no session: it is what a delete that failed (or crashed) before its
  // first rename leaves behind, and must not make the live session undeletable.
  if (fsl.lstatSync(trash) && !isEmptyDir(fsl, trash)) {
    throw new StoreError('Conflict', `a deleted session ${id} is already in the trash: restore or purge it first`, { reason: 'inTrash', sessionId: id });
  }
  ensurePrivateDir(fsl, layout.trashDir);
  ensurePrivateDir(fsl, trash);
  const [journal] = parts(layout, id);
  try {
    moveIfPresent(fsl, journal!.live, journal!.trashed, moved);
  } catch (err) {
    // Nothing was moved: the session is still live and whole. Leave no empty trash entry behind.
    if (fsl.lstatSync(journal!.live) && isEmptyDir(fsl, trash)) {
      try {
        fsl.rmdirSync(trash);
      } catch {
        // an empty trash/<id>/ is harmless: the next delete reuses it
      }
      const errno = errnoOf(err);
      throw new StoreError('NotWritten', `session ${id} not deleted (${errno ?? 'I/O error'}); nothing was moved`, { sessionId: id, ...(errno ? { errno } : {}) });
    }
    throw err;
  }
  finishTrash(fsl, layout, id);
}

/** The parts of a trashed session still in their live places (a delete or restore cut short). */
export function liveLeftovers(fsl: FsLayer, layout: StoreLayout, id: string): boolean {
  return parts(layout, id).slice(1).some((p) => fsl.lstatSync(p.live) !== undefined);
}

/** Moves the parts after the journal into the trash: a delete's last steps, or its completion after a crash. */
export function finishTrash(fsl: FsLayer, layout: StoreLayout, id: string): void {
  for (const p of parts(layout, id).slice(1)) moveIfPresent(fsl, p.live, p.trashed);
}

function isEmptyDir(fsl: FsLayer, dir: string): boolean {
  const st = fsl.lstatSync(dir);
  return st !== undefined && st.isDirectory() && fsl.readdirSync(dir).length === 0;
}

/** Restore: the other parts first, the session directory last (the commit point), then the empty trash/<id>/. */
export function restoreSession(fsl: FsLayer, layout: StoreLayout, id: string): void {
  outcomeOf(id, 'restored', (moved) => restoreSteps(fsl, layout, id, moved));
}

function restoreSteps(fsl: FsLayer, layout: StoreLayout, id: string, moved: () => void): void {
  const trash = layout.trashSessionDir(id);
  const [journal, ...rest] = parts(layout, id);
  const refused = restoreRefusal(fsl, layout, id);
  if (refused) throw refused;
  for (const p of rest) moveIfPresent(fsl, p.trashed, p.live);
  moveIfPresent(fsl, journal!.trashed, journal!.live, moved);
  removeTree(fsl, trash);
  fsyncDir(fsl, layout.trashDir);
}

/** Why a restore cannot be done: nothing in the trash, or a live session under the id. */
export function restoreRefusal(fsl: FsLayer, layout: StoreLayout, id: string): StoreError | undefined {
  if (!fsl.lstatSync(parts(layout, id)[0]!.trashed)) return new StoreError('SessionNotFound', `no deleted session ${id} in the trash`, { sessionId: id });
  if (fsl.lstatSync(layout.sessionDir(id))) {
    return new StoreError('Conflict', `session ${id} exists again: delete it before restoring the old one`, { reason: 'exists', sessionId: id });
  }
  return undefined;
}

/**
 * Removes a session (live or trashed) for good: a live one is first moved to the trash (a
 * delete: from then on it is not live), then trash/<id>/ is renamed to trash/.purging-<id>
 * (the commit point: from then on it is gone; ids never start with a dot) and that tree is
 * removed. The caller holds the session's lease (purge.ts): what it checked before calling
 * (no live session with this id, for trash empty) still holds when this runs. A tree a crash
 * left under that name is removed by the next purge of any session (purge.ts finishPurges).
 */
export function purgeSession(fsl: FsLayer, layout: StoreLayout, id: string): void {
  outcomeOf(id, 'purged', (moved) => {
    finishPurging(fsl, layout, id); // an earlier purge of this id cut short past its commit point
    if (fsl.lstatSync(layout.journal(id))) {
      dropTrashed(fsl, layout, id, () => undefined); // an older deleted copy under the same id (restore said "exists")
      trashSteps(fsl, layout, id, moved);
    } else {
      finishTrash(fsl, layout, id);
    }
    dropTrashed(fsl, layout, id, moved);
  });
}

/**
 * Outcome of a failed step (STORAGE.md, Outcomes): before the session directory (or trash/<id>/
 * for a purge) was renamed, the session is where it was: NotWritten (moves of the other parts
 * before it are completed or undone by the repeated request). From that rename on the change
 * is visible but not known durable: Uncertain; the repeated request completes it.
 */
function outcomeOf(id: string, what: string, run: (moved: () => void) => void): void {
  let committed = false;
  try {
    run(() => { committed = true; });
  } catch (err) {
    if (err instanceof StoreError) throw err;
    // A planted symlink or FIFO (trash/ pointing outside the store): refused before anything moved.
    if (err instanceof UnsafeFileError && !committed) {
      throw new StoreError('UnsafeStore', `session ${id} not ${what}: ${err.path} ${err.reason}`, { sessionId: id, reason: err.reason });
    }
    const errno = errnoOf(err);
    const data = { sessionId: id, ...(errno ? { errno } : {}) };
    if (committed) throw new StoreError('Uncertain', `session ${id} may or may not be ${what} (${errno ?? 'I/O error'}); repeat the request to complete it`, data);
    throw new StoreError('NotWritten', `session ${id} not ${what} (${errno ?? 'I/O error'}); repeat the request`, data);
  }
}

function dropTrashed(fsl: FsLayer, layout: StoreLayout, id: string, moved: () => void): void {
  const trash = layout.trashSessionDir(id);
  if (!fsl.lstatSync(trash)) return;
  const doomed = path.join(layout.trashDir, `.purging-${id}`);
  removeTree(fsl, doomed);
  fsl.renameSync(trash, doomed);
  moved();
  fsyncDir(fsl, layout.trashDir);
  removeTree(fsl, doomed);
  fsyncDir(fsl, layout.trashDir);
}

/** The ids whose purge a crash cut short after its commit point: trash/.purging-<id>/ is still there. */
export function purgingLeftovers(fsl: FsLayer, layout: StoreLayout): string[] {
  if (!fsl.lstatSync(layout.trashDir)?.isDirectory()) return [];
  return fsl.readdirSync(layout.trashDir).filter((n) => n.startsWith(PURGING)).map((n) => n.slice(PURGING.length)).filter(isSessionId).sort();
}

/**
 * Finishes a purge past its commit point: removes trash/.purging-<id>/ (already gone for every
 * reader) and fsyncs trash/. The caller holds the session's lease, so no other purge of the id
 * removes the same tree meanwhile. A crash here leaves less of the same leftover: repeated.
 */
export function finishPurging(fsl: FsLayer, layout: StoreLayout, id: string): void {
  const doomed = path.join(layout.trashDir, `${PURGING}${id}`);
  if (!fsl.lstatSync(doomed)) return;
  removeTree(fsl, doomed);
  fsyncDir(fsl, layout.trashDir);
}

const PURGING = '.purging-';


function moveIfPresent(fsl: FsLayer, from: string, to: string, moved?: () => void): void {
  if (!fsl.lstatSync(from)) return;
  ensurePrivateDir(fsl, path.dirname(to));
  fsl.renameSync(from, to);
  moved?.();
  // The destination first: a crash between the two syncs leaves the part where it went.
  fsyncDir(fsl, path.dirname(to));
  fsyncDir(fsl, path.dirname(from));
}

function removeTree(fsl: FsLayer, target: string): void {
  const st = fsl.lstatSync(target);
  if (!st) return;
  try {
    if (st.isDirectory()) for (const name of fsl.readdirSync(target)) removeTree(fsl, path.join(target, name));
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
    return; // removed meanwhile
  }
  try {
    if (st.isDirectory()) fsl.rmdirSync(target);
    else fsl.unlinkSync(target);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
}
