import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { tempDir } from '../../helpers.js';
import { eio, faultFs, indexOf, journalOf, note, store, storeError } from './storeHelpers.js';

const openFds = () => fs.readdirSync('/proc/self/fd').length;

describe('opening for writing', () => {
  it('syncs the journal before answering, so lines a killed writer left unsynced are durable before they are reported', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    await s.close(sessionId);
    const indexBefore = fs.readFileSync(indexOf(root, sessionId));
    await s.open(sessionId, 'write');
    await s.append(sessionId, [note(2)]);
    await s.closeAll();
    fs.writeFileSync(indexOf(root, sessionId), indexBefore); // as if killed before the index caught up
    let journalSyncs = 0;
    const t = store(root, { fs: faultFs({ fsyncSync: (fd) => { if (fs.fstatSync(fd).isFile()) journalSyncs += 1; nodeFs.fsyncSync(fd); } }) });
    expect((await t.open(sessionId, 'write')).lastSeq).toBe(2);
    expect(journalSyncs).toBe(1);
    await t.closeAll();
  });

  it('concurrent read-to-write upgrades of one session leave one handle, no leaked descriptor', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.close(sessionId);
    const before = openFds();
    await s.open(sessionId, 'read');
    const results = await Promise.all([s.open(sessionId, 'write'), s.open(sessionId, 'write'), s.open(sessionId, 'write')]);
    expect(results.map((r) => r.mode)).toEqual(['write', 'write', 'write']);
    expect(openFds()).toBe(before + 1);
    await s.close(sessionId);
    expect(openFds()).toBe(before);
  });
});

describe('a fail-stopped session', () => {
  it('keeps showing only what was committed, also after session/close and in list', async () => {
    const root = tempDir();
    let failSync = false;
    const s = store(root, { fs: faultFs({ fdatasync: (fd) => (failSync ? Promise.reject(eio()) : nodeFs.fdatasync(fd)) }) });
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    failSync = true;
    await storeError(s.append(sessionId, [note(2)]), 'Uncertain');
    await s.close(sessionId);
    expect((await s.read(sessionId)).records.map((r) => r.i)).toEqual([1]);
    expect((await s.open(sessionId, 'read')).lastSeq).toBe(1);
    expect((await s.list()).sessions.map((x) => x.lastSeq)).toEqual([1]);
    await s.closeAll();
  });
});

describe('index entries are written by writers only', () => {
  it('a read or a list that had to scan the journal leaves the index alone; the next write open rewrites it', async () => {
    // A reader cannot know whether the bytes it scanned are durable (STORAGE.md, The index): it
    // must never make the index vouch for them.
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({ title: 'cached' });
    await s.append(sessionId, [note(1), note(2)]);
    await s.closeAll();
    for (const how of ['read', 'list'] as const) {
      fs.rmSync(indexOf(root, sessionId), { force: true });
      const t = store(root);
      if (how === 'read') expect((await t.read(sessionId, { afterSeq: 1 })).records.map((r) => r.seq)).toEqual([2]);
      else expect((await t.list()).sessions.map((x) => x.lastSeq)).toEqual([2]);
      await new Promise((r) => setTimeout(r, 50));
      expect(fs.existsSync(indexOf(root, sessionId)), how).toBe(false);
      await t.closeAll();
    }
    const w = store(root);
    await w.open(sessionId, 'write');
    await w.closeAll();
    const entry = JSON.parse(fs.readFileSync(indexOf(root, sessionId), 'utf8'));
    expect(entry).toMatchObject({ sessionId, lastSeq: 2, bytes: fs.statSync(journalOf(root, sessionId)).size, title: 'cached' });
  });
});

describe('store directories owned by another user', () => {
  it.skipIf(process.getuid?.() !== 0)('are refused as unsafe (needs root to chown)', () => {
    const base = tempDir();
    const root = path.join(base, 'foreign');
    fs.mkdirSync(root, { mode: 0o755 });
    fs.chownSync(root, 65534, 65534);
    expect(() => store(root)).toThrow(/owned by another user/);
  });
});

describe('a journal replaced under a live writer', () => {
  it('is detected before the next write: Conflict (journalChanged), nothing written to either file', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId } = await s.create({});
    await s.append(sessionId, [note(1)]);
    const file = journalOf(root, sessionId);
    const original = fs.readFileSync(file);
    // Another program replaces it: same prefix, grown, a new inode (write a copy, rename over).
    fs.writeFileSync(`${file}.other`, Buffer.concat([original, Buffer.from('')]), { mode: 0o600 });
    fs.renameSync(`${file}.other`, file);
    const replaced = fs.readFileSync(file);
    await storeError(s.append(sessionId, [note(2)]), 'Conflict');
    expect(fs.readFileSync(file).equals(replaced)).toBe(true);
    await storeError(s.append(sessionId, [note(3)]), 'ReadOnly');
    await s.closeAll();
  });
});
