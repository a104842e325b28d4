import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { ensurePrivateDir, mkdirPrivate, readPrivateSmall, replaceAtomically } from '../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import { KernelLock, kernelLocksAvailable } from './kernelLock.js';
import type { StoreLayout } from './layout.js';

/** Who holds a session's writer lease: shown to a second writer that is refused. */
export interface LeaseHolder {
  pid: number;
  hostname: string;
  startedAt: string;
}

interface HolderRecord extends LeaseHolder {
  /** Unique per acquisition: the fencing token every commit checks. */
  token: string;
  /** The holder also holds the session's kernel lock (locks/<id>.flock) for as long as it lives. */
  kernelLock?: boolean;
}

export const DEFAULT_LEASE_STALE_MS = 10_000;

/**
 * proper-lockfile, loaded on the first lease: it loads graceful-fs, which patches `fs` (~7 ms of
 * a cold start), and `initialize` or a read-only store never takes a lease.
 */
let loaded: Promise<typeof import('proper-lockfile')> | undefined;
function properLockfile(): Promise<typeof import('proper-lockfile')> {
  loaded ??= import('proper-lockfile').then((m) => m.default);
  return loaded;
}

/** Starts loading proper-lockfile now (a failure shows at the first lease instead). */
export function preloadLeases(): void {
  properLockfile().catch(() => {});
}

/**
 * A cross-process writer lease on one session, in two layers (STORAGE.md, "Fencing"):
 *
 * 1. The kernel lock (kernelLock.ts): flock on locks/<id>.flock, taken first and kept open for
 *    as long as the lease is held. The kernel drops it when the holder dies and never while it
 *    lives, so on one machine (any PID namespace) a live holder — stalled, stopped, compacting —
 *    is never taken over, and a dead one is taken over at once. While it is held, every write of
 *    this process is the current holder's: no check can be separated from its write by a stall.
 * 2. The lease directory (proper-lockfile: an atomic mkdir of locks/<id>.lock, its mtime
 *    refreshed while held) and its holder record: it names the holder for the refused, and it is
 *    what fences holders on other hosts sharing the store over a file system whose locks are not
 *    shared (there only the stale time can decide). Each acquisition writes a fresh token into
 *    it, and every commit first checks that the token is still ours. A lease found lost stays lost.
 */
export class SessionLease {
  private lost = false;

  private constructor(
    private readonly fsl: FsLayer,
    private readonly lockDir: string,
    private readonly record: HolderRecord,
    private readonly releaseLock: () => Promise<void>,
    private readonly kernel: KernelLock | undefined,
  ) {}

  /**
   * `underStoreLock`: the caller holds the store's kernel lock exclusively (a rekey), so no
   * sidecar serves the store from this machine and the sessions' kernel locks are not taken
   * (one helper process each); their lease directories still fence other hosts.
   */
  static async acquire(fsl: FsLayer, layout: StoreLayout, id: string, staleMs: number, underStoreLock = false): Promise<SessionLease> {
    ensurePrivateDir(fsl, layout.locksDir);
    if (underStoreLock) return SessionLease.acquireLeaseDir(fsl, layout, id, staleMs, undefined);
    const lockDir = layout.lockDir(id);
    let kernel: KernelLock | undefined;
    try {
      kernel = await KernelLock.tryAcquire(fsl, layout.kernelLock(id));
    } catch (err) {
      throw err instanceof UnsafeFileError ? unsafeLock(id, err) : leaseNotTaken(err);
    }
    // Held by a live process on this machine (or on a host whose locks this file system shares).
    if (kernel === undefined) throw locked(id, readHolder(fsl, lockDir));
    if (!kernelLocksAvailable()) {
      // No flock helper on this machine (kernelLock.ts): the lease directory alone fences, as on
      // a file system without shared locks.
      kernel.release();
      kernel = undefined;
    }
    try {
      return await SessionLease.acquireLeaseDir(fsl, layout, id, staleMs, kernel);
    } catch (err) {
      kernel?.release();
      throw err;
    }
  }

  private static async acquireLeaseDir(fsl: FsLayer, layout: StoreLayout, id: string, staleMs: number, kernel: KernelLock | undefined): Promise<SessionLease> {
    const lockDir = layout.lockDir(id);
    let lease: SessionLease | undefined;
    const lockfile = await properLockfile();
    const take = () => lockfile.lock(path.join(layout.locksDir, id), {
      stale: staleMs, realpath: false, retries: 0, lockfilePath: lockDir, fs: lockFs(fsl, () => lease === undefined || lease.owned()),
      onCompromised: () => lease?.markLost(),
    });
    let release: () => Promise<void>;
    try {
      release = await take();
    } catch (err) {
      if (err instanceof UnsafeFileError) throw unsafeLock(id, err);
      if (errnoOf(err) !== 'ELOCKED') throw leaseNotTaken(err);
      const holder = readHolder(fsl, lockDir);
      if (!(kernel ? leftByDeadHolder(holder) : holder ? heldByDeadProcess(holder) : acquirerDied(fsl, lockDir))) throw locked(id, holder);
      // Its holder died on this machine (a SIGKILL, a crash): no need to wait for the stale
      // time. With the kernel lock held no one else can be here; without kernel locks, if two
      // processes race here, the fencing token lets only the last one write.
      removeQuietly(fsl, lockDir);
      try {
        release = await take();
      } catch (again) {
        if (again instanceof UnsafeFileError) throw unsafeLock(id, again);
        if (errnoOf(again) !== 'ELOCKED') throw leaseNotTaken(again);
        throw locked(id, readHolder(fsl, lockDir));
      }
    }
    const record: HolderRecord = {
      pid: process.pid, hostname: os.hostname(), startedAt: new Date().toISOString(), token: randomBytes(12).toString('hex'),
      ...(kernel ? { kernelLock: true } : {}),
    };
    try {
      // A temp file (O_CREAT|O_EXCL|O_NOFOLLOW, 0600, random name) renamed over the holder name:
      // a symlink or FIFO planted there is refused (UnsafeFileError), never opened. Not synced:
      // the record coordinates live processes; after a crash its holder is dead anyway.
      await replaceAtomically(fsl, holderFile(lockDir), JSON.stringify(record), false);
    } catch (err) {
      // A full disk, say: give the lock back at once, or every later open — here and in every
      // other process — would meet a lock with no holder until this process exits. (A failed
      // replace leaves the name as it was: its temp file is removed, nothing was renamed.)
      await release().catch(() => undefined);
      throw err instanceof UnsafeFileError ? unsafeLock(id, err) : leaseNotTaken(err);
    }
    lease = new SessionLease(fsl, lockDir, record, release, kernel);
    return lease;
  }

  /** Identity of the holder file as we last verified it: unchanged means still ours (one lstat). */
  private verified = '';

  /** Before every commit: LeaseLost unless the lock still carries our token. */
  check(id: string): StoreError | undefined {
    if (!this.lost) {
      const st = this.fsl.lstatSync(holderFile(this.lockDir));
      const stamp = st ? `${st.ino}:${st.size}:${st.mtimeMs}` : '';
      if (stamp === '' || (stamp !== this.verified && readHolder(this.fsl, this.lockDir)?.token !== this.record.token)) this.markLost();
      else this.verified = stamp;
    }
    if (!this.lost) return undefined;
    return new StoreError('LeaseLost', `the writer lease on session ${id} was lost (taken over by another process); nothing was written and the session is read-only here`, {
      sessionId: id,
    });
  }

  /** Whether the lock is still ours to remove: not known lost, and the holder record carries our token. */
  owned(): boolean {
    return !this.lost && readHolder(this.fsl, this.lockDir)?.token === this.record.token;
  }

  /**
   * The lease is lost for good (taken over by a host our kernel lock does not reach, or its
   * refresh fell behind the stale time): nothing more is written under it, so the kernel lock is
   * given back at once and the next holder need not wait for this process to exit. It is released
   * only here, on this thread, never between a check and the write it guards (both synchronous).
   */
  markLost(): void {
    this.lost = true;
    this.kernel?.release();
  }

  /** As if this process had died: the lease is given up without waiting for anything. */
  abandon(): void {
    this.lost = true;
    removeQuietly(this.fsl, this.lockDir);
    this.kernel?.release();
  }

  /**
   * Gives the lease back: the holder record, then the lock directory. Only while the holder
   * record still carries our token — a holder that stalled past the stale time and never
   * committed since has not noticed a takeover, and the lock directory (same path) is the new
   * holder's now: removing it would let a third process in beside them. Then nothing is removed
   * (proper-lockfile's refresh timer finds the directory's mtime changed and stops by itself).
   * `removeKernelLock`: the session was purged for good under this lease, so its kernel lock
   * file goes too — unlinked while still held (KernelLock.unlinkHeld), then released: whoever
   * opened the old file finds, after locking it, that the path no longer names it.
   */
  async release(opts: { removeKernelLock?: boolean } = {}): Promise<void> {
    try {
      if (this.lost) return; // the lock belongs to another holder now: never remove theirs
      if (readHolder(this.fsl, this.lockDir)?.token !== this.record.token) {
        this.lost = true;
        return;
      }
      this.fsl.unlinkSync(holderFile(this.lockDir));
      await this.releaseLock();
    } catch {
      // already released or compromised: nothing of ours to remove
    } finally {
      // Last: whoever takes the kernel lock next finds the lease directory gone (or ours, left
      // by a failed removal: a holder with a kernel lock it no longer has, taken over at once).
      if (opts.removeKernelLock) this.kernel?.unlinkHeld(); // a no-op once lost (the lock was given back then)
      this.kernel?.release();
    }
  }
}

/**
 * The file system proper-lockfile uses (its `fs` option; it calls mkdir, stat, utimes and rmdir
 * on the lock directory, and creates no files). Its own default would mkdir with the umask's
 * mode (0777 & ~umask) and stat and utimes through a symlink. Here: mkdir goes through the
 * FsLayer with mode 0700 (mkdirPrivate: checked at creation, never chmodded); stat is an lstat
 * that refuses anything but a directory (a symlink planted at locks/<id>.lock is UnsafeStore,
 * never followed); utimes is lutimes (a symlink's own time, never its target's); rmdir cannot
 * follow a symlink. locks/ itself is owner-only (ensurePrivateDir), so no one else can swap the
 * directory between these calls.
 */
function lockFs(fsl: FsLayer, mayRemoveAtExit: () => boolean): object {
  type Callback = (err: Error | null, value?: unknown) => void;
  const wrap = (fn: (p: string) => unknown) => (p: string, ...rest: unknown[]) => {
    const cb = rest.pop() as Callback;
    let value: unknown;
    try {
      value = fn(p);
    } catch (err) {
      return cb(err as Error);
    }
    return cb(null, value);
  };
  const lstatDir = (p: string): fs.Stats => {
    const st = fsl.lstatSync(p);
    if (st === undefined) throw Object.assign(new Error('no lock directory'), { code: 'ENOENT' });
    if (st.isSymbolicLink()) throw new UnsafeFileError(p, 'is a symbolic link');
    if (!st.isDirectory()) throw new UnsafeFileError(p, 'is not a directory');
    return st;
  };
  return {
    mkdir: wrap((p) => mkdirPrivate(fsl, p)),
    stat: wrap(lstatDir),
    rmdir: wrap((p) => fsl.rmdirSync(p)),
    // Only proper-lockfile's exit handler calls this, for every lock it still counts as held —
    // also one a stalled holder has not yet noticed was taken over: never remove the new holder's.
    rmdirSync: (p: string) => {
      if (mayRemoveAtExit()) fsl.rmdirSync(p);
    },
    utimes: (p: string, atime: Date, mtime: Date, cb: Callback) => fs.lutimes(p, atime, mtime, (err) => cb(err)),
  };
}

function unsafeLock(id: string, err: UnsafeFileError): StoreError {
  return new StoreError('UnsafeStore', `the writer lease of session ${id} refused: ${path.basename(err.path)} ${err.reason}; nothing changed`, {
    sessionId: id, reason: err.reason,
  });
}

function leaseNotTaken(err: unknown): StoreError {
  const errno = errnoOf(err);
  return new StoreError('NotWritten', `the writer lease could not be taken (${errno ?? 'I/O error'}); nothing changed`, {
    stage: 'preCommit', ...(errno ? { errno } : {}),
  });
}

function locked(id: string, holder: HolderRecord | undefined): StoreError {
  return new StoreError('SessionLocked', `session ${id} is open for writing by another process`, {
    sessionId: id, ...(holder ? { holder: { pid: holder.pid, hostname: holder.hostname, startedAt: holder.startedAt } } : {}),
  });
}

/**
 * A lock without a holder record: its acquirer writes the record right after taking the lock,
 * so a lock that has been without one for a second was left by an acquirer killed in between.
 * (Were the holder alive after all, its next commit sees its token gone: LeaseLost, fail-stop.)
 */
const HOLDERLESS_GRACE_MS = 1000;

function acquirerDied(fsl: FsLayer, lockDir: string): boolean {
  const st = fsl.lstatSync(lockDir);
  return st !== undefined && Date.now() - st.mtimeMs > HOLDERLESS_GRACE_MS;
}

/**
 * We hold the session's kernel lock, so no live holder on this machine holds the lease: a
 * holder record from this host that says it held the kernel lock too (its process is gone,
 * whatever PID namespace it ran in), or no record at all (its acquirer died between the lock
 * and the record), is taken over at once. A holder on another host, or one of a version without
 * kernel locks, may live where our lock does not reach: its lease is taken after the stale time.
 */
function leftByDeadHolder(holder: HolderRecord | undefined): boolean {
  if (holder === undefined) return true;
  return holder.kernelLock === true && holder.hostname === os.hostname();
}

/** Only provable on this machine: the pid is gone (a reused pid only makes us wait for the stale time). */
function heldByDeadProcess(holder: HolderRecord): boolean {
  if (holder.hostname !== os.hostname() || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (err) {
    return errnoOf(err) === 'ESRCH';
  }
}

function removeQuietly(fsl: FsLayer, dir: string): void {
  try {
    fsl.rmdirSync(dir);
  } catch {
    // already gone, or taken again meanwhile: the retry decides
  }
}

/** Beside the lock directory (proper-lockfile removes the directory with rmdir: it must stay empty). */
function holderFile(lockDir: string): string {
  return `${lockDir}.holder.json`;
}

function readHolder(fsl: FsLayer, lockDir: string): HolderRecord | undefined {
  try {
    const text = readPrivateSmall(fsl, holderFile(lockDir), 4096);
    return text === undefined ? undefined : (JSON.parse(text) as HolderRecord);
  } catch {
    return undefined;
  }
}
