import { baseState } from '../../../domain/sessionUpdate.js';
import { checkpointMembers, EMPTY_PREFIX, type PrefixState, reducePrefix } from '../../../engine/reduce.js';
import { createPrivate, ensurePrivateDir, fsyncDir } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import { checkCompactionThrough } from '../../../domain/rewind.js';
import type { StoreLayout } from '../layout.js';
import { encodeRecordLine, peekSeq } from './format.js';
import { readPrefix, scanLines } from './lines.js';
import type { JournalHandle } from './open.js';
import { readPage, seekAfterSeq } from './read.js';
import { crcOf } from './scan.js';

export type CompactionStep = 'archived' | 'written' | 'renamed' | 'synced';

export interface CompactionPlan {
  throughSeq: number;
  ts: string;
  /** Builds the checkpoint record's JSON text from its members (secret checks happen there). */
  checkpointText: (members: Record<string, unknown>) => string;
  /** Test seam: called after each durable step (a test may throw to simulate a crash there). */
  onStep?: (step: CompactionStep) => void;
}

export interface CompactionResult {
  generation: number;
  checkpointSeq: number;
  archived: { generation: number; records: number; bytes: number };
}

const COPY_CHUNK = 1 << 20;

/**
 * Rotates a journal: (1) the whole current journal is copied to history/<id>/<gen>.jsonl
 * (temp file, fsync, rename, directory fsync); (2) a new journal — the same header line, a
 * checkpoint record standing for every seq up to throughSeq, then the records after throughSeq
 * byte for byte — is written to a temp file and fsynced; (3) it is renamed over the journal and
 * the directory fsynced. Before (3) the old journal is authoritative and nothing changed
 * (stage preCommit); from (3) on the new one is (stage postCommit). Every record ever
 * acknowledged is in the active journal or an archive at every instant.
 */
export function compactJournal(fsl: FsLayer, layout: StoreLayout, handle: JournalHandle, plan: CompactionPlan): CompactionResult {
  const id = handle.header.sessionId;
  const { position } = handle;
  if (plan.throughSeq < handle.firstSeq || plan.throughSeq > position.lastSeq) {
    throw new StoreError('InvalidArgument', `throughSeq must be between ${handle.firstSeq} and ${position.lastSeq}`, { path: 'throughSeq' });
  }
  const generation = handle.generation;
  let newFd: number | undefined;
  let newIno = 0;
  let tempStarted = false;
  let checkpoint: Buffer;
  let suffixAt: number;
  let archived: CompactionResult['archived'];
  try {
    const st = fsl.fstatSync(handle.fd);
    // The journal's identity is the file at its path: another process's compaction (or anyone
    // renaming a file over it) leaves our descriptor on a file that is no longer the journal.
    const atPath = fsl.lstatSync(layout.journal(id));
    if (st.ino !== handle.ino || st.size !== position.bytes || atPath?.ino !== handle.ino || atPath.dev !== st.dev) {
      throw new StoreError('Conflict', 'the journal changed since it was opened; nothing was compacted', { reason: 'journalChanged', stage: 'preCommit' });
    }
    suffixAt = offsetAfter(fsl, handle, plan.throughSeq);
    checkCompactionThrough(plan.throughSeq, keptRewinds(fsl, handle, suffixAt, plan.throughSeq));
    const prefix = prefixState(fsl, handle, suffixAt, plan.throughSeq);
    archived = { generation, records: position.lastSeq - handle.firstSeq + 1, bytes: st.size };
    checkpoint = encodeRecordLine(plan.throughSeq, plan.ts, undefined, plan.checkpointText(checkpointMembers(plan.throughSeq, generation + 1, prefix, archived)), handle.cipher);
    archive(fsl, layout, handle, generation);
    plan.onStep?.('archived');
    tempStarted = true;
    newFd = writeNewJournal(fsl, layout, handle, checkpoint, suffixAt);
    newIno = fsl.fstatSync(newFd).ino;
    plan.onStep?.('written');
    fsl.renameSync(layout.journalTemp(id), layout.journal(id));
  } catch (err) {
    if (newFd !== undefined) closeQuietly(fsl, newFd);
    if (tempStarted) removeQuietly(fsl, layout.journalTemp(id));
    throw stageError(err);
  }
  // The commit point: from here on the new journal is authoritative. The handle follows it at
  // once, so nothing this process does later can go to the replaced file.
  swapInto(fsl, handle, newFd, newIno, checkpoint, suffixAt, plan.throughSeq, generation + 1);
  try {
    plan.onStep?.('renamed');
    fsyncDir(fsl, layout.sessionDir(id));
    plan.onStep?.('synced');
  } catch (err) {
    const errno = errnoOf(err);
    throw new StoreError('Uncertain', `compaction renamed the new journal in (it is authoritative) but failed before that was known durable (${errno ?? 'I/O error'}); the session is read-only in this process`, {
      stage: 'postCommit', ...(errno ? { errno } : {}),
    });
  }
  return { generation: generation + 1, checkpointSeq: plan.throughSeq, archived };
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

/** Offset of the first line with seq > throughSeq (the journal's end when there is none). */
function offsetAfter(fsl: FsLayer, handle: JournalHandle, throughSeq: number): number {
  const end = handle.position.bytes;
  const from = seekAfterSeq(fsl, handle.fd, handle.dataStart, end, throughSeq);
  for (const line of scanLines(fsl, handle.fd, from, end)) {
    const seq = peekSeq(line.bytes);
    if (seq !== undefined && seq > throughSeq) return line.start;
  }
  return end;
}

/** The session state as of `seq` of the active generation (for session/rewind): the reduction a checkpoint carries. */
export function stateAt(fsl: FsLayer, handle: JournalHandle, seq: number): PrefixState {
  return prefixState(fsl, handle, offsetAfter(fsl, handle, seq), seq);
}

/** The rewind records after throughSeq (their lines are the only ones parsed). */
function keptRewinds(fsl: FsLayer, handle: JournalHandle, suffixAt: number, throughSeq: number): Array<{ seq: number; toSeq: number }> {
  const out: Array<{ seq: number; toSeq: number }> = [];
  let afterSeq = throughSeq;
  let from = suffixAt;
  const end = handle.position.bytes;
  while (afterSeq < handle.position.lastSeq) {
    const page = readPage(fsl, handle.fd, { from, end, afterSeq, limit: 10_000, maxBytes: 16 << 20, firstSeq: handle.firstSeq, kinds: REWIND, cipher: handle.cipher });
    for (const r of page.records) out.push({ seq: r.seq, toSeq: Number((r as { toSeq?: unknown }).toSeq) });
    if (page.scannedSeq === afterSeq) break;
    afterSeq = page.scannedSeq;
    from = seekAfterSeq(fsl, handle.fd, handle.dataStart, end, afterSeq);
  }
  return out;
}

const REWIND: ReadonlySet<string> = new Set(['rewind']);

/** The turn state and runtime counters at throughSeq, and how many records the checkpoint stands for in all. */
function prefixState(
  fsl: FsLayer, handle: JournalHandle, end: number, throughSeq: number,
): PrefixState {
  let s = EMPTY_PREFIX;
  const base = baseState(handle.header);
  let afterSeq = 0;
  while (afterSeq < throughSeq) {
    const from = afterSeq === 0 ? handle.dataStart : seekAfterSeq(fsl, handle.fd, handle.dataStart, end, afterSeq);
    const page = readPage(fsl, handle.fd, { from, end, afterSeq, limit: 10_000, maxBytes: 16 << 20, firstSeq: handle.firstSeq, cipher: handle.cipher });
    if (page.records.length === 0) break;
    for (const rec of page.records as Array<Record<string, unknown> & { seq: number; kind: string }>) s = reducePrefix(s, rec, base);
    afterSeq = page.scannedSeq;
  }
  return s;
}

function archive(fsl: FsLayer, layout: StoreLayout, handle: JournalHandle, generation: number): void {
  const id = handle.header.sessionId;
  ensurePrivateDir(fsl, layout.historyDir);
  ensurePrivateDir(fsl, layout.historySessionDir(id));
  const target = layout.archive(id, generation);
  const tmp = `${target}.tmp`;
  removeQuietly(fsl, tmp);
  const out = createPrivate(fsl, tmp);
  try {
    copyRange(fsl, handle.fd, 0, handle.position.bytes, out, 0);
    fsl.fsyncSync(out);
  } catch (err) {
    fsl.closeSync(out);
    removeQuietly(fsl, tmp); // never the archive: a temp name, nothing refers to it
    throw err;
  }
  fsl.closeSync(out);
  fsl.renameSync(tmp, target);
  fsyncDir(fsl, layout.historySessionDir(id));
}

function writeNewJournal(fsl: FsLayer, layout: StoreLayout, handle: JournalHandle, checkpoint: Buffer, suffixAt: number): number {
  const tmp = layout.journalTemp(handle.header.sessionId);
  removeQuietly(fsl, tmp);
  const out = createPrivate(fsl, tmp);
  try {
    let at = copyRange(fsl, handle.fd, 0, handle.dataStart, out, 0); // the header line, byte for byte
    for (let done = 0; done < checkpoint.length; ) done += fsl.writeSync(out, checkpoint, done, checkpoint.length - done, at + done);
    at += checkpoint.length;
    copyRange(fsl, handle.fd, suffixAt, handle.position.bytes, out, at);
    fsl.fsyncSync(out);
    return out;
  } catch (err) {
    fsl.closeSync(out);
    throw err;
  }
}

/** The handle now reads and writes the new journal; its position object is updated in place (the writer shares it). */
function swapInto(fsl: FsLayer, handle: JournalHandle, fd: number, ino: number, checkpoint: Buffer, suffixAt: number, throughSeq: number, generation: number): void {
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
  closeQuietly(fsl, old);
}

function copyRange(fsl: FsLayer, from: number, start: number, end: number, to: number, at: number): number {
  let pos = start;
  let out = at;
  while (pos < end) {
    const chunk = wholeLines(fsl, from, pos, end);
    if (chunk.length === 0) throw Object.assign(new Error('journal shorter than expected'), { code: 'EIO' });
    for (let done = 0; done < chunk.length; ) done += fsl.writeSync(to, chunk, done, chunk.length - done, out + done);
    pos += chunk.length;
    out += chunk.length;
  }
  return out;
}

/**
 * The next chunk of a copy, cut after its last newline: the final secret gate checks each write
 * call on its own, so a chunk never splits a line (a line longer than a chunk is read whole).
 */
function wholeLines(fsl: FsLayer, from: number, pos: number, end: number): Buffer {
  for (let want = Math.min(COPY_CHUNK, end - pos); ; want = Math.min(want * 2, end - pos)) {
    const chunk = readPrefix(fsl, from, pos, want);
    if (pos + chunk.length >= end || chunk.length < want) return chunk;
    const nl = chunk.lastIndexOf(0x0a);
    if (nl !== -1) return chunk.subarray(0, nl + 1);
  }
}

export function removeQuietly(fsl: FsLayer, file: string): void {
  try {
    fsl.unlinkSync(file);
  } catch {
    // absent: nothing to clean
  }
}

