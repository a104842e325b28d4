import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotTree, tempDir } from '../../helpers.js';
import { journalOf, modeOf, note, sessionWith, store, storeError } from './storeHelpers.js';

/**
 * Every way to reach a session's journal: both open modes, a read without open, and list.
 * `listFromIndex`: list trusts an index entry whose inode and length match the journal without
 * opening it (it only shows the cached summary), so a chmod-ed journal may still be listed.
 */
async function expectRefused(root: string, id: string, reason: RegExp, listFromIndex = false): Promise<void> {
  const warnings: string[] = [];
  const s = store(root, { warn: (m) => warnings.push(m) });
  for (const attempt of [() => s.open(id, 'write'), () => s.open(id, 'read'), () => s.read(id)]) {
    const err = await storeError(attempt, 'UnsafeStore');
    expect(String(err.details.reason)).toMatch(reason);
    expect(err.details.sessionId).toBe(id);
  }
  const listed = (await s.list()).sessions.map((x) => x.sessionId);
  if (!listFromIndex) {
    expect(listed).not.toContain(id);
    expect(warnings).toContain(`session ${id} left out of the list: UnsafeStore`);
  }
  await s.closeAll();
}

describe('unsafe journals are refused', () => {
  it('a symlink in place of the journal, even to a valid journal', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 2);
    const elsewhere = path.join(tempDir(), 'journal.jsonl');
    fs.copyFileSync(journalOf(root, id), elsewhere);
    fs.chmodSync(elsewhere, 0o600);
    const target = fs.readFileSync(elsewhere);
    fs.rmSync(journalOf(root, id));
    fs.symlinkSync(elsewhere, journalOf(root, id));
    await expectRefused(root, id, /symbolic link/);
    expect(fs.readFileSync(elsewhere).equals(target)).toBe(true);
    expect(fs.lstatSync(journalOf(root, id)).isSymbolicLink()).toBe(true);
    // a dangling symlink too
    fs.rmSync(elsewhere);
    await expectRefused(root, id, /symbolic link/);
  });

  it('a FIFO in place of the journal, without hanging', { timeout: 10_000 }, async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    fs.rmSync(journalOf(root, id));
    execFileSync('mkfifo', ['-m', '600', journalOf(root, id)]);
    await expectRefused(root, id, /not a regular file/);
    expect(fs.lstatSync(journalOf(root, id)).isFIFO()).toBe(true);
  });

  it('a directory in place of the journal, in both modes', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    fs.rmSync(journalOf(root, id));
    fs.mkdirSync(journalOf(root, id), { mode: 0o700 });
    await expectRefused(root, id, /not a regular file/);
  });

  it('a journal whose mode is not exactly 0600, leaving the mode alone', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    for (const mode of [0o644, 0o640, 0o604, 0o400, 0o700, 0o666]) {
      fs.chmodSync(journalOf(root, id), mode);
      const before = snapshotTree(root);
      await expectRefused(root, id, new RegExp(`mode ${mode.toString(8)}`), true);
      expect(modeOf(journalOf(root, id))).toBe(mode);
      expect(snapshotTree(root)).toEqual(before);
    }
    fs.chmodSync(journalOf(root, id), 0o600);
    const s = store(root);
    expect((await s.open(id, 'write')).lastSeq).toBe(1);
    await s.closeAll();
  });
});

describe('unsafe store roots are refused at construction', () => {
  it('a root that is a symlink to a good store', async () => {
    const real = tempDir();
    await sessionWith(real, 1);
    const link = path.join(tempDir(), 'link');
    fs.symlinkSync(real, link);
    expect(() => store(link)).toThrowError(expect.objectContaining({ name: 'StoreError', kind: 'UnsafeStore' }));
  });

  it('a root (or a folder in it) that group or others can write', async () => {
    for (const mode of [0o770, 0o720, 0o702, 0o777]) {
      const root = path.join(tempDir(), 'store');
      fs.mkdirSync(root);
      fs.chmodSync(root, mode);
      const before = snapshotTree(root);
      expect(() => store(root)).toThrowError(expect.objectContaining({ kind: 'UnsafeStore', details: { reason: 'is writable by group or others' } }));
      expect(modeOf(root)).toBe(mode);
      expect(snapshotTree(root)).toEqual(before);
      expect(fs.readdirSync(root)).toEqual([]);
    }
    const root = tempDir();
    store(root);
    fs.chmodSync(path.join(root, 'sessions'), 0o770);
    expect(() => store(root)).toThrowError(expect.objectContaining({ kind: 'UnsafeStore' }));
    // a group-readable (not writable) root is allowed
    const readable = path.join(tempDir(), 'store');
    fs.mkdirSync(readable);
    fs.chmodSync(readable, 0o750);
    expect(() => store(readable)).not.toThrow();
  });

  it('a root that is a regular file', () => {
    const file = path.join(tempDir(), 'file');
    fs.writeFileSync(file, 'x');
    expect(() => store(file)).toThrowError(expect.objectContaining({ kind: 'UnsafeStore' }));
  });
});

describe('session ids', () => {
  const BAD = ['..', '../x', '.hidden', 'a/b', '', 'x'.repeat(129), 'séance', '日本語', 'emoji😀', 'a b', '.', 'a..b', '/abs', 'a\\b', 'a\u0000b', 'a\nb', '..\\x'];

  it.each(BAD.map((id) => [JSON.stringify(id), id]))('%s is InvalidSessionId for open, append, read and close', async (_, id) => {
    const base = tempDir();
    const root = path.join(base, 'store');
    await sessionWith(root, 1);
    const s = store(root);
    const before = snapshotTree(base);
    await storeError(s.open(id, 'write'), 'InvalidSessionId');
    await storeError(s.open(id, 'read'), 'InvalidSessionId');
    const err = await storeError(s.append(id, [note(1)]), 'InvalidSessionId');
    // a caller's bad id is never echoed: the message is the same for every bad id
    expect(err.message).toBe((await storeError(s.read('a/b'), 'InvalidSessionId')).message);
    await storeError(s.read(id), 'InvalidSessionId');
    await storeError(s.close(id), 'InvalidSessionId');
    expect(snapshotTree(base)).toEqual(before);
  });

  it('a valid id with no session is SessionNotFound', async () => {
    const root = tempDir();
    const s = store(root);
    for (const id of ['x'.repeat(128), '01HZZZZZZZZZZZZZZZZZZZZZZZ', 'a.b-c_d', 'journal.jsonl']) {
      await storeError(s.open(id, 'write'), 'SessionNotFound');
      await storeError(s.open(id, 'read'), 'SessionNotFound');
      await storeError(s.read(id), 'SessionNotFound');
      await storeError(s.append(id, [note(1)]), 'SessionNotFound');
      await storeError(s.close(id), 'SessionNotFound');
    }
    expect(fs.readdirSync(path.join(root, 'sessions'))).toEqual([]);
    expect(fs.readdirSync(path.join(root, 'index'))).toEqual([]);
  });
});

describe('a symlinked session directory', () => {
  it('is refused as UnsafeStore, for reading and writing', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.closeAll();
    const dir = path.join(root, 'sessions', sessionId);
    const elsewhere = path.join(tempDir(), 'moved');
    fs.renameSync(dir, elsewhere);
    fs.symlinkSync(elsewhere, dir);
    const t = store(root);
    await storeError(t.open(sessionId, 'write'), 'UnsafeStore');
    await storeError(t.read(sessionId), 'UnsafeStore');
  });
});
