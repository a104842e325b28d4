import { StoreError } from '../../domain/errors.js';
import type { ReadOptions, ReadPage, StoredRecord } from '../../domain/types.js';

/** Records per page a watch reads (the journal or an archive). */
export const WATCH_PAGE = 1000;

/** One page of the session after a seq: of the active journal, or of an archived generation. */
export type PageRead = (opts: ReadOptions) => Promise<ReadPage>;

/** A watch's position: the last seq it handed on. Only `handOn` moves it, by the records it gives. */
export interface Cursor {
  seq: number;
}

/** Hands records on (seqs cursor.seq + 1, +2, ...), moving the cursor; false: the watch ended. */
export type HandOn = (records: StoredRecord[]) => Promise<boolean>;

/**
 * The records a compaction archived before a watch handed them on: everything after the cursor
 * up to the active journal's checkpoint `head`, read from the archived generations before the
 * active one, oldest first, by seq. Returns false when `handOn` ended the watch.
 *
 * Invariants it stands on (STORAGE.md "Following a session across compactions"):
 * - archive g holds seqs F_g..L_g (F_g: the seq of its checkpoint, the first line; 1 for g = 0)
 *   and L_g >= F_{g+1}: a compaction archives the whole journal it replaces, so every record a
 *   checkpoint stands for is in an archive, each generation overlapping the next;
 * - an archive before the active generation never changes: it was made durable under its name
 *   before the journal that follows it was renamed in, so a reader that saw the journal finds
 *   it complete (never "not there yet") and reads the same bytes however often it reads it;
 * - the first archive to read is the newest whose first seq is at most cursor + 1: walking back
 *   from the active generation while an archive's first line is a checkpoint above the cursor;
 * - a checkpoint that is a session's first record but stands for no archive of its own (a fork
 *   of a compacted session starts at a copy of its parent's: generation 0 on a directory store,
 *   the parent's number on PostgreSQL, which has no such archive) is the session's origin: no
 *   record of the session precedes it, so the cursor moves to its seq with nothing to hand on;
 * - every page handed on starts at cursor + 1, and seqs grow by one within a page: nothing is
 *   skipped, nothing repeated. An archive that is gone or unreadable, one that starts above the
 *   cursor, or archives that end before `head` are an error (`Corrupt`, `reason: archiveMissing`,
 *   or the read's own error) — never a skip.
 */
export async function handOnArchived(read: PageRead, sessionId: string, cursor: Cursor, head: StoredRecord, handOn: HandOn): Promise<boolean> {
  const start = await firstArchive(read, sessionId, cursor, head);
  if (start === undefined) return true; // an origin: the cursor is at it
  let { generation, page } = start;
  for (;;) {
    const first = page.records[0];
    if (first !== undefined) {
      // Past the first archive the cursor is at or beyond each archive's checkpoint, which a read
      // after it never returns: a checkpoint here, or any other seq, is a hole in the archives.
      if (first.kind === 'checkpoint' || first.seq !== cursor.seq + 1) throw missing(sessionId, cursor.seq, generation);
      if (!(await handOn(page.records))) return false;
    }
    if (cursor.seq >= head.seq) return true; // the rest is in the active journal too
    if (page.nextAfterSeq === null) {
      generation += 1;
      if (generation >= activeGeneration(head)) break;
    } else if (first === undefined) {
      throw missing(sessionId, cursor.seq, generation); // more to read but nothing read: no progress
    }
    page = await readArchive(read, sessionId, generation, cursor.seq);
  }
  throw missing(sessionId, cursor.seq, generation - 1); // the archives end before the checkpoint
}

/**
 * Where the archived records after the cursor start: the newest archive whose first seq is at
 * most cursor + 1, with its first page — or undefined when `head` (or an archive's first line)
 * is the session's origin, the cursor then moved to it. An archive that is gone is walked past:
 * the records before it are still delivered, and the error comes when the walk reaches it (or
 * here, at once, when the cursor is inside it). Also run when a watch starts, so that a
 * subscription whose first records cannot be read is refused with the error instead.
 */
export async function firstArchive(
  read: PageRead, sessionId: string, cursor: Cursor, head: StoredRecord,
): Promise<{ generation: number; page: ReadPage } | undefined> {
  const active = activeGeneration(head);
  if (active === 0) {
    cursor.seq = head.seq; // the session's first record: nothing of it is archived
    return undefined;
  }
  let gone: StoreError | undefined;
  for (let generation = active - 1; generation >= 0; generation--) {
    let page: ReadPage;
    try {
      page = await readArchive(read, sessionId, generation, cursor.seq);
    } catch (err) {
      // The session's active generation is below the one its checkpoint names: the checkpoint
      // was copied in by a fork (PostgreSQL keeps its parent's number), the session's origin.
      // The core refuses a generation past the current one (OutOfRange); a backend one it does
      // not hold (InvalidArgument).
      if (generation === active - 1 && err instanceof StoreError && (err.kind === 'OutOfRange' || err.kind === 'InvalidArgument')) {
        cursor.seq = head.seq;
        return undefined;
      }
      if (generation > 0 && isMissing(err)) {
        gone ??= err;
        continue;
      }
      throw err;
    }
    const first = page.records[0];
    if (first === undefined && gone) throw gone; // this archive ends at the cursor: the one gone was needed
    if (first?.kind !== 'checkpoint' || first.seq <= cursor.seq) return { generation, page };
    if (generation === 0) {
      // Generation 0 starting at a checkpoint: a fork's origin, compacted since. Nothing precedes it.
      cursor.seq = first.seq;
      return { generation, page: await readArchive(read, sessionId, generation, cursor.seq) };
    }
  }
  throw gone ?? missing(sessionId, cursor.seq, 0);
}

/** The generation the journal starting with checkpoint `head` is: the one its checkpoint names. */
function activeGeneration(head: StoredRecord): number {
  const g = (head as { generation?: unknown }).generation;
  return typeof g === 'number' && Number.isSafeInteger(g) && g > 0 ? g : 0;
}

/**
 * A page of archive `generation` after `afterSeq`. A read that fails because the archive is gone
 * while the session is still there is `Corrupt` (`archiveMissing`); the session's own errors
 * (deleted, damaged, unreachable) are passed on as they are.
 */
async function readArchive(read: PageRead, sessionId: string, generation: number, afterSeq: number): Promise<ReadPage> {
  try {
    return await read({ generation, afterSeq, limit: WATCH_PAGE });
  } catch (err) {
    if (err instanceof StoreError && err.kind !== 'SessionNotFound') throw err;
    await read({ afterSeq, limit: 1 }); // throws when the session itself is gone
    throw missing(sessionId, afterSeq, generation);
  }
}

function isMissing(err: unknown): err is StoreError {
  return err instanceof StoreError && err.kind === 'Corrupt' && err.details.reason === 'archiveMissing';
}

function missing(sessionId: string, afterSeq: number, generation: number): StoreError {
  return new StoreError('Corrupt', `session ${sessionId}: the records after seq ${afterSeq} cannot be read: archived generation ${generation} is missing or incomplete`, {
    sessionId, seq: afterSeq + 1, generation, reason: 'archiveMissing',
  });
}

/** The active journal does not go on right after the cursor (it never should: reads check seqs). */
export function hole(sessionId: string, afterSeq: number): StoreError {
  return new StoreError('Corrupt', `session ${sessionId}: the journal does not go on after seq ${afterSeq}`, { sessionId, seq: afterSeq + 1, reason: 'seqGap' });
}
