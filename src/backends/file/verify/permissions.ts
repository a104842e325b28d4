import type fs from 'node:fs';
import path from 'node:path';
import type { FsLayer } from '../../../durable/fsLayer.js';
import type { StoreLayout } from '../layout.js';
import { DIR_MODE, FILE_MODE, octal } from './common.js';
import type { Finding } from './report.js';

/** An entry of a listed directory, as lstat saw it. */
export interface Entry {
  name: string;
  path: string;
  st: fs.Stats;
}

/**
 * The store's file system as the checks see it (read calls only), with the rules every file
 * and folder of a store follows: files 0600, directories 0700, no symbolic links, all owned by
 * the user the sidecar runs as.
 */
export class FileChecks {
  private readonly uid = typeof process.getuid === 'function' ? process.getuid() : undefined;

  constructor(
    readonly fsl: FsLayer,
    readonly layout: StoreLayout,
  ) {}

  /** A path relative to the store root (what findings name). */
  rel(p: string): string {
    return path.relative(this.layout.root, p) || '.';
  }

  /** A directory's entries, sorted; none when it cannot be listed. */
  list(dir: string): string[] {
    try {
      return this.fsl.readdirSync(dir).sort();
    } catch {
      return [];
    }
  }

  /** The entries of `dir` that still exist, sorted by name; none when it cannot be listed. */
  entries(dir: string): Entry[] {
    const found: Entry[] = [];
    for (const name of this.list(dir)) {
      const p = path.join(dir, name);
      const st = this.fsl.lstatSync(p);
      if (st) found.push({ name, path: p, st });
    }
    return found;
  }

  /** A store directory's lstat, its type and mode reported to `out`; undefined when it does not exist. */
  directory(dir: string, out: Finding[]): fs.Stats | undefined {
    const st = this.fsl.lstatSync(dir);
    if (st) this.dirMode(st, dir, out);
    return st;
  }

  owner(st: fs.Stats, p: string, out: Finding[]): void {
    if (this.uid !== undefined && st.uid !== this.uid) out.push({ severity: 'error', check: 'permissions', message: 'owned by another user (the sidecar refuses it)', file: this.rel(p) });
  }

  dirMode(st: fs.Stats, p: string, out: Finding[]): void {
    if (st.isSymbolicLink()) {
      out.push({ severity: 'error', check: 'permissions', message: 'a symbolic link where a directory belongs', file: this.rel(p) });
      return;
    }
    if (!st.isDirectory()) {
      out.push({ severity: 'error', check: 'layout', message: 'not a directory', file: this.rel(p) });
      return;
    }
    const mode = st.mode & 0o777;
    if (mode !== DIR_MODE) out.push({ severity: 'error', check: 'permissions', message: `directory mode ${octal(mode)}, expected 700`, file: this.rel(p) });
    this.owner(st, p, out);
  }

  fileMode(st: fs.Stats, p: string, out: Finding[]): void {
    const mode = st.mode & 0o777;
    if (mode !== FILE_MODE) out.push({ severity: 'error', check: 'permissions', message: `file mode ${octal(mode)}, expected 600${(mode & 0o077) !== 0 ? ' (others can read it)' : ''}`, file: this.rel(p) });
    this.owner(st, p, out);
  }

  /** The store directory itself: group- or world-writable is an error (the sidecar refuses it), readable a warning. */
  rootMode(out: Finding[]): void {
    const st = this.fsl.lstatSync(this.layout.root) as fs.Stats;
    const mode = st.mode & 0o777;
    if ((mode & 0o022) !== 0) out.push({ severity: 'error', check: 'permissions', message: `the store directory has mode ${octal(mode)}: writable by others (the sidecar refuses it)`, file: '.' });
    else if (mode !== DIR_MODE) out.push({ severity: 'warning', check: 'permissions', message: `the store directory has mode ${octal(mode)}, expected 700 (others can read session contents)`, file: '.' });
    this.owner(st, this.layout.root, out);
  }
}
