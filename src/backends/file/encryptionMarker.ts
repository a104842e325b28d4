import path from 'node:path';
import { fsyncDir, readPrivateSmall, replaceAtomicallySync } from '../../durable/durableFile.js';
import { UnsafeFileError } from '../../durable/errors.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import type { StoreKey } from '../../durable/storeKey.js';
import { StoreError } from '../../domain/errors.js';
import { keyMismatch } from './journal/cipher.js';
import type { StoreLayout } from './layout.js';

/**
 * The store-level encryption marker, `encryption.json` at the store root (STORAGE.md,
 * "Encryption at rest"): `{"format":"session-sidecar/encryption","version":2,"keyId":"<id>"}`,
 * `keyId` the key's id (storeKey.ts: a slow KDF of the key), never the key. Version 1 (written
 * before) held the fast HMAC check value: still read, and rewritten as version 2 by the first
 * open for writing. During a rekey it also holds
 * `"fromKeyId"` (null: the store was plaintext), `"toKeyId"` (null: it is being decrypted) and
 * `keyId` is then absent: the store is served by no key until the rekey that wrote it finishes.
 * No marker: a plaintext store.
 */
export const MARKER_FORMAT = 'session-sidecar/encryption';
/** The marker version written; 1 is still read. */
export const MARKER_VERSION = 2;

export interface EncryptionMarker {
  keyId?: string;
  rekey?: { fromKeyId: string | null; toKeyId: string | null };
  /** Read from a version 1 marker (key check values of storeKey.ts's version 1). */
  legacy?: boolean;
}

export function markerPath(layout: StoreLayout): string {
  return path.join(layout.root, 'encryption.json');
}

export function readMarker(fsl: FsLayer, layout: StoreLayout): EncryptionMarker | undefined {
  let text: string | undefined;
  try {
    text = readPrivateSmall(fsl, markerPath(layout), 4096);
  } catch (err) {
    if (err instanceof UnsafeFileError) throw new StoreError('UnsafeStore', `store refused: encryption.json ${err.reason}`, { reason: err.reason });
    throw err;
  }
  if (text === undefined) return undefined;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new StoreError('Corrupt', 'the store\'s encryption.json is damaged', { reason: 'marker' });
  }
  if (v === null || typeof v !== 'object' || v.format !== MARKER_FORMAT || (v.version !== 1 && v.version !== MARKER_VERSION)) {
    throw new StoreError('Corrupt', 'the store\'s encryption.json is not a session-sidecar encryption marker', { reason: 'marker' });
  }
  const rekey = v.rekey as EncryptionMarker['rekey'] | undefined;
  return { ...(typeof v.keyId === 'string' ? { keyId: v.keyId } : {}), ...(rekey ? { rekey } : {}), ...(v.version === 1 ? { legacy: true } : {}) };
}

/** Writes the marker durably (temp, fsync, rename, fsync of the root); `undefined` removes it. */
export function writeMarker(fsl: FsLayer, layout: StoreLayout, marker: EncryptionMarker | undefined): void {
  const file = markerPath(layout);
  if (!marker) {
    try {
      fsl.unlinkSync(file);
    } catch {
      return; // absent already
    }
    fsyncDir(fsl, layout.root);
    return;
  }
  const { legacy: _legacy, ...fields } = marker;
  replaceAtomicallySync(fsl, file, `${JSON.stringify({ format: MARKER_FORMAT, version: MARKER_VERSION, ...fields })}\n`);
}

/**
 * Checks the key a store is opened with against its marker. With a key: the marker must name
 * it; a store without a marker is accepted only when it holds no session (then, unless
 * `readOnly`, the marker is written: the store is encrypted from its first byte). Without a
 * key: no marker may exist. Every refusal is KeyMismatch; a rekey left unfinished is refused
 * until it is run again.
 */
export function checkMarker(fsl: FsLayer, layout: StoreLayout, key: StoreKey | undefined, readOnly: boolean): void {
  const marker = readMarker(fsl, layout);
  if (marker?.rekey) {
    throw keyMismatch('a rekey of this store was interrupted: run the same session-sidecar rekey command again to finish it', 'rekeyUnfinished');
  }
  if (!key) {
    if (marker) throw keyMismatch('the store is encrypted: give its key (--encryption-key-env NAME or --encryption-key-file PATH)', 'keyRequired');
    return;
  }
  if (marker) {
    if (!key.names(marker.keyId)) throw keyMismatch('the encryption key given is not the store\'s key', 'wrongKey');
    if (marker.legacy && !readOnly) writeMarker(fsl, layout, { keyId: key.id }); // version 1: the fast check value goes
    return;
  }
  if (hasSessions(fsl, layout)) {
    throw keyMismatch('the store is not encrypted but an encryption key was given: encrypt it first with session-sidecar rekey --store DIR --to-env NAME', 'notEncrypted');
  }
  if (!readOnly) writeMarker(fsl, layout, { keyId: key.id });
}

function hasSessions(fsl: FsLayer, layout: StoreLayout): boolean {
  for (const dir of [layout.sessionsDir, layout.trashDir, layout.historyDir, path.join(layout.blobsDir, 'sha256')]) {
    if (fsl.lstatSync(dir) === undefined) continue;
    if (fsl.readdirSync(dir).some((n) => !n.startsWith('.'))) return true;
  }
  return false;
}
