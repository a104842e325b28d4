import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createPrivate } from '../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';

/**
 * A kernel-held lock on a lock file: flock(2) on an open file description this process keeps
 * open for as long as it holds the lock (STORAGE.md, "Fencing").
 *
 * Invariants, and why they are enough:
 * - The lock belongs to the open file description, not to a process or thread: it is held
 *   exactly while our descriptor is open. The kernel closes it when this process dies, however
 *   it dies (SIGKILL, OOM), so a dead holder's lock is free at once; a live process keeps it
 *   however long it is stopped or stalled (SIGSTOP, a blocked event loop, a slow disk), and in
 *   whichever PID, mount or UTS namespace the contender runs, as long as both see the same file
 *   on the same kernel (or on NFSv4, which serves flock as a whole-file lock of the server's).
 * - Node has no flock(2). The lock is taken by a short-lived helper given our descriptor as its
 *   fd 3 (`flock -n -x 3`, or perl's flock where util-linux is missing): the helper's fd 3 is the
 *   same open file description, so the lock it takes is ours and stays when the helper exits.
 * - Node opens files O_CLOEXEC: no other child of this process inherits the descriptor (and so
 *   the lock). The helper inherits it only as its explicit fd 3, and exits at once. It runs in a
 *   session of its own, so signals from our terminal (Ctrl-C, Ctrl-Z) never reach it.
 * - A lock file is never removed except by its holder under the lock (a purge). Whoever locked
 *   a removed file holds nothing: after taking the lock, the path must still name the locked
 *   file (same dev and inode), or the lock is dropped and taken again on the new file.
 */
export class KernelLock {
  private constructor(private readonly fsl: FsLayer, private fd: number | undefined, readonly path: string) {}

  /**
   * The lock on `file` (created 0600, O_NOFOLLOW, if absent), or undefined when another open
   * file description holds it (exclusive: any other holder; shared: an exclusive one).
   * Throws UnsafeFileError for a lock file that is a symlink, not a regular file, or not ours.
   */
  static async tryAcquire(fsl: FsLayer, file: string, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<KernelLock | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const fd = openLockFile(fsl, file);
      let taken: boolean;
      try {
        taken = await lockFd(fd, mode);
      } catch (err) {
        fsl.closeSync(fd);
        throw err;
      }
      if (!taken) {
        fsl.closeSync(fd);
        return undefined;
      }
      if (sameFile(fsl, fd, file)) return new KernelLock(fsl, fd, file);
      fsl.closeSync(fd); // its holder removed it under the lock (a purge): lock the file the path names now
    }
    throw Object.assign(new Error(`the lock file ${file} keeps being replaced`), { code: 'EAGAIN' });
  }

  /** Whether this process still holds the lock (it holds it until release). */
  get held(): boolean {
    return this.fd !== undefined;
  }

  /**
   * Removes the lock file while still holding the lock (a purge of the session it guards):
   * anyone blocked on the old file finds, after locking it, that the path no longer names it.
   */
  unlinkHeld(): void {
    if (this.fd === undefined) return;
    try {
      this.fsl.unlinkSync(this.path);
    } catch {
      // already gone: nothing names it
    }
  }

  /** Gives the lock back: closing our descriptor is what releases it. */
  release(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    this.fsl.closeSync(fd);
  }
}

/** Which helper takes the lock on our descriptor, found once: util-linux flock, else perl, else none. */
type Helper = { command: string; args: (mode: 'exclusive' | 'shared') => string[] } | null;
let found: Helper | undefined;

const PERL = 'use Fcntl qw(:flock); open(my $f, "+<&=", 3) or exit 2; exit(flock($f, $ARGV[0] eq "s" ? LOCK_SH|LOCK_NB : LOCK_EX|LOCK_NB) ? 0 : 1)';

function findHelper(): Helper {
  // Off: as on a file system whose locks are not shared between the writers (documented; the
  // tests of the stale-time path set it).
  if (process.env.SESSION_SIDECAR_KERNEL_LOCKS === 'off') return null;
  if (found !== undefined) return found;
  let helper: Helper;
  const onPath = (name: string) => (process.env.PATH ?? '').split(':').some((dir) => {
    try {
      fs.accessSync(`${dir || '.'}/${name}`, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (onPath('flock')) helper = { command: 'flock', args: (mode) => ['-n', mode === 'shared' ? '-s' : '-x', '3'] };
  else if (onPath('perl')) helper = { command: 'perl', args: (mode) => ['-e', PERL, mode === 'shared' ? 's' : 'x'] };
  else helper = null;
  return (found = helper);
}

/** Whether kernel locks can be taken here (no helper: the lease's stale time alone decides). */
export function kernelLocksAvailable(): boolean {
  return findHelper() !== null;
}

/** How often a helper killed by a signal is run again before the lock counts as not takeable (EIO). */
const HELPER_SIGNAL_ATTEMPTS = 10;

async function lockFd(fd: number, mode: 'exclusive' | 'shared'): Promise<boolean> {
  const h = findHelper();
  if (h === null) return true; // no kernel locks on this machine: documented, the lease alone fences
  // A helper killed by a signal is run again on the same descriptor. Safe either way: killed
  // before its flock, nothing was taken; killed after it, the lock is already on our open file
  // description, and flock on a description that holds the lock succeeds again.
  for (let attempt = 1; ; attempt++) {
    const outcome = await runHelper(h, fd, mode);
    if (typeof outcome === 'boolean') return outcome;
    if (outcome.signal === null || attempt === HELPER_SIGNAL_ATTEMPTS) {
      throw Object.assign(new Error(`the lock helper ${h.command} failed (${outcome.signal ?? `exit ${outcome.code}`})`), { code: 'EIO' });
    }
  }
}

/** true: locked; false: held elsewhere; otherwise how the helper ended. */
function runHelper(h: NonNullable<Helper>, fd: number, mode: 'exclusive' | 'shared'): Promise<boolean | { code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    // detached: the helper runs in a session of its own (setsid), outside the terminal's
    // foreground process group, so a Ctrl-C (SIGINT), Ctrl-Z (SIGTSTP) or hang-up meant for this
    // process does not reach it for most of its life (the lease would fail with EIO, or hang
    // until `fg`). A signal that lands between its fork and its setsid is what the retry is for.
    const child = spawn(h.command, h.args(mode), { stdio: ['ignore', 'ignore', 'ignore', fd], env: {}, detached: true });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code === 0 ? true : code === 1 ? false : { code, signal }));
  });
}

function openLockFile(fsl: FsLayer, file: string): number {
  const { O_RDWR, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  let fd: number;
  try {
    fd = createPrivate(fsl, file); // O_CREAT|O_EXCL|O_NOFOLLOW, 0600
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw err;
    try {
      // An existing one: never through a symlink, never blocking on a FIFO (refused below).
      fd = fsl.openSync(file, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
    } catch (again) {
      if (errnoOf(again) === 'ELOOP') throw new UnsafeFileError(file, 'is a symbolic link');
      throw again;
    }
  }
  const st = fsl.fstatSync(fd);
  const uid = process.getuid?.();
  const problem = !st.isFile() ? 'is not a regular file'
    : uid !== undefined && st.uid !== uid ? 'is not owned by this user'
      : (st.mode & 0o077) !== 0 ? 'is readable or writable by others' : undefined;
  if (problem) {
    fsl.closeSync(fd);
    throw new UnsafeFileError(file, problem);
  }
  return fd;
}

function sameFile(fsl: FsLayer, fd: number, file: string): boolean {
  const held = fsl.fstatSync(fd);
  const named = fsl.lstatSync(file);
  return named !== undefined && named.ino === held.ino && named.dev === held.dev;
}
