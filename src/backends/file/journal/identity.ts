/**
 * What an index entry is checked against before it is trusted (STORAGE.md, "The index"): the
 * bytes of the journal, never the file's identity on this filesystem. A copy (`cp -a`, rsync, a
 * backup, a migrate or rekey that wrote the file anew) keeps the bytes and so keeps the entry
 * trusted; a journal replaced by a compaction does not (its head changes).
 *
 * - head: the header line's checksum, the generation and seq of the first record line — one
 *   generation of one session's journal (a compaction keeps the header line but starts the new
 *   file with a checkpoint of the next generation);
 * - the entry's end: the line ending at `bytes` has the checksum and seq the entry recorded.
 * Both are read from the file: a few hundred bytes at its start and the entry's last line.
 */
import { openPrivate } from '../../../durable/durableFile.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import type { IndexEntry } from '../sessionIndex.js';
import type { JournalCipher } from './cipher.js';
import { decodeLine, peekKind, peekSeq } from './format.js';
import { firstLine, lineEndingAt, readPrefix } from './lines.js';
import { crcOf, readHeader } from './scan.js';

/** The head of a journal generation, as index entries record it. */
export function headOf(headerCrc: string, generation: number, firstSeq: number): string {
  return `${headerCrc}.${generation}.${firstSeq}`;
}

const CHECKPOINT_PREFIX = /^\{"seq":(\d{1,16}),"ts":"[^"\\]{1,40}","kind":"checkpoint","generation":(\d{1,16}),/;

/**
 * Seq and generation of a journal's first record line (a checkpoint after a compaction), from
 * its first few hundred bytes when they show them; damage there is reported by the scan or the
 * read that meets the line.
 */
export function firstRecord(fsl: FsLayer, fd: number, dataStart: number, size: number, cipher?: JournalCipher): { firstSeq: number; generation: number } {
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

/** Whether the entry describes this generation of the journal (by its head; an entry older than heads, by the inode). */
export function sameGeneration(entry: Pick<IndexEntry, 'head' | 'ino'>, head: string, ino: number): boolean {
  return entry.head !== undefined ? entry.head === head : entry.ino === ino;
}

/**
 * The index vouches for a prefix of the journal only if it is of the same generation and that
 * prefix still ends where and how it says.
 */
export function vouchesForPrefix(fsl: FsLayer, fd: number, at: { head: string; ino: number; size: number; dataStart: number }, hint: IndexEntry): boolean {
  if (!sameGeneration(hint, at.head, at.ino) || hint.bytes > at.size || hint.bytes < at.dataStart) return false;
  if (hint.records === 0) return hint.bytes === at.dataStart && hint.lastSeq === 0;
  const last = lineEndingAt(fsl, fd, hint.bytes, at.dataStart);
  return last !== undefined && last.bytes.length > 10 && crcOf(last.bytes) === hint.lastCrc && peekSeq(last.bytes) === hint.lastSeq;
}

/**
 * Whether the entry vouches for the whole journal at `file` (session/list's rows): same length,
 * same generation, same last line. Read-only; any failure to read is "no" (the caller scans the
 * journal, which reports what is wrong).
 */
export function vouchesForJournal(fsl: FsLayer, file: string, entry: IndexEntry): boolean {
  let fd: number | undefined;
  try {
    fd = openPrivate(fsl, file, false);
    const st = fsl.fstatSync(fd);
    if (st.size !== entry.bytes) return false;
    const { header, line, cipher } = readHeader(fsl, fd, st.size);
    if (header.sessionId !== entry.sessionId) return false;
    const first = firstRecord(fsl, fd, line.end, st.size, cipher);
    return vouchesForPrefix(fsl, fd, { head: headOf(crcOf(line.bytes), first.generation, first.firstSeq), ino: st.ino, size: st.size, dataStart: line.end }, entry);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fsl.closeSync(fd);
  }
}
