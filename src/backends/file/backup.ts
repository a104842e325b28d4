/**
 * A consistent copy of a live directory store (`session-sidecar backup`), made without stopping
 * its sidecars and without taking their leases (STORAGE.md, "Backup"):
 *
 * - each journal is copied up to the end of its last complete, verified batch as a read-only open
 *   sees it (a batch still being written is left out: it was never acknowledged, or it is
 *   acknowledged after the copy was taken — the backup is a point in time per session);
 * - a session's archives (history/) are copied after its journal: a compaction meanwhile only
 *   adds the archive of the copied generation (verify notes it), never loses one;
 * - state values, the trash, recovery evidence, the encryption marker and the blobs are copied
 *   whole (each file is written once, or replaced by rename: any copy is a whole version); blobs
 *   last, so every blob a copied record names is there (a blob is durable before its record);
 * - an index entry is copied only when it vouches for no more than the copied bytes;
 * - every file is created O_EXCL|O_NOFOLLOW 0600 and fdatasynced, every directory made 0700 and
 *   fsynced after its entries; all of it under `<to>.incomplete`, renamed to `<to>` only when
 *   complete (then the parent fsynced): a crash or Ctrl-C never leaves something at `<to>` that
 *   looks like a backup.
 * Locks, scratch directories and temporary files are not copied. Bytes are copied as stored
 * (sealed ones stay sealed under the same key).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createPrivate, fsyncDir, mkdirPrivate, readPrivateSmallBytes } from '../../durable/durableFile.js';
import { type FsLayer, nodeFs } from '../../durable/fsLayer.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { isSessionId } from '../../domain/ids.js';
import type { Work } from '../../domain/work.js';
import { WorkInterrupted } from '../../domain/work.js';
import { attachKey } from './journal/cipher.js';
import { openJournal } from './journal/open.js';
import { StoreLayout } from './layout.js';
import { readIndexEntry } from './sessionIndex.js';

export interface BackupResult {
  sessions: number;
  trashed: number;
  files: number;
  bytes: number;
  /** Sessions whose journal could not be read (damaged, unsafe): copied as files, reported by the verify after. */
  unreadable: Array<{ sessionId: string; message: string }>;
}

const CHUNK = 1 << 20;

/** The marker file of a backup being made: a rerun may clear a `<to>.incomplete` only when it holds it. */
export const INCOMPLETE_MARKER = 'BACKUP-INCOMPLETE';

/**
 * Copies the store at `root` into `partial` (a new directory: it must not exist), marked
 * incomplete. The caller verifies it, then `publishBackup` takes the marker away and renames it.
 */
export async function backupStore(root: string, partial: string, opts: { key?: StoreKey; work?: Work; fs?: FsLayer } = {}): Promise<BackupResult> {
  const fsl: FsLayer = { ...(opts.fs ?? nodeFs) }; // a seam of this backup's own: a key attaches to it
  if (opts.key) attachKey(fsl, { key: opts.key, gate: () => { throw new Error('backup never seals'); } });
  const src = new StoreLayout(path.resolve(root));
  const dst = new StoreLayout(partial);
  const res: BackupResult = { sessions: 0, trashed: 0, files: 0, bytes: 0, unreadable: [] };
  mkdirPrivate(fsl, partial);
  writeNew(fsl, path.join(partial, INCOMPLETE_MARKER), Buffer.from(`a backup of ${path.resolve(root)} being made; not a store until renamed\n`), res);
  fsyncDir(fsl, partial);
  fsyncDir(fsl, path.dirname(partial));
  for (const name of ['encryption.json', '.gitignore']) {
    if (fsl.lstatSync(path.join(src.root, name))?.isFile()) copyWhole(fsl, path.join(src.root, name), path.join(partial, name), res);
  }
  for (const dir of ['sessions', 'index', 'history', 'trash', 'recovery', 'blobs']) mkdirPrivate(fsl, path.join(partial, dir));

  const ids = fsl.readdirSync(src.sessionsDir).filter(isSessionId).sort();
  opts.work?.phase?.('copying', ids.length, 'sessions');
  for (const id of ids) {
    if (await opts.work?.shouldStop?.()) throw new WorkInterrupted(`${res.sessions} of ${ids.length} sessions copied`);
    copySession(fsl, src, dst, id, res);
    opts.work?.step?.();
  }
  fsyncDir(fsl, dst.sessionsDir);
  fsyncDir(fsl, dst.indexDir);
  fsyncDir(fsl, dst.historyDir);
  for (const dir of ['trash', 'recovery'] as const) {
    const from = path.join(src.root, dir);
    if (!fsl.lstatSync(from)?.isDirectory()) continue;
    for (const name of fsl.readdirSync(from)) {
      copyTree(fsl, path.join(from, name), path.join(partial, dir, name), res);
      if (dir === 'trash') res.trashed++;
    }
    fsyncDir(fsl, path.join(partial, dir));
  }
  const blobs = path.join(src.blobsDir, 'sha256');
  if (fsl.lstatSync(blobs)?.isDirectory()) copyTree(fsl, blobs, path.join(dst.blobsDir, 'sha256'), res);
  fsyncDir(fsl, dst.blobsDir);
  fsyncDir(fsl, partial);
  return res;
}

/**
 * The verified copy made a backup: its marker removed (the directory fsynced), then renamed to
 * `to` and the parent fsynced. A crash before the marker went leaves `<to>.incomplete` with
 * it (a rerun clears it); between the two steps, one without it (a rerun refuses to remove what
 * it cannot tell is its own, and says so); after the rename, a whole backup.
 */
export function publishBackup(partial: string, to: string, fsl: FsLayer = nodeFs): void {
  fsl.unlinkSync(path.join(partial, INCOMPLETE_MARKER));
  fsyncDir(fsl, partial);
  fsl.renameSync(partial, to);
  fsyncDir(fsl, path.dirname(to));
}

/** The journal's verified prefix, then its index entry (if it vouches for no more), its state values and its archives. */
function copySession(fsl: FsLayer, src: StoreLayout, dst: StoreLayout, id: string, res: BackupResult): void {
  mkdirPrivate(fsl, dst.sessionDir(id));
  const entryText = readRaw(fsl, src.indexEntry(id)); // before the journal: it can only vouch for less
  const entry = readIndexEntry(fsl, src, id);
  let copied: number | undefined;
  try {
    const handle = openJournal(fsl, src, id, { writable: false, ...(entry ? { hint: entry } : {}) });
    try {
      copied = handle.position.bytes;
      copyRange(fsl, handle.fd, copied, dst.journal(id), res);
    } finally {
      fsl.closeSync(handle.fd);
    }
  } catch (err) {
    if (fsl.lstatSync(dst.journal(id))) throw err; // a failure while writing the copy: the backup fails
    if (!fsl.lstatSync(src.journal(id))) {
      // Moved to the trash (or deleted) since the listing: the trash copy below has it, if anywhere.
      fsl.rmdirSync(dst.sessionDir(id));
      return;
    }
    // Not readable as a journal (damaged, or not this key's): kept as it is, for verify to report.
    res.unreadable.push({ sessionId: id, message: err instanceof Error ? err.message : String(err) });
    if (fsl.lstatSync(src.journal(id))?.isFile()) copyWhole(fsl, src.journal(id), dst.journal(id), res);
  }
  res.sessions++;
  if (entryText !== undefined && entry && copied !== undefined && entry.bytes <= copied) writeNew(fsl, dst.indexEntry(id), entryText, res);
  if (fsl.lstatSync(src.stateDir(id))?.isDirectory()) copyTree(fsl, src.stateDir(id), dst.stateDir(id), res);
  fsyncDir(fsl, dst.sessionDir(id));
  if (fsl.lstatSync(src.historySessionDir(id))?.isDirectory()) copyTree(fsl, src.historySessionDir(id), dst.historySessionDir(id), res);
}

/** A directory's regular files and folders (no temporary files, no symlinks: the store never makes them). */
function copyTree(fsl: FsLayer, from: string, to: string, res: BackupResult): void {
  mkdirPrivate(fsl, to);
  for (const name of fsl.readdirSync(from).sort()) {
    if (name.endsWith('.tmp') || name === 'scratch' || name === 'tmp') continue;
    const st = fsl.lstatSync(path.join(from, name));
    if (st?.isDirectory()) copyTree(fsl, path.join(from, name), path.join(to, name), res);
    else if (st?.isFile()) copyWhole(fsl, path.join(from, name), path.join(to, name), res);
    else if (st) throw new Error(`backup refused: ${path.join(from, name)} is neither a file nor a directory`);
  }
  fsyncDir(fsl, to);
}

function copyWhole(fsl: FsLayer, from: string, to: string, res: BackupResult): void {
  const fd = fsl.openSync(from, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fsl.fstatSync(fd);
    if (!st.isFile()) throw new Error(`backup refused: ${from} is not a regular file`);
    copyRange(fsl, fd, st.size, to, res);
  } finally {
    fsl.closeSync(fd);
  }
}

/** The first `bytes` of `fd` into a new private file at `to`, synced. */
function copyRange(fsl: FsLayer, fd: number, bytes: number, to: string, res: BackupResult): void {
  const out = createPrivate(fsl, to);
  try {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(bytes, 1)));
    for (let pos = 0; pos < bytes;) {
      const n = fsl.readSync(fd, buf, 0, Math.min(buf.length, bytes - pos), pos);
      if (n === 0) throw new Error(`backup: ${to} ended at byte ${pos} of ${bytes} while being copied`);
      for (let w = 0; w < n;) w += fsl.writeSync(out, buf, w, n - w, pos + w);
      pos += n;
    }
    fsl.fsyncSync(out);
  } finally {
    fsl.closeSync(out);
  }
  res.files++;
  res.bytes += bytes;
}

function writeNew(fsl: FsLayer, to: string, data: Buffer, res: BackupResult): void {
  const out = createPrivate(fsl, to);
  try {
    for (let w = 0; w < data.length;) w += fsl.writeSync(out, data, w, data.length - w, w);
    fsl.fsyncSync(out);
  } finally {
    fsl.closeSync(out);
  }
  res.files++;
  res.bytes += data.length;
}

function readRaw(fsl: FsLayer, file: string): Buffer | undefined {
  try {
    return readPrivateSmallBytes(fsl, file, 1 << 21);
  } catch {
    return undefined; // unsafe or unreadable: not copied (a cache; verify reports it at the source)
  }
}
