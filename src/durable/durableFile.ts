import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
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

/** Creates a new private file; fails if anything exists at that path. */
export function createPrivate(fsl: FsLayer, file: string): number {
  const fd = fsl.openSync(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, FILE_MODE);
  fsl.fchmodSync(fd, FILE_MODE); // ours: a restrictive umask must not leave it unreadable to us
  return fd;
}

/**
 * Ensures a private directory exists. A created directory is made durable by fsyncing its
 * parent; an existing one must be a real directory (not a symlink) that others cannot write.
 */
export function ensurePrivateDir(fsl: FsLayer, dir: string): void {
  const st = fsl.lstatSync(dir);
  if (st === undefined) {
    try {
      fsl.mkdirSync(dir, DIR_MODE);
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
export async function appendDurably(fsl: FsLayer, fd: number, buf: Buffer, position: number): Promise<void> {
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
  try {
    await fsl.fdatasync(fd);
  } catch (err) {
    throw new AppendFailure('uncertain', errnoOf(err));
  }
}

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
 * Replaces a small file atomically (temp file + rename) and fsyncs its directory, so the
 * new name survives a crash. `durable: false` skips both syncs for derived caches that are
 * validated against their source on every use.
 */
export async function replaceAtomically(fsl: FsLayer, file: string, data: string, durable: boolean): Promise<void> {
  await writeFileAtomic(file, data, { mode: FILE_MODE, fsync: durable });
  if (durable) syncAfterRename(fsl, path.dirname(file));
}

/** replaceAtomically, synchronously: for writes that must take effect in a queue's order. */
export function replaceAtomicallySync(fsl: FsLayer, file: string, data: string): void {
  writeFileAtomic.sync(file, data, { mode: FILE_MODE, fsync: true });
  syncAfterRename(fsl, path.dirname(file));
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
export function readPrivateSmall(fsl: FsLayer, file: string, maxBytes: number): string | undefined {
  let fd: number;
  try {
    fd = openPrivate(fsl, file, false);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const size = Math.min(fsl.fstatSync(fd).size, maxBytes);
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = fsl.readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    fsl.closeSync(fd);
  }
}
