import { openPrivate } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import { type IndexEntry, positionOf } from '../sessionIndex.js';
import { baseState } from '../../../domain/sessionUpdate.js';
import { summarizeRecord } from '../../../domain/summary.js';
import type { SessionHeader } from '../../../domain/types.js';
import type { JournalCipher } from './cipher.js';
import { keepTornTail } from './evidence.js';
import { firstRecord, headOf, sameGeneration, vouchesForPrefix } from './identity.js';
import { corrupt, crcOf, type JournalPosition, readHeader, type ScanResult, scanRecords, scanRecordsInSlices } from './scan.js';

/** An open journal, verified up to `position`. */
export interface JournalHandle {
  fd: number;
  ino: number;
  /** The checksum of the header line (with generation and firstSeq: the head index entries record, identity.ts). */
  headerCrc: string;
  /** The header line as created (never rewritten); position.header holds the updates' effect. */
  header: SessionHeader;
  /** Offset of the first record line. */
  dataStart: number;
  /** Seq of the first record line: 1, or a checkpoint's seq after a compaction. */
  firstSeq: number;
  /** 0, or the generation of the checkpoint that starts the journal. */
  generation: number;
  position: JournalPosition;
  firstMessage?: string;
  lastMessage?: string;
  recovered?: { bytes: number; evidence: string };
  /** The key and session id its lines are sealed with (encryption at rest); absent: plaintext. */
  cipher?: JournalCipher;
}

export interface OpenJournalOptions {
  writable: boolean;
  /** Another file of the session (an archived generation) instead of its journal. */
  file?: string;
  /** The index entry, trusted only if the journal still matches it. */
  hint?: IndexEntry;
}

/**
 * Opens a journal and finds where its verified records end without reading all of it when
 * the index still describes it (open stays flat in the journal's size). Only a writable open
 * repairs a torn tail: its bytes are first kept durably under recovery/, then cut off.
 * A read-only open treats a torn tail as the end of the log and changes nothing.
 */
export function openJournal(fsl: FsLayer, layout: StoreLayout, id: string, opts: OpenJournalOptions): JournalHandle {
  const fd = openJournalFile(fsl, layout, id, opts.writable, opts.file);
  try {
    return verifyJournal(fsl, layout, id, fd, opts);
  } catch (err) {
    fsl.closeSync(fd);
    throw openError(id, err);
  }
}

/**
 * A writable open of a journal this process has just written whole (a fork's), without an index
 * entry: the same verification as openJournal, its scan of every line in slices that yield to
 * the event loop (scanRecordsInSlices), so a big fork does not stall the sidecar. Nobody else
 * writes the journal meanwhile: the caller holds its lease.
 */
export async function openJournalInSlices(fsl: FsLayer, layout: StoreLayout, id: string): Promise<JournalHandle> {
  const opts: OpenJournalOptions = { writable: true };
  const fd = openJournalFile(fsl, layout, id, true);
  try {
    const { handle, size } = verifyStart(fsl, id, fd, opts);
    if (handle.position.bytes === size) return verifyEnd(fsl, layout, id, fd, handle, undefined, opts);
    const scan = await scanRecordsInSlices(fsl, fd, handle.position, size, (rec) => noteSummary(handle, rec), baseState(handle.header), handle.cipher);
    return verifyEnd(fsl, layout, id, fd, handle, scan, opts);
  } catch (err) {
    fsl.closeSync(fd);
    throw openError(id, err);
  }
}

function openError(id: string, err: unknown): unknown {
  if (err instanceof UnsafeFileError) {
    // The torn tail's evidence could not be kept safely (recovery/<id> or the evidence name is
    // a symlink, a FIFO, not ours): the journal was not cut.
    return new StoreError('UnsafeStore', `recovery of session ${id} refused: a recovery path ${err.reason}; the journal is unchanged`, { sessionId: id, reason: err.reason });
  }
  return err;
}

function openJournalFile(fsl: FsLayer, layout: StoreLayout, id: string, writable: boolean, file = layout.journal(id)): number {
  if (fsl.lstatSync(layout.sessionDir(id))?.isSymbolicLink()) {
    throw new StoreError('UnsafeStore', `session directory of ${id} refused: it is a symbolic link`, { sessionId: id, reason: 'is a symbolic link' });
  }
  try {
    return openPrivate(fsl, file, writable);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') throw new StoreError('SessionNotFound', `session ${id} not found`, { sessionId: id });
    if (err instanceof UnsafeFileError) {
      throw new StoreError('UnsafeStore', `journal of session ${id} refused: it ${err.reason}`, { sessionId: id, reason: err.reason });
    }
    throw err;
  }
}

function verifyJournal(fsl: FsLayer, layout: StoreLayout, id: string, fd: number, opts: OpenJournalOptions): JournalHandle {
  const { handle, size } = verifyStart(fsl, id, fd, opts);
  if (handle.position.bytes === size) return verifyEnd(fsl, layout, id, fd, handle, undefined, opts);
  const scan = scanRecords(fsl, fd, handle.position, size, (rec) => noteSummary(handle, rec), baseState(handle.header), handle.cipher);
  return verifyEnd(fsl, layout, id, fd, handle, scan, opts);
}

/** The header, the first record line and the index entry (if it still vouches for a prefix): the handle before its scan. */
function verifyStart(fsl: FsLayer, id: string, fd: number, opts: OpenJournalOptions): { handle: JournalHandle; size: number } {
  const st = fsl.fstatSync(fd);
  const { header, line, cipher } = readHeader(fsl, fd, st.size);
  if (header.sessionId !== id) throw corrupt(1, 'header names another session');
  const origin: JournalPosition = { bytes: line.end, lastSeq: 0, records: 0, lastCrc: crcOf(line.bytes) };
  const headerCrc = crcOf(line.bytes);
  const first = firstRecord(fsl, fd, line.end, st.size, cipher);
  const head = headOf(headerCrc, first.generation, first.firstSeq);
  const hint = opts.hint && vouchesForPrefix(fsl, fd, { head, ino: st.ino, size: st.size, dataStart: line.end }, opts.hint) ? opts.hint : undefined;
  const handle: JournalHandle = {
    fd,
    ino: st.ino,
    headerCrc,
    header: headerOf(header),
    dataStart: line.end,
    // Always from the journal itself (one line): an index entry written before a compaction
    // can still match a later journal — same inode number reused, same header — and would
    // otherwise set firstSeq and generation of a journal that no longer starts that way.
    ...first,
    position: hint ? positionOf(hint) : origin,
    firstMessage: hint?.firstMessage,
    lastMessage: hint?.lastMessage,
    ...(cipher ? { cipher } : {}),
  };
  return { handle, size: st.size };
}

/** After the scan (none when the index vouched for the whole file): a torn tail cut (writable), or the journal synced. */
function verifyEnd(fsl: FsLayer, layout: StoreLayout, id: string, fd: number, handle: JournalHandle, scan: ScanResult | undefined, opts: OpenJournalOptions): JournalHandle {
  if (scan === undefined) {
    // Even an entry that covers the whole file may vouch for bytes nobody synced (one written by
    // a reader of an older version, after a writer was killed before its fdatasync): a write open
    // makes them durable before it reports them or rewrites the entry (STORAGE.md, The index).
    if (opts.writable) fsl.fsyncSync(fd);
    return handle;
  }
  handle.position = scan.position;
  if (scan.tail && opts.hint && sameGeneration(opts.hint, headOf(handle.headerCrc, handle.generation, handle.firstSeq), handle.ino) && scan.tail.offset < opts.hint.bytes) {
    // The index vouches only for bytes known durable (written and synced by the writer, or synced
    // by a write open, before it wrote the entry): damage there is corruption, never a torn tail.
    throw corrupt(scan.position.records + 2, `${scan.tail.reason} in bytes the index records as committed`);
  }
  if (scan.tail && opts.writable) handle.recovered = cutTornTail(fsl, layout, id, fd, scan.tail.offset, scan.tail.bytes);
  // Lines a killed writer left in the page cache may never have been synced: make them durable
  // before this process reports them or lets the index vouch for them.
  else if (opts.writable) fsl.fsyncSync(fd);
  return handle;
}

/**
 * Catches a read-only handle up with records another writer committed since it was opened.
 * Only complete batches are taken; a partial one at the end may still be being written.
 */
export function catchUp(fsl: FsLayer, handle: JournalHandle): void {
  const size = fsl.fstatSync(handle.fd).size;
  if (size <= handle.position.bytes) return;
  handle.position = scanRecords(fsl, handle.fd, handle.position, size, (rec) => noteSummary(handle, rec), baseState(handle.header), handle.cipher).position;
}

function noteSummary(handle: JournalHandle, record: Record<string, unknown>): void {
  const summary = summarizeRecord(record);
  if (summary === undefined) return;
  handle.firstMessage ??= summary;
  handle.lastMessage = summary;
}

function headerOf(h: Record<string, unknown>): SessionHeader {
  const header: SessionHeader = { sessionId: String(h.sessionId), createdAt: String(h.createdAt) };
  for (const key of ['parent', 'turns', 'cwd', 'title', 'systemPrompt', 'llm', 'metadata', 'tags', 'secretEnv', 'keepScratch', 'blobThreshold', 'idempotency'] as const) {
    if (h[key] !== undefined) (header as unknown as Record<string, unknown>)[key] = h[key];
  }
  return header;
}

/**
 * Crash reasoning: the tail was never acknowledged (an append answers only after its whole
 * batch is synced), so removing it loses nothing acknowledged. The evidence file is made
 * durable before the journal is cut, so the bytes exist somewhere at every instant.
 */
function cutTornTail(fsl: FsLayer, layout: StoreLayout, id: string, fd: number, offset: number, bytes: number) {
  const evidence = keepTornTail(fsl, layout, id, fd, offset, bytes); // durable before the cut
  fsl.ftruncateSync(fd, offset);
  fsl.fsyncSync(fd);
  return { bytes, evidence };
}
