import { createPrivate, ensurePrivateDir, fsyncDir } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import { SLICE_BYTES, SYNC_EVERY, writeAll, yieldToLoop } from './slices.js';

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
    throw createFailure(fsl, layout, id, err, step);
  }
}

/**
 * createJournal for a journal that starts with many record lines (a fork's): the same steps and
 * outcomes, written in chunks of whole lines (about SLICE_BYTES each, every chunk one write call
 * that the final secret gate checks whole) with a yield to the event loop after each, fdatasynced
 * every SYNC_EVERY bytes and at the end in the thread pool (a new file written from offset 0:
 * fdatasync flushes its size and blocks; the directory fsync after the rename makes its name
 * durable). `seal` turns each plaintext line into the stored one (encryption at rest). The
 * descriptor is closed before returning: the caller opens the journal to verify it.
 */
export async function createJournalFrom(
  fsl: FsLayer, layout: StoreLayout, id: string, header: Buffer, lines: Buffer[], seal: (line: Buffer) => Buffer = (l) => l,
): Promise<void> {
  const step = { renamed: false };
  let fd: number | undefined;
  try {
    ensurePrivateDir(fsl, layout.sessionDir(id));
    const tmp = layout.journalTemp(id);
    fd = createPrivate(fsl, tmp);
    writeAll(fsl, fd, header, 0);
    let at = header.length;
    let unsynced = 0;
    for (let i = 0; i < lines.length; ) {
      const chunk: Buffer[] = [];
      let size = 0;
      for (; i < lines.length && (size === 0 || size < SLICE_BYTES); i++) {
        const stored = seal(lines[i] as Buffer);
        chunk.push(stored);
        size += stored.length;
      }
      writeAll(fsl, fd, chunk.length === 1 ? (chunk[0] as Buffer) : Buffer.concat(chunk, size), at);
      at += size;
      unsynced += size;
      if (unsynced >= SYNC_EVERY) {
        unsynced = 0;
        await fsl.fdatasync(fd);
      } else {
        await yieldToLoop();
      }
    }
    await fsl.fdatasync(fd);
    fsl.renameSync(tmp, layout.journal(id));
    step.renamed = true;
    fsyncDir(fsl, layout.sessionDir(id));
  } catch (err) {
    if (fd !== undefined) closeQuietly(fsl, fd);
    throw createFailure(fsl, layout, id, err, step);
  }
  fsl.closeSync(fd);
}

function createFailure(fsl: FsLayer, layout: StoreLayout, id: string, err: unknown, step: { renamed: boolean }): StoreError {
  if (err instanceof UnsafeFileError) return new StoreError('UnsafeStore', `store refused: ${err.reason}`, { reason: err.reason });
  const errno = errnoOf(err);
  if (step.renamed) return uncertainCreate(id, errno);
  removeIncomplete(fsl, layout, id);
  return new StoreError('NotWritten', `session not created (${errno ?? 'I/O error'}); nothing was kept`, errno ? { errno } : {});
}

function closeQuietly(fsl: FsLayer, fd: number): void {
  try {
    fsl.closeSync(fd);
  } catch {
    // nothing more can be done with it
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
