import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_BLOB_THRESHOLD } from '../../protocol/methods/blob.js';
import { StoreError } from './errors.js';
import { checkSessionId } from './ids.js';
import { blobSize, putBlob, readBlob } from './blobs/blobFiles.js';
import { type BlobSink, inlineBlobs } from './blobs/blobRefs.js';
import type { OpenSession } from './openSession.js';
import { NO_RUNTIME } from './runtime/counters.js';
import { deleteStateValue, getStateValue, setStateValue } from './runtime/stateValues.js';
import type { KeepScratch } from './runtime/toolRuns.js';
import type { Redaction } from './secrets/redact.js';
import { StoreCore } from './storeCore.js';
import type { StoredRecord } from './types.js';

/**
 * What an agent runtime keeps besides its journal: tool scratch directories, named state
 * values and content-addressed blobs; and resume by path. Over StoreCore's open sessions.
 */
export abstract class RuntimeStore extends StoreCore {
  /** A fresh private scratch directory for the session's next toolSeq (write mode). */
  async allocateScratch(sessionId: string, _requestId: string, keep?: KeepScratch): Promise<{ toolSeq: number; dir: string; tmpDir: string }> {
    const session = this.writable(sessionId);
    return session.tools().allocate((session.handle.position.runtime ?? NO_RUNTIME).toolSeq, keep);
  }

  async setState(sessionId: string, key: string, value: unknown): Promise<{ redactions: Redaction[] }> {
    this.writable(sessionId); // the writer lease serializes state writes across processes too
    return setStateValue(this.fsl, this.layout, sessionId, key, value, this.allSecrets);
  }

  async getState(sessionId: string, key: string): Promise<unknown> {
    this.mustExist(checkSessionId(sessionId));
    return getStateValue(this.fsl, this.layout, sessionId, key);
  }

  async deleteState(sessionId: string, key: string): Promise<boolean> {
    this.writable(sessionId);
    return deleteStateValue(this.fsl, this.layout, sessionId, key);
  }

  /** A chunk of a blob; a chunk that covers the whole blob is checked against its digest. */
  async getBlob(sessionId: string, ref: string, offset = 0, length = 1 << 20): Promise<{ bytes: Buffer; offset: number; size: number }> {
    this.mustExist(checkSessionId(sessionId));
    const size = blobSize(this.fsl, this.layout, ref);
    if (size === undefined) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
    if (offset > size) throw new StoreError('InvalidArgument', `offset ${offset} is past the end of the blob (${size} bytes)`, { path: 'offset' });
    const whole = offset === 0 && length >= size;
    const { bytes } = readBlob(this.fsl, this.layout, ref, whole ? undefined : { offset, length });
    return { bytes, offset, size };
  }

  /** Where a session's large strings go: blobs of this store, past the session's threshold. */
  protected blobSink(session: OpenSession): BlobSink {
    return {
      threshold: session.handle.header.blobThreshold ?? DEFAULT_BLOB_THRESHOLD,
      put: (bytes) => putBlob(this.fsl, this.layout, bytes),
      size: (ref) => blobSize(this.fsl, this.layout, ref),
    };
  }

  /** Records with every BlobRef replaced by its (verified) string. */
  protected inline<T extends StoredRecord>(records: T[]): T[] {
    const loaded = new Map<string, string>();
    const load = (ref: string) => {
      let s = loaded.get(ref);
      if (s === undefined) loaded.set(ref, (s = readBlob(this.fsl, this.layout, ref).bytes.toString('utf8')));
      return s;
    };
    return records.map((r) => inlineBlobs(r, load) as T);
  }

  /**
   * The session a path names: its directory or its journal, inside this store. A path outside
   * the store root (after resolving symlinks) is refused with UnsafeStore.
   */
  sessionIdOfPath(p: string): string {
    const resolved = realpathOrSelf(path.resolve(p));
    const root = realpathOrSelf(this.root);
    const inRoot = path.relative(root, resolved);
    if (inRoot.startsWith('..') || path.isAbsolute(inRoot)) {
      throw new StoreError('UnsafeStore', 'path refused: it is outside the store', { path: 'path', reason: 'outside the store' });
    }
    const parts = inRoot.split(path.sep);
    const [top, id, file, ...rest] = parts;
    if (top !== 'sessions' || id === undefined || rest.length > 0 || (file !== undefined && file !== 'journal.jsonl')) {
      throw new StoreError('InvalidArgument', 'path must name a session directory (sessions/<id>) or its journal.jsonl inside the store', { path: 'path' });
    }
    return checkSessionId(id);
  }
}

function realpathOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p; // does not exist (yet): judged as written; opening it then reports SessionNotFound
  }
}
