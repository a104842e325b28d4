/**
 * Fake credentials, generated at run time from each provider's documented format (prefix,
 * length, alphabet) with a seeded generator: no real-looking secret is committed verbatim, and
 * every run sees the same tokens. Shared by credentialCorpus.test.ts and bench/secretsReport.ts
 * (no test framework in here).
 */
export const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const B64URL = `${ALNUM}_-`;
export const B64 = `${ALNUM}+/`;
export const HEX = '0123456789abcdef';
export const UPPER_NUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
export const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const DIGITS = '0123456789';

/** mulberry32: a small seeded generator. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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
