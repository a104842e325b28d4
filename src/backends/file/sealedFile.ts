import type { FsLayer } from '../../durable/fsLayer.js';
import { keyMismatch, sealGated, type StoreCipher, storeKeyOf } from './journal/cipher.js';

/**
 * Whole files sealed with the store's key (encryption at rest; STORAGE.md): index entries,
 * list.cache, state values and blobs. A sealed file is one line,
 *   {"sealed":"session-sidecar/sealed","key":"<key id>","enc":"<base64 nonce‖ciphertext‖tag>"}\n
 * whose associated data is the file's identity (cipher.ts fileAad: its kind and session id and
 * name, or digest), so a file copied over another fails authentication. In a plaintext store
 * (no key) files are written as they are.
 */
export const SEALED_FORMAT = 'session-sidecar/sealed';
const SEALED_PREFIX = `{"sealed":"${SEALED_FORMAT}",`;

/** The bytes to store for `plain`: sealed with the store's key (after the final gate), or as they are. */
export function sealBytes(fsl: FsLayer, aad: string, plain: Buffer): Buffer {
  return sealWith(storeKeyOf(fsl), aad, plain);
}

/** sealBytes with an explicit cipher (rekey: two keys at once); undefined: plaintext. */
export function sealWith(cipher: StoreCipher | undefined, aad: string, plain: Buffer): Buffer {
  if (!cipher) return plain;
  return Buffer.from(`${JSON.stringify({ sealed: SEALED_FORMAT, key: cipher.key.id, enc: sealGated(cipher, aad, plain) })}\n`, 'utf8');
}

export function sealText(fsl: FsLayer, aad: string, text: string): string {
  return storeKeyOf(fsl) ? sealBytes(fsl, aad, Buffer.from(text, 'utf8')).toString('utf8') : text;
}

/** The key id a stored file is sealed with, or null for a plaintext file (undefined: not a sealed file it can read). */
export function sealedKeyId(stored: Buffer): string | null | undefined {
  if (stored.subarray(0, SEALED_PREFIX.length).toString('latin1') !== SEALED_PREFIX) return null;
  try {
    const v = JSON.parse(stored.toString('utf8')) as { key?: unknown };
    return typeof v.key === 'string' ? v.key : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The plaintext of stored bytes. Throws KeyMismatch for a sealed file without a key or under
 * another key; undefined when the bytes are not a sealed file of this store that authenticates
 * as `aad` (damaged, moved, or plaintext in an encrypted store): the caller's damage.
 */
export function openBytes(fsl: FsLayer, aad: string, stored: Buffer): Buffer | undefined {
  return openWith(storeKeyOf(fsl), aad, stored);
}

export function openWith(cipher: StoreCipher | undefined, aad: string, stored: Buffer): Buffer | undefined {
  const sealed = stored.subarray(0, SEALED_PREFIX.length).toString('latin1') === SEALED_PREFIX;
  if (!cipher) {
    if (sealed) throw keyMismatch('the store is encrypted: give its key (--encryption-key-env NAME or --encryption-key-file PATH)', 'keyRequired');
    return stored;
  }
  if (!sealed) return undefined;
  let v: { key?: unknown; enc?: unknown };
  try {
    v = JSON.parse(stored.toString('utf8')) as typeof v;
  } catch {
    return undefined;
  }
  if (typeof v.enc !== 'string') return undefined;
  if (!cipher.key.names(v.key)) throw keyMismatch('a file of the store is encrypted with another key', 'wrongKey');
  return cipher.key.open(aad, v.enc);
}

export function openText(fsl: FsLayer, aad: string, stored: string): string | undefined {
  if (!storeKeyOf(fsl) && !stored.startsWith(SEALED_PREFIX)) return stored;
  return openBytes(fsl, aad, Buffer.from(stored, 'utf8'))?.toString('utf8');
}

/** How many stored bytes a sealed file of `plainBytes` may take (a read limit). */
export function sealedLimit(plainBytes: number): number {
  return Math.ceil(plainBytes / 3) * 4 + 256;
}
