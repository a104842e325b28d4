import { type EncodingRule, type Form, formsOf, type SecretForms } from './encodings.js';
import { NeedleTable } from './scan.js';
import { htmlEntityView, numberView, percentViews, unescapeJsonOnce } from './views.js';

/**
 * Whether a text holds a registered secret in any encoding the detector knows. Instead of one
 * needle per combination of encodings, a few linear normalisation passes (views.ts) turn each
 * encoding into a fixed needle (encodings.ts formsOf):
 *
 *   JSON levels  T0 = the text, T(k+1) = T(k) with one level of JSON string escapes undone, until
 *                nothing decodes: the secret nested in JSON held in strings any number of times
 *                (and \uXXXX / \/ written by any encoder) stands raw in some T(k).
 *   per level    the raw forms (UTF-8, and UTF-16LE/BE read as Latin-1: text with NULs) in T(k);
 *                base64 / base64url of the UTF-8 and UTF-16 bytes in T(k) without whitespace
 *                (wrapped or spaced base64); their hex in T(k) lower-cased without `:`, whitespace
 *                or `\x` separators (each fold applied on the fly by one scan, scan.ts); the raw
 *                forms in T(k) percent-decoded (after each of up to three passes, with and without
 *                `+` as space) and base64 in T(k) percent-decoded once; the raw forms in T(k) with
 *                HTML character references decoded, and with exponent-form numbers written out.
 *
 * Cost: level 0 is a constant number of linear passes over the text. A level k > 0 differs from
 * level k-1 only around the characters decoded by the last pass; a match that does not overlap
 * them was already seen one level up, so a level is searched only over the hull of its decoded
 * characters widened by the longest span a form can take (`context`, then across any run of
 * whitespace or zeros, the padding encodings allow). The JSON pass itself is linear and is
 * needed only while the text holds a backslash. The number of levels is bounded: JSON nested
 * d times writes a `"` or `\` of the secret with 2^d - 1 backslashes and `\uXXXX` with 2^(d-1),
 * so a text of n characters holds at most log2(n) + 1 meaningful levels. A text still decoding
 * after MAX_LEVELS(n) passes (only built that way: `\u005c` written before `u005c`, one level per
 * five characters) cannot be checked in linear time and is reported as 'json-escape' (refused).
 *
 * Out of scope (see protocol/README.md §10): a secret split across records or fields, compressed
 * or encrypted forms, other ciphers (rot13, reversal), and layers other than the combinations
 * above (hex of base64, base64 of percent-encoding, triple percent-encoding, ...).
 */
export class Detector {
  private plain: Form[] = [];
  private base64 = new NeedleTable<EncodingRule>([], 'base64');
  private hex = new NeedleTable<EncodingRule>([], 'hex');
  private readonly forms: SecretForms[] = [];
  private bytes: Array<{ bytes: Buffer; rule: EncodingRule }> = [];
  private maxNumericDigits = 0;
  private plusMatters = false;
  /** The longest span a form of a secret takes in a level's text. */
  private context = 64;

  add(secret: string): void {
    this.merge(formsOf(secret), secret);
  }

  private merge(f: SecretForms, secret: string): void {
    this.forms.push(f);
    this.plain = this.plain.concat(f.plain).sort((a, b) => b.text.length - a.text.length);
    this.base64 = new NeedleTable(this.forms.flatMap((x) => x.base64), 'base64');
    this.hex = new NeedleTable(this.forms.flatMap((x) => x.hex.map((text) => ({ text, rule: 'hex' as const }))), 'hex');
    this.bytes = this.bytes.concat(f.bytes);
    if (f.numeric) this.maxNumericDigits = Math.max(this.maxNumericDigits, secret.length);
    if (f.hasSpace) this.plusMatters = true;
    // The widest form: each UTF-8 byte as `\xHH` in hex (8 characters for a 2-byte UTF-16 unit,
    // up to 3 bytes per unit) or doubly percent-encoded (`%25HH`, 5 per byte); base64 and
    // entities are narrower. Separators beyond one per byte, zeros and whitespace are crossed
    // by the widening in searchLevel.
    this.context = Math.max(this.context, 16 * secret.length + 64);
  }

  /** The rule of the first form of a secret found in `text`, or undefined. */
  find(text: string): EncodingRule | undefined {
    if (this.plain.length === 0) return undefined;
    const direct = this.searchLevel(text, false);
    if (direct) return direct;
    const maxLevels = MAX_LEVELS(text.length);
    let level = text;
    for (let k = 1; k <= maxLevels; k++) {
      const next = unescapeJsonOnce(level);
      if (next === undefined) return undefined;
      level = next.text;
      const from = widen(level, next.first, -1, this.context);
      const to = widen(level, next.last, 1, this.context);
      const hull = from === 0 && to === level.length ? level : level.slice(from, to);
      // Only `"` or non-ASCII decoded: no encoded form can overlap them, only the raw ones.
      const hit = next.encodingChars ? this.searchLevel(hull, true) : this.searchPlainNested(hull);
      if (hit) return hit;
    }
    // Still decoding after more levels than JSON of this size can nest: refused, never passed unchecked.
    return unescapeJsonOnce(level) === undefined ? undefined : 'json-escape';
  }

  /** The final gate over bytes: the UTF-16 forms as bytes, then everything in the bytes read as UTF-8. */
  findInBytes(buf: Buffer): EncodingRule | undefined {
    if (this.plain.length === 0) return undefined;
    for (const n of this.bytes) if (buf.indexOf(n.bytes) !== -1) return n.rule;
    return this.find(buf.toString('utf8'));
  }

  /** Every view of one level's text. `nested`: the raw form found here stands JSON-escaped in the original. */
  private searchLevel(text: string, nested: boolean): EncodingRule | undefined {
    const plainRule = (rule: EncodingRule) => (nested && rule === 'raw' ? 'json-escape' : rule);
    const hit = this.searchPlain(text) ?? this.searchEncoded(text);
    if (hit) return plainRule(hit);
    const views = percentViews(text, this.plusMatters);
    for (const view of views) {
      const r = this.searchPlain(view);
      if (r) return r === 'raw' ? 'percent' : r;
    }
    // Base64 in a URL has its `+` `/` `=` percent-encoded once; hex needs no escaping.
    if (views.length > 0) {
      const e = this.base64.find(views[0] as string);
      if (e) return e;
    }
    const html = htmlEntityView(text);
    if (html !== undefined && this.searchPlain(html)) return 'html-entity';
    if (this.maxNumericDigits > 0) {
      const numbers = numberView(text, this.maxNumericDigits);
      if (numbers !== undefined && this.searchPlain(numbers)) return 'number';
    }
    return undefined;
  }

  private searchPlainNested(text: string): EncodingRule | undefined {
    const r = this.searchPlain(text);
    return r === 'raw' ? 'json-escape' : r;
  }

  private searchPlain(text: string): EncodingRule | undefined {
    for (const n of this.plain) if (text.includes(n.text)) return n.rule;
    return undefined;
  }

  private searchEncoded(text: string): EncodingRule | undefined {
    return this.base64.find(text) ?? this.hex.find(text);
  }
}

/** Levels of JSON escapes worth undoing in a text of `n` characters (see Detector). */
export const MAX_LEVELS = (n: number): number => Math.floor(Math.log2(n + 1)) + 2;

/**
 * From `at` in direction `dir`, until `context` characters other than whitespace and zeros are
 * taken: those are the padding an encoding may carry without bound (wrapped or spaced base64 and
 * hex, `&#x0000041;`, `5.6400000e14`), so they do not count. Returns a slice bound: inclusive
 * start when dir < 0, exclusive end when dir > 0.
 */
function widen(text: string, at: number, dir: -1 | 1, context: number): number {
  let taken = 0;
  if (dir < 0) {
    let i = at;
    while (i > 0 && taken < context) if (!isPadding(text.charCodeAt(--i))) taken++;
    return i;
  }
  let i = at + 1;
  while (i < text.length && taken < context) if (!isPadding(text.charCodeAt(i++))) taken++;
  return i;
}

const isPadding = (c: number): boolean => c === 48 || c === 32 || (c >= 9 && c <= 13);
