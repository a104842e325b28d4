import { DEFAULT_BLOB_THRESHOLD } from '../../../../protocol/methods/blob.js';
import { errnoOf, UnsafeFileError } from '../../../durable/errors.js';
import { type BlobSink, isBlobRef } from '../../../domain/blobRefs.js';
import { digestOf, refOf } from '../../../domain/blobRefs.js';
import { StoreError } from '../../../domain/errors.js';
import { checkSessionId } from '../../../domain/ids.js';
import { checkStateKey, prepareStateValue } from '../../../domain/stateValues.js';
import type { KeepScratch } from '../../../scratch/toolRuns.js';
import type { Redaction } from '../../../domain/secrets/redact.js';
import { redactTokens } from '../../../domain/secrets/tokenRules.js';
import type { RecordInput, SessionStore } from '../../../domain/types.js';
import { pg } from './errors.js';
import { PgLineageStore } from './lineage.js';
import type { PgSession } from './session.js';

/**
 * The PostgreSQL SessionStore. Runtime storage: toolSeqs reserved in the database (durable
 * before they are handed out) with scratch directories on this machine's disk; state values
 * and blobs (content-addressed, once per store) in the database. Like appends, scratch
 * allocations and state writes go through the session's commit queue, in arrival order.
 */
export class PostgresSessionStore extends PgLineageStore implements SessionStore {
  async allocateScratch(sessionId: string, _requestId: string, keep?: KeepScratch): Promise<{ toolSeq: number; dir: string; tmpDir: string }> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    return this.commitInOrder(s, () => s.queue.exclusive(async () => {
      const committed = s.queue.state.runtime.toolSeq;
      const tools = s.tools();
      const reserved = await pg(() => this.db.reserveToolSeq(s.fence, Math.max(tools.issued, committed)));
      tools.issued = Math.max(tools.issued, reserved - 1);
      let run;
      try {
        run = tools.allocate(committed, keep);
      } catch (err) {
        if (err instanceof StoreError) throw err;
        if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `no scratch directory was allocated: a scratch path ${err.reason}`, { reason: err.reason });
        const errno = errnoOf(err);
        throw new StoreError('NotWritten', `no scratch directory was allocated (${errno ?? 'I/O error'})`, errno ? { errno } : {});
      }
      // A directory left on this disk made allocate skip ahead: the database learns the number too.
      if (run.toolSeq > reserved) await pg(() => this.db.reserveToolSeq(s.fence, run.toolSeq - 1));
      return run;
    }));
  }

  async setState(sessionId: string, key: string, value: unknown): Promise<{ redactions: Redaction[] }> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    const { text, redactions } = prepareStateValue(key, value, this.allSecrets);
    const rule = this.gate([text]);
    if (rule) throw new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, { path: 'value', rule });
    await this.commitInOrder(s, () => s.queue.exclusive(() => pg(() => this.db.state.set(s.fence, key, text))));
    return { redactions };
  }

  async getState(sessionId: string, key: string): Promise<unknown> {
    await this.settled(sessionId);
    checkStateKey(key);
    await this.loadLive(sessionId);
    const text = await pg(() => this.db.state.get(sessionId, key));
    if (text === undefined) return null;
    return (JSON.parse(text) as { value: unknown }).value ?? null;
  }

  async deleteState(sessionId: string, key: string): Promise<boolean> {
    const s = this.writable(sessionId) ?? await this.notWritable(sessionId);
    checkStateKey(key);
    return this.commitInOrder(s, () => s.queue.exclusive(() => pg(() => this.db.state.delete(s.fence, key))));
  }

  async getBlob(sessionId: string, ref: string, offset = 0, length = 1 << 20): Promise<{ bytes: Buffer; offset: number; size: number }> {
    await this.loadLive(checkSessionId(sessionId));
    const sha = digestOf(ref) ?? '';
    const size = await pg(() => this.db.blobs.size(sha));
    if (size === undefined) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
    if (offset > size) throw new StoreError('InvalidArgument', `offset ${offset} is past the end of the blob (${size} bytes)`, { path: 'offset' });
    const bytes = await pg(() => this.db.blobs.read(sha, offset === 0 && length >= size ? undefined : { offset, length }));
    if (!bytes) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
    return { bytes, offset, size };
  }

  /**
   * A BlobSink for one append: the refs the records already name are looked up first (the sink
   * is synchronous); new blobs are kept in memory and stored by `flush`, before the commit.
   */
  protected override async blobSinkFor(s: PgSession, records: RecordInput[]): Promise<{ sink: BlobSink; flush(): Promise<void> }> {
    const known = new Map<string, Buffer>();
    const walk = async (v: unknown): Promise<void> => {
      if (v === null || typeof v !== 'object') return;
      if (isBlobRef(v)) {
        const bytes = typeof v.$blob === 'string' && digestOf(v.$blob) ? await pg(() => this.db.blobs.read(digestOf(v.$blob) as string)) : undefined;
        if (bytes) known.set(v.$blob, bytes);
        return;
      }
      for (const w of Object.values(v)) await walk(w);
    };
    for (const r of records) await walk(r);
    const pending = new Map<string, Buffer>();
    const sink: BlobSink = {
      threshold: s.header.blobThreshold ?? DEFAULT_BLOB_THRESHOLD,
      put: (bytes) => {
        const ref = refOf(bytes);
        pending.set(ref, bytes);
        return ref;
      },
      size: (ref) => (known.get(ref) ?? pending.get(ref))?.length,
      vouch: (ref) => {
        const bytes = known.get(ref) as Buffer;
        const rule = this.allSecrets.findInBytes(bytes) ?? (redactTokens(bytes.toString('utf8')) === bytes.toString('utf8') ? undefined : 'credential');
        if (rule) throw new StoreError('SecretRejected', `blob ${ref} holds a registered secret or a credential (rule: ${rule}); nothing was written`, { ref, rule });
      },
    };
    const flush = async () => {
      for (const bytes of pending.values()) {
        const rule = this.allSecrets.findInBytes(bytes); // the final gate before any byte leaves for the database
        if (rule) throw new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, { path: '(blob)', rule });
        await pg(() => this.db.blobs.put(bytes));
      }
    };
    return { sink, flush };
  }
}
