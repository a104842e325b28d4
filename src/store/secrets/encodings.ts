/**
 * The forms a secret can take in persisted text, and the normalizations that undo the ones
 * that cannot be enumerated. A secret is found in text if any needle occurs in it, or its raw
 * form occurs after \uXXXX escapes or %XX escapes are decoded.
 */

export type EncodingRule = 'raw' | 'json-escape' | 'percent' | 'base64' | 'base64url' | 'hex';

export interface Needle {
  text: string;
  bytes: Buffer;
  rule: EncodingRule;
}

/** Every needle of one secret, deduplicated. Base64 at the three byte alignments, as GitHub's masker does. */
export function needlesOf(secret: string): Needle[] {
  const out = new Map<string, EncodingRule>();
  const add = (text: string, rule: EncodingRule) => {
    if (text.length >= 6 && !out.has(text)) out.set(text, rule);
  };
  add(secret, 'raw');
  let escaped = secret;
  for (let depth = 0; depth < 3; depth++) {
    escaped = JSON.stringify(escaped).slice(1, -1); // as it stands inside JSON nested `depth + 1` times
    add(escaped, 'json-escape');
  }
  add(encodeURIComponent(secret), 'percent');
  add(encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), 'percent');
  const bytes = Buffer.from(secret, 'utf8');
  for (let shift = 0; shift < 3; shift++) {
    const b64 = alignedBase64(bytes, shift);
    add(b64, 'base64');
    add(b64.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
  }
  add(bytes.toString('hex'), 'hex');
  add(bytes.toString('hex').toUpperCase(), 'hex');
  return [...out].map(([text, rule]) => ({ text, bytes: Buffer.from(text, 'utf8'), rule }));
}

/**
 * The base64 characters determined by the secret alone when it starts `shift` bytes into a
 * 3-byte group: characters mixing in unknown neighbouring bytes are dropped at both ends.
 */
export function alignedBase64(secret: Buffer, shift: number): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), secret]).toString('base64');
  const first = Math.ceil((8 * shift) / 6);
  const last = Math.floor((8 * (shift + secret.length)) / 6); // exclusive
  return encoded.slice(first, last);
}

const JSON_U_ESCAPE = /\\+u([0-9a-fA-F]{4})/g;
const PERCENT_RUN = /(?:%[0-9a-fA-F]{2})+/g;

/** Decodes \uXXXX escapes at any nesting (any number of backslashes before the u). */
export function decodeJsonEscapes(text: string): string {
  return text.includes('\\u') ? text.replace(JSON_U_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : text;
}

/** Decodes runs of %XX as UTF-8. */
export function decodePercent(text: string): string {
  return text.includes('%') ? text.replace(PERCENT_RUN, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8')) : text;
}
