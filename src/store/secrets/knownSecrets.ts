import { decodePercent, type EncodingRule, type Needle, needlesOf, unescapedForms } from './encodings.js';
import { indexPath, memberPath, NESTED_JSON_LEVELS, parseNestedJson } from './paths.js';

export const MIN_SECRET_CHARS = 8;
const MAX_SECRET_CHARS = 4096;

/** Why a value cannot be registered as a secret; never includes the value. */
export function refuseSecret(value: string, vocabulary: readonly string[]): string | undefined {
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
 * memory only. Finding one is a scan of text for every needle (raw, JSON-escaped at each depth,
 * percent, base64 at three alignments, hex), then of the text with its \u (and \/) escapes
 * undone (see unescapedForms) and with its % escapes decoded.
 */
export class SecretSet {
  private readonly values = new Set<string>();
  private needles: Needle[] = [];

  get size(): number {
    return this.values.size;
  }

  add(value: string): void {
    if (this.values.has(value)) return;
    this.values.add(value);
    this.needles = this.needles.concat(needlesOf(value)).sort((a, b) => b.text.length - a.text.length);
  }

  addAll(other: SecretSet): void {
    for (const v of other.values) this.add(v);
  }

  /** The rule of the first secret form found in `text`. */
  findInText(text: string): EncodingRule | undefined {
    if (this.values.size === 0) return undefined;
    const direct = this.needleIn(text);
    if (direct) return direct;
    // \uXXXX and \/ escapes: rewritten as JSON.stringify writes them at their depth (an encoder
    // escaping some characters differently), or all decoded (every character escaped).
    for (const form of unescapedForms(text)) if (this.needleIn(form)) return 'json-escape';
    const unpercented = decodePercent(text);
    if (unpercented !== text && this.needleIn(unpercented)) return 'percent';
    return undefined;
  }

  private needleIn(text: string): EncodingRule | undefined {
    for (const n of this.needles) if (text.includes(n.text)) return n.rule;
    return undefined;
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

  /** The final gate over bytes about to be written: raw value and its encodings. */
  findInBytes(buf: Buffer): EncodingRule | undefined {
    for (const n of this.needles) if (buf.indexOf(n.bytes) !== -1) return n.rule;
    return undefined;
  }

  /**
   * Where in a JSON value a secret stands: string values, object keys, the text of numbers,
   * and JSON held in strings (three levels deep). `json` is the value's JSON text: when the
   * secret is not in it at all, the walk is skipped.
   */
  locate(value: unknown, json: string): SecretHit | undefined {
    if (this.values.size === 0 || this.findInText(json) === undefined) return undefined;
    return this.walk(value, '', 0) ?? { path: '', rule: this.findInText(json) as EncodingRule };
  }

  private walk(v: unknown, path: string, level: number): SecretHit | undefined {
    if (typeof v === 'string') return this.inString(v, path, level);
    if (typeof v === 'number' || typeof v === 'bigint') {
      const rule = this.findInText(String(v));
      return rule && { path, rule };
    }
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const hit = this.walk(v[i], indexPath(path, i), level);
        if (hit) return hit;
      }
      return undefined;
    }
    if (v === null || typeof v !== 'object') return undefined;
    for (const [key, item] of Object.entries(v)) {
      const keyRule = this.findInText(key);
      if (keyRule) return { path: `${path}${path ? '.' : ''}<key>`, rule: keyRule };
      const hit = this.walk(item, memberPath(path, safeKey(key)), level);
      if (hit) return hit;
    }
    return undefined;
  }

  private inString(s: string, path: string, level: number): SecretHit | undefined {
    const rule = this.findInText(s);
    if (!rule) return undefined;
    if (level < NESTED_JSON_LEVELS) {
      const nested = parseNestedJson(s);
      if (nested !== undefined) {
        const deeper = this.walk(nested, `${path}<json>`, level + 1);
        if (deeper) return { path: deeper.path, rule: deeper.rule === 'raw' ? 'nested-json' : deeper.rule };
      }
    }
    return { path, rule };
  }

  /** Replaces every form of every secret in `text` (for error messages and log lines). */
  scrub(text: string): string {
    if (this.values.size === 0) return text;
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
