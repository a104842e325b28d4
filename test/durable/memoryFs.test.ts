import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createPrivate, ensurePrivateDir, fsyncDir, openPrivate, readPrivateSmall, replaceAtomically } from '../../src/durable/durableFile.js';
import { MemoryFs } from '../../src/durable/memoryFs.js';

const { O_RDWR, O_RDONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_TRUNC, O_DIRECTORY } = fs.constants;
const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return 'no error';
};

/** The in-memory FsLayer honours the contract the store relies on (see durable/memoryFs.ts). */
describe('MemoryFs', () => {
  it('O_CREAT|O_EXCL refuses any existing entry; O_NOFOLLOW opens a file; modes are kept', () => {
    const m = new MemoryFs();
    m.mkdirSync('/d', 0o700);
    const fd = m.openSync('/d/f', O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    expect(m.fstatSync(fd).mode & 0o777).toBe(0o600);
    expect(m.fstatSync(fd).isFile()).toBe(true);
    m.closeSync(fd);
    expect(codeOf(() => m.openSync('/d/f', O_RDWR | O_CREAT | O_EXCL, 0o600))).toBe('EEXIST');
    expect(codeOf(() => m.openSync('/d', O_RDWR | O_CREAT | O_EXCL, 0o600))).toBe('EEXIST');
    expect(codeOf(() => m.openSync('/d/missing', O_RDONLY))).toBe('ENOENT');
    expect(codeOf(() => m.openSync('/nodir/f', O_RDWR | O_CREAT, 0o600))).toBe('ENOENT');
    expect(codeOf(() => m.openSync('/d', O_RDWR))).toBe('EISDIR');
    expect(codeOf(() => m.openSync('/d/f', O_RDONLY | O_DIRECTORY))).toBe('ENOTDIR');
    expect(codeOf(() => m.mkdirSync('/d', 0o700))).toBe('EEXIST');
    expect(m.lstatSync('/d')?.isDirectory()).toBe(true);
    expect(m.lstatSync('/nothing')).toBeUndefined();
  });

  it('positional reads and writes, growth, truncate, O_TRUNC; fsync and fdatasync never fail', async () => {
    const m = new MemoryFs();
    const fd = m.openSync('/f', O_RDWR | O_CREAT | O_EXCL, 0o600);
    expect(m.writeSync(fd, Buffer.from('hello world'), 0, 11, 0)).toBe(11);
    expect(m.writeSync(fd, Buffer.from('XY'), 0, 2, 20)).toBe(2);
    expect(m.fstatSync(fd).size).toBe(22);
    const buf = Buffer.alloc(30);
    expect(m.readSync(fd, buf, 0, 30, 0)).toBe(22);
    expect(buf.subarray(0, 22)).toEqual(Buffer.concat([Buffer.from('hello world'), Buffer.alloc(9), Buffer.from('XY')]));
    m.ftruncateSync(fd, 5);
    expect(m.readSync(fd, buf, 0, 30, 0)).toBe(5);
    m.fsyncSync(fd);
    await m.fdatasync(fd);
    m.closeSync(fd);
    expect(codeOf(() => m.fsyncSync(fd))).toBe('EBADF');
    const again = m.openSync('/f', O_RDWR | O_TRUNC);
    expect(m.fstatSync(again).size).toBe(0);
    m.closeSync(again);
  });

  it('rename replaces a file, moves a directory with its contents, refuses a non-empty target directory; unlink and rmdir', () => {
    const m = new MemoryFs();
    for (const d of ['/a', '/a/sub', '/b']) m.mkdirSync(d, 0o700);
    const put = (p: string, s: string) => {
      const fd = m.openSync(p, O_RDWR | O_CREAT | O_TRUNC, 0o600);
      m.writeSync(fd, Buffer.from(s), 0, s.length, 0);
      m.closeSync(fd);
    };
    put('/a/sub/x', 'one');
    put('/a/y', 'two');
    const ino = m.lstatSync('/a/y')?.ino;
    m.renameSync('/a/y', '/a/sub/x');
    expect(m.lstatSync('/a/sub/x')?.ino).toBe(ino);
    expect(m.readdirSync('/a')).toEqual(['sub']);
    m.mkdirSync('/b/full', 0o700);
    put('/b/full/z', 'z');
    expect(codeOf(() => m.renameSync('/a/sub', '/b/full'))).toBe('ENOTEMPTY');
    m.renameSync('/a/sub', '/b/moved');
    expect(m.readdirSync('/b/moved')).toEqual(['x']);
    expect(codeOf(() => m.rmdirSync('/b/moved'))).toBe('ENOTEMPTY');
    m.unlinkSync('/b/moved/x');
    m.rmdirSync('/b/moved');
    expect(codeOf(() => m.unlinkSync('/b/full'))).toBe('EISDIR');
    expect(codeOf(() => m.renameSync('/nope', '/b/n'))).toBe('ENOENT');
  });

  it('the durable-file helpers work unchanged over it (private files and directories, atomic replace, directory fsync)', async () => {
    const m = new MemoryFs();
    ensurePrivateDir(m, '/store');
    const fd = createPrivate(m, '/store/f');
    m.closeSync(fd);
    m.closeSync(openPrivate(m, '/store/f', true));
    await replaceAtomically(m, '/store/state.json', '{"a":1}', true);
    expect(readPrivateSmall(m, '/store/state.json', 100)).toBe('{"a":1}');
    fsyncDir(m, '/store');
    expect(m.readdirSync('/store').sort()).toEqual(['f', 'state.json']);
    expect(m.bytesHeld()).toBe(7);
  });
});
