import fs from 'node:fs';
import path from 'node:path';
import { type FsLayer, nodeFs } from '../durable/fsLayer.js';

/**
 * The file-system seam of a store opened by a command-line inspection command (list, show,
 * tail, export, stats, verify): every call that could change the store fails with EROFS, so
 * nothing a command does can create, truncate, repair, rename, lease or remove anything, even
 * if a store operation tried to. Reads, stats, directory listings and fsyncs of read-only
 * descriptors pass through.
 *
 * One write does not go through the seam: a reader that finds an index entry stale refreshes
 * it with write-file-atomic (sessionIndex.ts, writeIndexEntry), after checking with lstat that
 * the entry is not a symbolic link or other special file. This seam reports index entries as
 * special files to that check, so the refresh is refused (the store logs it and goes on; the
 * index is a cache, rebuilt by the next writable open). Index entries are read through
 * openSync + fstatSync, which are unaffected. `verify`, which inspects index entries itself and
 * never writes them, turns this off (hideIndexEntries: false).
 */
export function readOnlyFs(root: string, opts: { base?: FsLayer; hideIndexEntries?: boolean } = {}): FsLayer {
  const base = opts.base ?? nodeFs;
  const hide = opts.hideIndexEntries ?? true;
  const indexDir = path.join(path.resolve(root), 'index') + path.sep;
  const refuse = (op: string, target?: string): never => {
    throw Object.assign(new Error(`${op}: read-only inspection of the store`), { code: 'EROFS', syscall: op, ...(target ? { path: target } : {}) });
  };
  const { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = fs.constants;
  const WRITING = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  return {
    openSync: (p, flags, mode) => ((flags & WRITING) !== 0 ? refuse('open', p) : base.openSync(p, flags, mode)),
    closeSync: (fd) => base.closeSync(fd),
    fstatSync: (fd) => base.fstatSync(fd),
    lstatSync: (p) => {
      const st = base.lstatSync(p);
      if (hide && st && p.startsWith(indexDir) && p.endsWith('.json')) return asSpecialFile(st);
      return st;
    },
    readSync: (fd, buf, offset, length, position) => base.readSync(fd, buf, offset, length, position),
    writeSync: () => refuse('write'),
    ftruncateSync: () => refuse('ftruncate'),
    fchmodSync: () => refuse('fchmod'),
    fdatasync: async () => refuse('fdatasync'),
    fsyncSync: (fd) => base.fsyncSync(fd),
    mkdirSync: (p) => refuse('mkdir', p),
    renameSync: (from) => refuse('rename', from),
    readdirSync: (p) => base.readdirSync(p),
    unlinkSync: (p) => refuse('unlink', p),
    rmdirSync: (p) => refuse('rmdir', p),
    writeFileSync: (p) => refuse('writeFile', p),
  };
}

/** The same stat, but neither a regular file nor a directory: write paths refuse it. */
function asSpecialFile(st: fs.Stats): fs.Stats {
  return Object.assign(Object.create(st) as fs.Stats, {
    isFile: () => false,
    isDirectory: () => false,
    isSymbolicLink: () => false,
    isFIFO: () => true,
  });
}
