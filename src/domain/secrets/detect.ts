import { binaryForms, type EncodingRule, type Form, formsOf, NORMAL_SEPARATORS, normalizedForm, type SecretForms } from './encodings.js';
import { MultiScan } from './scan.js';
import { exponentHolds, exponentNumbers, FOLDED_SEPARATORS, htmlEntityView, NON_ASCII, percentViews, unescapeJsonOnce } from './views.js';

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
 * Out of scope here (see protocol/README.md §10): a secret split across records (the carry-over
 * of carryOver.ts follows the texts a session streams), compressed
 * or encrypted forms, other ciphers (rot13, reversal), and layers other than the combinations
 * above (hex of base64, base64 of percent-encoding, triple percent-encoding, ...).
 */
export class Detector {
  private raw: string[] = [];
  private nul: Form[] = [];
  private normalized: string[] = [];
  /** Some normalized form holds a blank: ASCII text with folded separators needs the view. */
  private normalizedBlanks = false;
  /** The longest word of each normalized form that holds a blank. */
  private longestWords: string[] = [];
  private scanTable: MultiScan<EncodingRule> | undefined;
  private scanStale = true;
  private readonly forms: SecretForms[] = [];
  private buffers: Array<{ bytes: Buffer; rule: EncodingRule }> = [];
  private wideBuffers: Array<{ bytes: Buffer; rule: EncodingRule }> = [];
  private numeric: string[] = [];
  private maxNumericDigits = 0;
  private exponent = exponentNumbers(0);
  private plusMatters = false;
  /** The longest span a form of a secret takes in a level's text. */
  private context = 64;
  /** The longest text any form of a registered secret takes (windowed scans keep this much minus one). */
  longestForm = 0;

  get size(): number {
    return this.forms.length;
  }

  add(secret: string): void {
    this.merge(formsOf(secret), secret);
  }

  /** A binary secret: every run of `run` of its bytes, in its binary encodings (encodings.ts binaryForms). */
  addBytes(bytes: Buffer, run: number): void {
    this.merge(binaryForms(bytes, run), '');
  }

  private merge(f: SecretForms, secret: string): void {
    this.forms.push(f);
    this.raw = [...new Set([...this.raw, ...f.raw.map((x) => x.text)])].sort((a, b) => b.length - a.length);
    this.nul = this.nul.concat(f.nul);
    if (f.normalized) this.normalized = [...new Set([...this.normalized, f.normalized.text])];
    if (f.normalized?.text.includes(' ')) {
      this.normalizedBlanks = true;
      this.longestWords.push(f.normalized.text.split(' ').reduce((a, b) => (b.length > a.length ? b : a)));
    }
    this.scanStale = true; // rebuilt once, by the next search (registrations come in bursts)
    this.buffers = this.buffers.concat(f.buffers);
    // An ASCII secret's UTF-16 bytes are ASCII and NULs: the text forms (nul) find them.
    if (NON_ASCII.test(secret) || secret === '') this.wideBuffers = this.wideBuffers.concat(f.buffers);
    if (f.numeric !== undefined) {
      this.numeric.push(f.numeric);
      this.maxNumericDigits = Math.max(this.maxNumericDigits, f.numeric.length);
      // The mantissa of an exponent form holding a numeric secret has its digits, but those the
      // exponent can add (its leading or trailing zeros).
      const fewest = Math.min(...this.numeric.map((d) => d.length - Math.max(/^0*/.exec(d)![0].length, /0*$/.exec(d)![0].length)));
      this.exponent = exponentNumbers(fewest);
    }
    if (/\s/.test(secret)) this.plusMatters = true;
    this.context = Math.max(this.context, f.longest + 64);
    this.longestForm = Math.max(this.longestForm, f.longest);
  }

  /** The one scan of every fold for every secret's needles (scan.ts). */
  private get scan(): MultiScan<EncodingRule> {
    if (this.scanStale) {
      this.scanTable = new MultiScan({
        base64: this.forms.flatMap((x) => x.base64),
        alnum: this.forms.flatMap((x) => x.alnum),
        bytes: this.forms.flatMap((x) => x.bytes),
      });
      this.scanStale = false;
    }
    return this.scanTable as MultiScan<EncodingRule>;
  }

  /** The rule of the first form of a secret found in `text`, or undefined. */
  find(text: string): EncodingRule | undefined {
    if (this.forms.length === 0) return undefined;
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

  /**
   * What findInBytes finds in the UTF-8 bytes of `text` beyond what find finds in `text`: the
   * UTF-16 forms of a non-ASCII secret as raw bytes (only a non-ASCII text can hold them).
   */
  findInUtf8Of(text: string): EncodingRule | undefined {
    if (this.wideBuffers.length === 0 || !NON_ASCII.test(text)) return undefined;
    const buf = Buffer.from(text, 'utf8');
    for (const n of this.wideBuffers) if (buf.indexOf(n.bytes) !== -1) return n.rule;
    return undefined;
  }

  /**
   * The end of `text` a scan of what follows must carry over: `longestForm - 1` characters
   * besides padding (and `extra` more: a slice of one text keeps a margin for escapes cut at its start).
   */
  tailOf(text: string, extra = 0): string {
    if (this.forms.length === 0 || text.length === 0) return '';
    const from = widen(text, text.length, -1, Math.max(0, this.longestForm - 1) + extra);
    return text.slice(from);
  }

  /**
   * The start of `text` a scan carried over from the text before it must see: `longestForm - 1`
   * characters besides padding, and the padding right after them (a form may end in zeros or `=`).
   * A form that starts before `text` and ends in it ends inside this head.
   */
  headOf(text: string): string {
    if (this.forms.length === 0 || text.length === 0) return '';
    let to = widen(text, -1, 1, Math.max(0, this.longestForm - 1));
    while (to < text.length && isPadding(text.charCodeAt(to))) to++;
    return to >= text.length ? text : text.slice(0, to);
  }

  /** The final gate over bytes: the UTF-16 forms as bytes, then everything in the bytes read as UTF-8. */
  findInBytes(buf: Buffer): EncodingRule | undefined {
    if (this.forms.length === 0) return undefined;
    return this.findInBuffer(buf) ?? this.find(buf.toString('utf8'));
  }

  /** The UTF-16 forms as raw bytes (text with NULs for an ASCII secret; not valid UTF-8 for a non-ASCII one). */
  findInBuffer(buf: Buffer): EncodingRule | undefined {
    for (const n of this.buffers) if (buf.indexOf(n.bytes) !== -1) return n.rule;
    return undefined;
  }

  /** Every view of one level's text. `nested`: the raw form found here stands JSON-escaped in the original. */
  private searchLevel(text: string, nested: boolean): EncodingRule | undefined {
    const hit = this.searchPlain(text) ?? this.scan.find(text);
    if (hit) return nested && hit === 'raw' ? 'json-escape' : hit;
    const views = percentViews(text, this.plusMatters);
    for (const view of views) {
      const r = this.searchPlain(view);
      if (r) return r === 'raw' ? 'percent' : r;
    }
    // Base64 in a URL has its `+` `/` `=` percent-encoded once; hex needs no escaping.
    if (views.length > 0) {
      const e = this.scan.find(views[0] as string);
      if (e) return e;
    }
    const html = htmlEntityView(text);
    if (html !== undefined && this.searchPlain(html)) return 'html-entity';
    if (this.maxNumericDigits > 0 && exponentHolds(text, this.numeric, this.maxNumericDigits, this.exponent)) return 'number';
    return undefined;
  }

  private searchPlainNested(text: string): EncodingRule | undefined {
    const r = this.searchPlain(text);
    return r === 'raw' ? 'json-escape' : r;
  }

  /** The secret as it is, its UTF-16 text (only where a NUL is), and its normalized form. */
  private searchPlain(text: string): EncodingRule | undefined {
    for (const n of this.raw) if (text.includes(n)) return 'raw';
    if (this.nul.length > 0 && text.includes('\0')) for (const n of this.nul) if (text.includes(n.text)) return n.rule;
    const view = this.normalizedView(text);
    if (view !== undefined) for (const n of this.normalized) if (view.includes(n)) return 'normalized';
    return undefined;
  }

  /**
   * The text normalized as the secrets' normalized forms are (encodings.ts normalizedForm), or
   * undefined when that cannot differ from the text for any of them: ASCII text is its own NFKC
   * and holds no ignorable character, so only folded separators matter, and only to a form
   * that holds a blank.
   */
  private normalizedView(text: string): string | undefined {
    if (this.normalized.length === 0) return undefined;
    if (!NON_ASCII.test(text)) {
      // ASCII text: the fold leaves words as they are, so a form whose longest word is absent cannot match.
      if (!this.normalizedBlanks || !FOLDED_SEPARATORS.test(text) || !this.longestWords.some((w) => text.includes(w))) return undefined;
      return text.replace(NORMAL_SEPARATORS, ' ');
    }
    return normalizedForm(text);
  }
}

/** Levels of JSON escapes worth undoing in a text of `n` characters (see Detector). */
export const MAX_LEVELS = (n: number): number => Math.floor(Math.log2(n + 1)) + 2;

/**
 * From `at` in direction `dir`, until `context` characters other than padding are taken:
 * whitespace, zeros and separators an encoding may carry without bound (wrapped or spaced base64
 * and hex, `&#x0000041;`, `5.6400000e14`, `de--ad`), so they do not count. Returns a slice bound: inclusive
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

/** Whitespace, zeros and the separators folds skip (`:` `,` `-` `_` `=` `'` `+` `/`): a form may hold any number of them. */
const PADDING = new Uint8Array(128);
for (const c of '0 \t\n\v\f\r:,-_=\'+/') PADDING[c.charCodeAt(0)] = 1;
const isPadding = (c: number): boolean => c < 128 && PADDING[c] === 1;
