import { StringDecoder } from 'node:string_decoder';
import { Detector } from './detect.js';
import { type EncodingRule, type Needle, needlesOf } from './encodings.js';
import { indexPath, memberPath, parseNestedJson } from './paths.js';

export const MIN_SECRET_CHARS = 8;
/** At most this many texts, of at most this many characters in all, are vouched for as clean. */
const MAX_VOUCHED = 1024;
const MAX_VOUCHED_CHARS = 16 << 20;
/** A binary secret's runs of this many bytes or more are refused (16 bytes: 128 bits, past any search). */
export const MIN_BINARY_RUN = 16;
const MAX_SECRET_CHARS = 4096;
/**
 * Texts this long or longer are searched in slices of this many characters (findInTextSliced):
 * a slice of the detector's most expensive class (zero-width characters, NFKC) costs ~12 ms.
 */
export const SLICED_SCAN_CHARS = 32 << 10;
/** Characters a slice carries over besides the longest form: an escape cut at its start (`\\u00e9`, a run of backslashes) is whole. */
const SLICE_MARGIN = 64;

/** The protocol's vocabulary, or how to get it when first needed (it is built from every schema). */
export type Vocabulary = readonly string[] | (() => readonly string[]);

/** Why a value cannot be registered as a secret; never includes the value. */
export function refuseSecret(value: string, vocabularyOf: Vocabulary): string | undefined {
  const vocabulary = typeof vocabularyOf === 'function' ? vocabularyOf() : vocabularyOf;
  // Characters are code points: four emoji are 8 UTF-16 units but 4 characters.
  if (value.length < MIN_SECRET_CHARS || [...value].length < MIN_SECRET_CHARS) return `a secret must have at least ${MIN_SECRET_CHARS} characters`;
  if (value.length > MAX_SECRET_CHARS) return `a secret may have at most ${MAX_SECRET_CHARS} characters`;
  if (vocabulary.some((word) => word.includes(value))) return "a secret may not occur in the protocol's own vocabulary";
  // Every journal line holds timestamps: a secret that could occur in one would refuse every write.
  if (/^[0-9:.TZ+-]+$/.test(value) && /\d{2}[-:T.]\d{2}/.test(value)) return 'a secret may not look like a timestamp';
  return undefined;
}

export interface SecretHit {
  path: string;
  rule: EncodingRule | 'nested-json';
}

/**
 * The known secrets of a session (or of the whole store, for scrubbing output). Values live in
 * memory only. Finding one in text or bytes is the Detector's work (detect.ts: every encoding,
 * JSON escapes at any depth); the literal needles serve scrub only.
 */
export class SecretSet {
  private readonly values = new Set<string>();
  private readonly binaries = new Map<string, { bytes: Buffer; run: number }>();
  private needles: Needle[] = [];
  private readonly detector = new Detector();
  /** Bumped by every registration: a text found clean under an older version is checked again. */
  private version = 0;
  /**
   * Texts checked clean under `version` (by value: the walk, the core's final gate and a
   * backend's second net see the same text, and only the first pays for the scan). Bounded:
   * emptied when it holds too many texts or characters.
   */
  private readonly clean = new Map<string, number>();
  private cleanChars = 0;
  /**
   * Buffers checked clean under `version` by findInBytesSliced (a backend checks a large write
   * before it and the gate under its write finds it here). Keyed by the object: a backend
   * checks the buffer it is about to write, and writes it unchanged.
   */
  private readonly cleanBytes = new WeakMap<Buffer, number>();

  /** Bumped by every registration (what was checked under an older one is checked again). */
  get generation(): number {
    return this.version;
  }

  get size(): number {
    return this.values.size + this.binaries.size;
  }

  add(value: string): void {
    if (this.values.has(value)) return;
    this.values.add(value);
    this.needles = this.needles.concat(needlesOf(value)).sort((a, b) => b.text.length - a.text.length);
    this.detector.add(value);
    this.version++;
    this.clean.clear();
    this.cleanChars = 0;
  }

  /**
   * A binary secret (the store's key): every run of `run` or more of its bytes is refused in
   * its binary encodings (base64, base64url, hex, byte arrays, raw bytes). Its text forms are
   * registered with add.
   */
  addBytes(bytes: Buffer, run = MIN_BINARY_RUN): void {
    const id = `${run}:${bytes.toString('base64')}`;
    if (this.binaries.has(id)) return;
    this.binaries.set(id, { bytes: Buffer.from(bytes), run });
    this.detector.addBytes(bytes, run);
    this.version++;
    this.clean.clear();
    this.cleanChars = 0;
  }

  addAll(other: SecretSet): void {
    for (const v of other.values) this.add(v);
    for (const b of other.binaries.values()) this.addBytes(b.bytes, b.run);
  }

  /**
   * The rule of the first secret form found in `text` (see Detector for the forms), exactly as
   * findInBytes finds it in the text's UTF-8 bytes. A text found clean is vouched for until the
   * next registration: checking it again costs a map lookup.
   */
  findInText(text: string): EncodingRule | undefined {
    if (this.size === 0 || this.clean.get(text) === this.version) return undefined;
    const rule = this.detector.find(text) ?? this.detector.findInUtf8Of(text);
    if (rule === undefined) this.vouch(text);
    return rule;
  }

  /**
   * findInText for a text of any size without holding the event loop: a text of
   * SLICED_SCAN_CHARS or more is searched in slices of that many characters, each with the
   * end of the one before (tailOf, and a margin for an escape cut at the slice's start: a form
   * across two slices is whole in the second), yielding between slices (setImmediate), so that
   * other requests are read and answered meanwhile. A registration meanwhile starts it again.
   * A text found clean is vouched for, as by findInText.
   */
  async findInTextSliced(text: string): Promise<EncodingRule | undefined> {
    if (this.size === 0 || this.clean.get(text) === this.version) return undefined;
    if (text.length < SLICED_SCAN_CHARS) return this.findInText(text);
    const slices = function* () {
      for (let from = 0; from < text.length; from += SLICED_SCAN_CHARS) yield text.slice(from, from + SLICED_SCAN_CHARS);
    };
    const found = await this.scanSlices(slices);
    if (found === 'again') return this.findInTextSliced(text);
    if (found === undefined) this.vouch(text);
    return found;
  }

  /**
   * findInBytes, sliced as findInTextSliced: the bytes decoded slice by slice (a character cut
   * between two is whole in the second: StringDecoder). A buffer found clean is vouched for:
   * findInBytes of the same buffer object is a lookup.
   */
  async findInBytesSliced(buf: Buffer): Promise<EncodingRule | undefined> {
    if (this.size === 0 || this.cleanBytes.get(buf) === this.version) return undefined;
    if (buf.length < SLICED_SCAN_CHARS) return this.findInBytes(buf);
    const version = this.version;
    const binary = this.detector.findInBuffer(buf); // native searches of the UTF-16 forms
    if (binary !== undefined) return binary;
    const slices = function* () {
      const decoder = new StringDecoder('utf8');
      for (let at = 0; at < buf.length; at += SLICED_SCAN_CHARS) yield decoder.write(buf.subarray(at, at + SLICED_SCAN_CHARS));
      yield decoder.end();
    };
    const found = await this.scanSlices(slices);
    if (found === 'again') return this.findInBytesSliced(buf);
    if (found === undefined && this.version === version) this.cleanBytes.set(buf, version);
    return found;
  }

  /**
   * The detector over consecutive pieces of one text, each searched with the end of the text
   * before it (tailOf, and a margin for an escape cut at the piece's start: a form across two
   * pieces is whole in the second), yielding to the event loop between pieces. 'again': a
   * secret was registered meanwhile (the caller starts over).
   */
  private async scanSlices(pieces: () => Iterable<string>): Promise<EncodingRule | undefined | 'again'> {
    const version = this.version;
    let tail = '';
    let first = true;
    for (const piece of pieces()) {
      if (!first) await new Promise<void>((resolve) => setImmediate(resolve));
      first = false;
      if (this.version !== version) return 'again';
      const window = tail + piece;
      const rule = this.detector.find(window) ?? this.detector.findInUtf8Of(window);
      if (rule !== undefined) return rule;
      tail = this.detector.tailOf(window, SLICE_MARGIN);
    }
    return undefined;
  }

  private vouch(text: string): void {
    if (this.clean.size >= MAX_VOUCHED || this.cleanChars + text.length > MAX_VOUCHED_CHARS) {
      this.clean.clear();
      this.cleanChars = 0;
    }
    if (text.length > MAX_VOUCHED_CHARS) return;
    this.clean.set(text, this.version);
    this.cleanChars += text.length;
  }

  /**
   * How much of the end of a text already checked a scan of what follows it must carry over
   * (findAcross): the longest registered form less one character, counted in characters other
   * than the padding (whitespace, zeros) forms may hold without bound.
   */
  tailOf(text: string): string {
    return this.detector.tailOf(text);
  }

  /**
   * A secret that completes in `next`, given `tail` (tailOf the text before it, which was
   * checked): the rule, or undefined. A secret wholly inside the text before is not reported
   * again (that text was checked); one that starts in the tail and ends in `next` is. Only the
   * tail and the head of `next` are scanned: `next` itself is checked on its own.
   */
  findAcross(tail: string, next: string): EncodingRule | undefined {
    if (this.size === 0 || tail === '') return undefined;
    const window = tail + this.detector.headOf(next);
    return this.detector.find(window) ?? this.detector.findInUtf8Of(window);
  }

  /**
   * The next piece of a text stream whose checked end is `tail`: the rule of a secret completed
   * across the two, or the tail to carry on (tailOf everything streamed so far).
   */
  carry(tail: string, next: string): { rule: EncodingRule } | { tail: string } {
    if (this.size === 0) return { tail: '' };
    const rule = this.findAcross(tail, next);
    if (rule !== undefined) return { rule };
    const head = this.detector.headOf(next);
    return { tail: this.detector.tailOf(head.length === next.length ? tail + next : next) };
  }

  /**
   * carry over bytes (a stream of base64 chunks): the window is decoded as UTF-8 across the
   * boundary (a character split between chunks is whole there) and searched as findInBytes
   * searches, the UTF-16 forms included. The tail keeps at least the bytes of tailOf's text
   * (a replacement character stands for at most as many bytes as its own three).
   */
  carryBytes(tail: Buffer, next: Buffer): { rule: EncodingRule } | { tail: Buffer } {
    if (this.size === 0) return { tail: Buffer.alloc(0) };
    const nextText = next.toString('utf8');
    const head = this.detector.headOf(nextText);
    const whole = head.length === nextText.length;
    if (tail.length > 0) {
      const window = Buffer.concat([tail, whole ? next : next.subarray(0, Buffer.byteLength(head) + 3)]);
      const text = window.toString('utf8');
      const rule = this.detector.findInBuffer(window) ?? this.detector.find(text) ?? this.detector.findInUtf8Of(text);
      if (rule !== undefined) return { rule };
    }
    const from = whole ? Buffer.concat([tail, next]) : next;
    const keep = Buffer.byteLength(this.detector.tailOf(whole ? from.toString('utf8') : nextText));
    return { tail: Buffer.from(from.subarray(Math.max(0, from.length - keep))) };
  }

  /**
   * Whether `text` holds `run` consecutive characters of a secret (a member name on a reported
   * path must not show part of a secret). Slow, for error paths only.
   */
  sharesRun(text: string, run = 6): boolean {
    if (text.length < run) return false;
    for (const v of this.values) {
      for (let i = 0; i + run <= v.length; i++) if (text.includes(v.slice(i, i + run))) return true;
    }
    return false;
  }

  /**
   * The final gate over the exact bytes about to be written: the same detection as findInText
   * over the bytes read as UTF-8, and the UTF-16 forms as bytes.
   */
  findInBytes(buf: Buffer): EncodingRule | undefined {
    if (this.size === 0 || this.cleanBytes.get(buf) === this.version) return undefined;
    return this.detector.findInBuffer(buf) ?? this.findInText(buf.toString('utf8'));
  }

  /**
   * Where in a JSON value a secret stands: string values, object keys, the text of numbers,
   * and JSON held in strings (followed to any depth, only into strings where a secret was found,
   * so the walk costs the value's size times the nesting depth). `json` is the value's JSON
   * text: when the secret is not in it at all, the walk is skipped.
   */
  locate(value: unknown, json: string): SecretHit | undefined {
    if (this.size === 0 || this.findInText(json) === undefined) return undefined;
    return this.walk(value, '') ?? { path: '', rule: this.findInText(json) as EncodingRule };
  }

  /**
   * locate for a value whose JSON text a sliced search found a secret in: the same walk, with
   * every string of SLICED_SCAN_CHARS or more searched in slices (findInTextSliced), so that
   * naming the member does not hold the event loop either.
   */
  async locateSliced(value: unknown, json: string): Promise<SecretHit | undefined> {
    if (this.size === 0 || (await this.findInTextSliced(json)) === undefined) return undefined;
    return (await this.walkSliced(value, '')) ?? { path: '', rule: (await this.findInTextSliced(json)) as EncodingRule };
  }

  private async walkSliced(v: unknown, path: string): Promise<SecretHit | undefined> {
    if (typeof v === 'string') {
      if (v.length < SLICED_SCAN_CHARS) return this.inString(v, path);
      const rule = await this.findInTextSliced(v);
      if (!rule) return undefined;
      const nested = parseNestedJson(v);
      const deeper = nested === undefined ? undefined : await this.walkSliced(nested, `${path}<json>`);
      return deeper ? { path: deeper.path, rule: deeper.rule === 'raw' ? 'nested-json' : deeper.rule } : { path, rule };
    }
    if (v === null || typeof v !== 'object') return this.walk(v, path);
    const entries: Array<[string, unknown, string]> = Array.isArray(v) ? v.map((item, i) => [String(i), item, indexPath(path, i)]) : Object.entries(v).map(([k, item]) => [k, item, memberPath(path, safeKey(k))]);
    for (const [key, item, at] of entries) {
      if (!Array.isArray(v)) {
        const keyRule = this.findInText(key);
        if (keyRule) return { path: `${path}${path ? '.' : ''}<key>`, rule: keyRule };
      }
      const hit = await this.walkSliced(item, at);
      if (hit) return hit;
    }
    return undefined;
  }

  private walk(v: unknown, path: string): SecretHit | undefined {
    if (typeof v === 'string') return this.inString(v, path);
    if (typeof v === 'number' || typeof v === 'bigint') {
      const rule = this.findInText(String(v));
      return rule && { path, rule };
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = this.walk(v[i], indexPath(path, i));
        if (hit) return hit;
      }
      return undefined;
    }
    if (v === null || typeof v !== 'object') return undefined;
    for (const [key, item] of Object.entries(v)) {
      const keyRule = this.findInText(key);
      if (keyRule) return { path: `${path}${path ? '.' : ''}<key>`, rule: keyRule };
      const hit = this.walk(item, memberPath(path, safeKey(key)));
      if (hit) return hit;
    }
    return undefined;
  }

  private inString(s: string, path: string): SecretHit | undefined {
    const rule = this.findInText(s);
    if (!rule) return undefined;
    const nested = parseNestedJson(s);
    if (nested !== undefined) {
      const deeper = this.walk(nested, `${path}<json>`);
      if (deeper) return { path: deeper.path, rule: deeper.rule === 'raw' ? 'nested-json' : deeper.rule };
    }
    return { path, rule };
  }

  /** Replaces every form of every secret in `text` (for error messages and log lines). */
  scrub(text: string): string {
    if (this.size === 0) return text;
    let out = text;
    for (const n of this.needles) if (out.includes(n.text)) out = out.split(n.text).join('<redacted:secret>');
    // A form that is only found decoded cannot be cut out: the whole text goes.
    if (this.findInText(out) !== undefined) return '<redacted:secret>';
    return out;
  }
}

/** A key on a reported path: shown unless it could itself carry secret-looking text. */
function safeKey(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/.test(key) ? key : '(key)';
}
