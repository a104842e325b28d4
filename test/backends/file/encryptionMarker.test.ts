import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkMarker, markerPath, readMarker } from '../../../src/backends/file/encryptionMarker.js';
import { StoreLayout } from '../../../src/backends/file/layout.js';
import { StoreError } from '../../../src/domain/errors.js';
import { nodeFs } from '../../../src/durable/fsLayer.js';
import { StoreKey } from '../../../src/durable/storeKey.js';
import { tempDir } from '../../helpers.js';

/**
 * The store marker `encryption.json` (STORAGE.md, "Encryption at rest"): version 2 names the key
 * by its slow-KDF id; a version 1 marker (the fast HMAC check value) still opens with its key
 * and is rewritten as version 2 by the first open for writing.
 */

function storeRoot(): StoreLayout {
  const root = tempDir('sidecar-marker-');
  fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
  return new StoreLayout(root);
}

const markerOf = (layout: StoreLayout) => JSON.parse(fs.readFileSync(markerPath(layout), 'utf8')) as Record<string, unknown>;

function writeV1(layout: StoreLayout, keyId: string): void {
  fs.writeFileSync(markerPath(layout), `${JSON.stringify({ format: 'session-sidecar/encryption', version: 1, keyId })}\n`, { mode: 0o600 });
}

describe('encryption.json', () => {
  it('a new encrypted store is marked with version 2 and the key id, never the fast check value', () => {
    const layout = storeRoot();
    const key = new StoreKey(randomBytes(32));
    checkMarker(nodeFs, layout, key, false);
    expect(markerOf(layout)).toEqual({ format: 'session-sidecar/encryption', version: 2, keyId: key.id });
    expect(JSON.stringify(markerOf(layout))).not.toContain(key.legacyId);
  });

  it('a version 1 marker opens with its key; an open for inspection leaves it, an open for writing rewrites it as version 2', () => {
    const layout = storeRoot();
    const key = new StoreKey(randomBytes(32));
    writeV1(layout, key.legacyId);
    checkMarker(nodeFs, layout, key, true);
    expect(markerOf(layout)).toEqual({ format: 'session-sidecar/encryption', version: 1, keyId: key.legacyId });
    checkMarker(nodeFs, layout, key, false);
    expect(markerOf(layout)).toEqual({ format: 'session-sidecar/encryption', version: 2, keyId: key.id });
    expect(readMarker(nodeFs, layout)).toEqual({ keyId: key.id });
    checkMarker(nodeFs, layout, key, false); // and opens again
  });

  it('a version 1 marker of another key is KeyMismatch (wrongKey), and is left as it was', () => {
    const layout = storeRoot();
    const other = new StoreKey(randomBytes(32));
    writeV1(layout, other.legacyId);
    const before = fs.readFileSync(markerPath(layout));
    const err = (() => {
      try {
        checkMarker(nodeFs, layout, new StoreKey(randomBytes(32)), false);
        return undefined;
      } catch (e) {
        return e as StoreError;
      }
    })();
    expect(err).toBeInstanceOf(StoreError);
    expect(err?.kind).toBe('KeyMismatch');
    expect(err?.details.reason).toBe('wrongKey');
    expect(fs.readFileSync(markerPath(layout))).toEqual(before);
  });

  it('an unknown marker version is Corrupt (a newer sidecar wrote it)', () => {
    const layout = storeRoot();
    fs.writeFileSync(markerPath(layout), `${JSON.stringify({ format: 'session-sidecar/encryption', version: 3, keyId: 'x' })}\n`, { mode: 0o600 });
    expect(() => readMarker(nodeFs, layout)).toThrow(/not a session-sidecar encryption marker/);
  });
});
