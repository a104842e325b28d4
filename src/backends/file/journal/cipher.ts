import type { FsLayer } from '../../../durable/fsLayer.js';
import type { StoreKey } from '../../../durable/storeKey.js';
import { StoreError } from '../../../domain/errors.js';

/**
 * Encryption at rest of the file store (STORAGE.md, "Encryption at rest"). The store's key
 * travels with the store's file-system seam (the gated FsLayer every file of one store instance
 * is read and written through), so every reader and writer of the store finds it where it
 * already has the seam; a layer without a key is a plaintext store.
 *
 * A journal's cipher is the key bound to the session id: the associated data of each of its
 * lines names the session (and the seq), so a line moved to another journal or another seq
 * fails authentication.
 */
const keys = new WeakMap<FsLayer, StoreCipher>();

/**
 * The store's key and the final secret gate over plaintext: encryption sits below the gates,
 * so every plaintext byte is checked (finalGate.ts checkBytes) right before it is sealed —
 * the gated write that follows sees only ciphertext.
 */
export interface StoreCipher {
  key: StoreKey;
  /** Throws SecretRejected when `plain` holds a registered secret. */
  gate: (plain: Buffer) => void;
}

export function attachKey(fsl: FsLayer, cipher: StoreCipher): void {
  keys.set(fsl, cipher);
}

export function storeKeyOf(fsl: FsLayer): StoreCipher | undefined {
  return keys.get(fsl);
}

export interface JournalCipher extends StoreCipher {
  sessionId: string;
}

/** Seals `plain` (gated first) bound to `aad`. */
export function sealGated(cipher: StoreCipher, aad: string, plain: Buffer): string {
  cipher.gate(plain);
  return cipher.key.seal(aad, plain);
}

/** The error of a key that does not open what is stored (wrong, missing, or given for a plaintext store). */
export function keyMismatch(message: string, reason: string, extra: Record<string, unknown> = {}): StoreError {
  return new StoreError('KeyMismatch', message, { reason, ...extra });
}

/** Associated data of a record line: what it is and where it belongs. */
export function recordAad(sessionId: string, seq: number, ts: string, batchEnd: number | undefined): string {
  return `session-sidecar/record\0${sessionId}\0${seq}\0${ts}\0${batchEnd ?? ''}`;
}

export function headerAad(sessionId: string): string {
  return `session-sidecar/header\0${sessionId}`;
}

/** Associated data of a whole file: its kind and identity (session id and name, or digest). */
export function fileAad(kind: string, ...identity: string[]): string {
  return `session-sidecar/${kind}\0${identity.join('\0')}`;
}
