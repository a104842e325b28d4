import { DEFAULT_BLOB_THRESHOLD } from '../../../protocol/methods/blob.js';
import { errnoOf, UnsafeFileError } from '../../durable/errors.js';
import { StoreError } from '../../domain/errors.js';
import type { JournalWriter } from './journal/writer.js';
import { checkSessionId } from '../../domain/ids.js';
import { blobSize, putBlob, readBlob, verifyBlob } from './blobs/blobFiles.js';
import { type BlobSink, inlineBlobs } from '../../domain/blobRefs.js';
import type { OpenSession } from './openSession.js';
import { NO_RUNTIME } from '../../domain/runtimeCounters.js';
import { checkStateKey, prepareStateValue } from '../../domain/stateValues.js';
import { deleteStateValue, getStateValue, writeStateValue } from './runtime/stateValues.js';
import type { KeepScratch } from '../../scratch/toolRuns.js';
import type { Redaction } from '../../domain/secrets/redact.js';
import { redactTokens } from '../../domain/secrets/tokenRules.js';
import { StoreCore } from './storeCore.js';
import { sessionIdOfPath } from './sessionPath.js';
import type { StoredRecord } from '../../domain/types.js';

/**
 * What an agent runtime keeps besides its journal: tool scratch directories, named state
 * values and content-addressed blobs; and resume by path. Over StoreCore's open sessions.
 */
export abstract class RuntimeStore extends StoreCore {
  /**
   * Scratch allocations and state writes go through the session's writer queue, as exclusive
   * operations: they take effect in arrival order with the appends around them (an allocation
   * sees the toolSeq of a toolStart sent before it; a delete follows the set sent before it),
   * and like appends they are refused after a fail-stop or a lost lease.
   */
  async allocateScratch(sessionId: string, _requestId: string, keep?: KeepScratch): Promise<{ toolSeq: number; dir: string; tmpDir: string }> {
    const session = this.sideWriter(sessionId);
    return this.inQueue(session, () => {
      try {
        return session.tools().allocate((session.handle.position.runtime ?? NO_RUNTIME).toolSeq, keep);
      } catch (err) {
        if (err instanceof StoreError) throw err;
        if (err instanceof UnsafeFileError) {
          throw new StoreError('UnsafeStore', `no scratch directory was allocated: a scratch path ${err.reason}`, { reason: err.reason });
        }
        const errno = errnoOf(err);
        throw new StoreError('NotWritten', `no scratch directory was allocated (${errno ?? 'I/O error'})`, errno ? { errno } : {});
      }
    });
  }

  async setState(sessionId: string, key: string, value: unknown): Promise<{ redactions: Redaction[] }> {
    const session = this.sideWriter(sessionId);
    const { text, redactions } = prepareStateValue(key, value, this.allSecrets);
    await this.inQueue(session, () => writeStateValue(this.fsl, this.layout, sessionId, key, text));
    return { redactions };
  }

  async getState(sessionId: string, key: string): Promise<unknown> {
    this.mustExist(checkSessionId(sessionId));
    await this.sessions.get(sessionId)?.writer?.barrier(); // observes every write sent before it
    return getStateValue(this.fsl, this.layout, sessionId, key);
  }

  async deleteState(sessionId: string, key: string): Promise<boolean> {
    const session = this.sideWriter(sessionId);
    checkStateKey(key);
    return this.inQueue(session, () => deleteStateValue(this.fsl, this.layout, sessionId, key));
  }

  private sideWriter(sessionId: string): OpenSession {
    const session = this.writable(sessionId);
    if (this.failStopped.has(sessionId)) (session.writer as JournalWriter).failStop('an earlier failed write');
    return session;
  }

  /** Runs `op` in the writer's queue; after an unknown outcome nothing more is written in this process. */
  private async inQueue<T>(session: OpenSession, op: () => T): Promise<T> {
    const writer = session.writer as JournalWriter;
    try {
      return await writer.exclusive(op);
    } catch (err) {
      if (writer.stoppedReason) this.failStopped.add(session.id);
      throw err;
    }
  }

  /** A chunk of a blob; the whole blob is checked against its digest when a chunk at offset 0 is read. */
  async getBlob(sessionId: string, ref: string, offset = 0, length = 1 << 20): Promise<{ bytes: Buffer; offset: number; size: number }> {
    this.mustExist(checkSessionId(sessionId));
    const size = blobSize(this.fsl, this.layout, ref);
    if (size === undefined) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
    if (offset > size) throw new StoreError('InvalidArgument', `offset ${offset} is past the end of the blob (${size} bytes)`, { path: 'offset' });
    if (offset === 0 && length < size) verifyBlob(this.fsl, this.layout, ref); // a reader starts at 0: damage is reported before any byte
    const { bytes } = readBlob(this.fsl, this.layout, ref, offset === 0 && length >= size ? undefined : { offset, length });
    return { bytes, offset, size };
  }

  /** Where a session's large strings go: blobs of this store, past the session's threshold. */
  protected blobSink(session: OpenSession): BlobSink {
    return {
      threshold: session.handle.header.blobThreshold ?? DEFAULT_BLOB_THRESHOLD,
      put: (bytes) => putBlob(this.fsl, this.layout, bytes),
      size: (ref) => blobSize(this.fsl, this.layout, ref),
      vouch: (ref) => {
        const { bytes } = readBlob(this.fsl, this.layout, ref); // digest checked
        const rule = this.allSecrets.findInBytes(bytes) ?? (redactTokens(bytes.toString('utf8')) === bytes.toString('utf8') ? undefined : 'credential');
        if (rule) throw new StoreError('SecretRejected', `blob ${ref} holds a registered secret or a credential (rule: ${rule}); nothing was written`, { ref, rule });
      },
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

  /** The session a path names: its directory or its journal, inside this store (sessionPath.ts). */
  sessionIdOfPath(p: string): string {
    return sessionIdOfPath(this.root, p);
  }
}
