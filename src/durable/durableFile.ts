import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppendFailure, errnoOf, UnsafeFileError } from './errors.js';
import type { FsLayer } from './fsLayer.js';

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * Opens an existing private file. O_NOFOLLOW refuses a symlink; O_NONBLOCK makes a FIFO put in
 * place of the file fail the fstat check instead of hanging the server. The file must be a
 * regular file, owned by us, mode exactly 0600 — we never chmod a file we did not create.
 */
export function openPrivate(fsl: FsLayer, file: string, writable: boolean): number {
  let fd: number;
  try {
    fd = fsl.openSync(file, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if (errnoOf(err) === 'ELOOP') throw new UnsafeFileError(file, 'is a symbolic link');
    if (errnoOf(err) === 'EISDIR') throw new UnsafeFileError(file, 'is not a regular file'); // a writable open of a directory
    throw err;
  }
  try {
    checkPrivateFile(fsl.fstatSync(fd), file);
    return fd;
  } catch (err) {
    fsl.closeSync(fd);
    throw err;
  }
}

function checkPrivateFile(st: fs.Stats, file: string): void {
  if (!st.isFile()) throw new UnsafeFileError(file, 'is not a regular file');
  if ((st.mode & 0o777) !== FILE_MODE) throw new UnsafeFileError(file, `has mode ${(st.mode & 0o777).toString(8)}, expected 600`);
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new UnsafeFileError(file, 'is owned by another user');
}

/**
 * Creates a new private file: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, so nothing already at the
 * path — a planted symlink (O_EXCL never follows one, dangling or not), a FIFO, a stale file —
 * is ever opened; a symlink or anything not a regular file there is UnsafeFileError, anything
 * else EEXIST. The mode is right at creation: the umask can only remove bits from 0600, so group
 * and other never get any (checked on the new descriptor all the same, e.g. against a default
 * ACL); only owner bits a restrictive umask removed are added back, on our own descriptor.
 */
export function createPrivate(fsl: FsLayer, file: string): number {
  let fd: number;
  try {
    fd = fsl.openSync(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') refuseUnsafeEntry(fsl, file);
    throw err;
  }
  try {
    const mode = fsl.fstatSync(fd).mode & 0o777;
    if ((mode & 0o077) !== 0) throw new UnsafeFileError(file, `was created with mode ${mode.toString(8)}, expected 600`);
    if (mode !== FILE_MODE) fsl.fchmodSync(fd, FILE_MODE); // ours: a restrictive umask must not leave it unreadable to us
    return fd;
  } catch (err) {
    fsl.closeSync(fd);
    throw err;
  }
}

/** What sits at a path the store expected to be free or a regular file: UnsafeFileError unless it is one. */
function refuseUnsafeEntry(fsl: FsLayer, file: string): void {
  const st = fsl.lstatSync(file);
  if (st?.isSymbolicLink()) throw new UnsafeFileError(file, 'is a symbolic link');
  if (st && !st.isFile()) throw new UnsafeFileError(file, 'is not a regular file');
}

/**
 * Creates a private directory: mode 0700 given to mkdir itself, never chmodded later (a chmod
 * would leave a window in which others could enter it). The umask can only remove bits; the
 * result is checked at once, and a directory that is not exactly 0700 (group or other bits from
 * a default ACL, owner bits removed by a restrictive umask) is removed again and refused.
 * EEXIST passes through: the caller decides what an existing entry means.
 */
export function mkdirPrivate(fsl: FsLayer, dir: string): void {
  fsl.mkdirSync(dir, DIR_MODE); // 0o700 at mkdir; the mode is checked next, never chmodded
  const st = fsl.lstatSync(dir);
  const mode = st ? st.mode & 0o777 : 0;
  if (st?.isDirectory() && mode === DIR_MODE) return;
  try {
    fsl.rmdirSync(dir);
  } catch {
    // left for the operator: every later use refuses it again
  }
  throw new UnsafeFileError(dir, `was created with mode ${mode.toString(8)}, expected 700 (check the umask)`);
}

/**
 * Ensures a private directory exists. A created directory is made durable by fsyncing its
 * parent; an existing one must be a real directory (not a symlink) that others cannot write.
 */
export function ensurePrivateDir(fsl: FsLayer, dir: string): void {
  const st = fsl.lstatSync(dir);
  if (st === undefined) {
    try {
      mkdirPrivate(fsl, dir);
    } catch (err) {
      if (errnoOf(err) !== 'EEXIST') throw err;
      return ensurePrivateDir(fsl, dir);
    }
    fsyncDir(fsl, path.dirname(dir));
    return;
  }
  if (st.isSymbolicLink()) throw new UnsafeFileError(dir, 'is a symbolic link');
  if (!st.isDirectory()) throw new UnsafeFileError(dir, 'is not a directory');
  if ((st.mode & 0o022) !== 0) throw new UnsafeFileError(dir, 'is writable by group or others');
  if (typeof process.getuid === 'function' && st.uid !== process.getuid()) throw new UnsafeFileError(dir, 'is owned by another user');
}

/** Makes a directory's entries (created or renamed files) durable. */
export function fsyncDir(fsl: FsLayer, dir: string): void {
  const fd = fsl.openSync(dir, O_RDONLY | O_DIRECTORY);
  try {
    fsl.fsyncSync(fd);
  } finally {
    fsl.closeSync(fd);
  }
}

/**
 * Writes `buf` at `position` and fdatasyncs. Resolves only when the bytes are durable.
 * On a failed write the file is truncated back to `position` (the bytes were never
 * acknowledged, so removing them is safe). A failed fdatasync is never retried: the kernel
 * may have dropped the dirty pages and cleared the error, so a second fsync could lie.
 */
export async function appendDurably(fsl: FsLayer, fd: number, buf: Buffer, position: number, opts: { alone?: boolean } = {}): Promise<void> {
  let written = 0;
  try {
    while (written < buf.length) {
      const n = fsl.writeSync(fd, buf, written, buf.length - written, position + written);
      if (n <= 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
      written += n;
    }
  } catch (err) {
    // A write refused before any byte moved (the store's final secret gate) keeps its own error.
    if (written === 0 && (err as { refusedBeforeWrite?: boolean } | null)?.refusedBeforeWrite === true) throw err;
    throw rollBack(fsl, fd, position, written, err);
  }
  // Alone (nothing queued behind it) and no other sync of this process in the thread pool: sync
  // on this thread. Otherwise off-thread, so that requests arriving meanwhile — for this session
  // or any other — are read and grouped into the next write.
  const inline = opts.alone === true && syncsInFlight === 0;
  if (!inline) syncsInFlight += 1;
  try {
    await fsl.fdatasync(fd, inline);
  } catch (err) {
    throw new AppendFailure('uncertain', errnoOf(err));
  } finally {
    if (!inline) syncsInFlight -= 1;
  }
}

/** fdatasyncs of appends this process has running in the thread pool. */
let syncsInFlight = 0;

function rollBack(fsl: FsLayer, fd: number, position: number, written: number, cause: unknown): AppendFailure {
  try {
    if (written === 0 && fsl.fstatSync(fd).size === position) return new AppendFailure('notWritten', errnoOf(cause));
    fsl.ftruncateSync(fd, position);
    return new AppendFailure('rolledBack', errnoOf(cause));
  } catch {
    return new AppendFailure('uncertain', errnoOf(cause));
  }
}

/**
 * Replaces a small file atomically and fsyncs its directory, so the new name survives a crash.
 * `durable: false` skips both syncs for derived caches that are validated against their source
 * on every use.
 *
 * Done here rather than with write-file-atomic, which is unsafe for this: it resolves the target
 * with realpath (a symlink in place of the file redirects the write out of the store), names its
 * temp file after a hash of pid and a counter (predictable) and opens it 'w'
 * (O_CREAT|O_TRUNC, neither O_EXCL nor O_NOFOLLOW: a symlink planted at that name is followed and
 * its target truncated), and writes outside the FsLayer. Here the temp file is createPrivate'd
 * (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) under a name with 64 random bits, every byte goes through
 * fsl.writeSync, and the rename replaces the name itself (rename never follows a symlink at its
 * target). Something other than a regular file already at the target is UnsafeFileError:
 * refused, not replaced, so the operator sees what was planted.
 * Crash reasoning: the temp file is complete (and synced, when durable) before the rename, so
 * the name holds the old content or the new, never a mix; a leftover temp file is never read.
 */
export async function replaceAtomically(fsl: FsLayer, file: string, data: string, durable: boolean): Promise<void> {
  const temp = writeTemp(fsl, file, data);
  try {
    if (durable) await fsl.fdatasync(temp.fd);
  } catch (err) {
    discardTemp(fsl, temp);
    throw err;
  }
  renameTemp(fsl, temp, file);
  if (durable) syncAfterRename(fsl, path.dirname(file));
}

/** replaceAtomically (durable), synchronously: for writes that must take effect in a queue's order. */
export function replaceAtomicallySync(fsl: FsLayer, file: string, data: string): void {
  const temp = writeTemp(fsl, file, data);
  try {
    fsl.fsyncSync(temp.fd);
  } catch (err) {
    discardTemp(fsl, temp);
    throw err;
  }
  renameTemp(fsl, temp, file);
  syncAfterRename(fsl, path.dirname(file));
}

/** `<file>.<16 hex>.tmp`, beside the file (a rename stays in one directory). */
export function tempNameFor(file: string): string {
  return `${file}.${randomBytes(8).toString('hex')}.tmp`;
}

function writeTemp(fsl: FsLayer, file: string, data: string): { fd: number; path: string } {
  refuseUnsafeEntry(fsl, file);
  const temp = { path: tempNameFor(file), fd: -1 };
  temp.fd = createPrivate(fsl, temp.path);
  try {
    const buf = Buffer.from(data, 'utf8');
    for (let done = 0; done < buf.length; ) {
      const n = fsl.writeSync(temp.fd, buf, done, buf.length - done, done);
      if (n <= 0) throw Object.assign(new Error('short write'), { code: 'EIO' });
      done += n;
    }
    return temp;
  } catch (err) {
    discardTemp(fsl, temp);
    throw err;
  }
}

function renameTemp(fsl: FsLayer, temp: { fd: number; path: string }, file: string): void {
  fsl.closeSync(temp.fd);
  try {
    fsl.renameSync(temp.path, file);
  } catch (err) {
    unlinkQuietly(fsl, temp.path);
    throw err;
  }
}

function discardTemp(fsl: FsLayer, temp: { fd: number; path: string }): void {
  try {
    fsl.closeSync(temp.fd);
  } catch {
    // already closed
  }
  unlinkQuietly(fsl, temp.path);
}

function unlinkQuietly(fsl: FsLayer, file: string): void {
  try {
    fsl.unlinkSync(file);
  } catch {
    // never created, or the disk refuses: a temp name is never read
  }
}

/**
 * The directory fsync that makes a rename (or unlink) durable. Its failure comes after the
 * change is visible: the outcome is unknown (AppendFailure 'uncertain'), never "nothing changed".
 */
export function syncAfterRename(fsl: FsLayer, dir: string): void {
  try {
    fsyncDir(fsl, dir);
  } catch (err) {
    throw new AppendFailure('uncertain', errnoOf(err));
  }
}

/** Reads a whole small private file, or undefined when it does not exist. */
export function readPrivateSmallBytes(fsl: FsLayer, file: string, maxBytes: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openPrivate(fsl, file, false);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return readUpTo(fsl, fd, Math.min(fsl.fstatSync(fd).size, maxBytes));
  } finally {
    fsl.closeSync(fd);
  }
}

/** The first `size` bytes of an open file (fewer if it is shorter now): each byte returned was read into the buffer. */
export function readUpTo(fsl: FsLayer, fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const n = fsl.readSync(fd, buf, got, size - got, got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** readPrivateSmallBytes as UTF-8 text. */
export function readPrivateSmall(fsl: FsLayer, file: string, maxBytes: number): string | undefined {
  return readPrivateSmallBytes(fsl, file, maxBytes)?.toString('utf8');
}
