import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { tempDir } from '../../helpers.js';
import { journalOf, note, storeError, toolCall } from './storeHelpers.js';

/**
 * The mode of every file and directory the store creates, checked AT CREATION (no window):
 * a layer lstats what each mkdirSync made and fstats what each creating openSync made, before
 * the store's next step, with the process umask at 0 (the most permissive: whatever mode the
 * store asks of open or mkdir is what it gets). Every entry found in the store afterwards must
 * have been created through the layer (so it was checked then: no library made it with its own
 * mode and chmodded it later), and no directory is ever chmodded.
 */

let umask = 0;
beforeEach(() => {
  umask = process.umask(0);
});
afterEach(() => {
  process.umask(umask);
});

function checkingFs() {
  const bad: string[] = [];
  const created = new Set<string>(); // dev:ino of what the layer created
  const key = (st: fs.Stats) => `${st.dev}:${st.ino}`;
  const fsl: FsLayer = {
    ...nodeFs,
    openSync(p, flags, mode) {
      const fd = nodeFs.openSync(p, flags, mode);
      if ((flags & fs.constants.O_CREAT) !== 0) {
        const st = fs.fstatSync(fd);
        if (!st.isFile() || (st.mode & 0o777) !== 0o600) bad.push(`${p} created with mode ${(st.mode & 0o777).toString(8)}`);
        created.add(key(st));
      }
      return fd;
    },
    mkdirSync(p, mode) {
      nodeFs.mkdirSync(p, mode);
      const st = fs.lstatSync(p);
      if (!st.isDirectory() || (st.mode & 0o777) !== 0o700) bad.push(`${p} created with mode ${(st.mode & 0o777).toString(8)}`);
      created.add(key(st));
    },
    fchmodSync(fd, mode) {
      if (fs.fstatSync(fd).isDirectory()) bad.push(`a directory chmodded to ${mode.toString(8)} after its creation`);
      nodeFs.fchmodSync(fd, mode);
    },
  };
  /** Every entry under root: created through the layer, and 0600 (files) or 0700 (directories) now. */
  const walk = (root: string, skip: (rel: string) => boolean = () => false): void => {
    const visit = (dir: string): void => {
      for (const name of fs.readdirSync(dir)) {
        const p = path.join(dir, name);
        const rel = path.relative(root, p);
        if (skip(rel)) continue;
        const st = fs.lstatSync(p);
        if (!created.has(key(st))) bad.push(`${rel} was not created through the FsLayer`);
        const want = st.isDirectory() ? 0o700 : 0o600;
        if ((st.mode & 0o777) !== want || !(st.isDirectory() || st.isFile())) bad.push(`${rel} has mode ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory()) visit(p);
      }
    };
    visit(root);
  };
  return { fsl, bad, walk };
}

describe('modes at creation time (umask 0)', { timeout: 30_000 }, () => {
  it('every file is created 0600 and every directory 0700 by the call that creates it, through every operation', async () => {
    const base = tempDir();
    const root = path.join(base, 'store');
    const { fsl, bad, walk } = checkingFs();
    const s = new FileSessionStore(root, { fs: fsl, leases: true, leaseStaleMs: 5000 });
    const { sessionId } = await s.create({ blobThreshold: 1024 }); // root, folders, .gitignore, lease (lock dir, holder), journal, index
    await s.append(sessionId, [note(1), toolCall('y'.repeat(4096))]); // a blob
    await s.setState(sessionId, 'k', { v: 1 }); // state/
    await s.allocateScratch(sessionId, 'r'); // scratch/tool-000001/tmp
    await s.compact(sessionId, { summary: 'sum', throughSeq: 1 }); // history/
    const { sessionId: forked } = await s.fork(sessionId);
    await s.closeAll();
    fs.appendFileSync(journalOf(root, forked), '{"seq":9'); // a torn tail: recovery/ on the next write open
    const t = new FileSessionStore(root, { fs: fsl, leases: true, leaseStaleMs: 5000 });
    expect((await t.open(forked, 'write')).recovered?.bytes).toBe(8);
    await t.delete(forked); // trash/
    await t.restore(forked);
    await t.closeAll();
    // the test itself made the journal's torn bytes (same inode): only the scratch runs' contents are the tools'
    walk(root, (rel) => /scratch\/tool-\d+\/tmp\/./.test(rel));
    expect(bad).toEqual([]);
    for (const dir of ['locks', 'history', 'trash', 'recovery', 'blobs', `sessions/${sessionId}/state`, `sessions/${sessionId}/scratch`]) {
      expect(fs.lstatSync(path.join(root, dir)).isDirectory(), dir).toBe(true); // the workload reached it
    }
  });

  it('a directory the umask would leave without owner access is refused (UnsafeStore), removed, never chmodded', async () => {
    const root = tempDir();
    const s = new FileSessionStore(root, { leases: true, leaseStaleMs: 5000 });
    const { sessionId } = await s.create({});
    await s.closeAll();
    process.umask(0o200); // mkdir(0700) gives 0500: the lock directory would be unusable to us
    const t = new FileSessionStore(root, { leases: true, leaseStaleMs: 5000 });
    const err = await storeError(t.open(sessionId, 'write'), 'UnsafeStore');
    expect(String(err.details.reason)).toMatch(/created with mode 500, expected 700/);
    expect(fs.existsSync(path.join(root, 'locks', `${sessionId}.lock`))).toBe(false);
    await t.closeAll();
  });
});
