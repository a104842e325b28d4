import type { FsLayer } from '../../../durable/fsLayer.js';
import { openPrivate } from '../../../durable/durableFile.js';
import { decodeLine } from './format.js';
import { scanLines } from './lines.js';
import { readHeader } from './scan.js';
import type { JournalCipher } from './cipher.js';

/**
 * Salvage of a damaged journal: every record line that verifies on its own (its checksum,
 * canonical JSON, and under an encrypted journal its seal, bound to its seq and session), in
 * file order, and the spans between them that do not. The store refuses such a journal (a
 * damaged line followed by valid ones is corruption: nothing is ever skipped silently); this
 * reads it for a human who asked (`show --salvage`), changes nothing, and names every span it
 * could not read. A header that does not verify is fatal: without it the session is unknown.
 */
export interface DamagedSpan {
  /** 1-based line numbers of the file (the header is line 1). */
  firstLine: number;
  lastLine: number;
  offset: number;
  bytes: number;
  reason: string;
}

/** In file order: each verified record (as stored: `seq`, `ts`, its members; no `batchEnd`) or a damaged span. */
export type SalvageEntry = { record: Record<string, unknown>; line: number; batchEnd?: number } | { damaged: DamagedSpan };

export interface Salvage {
  header: Record<string, unknown>;
  entries: SalvageEntry[];
  /** The header line's bytes, as stored (repair.ts writes it again as it is). */
  headerBytes: Buffer;
  /** Each verified line's bytes, as stored, by line number (repair.ts copies them). */
  lineBytes: Map<number, Buffer>;
  /** The journal's cipher (an encrypted journal), for lines repair.ts adds. */
  cipher?: JournalCipher;
}

export function salvageJournal(fsl: FsLayer, file: string): Salvage {
  // as the store opens it: no symlink, no FIFO, a regular file of ours, mode 0600
  const fd = openPrivate(fsl, file, false);
  try {
    const st = fsl.fstatSync(fd);
    const head = readHeader(fsl, fd, st.size);
    const entries: SalvageEntry[] = [];
    const lineBytes = new Map<number, Buffer>();
    let lineNo = 1;
    for (const line of scanLines(fsl, fd, head.line.end, st.size)) {
      lineNo += 1;
      const d = line.terminated ? decodeLine(line.bytes, head.cipher) : { ok: false as const, reason: 'unterminated (a torn tail)' };
      if (d.ok) {
        const { batchEnd, ...record } = d.value;
        entries.push({ record, line: lineNo, ...(typeof batchEnd === 'number' ? { batchEnd } : {}) });
        lineBytes.set(lineNo, Buffer.from(line.bytes));
        continue;
      }
      const prev = entries.at(-1);
      const last = prev && 'damaged' in prev ? prev.damaged : undefined;
      if (last && last.lastLine === lineNo - 1 && last.reason === d.reason) {
        last.lastLine = lineNo;
        last.bytes += line.end - line.start;
      } else entries.push({ damaged: { firstLine: lineNo, lastLine: lineNo, offset: line.start, bytes: line.end - line.start, reason: d.reason } });
    }
    return { header: head.header, entries, headerBytes: Buffer.from(head.line.bytes), lineBytes, ...(head.cipher ? { cipher: head.cipher } : {}) };
  } finally {
    fsl.closeSync(fd);
  }
}
