import { createHash } from 'node:crypto';
import { fileAad, storeKeyOf } from '../journal/cipher.js';
import { openBytes } from '../sealedFile.js';
import path from 'node:path';
import { readUpTo } from '../../../durable/durableFile.js';
import { breathe, describe, READ_FLAGS } from './common.js';
import type { FileChecks } from './permissions.js';
import type { Finding } from './report.js';
import { anyWriterLive, unlessWriting } from './recoveryCheck.js';

/**
 * The files under blobs/ as the blobs check sees them: where each blob is, whether its bytes
 * still hash to its name (read in chunks: a blob can be hundreds of megabytes), the folders'
 * and files' modes, stray entries and temp files left by unfinished writes.
 */

export type BlobState =
  | { state: 'ok'; size: number }
  | { state: 'damaged'; size: number }
  | { state: 'missing' }
  /** reported: the file's type was reported already (a permissions error). */
  | { state: 'unreadable'; reason: string; reported?: boolean };

const HEX64 = /^[0-9a-f]{64}$/;
const FAN = /^[0-9a-f]{2}$/;
const CHUNK = 1 << 20;
/** Bytes hashed between two breaks for signals and timers. */
const BREATHE_EVERY = 64 << 20;

/**
 * Every blob file of the store (hex digest -> path), walking blobs/sha256/<2 hex>/: folder modes
 * are checked and entries that are not blobs in their place are reported.
 */
export function listBlobFiles(fc: FileChecks, out: Finding[]): Map<string, string> {
  const found = new Map<string, string>();
  const { blobsDir } = fc.layout;
  for (const name of fc.list(blobsDir)) {
    if (name !== 'sha256' && name !== 'tmp') out.push({ severity: 'warning', check: 'blobs', message: 'unexpected entry in blobs/', file: fc.rel(path.join(blobsDir, name)) });
  }
  const root = path.join(blobsDir, 'sha256');
  if (!fc.directory(root, out)?.isDirectory()) return found;
  for (const { name: fan, path: dir, st: d } of fc.entries(root)) {
    if (!FAN.test(fan) || !d.isDirectory()) {
      out.push({ severity: 'warning', check: 'blobs', message: 'unexpected entry in blobs/sha256/ (not a folder of blobs)', file: fc.rel(dir) });
      continue;
    }
    fc.dirMode(d, dir, out);
    for (const name of fc.list(dir)) {
      const p = path.join(dir, name);
      if (HEX64.test(name) && name.startsWith(fan)) found.set(name, p);
      else out.push({ severity: 'warning', check: 'blobs', message: 'a file that is not a blob in its place (readers never look for it)', file: fc.rel(p) });
    }
  }
  return found;
}

/** The files of blobs/tmp/: blob writes that did not complete (or are being written now). */
export function blobTemps(fc: FileChecks, out: Finding[]): void {
  const dir = fc.layout.blobsTempDir;
  if (!fc.directory(dir, out)) return;
  const entries = fc.entries(dir);
  // A blob is written inside an append, under the session's lease: with a writer at work, a temp file is most likely its write in progress.
  const busy = entries.length > 0 && anyWriterLive(fc);
  for (const { path: p, st: f } of entries) {
    out.push(unlessWriting({ severity: 'warning', check: 'blobs', file: fc.rel(p), message: 'a temporary file left by a blob write that did not complete (or one in progress); nothing references it, it can be deleted while no sidecar runs' }, busy));
    if (f.isFile()) fc.fileMode(f, p, out);
  }
}

/** A blob file: its type and mode (reported to `out`), then its bytes hashed against its name. */
export async function inspectBlob(fc: FileChecks, file: string, hex: string, out: Finding[]): Promise<BlobState> {
  const st = fc.fsl.lstatSync(file);
  if (!st) return { state: 'missing' };
  if (st.isSymbolicLink() || !st.isFile()) {
    out.push({ severity: 'error', check: 'permissions', message: 'a blob that is not a regular file (readers refuse it)', file: fc.rel(file) });
    return { state: 'unreadable', reason: 'not a regular file', reported: true };
  }
  fc.fileMode(st, file, out);
  try {
    const { digest, size } = storeKeyOf(fc.fsl) ? sealedDigest(fc, file, hex) : await hashFile(fc, file);
    return digest === hex ? { state: 'ok', size } : { state: 'damaged', size };
  } catch (err) {
    return { state: 'unreadable', reason: describe(err) };
  }
}

/** Encryption at rest: the sha256 and size of a sealed blob's plaintext ('' when it does not authenticate). */
function sealedDigest(fc: FileChecks, file: string, hex: string): { digest: string; size: number } {
  const { fsl } = fc;
  const fd = fsl.openSync(file, READ_FLAGS);
  try {
    const stored = readUpTo(fsl, fd, fsl.fstatSync(fd).size);
    const plain = openBytes(fsl, fileAad('blob', hex), stored);
    return plain ? { digest: createHash('sha256').update(plain).digest('hex'), size: plain.length } : { digest: '', size: stored.length };
  } finally {
    fsl.closeSync(fd);
  }
}

/** The sha256 of a file, read in chunks. */
async function hashFile(fc: FileChecks, file: string): Promise<{ digest: string; size: number }> {
  const { fsl } = fc;
  const fd = fsl.openSync(file, READ_FLAGS);
  try {
    if (!fsl.fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' });
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(CHUNK);
    let size = 0;
    let sinceBreak = 0;
    for (;;) {
      const n = fsl.readSync(fd, buf, 0, CHUNK, size);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      size += n;
      sinceBreak += n;
      if (sinceBreak >= BREATHE_EVERY) {
        sinceBreak = 0;
        await breathe();
      }
    }
    return { digest: hash.digest('hex'), size };
  } finally {
    fsl.closeSync(fd);
  }
}
