import { createCipheriv, createDecipheriv, createHmac, createSecretKey, type KeyObject, randomBytes, scryptSync } from 'node:crypto';

/**
 * A store's encryption key (AES-256-GCM, node:crypto). The key bytes live only in a KeyObject,
 * which util.inspect, JSON.stringify and error text never show; nothing here writes or logs
 * them.
 *
 * `id` names the key in headers, sealed files and the store marker without revealing it:
 * scrypt(key, KEY_ID_SALT, N=2^14, r=8, p=1), 16 bytes in hex (key id version 2). A check
 * value lets anyone holding most of the key test guesses for the rest; a slow KDF makes each
 * guess cost tens of milliseconds instead of a microsecond, and the gate refuses any 16 bytes
 * of the key in a row as record content (registerWith), so no leak leaves few enough unknown
 * bytes to search. `legacyId` is version 1, HMAC-SHA256(key, KEY_CHECK_CONSTANT), first 16
 * bytes in hex: only compared, to open markers and files written before (never written).
 *
 * Sealed form (STORAGE.md, "Encryption at rest"): base64 of nonce (12 random bytes, fresh per
 * seal) ‖ ciphertext ‖ GCM tag (16 bytes). The associated data names where the bytes belong
 * (kind, session id, seq or file name), so a sealed value moved elsewhere fails authentication.
 */
export const KEY_CHECK_CONSTANT = 'session-sidecar key check v1';
export const KEY_ID_SALT = 'session-sidecar key id v2';
const KEY_ID_COST = { N: 1 << 14, r: 8, p: 1, maxmem: 64 << 20 };
const NONCE = 12;
const TAG = 16;

/** Key ids derived in this process, by the legacy id: the KDF runs once per key. */
const derived = new Map<string, string>();

export class StoreKey {
  readonly id: string;
  readonly legacyId: string;
  readonly #key: KeyObject;

  constructor(bytes: Buffer) {
    if (bytes.length !== 32) throw new Error('an encryption key is 32 bytes');
    this.#key = createSecretKey(bytes);
    this.legacyId = createHmac('sha256', this.#key).update(KEY_CHECK_CONSTANT).digest('hex').slice(0, 32);
    let id = derived.get(this.legacyId);
    if (id === undefined) {
      id = scryptSync(bytes, KEY_ID_SALT, 16, KEY_ID_COST).toString('hex');
      derived.set(this.legacyId, id);
    }
    this.id = id;
  }

  /** Whether a stored key id (version 2, or version 1 of older files) names this key. */
  names(id: unknown): boolean {
    return typeof id === 'string' && (id === this.id || id === this.legacyId);
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

  /**
   * Registers the key as a secret: its text (base64, as given), base64url and hex, and as bytes
   * every run of 16 or more of them, in base64, base64url, hex (any case, any separators, xxd),
   * byte arrays and Buffer JSON: the gate refuses the key, a prefix or a piece of it, in any of
   * those encodings.
   */
  registerWith(secrets: { add(value: string): void; addBytes(bytes: Buffer): void }): void {
    const raw = this.#key.export();
    secrets.add(raw.toString('base64'));
    secrets.add(raw.toString('base64url'));
    secrets.add(raw.toString('hex'));
    secrets.addBytes(raw);
  }

  toJSON(): string { return `StoreKey(${this.id})`; }
}

/** Whether a stored key id (null: plaintext) names `key` (undefined: no key). */
export function sameKey(id: unknown, key: StoreKey | undefined): boolean {
  return key === undefined ? id === null || id === undefined : key.names(id);
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
