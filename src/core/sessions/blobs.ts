/**
 * Blobs: large strings and attachments of appended records, stored once per store
 * (content-addressed) before the records that reference them; blob/get reads them back.
 */
import { DEFAULT_BLOB_THRESHOLD } from '../../../protocol/methods/blob.js';
import { type BlobSink, digestOf, isBlobRef, refOf } from '../../domain/blobRefs.js';
import { StoreError } from '../../domain/errors.js';
import { checkSessionId } from '../../domain/ids.js';
import { redactTokens } from '../../domain/secrets/tokenRules.js';
import type { RecordInput } from '../../domain/types.js';
import type { Core } from './context.js';
import type { LiveSession } from './live.js';

/**
 * A BlobSink for one append: the refs the records already name are looked up first (the sink
 * is synchronous); new blobs are kept in memory and stored by `flush`, through the final gate,
 * before the commit.
 */
export async function blobSinkFor(c: Core, s: LiveSession, records: RecordInput[]): Promise<{ sink: BlobSink; flush(): Promise<void> }> {
  const known = new Map<string, Buffer>();
  const walk = async (v: unknown): Promise<void> => {
    if (v === null || typeof v !== 'object') return;
    if (isBlobRef(v)) {
      const bytes = typeof v.$blob === 'string' && digestOf(v.$blob) ? await c.backend.blobs.read(digestOf(v.$blob) as string) : undefined;
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
      const rule = c.secrets.findInBytes(bytes) ?? (redactTokens(bytes.toString('utf8')) === bytes.toString('utf8') ? undefined : 'credential');
      if (rule) throw new StoreError('SecretRejected', `blob ${ref} holds a registered secret or a credential (rule: ${rule}); nothing was written`, { ref, rule });
    },
  };
  const flush = async () => {
    for (const bytes of pending.values()) await c.backend.blobs.put(await c.gate.blobSliced(bytes));
    // Blobs named by ref, stored earlier: vouched for before the commit, so that a concurrent
    // purge's blob GC spares them; one it deleted meanwhile is put again from the bytes read
    // above (the same content: the same address). Backends without blob GC have no touch.
    if (known.size > 0 && c.backend.blobs.touch) {
      const byDigest = new Map([...known.entries()].map(([ref, bytes]) => [digestOf(ref) as string, bytes]));
      for (const sha of await c.backend.blobs.touch([...byDigest.keys()])) {
        const bytes = byDigest.get(sha);
        if (bytes) await c.backend.blobs.put(await c.gate.blobSliced(bytes));
      }
    }
  };
  return { sink, flush };
}

/** A chunk of a blob a record references (verified against its digest by the backend). */
export async function getBlob(c: Core, sessionId: string, ref: string, offset = 0, length = 1 << 20): Promise<{ bytes: Buffer; offset: number; size: number }> {
  await c.loadLive(checkSessionId(sessionId));
  const sha = digestOf(ref) ?? '';
  const size = await c.backend.blobs.size(sha);
  if (size === undefined) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
  if (offset > size) throw new StoreError('OutOfRange', `offset ${offset} is past the end of the blob (${size} bytes)`, { path: 'offset', min: 0, max: size });
  const bytes = await c.backend.blobs.read(sha, offset === 0 && length >= size ? undefined : { offset, length });
  if (!bytes) throw new StoreError('Corrupt', `blob ${ref} is missing`, { ref, reason: 'missing' });
  return { bytes, offset, size };
}
