import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers.js';
import { note, store, storeError } from './storeHelpers.js';

const leased = (root: string) => store(root, { leases: true });

describe('writer leases in one process', () => {
  it('a second store instance is refused with the holder; reading needs no lease; close releases it', async () => {
    const root = tempDir();
    const a = leased(root);
    const { sessionId } = await a.create({});
    const b = leased(root);
    const err = await storeError(b.open(sessionId, 'write'), 'SessionLocked');
    expect(err.details.holder).toMatchObject({ pid: process.pid });
    expect(fs.statSync(path.join(root, 'locks', `${sessionId}.lock`)).mode & 0o777).toBe(0o700);
    expect((await b.open(sessionId, 'read')).lastSeq).toBe(0);
    await a.close(sessionId);
    expect((await b.open(sessionId, 'write')).mode).toBe('write');
    await b.closeAll();
    await a.closeAll();
  });

  it('a lease taken over (its fencing token replaced) is LeaseLost before anything is written', async () => {
    const root = tempDir();
    const a = leased(root);
    const { sessionId } = await a.create({});
    await a.append(sessionId, [note(1)]);
    const holder = path.join(root, 'locks', `${sessionId}.lock.holder.json`);
    const record = JSON.parse(fs.readFileSync(holder, 'utf8'));
    fs.writeFileSync(holder, JSON.stringify({ ...record, token: 'someone-else' })); // as a stale takeover would
    const journal = fs.readFileSync(path.join(root, 'sessions', sessionId, 'journal.jsonl'));
    await storeError(a.append(sessionId, [note(2)]), 'LeaseLost');
    await storeError(a.append(sessionId, [note(3)]), 'ReadOnly');
    expect(fs.readFileSync(path.join(root, 'sessions', sessionId, 'journal.jsonl')).equals(journal)).toBe(true);
    await a.closeAll();
    expect(fs.existsSync(path.join(root, 'locks', `${sessionId}.lock`))).toBe(true); // never removes a lock it lost
  });

  it('abandon (a simulated crash) lets a new instance take the lease at once', async () => {
    const root = tempDir();
    const a = leased(root);
    const { sessionId } = await a.create({});
    a.abandon();
    const b = leased(root);
    expect((await b.open(sessionId, 'write')).mode).toBe('write');
    await b.closeAll();
  });

  it('deleting a session held by another writer is refused', async () => {
    const root = tempDir();
    const a = leased(root);
    const { sessionId } = await a.create({});
    await storeError(leased(root).delete(sessionId), 'SessionLocked');
    await a.closeAll();
  });
});

/**
 * The lease directory alone, as on a file system whose locks the writers do not share (NFS with
 * local locks, a host the kernel lock does not reach): only the stale time and the fencing token
 * decide there (STORAGE.md, "Fencing"). SESSION_SIDECAR_KERNEL_LOCKS=off stands for it.
 */
describe('writer leases without kernel locks (the stale-time path)', () => {
  const saved = process.env.SESSION_SIDECAR_KERNEL_LOCKS;
  beforeAll(() => {
    process.env.SESSION_SIDECAR_KERNEL_LOCKS = 'off';
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.SESSION_SIDECAR_KERNEL_LOCKS;
    else process.env.SESSION_SIDECAR_KERNEL_LOCKS = saved;
  });

  it('a real stale takeover (proper-lockfile) fences the stalled holder deterministically: its next commit is LeaseLost, the new holder writes', async () => {
    // Process A stalled past the stale time (its lock not refreshed: the lock directory's mtime is
    // set back), process B takes the lock over as proper-lockfile does (removes it, mkdir, writes
    // its own holder record with a fresh token). A's own refresh timer (every staleMs / 2) has not
    // run, so only the fencing-token comparison before A's commit can stop A: without it A
    // appends seq 2 under B's lease. Two store instances in one process stand for the two.
    const root = tempDir();
    const staleMs = 20_000;
    const a = store(root, { leases: true, leaseStaleMs: staleMs });
    const { sessionId } = await a.create({});
    await a.append(sessionId, [note(1)]);
    const lockDir = path.join(root, 'locks', `${sessionId}.lock`);
    const past = new Date(Date.now() - 2 * staleMs);
    fs.utimesSync(lockDir, past, past);
    const b = store(root, { leases: true, leaseStaleMs: staleMs });
    expect((await b.open(sessionId, 'write')).mode).toBe('write');
    const journal = fs.readFileSync(path.join(root, 'sessions', sessionId, 'journal.jsonl'));
    await storeError(a.append(sessionId, [note(2)]), 'LeaseLost');
    expect(fs.readFileSync(path.join(root, 'sessions', sessionId, 'journal.jsonl')).equals(journal)).toBe(true);
    expect(await b.append(sessionId, [note(3)])).toMatchObject({ firstSeq: 2, lastSeq: 2 });
    expect((await b.read(sessionId)).records.map((r) => (r as unknown as { i: number }).i)).toEqual([1, 3]);
    await a.closeAll();
    await b.closeAll();
    expect(fs.existsSync(lockDir)).toBe(false); // B released its lock; A never removed B's
  });

  it('a stalled holder that never noticed a takeover releases without touching the new holder\'s lock', async () => {
    // A never commits after B's takeover, so nothing told A its lease is gone: at close only the
    // token comparison in release() keeps A from unlinking B's holder record and lock directory.
    const root = tempDir();
    const staleMs = 20_000;
    const a = store(root, { leases: true, leaseStaleMs: staleMs });
    const { sessionId } = await a.create({});
    const lockDir = path.join(root, 'locks', `${sessionId}.lock`);
    const past = new Date(Date.now() - 2 * staleMs);
    fs.utimesSync(lockDir, past, past);
    const b = store(root, { leases: true, leaseStaleMs: staleMs });
    expect((await b.open(sessionId, 'write')).mode).toBe('write');
    const holder = fs.readFileSync(`${lockDir}.holder.json`, 'utf8');
    await a.closeAll();
    expect(fs.readFileSync(`${lockDir}.holder.json`, 'utf8')).toBe(holder);
    expect(fs.statSync(lockDir).isDirectory()).toBe(true);
    expect(await b.append(sessionId, [note(1)])).toMatchObject({ firstSeq: 1 }); // B's fence still holds
    await storeError(store(root, { leases: true, leaseStaleMs: staleMs }).open(sessionId, 'write'), 'SessionLocked');
    await b.closeAll();
  });

  it('a stalled holder that exits without closing leaves the new holder\'s lock in place (proper-lockfile\'s exit cleanup)', async () => {
    // proper-lockfile removes, at process exit, every lock it still counts as held — also one a
    // stalled holder has not yet noticed was taken over. A real second process holds the lease and
    // exits normally after this process took it over; the lock directory must survive its exit.
    const root = tempDir();
    const staleMs = 20_000;
    const { sessionId } = await store(root).create({});
    const fileStore = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../src/stores/fileStore.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `
      import { FileSessionStore } from ${JSON.stringify(fileStore)};
      const s = new FileSessionStore(${JSON.stringify(root)}, { leases: true, leaseStaleMs: ${staleMs} });
      await s.open(${JSON.stringify(sessionId)}, 'write');
      process.stdout.write('held\\n');
      process.stdin.once('data', () => process.exit(0)); // exits without closing the session
    `], { stdio: ['pipe', 'pipe', 'inherit'] });
    await once(child.stdout, 'data');
    const lockDir = path.join(root, 'locks', `${sessionId}.lock`);
    const past = new Date(Date.now() - 2 * staleMs);
    fs.utimesSync(lockDir, past, past); // the child stalled past the stale time
    const b = store(root, { leases: true, leaseStaleMs: staleMs });
    expect((await b.open(sessionId, 'write')).mode).toBe('write');
    child.stdin.write('exit\n');
    expect((await once(child, 'exit'))[0]).toBe(0);
    expect(fs.statSync(lockDir).isDirectory()).toBe(true);
    await storeError(store(root, { leases: true, leaseStaleMs: staleMs }).open(sessionId, 'write'), 'SessionLocked');
    expect(await b.append(sessionId, [note(1)])).toMatchObject({ firstSeq: 1 });
    await b.closeAll();
  });
});
