/**
 * The port's blob and state stores over runtime.ts, sealed on an encrypted store
 * (sealedValues.ts: a blob bound to its sha256, a state value to its session and key), and what
 * `verify` opens. Without a key (PLAINTEXT) values pass as they are.
 */
import type { Gated, StateEntry } from '../../core/port.js';
import { asStoreErrors } from './errors.js';
import type { PgConnections } from './pool.js';
import { blobSize, deleteState, getState, putBlob, readBlob, setState, stateKeys, touchBlobs } from './runtime.js';
import type { PgCodec } from './sealing.js';
import { blobAad, openRecord, openState, sealState } from './sealedValues.js';
import type { Fence, SealedRecord } from './types.js';
import type { VerifyOpen } from './verify.js';

export function blobPort(conns: PgConnections, c: PgCodec) {
  const sealed = c.key !== undefined;
  return {
    put: (bytes: Gated<Buffer>) => asStoreErrors(() => putBlob(conns, bytes, sealed ? (sha, plain) => c.sealBlob(blobAad(sha), plain) : undefined)),
    size: (sha256: string) => asStoreErrors(() => blobSize(conns, sha256)),
    read: (sha256: string, range?: { offset: number; length: number }) => asStoreErrors(() => readBlob(conns, sha256, range,
      sealed ? (sha, stored) => c.openBlob(blobAad(sha), stored, { sha256: sha }) : undefined)),
    touch: (sha256s: readonly string[]) => asStoreErrors(() => touchBlobs(conns, sha256s)),
  };
}

export function statePort(conns: PgConnections, c: PgCodec) {
  return {
    set: (fence: Fence, entry: Gated<StateEntry>) => asStoreErrors(() => setState(conns, fence, entry.key, sealState(c, fence.sessionId, entry.key, entry.text))),
    get: (sessionId: string, key: string) => asStoreErrors(async () => {
      const stored = await getState(conns, sessionId, key);
      return stored === undefined ? undefined : openState(c, sessionId, key, stored);
    }),
    keys: (sessionId: string) => asStoreErrors(() => stateKeys(conns, sessionId)),
    delete: (fence: Fence, key: string) => asStoreErrors(() => deleteState(conns, fence, key)),
  };
}

/** What verify opens on an encrypted store (undefined: plaintext, nothing to open). */
export function verifyOpen(c: PgCodec): VerifyOpen | undefined {
  if (!c.key) return undefined;
  return {
    record: (id: string, generation: number, r: SealedRecord) => openRecord(c, id, generation, r).text,
    state: (id: string, key: string, stored: string) => openState(c, id, key, stored),
    blob: (sha: string, stored: Buffer) => c.openBlob(blobAad(sha), stored, { sha256: sha }),
  };
}
