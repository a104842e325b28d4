import path from 'node:path';
import { createPrivate, ensurePrivateDir, fsyncDir } from '../../durable/durableFile.js';
import { errnoOf } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';

/**
 * Where things live under the store root (protocol/STORAGE.md):
 *   .gitignore                      "*": a store inside a workspace is never committed
 *   sessions/<id>/journal.jsonl     the session's journal
 *   index/<id>.json                 derived summary, rebuilt from the journal when stale
 *   recovery/<id>/<ms>-<offset>.torn  torn tails removed from journals, kept as evidence
 *   history/<id>/<generation>.jsonl   a journal as it was before compaction <generation + 1>
 *   trash/<id>/                       a deleted session (session/, history/, index.json), until restored or purged
 *   locks/<id>.lock/, <id>.lock.holder.json   a session's writer lease (proper-lockfile) and its holder + fencing token
 *   locks/<id>.flock                  the session's kernel lock (flock, held by the writer for as long as it lives)
 *   locks/.store.flock                the store's kernel lock (shared while a sidecar serves, exclusive during a rekey)
 *   blobs/sha256/<2 hex>/<64 hex>     a large string stored once per store, named by its sha256 (blobs/tmp/: unfinished writes)
 *   sessions/<id>/state/<key>.json    a named state value (state/set)
 *   sessions/<id>/scratch/tool-NNNNNN/  a tool run's scratch directory (tool/allocateScratch), with tmp/ inside
 */
export class StoreLayout {
  constructor(readonly root: string) {}

  get sessionsDir(): string { return path.join(this.root, 'sessions'); }
  get indexDir(): string { return path.join(this.root, 'index'); }
  get recoveryDir(): string { return path.join(this.root, 'recovery'); }
  get historyDir(): string { return path.join(this.root, 'history'); }
  get trashDir(): string { return path.join(this.root, 'trash'); }
  get locksDir(): string { return path.join(this.root, 'locks'); }
  get blobsDir(): string { return path.join(this.root, 'blobs'); }
  get blobsTempDir(): string { return path.join(this.blobsDir, 'tmp'); }

  sessionDir(id: string): string { return path.join(this.sessionsDir, id); }
  journal(id: string): string { return path.join(this.sessionDir(id), 'journal.jsonl'); }
  journalTemp(id: string): string { return path.join(this.sessionDir(id), 'journal.jsonl.tmp'); }
  indexEntry(id: string): string { return path.join(this.indexDir, `${id}.json`); }
  recoverySessionDir(id: string): string { return path.join(this.recoveryDir, id); }
  historySessionDir(id: string): string { return path.join(this.historyDir, id); }
  trashSessionDir(id: string): string { return path.join(this.trashDir, id); }
  lockDir(id: string): string { return path.join(this.locksDir, `${id}.lock`); }
  /** The session's kernel lock file (flock, kernelLock.ts): never renamed, removed only by a purge under the lock. */
  kernelLock(id: string): string { return path.join(this.locksDir, `${id}.flock`); }
  /** The store's kernel lock: shared by every serving sidecar, exclusive for a rekey (a session id never starts with "."). */
  get storeLock(): string { return path.join(this.locksDir, '.store.flock'); }
  stateDir(id: string): string { return path.join(this.sessionDir(id), 'state'); }
  stateValue(id: string, key: string): string { return path.join(this.stateDir(id), `${key}.json`); }
  scratchDir(id: string): string { return path.join(this.sessionDir(id), 'scratch'); }
  archive(id: string, generation: number): string { return path.join(this.historySessionDir(id), `${generation}.jsonl`); }

  /** Creates the root and its folders (0700) and the root's .gitignore. */
  init(fsl: FsLayer): void {
    ensurePrivateDir(fsl, this.root);
    for (const dir of [this.sessionsDir, this.indexDir, this.recoveryDir]) ensurePrivateDir(fsl, dir);
    writeGitignore(fsl, path.join(this.root, '.gitignore'));
  }
}

function writeGitignore(fsl: FsLayer, file: string): void {
  if (fsl.lstatSync(file) !== undefined) return;
  let fd: number;
  try {
    fd = createPrivate(fsl, file);
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return;
    throw err;
  }
  try {
    const buf = Buffer.from('*\n');
    fsl.writeSync(fd, buf, 0, buf.length, 0);
    fsl.fsyncSync(fd);
  } finally {
    fsl.closeSync(fd);
  }
  fsyncDir(fsl, path.dirname(file));
}
