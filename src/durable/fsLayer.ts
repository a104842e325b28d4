import fs from 'node:fs';

/**
 * Every file-system call the store makes goes through this seam, so fault tests can fail any
 * single call (a write, an fdatasync, a truncate) without touching the real code paths, and
 * every byte the store writes passes writeSync (no library writes store files on its own).
 * Sync calls keep a write+fdatasync near the disk's cost; fdatasync alone is asynchronous so
 * appends arriving while it runs can be grouped into the next write.
 */
export interface FsLayer {
  openSync(path: string, flags: number, mode?: number): number;
  closeSync(fd: number): void;
  fstatSync(fd: number): fs.Stats;
  lstatSync(path: string): fs.Stats | undefined;
  readSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  writeSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  ftruncateSync(fd: number, length: number): void;
  fchmodSync(fd: number, mode: number): void;
  fdatasync(fd: number): Promise<void>;
  fsyncSync(fd: number): void;
  mkdirSync(path: string, mode: number): void; // callers pass 0o700 (durableFile.ts mkdirPrivate)
  renameSync(from: string, to: string): void;
  readdirSync(path: string): string[];
  unlinkSync(path: string): void;
  rmdirSync(path: string): void;
}

export const nodeFs: FsLayer = {
  openSync: (p, flags, mode) => fs.openSync(p, flags, mode),
  closeSync: (fd) => fs.closeSync(fd),
  fstatSync: (fd) => fs.fstatSync(fd),
  lstatSync: (p) => fs.lstatSync(p, { throwIfNoEntry: false }),
  readSync: (fd, buf, offset, length, position) => fs.readSync(fd, buf, offset, length, position),
  writeSync: (fd, buf, offset, length, position) => fs.writeSync(fd, buf, offset, length, position),
  ftruncateSync: (fd, length) => fs.ftruncateSync(fd, length),
  fchmodSync: (fd, mode) => fs.fchmodSync(fd, mode),
  fdatasync: (fd) => new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve()))),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  mkdirSync: (p, mode) => void fs.mkdirSync(p, { mode }), // the mode given (0o700), not recursive: EEXIST is the caller's
  renameSync: (from, to) => fs.renameSync(from, to),
  readdirSync: (p) => fs.readdirSync(p),
  unlinkSync: (p) => fs.unlinkSync(p),
  rmdirSync: (p) => fs.rmdirSync(p),
};
