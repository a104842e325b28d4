import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../../helpers.js';
import { indexOf, journalOf, lines, message, modeOf, note, sealed, store, unsealed } from './storeHelpers.js';

const N = 5;

/** A session with records 1..N-1 as single appends and record N (multi-byte text) last. */
async function fixture() {
  const root = tempDir();
  const s = store(root);
  const { sessionId } = await s.create({ title: 'torn' });
  for (let i = 1; i < N; i++) await s.append(sessionId, [note(i)]);
  await s.close(sessionId);
  // The index as it stood before the last append: a torn write only ever lies beyond it.
  const index = fs.readFileSync(indexOf(root, sessionId));
  await s.open(sessionId, 'write');
  await s.append(sessionId, [message('user', 'the last words: ☃ 𝄞 é')]);
  await s.closeAll();
  const journal = journalOf(root, sessionId);
  const original = fs.readFileSync(journal);
  return { root, sessionId, journal, original, index };
}

/**
 * Puts `bytes` in place of the journal (same inode, same mode) and opens the session for
 * writing in a fresh store. Checks the repair: `validLen` bytes kept, the rest moved to an
 * evidence file, lastSeq as given, and appending works again.
 */
async function expectRepaired(
  f: Awaited<ReturnType<typeof fixture>>, bytes: Buffer, validLen: number, lastSeq: number, withIndex: boolean,
): Promise<void> {
  fs.writeFileSync(f.journal, bytes);
  fs.rmSync(path.join(f.root, 'recovery', f.sessionId), { recursive: true, force: true });
  if (withIndex) fs.writeFileSync(indexOf(f.root, f.sessionId), f.index);
  else fs.rmSync(indexOf(f.root, f.sessionId), { force: true });
  const s = store(f.root);
  const opened = await s.open(f.sessionId, 'write');
  expect(opened.lastSeq).toBe(lastSeq);
  const removed = bytes.length - validLen;
  if (removed === 0) {
    expect(opened.recovered).toBeUndefined();
    expect(fs.existsSync(path.join(f.root, 'recovery', f.sessionId))).toBe(false);
  } else {
    expect(opened.recovered?.bytes).toBe(removed);
    const evidence = opened.recovered?.evidence as string;
    expect(evidence).toMatch(new RegExp(`^recovery/${f.sessionId}/\\d+-${validLen}\\.torn$`));
    const file = path.join(f.root, evidence);
    expect(fs.readFileSync(file).equals(bytes.subarray(validLen))).toBe(true);
    expect(modeOf(file)).toBe(0o600);
    expect(modeOf(path.dirname(file))).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
  }
  expect(fs.readFileSync(f.journal).equals(bytes.subarray(0, validLen))).toBe(true);
  expect(modeOf(f.journal)).toBe(0o600);
  expect(await s.append(f.sessionId, [note(lastSeq + 1)])).toEqual({ firstSeq: lastSeq + 1, lastSeq: lastSeq + 1 });
  const page = await s.read(f.sessionId);
  expect(page.records.map((r) => r.seq)).toEqual(Array.from({ length: lastSeq + 1 }, (_, i) => i + 1));
  await s.closeAll();
  const reopened = store(f.root);
  expect((await reopened.open(f.sessionId, 'write')).recovered).toBeUndefined();
  await reopened.closeAll();
}

describe('torn tail repair on a write-mode open', () => {
  it('cuts the last record at every byte offset', async () => {
    const f = await fixture();
    const last = lines(f.original).at(-1) as Buffer;
    const validLen = f.original.length - last.length;
    for (let k = 1; k <= last.length; k++) {
      await expectRepaired(f, f.original.subarray(0, f.original.length - k), validLen, N - 1, k % 2 === 1);
    }
  });

  it('drops a whole multi-record batch cut anywhere, even its complete lines', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    await s.append(sessionId, [note(2)]);
    await s.close(sessionId);
    const index = fs.readFileSync(indexOf(root, sessionId));
    await s.open(sessionId, 'write');
    await s.append(sessionId, [note(3, { t: 'batch' }), message('assistant', 'middle ✓'), note(5, { t: 'batch' })]);
    await s.closeAll();
    const f = { root, sessionId, journal: journalOf(root, sessionId), original: fs.readFileSync(journalOf(root, sessionId)), index };
    const ls = lines(f.original);
    const batchBytes = ls.slice(-3).reduce((n, l) => n + l.length, 0);
    const validLen = f.original.length - batchBytes;
    for (let k = 1; k <= batchBytes; k++) {
      await expectRepaired(f, f.original.subarray(0, f.original.length - k), validLen, 2, k % 2 === 0);
    }
    // explicitly: two complete, valid lines of the batch are evidence, not records
    const twoLines = f.original.length - (ls.at(-1) as Buffer).length;
    await expectRepaired(f, f.original.subarray(0, twoLines), validLen, 2, false);
  });

  it('removes zero bytes appended after the last line (a lost page)', async () => {
    const f = await fixture();
    await expectRepaired(f, Buffer.concat([f.original, Buffer.alloc(4096)]), f.original.length, N, true);
    await expectRepaired(f, Buffer.concat([f.original, Buffer.alloc(1)]), f.original.length, N, false);
    // the last line's bytes lost (zeros, newline included), the file length kept
    const last = lines(f.original).at(-1) as Buffer;
    const zeroed = Buffer.from(f.original);
    zeroed.fill(0, f.original.length - last.length);
    await expectRepaired(f, zeroed, f.original.length - last.length, N - 1, false);
  });

  it('treats a final line with a bad checksum as torn', async () => {
    const f = await fixture();
    const last = lines(f.original).at(-1) as Buffer;
    const validLen = f.original.length - last.length;
    const badCrc = Buffer.from(f.original);
    const crcDigit = f.original.length - 4; // a hex digit of the crc
    badCrc[crcDigit] = badCrc[crcDigit] === 0x30 ? 0x31 : 0x30;
    await expectRepaired(f, badCrc, validLen, N - 1, true);
    const badBody = Buffer.from(f.original);
    badBody[validLen + 3] = 0x39; // {"s|e|q… → the key text changes, the crc no longer matches
    await expectRepaired(f, badBody, validLen, N - 1, false);
    // garbage that happens to end in a newline
    await expectRepaired(f, Buffer.concat([f.original, Buffer.from('{"seq":6,"ts":"x"}\n')]), f.original.length, N, false);
  });

  it('treats a final line with a duplicate key and a valid checksum as torn', async () => {
    const f = await fixture();
    const last = lines(f.original).at(-1) as Buffer;
    const validLen = f.original.length - last.length;
    const text = unsealed(last);
    const dup = sealed(text.replace('"kind":"message"', '"kind":"message","kind":"message"'));
    expect(dup.equals(last)).toBe(false);
    expect(JSON.parse(dup.toString()).kind).toBe('message'); // parses fine: only the canonical check sees it
    await expectRepaired(f, Buffer.concat([f.original.subarray(0, validLen), dup]), validLen, N - 1, false);
    // and with a re-encoding that JSON.parse accepts (escaped character)
    const reencoded = sealed(text.replace('"kind":"message"', '"kind":"\\u006dessage"'));
    await expectRepaired(f, Buffer.concat([f.original.subarray(0, validLen), reencoded]), validLen, N - 1, true);
  });
});

describe('torn tail on a read-mode open', () => {
  it('changes no byte and reports the valid prefix', async () => {
    const f = await fixture();
    const last = lines(f.original).at(-1) as Buffer;
    for (const cut of [1, 7, last.length - 1]) {
      fs.writeFileSync(f.journal, f.original.subarray(0, f.original.length - cut));
      for (const withIndex of [true, false]) {
        if (withIndex) fs.writeFileSync(indexOf(f.root, f.sessionId), f.index);
        else fs.rmSync(indexOf(f.root, f.sessionId), { force: true });
        const before = snapshotTree(f.root);
        const s = store(f.root);
        const opened = await s.open(f.sessionId, 'read');
        expect(opened.lastSeq).toBe(N - 1);
        expect(opened.recovered).toBeUndefined();
        const page = await s.read(f.sessionId);
        expect(page.lastSeq).toBe(N - 1);
        expect(page.records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
        await s.close(f.sessionId);
        expect((await s.read(f.sessionId)).lastSeq).toBe(N - 1); // read without an open session
        expect((await s.list()).sessions.map((x) => [x.sessionId, x.lastSeq])).toEqual([[f.sessionId, N - 1]]);
        await s.closeAll();
        expect(snapshotTree(f.root)).toEqual(before);
        expect(fs.existsSync(path.join(f.root, 'recovery', f.sessionId))).toBe(false);
      }
    }
  });

  it('a later write-mode open in the same store repairs it', async () => {
    const f = await fixture();
    fs.writeFileSync(f.journal, f.original.subarray(0, f.original.length - 3));
    fs.writeFileSync(indexOf(f.root, f.sessionId), f.index);
    const s = store(f.root);
    expect((await s.open(f.sessionId, 'read')).recovered).toBeUndefined();
    await expect(s.append(f.sessionId, [note(9)])).rejects.toMatchObject({ kind: 'ReadOnly' });
    const opened = await s.open(f.sessionId, 'write');
    expect(opened.recovered?.bytes).toBe((lines(f.original).at(-1) as Buffer).length - 3);
    expect(await s.append(f.sessionId, [note(5)])).toEqual({ firstSeq: 5, lastSeq: 5 });
    await s.closeAll();
  });
});

describe('damage in bytes the index records as committed', () => {
  it('is Corrupt, never cut as a torn tail, and changes nothing', async () => {
    const f = await fixture();
    await store(f.root).closeAll();
    const current = fs.readFileSync(indexOf(f.root, f.sessionId)); // written after the last append was synced
    const last = lines(f.original).at(-1) as Buffer;
    for (const damaged of [
      f.original.subarray(0, f.original.length - 5), // acknowledged bytes missing
      Buffer.concat([f.original.subarray(0, f.original.length - 3), Buffer.from('X"}\n')]), // a flipped byte
    ]) {
      fs.writeFileSync(f.journal, damaged);
      fs.writeFileSync(indexOf(f.root, f.sessionId), current);
      const before = snapshotTree(f.root);
      const s = store(f.root);
      await expect(s.open(f.sessionId, 'write')).rejects.toMatchObject({ kind: 'Corrupt', details: { line: N + 1 } });
      expect(snapshotTree(f.root)).toEqual(before);
      await s.closeAll();
    }
    expect(last.length).toBeGreaterThan(5);
  });
});
