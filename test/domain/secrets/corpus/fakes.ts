/**
 * Fake credentials, generated at run time from each provider's documented format (prefix,
 * length, alphabet) with a seeded generator: no real-looking secret is committed verbatim, and
 * every run sees the same tokens. Shared by credentialCorpus.test.ts and bench/secretsReport.ts
 * (no test framework in here).
 */
import { Rng } from '../../../torture/rng.js';

export const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const B64URL = `${ALNUM}_-`;
export const B64 = `${ALNUM}+/`;
export const HEX = '0123456789abcdef';
export const UPPER_NUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const DIGITS = '0123456789';

/** A small seeded generator (mulberry32, shared with the torture scenarios). */
export function seeded(seed: number): () => number {
  const rng = new Rng(seed);
  return () => rng.next();
}

export function faker(seed: number) {
  const next = seeded(seed);
  const pick = (n: number, alphabet = ALNUM) => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)];
    return s;
  };
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));
  return { pick, bytes, next };
}
