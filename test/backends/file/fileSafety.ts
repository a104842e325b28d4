import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { type FsLayer, nodeFs } from '../../../src/durable/fsLayer.js';
import { tempDir } from '../../helpers.js';

const { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND } = fs.constants;
const WRITING = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;

/**
 * A file outside the store that a planted symlink points at. `untouched()` asserts it was
 * neither changed (bytes, mtime, ctime: a truncate or chmod moves ctime) nor, when `opens` of a
 * watching layer are given, ever opened for writing through the FsLayer (by inode).
 */
export function victim(): { file: string; dir: string; dangling: string; untouched: (opens?: Opened[]) => void } {
  const dir = tempDir('sidecar-victim-');
  const file = path.join(dir, 'precious.txt');
  fs.writeFileSync(file, 'precious bytes outside the store\n', { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  const before = fs.statSync(file);
  const bytes = fs.readFileSync(file);
  const dirBefore = fs.statSync(dir);
  const dangling = path.join(dir, 'not-there');
  return {
    file, dir, dangling,
    untouched(opens = []) {
      const st = fs.statSync(file);
      expect(fs.readFileSync(file).equals(bytes), 'the outside file was changed').toBe(true);
      expect(st.mtimeMs).toBe(before.mtimeMs);
      expect(st.ctimeMs).toBe(before.ctimeMs);
      expect(fs.existsSync(dangling), 'a dangling symlink was followed: its target was created').toBe(false);
      expect(fs.readdirSync(dir).sort()).toEqual(['precious.txt']);
      expect(fs.statSync(dir).mtimeMs).toBe(dirBefore.mtimeMs);
      const written = opens.filter((o) => o.ino === before.ino && o.dev === before.dev && (o.flags & WRITING) !== 0);
      expect(written, 'the outside file was opened for writing').toEqual([]);
    },
  };
}

export type Plant = 'symlink' | 'dangling' | 'fifo';
export const PLANTS: Plant[] = ['symlink', 'dangling', 'fifo'];

/** Puts a symlink to the victim, a dangling symlink into the victim's directory, or a FIFO at `at`. */
export function plant(kind: Plant, at: string, v: ReturnType<typeof victim>, target = v.file): void {
  fs.mkdirSync(path.dirname(at), { recursive: true, mode: 0o700 });
  fs.rmSync(at, { recursive: true, force: true });
  if (kind === 'symlink') fs.symlinkSync(target, at);
  else if (kind === 'dangling') fs.symlinkSync(v.dangling, at);
  else execFileSync('mkfifo', ['-m', '600', at]);
}

/** What a planted thing still is (the store must leave it in place, not replace or follow it). */
export function stillPlanted(kind: Plant, at: string): void {
  const st = fs.lstatSync(at);
  expect(kind === 'fifo' ? st.isFIFO() : st.isSymbolicLink(), `${at} is no longer the planted ${kind}`).toBe(true);
}

export interface Opened { path: string; flags: number; ino: number; dev: number }

/** nodeFs that records every open (path, flags and what it opened), to show what was opened for writing. */
export function watchingFs(): { fsl: FsLayer; opens: Opened[] } {
  const opens: Opened[] = [];
  const fsl: FsLayer = {
    ...nodeFs,
    openSync(p, flags, mode) {
      const fd = nodeFs.openSync(p, flags, mode);
      const st = fs.fstatSync(fd);
      opens.push({ path: p, flags, ino: st.ino, dev: st.dev });
      return fd;
    },
  };
  return { fsl, opens };
}
