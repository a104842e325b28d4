/**
 * Import of a whole session into a file store (`session-sidecar migrate`), atomically:
 *
 * 1. Everything is written under `<store>/migrate/<id>/` (not a place any reader looks):
 *    `session/journal.jsonl` (the header line, then every record of the active generation as
 *    its own line: seqs, ts and record texts as given; batch boundaries are not kept, each
 *    record is a complete batch), `session/state/<key>.json`, `history/<gen>.jsonl` (each
 *    archived generation as the journal it was), every file created O_EXCL 0600 and fsynced,
 *    every directory fsynced. Bytes go through the FsLayer given (the store's secret gate).
 * 2. Live session: `history/` is renamed to `history/<id>/` (harmless alone: nothing reads the
 *    history of a session that does not exist), then **`session/` is renamed to
 *    `sessions/<id>/`** — the commit point — and `sessions/` fsynced. A deleted session: the
 *    whole `migrate/<id>/` is renamed to **`trash/<id>/`** (commit point), `trash/` fsynced.
 * 3. `migrate/<id>/` is removed.
 *
 * A crash before the commit point leaves no session (a rerun first removes the leftovers:
 * `migrate/<id>/`, an orphan `history/<id>/`, a `sessions/<id>/` without journal); after it the
 * session is whole, and what may be left of its staging (an empty `migrate/<id>/`, an empty
 * `migrate/`) is removed by the rerun that finds the session there (settleImport). An import
 * that fails before its commit point (no crash) removes its staging at once. An existing
 * session is Conflict (reason exists): nothing is written.
 * No index entry is written (a cache, rebuilt from the journal) and no lease is taken.
 */
import path from 'node:path';
import type { SessionBundle } from '../../../core/port.js';
import { createPrivate, ensurePrivateDir, fsyncDir } from '../../../durable/durableFile.js';
import type { FsLayer } from '../../../durable/fsLayer.js';
import { StoreError } from '../../../domain/errors.js';
import { encodeHeaderLine, encodeRecordLine, JOURNAL_FORMAT, JOURNAL_VERSION, sealLine } from '../journal/format.js';
import { fileAad, type JournalCipher, storeKeyOf } from '../journal/cipher.js';
import { checkMarker } from '../encryptionMarker.js';
import { sealText } from '../sealedFile.js';
import type { StoreLayout } from '../layout.js';
import { placeOf } from './exportFile.js';

export function stagingRoot(layout: StoreLayout): string {
  return path.join(layout.root, 'migrate');
}

/** The journal's header line for a header text (the journal envelope put back around it). */
export function headerLine(headerText: string): Buffer {
  return sealLine(JSON.stringify({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, ...(JSON.parse(headerText) as object) }));
}

function writePrivateFile(fsl: FsLayer, file: string, chunks: Buffer[]): void { // exclusive: createPrivate opens O_CREAT|O_EXCL|O_NOFOLLOW, 0600
  const fd = createPrivate(fsl, file);
  try {
    let pos = 0;
    for (const buf of chunks) {
      for (let done = 0; done < buf.length; ) done += fsl.writeSync(fd, buf, done, buf.length - done, pos + done);
      pos += buf.length;
    }
    fsl.fsyncSync(fd);
  } finally {
    fsl.closeSync(fd);
  }
}

function removeTree(fsl: FsLayer, target: string): void {
  const st = fsl.lstatSync(target);
  if (!st) return;
  if (st.isDirectory()) {
    for (const name of fsl.readdirSync(target)) removeTree(fsl, path.join(target, name));
    fsl.rmdirSync(target);
  } else fsl.unlinkSync(target);
}

/** Removes what a crashed import of `id` may have left; refuses when the session exists. */
export function prepareImport(fsl: FsLayer, layout: StoreLayout, id: string): void {
  if (placeOf(fsl, layout, id)) throw new StoreError('Conflict', `session ${id} exists already in the destination; nothing was written`, { reason: 'exists', sessionId: id });
  removeTree(fsl, path.join(stagingRoot(layout), id));
  // No session exists: these can only be leftovers of an import that crashed before its commit point.
  removeTree(fsl, layout.sessionDir(id));
  removeTree(fsl, layout.historySessionDir(id));
  const trash = layout.trashSessionDir(id);
  if (fsl.lstatSync(trash) && !fsl.lstatSync(path.join(trash, 'session'))) removeTree(fsl, trash);
}

/**
 * The session is in the destination (a rerun found it there): a crash after its import's commit
 * point may have left `migrate/<id>/` (empty: everything in it was renamed into place) and an
 * empty `migrate/`. Removed, and their parents fsynced. Nothing of a session is in them.
 */
export function settleImport(fsl: FsLayer, layout: StoreLayout, id: string): void {
  if (!placeOf(fsl, layout, id)) return;
  const staging = stagingRoot(layout);
  if (!fsl.lstatSync(staging)?.isDirectory()) return;
  const dir = path.join(staging, id);
  if (fsl.lstatSync(dir)) {
    removeTree(fsl, dir);
    fsyncDir(fsl, staging);
  }
  removeStagingIfEmpty(fsl, layout);
}

/** `migrate/` itself, only when empty (another import may be under way), then the root fsynced. */
function removeStagingIfEmpty(fsl: FsLayer, layout: StoreLayout): void {
  try {
    fsl.rmdirSync(stagingRoot(layout));
  } catch {
    return; // not empty (or gone): left for the next import
  }
  fsyncDir(fsl, layout.root);
}

export function importFileSession(fsl: FsLayer, layout: StoreLayout, b: SessionBundle): void {
  const id = b.header.sessionId;
  layout.init(fsl);
  // An encrypted destination takes only sealed files under its own key (and a plaintext one only plaintext).
  const key = storeKeyOf(fsl);
  checkMarker(fsl, layout, key?.key, false);
  const cipher: JournalCipher | undefined = key && { ...key, sessionId: id };
  prepareImport(fsl, layout, id);
  const staging = stagingRoot(layout);
  ensurePrivateDir(fsl, staging);
  const dir = path.join(staging, id);
  let committed = false;
  try {
    stageAndCommit(fsl, layout, b, dir, cipher, () => { committed = true; });
  } catch (err) {
    // Before the commit point nothing of the session is anywhere a reader looks: its staging
    // goes now (best effort: a rerun removes it too). After it, the session stands.
    if (!committed) {
      try {
        removeTree(fsl, dir);
        fsyncDir(fsl, staging);
        removeStagingIfEmpty(fsl, layout);
      } catch {
        // left for the rerun (prepareImport)
      }
    }
    throw err;
  }
  removeStagingIfEmpty(fsl, layout);
}

function stageAndCommit(fsl: FsLayer, layout: StoreLayout, b: SessionBundle, dir: string, cipher: JournalCipher | undefined, committed: () => void): void {
  const id = b.header.sessionId;
  const staging = path.dirname(dir);
  ensurePrivateDir(fsl, dir);
  const header = cipher
    ? encodeHeaderLine({ format: JOURNAL_FORMAT, version: JOURNAL_VERSION, ...(JSON.parse(b.header.text) as object), sessionId: id }, cipher)
    : headerLine(b.header.text);
  const journal = (records: SessionBundle['generations'][number]['records']) => [header, ...records.map((r) => encodeRecordLine(r.seq, r.ts, undefined, r.text, cipher))];
  const sessionDir = path.join(dir, 'session');
  ensurePrivateDir(fsl, sessionDir);
  const active = b.generations[b.generations.length - 1];
  if (!active) throw new StoreError('InvalidArgument', 'a session has at least its active generation', { path: 'generations' });
  writePrivateFile(fsl, path.join(sessionDir, 'journal.jsonl'), journal(active.records));
  if (b.state.length > 0) {
    const stateDir = path.join(sessionDir, 'state');
    ensurePrivateDir(fsl, stateDir);
    for (const s of b.state) writePrivateFile(fsl, path.join(stateDir, `${s.key}.json`), [Buffer.from(sealText(fsl, fileAad('state', id, s.key), s.text), 'utf8')]);
    fsyncDir(fsl, stateDir);
  }
  fsyncDir(fsl, sessionDir);
  const archived = b.generations.slice(0, -1);
  const historyDir = path.join(dir, 'history');
  if (archived.length > 0) {
    ensurePrivateDir(fsl, historyDir);
    for (const g of archived) writePrivateFile(fsl, path.join(historyDir, `${g.generation}.jsonl`), journal(g.records));
    fsyncDir(fsl, historyDir);
  }
  fsyncDir(fsl, dir);
  if (b.trashed) {
    ensurePrivateDir(fsl, layout.trashDir);
    fsl.renameSync(dir, layout.trashSessionDir(id)); // commit point
    committed();
    fsyncDir(fsl, layout.trashDir);
    fsyncDir(fsl, staging);
  } else {
    if (archived.length > 0) {
      ensurePrivateDir(fsl, layout.historyDir);
      fsl.renameSync(historyDir, layout.historySessionDir(id));
      fsyncDir(fsl, layout.historyDir);
    }
    fsl.renameSync(sessionDir, layout.sessionDir(id)); // commit point
    committed();
    fsyncDir(fsl, layout.sessionsDir);
    fsyncDir(fsl, dir);
    fsl.rmdirSync(dir);
    fsyncDir(fsl, staging);
  }
}
