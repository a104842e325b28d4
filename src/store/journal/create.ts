import { createPrivate, ensurePrivateDir, fsyncDir } from '../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../errors.js';
import type { StoreLayout } from '../layout.js';

/**
 * Creates a session's journal holding its header line and returns the open fd.
 * Crash reasoning: the journal is complete and synced under a temporary name before it is
 * renamed into place and the directory synced, so after a crash a session either exists
 * whole or not at all (a leftover .tmp is never read).
 */
export function createJournal(fsl: FsLayer, layout: StoreLayout, id: string, header: Buffer): number {
  try {
    return writeNewJournal(fsl, layout, id, header);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `store refused: ${err.reason}`, { reason: err.reason });
    removeIncomplete(fsl, layout, id);
    const errno = errnoOf(err);
    throw new StoreError('NotWritten', `session not created (${errno ?? 'I/O error'}); nothing was kept`, errno ? { errno } : {});
  }
}

function writeNewJournal(fsl: FsLayer, layout: StoreLayout, id: string, line: Buffer): number {
  ensurePrivateDir(fsl, layout.sessionDir(id));
  const tmp = layout.journalTemp(id);
  const fd = createPrivate(fsl, tmp);
  try {
    for (let done = 0; done < line.length; ) done += fsl.writeSync(fd, line, done, line.length - done, done);
    fsl.fsyncSync(fd);
    fsl.renameSync(tmp, layout.journal(id));
    fsyncDir(fsl, layout.sessionDir(id));
    return fd;
  } catch (err) {
    fsl.closeSync(fd);
    throw err;
  }
}

/** Best effort: an incomplete create leaves nothing a reader would take for a session. */
function removeIncomplete(fsl: FsLayer, layout: StoreLayout, id: string): void {
  for (const file of [layout.journalTemp(id), layout.journal(id)]) {
    try {
      fsl.unlinkSync(file);
    } catch {
      // absent, or the disk refuses: a journal.jsonl.tmp is never read anyway
    }
  }
}
