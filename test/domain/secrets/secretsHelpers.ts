import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { protocolVocabulary } from '../../../protocol/vocabulary.js';
import { StoreError, type StoreErrorKind } from '../../../src/domain/errors.js';
import { FileSessionStore, type FileStoreOptions } from '../../../src/stores/fileStore.js';
import { oracleLeaks } from '../../secretOracle.js';
import { snapshotTree } from '../../helpers.js';

export const VOCABULARY = protocolVocabulary();

/**
 * A temporary directory the caller removes (helpers.tempDir removes its directories after each
 * test, too early for a store shared by a table of cases).
 */
export function sharedDir(prefix = 'sidecar-secrets-'): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export function storeOn(root: string, opts: FileStoreOptions = {}): FileSessionStore {
  return new FileSessionStore(root, { vocabulary: VOCABULARY, leases: false, ...opts });
}

/** Awaits `p` and returns the StoreError it rejects with, asserting its kind. */
export async function rejects(p: Promise<unknown>, kind: StoreErrorKind): Promise<StoreError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err, `expected StoreError ${kind}`).toBeInstanceOf(StoreError);
  expect((err as StoreError).kind, (err as Error).message).toBe(kind);
  return err as StoreError;
}

/**
 * What an append or a create writes: every journal (and recovery / history file) byte for byte,
 * and which sessions have an index entry. The entries' contents are left out: the store rewrites
 * them in the background (debounced) after earlier successful writes.
 */
export function writtenState(root: string): Record<string, unknown> {
  const index = path.join(root, 'index');
  return {
    sessions: snapshotTree(path.join(root, 'sessions')),
    recovery: snapshotTree(path.join(root, 'recovery')),
    history: snapshotTree(path.join(root, 'history')),
    index: fs.existsSync(index) ? fs.readdirSync(index).filter((f) => f.endsWith('.json')).sort() : [],
    top: fs.readdirSync(root).sort(),
  };
}

/** Every file under `dir` with its bytes. */
export function filesUnder(dir: string): Array<{ file: string; bytes: Buffer }> {
  const out: Array<{ file: string; bytes: Buffer }> = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push({ file: path.relative(dir, p), bytes: fs.readFileSync(p) });
    }
  };
  walk(dir);
  return out;
}

/** Files under `dir` holding the secret or any of its encodings (the tests' own oracle), with the form. */
export function leaksUnder(dir: string, secrets: readonly string[]): string[] {
  const found: string[] = [];
  for (const { file, bytes } of filesUnder(dir)) {
    for (const s of secrets) for (const form of oracleLeaks(bytes, s)) found.push(`${file}: ${form}`);
  }
  return found;
}

/** Every run of `n` UTF-16 units of `s` (a 6-character window of the secret). */
export function runsOf(s: string, n = 6): string[] {
  const out = new Set<string>();
  for (let i = 0; i + n <= s.length; i++) out.add(s.slice(i, i + n));
  return [...out];
}

/** The error's message and its JSON hold neither the secret, nor a 6-character run of it, nor an encoding of it. */
export function expectNoLeak(err: Error, secret: string): void {
  const text = `${err.message}\n${JSON.stringify(err)}\n${String((err as StoreError).details?.path ?? '')}`;
  for (const run of runsOf(secret)) expect(text.includes(run), `error text holds "${run}": ${text}`).toBe(false);
  expect(oracleLeaks(Buffer.from(text), secret), `error text holds a form of the secret: ${text}`).toEqual([]);
}

// ---------------------------------------------------------------------------------------------
// Encodings of a secret as a client could send them.

const hex4 = (code: number, upper: boolean) => {
  const h = code.toString(16).padStart(4, '0');
  return upper ? h.toUpperCase() : h;
};

/** Every UTF-16 unit as \uXXXX (non-BMP characters as surrogate pairs). */
export const uEscapeAll = (s: string, upper = false) => [...Array(s.length).keys()].map((i) => `\\u${hex4(s.charCodeAt(i), upper)}`).join('');

/** JSON string content as Python's json.dumps writes it (ensure_ascii): non-ASCII as \uXXXX. */
export const pythonJson = (s: string) => JSON.stringify(s).slice(1, -1).replace(/[\u007f-\uffff]/g, (c) => `\\u${hex4(c.charCodeAt(0), false)}`);

/** JSON string content as .NET's System.Text.Json writes it: " + ' < > & and non-ASCII as \u00XX (upper case), backslash as \\. */
export const dotnetJson = (s: string) =>
  JSON.stringify(s).slice(1, -1)
    .replace(/\\"/g, '\\u0022')
    .replace(/[+'<>&\u007f-\uffff]/g, (c) => `\\u${hex4(c.charCodeAt(0), true)}`);

/** JSON string content with / escaped as \/ (PHP's json_encode). */
export const phpJson = (s: string) => JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/');

const percentAll = (s: string, upper: boolean) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${upper ? b.toString(16).toUpperCase().padStart(2, '0') : b.toString(16).padStart(2, '0')}`).join('');

/** The secret `shift` bytes into a base64 group, inside a longer payload. */
const inBase64 = (s: string, shift: number, url: boolean) =>
  Buffer.concat([Buffer.from('@#!'.slice(0, shift)), Buffer.from(s, 'utf8'), Buffer.from(' ok')]).toString(url ? 'base64url' : 'base64');

export interface Encoding {
  name: string;
  encode: (s: string) => string;
  /** The encoded text is the content of a JSON string literal whose value is the secret. */
  jsonContent: boolean;
  /** Rules an error may name for it (raw-family rules are added when the encoded text holds the secret). */
  rules: string[];
}

const JSONISH = ['json-escape', 'raw', 'nested-json'];
const B64 = ['base64', 'base64url'];

export const ENCODINGS: Encoding[] = [
  { name: 'raw', encode: (s) => s, jsonContent: false, rules: JSONISH },
  { name: 'json escaped (JSON.stringify)', encode: (s) => JSON.stringify(s).slice(1, -1), jsonContent: true, rules: JSONISH },
  { name: 'json \\u lower case, every unit', encode: (s) => uEscapeAll(s, false), jsonContent: true, rules: JSONISH },
  { name: 'json \\u upper case, every unit', encode: (s) => uEscapeAll(s, true), jsonContent: true, rules: JSONISH },
  { name: 'json ensure_ascii (python)', encode: pythonJson, jsonContent: true, rules: JSONISH },
  { name: 'json System.Text.Json (.NET)', encode: dotnetJson, jsonContent: true, rules: JSONISH },
  { name: 'json \\/ escaped (PHP)', encode: phpJson, jsonContent: true, rules: JSONISH },
  { name: 'percent upper case', encode: (s) => encodeURIComponent(s), jsonContent: false, rules: ['percent'] },
  { name: 'percent lower case', encode: (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), jsonContent: false, rules: ['percent'] },
  { name: 'percent, every byte', encode: (s) => percentAll(s, true), jsonContent: false, rules: ['percent'] },
  { name: 'percent, every byte, lower case', encode: (s) => percentAll(s, false), jsonContent: false, rules: ['percent'] },
  { name: 'base64 shift 0', encode: (s) => inBase64(s, 0, false), jsonContent: false, rules: B64 },
  { name: 'base64 shift 1', encode: (s) => inBase64(s, 1, false), jsonContent: false, rules: B64 },
  { name: 'base64 shift 2', encode: (s) => inBase64(s, 2, false), jsonContent: false, rules: B64 },
  { name: 'base64url shift 0', encode: (s) => inBase64(s, 0, true), jsonContent: false, rules: B64 },
  { name: 'base64url shift 1', encode: (s) => inBase64(s, 1, true), jsonContent: false, rules: B64 },
  { name: 'base64url shift 2', encode: (s) => inBase64(s, 2, true), jsonContent: false, rules: B64 },
  { name: 'hex lower case', encode: (s) => Buffer.from(s, 'utf8').toString('hex'), jsonContent: false, rules: ['hex'] },
  { name: 'hex upper case', encode: (s) => Buffer.from(s, 'utf8').toString('hex').toUpperCase(), jsonContent: false, rules: ['hex'] },
];

/** Rules acceptable for `secret` sent as `enc`. */
export function rulesFor(enc: Encoding, secret: string): string[] {
  const text = enc.encode(secret);
  const out = new Set(enc.rules);
  if (text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1))) for (const r of JSONISH) out.add(r);
  if (enc.rules.includes('percent') && /^[A-Za-z0-9_.!~*'()-]+$/.test(secret)) for (const r of JSONISH) out.add(r);
  return [...out];
}

/**
 * A JSON text holding {"q": secret}, `levels` times stringified, the innermost level written
 * by the encoder when it produces JSON string content, else holding the encoded text.
 */
export function nestedJson(secret: string, enc: Encoding, levels: number, asKey = false): string {
  const content = enc.jsonContent ? enc.encode(secret) : JSON.stringify(enc.encode(secret)).slice(1, -1);
  let text = asKey ? `{"k-${content}":1}` : `{"q":"${content}"}`;
  JSON.parse(text); // a valid JSON text
  for (let i = 1; i < levels; i++) text = JSON.stringify(text);
  return text;
}

/** A deterministic pseudo-random byte source (xorshift32). */
export function prng(seed: number): (n: number) => Buffer {
  let x = seed >>> 0 || 1;
  return (n) => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      x ^= x << 13; x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5; x >>>= 0;
      b[i] = x & 0xff;
    }
    return b;
  };
}
