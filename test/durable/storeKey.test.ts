import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretSet } from '../../src/domain/secrets/knownSecrets.js';
import { KEY_CHECK_CONSTANT, StoreKey } from '../../src/durable/storeKey.js';

/**
 * The store's encryption key as a registered secret (StoreKey.registerWith): every lossless form
 * of it is refused as record content, and so is any run of 16 or more of its bytes in any of
 * its encodings (a prefix of its base64 text, a piece of its hex, a slice of its bytes as an
 * array). Its id (the key check value stored in encryption.json and sealed files) is derived
 * by a slow KDF, not the fast HMAC check value of marker version 1.
 */

const bytes = Buffer.from('9c1f0e5a7b3d2c4e8f6a1b0d9e2c7f4a5b8d3e6f1a0c9b2e7d4f6a8c1e3b5d70', 'hex');
const key = new StoreKey(bytes);
const set = new SecretSet();
key.registerWith(set);
const b64 = bytes.toString('base64');
const hex = bytes.toString('hex');
const xxd = (b: Buffer) => [...b].map((x) => `0x${x.toString(16).padStart(2, '0')}`).join(', ');

describe('every lossless form of the store key is refused', () => {
  it.each([
    ['base64', b64],
    ['base64url', bytes.toString('base64url')],
    ['hex, lower case', hex],
    ['hex, upper case', hex.toUpperCase()],
    ['hex with ":" separators', hex.replace(/..(?!$)/g, '$&:')],
    ['hex with "-" every 4 digits, upper case', hex.toUpperCase().replace(/.{4}(?!$)/g, '$&-')],
    ['xxd -i', `unsigned char key[] = {\n  ${xxd(bytes)}\n};\nunsigned int key_len = 32;`],
    ['Buffer JSON', JSON.stringify(bytes)],
    ['a JSON array of its bytes, pretty-printed', JSON.stringify([...bytes], null, 2)],
    ['base64 wrapped and indented', `key: |\n  ${b64.slice(0, 20)}\n  ${b64.slice(20)}`],
  ])('%s', (_label, text) => {
    expect(set.findInText(text)).toBeDefined();
    expect(set.findInText(JSON.stringify({ t: text }))).toBeDefined();
  });
});

describe('any 16 or more bytes of the key in a row are refused, in its encodings', () => {
  it('the 40-character prefix of its base64 (the finding: 30 of 32 bytes)', () => {
    expect(set.findInText(`the key starts ${b64.slice(0, 40)}...`)).toBeDefined();
  });

  it.each(Array.from({ length: 17 }, (_, o) => o))('the 16 bytes at offset %i: base64 of the key cut there, hex, xxd, an array', (o) => {
    const piece = bytes.subarray(o, o + 16);
    // A run of the key's own base64 text that covers those bytes.
    const from = Math.floor((o * 8) / 6);
    const to = Math.ceil(((o + 16) * 8) / 6);
    expect(set.findInText(`x ${b64.slice(from, to + 1)} y`)).toBeDefined();
    expect(set.findInText(piece.toString('base64'))).toBeDefined();
    expect(set.findInText(piece.toString('base64url'))).toBeDefined();
    expect(set.findInText(piece.toString('hex').toUpperCase())).toBeDefined();
    expect(set.findInText(xxd(piece))).toBeDefined();
    expect(set.findInText(JSON.stringify([...piece]))).toBeDefined();
    expect(set.findInBytes(Buffer.concat([Buffer.from('raw:'), piece]))).toBeDefined();
  });

  it('15 bytes of it are not refused (too few to matter, too many needles otherwise)', () => {
    const piece = bytes.subarray(3, 18);
    expect(set.findInText(piece.toString('hex'))).toBeUndefined();
    expect(set.findInText(JSON.stringify([...piece]))).toBeUndefined();
    expect(set.findInText(b64.slice(0, 20))).toBeUndefined();
  });

  it('other random keys and random base64 are not taken for it', () => {
    for (let i = 0; i < 200; i++) {
      const other = randomBytes(48);
      expect(set.findInText(`${other.toString('base64')} ${other.toString('hex')} ${JSON.stringify([...other])}`)).toBeUndefined();
    }
  });
});

describe('the key id', () => {
  it('is not the fast HMAC check value of marker version 1, which is kept only to read old stores', () => {
    const v1 = createHmac('sha256', bytes).update(KEY_CHECK_CONSTANT).digest('hex').slice(0, 32);
    expect(key.id).toMatch(/^[0-9a-f]{32}$/);
    expect(key.id).not.toBe(v1);
    expect(key.legacyId).toBe(v1);
    expect(key.names(key.id)).toBe(true);
    expect(key.names(v1)).toBe(true);
    expect(key.names(new StoreKey(randomBytes(32)).id)).toBe(false);
  });

  it('is the same for the same key, and differs for another', () => {
    expect(new StoreKey(Buffer.from(bytes)).id).toBe(key.id);
    expect(new StoreKey(randomBytes(32)).id).not.toBe(key.id);
  });
});
