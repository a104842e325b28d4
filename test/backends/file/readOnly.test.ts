import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../../src/stores/fileStore.js';
import { snapshotTree, tempDir } from '../../helpers.js';
import { indexOf, message, sessionWith, store, storeError } from './storeHelpers.js';

describe('a read-only store (inspection)', () => {
  it('reads, lists and contexts without changing a byte, even with a stale index', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 3);
    const w = store(root);
    await w.open(id, 'write');
    await w.append(id, [message('user', 'after the index')]);
    w.abandon(); // killed: the index entry is behind the journal
    fs.rmSync(indexOf(root, id));
    const before = snapshotTree(root);
    const r = new FileSessionStore(root, { readOnly: true });
    expect((await r.list()).sessions.map((s) => s.lastSeq)).toEqual([4]);
    expect((await r.read(id)).records).toHaveLength(4);
    expect((await r.open(id, 'read')).lastSeq).toBe(4);
    await r.context(id);
    await r.closeAll();
    expect(snapshotTree(root)).toEqual(before);
  });

  it('refuses every write, and a store that does not exist', async () => {
    const root = tempDir();
    const id = await sessionWith(root, 1);
    const r = new FileSessionStore(root, { readOnly: true });
    await storeError(r.create({}), 'ReadOnly');
    await storeError(r.open(id, 'write'), 'ReadOnly');
    await storeError(r.fork(id), 'ReadOnly');
    await storeError(r.delete(id), 'ReadOnly');
    await storeError(r.restore(id), 'ReadOnly');
    await storeError(r.append(id, [message('user', 'x')]), 'ReadOnly');
    const missing = path.join(tempDir(), 'nowhere');
    await storeError(() => new FileSessionStore(missing, { readOnly: true }), 'SessionNotFound');
    expect(fs.existsSync(missing)).toBe(false);
  });
});
