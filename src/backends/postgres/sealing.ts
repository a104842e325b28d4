/**
 * Encryption at rest of the PostgreSQL store (STORAGE.md, "PostgreSQL: encryption at rest"):
 * how one stored value is sealed and opened. Which values, and where they belong, is
 * sealedValues.ts; the store-level marker is encryptionRow.ts.
 *
 * A sealed text (every text column holding session data) is
 *   `ss-sealed:<KID>:<base64 nonce ‖ AES-256-GCM ciphertext ‖ tag>`
 * and a sealed blob (bytea) is BLOB_MAGIC ‖ KID (16 raw bytes) ‖ nonce ‖ ciphertext ‖ tag.
 * Every value names the key it is sealed under, so a store a rekey was cut short in is
 * readable value by value under the old or the new key (rekeyPg.ts), and a value under a key
 * that is not the one given is KeyMismatch (wrongKey), never mistaken for damage. A plaintext
 * text never starts with the prefix: the core's texts are JSON (they start with `{`, `[`, `"`,
 * a digit, `t`, `f` or `n`).
 *
 * Invariant (the gate): the plaintext passes the second net (the registered secrets, the same
 * check the parameters of every statement pass in a plaintext store) right before it is
 * sealed; what leaves for the database is ciphertext. No key byte is ever written or logged:
 * the key lives in its StoreKey (a KeyObject); only its id (a slow KDF of it) is stored.
 */
import type { StoreKey } from '../../durable/storeKey.js';
import { PgBackendError } from './errors.js';

export const SEALED_TEXT_PREFIX = 'ss-sealed:';
export const BLOB_MAGIC = Buffer.from('ss-sealed-blob\0', 'latin1');
const KID = /^[0-9a-f]{32}$/;

/** The second net over plaintext (the core's registered secrets): the rule a text matches, or undefined. */
export type PlainNet = (plain: string) => string | undefined;

/** Where a value belongs, for the Corrupt error of one that fails to open (ids and seqs only, never content). */
export type Where = Record<string, string | number>;

/**
 * One key's sealing: `seal*` (after the second net) and `open*`. A codec without a key
 * (`PLAINTEXT`) stores values as they are.
 */
export interface PgCodec {
  /** The key in use, or undefined (plaintext). */
  readonly key: StoreKey | undefined;
  sealText(aad: string, plain: string): string;
  /** Throws KeyMismatch (wrongKey) for a value under another key, Corrupt for one that does not open as `aad`. */
  openText(aad: string, stored: string, where: Where): string;
  sealBlob(aad: string, plain: Buffer): Buffer;
  openBlob(aad: string, stored: Buffer, where: Where): Buffer;
}

export const PLAINTEXT: PgCodec = {
  key: undefined,
  sealText: (_aad, plain) => plain,
  openText: (_aad, stored) => stored,
  sealBlob: (_aad, plain) => plain,
  openBlob: (_aad, stored) => stored,
};

/** The key id a stored text is sealed under, or null for a plaintext value. */
export function textKeyId(stored: string): string | null {
  if (!stored.startsWith(SEALED_TEXT_PREFIX)) return null;
  const end = stored.indexOf(':', SEALED_TEXT_PREFIX.length);
  return end < 0 ? '' : stored.slice(SEALED_TEXT_PREFIX.length, end);
}

/** The key id a stored blob is sealed under, or null for a plaintext blob. */
export function blobKeyId(stored: Buffer): string | null {
  if (stored.length < BLOB_MAGIC.length + 16 || !stored.subarray(0, BLOB_MAGIC.length).equals(BLOB_MAGIC)) return null;
  return stored.subarray(BLOB_MAGIC.length, BLOB_MAGIC.length + 16).toString('hex');
}

export function keyMismatch(message: string, reason: string): PgBackendError {
  return new PgBackendError('KeyMismatch', message, { reason });
}

const WRONG_KEY = 'a value of the store is encrypted with another key';

export class KeyCodec implements PgCodec {
  constructor(readonly key: StoreKey, private readonly net: () => PlainNet | undefined) {
    if (!KID.test(key.id)) throw new Error('a key id is 32 hex digits');
  }

  private gate(plain: string): void {
    const rule = this.net()?.(plain);
    if (rule !== undefined) {
      throw new PgBackendError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, { rule, path: '(sealed value)' });
    }
  }

  sealText(aad: string, plain: string): string {
    this.gate(plain);
    return `${SEALED_TEXT_PREFIX}${this.key.id}:${this.key.seal(aad, Buffer.from(plain, 'utf8'))}`;
  }

  openText(aad: string, stored: string, where: Where): string {
    const kid = textKeyId(stored);
    if (kid === null) throw damaged('a plaintext value in an encrypted store', where);
    if (!this.key.names(kid)) throw keyMismatch(WRONG_KEY, 'wrongKey');
    const plain = this.key.open(aad, stored.slice(SEALED_TEXT_PREFIX.length + kid.length + 1));
    if (plain === undefined) throw damaged('a sealed value does not open where it is (altered, or moved from another row or column)', where);
    return plain.toString('utf8');
  }

  sealBlob(aad: string, plain: Buffer): Buffer {
    this.gate(plain.toString('latin1'));
    return Buffer.concat([BLOB_MAGIC, Buffer.from(this.key.id, 'hex'), Buffer.from(this.key.seal(aad, plain), 'base64')]);
  }

  openBlob(aad: string, stored: Buffer, where: Where): Buffer {
    const kid = blobKeyId(stored);
    if (kid === null) throw damaged('a plaintext blob in an encrypted store', where);
    if (!this.key.names(kid)) throw keyMismatch(WRONG_KEY, 'wrongKey');
    const plain = this.key.open(aad, stored.subarray(BLOB_MAGIC.length + 16).toString('base64'));
    if (plain === undefined) throw damaged('a sealed blob does not open under its address', where);
    return plain;
  }
}

function damaged(what: string, where: Where): PgBackendError {
  return new PgBackendError('Corrupt', what, { reason: 'sealed', ...where });
}
