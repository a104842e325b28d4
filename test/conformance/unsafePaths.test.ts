import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { type Plant, PLANTS, plant, stillPlanted, victim } from '../backends/file/fileSafety.js';
import { CLI, rejection, startSidecar } from './harness.js';

/**
 * The real binary over pipes, with symlinks and FIFOs planted at the paths it creates or opens
 * before it starts and while it serves: every such request is answered UnsafeStore (-31005),
 * the file outside the store is unchanged (bytes, mtime, ctime), nothing hangs on a FIFO, and
 * the sidecar goes on serving.
 */
const UNSAFE = { code: -31005, data: { kind: 'UnsafeStore' } };

describe('the sidecar refuses planted symlinks and FIFOs', { timeout: 30_000 }, () => {
  it.each(PLANTS)('lease holder, planted before it starts and while it serves (%s): session/open is refused', async (kind: Plant) => {
    const store = tempDir('sidecar-store-');
    const v = victim();
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({});
    await c.close(sessionId);
    const holder = path.join(store, 'locks', `${sessionId}.lock.holder.json`);
    plant(kind, holder, v); // while it serves
    expect(await rejection(c.open({ sessionId, mode: 'write' }))).toMatchObject(UNSAFE);
    expect(await c.shutdown()).toMatchObject({ code: 0 });
    const d = await startSidecar({ store }); // planted before it starts
    expect(await rejection(d.open({ sessionId, mode: 'write' }))).toMatchObject(UNSAFE);
    expect((await d.list()).sessions).toHaveLength(1); // still serving
    expect(await d.shutdown()).toMatchObject({ code: 0 });
    stillPlanted(kind, holder);
    v.untouched();
  });

  it.each(PLANTS)('state value, blob and scratch paths while it serves (%s)', async (kind: Plant) => {
    const store = tempDir('sidecar-store-');
    const v = victim();
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({ blobThreshold: 1024 });
    const dir = path.join(store, 'sessions', sessionId);
    plant(kind, path.join(dir, 'state', 'k.json'), v);
    expect(await rejection(c.setState(sessionId, 'k', 'v'))).toMatchObject(UNSAFE);
    expect(await rejection(c.getState(sessionId, 'k'))).toMatchObject(UNSAFE);
    const big = 'z'.repeat(3000);
    const hex = createHash('sha256').update(big).digest('hex');
    plant(kind, path.join(store, 'blobs', 'sha256', hex.slice(0, 2), hex), v);
    expect(await rejection(c.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: big }] } }] }))).toMatchObject(UNSAFE); // tool-call arguments: a BlobRef position
    plant(kind, path.join(dir, 'scratch'), v, kind === 'symlink' ? v.dir : v.file);
    expect(await rejection(c.allocateScratch({ sessionId, requestId: 'r1' }))).toMatchObject(UNSAFE);
    expect((await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'user', content: 'hi' } }] })).lastSeq).toBe(1); // nothing was written before
    expect(await c.shutdown()).toMatchObject({ code: 0 });
    v.untouched();
  });

  it.each(PLANTS)('journal, planted while it serves (%s): session/read and session/open are refused', async (kind: Plant) => {
    const store = tempDir('sidecar-store-');
    const v = victim();
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({});
    await c.close(sessionId);
    plant(kind, path.join(store, 'sessions', sessionId, 'journal.jsonl'), v);
    expect(await rejection(c.read({ sessionId }))).toMatchObject(UNSAFE);
    expect(await rejection(c.open({ sessionId, mode: 'write' }))).toMatchObject(UNSAFE);
    expect(await c.shutdown()).toMatchObject({ code: 0 });
    v.untouched();
  });

  it('the trash directory, a symlink to a directory outside: session/delete is refused and the session stays', async () => {
    const store = tempDir('sidecar-store-');
    const v = victim();
    const c = await startSidecar({ store });
    const { sessionId } = await c.create({});
    await c.close(sessionId);
    plant('symlink', path.join(store, 'trash'), v, v.dir);
    expect(await rejection(c.request('session/delete', { sessionId }))).toMatchObject(UNSAFE);
    expect((await c.list()).sessions.map((s) => s.sessionId)).toEqual([sessionId]);
    expect(await c.shutdown()).toMatchObject({ code: 0 });
    v.untouched();
  });
});

describe('the sidecar under a permissive umask', { timeout: 30_000 }, () => {
  it('run with umask 000, every file it made is 0600 and every directory 0700', async () => {
    const store = tempDir('sidecar-store-');
    const sh = `umask 000; exec "${process.execPath}" "${CLI}" "$@"`;
    const c = await startSidecar({ store, command: '/bin/sh', args: ['-c', sh, 'sh'] });
    const { sessionId } = await c.create({ blobThreshold: 1024 });
    await c.append({ sessionId, records: [{ kind: 'message', message: { role: 'assistant', toolCalls: [{ id: 'c1', name: 'edit', arguments: 'q'.repeat(2000) }] } }] }); // a blob
    await c.setState(sessionId, 'k', 1);
    await c.allocateScratch({ sessionId, requestId: 'r1' });
    await c.request('session/compact', { sessionId, summary: 's', throughSeq: 1 });
    const modes: string[] = [];
    const visit = (dir: string): void => {
      for (const name of fs.readdirSync(dir)) {
        const p = path.join(dir, name);
        const st = fs.lstatSync(p);
        const want = st.isDirectory() ? 0o700 : 0o600;
        if ((st.mode & 0o777) !== want) modes.push(`${path.relative(store, p)} ${(st.mode & 0o777).toString(8)}`);
        if (st.isDirectory()) visit(p);
      }
    };
    visit(store); // while it still holds its lease: the lock directory and holder record are there
    expect(fs.existsSync(path.join(store, 'locks', `${sessionId}.lock`))).toBe(true);
    expect(modes).toEqual([]);
    expect(await c.shutdown()).toMatchObject({ code: 0 });
  });
});
