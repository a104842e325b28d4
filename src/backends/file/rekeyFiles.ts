import path from 'node:path';
import { createPrivate, fsyncDir } from '../../durable/durableFile.js';
import { errnoOf } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';

/**
 * The file steps of a rekey (rekey.ts): a file replaced through `<file>.rekey.tmp` (its commit
 * point is the rename), a torn tail kept as evidence, a cache removed. Each step is durable
 * when it returns (fsync of the file, then of its directory).
 */
export const TEMP = '.rekey.tmp';
const FLUSH_BYTES = 1 << 20;

export { keepTornTail } from './journal/evidence.js';

/** `<file>.rekey.tmp` written whole and fsynced, renamed over `file`, the directory fsynced. */
export function replaceFile(fsl: FsLayer, file: string, chunks: Buffer[]): void {
  const out = new TempFile(fsl, file);
  try {
    for (const buf of chunks) out.write(buf);
    out.commit();
  } catch (err) {
    out.abort();
    throw err;
  }
}

/**
 * The replacement of `file` being written: `<file>.rekey.tmp` (O_CREAT|O_EXCL|O_NOFOLLOW, 0600; a
 * leftover of an interrupted rekey is removed first), written in chunks of about 1 MiB; commit
 * fsyncs it, renames it over `file` (the file's commit point) and fsyncs the directory.
 */
export class TempFile {
  private readonly tmp: string;
  private readonly fd: number;
  private pos = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;

  constructor(private readonly fsl: FsLayer, private readonly file: string) {
    this.tmp = `${file}${TEMP}`;
    removeQuietly(fsl, this.tmp); // never read
    this.fd = createPrivate(fsl, this.tmp);
  }

  write(buf: Buffer): void {
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
  }

  commit(): void {
    this.flush();
    this.fsl.fsyncSync(this.fd);
    this.close();
    this.fsl.renameSync(this.tmp, this.file);
    fsyncDir(this.fsl, path.dirname(this.file));
  }

  /** After a failure before the rename: the temp file is never read; removed when possible. */
  abort(): void {
    this.close();
    try {
      removeQuietly(this.fsl, this.tmp);
    } catch {
      // left for the next rekey, which removes it first
    }
  }

  private flush(): void {
    // whole lines per write call: the chunks are lines (the final gate checks one call at a time)
    const buf = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    for (let done = 0; done < buf.length; ) done += this.fsl.writeSync(this.fd, buf, done, buf.length - done, this.pos + done);
    this.pos += buf.length;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.fsl.closeSync(this.fd);
  }
}

/** A cache file (index entry, list.cache): removed; it is rebuilt from the journals. */
export function removeCache(fsl: FsLayer, file: string): void {
  if (!fsl.lstatSync(file)) return;
  fsl.unlinkSync(file);
  fsyncDir(fsl, path.dirname(file));
}

export function removeTemps(fsl: FsLayer, dir: string): void {
  for (const name of namesIn(fsl, dir)) if (name.endsWith(TEMP)) removeQuietly(fsl, path.join(dir, name));
}

function removeQuietly(fsl: FsLayer, file: string): void {
  try {
    fsl.unlinkSync(file);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
}

export function namesIn(fsl: FsLayer, dir: string): string[] {
  try {
    return fsl.readdirSync(dir);
  } catch {
    return [];
  }
}
