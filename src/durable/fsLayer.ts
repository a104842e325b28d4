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
  /**
   * closeSync in the thread pool: for a descriptor whose last close frees the file's blocks — a
   * journal a compaction renamed a new one over (ext4: ~25 ms per 100 MB on this thread).
   */
  close(fd: number): Promise<void>;
  fstatSync(fd: number): fs.Stats;
  lstatSync(path: string): fs.Stats | undefined;
  readSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  writeSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  ftruncateSync(fd: number, length: number): void;
  fchmodSync(fd: number, mode: number): void;
  /**
   * `inline`: the caller has nothing to overlap the sync with (one append, nothing else queued or
   * syncing in this process), so it runs on this thread — no thread-pool round trip (~250 µs
   * here). A layer may ignore it (a wrapper that calls `inner.fdatasync(fd)` syncs off-thread):
   * the result is the same promise either way, and a failure is a rejection either way.
   */
  fdatasync(fd: number, inline?: boolean): Promise<void>;
  fsyncSync(fd: number): void;
  mkdirSync(path: string, mode: number): void; // callers pass 0o700 (durableFile.ts mkdirPrivate)
  renameSync(from: string, to: string): void;
  /** A second name for an existing file (link(2): never follows a symlink at `existing` on Linux). */
  linkSync(existing: string, newPath: string): void;
  readdirSync(path: string): string[];
  unlinkSync(path: string): void;
  rmdirSync(path: string): void;
}

export const nodeFs: FsLayer = {
  openSync: (p, flags, mode) => fs.openSync(p, flags, mode),
  closeSync: (fd) => fs.closeSync(fd),
  close: (fd) => new Promise((resolve, reject) => fs.close(fd, (err) => (err ? reject(err) : resolve()))),
  fstatSync: (fd) => fs.fstatSync(fd),
  lstatSync: (p) => fs.lstatSync(p, { throwIfNoEntry: false }),
  readSync: (fd, buf, offset, length, position) => fs.readSync(fd, buf, offset, length, position),
  writeSync: (fd, buf, offset, length, position) => fs.writeSync(fd, buf, offset, length, position),
  ftruncateSync: (fd, length) => fs.ftruncateSync(fd, length),
  fchmodSync: (fd, mode) => fs.fchmodSync(fd, mode),
  fdatasync: (fd, inline) => new Promise((resolve, reject) => {
    if (!inline) return fs.fdatasync(fd, (err) => (err ? reject(err) : resolve()));
    fs.fdatasyncSync(fd); // a throw here rejects the promise
    resolve();
  }),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  mkdirSync: (p, mode) => void fs.mkdirSync(p, { mode }), // the mode given (0o700), not recursive: EEXIST is the caller's
  renameSync: (from, to) => fs.renameSync(from, to),
  linkSync: (existing, newPath) => fs.linkSync(existing, newPath),
  readdirSync: (p) => fs.readdirSync(p),
  unlinkSync: (p) => fs.unlinkSync(p),
  rmdirSync: (p) => fs.rmdirSync(p),
};
