import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../../helpers.js';
import { indexOf, journalOf, lines, message, note, sealed, store, storeError, unsealed } from './storeHelpers.js';

/** Records 1..8: five single appends and a batch of three (6..8). Line of seq s = s + 1. */
async function fixture() {
  const root = tempDir();
  const s = store(root);
  const { sessionId } = await s.create({ title: 'corrupt' });
  await s.append(sessionId, [message('user', 'first')]);
  for (let i = 2; i <= 5; i++) await s.append(sessionId, [note(i)]);
  await s.append(sessionId, [note(6), message('assistant', 'seven'), note(8)]);
  await s.closeAll();
  const journal = journalOf(root, sessionId);
  const original = fs.readFileSync(journal);
  const index = fs.readFileSync(indexOf(root, sessionId));
  return { root, sessionId, journal, original, index, lines: lines(original) };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

/** A copy of `buf` with the byte at `at` xor-ed with `mask`. */
function flip(buf: Buffer, at: number, mask: number): Buffer {
  const out = Buffer.from(buf);
  out.writeUInt8(out.readUInt8(at) ^ mask, at);
  return out;
}

function startOfLine(f: Fixture, lineNo: number): number {
  return f.lines.slice(0, lineNo - 1).reduce((n, l) => n + l.length, 0);
}

/**
 * With `bytes` as the journal and no index (so the journal is scanned): write- and read-mode
 * opens, a read and a list all refuse with Corrupt naming `line`, and nothing on disk changes.
 */
async function expectCorrupt(f: Fixture, bytes: Buffer, line: number): Promise<void> {
  fs.writeFileSync(f.journal, bytes);
  fs.rmSync(indexOf(f.root, f.sessionId), { force: true });
  const before = snapshotTree(f.root);
  const warnings: string[] = [];
  const s = store(f.root, { warn: (m) => warnings.push(m) });
  for (const attempt of [() => s.open(f.sessionId, 'write'), () => s.open(f.sessionId, 'read'), () => s.read(f.sessionId)]) {
    const err = await storeError(attempt, 'Corrupt');
    expect(err.details.line).toBe(line);
    expect(err.message).toContain(`line ${line}`);
  }
  await storeError(s.append(f.sessionId, [note(99)]), 'ReadOnly'); // never opened for writing
  expect((await s.list()).sessions).toEqual([]);
  expect(warnings).toEqual([`session ${f.sessionId} left out of the list: Corrupt`]);
  await s.closeAll();
  expect(snapshotTree(f.root)).toEqual(before);
}

describe('damage before the last line is corruption, never repaired', () => {
  it('a flipped byte anywhere in an earlier line names that line', async () => {
    const f = await fixture();
    for (let lineNo = 1; lineNo < f.lines.length; lineNo++) {
      const len = (f.lines[lineNo - 1] as Buffer).length;
      // the first byte, inside the JSON, a crc digit, and the newline itself (two lines merge;
      // merged with the last line that would be a damaged last line: a torn tail)
      const offsets = [0, Math.floor(len / 2), len - 4, ...(lineNo < f.lines.length - 1 ? [len - 1] : [])];
      for (const at of offsets) {
        const bytes = flip(f.original, startOfLine(f, lineNo) + at, 0x01);
        await expectCorrupt(f, bytes, lineNo);
      }
    }
  });

  it('read across a damaged line fails with Corrupt while the trusted index lets open succeed', async () => {
    const f = await fixture();
    const line = 4; // seq 3
    const bytes = flip(f.original, startOfLine(f, line) + 20, 0x04);
    fs.writeFileSync(f.journal, bytes);
    const before = snapshotTree(f.root);
    const s = store(f.root);
    expect((await s.open(f.sessionId, 'read')).lastSeq).toBe(8); // index matches: no scan
    for (const opts of [{}, { afterSeq: 2 }, { afterSeq: 1, limit: 5 }, { kinds: ['message'] }]) {
      const err = await storeError(s.read(f.sessionId, opts), 'Corrupt');
      expect(err.details.line).toBe(line);
    }
    expect((await s.read(f.sessionId, { limit: 2 })).records.map((r) => r.seq)).toEqual([1, 2]);
    expect((await s.read(f.sessionId, { afterSeq: 3 })).records.map((r) => r.seq)).toEqual([4, 5, 6, 7, 8]);
    await s.closeAll();
    expect(snapshotTree(f.root)).toEqual(before);
  });

  it('a valid line spliced in from another position is corruption', async () => {
    const f = await fixture();
    const l = f.lines;
    const at = (i: number) => l[i] as Buffer;
    // seq 5's line replaced by seq 2's (line 6)
    await expectCorrupt(f, Buffer.concat([...l.slice(0, 5), at(2), ...l.slice(6)]), 6);
    // seq 3's line repeated
    await expectCorrupt(f, Buffer.concat([...l.slice(0, 4), at(3), ...l.slice(4)]), 5);
    // two lines swapped
    await expectCorrupt(f, Buffer.concat([...l.slice(0, 2), at(3), at(2), ...l.slice(4)]), 3);
    // at the very end too: a valid line out of sequence is not a torn write
    await expectCorrupt(f, Buffer.concat([...l.slice(0, 8), at(1)]), 9);
    // a line of the batch moved out of it
    await expectCorrupt(f, Buffer.concat([...l.slice(0, 7), at(8), at(7)]), 8);
  });

  it('a line rewritten with a duplicate key and a recomputed crc is damage', async () => {
    const f = await fixture();
    const l = f.lines;
    const line3 = l[3] as Buffer; // seq 3
    const dup = sealed(unsealed(line3).replace('"kind":"note"', '"kind":"note","kind":"note"'));
    expect(dup.equals(line3)).toBe(false);
    const bytes = Buffer.concat([...l.slice(0, 3), dup, ...l.slice(4)]);
    await expectCorrupt(f, bytes, 4);
    const err = await storeError(store(f.root).open(f.sessionId, 'write'), 'Corrupt');
    expect(err.details.reason).toMatch(/canonical/);
    // same in the header
    const header = sealed(unsealed(l[0] as Buffer).replace('"title":"corrupt"', '"title":"x","title":"corrupt"'));
    await expectCorrupt(f, Buffer.concat([header, ...l.slice(1)]), 1);
  });

  it('a header that is missing, damaged, foreign or of another version is Corrupt at line 1', async () => {
    const f = await fixture();
    const rest = f.lines.slice(1);
    const header = JSON.parse((f.lines[0] as Buffer).toString()) as Record<string, unknown>;
    delete header.crc;
    const other = await fixture(); // a whole valid journal of another session
    const variants: Buffer[] = [
      Buffer.alloc(0),
      (f.lines[0] as Buffer).subarray(0, 40),
      (f.lines[0] as Buffer).subarray(0, (f.lines[0] as Buffer).length - 1), // unterminated
      fs.readFileSync(other.journal),
      Buffer.concat([sealed(JSON.stringify({ ...header, version: 2 })), ...rest]),
      Buffer.concat([sealed(JSON.stringify({ ...header, format: 'something-else' })), ...rest]),
      Buffer.concat(rest),
    ];
    for (const bytes of variants) await expectCorrupt(f, bytes, 1);
  });
});
