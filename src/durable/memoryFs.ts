import fs from 'node:fs';
import path from 'node:path';
import type { FsLayer } from './fsLayer.js';

const O_ACCMODE = 3; // O_RDONLY | O_WRONLY | O_RDWR (Linux and macOS; not in Node's typings)
const { O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_DIRECTORY } = fs.constants;

/**
 * An FsLayer that keeps everything in this process's memory (ephemeral sessions, protocol §17):
 * a tree of directories and regular files, nothing ever reaching a disk. It honours the contract
 * the store relies on: O_CREAT|O_EXCL fails with EEXIST on any existing entry; there are no
 * symlinks, FIFOs or other users here, so O_NOFOLLOW never has anything to refuse and every entry
 * is ours with the mode it was created with; a writable open of a directory is EISDIR, O_DIRECTORY
 * on a file ENOTDIR; rename replaces a file atomically, moves a directory, and refuses a non-empty
 * directory as its target (ENOTEMPTY); fsync and fdatasync are no-ops that never fail (there is
 * nothing below memory to make durable — and nothing survives the process anyway).
 * Errors are Error objects with a `code` (ENOENT, EEXIST, ...), as Node's are.
 */
type Node = FileNode | DirNode;
interface Common { ino: number; mode: number; mtimeMs: number; ctimeMs: number }
interface FileNode extends Common { kind: 'file'; data: Buffer; size: number }
interface DirNode extends Common { kind: 'dir'; entries: Map<string, Node> }

interface OpenFile { node: Node; writable: boolean; readable: boolean; append: boolean }

export class MemoryFs implements FsLayer {
  private nextIno = 1;
  private nextFd = 1_000_000; // far from real descriptors: a stray fd mix-up fails loudly (EBADF)
  private readonly root: DirNode = this.dir(0o700);
  private readonly fds = new Map<number, OpenFile>();

  /** Total bytes held by the files (what the memory costs, for tests and stats). */
  bytesHeld(): number {
    let total = 0;
    const walk = (d: DirNode) => {
      for (const n of d.entries.values()) n.kind === 'file' ? (total += n.size) : walk(n);
    };
    walk(this.root);
    return total;
  }

  openSync(p: string, flags: number, mode = 0o666): number {
    const { parent, name } = this.parentOf(p);
    let node = name === '' ? this.root : parent.entries.get(name);
    const access = flags & O_ACCMODE;
    const writable = access === O_WRONLY || access === O_RDWR;
    if (node && (flags & O_CREAT) && (flags & O_EXCL)) throw errno('EEXIST', 'open', p);
    if (!node) {
      if (!(flags & O_CREAT)) throw errno('ENOENT', 'open', p);
      if (flags & O_DIRECTORY) throw errno('ENOENT', 'open', p);
      node = this.file(mode & ~0o022 & 0o777);
      parent.entries.set(name, node);
      this.touch(parent);
    } else if (node.kind === 'dir') {
      if (writable) throw errno('EISDIR', 'open', p);
    } else {
      if (flags & O_DIRECTORY) throw errno('ENOTDIR', 'open', p);
      if ((flags & O_TRUNC) && writable) this.resize(node, 0);
    }
    const fd = this.nextFd++;
    this.fds.set(fd, { node, writable, readable: access !== O_WRONLY, append: (flags & O_APPEND) !== 0 });
    return fd;
  }

  closeSync(fd: number): void {
    this.fd(fd);
    this.fds.delete(fd);
  }

  fstatSync(fd: number): fs.Stats {
    return statOf(this.fd(fd).node);
  }

  lstatSync(p: string): fs.Stats | undefined {
    const node = this.lookup(p);
    return node ? statOf(node) : undefined;
  }

  readSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    const f = this.fd(fd);
    if (f.node.kind === 'dir') throw errno('EISDIR', 'read');
    if (!f.readable) throw errno('EBADF', 'read');
    const n = Math.max(0, Math.min(length, f.node.size - position));
    f.node.data.copy(buf, offset, position, position + n);
    return n;
  }

  writeSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
    const f = this.fd(fd);
    if (f.node.kind !== 'file' || !f.writable) throw errno('EBADF', 'write');
    const at = f.append ? f.node.size : position;
    if (at + length > f.node.size) this.resize(f.node, at + length);
    buf.copy(f.node.data, at, offset, offset + length);
    this.touch(f.node);
    return length;
  }

  ftruncateSync(fd: number, length: number): void {
    const f = this.fd(fd);
    if (f.node.kind !== 'file' || !f.writable) throw errno('EINVAL', 'ftruncate');
    this.resize(f.node, length);
    this.touch(f.node);
  }

  fchmodSync(fd: number, mode: number): void {
    const { node } = this.fd(fd);
    node.mode = mode & 0o7777;
    node.ctimeMs = Date.now();
  }

  fdatasync(fd: number): Promise<void> {
    this.fd(fd);
    return Promise.resolve();
  }

  async close(fd: number): Promise<void> {
    this.closeSync(fd);
  }

  fsyncSync(fd: number): void {
    this.fd(fd);
  }

  mkdirSync(p: string, mode: number): void { // exclusive (EEXIST), in memory: the mode given (0o700 by the store) less a 022 umask
    const { parent, name } = this.parentOf(p);
    if (name === '' || parent.entries.has(name)) throw errno('EEXIST', 'mkdir', p);
    parent.entries.set(name, this.dir(mode & ~0o022 & 0o777));
    this.touch(parent);
  }

  renameSync(from: string, to: string): void {
    const src = this.parentOf(from);
    const node = src.parent.entries.get(src.name);
    if (!node || src.name === '') throw errno('ENOENT', 'rename', from);
    const dst = this.parentOf(to);
    if (dst.name === '') throw errno('EBUSY', 'rename', to);
    const there = dst.parent.entries.get(dst.name);
    if (there === node) return;
    if (node.kind === 'dir' && this.contains(node, dst.parent)) throw errno('EINVAL', 'rename', to);
    if (there) {
      if (there.kind === 'dir' && node.kind !== 'dir') throw errno('EISDIR', 'rename', to);
      if (there.kind !== 'dir' && node.kind === 'dir') throw errno('ENOTDIR', 'rename', to);
      if (there.kind === 'dir' && there.entries.size > 0) throw errno('ENOTEMPTY', 'rename', to);
    }
    src.parent.entries.delete(src.name);
    dst.parent.entries.set(dst.name, node);
    this.touch(src.parent);
    this.touch(dst.parent);
    node.ctimeMs = Date.now();
  }

  readdirSync(p: string): string[] {
    const node = this.lookup(p);
    if (!node) throw errno('ENOENT', 'scandir', p);
    if (node.kind !== 'dir') throw errno('ENOTDIR', 'scandir', p);
    return [...node.entries.keys()];
  }

  unlinkSync(p: string): void {
    const { parent, name } = this.parentOf(p);
    const node = parent.entries.get(name);
    if (!node) throw errno('ENOENT', 'unlink', p);
    if (node.kind === 'dir') throw errno('EISDIR', 'unlink', p);
    parent.entries.delete(name);
    this.touch(parent);
  }

  rmdirSync(p: string): void {
    const { parent, name } = this.parentOf(p);
    const node = name === '' ? this.root : parent.entries.get(name);
    if (!node) throw errno('ENOENT', 'rmdir', p);
    if (node.kind !== 'dir') throw errno('ENOTDIR', 'rmdir', p);
    if (node.entries.size > 0) throw errno('ENOTEMPTY', 'rmdir', p);
    if (node === this.root) throw errno('EBUSY', 'rmdir', p);
    parent.entries.delete(name);
    this.touch(parent);
  }

  private lookup(p: string): Node | undefined {
    let node: Node = this.root;
    for (const part of parts(p)) {
      if (node.kind !== 'dir') return undefined;
      const next: Node | undefined = node.entries.get(part);
      if (!next) return undefined;
      node = next;
    }
    return node;
  }

  /** The directory that holds `p` (ENOENT or ENOTDIR when a component is missing or a file). */
  private parentOf(p: string): { parent: DirNode; name: string } {
    const all = parts(p);
    const name = all.pop() ?? '';
    let node: Node = this.root;
    for (const part of all) {
      if (node.kind !== 'dir') throw errno('ENOTDIR', 'open', p);
      const next: Node | undefined = node.entries.get(part);
      if (!next) throw errno('ENOENT', 'open', p);
      node = next;
    }
    if (node.kind !== 'dir') throw errno('ENOTDIR', 'open', p);
    return { parent: node, name };
  }

  private contains(dir: DirNode, target: DirNode): boolean {
    if (dir === target) return true;
    for (const n of dir.entries.values()) if (n.kind === 'dir' && this.contains(n, target)) return true;
    return false;
  }

  private fd(fd: number): OpenFile {
    const f = this.fds.get(fd);
    if (!f) throw errno('EBADF', 'fd');
    return f;
  }

  private resize(node: FileNode, size: number): void {
    if (size > node.data.length) {
      const grown = Buffer.alloc(Math.max(size, node.data.length * 2, 256));
      node.data.copy(grown, 0, 0, node.size);
      node.data = grown;
    } else if (size < node.size) {
      node.data.fill(0, size, node.size);
    }
    node.size = size;
  }

  private touch(node: Node): void {
    node.mtimeMs = node.ctimeMs = Date.now();
  }

  private file(mode: number): FileNode {
    const now = Date.now();
    return { kind: 'file', ino: this.nextIno++, mode, data: Buffer.alloc(0), size: 0, mtimeMs: now, ctimeMs: now };
  }

  private dir(mode: number): DirNode {
    const now = Date.now();
    return { kind: 'dir', ino: this.nextIno++, mode, entries: new Map(), mtimeMs: now, ctimeMs: now };
  }
}

function parts(p: string): string[] {
  return path.resolve('/', p).split('/').filter((s) => s !== '');
}

function errno(code: string, syscall: string, p?: string): Error {
  // The message names no path: errors of the store never carry one (nor raw exception text).
  return Object.assign(new Error(`${code}: ${syscall}`), { code, syscall, ...(p === undefined ? {} : { path: p }) });
}

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

function statOf(node: Node): fs.Stats {
  const isFile = node.kind === 'file';
  const size = isFile ? node.size : 4096;
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const gid = typeof process.getgid === 'function' ? process.getgid() : 0;
  const st = {
    dev: 0, ino: node.ino, mode: (isFile ? S_IFREG : S_IFDIR) | node.mode, nlink: 1, uid, gid, rdev: 0, size,
    blksize: 4096, blocks: Math.ceil(size / 512), atimeMs: node.mtimeMs, mtimeMs: node.mtimeMs, ctimeMs: node.ctimeMs, birthtimeMs: node.ctimeMs,
    atime: new Date(node.mtimeMs), mtime: new Date(node.mtimeMs), ctime: new Date(node.ctimeMs), birthtime: new Date(node.ctimeMs),
    isFile: () => isFile, isDirectory: () => !isFile, isSymbolicLink: () => false, isFIFO: () => false,
    isSocket: () => false, isBlockDevice: () => false, isCharacterDevice: () => false,
  };
  return st as unknown as fs.Stats;
}
