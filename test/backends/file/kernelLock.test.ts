import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { UnsafeFileError } from '../../../src/durable/errors.js';
import { KernelLock, kernelLocksAvailable } from '../../../src/backends/file/kernelLock.js';
import { tempDir } from '../../helpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const lockIn = (dir: string) => path.join(dir, 'x.flock');

/** One process that takes the lock with flock(1) on its fd 9 and holds it until killed (sh execs into sleep). */
async function holderProcess(file: string) {
  const child = spawn('sh', ['-c', 'exec 9<>"$1" && flock -n -x 9 && echo held && exec sleep 600', 'sh', file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  expect(chunk.toString()).toBe('held\n');
  return child;
}

describe('the kernel lock (flock on a descriptor this process keeps)', () => {
  it('is available on this machine (util-linux flock or perl)', () => {
    expect(kernelLocksAvailable()).toBe(true);
  });

  it('is exclusive between two open file descriptions of one process, and free again once released', async () => {
    const file = lockIn(tempDir());
    const a = await KernelLock.tryAcquire(nodeFs, file);
    expect(a?.held).toBe(true);
    expect(await KernelLock.tryAcquire(nodeFs, file)).toBeUndefined();
    expect(await KernelLock.tryAcquire(nodeFs, file, 'shared')).toBeUndefined();
    a?.release();
    expect(a?.held).toBe(false);
    const b = await KernelLock.tryAcquire(nodeFs, file);
    expect(b?.held).toBe(true);
    b?.release();
  });

  it('shared locks coexist and keep an exclusive one out', async () => {
    const file = lockIn(tempDir());
    const s1 = await KernelLock.tryAcquire(nodeFs, file, 'shared');
    const s2 = await KernelLock.tryAcquire(nodeFs, file, 'shared');
    expect(s1 && s2).toBeTruthy();
    expect(await KernelLock.tryAcquire(nodeFs, file, 'exclusive')).toBeUndefined();
    s1?.release();
    expect(await KernelLock.tryAcquire(nodeFs, file, 'exclusive')).toBeUndefined();
    s2?.release();
    (await KernelLock.tryAcquire(nodeFs, file, 'exclusive'))?.release();
  });

  it('another process holding it keeps us out while it lives and lets us in the moment it is killed', async () => {
    const file = lockIn(tempDir());
    fs.writeFileSync(file, '', { mode: 0o600 });
    const other = await holderProcess(file);
    expect(await KernelLock.tryAcquire(nodeFs, file)).toBeUndefined();
    other.kill('SIGSTOP'); // stopped, not dead: still held
    expect(await KernelLock.tryAcquire(nodeFs, file)).toBeUndefined();
    other.kill('SIGKILL');
    await once(other, 'exit');
    const ours = await KernelLock.tryAcquire(nodeFs, file);
    expect(ours?.held).toBe(true);
    ours?.release();
  });

  it('is held by our descriptor, not by the helper that took it: another process is refused after the helper exited', async () => {
    const file = lockIn(tempDir());
    const ours = await KernelLock.tryAcquire(nodeFs, file);
    const probe = spawn('flock', ['-n', '-x', file, 'true'], { stdio: 'ignore' });
    const [code] = (await once(probe, 'exit')) as [number];
    expect(code).toBe(1);
    ours?.release();
    const again = spawn('flock', ['-n', '-x', file, 'true'], { stdio: 'ignore' });
    expect((await once(again, 'exit'))[0]).toBe(0);
  });

  it('creates the lock file 0600 and refuses a symlink, a FIFO or a file open to others planted at its name', async () => {
    const dir = tempDir();
    const file = lockIn(dir);
    (await KernelLock.tryAcquire(nodeFs, file))?.release();
    expect(fs.lstatSync(file).mode & 0o777).toBe(0o600);
    const target = path.join(dir, 'target');
    fs.writeFileSync(target, '');
    fs.chmodSync(target, 0o600);
    const link = path.join(dir, 'link.flock');
    fs.symlinkSync(target, link);
    await expect(KernelLock.tryAcquire(nodeFs, link)).rejects.toBeInstanceOf(UnsafeFileError);
    const open = path.join(dir, 'open.flock');
    fs.writeFileSync(open, '');
    fs.chmodSync(open, 0o644);
    await expect(KernelLock.tryAcquire(nodeFs, open)).rejects.toBeInstanceOf(UnsafeFileError);
    const fifo = path.join(dir, 'fifo.flock');
    spawn('mkfifo', ['-m', '600', fifo]);
    await new Promise((r) => setTimeout(r, 200));
    await expect(KernelLock.tryAcquire(nodeFs, fifo)).rejects.toBeInstanceOf(UnsafeFileError);
  });

  it('a lock file removed by its holder under the lock is never what a waiter ends up holding', async () => {
    const file = lockIn(tempDir());
    const a = await KernelLock.tryAcquire(nodeFs, file);
    const oldIno = fs.statSync(file).ino;
    a?.unlinkHeld();
    // A second file at the name: whoever locks it holds the lock on what the path names now.
    const b = await KernelLock.tryAcquire(nodeFs, file);
    expect(b?.held).toBe(true);
    expect(fs.statSync(file).ino).not.toBe(oldIno);
    a?.release();
    b?.release();
  });

  it('a waiter that opened the lock file before its holder removed it never ends up holding the removed file', async () => {
    const file = lockIn(tempDir());
    const a = await KernelLock.tryAcquire(nodeFs, file);
    // Our open of the old file happens first; then the holder removes it under the lock and lets go.
    let raced = false;
    const racing = {
      ...nodeFs,
      openSync: (p: string, flags: number, mode?: number) => {
        const fd = nodeFs.openSync(p, flags, mode);
        if (!raced && p === file) {
          raced = true;
          a?.unlinkHeld();
          a?.release();
        }
        return fd;
      },
    };
    const b = await KernelLock.tryAcquire(racing, file);
    expect(raced).toBe(true);
    expect(b?.held).toBe(true);
    // What the path names now is locked by b: another process is refused it.
    const probe = spawn('flock', ['-n', '-x', file, 'true'], { stdio: 'ignore' });
    expect((await once(probe, 'exit'))[0]).toBe(1);
    b?.release();
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a lock file owned by another user', async () => {
    const file = lockIn(tempDir());
    fs.writeFileSync(file, '', { mode: 0o600 });
    fs.chownSync(file, 65534, 65534);
    await expect(KernelLock.tryAcquire(nodeFs, file)).rejects.toBeInstanceOf(UnsafeFileError);
  });

  it('Ctrl-C after Ctrl-C sent to the whole foreground process group never fails an acquisition (no EIO from a helper killed halfway)', async () => {
    const r = await lockingUnderGroupSignals('SIGINT');
    expect(r.sent, r.out).toBeGreaterThan(20);
    expect(r.out).toMatch(/^ok [1-9]\d+$/m);
    expect(r.out).not.toMatch(/failed at/);
  }, 120_000);

  it('Ctrl-Z after Ctrl-Z sent to the process group (handled by the process) never stops a helper, so no acquisition hangs', async () => {
    const r = await lockingUnderGroupSignals('SIGTSTP');
    expect(r.sent, r.out).toBeGreaterThan(20);
    expect(r.out, 'an acquisition hung: a helper was stopped').toMatch(/^ok [1-9]\d+$/m);
  }, 120_000);
});

/**
 * Runs lockUnderSignals.ts for 1.5 s as a job of a job-control shell (bash with `set -m`, in a
 * session of its own): a process group of its own whose parent is in the same session, as a
 * terminal's foreground job is (a group whose parent is elsewhere is orphaned, and the kernel
 * drops a Ctrl-Z sent to it). `signal` goes to that whole group every 20 ms (many land on a
 * helper's short life, rarely twice on one). Killed, with its group, after 20 s.
 */
async function lockingUnderGroupSignals(signal: 'SIGINT' | 'SIGTSTP'): Promise<{ sent: number; out: string }> {
  const dir = tempDir();
  const job = [process.execPath, '--import', 'tsx', path.join(HERE, 'lockUnderSignals.ts'), dir, '1500', signal];
  const shell = spawn('bash', ['-c', 'set -m; "$@" & wait $!', 'bash', ...job], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  shell.stderr.on('data', (c: Buffer) => (out += c.toString())); // the job's errors, and bash's job notices
  shell.stdout.on('data', (c: Buffer) => (out += c.toString()));
  while (!/ready \d+/.test(out)) await new Promise((r) => setTimeout(r, 20));
  const pgid = Number(/ready (\d+)/.exec(out)?.[1]); // the job leads its group
  let sent = 0;
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pgid, sig);
      return true;
    } catch {
      return false; // the group is gone: the job and its helpers have exited
    }
  };
  // Not once the job has reported: past its loop, exiting, it no longer handles the signal.
  const timer = setInterval(() => void (!/ok|failed/.test(out) && group(signal) && sent++), 20);
  const deadline = setTimeout(() => group('SIGKILL'), 20_000);
  await once(shell, 'exit');
  clearInterval(timer);
  clearTimeout(deadline);
  group('SIGKILL'); // a helper stopped in the group would otherwise outlive the test
  return { sent, out };
}
