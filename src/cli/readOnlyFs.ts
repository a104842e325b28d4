import fs from 'node:fs';
import { type FsLayer, nodeFs } from '../durable/fsLayer.js';

/**
 * The file-system seam of a store opened by a command-line inspection command (list, show,
 * tail, export, stats, verify). The store is opened with `readOnly: true`, which never writes
 * (no folders created, no index entry refreshed, every write refused with ReadOnly); this seam
 * is defence in depth under it: every call that could change the store fails with EROFS, so
 * nothing a command does can create, truncate, repair, rename, lease or remove anything even
 * if a store operation tried to. Reads, stats, directory listings and fsyncs of read-only
 * descriptors pass through.
 */
export function readOnlyFs(opts: { base?: FsLayer } = {}): FsLayer {
  const base = opts.base ?? nodeFs;
  const refuse = (op: string, target?: string): never => {
    throw Object.assign(new Error(`${op}: read-only inspection of the store`), { code: 'EROFS', syscall: op, ...(target ? { path: target } : {}) });
  };
  const { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = fs.constants;
  const WRITING = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
  return {
    openSync: (p, flags, mode) => ((flags & WRITING) !== 0 ? refuse('open', p) : base.openSync(p, flags, mode)),
    closeSync: (fd) => base.closeSync(fd),
    close: (fd) => base.close(fd),
    fstatSync: (fd) => base.fstatSync(fd),
    lstatSync: (p) => base.lstatSync(p),
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
    linkSync: (_existing, p) => refuse('link', p),
    rmdirSync: (p) => refuse('rmdir', p),
  };
}
