import fs from 'node:fs';
import path from 'node:path';
import { type FsLayer, nodeFs } from '../../src/durable/fsLayer.js';
import type { Ledger } from './model.js';

/**
 * A file-system layer for simulated power loss. Every call goes to the real file system (the
 * store under test runs normally on a live directory), and the layer records what a power cut
 * could keep:
 *
 *   - a file's content as of its last fsync/fdatasync (read back at the moment of the call);
 *   - a directory's entries (creates, renames, unlinks) as of its last fsync;
 *   - every write, so a crash image can add a torn prefix (or zeros) of the last unsynced one;
 *   - every rename between two directories, as one all-or-nothing step.
 *
 * Renames are modelled as ext4 (and xfs) do them: a rename is a single journal transaction, so
 * after a power cut it is either wholly done or not at all — a name is never left in both
 * directories, nor in neither — and the fsync of either directory commits it (jbd2 commits the
 * running transaction, which holds both directory updates). Until one of them is fsynced the
 * rename may be lost (the old name survives). A per-directory model (each directory as of its
 * own last fsync) would wrongly let the store's "destination first, then source" fsync order
 * keep a session directory in both places after a cut between the two fsyncs. Other namespace
 * changes (create, unlink, a rename within one directory) stay per directory: durable with the
 * next fsync of their directory. Journals commit in order, so an earlier mkdir of a rename's
 * destination cannot be lost while the rename survives; the store fsyncs a new directory's
 * parent right after the mkdir anyway, so the model need not track that order.
 *
 * Files are tracked as objects (an inode at the time it was created), so a rename moves an
 * object and a reused inode number is a new object. The workload logs each acknowledgement into
 * the same event log; `replay` then walks the log and, just before every sync event (a "crash
 * point"), materializes the directory tree that survives a power cut there into a fresh
 * directory, with the ledger of everything acknowledged before that point.
 */

interface FdInfo { obj: number; path: string; dir: boolean }
interface Entry { obj: number; dir: boolean }

export type CrashEvent =
  | { t: 'sync'; obj: number; content: Buffer }
  | { t: 'dirsync'; obj: number; entries: Map<string, Entry> }
  | { t: 'write'; obj: number; pos: number; data: Buffer }
  /** A rename between two directories (same-directory renames are covered by the dirsync snapshots). */
  | { t: 'rename'; obj: number; from: { dir: number; name: string }; to: { dir: number; name: string } }
  | { t: 'ack'; apply: (ledger: Ledger) => void }
  /** A file written outside the seam and synced by its writer, first seen by a directory fsync. */
  | { t: 'adopt'; obj: number; content: Buffer }
  /** The store's index cache (written without sync, outside the seam) as the disk had it then. */
  | { t: 'index'; files: Map<string, { text: string; obj: number | undefined }> };

const { O_CREAT } = fs.constants;

export class CrashRecorder {
  readonly events: CrashEvent[] = [];
  readonly rootObj: number;
  private nextObj = 1;
  private readonly inoToObj = new Map<number, number>();
  private readonly dirs = new Set<number>();
  private readonly fds = new Map<number, FdInfo>();
  readonly layer: FsLayer;
  syncs = 0;
  /**
   * When set, the next fdatasync of a file whose path `hang.of` accepts neither reaches the disk
   * nor returns (a writer killed inside it): `hang.then` is told, and the bytes written stay
   * unsynced. (A batch holding a blob syncs the blob file first: `of` picks the journal's sync.)
   */
  hangNextFdatasync: { of: (file: string) => boolean; then: () => void } | undefined;

  constructor(readonly root: string) {
    this.rootObj = this.newObj(fs.lstatSync(root).ino, true);
    const self = this;
    this.layer = {
      ...nodeFs,
      openSync(p, flags, mode) {
        const existed = fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;
        const fd = nodeFs.openSync(p, flags, mode);
        const st = fs.fstatSync(fd);
        let obj = self.inoToObj.get(st.ino);
        if (obj === undefined || (!existed && (flags & O_CREAT) !== 0)) obj = self.newObj(st.ino, st.isDirectory());
        self.fds.set(fd, { obj, path: p, dir: st.isDirectory() });
        return fd;
      },
      closeSync(fd) {
        nodeFs.closeSync(fd);
        self.fds.delete(fd);
      },
      async close(fd) {
        // Forgotten before the close: once it is done the number may be reused by any open,
        // and a mapping deleted after that would lose the new file's syncs.
        self.fds.delete(fd);
        await nodeFs.close(fd);
      },
      writeSync(fd, buf, offset, length, position) {
        const n = nodeFs.writeSync(fd, buf, offset, length, position);
        const info = self.fds.get(fd);
        if (info && n > 0) self.events.push({ t: 'write', obj: info.obj, pos: position, data: Buffer.from(buf.subarray(offset, offset + n)) });
        return n;
      },
      async fdatasync(fd) {
        const hang = self.hangNextFdatasync;
        if (hang && hang.of(self.fds.get(fd)?.path ?? '')) {
          self.hangNextFdatasync = undefined;
          hang.then();
          return new Promise<void>(() => {});
        }
        // The file as of the call (its caller keeps the fd open until this resolves).
        const info = self.fds.get(fd);
        const content = info ? readWhole(fd) : undefined;
        await nodeFs.fdatasync(fd);
        if (info && content) self.synced({ t: 'sync', obj: info.obj, content });
      },
      fsyncSync(fd) {
        const info = self.fds.get(fd);
        const snapshot = info ? (info.dir ? self.entriesOf(info) : readWhole(fd)) : undefined;
        nodeFs.fsyncSync(fd);
        if (!info || snapshot === undefined) return;
        self.synced(info.dir
          ? { t: 'dirsync', obj: info.obj, entries: snapshot as Map<string, Entry> }
          : { t: 'sync', obj: info.obj, content: snapshot as Buffer });
      },
      mkdirSync(p, mode) {
        nodeFs.mkdirSync(p, mode);
        self.newObj(fs.lstatSync(p).ino, true);
      },
      renameSync(from, to) {
        const objOf = (p: string) => {
          const st = fs.lstatSync(p, { throwIfNoEntry: false });
          return st && self.inoToObj.get(st.ino);
        };
        const obj = objOf(from);
        const fromDir = objOf(path.dirname(from));
        const toDir = objOf(path.dirname(to));
        nodeFs.renameSync(from, to);
        if (obj !== undefined && fromDir !== undefined && toDir !== undefined && fromDir !== toDir) {
          self.events.push({ t: 'rename', obj, from: { dir: fromDir, name: path.basename(from) }, to: { dir: toDir, name: path.basename(to) } });
        }
      },
    };
  }

  /** Logs an acknowledgement at this instant of the event log. */
  ack(apply: (ledger: Ledger) => void): void {
    this.events.push({ t: 'ack', apply });
  }

  private newObj(ino: number, dir: boolean): number {
    const obj = this.nextObj++;
    this.inoToObj.set(ino, obj);
    if (dir) this.dirs.add(obj);
    return obj;
  }

  private synced(ev: CrashEvent): void {
    this.syncs += 1;
    this.captureIndex();
    this.events.push(ev);
  }

  private entriesOf(info: FdInfo): Map<string, Entry> {
    const out = new Map<string, Entry>();
    const adopt = path.basename(info.path) === 'state';
    for (const name of fs.readdirSync(info.path)) {
      const st = fs.lstatSync(path.join(info.path, name), { throwIfNoEntry: false });
      if (adopt && st?.isFile()) {
        // state values are written by write-file-atomic, outside the seam (temp file, fsync,
        // rename, then this directory fsync): a file here is taken as synced with its content now
        const obj = this.newObj(st.ino, false);
        this.events.push({ t: 'adopt', obj, content: fs.readFileSync(path.join(info.path, name)) });
        out.set(name, { obj, dir: false });
        continue;
      }
      const obj = st && this.inoToObj.get(st.ino);
      if (st && obj !== undefined) out.set(name, { obj, dir: st.isDirectory() }); // files made outside the seam are unknown: left out
    }
    return out;
  }

  /**
   * The end of the run: the index cache as the disk has it now (entries written after the last
   * sync are as much a part of what a power cut after the run may keep).
   */
  finish(): void {
    this.captureIndex();
  }

  /** The index files as they are on disk now, each with the object its `ino` names. */
  private captureIndex(): void {
    const dir = path.join(this.root, 'index');
    const files = new Map<string, { text: string; obj: number | undefined }>();
    for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      if (!/^[^.]+\.json$/.test(name)) continue; // write-file-atomic's temporaries
      let text: string;
      try {
        text = fs.readFileSync(path.join(dir, name), 'utf8');
      } catch {
        continue;
      }
      let ino: unknown;
      try {
        ino = (JSON.parse(text) as { ino?: unknown }).ino;
      } catch {
        // a damaged cache entry is kept as is: the store must ignore it
      }
      files.set(name, { text, obj: typeof ino === 'number' ? this.inoToObj.get(ino) : undefined });
    }
    this.events.push({ t: 'index', files });
  }

  /** Dirs created by the store are tracked objects; this tells materialize which objects are dirs. */
  isDir(obj: number): boolean {
    return this.dirs.has(obj);
  }
}

function readWhole(fd: number): Buffer {
  const size = fs.fstatSync(fd).size;
  const buf = Buffer.alloc(size);
  let got = 0;
  while (got < size) {
    const n = fs.readSync(fd, buf, got, size - got, got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

export type Variant = 'synced' | 'synced+index' | 'torn' | 'torn+index' | 'zeros';

const VARIANTS: readonly Variant[] = ['synced', 'synced+index', 'torn', 'torn+index', 'zeros'];
const withIndex = (v: Variant) => v === 'synced+index' || v === 'torn+index';
const tearing = (v: Variant) => v === 'torn' || v === 'torn+index' || v === 'zeros';

export interface CrashPoint {
  /** Index of the sync event the crash comes just before (events.length: after everything). */
  at: number;
  variant: Variant;
  ledger: Ledger;
  /** Bytes of the last unsynced write kept (torn) or zeroed (zeros). */
  tornBytes?: number;
}

/** The durable state while walking the event log. */
class Durable {
  constructor(private readonly isDirObj: (obj: number) => boolean) {}
  readonly content = new Map<number, Buffer>();
  readonly entries = new Map<number, Map<string, Entry>>();
  /** Writes not covered by a sync of their file yet, oldest first. */
  private pending: Array<{ obj: number; pos: number; data: Buffer }> = [];
  /** Renames between two directories neither of which was fsynced since. */
  private renames: Array<Extract<CrashEvent, { t: 'rename' }>> = [];
  index = new Map<string, { text: string; obj: number | undefined }>();

  /** The newest write no sync has covered: the one a power cut may have torn. */
  get lastWrite(): { obj: number; pos: number; data: Buffer } | undefined {
    return this.pending[this.pending.length - 1];
  }

  apply(ev: CrashEvent, ledger: Ledger): void {
    switch (ev.t) {
      case 'sync':
        this.content.set(ev.obj, ev.content);
        this.pending = this.pending.filter((w) => w.obj !== ev.obj);
        break;
      case 'dirsync': {
        this.entries.set(ev.obj, ev.entries);
        // A rename is one journal transaction (ext4, xfs): the fsync of either of its directories
        // commits it whole, so it is durable in both at once — never in neither, never in both.
        for (const r of this.renames) {
          if (r.from.dir === ev.obj) {
            const dest = this.entries.get(r.to.dir) ?? new Map<string, Entry>();
            dest.set(r.to.name, { obj: r.obj, dir: this.isDirObj(r.obj) });
            this.entries.set(r.to.dir, dest);
          } else if (r.to.dir === ev.obj) {
            const src = this.entries.get(r.from.dir);
            if (src?.get(r.from.name)?.obj === r.obj) src.delete(r.from.name);
          }
        }
        this.renames = this.renames.filter((r) => r.from.dir !== ev.obj && r.to.dir !== ev.obj);
        break;
      }
      case 'rename':
        this.renames.push(ev);
        break;
      case 'write':
        this.pending.push(ev);
        break;
      case 'adopt':
        this.content.set(ev.obj, ev.content);
        break;
      case 'ack':
        ev.apply(ledger);
        break;
      case 'index':
        this.index = ev.files;
        break;
    }
  }
}

/**
 * Writes the tree a power cut at this point leaves into `target` (which must not exist):
 * directories with the entries of their last fsync, files with the content of their last
 * fsync, plus, for the torn/zeros variants, part of the last unsynced write. With an index
 * variant, the index cache files as they were, their `ino` renumbered to the materialized
 * inodes (a real crash keeps inode numbers).
 */
function materialize(rec: CrashRecorder, d: Durable, target: string, variant: Variant, tornBytes: number): boolean {
  const newIno = new Map<number, number>();
  let touched = false;
  const emit = (obj: number, dir: string) => {
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chmodSync(dir, 0o700);
    for (const [name, e] of d.entries.get(obj) ?? []) {
      const p = path.join(dir, name);
      if (e.dir) {
        if (!rec.isDir(e.obj)) continue;
        if (obj === rec.rootObj && name === 'index' && withIndex(variant)) {
          fs.mkdirSync(p, { mode: 0o700 });
          continue; // filled below
        }
        emit(e.obj, p);
        continue;
      }
      let content = d.content.get(e.obj) ?? Buffer.alloc(0);
      const w = d.lastWrite;
      if (w && w.obj === e.obj && tearing(variant)) {
        const end = w.pos + tornBytes;
        const grown = Buffer.alloc(Math.max(content.length, end));
        content.copy(grown);
        if (variant !== 'zeros') w.data.copy(grown, w.pos, 0, tornBytes);
        content = grown;
        touched = true;
      }
      fs.writeFileSync(p, content, { mode: 0o600 });
      fs.chmodSync(p, 0o600);
      newIno.set(e.obj, fs.lstatSync(p).ino);
    }
  };
  emit(rec.rootObj, target);
  if (withIndex(variant)) {
    const dir = path.join(target, 'index');
    if (!fs.existsSync(dir)) fs.mkdirSync(dir, { mode: 0o700 });
    for (const [name, f] of d.index) {
      let text = f.text;
      try {
        const entry = JSON.parse(text) as Record<string, unknown>;
        entry.ino = f.obj !== undefined ? (newIno.get(f.obj) ?? -1) : -1;
        text = `${JSON.stringify(entry)}\n`;
      } catch {
        // kept damaged
      }
      fs.writeFileSync(path.join(dir, name), text, { mode: 0o600 });
    }
    // torn+index is worth an image only when both the tear and the index entries are there
    touched = d.index.size > 0 && (variant === 'synced+index' || touched);
  }
  return variant === 'synced' || touched;
}

export interface ReplayOptions {
  /** Where crash images are made (one at a time, removed after the check). */
  scratch: string;
  /** Picks the torn length: in [1, length]. */
  tornLength: (length: number) => number;
  check: (image: string, point: CrashPoint) => Promise<void>;
  newLedger: () => Ledger;
}

/** Crashes at every sync point (and at the end), in each variant that differs from plain 'synced'. */
export async function replay(rec: CrashRecorder, opts: ReplayOptions): Promise<{ points: number; images: number }> {
  const d = new Durable((obj) => rec.isDir(obj));
  const ledger = opts.newLedger();
  let points = 0;
  let images = 0;
  let n = 0;
  const crashHere = async (at: number) => {
    points += 1;
    for (const variant of VARIANTS) {
      const w = d.lastWrite;
      if (tearing(variant) && !w) continue;
      const tornBytes = w ? opts.tornLength(w.data.length) : 0;
      const image = path.join(opts.scratch, `image-${n++}`);
      if (!materialize(rec, d, image, variant, tornBytes)) {
        fs.rmSync(image, { recursive: true, force: true });
        continue;
      }
      images += 1;
      // the ledger object is shared while walking; a check must not keep it
      await opts.check(image, { at, variant, ledger, ...(tearing(variant) ? { tornBytes } : {}) });
      fs.rmSync(image, { recursive: true, force: true });
    }
  };
  for (let i = 0; i < rec.events.length; i++) {
    const ev = rec.events[i] as CrashEvent;
    if (ev.t === 'sync' || ev.t === 'dirsync') await crashHere(i);
    d.apply(ev, ledger);
  }
  await crashHere(rec.events.length);
  return { points, images };
}
