import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { tempDir } from '../../helpers.js';
import { indexOf, journalOf, message, note, store } from './storeHelpers.js';

/**
 * Index entries are checked against the journal's bytes, not its inode (STORAGE.md, "Copies keep
 * their index"): a copied store lists and opens from its index; an entry of a journal replaced by
 * a compaction is never taken for the new one.
 */

/** nodeFs counting the bytes read from journals. */
function countingFs(): { fsl: FsLayer; journalBytes: () => number } {
  const journals = new Set<number>();
  let bytes = 0;
  const fsl: FsLayer = {
    ...nodeFs,
    openSync(p, flags, mode) {
      const fd = nodeFs.openSync(p, flags, mode);
      if (String(p).endsWith('journal.jsonl')) journals.add(fd);
      return fd;
    },
    closeSync(fd) {
      journals.delete(fd);
      nodeFs.closeSync(fd);
    },
    readSync(fd, buf, off, len, pos) {
      const n = nodeFs.readSync(fd, buf, off, len, pos);
      if (journals.has(fd)) bytes += n;
      return n;
    },
  };
  return { fsl, journalBytes: () => bytes };
}

/** A store of three sessions, one of them about 3 MB; returns the ids and the big one's size. */
async function bigStore(): Promise<{ root: string; ids: string[]; big: string; bigSize: number }> {
  const root = tempDir();
  const s = store(root);
  const ids: string[] = [];
  for (const title of ['one', 'two', 'big']) {
    const { sessionId } = await s.create({ title });
    ids.push(sessionId);
    await s.append(sessionId, [message('user', `hello ${title}`)]);
  }
  const big = ids[2] as string;
  const text = 'x'.repeat(3000);
  for (let i = 0; i < 10; i++) await s.append(big, Array.from({ length: 100 }, (_, j) => note(i * 100 + j, { text })));
  await s.closeAll();
  return { root, ids, big, bigSize: fs.statSync(journalOf(root, big)).size };
}

function copyOf(root: string): string {
  const copy = path.join(tempDir(), 'copy');
  execFileSync('cp', ['-a', root, copy]);
  return copy;
}

describe('index entries of a copied store', () => {
  it('a cp -a copy (new inodes) lists and opens from its index: a few KiB read per journal, not the journal', async () => {
    const f = await bigStore();
    const copy = copyOf(f.root);
    expect(fs.statSync(journalOf(copy, f.big)).ino).not.toBe(fs.statSync(journalOf(f.root, f.big)).ino);
    expect(f.bigSize).toBeGreaterThan(2_500_000);
    const original = (await store(f.root).list()).sessions;

    const c = countingFs();
    const s = store(copy, { fs: c.fsl });
    expect((await s.list()).sessions).toEqual(original.map((x) => ({ ...x })));
    expect(c.journalBytes()).toBeLessThan(600_000); // three journals' heads and last lines; a scan reads the big one whole
    const before = c.journalBytes();
    expect((await s.open(f.big, 'write')).lastSeq).toBe(1001);
    expect(c.journalBytes() - before).toBeLessThan(300_000);
    await s.closeAll();
  });

  it('an entry of the journal before a compaction is not trusted for the compacted one, even where its end matches', async () => {
    const root = tempDir();
    let s = store(root);
    const { sessionId } = await s.create({ title: 'before' });
    for (let i = 1; i <= 6; i++) await s.append(sessionId, [note(i)]);
    await s.closeAll();
    const stale = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8')) as Record<string, unknown>;
    s = store(root);
    await s.open(sessionId, 'write');
    await s.compact(sessionId, { summary: 'first four', throughSeq: 4, provider: 'p', model: 'm' });
    await s.update(sessionId, { title: 'after' });
    await s.append(sessionId, [note(8)]);
    await s.closeAll();
    const fresh = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8')) as Record<string, unknown>;
    expect(fresh.head).toMatch(/^[0-9a-f]+\.1\.4$/);
    // The old generation's entry, its end made to match the new journal's last line (as an inode
    // reused and a length that happens to fall on a line could): only the head tells them apart.
    const forged = { ...stale, bytes: fresh.bytes, lastSeq: fresh.lastSeq, lastCrc: fresh.lastCrc };
    fs.writeFileSync(indexOf(root, sessionId), JSON.stringify(forged), { mode: 0o600 });
    s = store(root);
    expect((await s.list()).sessions[0]).toMatchObject({ title: 'after', lastSeq: 8 });
    await s.open(sessionId, 'read');
    expect((await s.read(sessionId)).records[0]).toMatchObject({ kind: 'checkpoint', seq: 4 });
    await s.closeAll();
    s = store(root);
    expect((await s.open(sessionId, 'write')).title).toBe('after');
    await s.closeAll();
  });

  it('an entry without a head (an older version\'s) is trusted only on the same inode', async () => {
    const f = await bigStore();
    const entryFile = indexOf(f.root, f.big);
    const { head: _h, ...legacy } = JSON.parse(fs.readFileSync(entryFile, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(entryFile, JSON.stringify(legacy));
    const copy = copyOf(f.root);
    const original = countingFs();
    expect((await store(f.root, { fs: original.fsl }).list()).sessions).toHaveLength(3);
    expect(original.journalBytes()).toBeLessThan(600_000);
    const copied = countingFs();
    expect((await store(copy, { fs: copied.fsl }).list()).sessions).toHaveLength(3);
    expect(copied.journalBytes()).toBeGreaterThan(f.bigSize); // scanned: the inode differs
  });
});
