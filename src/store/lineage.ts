import path from 'node:path';
import { ensurePrivateDir, fsyncDir } from '../durable/durableFile.js';
import { errnoOf } from '../durable/errors.js';
import type { FsLayer } from '../durable/fsLayer.js';
import { StoreError } from './errors.js';
import { encodeRecordLine } from './journal/format.js';
import type { JournalHandle } from './journal/open.js';
import { readPage } from './journal/read.js';
import type { StoreLayout } from './layout.js';

/**
 * The record lines of a fork: the source's records from its first record line (a checkpoint
 * when it was compacted: a fork starts there, not from the archives) up to atSeq, seqs and
 * timestamps kept. Each is re-sealed as a batch of its own: the fork is written whole under a
 * temporary name and renamed, so no batch of it can be torn.
 */
export function forkLines(fsl: FsLayer, handle: JournalHandle, atSeq: number): Buffer[] {
  const lines: Buffer[] = [];
  let afterSeq = 0;
  while (afterSeq < atSeq) {
    const page = readPage(fsl, handle.fd, {
      from: handle.dataStart, end: handle.position.bytes, afterSeq, limit: 10_000, maxBytes: 16 << 20, firstSeq: handle.firstSeq,
    });
    for (const rec of page.records) {
      if (rec.seq > atSeq) return lines;
      const { seq, ts, ...body } = rec;
      if (body.kind === 'checkpoint') {
        // The fork has no archives of its own: its checkpoint starts generation 0 and names none.
        delete body.archived;
        body.generation = 0;
      }
      lines.push(encodeRecordLine(seq, ts, undefined, JSON.stringify(body)));
    }
    if (page.records.length === 0 || page.scannedSeq === afterSeq) break;
    afterSeq = page.scannedSeq;
  }
  return lines;
}

/** Everything a session owns in the store, by where it lives and where it goes in the trash. */
function parts(layout: StoreLayout, id: string): Array<{ live: string; trashed: string }> {
  const trash = layout.trashSessionDir(id);
  return [
    { live: layout.sessionDir(id), trashed: path.join(trash, 'session') },
    { live: layout.historySessionDir(id), trashed: path.join(trash, 'history') },
    { live: layout.indexEntry(id), trashed: path.join(trash, 'index.json') },
    { live: layout.recoverySessionDir(id), trashed: path.join(trash, 'recovery') },
  ];
}

/**
 * Moves a session to trash/<id>/ by renames (each directory fsynced): the journal first, so a
 * crash midway leaves the session either listed (journal still in place) or in the trash.
 */
export function trashSession(fsl: FsLayer, layout: StoreLayout, id: string): void {
  const trash = layout.trashSessionDir(id);
  // An empty trash/<id>/ holds no session: it is what a delete that failed (or crashed) before its
  // first rename leaves behind, and must not make the live session undeletable.
  if (fsl.lstatSync(trash) && !isEmptyDir(fsl, trash)) {
    throw new StoreError('Conflict', `a deleted session ${id} is already in the trash: restore or purge it first`, { reason: 'inTrash', sessionId: id });
  }
  ensurePrivateDir(fsl, layout.trashDir);
  ensurePrivateDir(fsl, trash);
  const [journal, ...rest] = parts(layout, id);
  try {
    moveIfPresent(fsl, journal!.live, journal!.trashed);
  } catch (err) {
    // Nothing was moved: the session is still live and whole. Leave no empty trash entry behind.
    if (fsl.lstatSync(journal!.live) && isEmptyDir(fsl, trash)) {
      try {
        fsl.rmdirSync(trash);
      } catch {
        // an empty trash/<id>/ is harmless: the next delete reuses it
      }
      const errno = errnoOf(err);
      throw new StoreError('NotWritten', `session ${id} not deleted (${errno ?? 'I/O error'}); nothing was moved`, { sessionId: id, ...(errno ? { errno } : {}) });
    }
    throw err;
  }
  for (const p of rest) moveIfPresent(fsl, p.live, p.trashed);
}

function isEmptyDir(fsl: FsLayer, dir: string): boolean {
  const st = fsl.lstatSync(dir);
  return st !== undefined && st.isDirectory() && fsl.readdirSync(dir).length === 0;
}

export function restoreSession(fsl: FsLayer, layout: StoreLayout, id: string): void {
  const trash = layout.trashSessionDir(id);
  if (!fsl.lstatSync(trash) || isEmptyDir(fsl, trash)) throw new StoreError('SessionNotFound', `no deleted session ${id} in the trash`, { sessionId: id });
  if (fsl.lstatSync(layout.sessionDir(id))) {
    throw new StoreError('Conflict', `session ${id} exists again: delete it before restoring the old one`, { reason: 'exists', sessionId: id });
  }
  for (const p of parts(layout, id)) moveIfPresent(fsl, p.trashed, p.live);
  removeTree(fsl, layout.trashSessionDir(id));
  fsyncDir(fsl, layout.trashDir);
}

/** Removes a session (live or trashed) for good. */
export function purgeSession(fsl: FsLayer, layout: StoreLayout, id: string): void {
  for (const p of parts(layout, id)) {
    // history/ (or trash/) exists only once something was archived (or deleted): nothing to sync then.
    if (!fsl.lstatSync(p.live)) continue;
    removeTree(fsl, p.live);
    fsyncDir(fsl, path.dirname(p.live));
  }
  removeTree(fsl, layout.trashSessionDir(id));
  if (fsl.lstatSync(layout.trashDir)) fsyncDir(fsl, layout.trashDir);
}

function moveIfPresent(fsl: FsLayer, from: string, to: string): void {
  if (!fsl.lstatSync(from)) return;
  ensurePrivateDir(fsl, path.dirname(to));
  fsl.renameSync(from, to);
  fsyncDir(fsl, path.dirname(from));
  fsyncDir(fsl, path.dirname(to));
}

function removeTree(fsl: FsLayer, target: string): void {
  const st = fsl.lstatSync(target);
  if (!st) return;
  if (st.isDirectory()) for (const name of fsl.readdirSync(target)) removeTree(fsl, path.join(target, name));
  try {
    if (st.isDirectory()) fsl.rmdirSync(target);
    else fsl.unlinkSync(target);
  } catch (err) {
    if (errnoOf(err) !== 'ENOENT') throw err;
  }
}
