import { openPrivate } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import { type IndexEntry, positionOf } from '../sessionIndex.js';
import { baseState } from '../../../domain/sessionUpdate.js';
import { summarizeRecord } from '../../../domain/summary.js';
import type { SessionHeader } from '../../../domain/types.js';
import { decodeLine, peekKind, peekSeq } from './format.js';
import type { JournalCipher } from './cipher.js';
import { keepTornTail } from './evidence.js';
import { firstLine, lineEndingAt, readPrefix } from './lines.js';
import { corrupt, crcOf, type JournalPosition, readHeader, type ScanResult, scanRecords, scanRecordsInSlices } from './scan.js';

/** An open journal, verified up to `position`. */
export interface JournalHandle {
  fd: number;
  ino: number;
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
  const hint = opts.hint && trustHint(fsl, fd, st.ino, st.size, line.end, opts.hint) ? opts.hint : undefined;
  const handle: JournalHandle = {
    fd,
    ino: st.ino,
    header: headerOf(header),
    dataStart: line.end,
    // Always from the journal itself (one line): an index entry written before a compaction
    // can still match a later journal — same inode number reused, same header — and would
    // otherwise set firstSeq and generation of a journal that no longer starts that way.
    ...firstRecord(fsl, fd, line.end, st.size, cipher),
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
  if (scan.tail && opts.hint?.ino === handle.ino && scan.tail.offset < opts.hint.bytes) {
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

/** The index vouches for a prefix only if that prefix still ends where and how it says. */
function trustHint(fsl: FsLayer, fd: number, ino: number, size: number, dataStart: number, hint: IndexEntry): boolean {
  if (hint.ino !== ino || hint.bytes > size || hint.bytes < dataStart) return false;
  if (hint.records === 0) return hint.bytes === dataStart && hint.lastSeq === 0;
  const last = lineEndingAt(fsl, fd, hint.bytes, dataStart);
  return last !== undefined && last.bytes.length > 10 && crcOf(last.bytes) === hint.lastCrc && peekSeq(last.bytes) === hint.lastSeq;
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

const CHECKPOINT_PREFIX = /^\{"seq":(\d{1,16}),"ts":"[^"\\]{1,40}","kind":"checkpoint","generation":(\d{1,16}),/;

/**
 * Seq and generation of a journal's first record line (a checkpoint after a compaction), from
 * its first few hundred bytes when they show them; damage there is reported by the scan or the
 * read that meets the line.
 */
function firstRecord(fsl: FsLayer, fd: number, dataStart: number, size: number, cipher?: JournalCipher): { firstSeq: number; generation: number } {
  const prefix = readPrefix(fsl, fd, dataStart, Math.min(320, size - dataStart));
  const seq = peekSeq(prefix);
  if (seq === undefined) return { firstSeq: 1, generation: 0 };
  const cp = CHECKPOINT_PREFIX.exec(prefix.toString('latin1'));
  if (cp) return { firstSeq: seq, generation: Number(cp[2]) };
  // A sealed line shows only its envelope: open it (a checkpoint, if any, is the first record line).
  if (!cipher && (peekKind(prefix) !== undefined || !prefix.includes('"kind":"checkpoint"'))) return { firstSeq: seq, generation: 0 };
  const first = firstLine(fsl, fd, dataStart, size); // a line of an older writer: parse it
  const decoded = first?.terminated ? decodeLine(first.bytes, cipher) : undefined;
  const generation = decoded?.ok && decoded.value.kind === 'checkpoint' ? Number(decoded.value.generation) : 0;
  return { firstSeq: seq, generation: Number.isSafeInteger(generation) ? generation : 0 };
}
