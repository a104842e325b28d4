import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreError } from '../../../src/domain/errors.js';
import { crcOf, type JournalPosition, readHeader, scanRecords, scanRecordsInSlices, type ScanResult } from '../../../src/backends/file/journal/scan.js';
import { PARSE_SLICE_BYTES } from '../../../src/backends/file/journal/slices.js';
import { tempDir } from '../../helpers.js';
import { Rng } from '../../torture/rng.js';
import { journalOf, note, store } from './storeHelpers.js';

/**
 * scanRecordsInSlices (the writable open of a fork's journal) must give what scanRecords gives
 * over the same bytes — the same position, the same records committed in the same order, the same
 * torn tail, the same Corrupt line — however its windows cut the journal: through lines, through
 * batches, batches and lines longer than a window, damage just before or after a cut.
 */

type Outcome = { result?: ScanResult; error?: { kind: string; line: unknown }; committed: number[] };

async function both(file: string): Promise<{ whole: Outcome; sliced: Outcome }> {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const { line } = readHeader(nodeFs, fd, size);
    const origin: JournalPosition = { bytes: line.end, lastSeq: 0, records: 0, lastCrc: crcOf(line.bytes) };
    const run = async (scan: (onCommit: (r: { seq: number }) => void) => ScanResult | Promise<ScanResult>): Promise<Outcome> => {
      const committed: number[] = [];
      try {
        return { result: await scan((r) => committed.push(r.seq)), committed };
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        return { error: { kind: err.kind, line: err.details.line }, committed };
      }
    };
    const whole = await run((onCommit) => scanRecords(nodeFs, fd, origin, size, onCommit));
    const sliced = await run((onCommit) => scanRecordsInSlices(nodeFs, fd, origin, size, onCommit));
    return { whole, sliced };
  } finally {
    fs.closeSync(fd);
  }
}

/** A journal of random batches: small and large records, batches of 1..40, some records larger than a window. */
async function randomJournal(seed: number): Promise<{ file: string; bytes: Buffer }> {
  const rng = new Rng(seed);
  const root = tempDir();
  const s = store(root);
  const { sessionId } = await s.create({ blobThreshold: 1 << 30 });
  let i = 0;
  while (fs.statSync(journalOf(root, sessionId)).size < 3 * PARSE_SLICE_BYTES) {
    const n = rng.chance(0.3) ? rng.range(2, 40) : 1;
    const pad = () => 'x'.repeat(rng.chance(0.05) ? rng.range(PARSE_SLICE_BYTES, 2 * PARSE_SLICE_BYTES) : rng.range(0, 4000));
    await s.append(sessionId, Array.from({ length: n }, () => note(++i, { pad: pad() })));
  }
  await s.closeAll();
  return { file: journalOf(root, sessionId), bytes: fs.readFileSync(journalOf(root, sessionId)) };
}

describe('scanRecordsInSlices', () => {
  it.each([1, 2, 3])('the same position and records as one scan over a random journal (seed %i)', async (seed) => {
    const { file } = await randomJournal(seed);
    const { whole, sliced } = await both(file);
    expect(whole.error).toBeUndefined();
    expect(sliced).toEqual(whole);
  });

  it('the same outcome with damage at many offsets across the window cuts: a torn tail, or Corrupt at the same line', async () => {
    const { file, bytes } = await randomJournal(7);
    const rng = new Rng(11);
    const offsets = new Set<number>();
    // Bytes around every window boundary the first scan would use, and random ones.
    for (let cut = PARSE_SLICE_BYTES; cut < bytes.length; cut += PARSE_SLICE_BYTES) for (const d of [-2, -1, 0, 1, 2, 200]) offsets.add(cut + d);
    for (let k = 0; k < 40; k++) offsets.add(rng.range(200, bytes.length - 1));
    const kinds = new Set<string>();
    for (const at of offsets) {
      if (at <= 0 || at >= bytes.length) continue;
      const damaged = Buffer.from(bytes);
      damaged[at] = damaged[at] === 0x41 ? 0x42 : 0x41;
      fs.writeFileSync(file, damaged);
      const { whole, sliced } = await both(file);
      expect(sliced, `damage at byte ${at}`).toEqual(whole);
      kinds.add(whole.error ? whole.error.kind : whole.result?.tail ? 'tail' : 'clean');
    }
    // Also cut short at the same offsets: a torn tail, never corruption.
    for (const at of [...offsets].slice(0, 20)) {
      fs.writeFileSync(file, bytes.subarray(0, at));
      const { whole, sliced } = await both(file);
      expect(sliced, `cut at byte ${at}`).toEqual(whole);
    }
    expect(kinds.has('Corrupt')).toBe(true);
  });
});
