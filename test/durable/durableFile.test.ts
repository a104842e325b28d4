import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  appendDurably, createPrivate, ensurePrivateDir, fsyncDir, openPrivate, readPrivateSmall, replaceAtomically,
} from '../../src/durable/durableFile.js';
import { AppendFailure, UnsafeFileError } from '../../src/durable/errors.js';
import { type FsLayer, nodeFs } from '../../src/durable/fsLayer.js';
import { tempDir } from '../helpers.js';

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;
const eio = (code = 'EIO') => Object.assign(new Error(`injected ${code}`), { code });

/** nodeFs with call counting, and any call replaceable. */
function layer(override: Partial<FsLayer> = {}) {
  const calls: Record<string, number> = {};
  const counted = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries({ ...nodeFs, ...override })) {
    counted[name] = (...args: unknown[]) => {
      calls[name] = (calls[name] ?? 0) + 1;
      return (fn as (...a: unknown[]) => unknown)(...args);
    };
  }
  return { fsl: counted as unknown as FsLayer, calls };
}

function privateFile(dir: string, content = 'hello\n'): string {
  const file = path.join(dir, 'f');
  fs.writeFileSync(file, content, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

function unsafe(fn: () => unknown, reason: RegExp): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UnsafeFileError);
  expect((err as UnsafeFileError).reason).toMatch(reason);
}

describe('openPrivate', () => {
  it('opens a private regular file for reading and writing', () => {
    const file = privateFile(tempDir());
    for (const writable of [false, true]) {
      const fd = openPrivate(nodeFs, file, writable);
      try {
        const buf = Buffer.alloc(5);
        fs.readSync(fd, buf, 0, 5, 0);
        expect(buf.toString()).toBe('hello');
        if (writable) fs.writeSync(fd, 'J', 0);
        else expect(() => fs.writeSync(fd, 'J', 0)).toThrow();
      } finally {
        fs.closeSync(fd);
      }
    }
    expect(fs.readFileSync(file, 'utf8')).toBe('Jello\n');
  });

  it('refuses a symlink (even to a private file), a FIFO without blocking, a directory, and a wrong mode', { timeout: 10_000 }, () => {
    const dir = tempDir();
    const file = privateFile(dir);
    const link = path.join(dir, 'link');
    fs.symlinkSync(file, link);
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    const sub = path.join(dir, 'sub');
    fs.mkdirSync(sub, { mode: 0o700 });
    const { fsl, calls } = layer();
    for (const writable of [false, true]) {
      unsafe(() => openPrivate(fsl, link, writable), /symbolic link/);
      unsafe(() => openPrivate(fsl, fifo, writable), /not a regular file/);
      unsafe(() => openPrivate(fsl, sub, writable), /not a regular file/);
    }
    for (const mode of [0o644, 0o640, 0o400, 0o700, 0o601, 0o660]) {
      fs.chmodSync(file, mode);
      unsafe(() => openPrivate(fsl, file, false), /mode/);
      expect(fs.statSync(file).mode & 0o7777).toBe(mode); // never chmod-ed by the check
    }
    // every descriptor that was opened was closed again
    expect(calls.closeSync ?? 0).toBe(calls.fstatSync ?? 0);
  });

  // Root only: chown needs it. Every other test runs as the store's owner, so only this one can
  // tell whether the owner check is there.
  it.skipIf(process.getuid?.() !== 0)('refuses a private file or directory owned by another user (as root)', () => {
    const dir = tempDir();
    const file = privateFile(dir);
    const sub = path.join(dir, 'sub');
    fs.mkdirSync(sub, { mode: 0o700 });
    fs.chownSync(file, 65534, 65534);
    fs.chownSync(sub, 65534, 65534);
    for (const writable of [false, true]) unsafe(() => openPrivate(nodeFs, file, writable), /owned by another user/);
    unsafe(() => ensurePrivateDir(nodeFs, sub), /owned by another user/);
    fs.chownSync(file, 0, 0);
    fs.closeSync(openPrivate(nodeFs, file, true)); // the same file, ours again: accepted
  });

  it('passes ENOENT through for a missing file', () => {
    expect(() => openPrivate(nodeFs, path.join(tempDir(), 'missing'), false)).toThrowError(expect.objectContaining({ code: 'ENOENT' }));
  });
});

describe('createPrivate', () => {
  it('creates a 0600 file whatever the umask, and refuses anything already there', () => {
    const dir = tempDir();
    const old = process.umask(0o777);
    let fd: number;
    try {
      fd = createPrivate(nodeFs, path.join(dir, 'new'));
    } finally {
      process.umask(old);
    }
    fs.closeSync(fd);
    expect(modeOf(path.join(dir, 'new'))).toBe(0o600);
    expect(() => createPrivate(nodeFs, path.join(dir, 'new'))).toThrowError(expect.objectContaining({ code: 'EEXIST' }));
    fs.symlinkSync(path.join(dir, 'target'), path.join(dir, 'dangling'));
    unsafe(() => createPrivate(nodeFs, path.join(dir, 'dangling')), /symbolic link/); // never followed: no target created
    expect(fs.existsSync(path.join(dir, 'target'))).toBe(false);
  });
});

describe('ensurePrivateDir and fsyncDir', () => {
  it('creates a 0700 directory and syncs its parent', () => {
    const parent = tempDir();
    const { fsl, calls } = layer();
    ensurePrivateDir(fsl, path.join(parent, 'd'));
    expect(modeOf(path.join(parent, 'd'))).toBe(0o700);
    expect(calls.mkdirSync).toBe(1);
    expect(calls.fsyncSync).toBe(1);
    // existing: accepted as is, nothing created or synced
    ensurePrivateDir(fsl, path.join(parent, 'd'));
    expect(calls.mkdirSync).toBe(1);
    expect(calls.fsyncSync).toBe(1);
  });

  it('accepts an existing directory others cannot write, refuses a symlink, a file or a writable directory', () => {
    const parent = tempDir();
    const d = path.join(parent, 'd');
    fs.mkdirSync(d);
    for (const mode of [0o700, 0o750, 0o755, 0o500]) {
      fs.chmodSync(d, mode);
      expect(() => ensurePrivateDir(nodeFs, d)).not.toThrow();
    }
    for (const mode of [0o770, 0o702, 0o777, 0o720]) {
      fs.chmodSync(d, mode);
      unsafe(() => ensurePrivateDir(nodeFs, d), /writable by group or others/);
      expect(modeOf(d)).toBe(mode);
    }
    fs.chmodSync(d, 0o700);
    fs.symlinkSync(d, path.join(parent, 'link'));
    unsafe(() => ensurePrivateDir(nodeFs, path.join(parent, 'link')), /symbolic link/);
    fs.writeFileSync(path.join(parent, 'file'), '');
    unsafe(() => ensurePrivateDir(nodeFs, path.join(parent, 'file')), /not a directory/);
  });

  it('tolerates losing a creation race (EEXIST) and still checks what is there', () => {
    const parent = tempDir();
    const d = path.join(parent, 'd');
    const racing = layer({
      mkdirSync: () => {
        fs.mkdirSync(d, { mode: 0o700 });
        throw eio('EEXIST');
      },
    });
    expect(() => ensurePrivateDir(racing.fsl, d)).not.toThrow();
    const hostile = layer({
      mkdirSync: () => {
        fs.mkdirSync(path.join(parent, 'elsewhere'));
        fs.symlinkSync(path.join(parent, 'elsewhere'), path.join(parent, 'e'));
        throw eio('EEXIST');
      },
    });
    unsafe(() => ensurePrivateDir(hostile.fsl, path.join(parent, 'e')), /symbolic link/);
  });

  it('fsyncDir closes the directory even when the sync fails', () => {
    const { fsl, calls } = layer({ fsyncSync: () => { throw eio(); } });
    expect(() => fsyncDir(fsl, tempDir())).toThrowError(expect.objectContaining({ code: 'EIO' }));
    expect(calls.openSync).toBe(1);
    expect(calls.closeSync).toBe(1);
  });
});

describe('appendDurably', () => {
  function target(content = 'committed\n') {
    const file = privateFile(tempDir(), content);
    const fd = fs.openSync(file, 'r+');
    return { file, fd, position: Buffer.byteLength(content), bytes: () => fs.readFileSync(file) };
  }
  const BUF = Buffer.from('0123456789abcdefghij\n');

  async function failure(p: Promise<void>): Promise<AppendFailure> {
    const err = await p.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(AppendFailure);
    return err as AppendFailure;
  }

  it('writes all bytes at the position (looping over short writes) and syncs once', async () => {
    const t = target();
    const { fsl, calls } = layer({ writeSync: (fd, buf, off, len, pos) => nodeFs.writeSync(fd, buf, off, Math.min(len, 3), pos) });
    await appendDurably(fsl, t.fd, BUF, t.position);
    expect(t.bytes().toString()).toBe(`committed\n${BUF.toString()}`);
    expect(calls.writeSync).toBe(Math.ceil(BUF.length / 3));
    expect(calls.fdatasync).toBe(1);
    fs.closeSync(t.fd);
  });

  it('nothing written → notWritten, no truncate, no sync', async () => {
    const t = target();
    const before = t.bytes();
    const { fsl, calls } = layer({ writeSync: () => { throw eio('ENOSPC'); } });
    const err = await failure(appendDurably(fsl, t.fd, BUF, t.position));
    expect(err.outcome).toBe('notWritten');
    expect(err.errno).toBe('ENOSPC');
    expect(err.message).not.toContain('injected'); // the cause's text is never exposed
    expect(calls.ftruncateSync ?? 0).toBe(0);
    expect(calls.fdatasync ?? 0).toBe(0);
    expect(t.bytes().equals(before)).toBe(true);
    fs.closeSync(t.fd);
  });

  it('a write the final secret gate refused before any byte moved keeps its own error (not NotWritten)', async () => {
    const t = target();
    const before = t.bytes();
    const refusal = Object.assign(new Error('refused by the final gate'), { refusedBeforeWrite: true });
    const { fsl, calls } = layer({ writeSync: () => { throw refusal; } });
    await expect(appendDurably(fsl, t.fd, BUF, t.position)).rejects.toBe(refusal);
    expect(calls.ftruncateSync ?? 0).toBe(0);
    expect(calls.fdatasync ?? 0).toBe(0);
    expect(t.bytes().equals(before)).toBe(true);
    // the same flag after bytes moved is an ordinary failed write: rolled back
    let n = 0;
    const late = layer({ writeSync: (fd, buf, off, _len, pos) => {
      if (++n === 1) return nodeFs.writeSync(fd, buf, off, 3, pos);
      throw refusal;
    } });
    expect((await failure(appendDurably(late.fsl, t.fd, BUF, t.position))).outcome).toBe('rolledBack');
    expect(t.bytes().equals(before)).toBe(true);
    fs.closeSync(t.fd);
  });

  it('a write that failed after changing the file → rolledBack to the exact old length', async () => {
    for (const mode of ['partial', 'reportedZero', 'failedButWrote'] as const) {
      const t = target();
      const before = t.bytes();
      let n = 0;
      const { fsl, calls } = layer({
        writeSync: (fd, buf, off, len, pos) => {
          n += 1;
          if (mode === 'partial') {
            if (n === 1) return nodeFs.writeSync(fd, buf, off, 5, pos);
            throw eio();
          }
          if (mode === 'reportedZero') {
            if (n === 1) return nodeFs.writeSync(fd, buf, off, 7, pos);
            return 0;
          }
          nodeFs.writeSync(fd, buf, off, 4, pos); // bytes landed, but the call reports an error
          throw eio();
        },
      });
      const err = await failure(appendDurably(fsl, t.fd, BUF, t.position));
      expect(err.outcome, mode).toBe('rolledBack');
      expect(err.errno).toBe('EIO');
      expect(calls.ftruncateSync).toBe(1);
      expect(calls.fdatasync ?? 0).toBe(0);
      expect(t.bytes().equals(before), mode).toBe(true);
      fs.closeSync(t.fd);
    }
  });

  it('a failed truncate after a failed write → uncertain', async () => {
    const t = target();
    let n = 0;
    const { fsl, calls } = layer({
      writeSync: (fd, buf, off, _len, pos) => {
        if (++n === 1) return nodeFs.writeSync(fd, buf, off, 5, pos);
        throw eio();
      },
      ftruncateSync: () => { throw eio('EROFS'); },
    });
    const err = await failure(appendDurably(fsl, t.fd, BUF, t.position));
    expect(err.outcome).toBe('uncertain');
    expect(err.errno).toBe('EIO'); // the write's errno, the cause
    expect(calls.fdatasync ?? 0).toBe(0);
    expect(t.bytes().length).toBe(t.position + 5);
    fs.closeSync(t.fd);
  });

  it('syncs inline only when alone and no other append sync of the process is in the thread pool', async () => {
    const t = target();
    const seen: Array<boolean | undefined> = [];
    let holdNext = false;
    let release = () => undefined as void;
    const { fsl } = layer({
      fdatasync: async (fd, inline) => {
        seen.push(inline);
        if (holdNext) {
          holdNext = false;
          await new Promise<void>((resolve) => { release = resolve; });
        }
        return nodeFs.fdatasync(fd, inline);
      },
    });
    await appendDurably(fsl, t.fd, BUF, t.position, { alone: true });
    await appendDurably(fsl, t.fd, BUF, t.position + BUF.length);
    holdNext = true;
    const slow = appendDurably(fsl, t.fd, BUF, t.position + 2 * BUF.length); // held in the "thread pool"
    await appendDurably(fsl, t.fd, BUF, t.position + 3 * BUF.length, { alone: true }); // another session's, meanwhile: not inline
    release();
    await slow;
    await appendDurably(fsl, t.fd, BUF, t.position + 4 * BUF.length, { alone: true });
    expect(seen).toEqual([true, false, false, false, true]);
    // nodeFs itself: an inline sync failing is a rejection like any other (EBADF on a closed fd)
    fs.closeSync(t.fd);
    await expect(nodeFs.fdatasync(t.fd, true)).rejects.toMatchObject({ code: 'EBADF' });
  });

  it('a failed fdatasync → uncertain, and it is not retried', async () => {
    const t = target();
    const { fsl, calls } = layer({ fdatasync: async () => { throw eio(); } });
    const err = await failure(appendDurably(fsl, t.fd, BUF, t.position));
    expect(err.outcome).toBe('uncertain');
    expect(err.errno).toBe('EIO');
    expect(calls.fdatasync).toBe(1);
    expect(calls.ftruncateSync ?? 0).toBe(0); // the bytes are not removed: they may be durable
    expect(t.bytes().toString()).toBe(`committed\n${BUF.toString()}`);
    fs.closeSync(t.fd);
  });
});

describe('replaceAtomically and readPrivateSmall', () => {
  it('replaces a file with a 0600 one, durable or not, leaving no temp file', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'entry.json');
    fs.writeFileSync(file, 'old', { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    const { fsl, calls } = layer();
    await replaceAtomically(fsl, file, 'new ☃', false);
    expect(fs.readFileSync(file, 'utf8')).toBe('new ☃');
    expect(modeOf(file)).toBe(0o600);
    expect(calls.fsyncSync ?? 0).toBe(0);
    await replaceAtomically(fsl, file, 'newer', true);
    expect(fs.readFileSync(file, 'utf8')).toBe('newer');
    expect(calls.fsyncSync).toBe(1); // the directory
    expect(fs.readdirSync(dir)).toEqual(['entry.json']);
  });

  it('reads a private file up to maxBytes, undefined when missing, refuses an unsafe one', () => {
    const dir = tempDir();
    const file = privateFile(dir, 'abcdefghij');
    expect(readPrivateSmall(nodeFs, file, 100)).toBe('abcdefghij');
    expect(readPrivateSmall(nodeFs, file, 4)).toBe('abcd');
    expect(readPrivateSmall(nodeFs, path.join(dir, 'missing'), 100)).toBeUndefined();
    fs.chmodSync(file, 0o644);
    unsafe(() => readPrivateSmall(nodeFs, file, 100), /mode/);
    fs.chmodSync(file, 0o600);
    fs.symlinkSync(file, path.join(dir, 'link'));
    unsafe(() => readPrivateSmall(nodeFs, path.join(dir, 'link'), 100), /symbolic link/);
  });
});
