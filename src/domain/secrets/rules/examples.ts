/**
 * Rule examples are templates, not tokens: `sntryu_{hex:64}` stands for `sntryu_` and 64 hex
 * digits. The source holds no string a secret scanner (GitHub push protection, gitleaks) would
 * take for a real credential; `expandExample` makes one, from a seeded generator, when a test or
 * the report needs it. Placeholders:
 *
 * - `{ALPHABET:N}`: N characters of a named alphabet (below);
 * - `{uuid}`: a random version-4 UUID, lower-case hex.
 *
 * Everything else is literal (`${TOKEN}` too). An expanded example is the same for the same seed.
 */

export const ALPHABETS: Readonly<Record<string, string>> = {
  alnum: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  lower: 'abcdefghijklmnopqrstuvwxyz',
  upper: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
  letters: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
  lowernum: 'abcdefghijklmnopqrstuvwxyz0123456789',
  uppernum: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  digits: '0123456789',
  hex: '0123456789abcdef',
  HEX: '0123456789ABCDEF',
  b64: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
  b64url: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-',
  base32: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567',
  bech32: 'qpzry9x8gf2tvdw0s3jn54khce6mua7l',
  BECH32: 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L',
};

/** A small seeded generator (mulberry32): examples are reproducible, and no library is needed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PLACEHOLDER = /\{([A-Za-z0-9]+)(?::(\d{1,5}))?\}/g;

/**
 * Expands one template. Each random run holds at least one letter and one digit when its
 * alphabet has both and it is 8 or more characters long (a run of only letters would be a word
 * to the value checks, as a real token almost never is).
 */
export function expandExample(template: string, next: () => number): string {
  return template.replace(PLACEHOLDER, (whole, name: string, count: string | undefined) => {
    if (name === 'uuid' && count === undefined) {
      const h = run(ALPHABETS.hex!, 32, next);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[Math.floor(next() * 4)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    }
    const alphabet = ALPHABETS[name];
    if (alphabet === undefined || count === undefined) return whole; // `${TOKEN}` and the like: literal
    return run(alphabet, Number(count), next);
  });
}

function run(alphabet: string, n: number, next: () => number): string {
  const pick = (set: string) => set[Math.floor(next() * set.length)]!;
  const chars = Array.from({ length: n }, () => pick(alphabet));
  const digits = [...alphabet].filter((c) => c >= '0' && c <= '9').join('');
  const letters = [...alphabet].filter((c) => /[A-Za-z]/.test(c)).join('');
  if (n >= 8 && digits && letters) {
    if (!chars.some((c) => digits.includes(c))) chars[Math.floor(next() * n)] = pick(digits);
    if (!chars.some((c) => letters.includes(c))) chars[Math.floor(next() * n)] = pick(letters);
  }
  return chars.join('');
}
