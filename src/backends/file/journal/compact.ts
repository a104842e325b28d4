import { createPrivate, ensurePrivateDir, fsyncDir } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import { offsetAfter } from './compactScan.js';
import { encodeRecordLine } from './format.js';
import type { JournalHandle } from './open.js';
import { crcOf } from './scan.js';
import { copyRange, SYNC_EVERY, writeAll } from './slices.js';


/**
 * The steps a test seam sees: 'scanned' (the journal read, the checkpoint built, nothing written
 * yet), 'copied' (the archive's temp file written and synced), 'archived'
 * (renamed into history/ and its directory synced), 'written' (the new journal's temp file
 * written and synced), 'renamed' (the commit point passed), 'synced' (the session directory synced).
 */
export type CompactionStep = 'scanned' | 'copied' | 'archived' | 'written' | 'renamed' | 'synced';

export interface CompactionPlan {
  throughSeq: number;
  ts: string;
  /**
   * The checkpoint record's JSON text, as the core built and gated it (its members: what the
   * prefix through throughSeq reduced to; the rewinds it would cut were refused there). This
   * layer never reads a record's meaning: it copies lines.
   */
  checkpointText: string;
  /**
   * The session's writer fence: an error (LeaseLost) when this process may no longer write the
   * session. Checked, with the journal's identity, right before each rename that publishes.
   */
  fence: () => StoreError | undefined;
  /**
   * Test seam, awaited after each step: a test may throw there (a crash at that step) or wait
   * (a stall: meanwhile it may replace the journal or take the lease away).
   */
  onStep?: (step: CompactionStep) => void | Promise<void>;
}

export interface CompactionResult {
  generation: number;
  checkpointSeq: number;
  archived: { generation: number; records: number; bytes: number };
}

/** The journal file a compaction started from: what must still be at its path when it publishes. */
interface Origin { dev: number; ino: number; size: number }

/**
 * Rotates a journal: (1) the whole current journal is copied to history/<id>/<gen>.jsonl
 * (temp file, fdatasync, rename, directory fsync); (2) a new journal — the same header line, a
 * checkpoint record standing for every seq up to throughSeq, then the records after throughSeq
 * byte for byte — is written to a temp file and fdatasynced; (3) it is renamed over the journal
 * and the directory fsynced.
 *
 * What is authoritative when: before (3) the old journal is, and nothing a reader uses changed
 * (stage preCommit); from the rename in (3) on the new one is (stage postCommit). Every record
 * ever acknowledged is in the active journal or an archive at every instant.
 *
 * It does not block the event loop: the reads, the copies and the parse of the prefix run in
 * slices of about 1 MiB with a yield after each (slices.ts), and both big syncs are fdatasyncs
 * in the thread pool. The caller holds the session's commit queue for the whole operation
 * (CommitQueue.exclusive), so no append of this process moves the journal meanwhile, while every
 * other session is served. A stall can still happen (a stopped process, a slow disk), and while
 * it lasts another process may take the lease (only where the kernel lock does not reach: another
 * host, no flock) or anyone may rename a file over the journal; hence the fence.
 *
 * The fence (commitFence): right before each rename that publishes something — the archive,
 * then the new journal — the lease must still be ours and the file at the journal's path must
 * still be the one this compaction copied (same dev and inode, the size it copied). The check and
 * the rename are one synchronous section (no await between them), so nothing of this process
 * runs in between, and the new holder of a lost lease must have changed its token before writing
 * anything. A failed check publishes nothing more: the temp file is removed and the answer is
 * LeaseLost or Conflict (journalChanged), stage preCommit; both fail-stop the session here.
 *
 * An archive published before a failure at the second fence (or any other failure before (3))
 * stays: it is a whole copy of the generation that was active when it was renamed in (the fence
 * said so) and that is still active now, and an archive of the active generation is never taken
 * for a finished one — history lists, and reads by generation open, only archives older than the
 * active journal's generation; verify notes it; the next compaction of that generation replaces
 * it. Removing it instead could lose records: after a lost lease the new holder owns history/
 * (an unlink could hit the archive it just renamed in), and after a replaced journal the archive
 * may be the only named copy of the replaced file's acknowledged records.
 */
export async function compactJournal(fsl: FsLayer, layout: StoreLayout, handle: JournalHandle, plan: CompactionPlan): Promise<CompactionResult> {
  const id = handle.header.sessionId;
  const { position } = handle;
  if (plan.throughSeq < handle.firstSeq || plan.throughSeq > position.lastSeq) {
    throw new StoreError('OutOfRange', `throughSeq must be between ${handle.firstSeq} and ${position.lastSeq}`, { path: 'throughSeq', min: handle.firstSeq, max: position.lastSeq });
  }
  const generation = handle.generation;
  const journal = layout.journal(id);
  let newFd: number | undefined;
  let newIno = 0;
  let tempStarted = false;
  let checkpoint: Buffer;
  let suffixAt: number;
  let archived: CompactionResult['archived'];
  try {
    const origin = originOf(fsl, handle, journal);
    const fenced = () => commitFence(fsl, journal, origin, plan.fence);
    suffixAt = offsetAfter(fsl, handle, plan.throughSeq);
    archived = { generation, records: position.lastSeq - handle.firstSeq + 1, bytes: origin.size };
    checkpoint = encodeRecordLine(plan.throughSeq, plan.ts, undefined, plan.checkpointText, handle.cipher);
    await plan.onStep?.('scanned');
    await archive(fsl, layout, handle, generation, fenced, plan.onStep);
    await plan.onStep?.('archived');
    tempStarted = true;
    newFd = await writeNewJournal(fsl, layout, handle, checkpoint, suffixAt);
    newIno = fsl.fstatSync(newFd).ino;
    await plan.onStep?.('written');
    // The commit point. No await between the fence and the rename (see above).
    fenced();
    fsl.renameSync(layout.journalTemp(id), journal);
  } catch (err) {
    if (newFd !== undefined) closeQuietly(fsl, newFd);
    if (tempStarted) removeQuietly(fsl, layout.journalTemp(id));
    throw stageError(err);
  }
  // From here on the new journal is authoritative. The handle follows it at once, so nothing
  // this process does later can go to the replaced file, whose descriptor is closed in the
  // thread pool meanwhile (its last close frees the old journal's blocks).
  const closing = closeInPool(fsl, swapInto(handle, newFd, newIno, checkpoint, suffixAt, plan.throughSeq, generation + 1));
  try {
    await plan.onStep?.('renamed');
    fsyncDir(fsl, layout.sessionDir(id));
    await plan.onStep?.('synced');
  } catch (err) {
    const errno = errnoOf(err);
    throw new StoreError('Uncertain', `compaction renamed the new journal in (it is authoritative) but failed before that was known durable (${errno ?? 'I/O error'}); the session is read-only in this process`, {
      stage: 'postCommit', ...(errno ? { errno } : {}),
    });
  } finally {
    await closing;
  }
  return { generation: generation + 1, checkpointSeq: plan.throughSeq, archived };
}

/**
 * The journal as the writer left it: its path still names our descriptor's file and that file is
 * exactly as long as the committed position. Otherwise another process wrote or replaced it.
 */
function originOf(fsl: FsLayer, handle: JournalHandle, journal: string): Origin {
  const st = fsl.fstatSync(handle.fd);
  const atPath = fsl.lstatSync(journal);
  if (st.ino !== handle.ino || st.size !== handle.position.bytes || atPath?.ino !== st.ino || atPath.dev !== st.dev) throw journalChanged();
  return { dev: st.dev, ino: st.ino, size: st.size };
}

/**
 * Checked in the same synchronous section as each publishing rename: the lease first (a lost
 * lease is LeaseLost whatever the journal looks like), then the journal's identity and size.
 */
function commitFence(fsl: FsLayer, journal: string, origin: Origin, fence: () => StoreError | undefined): void {
  const lost = fence();
  if (lost) throw new StoreError(lost.kind, lost.message, { ...lost.details, stage: 'preCommit' });
  const now = fsl.lstatSync(journal);
  if (now?.dev !== origin.dev || now.ino !== origin.ino || now.size !== origin.size) throw journalChanged();
}

/**
 * The journal changed under its writer: any later write would go over another writer's bytes or
 * to a file nobody reads, so the session stops here (as the writer's own check does, writer.ts).
 */
function journalChanged(): StoreError {
  // Conflict journalChanged stops the session's commit queue (engine/commitQueue.ts).
  return new StoreError('Conflict', 'the journal changed since the compaction started from it; nothing was compacted and the session is read-only in this process', {
    reason: 'journalChanged', stage: 'preCommit',
  });
}

/** A failure before the commit: the old journal is authoritative and unchanged. */
function stageError(err: unknown): unknown {
  if (err instanceof StoreError) return err;
  if (err instanceof UnsafeFileError) {
    // A history directory or file that is a symlink, not ours, or open to others: refused like an unsafe journal.
    return new StoreError('UnsafeStore', `compaction refused: a history path ${err.reason}; the journal is unchanged`, {
      reason: err.reason, stage: 'preCommit',
    });
  }
  const errno = errnoOf(err);
  return new StoreError('NotWritten', `compaction failed before its commit (${errno ?? 'I/O error'}); the journal is unchanged`, {
    stage: 'preCommit', ...(errno ? { errno } : {}),
  });
}

function closeQuietly(fsl: FsLayer, fd: number): void {
  try {
    fsl.closeSync(fd);
  } catch {
    // nothing more can be done with it
  }
}

async function closeInPool(fsl: FsLayer, fd: number): Promise<void> {
  try {
    await fsl.close(fd);
  } catch {
    // nothing more can be done with it
  }
}

/**
 * history/<id>/<generation>.jsonl: the whole journal, under a temp name (never read), synced,
 * then — fenced — renamed in and its directory synced. fdatasync is enough for a file this
 * process created empty and wrote from offset 0: what it leaves out is metadata no read needs
 * (timestamps); the size and the blocks are flushed (fdatasync(2)); the name is made durable
 * by the directory fsync after the rename.
 */
async function archive(
  fsl: FsLayer, layout: StoreLayout, handle: JournalHandle, generation: number, fenced: () => void, onStep: CompactionPlan['onStep'],
): Promise<void> {
  const id = handle.header.sessionId;
  ensurePrivateDir(fsl, layout.historyDir);
  ensurePrivateDir(fsl, layout.historySessionDir(id));
  const target = layout.archive(id, generation);
  const tmp = `${target}.tmp`;
  removeQuietly(fsl, tmp);
  const out = createPrivate(fsl, tmp);
  let open = true;
  try {
    await copyRange(fsl, handle.fd, 0, handle.position.bytes, out, 0, SYNC_EVERY);
    await fsl.fdatasync(out);
    await onStep?.('copied');
    open = false;
    fsl.closeSync(out);
    // Publishing: no await from the fence to the rename.
    fenced();
    fsl.renameSync(tmp, target);
  } catch (err) {
    if (open) closeQuietly(fsl, out);
    removeQuietly(fsl, tmp); // never the archive: a temp name, nothing refers to it
    throw err;
  }
  fsyncDir(fsl, layout.historySessionDir(id));
}

/** The new journal under its temp name, synced (fdatasync: a new file, as for the archive); returns its open fd. */
async function writeNewJournal(fsl: FsLayer, layout: StoreLayout, handle: JournalHandle, checkpoint: Buffer, suffixAt: number): Promise<number> {
  const tmp = layout.journalTemp(handle.header.sessionId);
  removeQuietly(fsl, tmp);
  const out = createPrivate(fsl, tmp);
  try {
    let at = await copyRange(fsl, handle.fd, 0, handle.dataStart, out, 0); // the header line, byte for byte
    writeAll(fsl, out, checkpoint, at);
    at += checkpoint.length;
    await copyRange(fsl, handle.fd, suffixAt, handle.position.bytes, out, at, SYNC_EVERY);
    await fsl.fdatasync(out);
    return out;
  } catch (err) {
    closeQuietly(fsl, out);
    throw err;
  }
}

/**
 * The handle now reads and writes the new journal; its position object is updated in place (the
 * writer shares it). Returns the replaced journal's descriptor, for the caller to close.
 */
function swapInto(handle: JournalHandle, fd: number, ino: number, checkpoint: Buffer, suffixAt: number, throughSeq: number, generation: number): number {
  const old = handle.fd;
  const suffixBytes = handle.position.bytes - suffixAt;
  const suffixRecords = handle.position.lastSeq - throughSeq;
  Object.assign(handle.position, {
    bytes: handle.dataStart + checkpoint.length + suffixBytes,
    records: 1 + suffixRecords,
    ...(suffixRecords === 0 ? { lastCrc: crcOf(checkpoint.subarray(0, checkpoint.length - 1)) } : {}),
  });
  handle.fd = fd;
  handle.ino = ino;
  handle.firstSeq = throughSeq;
  handle.generation = generation;
  return old;
}

export function removeQuietly(fsl: FsLayer, file: string): void {
  try {
    fsl.unlinkSync(file);
  } catch {
    // absent: nothing to clean
  }
}
