import { createPrivate, ensurePrivateDir, fsyncDir } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';

/**
 * Creates a session's journal holding its header line and returns the open fd.
 * Crash reasoning: the journal is complete and synced under a temporary name before it is
 * renamed into place and the directory synced, so after a crash a session either exists
 * whole or not at all (a leftover .tmp is never read).
 * Outcomes (STORAGE.md, Outcomes): any failure before the rename is NotWritten (the temporary
 * file is removed; it is never read anyway). Once the rename has happened the session may exist
 * after a crash whatever we do next — unlinking it without a durable directory would not make
 * "nothing was kept" true — so a failure from there on is Uncertain, naming the session id.
 */
export function createJournal(fsl: FsLayer, layout: StoreLayout, id: string, header: Buffer): number {
  const step = { renamed: false };
  try {
    return writeNewJournal(fsl, layout, id, header, step);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `store refused: ${err.reason}`, { reason: err.reason });
    const errno = errnoOf(err);
    if (step.renamed) throw uncertainCreate(id, errno);
    removeIncomplete(fsl, layout, id);
    throw new StoreError('NotWritten', `session not created (${errno ?? 'I/O error'}); nothing was kept`, errno ? { errno } : {});
  }
}

/** A create that failed after its rename: the session may or may not exist after a crash. */
export function uncertainCreate(id: string, errno: string | undefined): StoreError {
  return new StoreError('Uncertain', `session ${id} may or may not have been created (${errno ?? 'I/O error'}); it is read-only in this process`, {
    sessionId: id, ...(errno ? { errno } : {}),
  });
}

function writeNewJournal(fsl: FsLayer, layout: StoreLayout, id: string, line: Buffer, step: { renamed: boolean }): number {
  ensurePrivateDir(fsl, layout.sessionDir(id));
  const tmp = layout.journalTemp(id);
  const fd = createPrivate(fsl, tmp);
  try {
    for (let done = 0; done < line.length; ) done += fsl.writeSync(fd, line, done, line.length - done, done);
    fsl.fsyncSync(fd);
    fsl.renameSync(tmp, layout.journal(id));
    step.renamed = true;
    fsyncDir(fsl, layout.sessionDir(id));
    return fd;
  } catch (err) {
    fsl.closeSync(fd);
    throw err;
  }
}

/** Best effort: an incomplete create leaves nothing a reader would take for a session. */
function removeIncomplete(fsl: FsLayer, layout: StoreLayout, id: string): void {
  try {
    fsl.unlinkSync(layout.journalTemp(id));
  } catch {
    // absent, or the disk refuses: a journal.jsonl.tmp is never read anyway
  }
  try {
    fsl.rmdirSync(layout.sessionDir(id));
  } catch {
    // absent or not empty: a session directory without journal.jsonl holds no session
  }
}
