import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { tempDir } from '../../helpers.js';
import { eio, faultFs, journalOf, note, store, storeError } from './storeHelpers.js';

/**
 * A store whose journal writes can be failed on demand. `arm` installs a fault for the next
 * append only; the store itself is real and writes real files.
 */
async function armedSession(n = 3) {
  const root = tempDir();
  const calls = { writeSync: 0, ftruncateSync: 0, fdatasync: 0 };
  const faults: Partial<Record<keyof typeof calls, (...a: never[]) => unknown>> = {};
  const layer: FsLayer = faultFs({
    writeSync: (fd, buf, off, len, pos) => {
      calls.writeSync += 1;
      const f = faults.writeSync as FsLayer['writeSync'] | undefined;
      return f ? f(fd, buf, off, len, pos) : nodeFs.writeSync(fd, buf, off, len, pos);
    },
    ftruncateSync: (fd, len) => {
      calls.ftruncateSync += 1;
      const f = faults.ftruncateSync as FsLayer['ftruncateSync'] | undefined;
      return f ? f(fd, len) : nodeFs.ftruncateSync(fd, len);
    },
    fdatasync: (fd) => {
      calls.fdatasync += 1;
      const f = faults.fdatasync as FsLayer['fdatasync'] | undefined;
      return f ? f(fd) : nodeFs.fdatasync(fd);
    },
  });
  const s = store(root, { fs: layer });
  const { sessionId } = await s.create({});
  for (let i = 1; i <= n; i++) await s.append(sessionId, [note(i)]);
  const journal = journalOf(root, sessionId);
  const bytes = () => fs.readFileSync(journal);
  const reset = () => {
    for (const k of Object.keys(calls) as Array<keyof typeof calls>) calls[k] = 0;
  };
  reset();
  return { root, s, sessionId, journal, bytes, calls, faults, reset };
}

describe('append rollback under injected failures', () => {
  it('a write that fails before writing anything → NotWritten, bytes unchanged, session still writable', async () => {
    const t = await armedSession();
    const before = t.bytes();
    t.faults.writeSync = () => { throw eio('ENOSPC'); };
    const err = await storeError(t.s.append(t.sessionId, [note(4), note(5)]), 'NotWritten');
    expect(err.details.errno).toBe('ENOSPC');
    expect(t.bytes().equals(before)).toBe(true);
    expect(t.calls.fdatasync).toBe(0);
    expect(t.calls.ftruncateSync).toBe(0);

    delete t.faults.writeSync;
    expect(await t.s.append(t.sessionId, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    expect((await t.s.read(t.sessionId)).records.map((r) => r.i)).toEqual([1, 2, 3, 4]);
    await t.s.closeAll();
  });

  it('a write that writes part and then fails → RolledBack, bytes unchanged, next append gets the next seq', async () => {
    const t = await armedSession();
    const before = t.bytes();
    let n = 0;
    t.faults.writeSync = (fd: number, buf: Buffer, off: number, len: number, pos: number) => {
      n += 1;
      if (n === 1) return nodeFs.writeSync(fd, buf, off, Math.ceil(len / 2), pos);
      throw eio();
    };
    const err = await storeError(t.s.append(t.sessionId, [note(4), note(5), note(6)]), 'RolledBack');
    expect(err.details.errno).toBe('EIO');
    expect(n).toBe(2);
    expect(t.calls.ftruncateSync).toBe(1);
    expect(t.calls.fdatasync).toBe(0);
    expect(t.bytes().equals(before)).toBe(true);

    delete t.faults.writeSync;
    expect(await t.s.append(t.sessionId, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    expect(await t.s.append(t.sessionId, [note(5)], { expectedLastSeq: 4 })).toEqual({ firstSeq: 5, lastSeq: 5 });
    expect((await t.s.read(t.sessionId)).records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    await t.s.closeAll();

    const fresh = store(t.root);
    const opened = await fresh.open(t.sessionId, 'write');
    expect(opened.lastSeq).toBe(5);
    expect(opened.recovered).toBeUndefined();
    await fresh.closeAll();
  });

  it('a write failure whose truncate also fails → Uncertain, then ReadOnly; a fresh store repairs the tail', async () => {
    const t = await armedSession();
    const before = t.bytes();
    let written = 0;
    t.faults.writeSync = (fd: number, buf: Buffer, off: number, len: number, pos: number) => {
      if (written > 0) throw eio();
      written = nodeFs.writeSync(fd, buf, off, Math.ceil(len / 2), pos);
      return written;
    };
    t.faults.ftruncateSync = () => { throw eio(); };
    await storeError(t.s.append(t.sessionId, [note(4), note(5)]), 'Uncertain');
    delete t.faults.writeSync;
    delete t.faults.ftruncateSync;
    expect(t.calls.fdatasync).toBe(0);
    const writes = t.calls.writeSync;

    const ro = await storeError(t.s.append(t.sessionId, [note(4)]), 'ReadOnly');
    expect(ro.details.reason).toBe('failStop');
    await storeError(t.s.append(t.sessionId, [note(4)]), 'ReadOnly');
    expect(t.calls.writeSync).toBe(writes); // nothing more is written
    expect(t.calls.fdatasync).toBe(0);
    // the half-written batch is on disk, but readers of this process never see it
    expect(t.bytes().length).toBe(before.length + written);
    expect((await t.s.read(t.sessionId)).lastSeq).toBe(3);
    await t.s.closeAll();

    const fresh = store(t.root);
    const opened = await fresh.open(t.sessionId, 'write');
    expect(opened.lastSeq).toBe(3);
    expect(opened.recovered?.bytes).toBe(written);
    expect(fs.readFileSync(t.journal).equals(before)).toBe(true);
    expect(await fresh.append(t.sessionId, [note(4)])).toEqual({ firstSeq: 4, lastSeq: 4 });
    await fresh.closeAll();
  });

  it('a failed fdatasync (EIO) → Uncertain, never retried, later appends ReadOnly; a fresh store opens cleanly', async () => {
    const t = await armedSession();
    const before = t.bytes();
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    t.faults.fdatasync = async () => {
      await gate;
      throw eio();
    };
    // appends of one tick are committed by one write + sync: its failure fails all of them,
    // and the one sent while that sync runs is never written or synced
    const p1 = t.s.append(t.sessionId, [note(4)]);
    const p2 = t.s.append(t.sessionId, [note(5)]);
    await new Promise((r) => setTimeout(r, 5));
    const p3 = t.s.append(t.sessionId, [note(6), note(7)]);
    await new Promise((r) => setTimeout(r, 10));
    release();
    const e1 = await storeError(p1, 'Uncertain');
    expect(e1.details.errno).toBe('EIO');
    await storeError(p2, 'Uncertain');
    await storeError(p3, 'ReadOnly');
    delete t.faults.fdatasync; // a healthy disk again: the store must still not sync this fd again

    await storeError(t.s.append(t.sessionId, [note(8)]), 'ReadOnly');
    await storeError(t.s.append(t.sessionId, [note(8)], { expectedLastSeq: 3 }), 'ReadOnly');
    expect(t.calls.fdatasync).toBe(1);
    expect(t.calls.writeSync).toBe(1);
    const page = await t.s.read(t.sessionId);
    expect(page.lastSeq).toBe(3);
    expect(page.records.map((r) => r.seq)).toEqual([1, 2, 3]);
    // fail-stop holds for this store instance: not by reopening, not after a close
    expect((await t.s.open(t.sessionId, 'read')).mode).toBe('read');
    await storeError(t.s.open(t.sessionId, 'write'), 'ReadOnly');
    await t.s.close(t.sessionId);
    await storeError(t.s.open(t.sessionId, 'write'), 'ReadOnly');
    await t.s.closeAll();
    expect(t.calls.fdatasync).toBe(1);

    // the written line reached the file (only its durability was unknown): a new process finds
    // a complete, valid journal and nothing to repair
    const after = fs.readFileSync(t.journal);
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const fresh = store(t.root);
    const opened = await fresh.open(t.sessionId, 'write');
    expect(opened.recovered).toBeUndefined();
    expect(opened.lastSeq).toBe(5);
    expect(await fresh.append(t.sessionId, [note(6)])).toEqual({ firstSeq: 6, lastSeq: 6 });
    expect((await fresh.read(t.sessionId)).records.map((r) => r.i)).toEqual([1, 2, 3, 4, 5, 6]);
    await fresh.closeAll();
  });

  it('a failure while another session is being written does not touch the other session', async () => {
    const t = await armedSession(1);
    const { sessionId: other } = await t.s.create({});
    await t.s.append(other, [note(1)]);
    t.faults.fdatasync = async () => { throw eio(); };
    await storeError(t.s.append(t.sessionId, [note(2)]), 'Uncertain');
    delete t.faults.fdatasync;
    expect(await t.s.append(other, [note(2)])).toEqual({ firstSeq: 2, lastSeq: 2 });
    await storeError(t.s.append(t.sessionId, [note(2)]), 'ReadOnly');
    await t.s.closeAll();
  });

  it('a fail-stopped session gives its lease back at once: another writer takes it over while this process lives, and finds every acknowledged record', async () => {
    const root = tempDir();
    let failSync = false;
    const layer = faultFs({ fdatasync: (fd) => (failSync ? Promise.reject(eio()) : nodeFs.fdatasync(fd)) });
    const a = store(root, { fs: layer, leases: true });
    const { sessionId } = await a.create({});
    await a.append(sessionId, [note(1)]);
    failSync = true;
    await storeError(a.append(sessionId, [note(2)]), 'Uncertain');
    // Without the release the lease (its kernel lock) stays with `a` until the process exits.
    const b = store(root, { leases: true });
    expect((await b.open(sessionId, 'write')).mode).toBe('write');
    const after = await b.append(sessionId, [note(3)]);
    expect((await b.read(sessionId)).records.map((r) => r.i)).toEqual(after.firstSeq === 3 ? [1, 2, 3] : [1, 3]);
    await storeError(a.append(sessionId, [note(9)]), 'ReadOnly');
    await b.closeAll();
    await a.closeAll();
  });
});
