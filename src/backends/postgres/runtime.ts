/**
 * Runtime storage: blobs (content-addressed, once per store), state values, toolSeq
 * reservations. Blobs are verified by their sha256 on read; state values by a crc over the
 * session, key and exact text. Writes that belong to a session are fenced by its lease.
 */
import { createHash } from 'node:crypto';
import { PgBackendError } from './errors.js';
import { checkFence } from './fence.js';
import type { PgConnections } from './pool.js';
import { textCrc, type Fence } from './types.js';

export interface BlobRef {
  sha256: string;
  size: number;
}

const SHA = /^[0-9a-f]{64}$/;

/**
 * `seal` (an encrypted store, sealedValues.ts): the bytes to store for the plaintext `bytes`
 * whose address is `sha256`. The address and size stay those of the plaintext.
 */
export async function putBlob(conns: PgConnections, bytes: Buffer, seal?: (sha256: string, plain: Buffer) => Buffer): Promise<BlobRef> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  // The same content stored by another sidecar first is the same blob; a put of it again only
  // touches it (created_at: the last put or touch, which blob GC spares for its grace period:
  // blobGc.ts). The bytes are not rewritten (an UPDATE keeps the stored TOAST value).
  await conns.query('INSERT INTO blobs (sha256, size, bytes) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO UPDATE SET created_at = now()', [sha256, bytes.length, seal ? seal(sha256, bytes) : bytes], 'write');
  return { sha256, size: bytes.length };
}

/**
 * Before a commit whose records name blobs stored earlier: marks them as just vouched for
 * (blob GC spares them, blobGc.ts); returns those that are gone (the core puts their bytes again).
 */
export async function touchBlobs(conns: PgConnections, sha256s: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(sha256s.filter((s) => SHA.test(s)))];
  if (wanted.length === 0) return [];
  const rows = await conns.query<{ sha256: string }>('UPDATE blobs SET created_at = now() WHERE sha256 = ANY($1::text[]) RETURNING sha256', [wanted], 'write');
  const present = new Set(rows.map((r) => r.sha256));
  return wanted.filter((s) => !present.has(s));
}

export async function blobSize(conns: PgConnections, sha256: string): Promise<number | undefined> {
  if (!SHA.test(sha256)) return undefined;
  const rows = await conns.query<{ size: string }>('SELECT size FROM blobs WHERE sha256 = $1', [sha256]);
  return rows[0] ? Number(rows[0].size) : undefined;
}

/** The blob's bytes (or a range of them), verified against its address first; undefined if absent. */
export async function readBlob(
  conns: PgConnections, sha256: string, range?: { offset: number; length: number }, open?: (sha256: string, stored: Buffer) => Buffer,
): Promise<Buffer | undefined> {
  if (!SHA.test(sha256)) return undefined;
  const rows = await conns.query<{ bytes: Buffer; size: string }>('SELECT bytes, size FROM blobs WHERE sha256 = $1', [sha256]);
  const row = rows[0];
  if (!row) return undefined;
  // Sealed: opened first (bound to its address), then held to the address like a plaintext blob.
  const bytes = open ? open(sha256, row.bytes) : row.bytes;
  if (createHash('sha256').update(bytes).digest('hex') !== sha256 || bytes.length !== Number(row.size)) {
    throw new PgBackendError('Corrupt', 'a stored blob does not match its sha256', { sha256 });
  }
  return range ? bytes.subarray(range.offset, range.offset + range.length) : bytes;
}

export async function setState(conns: PgConnections, fence: Fence, key: string, text: string): Promise<void> {
  const id = fence.sessionId;
  await conns.transaction(async (tx) => {
    await checkFence(tx, fence);
    const rows = await tx.query(
      `INSERT INTO state_values (session_id, key, text, crc) SELECT $1, $2, $3, $4 FROM sessions WHERE session_id = $1 AND trashed_at IS NULL
       ON CONFLICT (session_id, key) DO UPDATE SET text = EXCLUDED.text, crc = EXCLUDED.crc, updated_at = now() RETURNING 1`,
      [id, key, text, textCrc(`${id}\n${key}`, text)],
    );
    if (rows.length === 0) throw new PgBackendError('SessionNotFound', 'no such session', { sessionId: id });
  });
}

export async function getState(conns: PgConnections, sessionId: string, key: string): Promise<string | undefined> {
  const rows = await conns.query<{ text: string; crc: string }>('SELECT text, crc FROM state_values WHERE session_id = $1 AND key = $2', [sessionId, key]);
  const row = rows[0];
  if (!row) return undefined;
  if (row.crc !== textCrc(`${sessionId}\n${key}`, row.text)) throw new PgBackendError('Corrupt', 'a state value fails its checksum', { sessionId });
  return row.text;
}

export async function stateKeys(conns: PgConnections, sessionId: string): Promise<string[]> {
  const rows = await conns.query<{ key: string }>('SELECT key FROM state_values WHERE session_id = $1 ORDER BY key', [sessionId]);
  return rows.map((r) => r.key);
}

/** Deletes a state value; true when there was one. */
export async function deleteState(conns: PgConnections, fence: Fence, key: string): Promise<boolean> {
  return conns.transaction(async (tx) => {
    await checkFence(tx, fence);
    const rows = await tx.query('DELETE FROM state_values WHERE session_id = $1 AND key = $2 RETURNING 1', [fence.sessionId, key]);
    return rows.length > 0;
  });
}

/**
 * The next toolSeq, durable before it is returned: max(reserved so far, floor) + 1, committed.
 * A reserved number is never issued again, even if the tool never ran (as with the file store).
 */
export async function reserveToolSeq(conns: PgConnections, fence: Fence, floor: number): Promise<number> {
  return conns.transaction(async (tx) => {
    await checkFence(tx, fence, 'update');
    const rows = await tx.query<{ tool_seq: string }>(
      'UPDATE sessions SET tool_seq = GREATEST(tool_seq, $2) + 1 WHERE session_id = $1 AND trashed_at IS NULL RETURNING tool_seq',
      [fence.sessionId, floor],
    );
    if (!rows[0]) throw new PgBackendError('SessionNotFound', 'no such session', { sessionId: fence.sessionId });
    return Number(rows[0].tool_seq);
  });
}
