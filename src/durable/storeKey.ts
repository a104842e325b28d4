import { createCipheriv, createDecipheriv, createHmac, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';

/**
 * A store's encryption key (AES-256-GCM, node:crypto). The key bytes live only in a KeyObject,
 * which util.inspect, JSON.stringify and error text never show; nothing here writes or logs
 * them. `id` is the key check value: HMAC-SHA256(key, KEY_CHECK_CONSTANT), first 16 bytes in
 * hex — it names the key in headers and the store marker without revealing it.
 *
 * Sealed form (STORAGE.md, "Encryption at rest"): base64 of nonce (12 random bytes, fresh per
 * seal) ‖ ciphertext ‖ GCM tag (16 bytes). The associated data names where the bytes belong
 * (kind, session id, seq or file name), so a sealed value moved elsewhere fails authentication.
 */
export const KEY_CHECK_CONSTANT = 'session-sidecar key check v1';
const NONCE = 12;
const TAG = 16;

export class StoreKey {
  readonly id: string;
  readonly #key: KeyObject;

  constructor(bytes: Buffer) {
    if (bytes.length !== 32) throw new Error('an encryption key is 32 bytes');
    this.#key = createSecretKey(bytes);
    this.id = createHmac('sha256', this.#key).update(KEY_CHECK_CONSTANT).digest('hex').slice(0, 32);
  }

  /** Encrypts `plain` bound to `aad`: base64 text. */
  seal(aad: string, plain: Buffer): string {
    const nonce = randomBytes(NONCE);
    const c = createCipheriv('aes-256-gcm', this.#key, nonce);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([c.update(plain), c.final()]);
    return Buffer.concat([nonce, body, c.getAuthTag()]).toString('base64');
  }

  /** The plaintext, or undefined when `sealed` is not this key's sealing of bytes bound to `aad`. */
  open(aad: string, sealed: string): Buffer | undefined {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < NONCE + TAG || raw.toString('base64') !== sealed) return undefined;
    try {
      const d = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, NONCE));
      d.setAAD(Buffer.from(aad, 'utf8'));
      d.setAuthTag(raw.subarray(raw.length - TAG));
      return Buffer.concat([d.update(raw.subarray(NONCE, raw.length - TAG)), d.final()]);
    } catch {
      return undefined;
    }
  }

  /** Registers the key's text (base64, as given) and bytes as secrets: the gate refuses them in any encoding. */
  registerWith(secrets: { add(value: string): void }): void {
    const raw = this.#key.export();
    secrets.add(raw.toString('base64'));
    secrets.add(raw.toString('base64url'));
    secrets.add(raw.toString('hex'));
  }

  toJSON(): string { return `StoreKey(${this.id})`; }
}

/** Why key text was refused (never quoting it). */
export class KeyFormatError extends Error {}

/** A key from its base64 text: exactly 32 bytes, canonical base64 (whitespace around it ignored). */
export function parseKey(text: string): StoreKey {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) || t.length % 4 !== 0) throw new KeyFormatError('the encryption key is not base64');
  const bytes = Buffer.from(t, 'base64');
  if (bytes.length !== 32) throw new KeyFormatError(`the encryption key is ${bytes.length} bytes; it must be 32 (base64 of 32 random bytes)`);
  // Canonical only: the text given is then exactly the form registered as a secret (registerWith).
  if (bytes.toString('base64') !== t) throw new KeyFormatError('the encryption key is not canonical base64 (its last character carries stray bits)');
  return new StoreKey(bytes);
}
