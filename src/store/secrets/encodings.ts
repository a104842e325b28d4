import { NESTED_JSON_LEVELS } from './paths.js';

/**
 * The forms a secret can take in persisted text, and the normalizations that undo the ones
 * that cannot be enumerated. A secret is found in text if any needle occurs in it, or occurs
 * after \uXXXX (and \/) escapes or %XX escapes are decoded.
 */

/**
 * How many times a secret can stand JSON-escaped in a record's JSON text: once for the record
 * itself, once more per level of JSON held in a string (tool-call arguments stringified up to
 * NESTED_JSON_LEVELS times).
 */
export const JSON_ESCAPE_DEPTHS = NESTED_JSON_LEVELS + 1;

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
  for (let depth = 0; depth < JSON_ESCAPE_DEPTHS; depth++) {
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

/**
 * A \uXXXX escape written with any number of backslashes. The run of backslashes must start
 * where no backslash precedes it, so a scan never restarts inside a run (linear time on hostile
 * input: `\\+u` alone backtracks quadratically over a long run of backslashes).
 */
const U_ESCAPE = /(?<!\\)(\\+)u([0-9a-fA-F]{4})/g;
/** An escaped "/" (PHP writes \/): at any depth, and per depth d (2^(d-1) own backslashes after pairs of 2^d). */
const SLASH_ESCAPE = /(?<!\\)\\+\//g;
const SLASH_ESCAPE_AT: RegExp[] = [];
for (let d = 1; d <= JSON_ESCAPE_DEPTHS; d++) SLASH_ESCAPE_AT.push(new RegExp(`(?<!\\\\)((?:\\\\{${2 ** d}})*)\\\\{${2 ** (d - 1)}}/`, 'g'));

/**
 * The texts `text` stands for with its \uXXXX (and \/) escapes undone, so text from an encoder
 * that escapes differently (`"` as \u0022, `+` as \u002B, non-ASCII as \u00FC, `/` as \/, or
 * every character) can be matched against the needles:
 * - per nesting depth d, the escapes of depth d rewritten the way JSON.stringify writes the
 *   character at that depth, the others left as they are. At depth d an escape is written with
 *   2^(d-1) backslashes, a backslash character with 2^d: in a run of n backslashes the lowest
 *   set bit of n is the escape's own, the rest are escaped backslashes and stay. (So a
 *   backslash character followed by "/" or "u0041" is not taken for an escape one level deeper.)
 * - last, every escape decoded to the bare character, at any depth.
 * Only forms that differ from `text`; one scan for the \u escapes.
 */
export function unescapedForms(text: string): string[] {
  const hasU = text.includes('\\u');
  const hasSlash = text.includes('\\/');
  if (!hasU && !hasSlash) return [];
  const at: number[] = [];
  const end: number[] = [];
  const runs: number[] = [];
  const chars: string[] = [];
  let depths = 0; // bit d-1 set when a \u escape of depth d occurs
  if (hasU) {
    U_ESCAPE.lastIndex = 0;
    for (let m = U_ESCAPE.exec(text); m !== null; m = U_ESCAPE.exec(text)) {
      const n = (m[1] as string).length;
      at.push(m.index);
      end.push(m.index + m[0].length);
      runs.push(n);
      chars.push(String.fromCharCode(parseInt(m[2] as string, 16)));
      depths |= n & -n;
    }
  }
  const forms: string[] = [];
  const keep = (form: string) => {
    if (form !== text) forms.push(form);
  };
  for (let d = 1; d <= JSON_ESCAPE_DEPTHS; d++) {
    const own = 2 ** (d - 1);
    let form = text;
    if ((depths & own) !== 0) {
      const parts: string[] = [];
      let last = 0;
      for (let i = 0; i < at.length; i++) {
        const n = runs[i] as number;
        if ((n & -n) !== own) continue;
        parts.push(text.slice(last, at[i]), '\\'.repeat(n - own), escapeTimes(chars[i] as string, d));
        last = end[i] as number;
      }
      parts.push(text.slice(last));
      form = parts.join('');
    }
    if (hasSlash) form = form.replace(SLASH_ESCAPE_AT[d - 1] as RegExp, '$1/');
    keep(form);
  }
  let bare = text;
  if (at.length > 0) {
    const parts: string[] = [];
    let last = 0;
    for (let i = 0; i < at.length; i++) {
      parts.push(text.slice(last, at[i]), chars[i] as string);
      last = end[i] as number;
    }
    parts.push(text.slice(last));
    bare = parts.join('');
  }
  if (hasSlash) bare = bare.replace(SLASH_ESCAPE, '/');
  keep(bare);
  return forms;
}

/** One UTF-16 unit as JSON.stringify writes it `depth` times over (a lone surrogate stays bare, to pair up). */
function escapeTimes(c: string, depth: number): string {
  if (c !== '"' && c !== '\\' && c >= ' ') return c;
  let t = c;
  for (let i = 0; i < depth; i++) t = JSON.stringify(t).slice(1, -1);
  return t;
}

const PERCENT_RUN = /(?:%[0-9a-fA-F]{2})+/g;

/** Decodes runs of %XX as UTF-8. */
export function decodePercent(text: string): string {
  return text.includes('%') ? text.replace(PERCENT_RUN, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8')) : text;
}
