import { createHash, randomBytes } from 'node:crypto';
import { digestOf, HEX64, REF_PREFIX, refOf } from '../../../domain/blobRefs.js';
import path from 'node:path';
import { createPrivate, ensurePrivateDir, fsyncDir, openPrivate, readUpTo } from '../../../durable/durableFile.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import type { StoreLayout } from '../layout.js';
import { fileAad, storeKeyOf } from '../journal/cipher.js';
import { openBytes, sealBytes } from '../sealedFile.js';

/**
 * Content-addressed blobs, one file per distinct content per store: blobs/sha256/<2 hex>/<64 hex>.
 * Invariants: a blob file appears under its final name only complete and synced (temp file,
 * fdatasync, rename, directory fsync), so a record that references it — written after — never
 * points at a partial blob; its name is the sha256 of its bytes, checked on every full read.
 * A crash before the rename leaves a temp file under blobs/tmp/ (never read; verify reports it);
 * a crash after it leaves a blob no record references (harmless; verify lists it).
 */
export function blobPath(layout: StoreLayout, hex: string): string {
  return path.join(layout.blobsDir, 'sha256', hex.slice(0, 2), hex);
}

function mustDigest(ref: string): string {
  const hex = digestOf(ref);
  if (!hex) throw new StoreError('InvalidArgument', 'a blob ref must be sha256:<64 lowercase hex digits>', { path: 'ref' });
  return hex;
}

/** Size of a stored blob, or undefined when there is none. */
export function blobSize(fsl: FsLayer, layout: StoreLayout, ref: string): number | undefined {
  const st = fsl.lstatSync(blobPath(layout, mustDigest(ref)));
  if (st && !st.isFile()) throw unsafeBlob(ref, st.isSymbolicLink() ? 'file is a symbolic link' : 'file is not a regular file');
  if (st && storeKeyOf(fsl)) return readBlob(fsl, layout, ref).size; // a sealed blob's size is its plaintext's
  return st?.size;
}

/**
 * Encryption at rest: a blob file holds its content sealed (sealedFile.ts), bound to its digest;
 * the name stays the sha256 of the plaintext (STORAGE.md: the digest of a blob is visible).
 */
function blobAad(hex: string): string {
  return fileAad('blob', hex);
}

/** Stores `bytes` durably (once per store) and returns its ref. */
export async function putBlob(fsl: FsLayer, layout: StoreLayout, plain: Buffer): Promise<string> {
  const ref = refOf(plain);
  const hex = ref.slice(REF_PREFIX.length);
  const final = blobPath(layout, hex);
  const bytes = sealBytes(fsl, blobAad(hex), plain); // after the final gate's check of the plaintext (a sealed size is fixed by the plaintext's)
  // Identical content is already there (a damaged copy of another size is replaced). Its name
  // may not be durable yet — its writer's directory fsync failed, or another process renamed it
  // a moment ago — so the directory is synced again before a record may reference it.
  const existing = fsl.lstatSync(final);
  if (existing?.isFile() && existing.size === bytes.length) {
    syncOrFail(fsl, path.dirname(final));
    return ref;
  }
  // A symlink or FIFO at the blob's name is refused, not renamed over: the operator sees it.
  if (existing && !existing.isFile()) throw unsafeBlob(ref, existing.isSymbolicLink() ? 'file is a symbolic link' : 'file is not a regular file');
  const sha = path.dirname(path.dirname(final));
  // The temp name carries 48 random bits (and blobs/tmp/ is owner-only): it cannot be planted.
  const temp = path.join(layout.blobsTempDir, `${hex}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    // A failed mkdir, its parent's fsync or the temp file's creation leaves nothing a record
    // references: NotWritten like the later steps (an I/O error must not escape unmapped).
    for (const dir of [layout.blobsDir, sha, path.dirname(final), layout.blobsTempDir]) ensurePrivateDir(fsl, dir);
    fd = createPrivate(fsl, temp);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw unsafeBlob(ref, `path ${err.reason}`);
    throw blobWriteError(err);
  }
  try {
    for (let done = 0; done < bytes.length; ) done += fsl.writeSync(fd, bytes, done, bytes.length - done, done);
    // Off this thread: a blob of megabytes takes tens of milliseconds to reach the disk, which
    // other sessions' requests do not wait for. A new file's size is data to fdatasync.
    await fsl.fdatasync(fd);
  } catch (err) {
    fsl.closeSync(fd);
    removeQuietly(fsl, temp);
    throw blobWriteError(err);
  }
  fsl.closeSync(fd);
  try {
    fsl.renameSync(temp, final);
  } catch (err) {
    removeQuietly(fsl, temp);
    throw blobWriteError(err);
  }
  syncOrFail(fsl, path.dirname(final));
  return ref;
}

function syncOrFail(fsl: FsLayer, dir: string): void {
  try {
    fsyncDir(fsl, dir);
  } catch (err) {
    throw blobWriteError(err);
  }
}

function unsafeBlob(ref: string, reason: string): StoreError {
  return new StoreError('UnsafeStore', `blob ${ref} refused: its ${reason}; nothing was appended`, { ref, reason, stage: 'preCommit' });
}

function blobWriteError(err: unknown): StoreError {
  if (err instanceof StoreError) return err; // the final secret gate's refusal: nothing was written
  const errno = errnoOf(err);
  return new StoreError('NotWritten', `a blob could not be stored (${errno ?? 'I/O error'}); nothing was appended`, {
    stage: 'preCommit', ...(errno ? { errno } : {}),
  });
}

function removeQuietly(fsl: FsLayer, file: string): void {
  try {
    fsl.unlinkSync(file);
  } catch {
    // a leftover temp file is harmless: never renamed, never referenced
  }
}

/** Bytes [offset, offset + length) of a blob; `verify` checks the whole blob's digest first. */
export function readBlob(fsl: FsLayer, layout: StoreLayout, ref: string, range?: { offset: number; length: number }): { bytes: Buffer; size: number } {
  const hex = mustDigest(ref);
  let fd: number;
  try {
    fd = openPrivate(fsl, blobPath(layout, hex), false);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `blob ${ref} refused: it ${err.reason}`, { ref, reason: err.reason });
    throw err;
  }
  try {
    const size = fsl.fstatSync(fd).size;
    const offset = Math.min(range?.offset ?? 0, size);
    const length = Math.min(range?.length ?? size, size - offset);
    if (storeKeyOf(fsl)) return readSealedBlob(fsl, fd, size, hex, ref, range);
    const bytes = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = fsl.readSync(fd, bytes, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    if (!range && refOf(bytes.subarray(0, got)) !== ref) throw new StoreError('Corrupt', `blob ${ref} is damaged (its digest does not match)`, { ref, reason: 'digest mismatch' });
    return { bytes: bytes.subarray(0, got), size };
  } finally {
    fsl.closeSync(fd);
  }
}

/** A sealed blob is read whole, opened and checked against its digest; then the range is cut from the plaintext. */
function readSealedBlob(fsl: FsLayer, fd: number, size: number, hex: string, ref: string, range?: { offset: number; length: number }): { bytes: Buffer; size: number } {
  const plain = openBytes(fsl, blobAad(hex), readUpTo(fsl, fd, size));
  if (!plain || refOf(plain) !== ref) throw new StoreError('Corrupt', `blob ${ref} is damaged (it does not authenticate or its digest does not match)`, { ref, reason: 'digest mismatch' });
  const offset = Math.min(range?.offset ?? 0, plain.length);
  const length = Math.min(range?.length ?? plain.length, plain.length - offset);
  return { bytes: plain.subarray(offset, offset + length), size: plain.length };
}

/** Checks a whole blob against its digest, reading it in chunks (blob/get does before a first chunk). */
export function verifyBlob(fsl: FsLayer, layout: StoreLayout, ref: string): void {
  const hex = mustDigest(ref);
  if (storeKeyOf(fsl)) {
    readBlob(fsl, layout, ref); // opens and checks the digest of the plaintext
    return;
  }
  let fd: number;
  try {
    fd = openPrivate(fsl, blobPath(layout, hex), false);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `blob ${ref} refused: it ${err.reason}`, { ref, reason: err.reason });
    throw err;
  }
  try {
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; ; ) {
      const n = fsl.readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      pos += n;
    }
    if (REF_PREFIX + hash.digest('hex') !== ref) throw new StoreError('Corrupt', `blob ${ref} is damaged (its digest does not match)`, { ref, reason: 'digest mismatch' });
  } finally {
    fsl.closeSync(fd);
  }
}

/** Every blob ref in the store (for verification). */
export function listBlobs(fsl: FsLayer, layout: StoreLayout): string[] {
  const root = path.join(layout.blobsDir, 'sha256');
  if (!fsl.lstatSync(root)?.isDirectory()) return [];
  return fsl.readdirSync(root).flatMap((fan) => fsl.readdirSync(path.join(root, fan)).filter((h) => HEX64.test(h)).map((h) => REF_PREFIX + h));
}
