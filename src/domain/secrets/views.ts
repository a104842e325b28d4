/**
 * The normalisation passes of the registered-secret detector (see detect.ts). Each pass is one
 * linear scan of its input (regular expressions written so that no match attempt re-reads a run
 * another attempt already read) and undoes one family of encodings, so that the secret's form
 * under that family becomes a fixed needle (see formsOf in encodings.ts).
 */

/** The unit each one-character JSON escape stands for, by the character after the backslash (-1: none). */
const SIMPLE_CODE = new Int32Array(128).fill(-1);
for (const [k, v] of Object.entries({ '"': '"', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' })) SIMPLE_CODE[k.charCodeAt(0)] = v.charCodeAt(0);

export interface Unescaped {
  text: string;
  /** Where the decoded characters landed in `text`: [first, last] (inclusive). */
  first: number;
  last: number;
  /** Whether a decoded character is ASCII other than `"`: one an encoding's alphabet or separators can use. */
  encodingChars: boolean;
}

const isHex = (c: number): boolean => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102);

/**
 * `text` read once as the content of a JSON string (one nesting level undone), escapes decoded
 * left to right as JSON.parse does: `\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t` and `\uXXXX` (either
 * hex case). A backslash that starts no valid escape stays, and the character after it is read
 * as text. Undefined when nothing was decoded. A lone surrogate from \uD83D stays a lone code
 * unit, so a pair written as two escapes pairs up. A run of n backslashes is taken whole (n/2
 * backslashes, the odd one escaping what follows): linear, and fast on long runs.
 */
export function unescapeJsonOnce(text: string): Unescaped | undefined {
  let i = text.indexOf('\\');
  if (i < 0) return undefined;
  // Built with += (ropes, flattened once when first read): several times faster than parts + join.
  let out = '';
  let last = 0;
  let outLength = 0;
  let first = -1;
  let lastOut = -1;
  let encodingChars = false;
  while (i >= 0) {
    let j = i;
    while (text.charCodeAt(j) === 92) j++;
    out += text.slice(last, i);
    outLength += i - last;
    const pairs = (j - i) >> 1;
    if (pairs > 0) {
      out += pairs === 1 ? '\\' : '\\'.repeat(pairs);
      if (first < 0) first = outLength;
      outLength += pairs;
      lastOut = outLength - 1;
      encodingChars = true;
    }
    last = j;
    if (((j - i) & 1) === 1) {
      const c = text.charCodeAt(j);
      const simple = c < 128 ? (SIMPLE_CODE[c] as number) : -1;
      let unit = -1;
      if (simple >= 0) {
        unit = simple;
        last = j + 1;
      } else if (c === 117 && isHex(text.charCodeAt(j + 1)) && isHex(text.charCodeAt(j + 2)) && isHex(text.charCodeAt(j + 3)) && isHex(text.charCodeAt(j + 4))) {
        unit = parseInt(text.slice(j + 1, j + 5), 16);
        last = j + 5;
      }
      if (unit >= 0) {
        out += String.fromCharCode(unit);
        if (first < 0) first = outLength;
        lastOut = outLength;
        outLength += 1;
        if (unit !== 34 && unit < 128) encodingChars = true;
      } else {
        out += '\\'; // no escape: the backslash stays, what follows is text
        outLength += 1;
      }
    }
    i = text.indexOf('\\', last);
  }
  if (first < 0) return undefined;
  out += text.slice(last);
  return { text: out, first, last: lastOut, encodingChars };
}

const PERCENT_TEST = /%[0-9a-fA-F]{2}/;
/** Percent-decoding passes: one per level of encoding (`%2541` is `%41` encoded again). */
export const PERCENT_PASSES = 3;

/**
 * One pass of percent-decoding over the text's UTF-8 bytes (%XX in either case becomes its byte;
 * `plus`: `+` becomes a space), read back as UTF-8 (invalid sequences as U+FFFD). One loop, no
 * per-escape allocation.
 */
function decodePercentOnce(text: string, plus: boolean): string {
  const src = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(src.length);
  let o = 0;
  for (let i = 0; i < src.length; i++) {
    const b = src[i] as number;
    if (b === 37 && i + 2 < src.length && isHex(src[i + 1] as number) && isHex(src[i + 2] as number)) {
      out[o++] = (hexValue(src[i + 1] as number) << 4) | hexValue(src[i + 2] as number);
      i += 2;
    } else out[o++] = plus && b === 43 ? 32 : b;
  }
  return out.toString('utf8', 0, o);
}

const hexValue = (c: number): number => (c <= 57 ? c - 48 : (c | 32) - 87);

/**
 * The texts `text` stands for percent-decoded (runs of %XX in either case read as UTF-8), after
 * each of up to PERCENT_PASSES passes (double and triple encoding; a pass can also decode what
 * only looks like an escape, so every pass is kept), once keeping `+` and once reading `+` as
 * a space first at every pass (application/x-www-form-urlencoded; `%2B` of a doubly form-encoded
 * space turns into `+` at the first pass). Empty when `text` holds no %XX.
 */
export function percentViews(text: string, plusMatters: boolean): string[] {
  const out: string[] = [];
  if (!PERCENT_TEST.test(text)) return out; // `+` alone: the normalized view folds it (detect.ts)
  let t = text;
  for (let i = 0; i < PERCENT_PASSES && PERCENT_TEST.test(t); i++) out.push((t = decodePercentOnce(t, false)));
  if (plusMatters) {
    t = text;
    for (let i = 0; i < PERCENT_PASSES && (t.includes('+') || PERCENT_TEST.test(t)); i++) out.push((t = decodePercentOnce(t, true)));
  }
  return out;
}

const NAMED: Record<string, string> = { quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" };

/**
 * `text` with its HTML numeric character references decoded — `&#x4b;` `&#X4B;` `&#75;`
 * `&#0075;`, any number of leading zeros, the `;` optional as browsers read it — and the five
 * XML named ones (`&quot;` ...). Undefined when it has none. One loop from `&` to `&`.
 */
export function htmlEntityView(text: string): string | undefined {
  let i = text.indexOf('&');
  if (i < 0) return undefined;
  const parts: string[] = [];
  let last = 0;
  while (i >= 0) {
    let j = i + 1;
    let decoded: string | undefined;
    if (text.charCodeAt(j) === 35) { // '#'
      j++;
      const hex = (text.charCodeAt(j) | 32) === 120;
      if (hex) j++;
      const start = j;
      let code = 0;
      for (let c = text.charCodeAt(j); hex ? isHex(c) : c >= 48 && c <= 57; c = text.charCodeAt(++j)) {
        if (code <= 0x10ffff) code = code * (hex ? 16 : 10) + (hex ? (c <= 57 ? c - 48 : (c | 32) - 87) : c - 48);
      }
      if (j > start && code <= 0x10ffff) {
        decoded = String.fromCodePoint(code);
        if (text.charCodeAt(j) === 59) j++; // ';'
      }
    } else {
      const semi = text.indexOf(';', j);
      const name = semi > j && semi - j <= 4 ? text.slice(j, semi) : '';
      if (Object.hasOwn(NAMED, name)) {
        decoded = NAMED[name];
        j = semi + 1;
      }
    }
    if (decoded !== undefined) {
      parts.push(text.slice(last, i), decoded);
      last = j;
    }
    i = text.indexOf('&', decoded !== undefined ? j : i + 1);
  }
  if (parts.length === 0) return undefined;
  parts.push(text.slice(last));
  return parts.join('');
}

/**
 * A number in exponent form (`5.64629869386547e14`, `5646E+11`), as JSON serializers write large
 * integers and floats, starting where no digit or point precedes it (one attempt per digit run:
 * linear), with at least `minDigits` digits in its mantissa (a lookahead the regular expression
 * engine checks natively: `1e5` repeated costs no more than any other short token).
 */
export function exponentNumbers(minDigits: number): RegExp {
  const ahead = minDigits > 1 ? `(?=(?:[0-9]\\.?){${minDigits}})` : '';
  return new RegExp(`(?<![0-9.])${ahead}([0-9]+)(?:\\.([0-9]+))?[eE]([+-]?[0-9]+)`, 'g');
}
const EXPONENT_TEST = /[0-9][eE][+-]?[0-9]/;

/**
 * Whether a number in exponent form written out in positional digits (`5.64629869386547e14` as
 * `564629869386547`, `1.5e-3` as `0.0015`, exactly, from the digits: no float rounding) holds
 * one of `numeric` (digit strings, the longest `maxDigits` long). Only numbers `pattern` finds
 * (exponentNumbers) are written out, each into a text of at most its digits plus `maxDigits`
 * zeros: more zeros cannot change whether a run of `maxDigits` digits occurs.
 */
export function exponentHolds(text: string, numeric: readonly string[], maxDigits: number, pattern: RegExp): boolean {
  if (!EXPONENT_TEST.test(text)) return false;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    const int = m[1] as string;
    const digits = int + (m[2] ?? '');
    const e = Number(m[3]);
    if (!Number.isFinite(e)) continue;
    const point = int.length + Math.max(-(maxDigits + digits.length), Math.min(e, maxDigits + digits.length));
    const written = point >= digits.length
      ? digits + '0'.repeat(Math.min(point - digits.length, maxDigits))
      : point <= 0 ? `0.${'0'.repeat(Math.min(-point, maxDigits))}${digits}` : `${digits.slice(0, point)}.${digits.slice(point)}`;
    for (const s of numeric) if (written.includes(s)) return true;
  }
  return false;
}

/** Whether the text needs the normalized view at all: non-ASCII, or a separator the view folds. */
export const NON_ASCII = /[^\x00-\x7f]/;
export const FOLDED_SEPARATORS = /[\t\n\v\f\r_+]| {2}/;
