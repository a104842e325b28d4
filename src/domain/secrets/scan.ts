/**
 * One linear scan of a text for many needles at once (Rabin-Karp over the needles' first `m`
 * characters), through a normalisation applied on the fly, so the normalised view is never
 * built: the cost is one pass over the text whatever the number of needles, and a check of the
 * full needle only where a window's hash is one of theirs (a 16-bit filter first, then the map).
 */

/** How a scan folds the text: whitespace skipped (base64 wrapped by lines or spaced), or for hex also `:` and `\x` skipped and A-Z lower-cased. */
export type Fold = 'base64' | 'hex';

const B = 0x01000193;

const BREAK = 0;
const KEEP = 1;
const SKIP = 2;
function charClass(keep: string, skip: string): Uint8Array {
  const t = new Uint8Array(128);
  for (const c of keep) t[c.charCodeAt(0)] = KEEP;
  for (const c of skip) t[c.charCodeAt(0)] = SKIP;
  return t;
}
const WS = ' \t\n\v\f\r';
const BASE64_CLASS = charClass('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_', WS);
/** Hex digits kept (A-F lower-cased in the scan), whitespace and `:` skipped, `\x` skipped in the scan. */
const HEX_CLASS = charClass('0123456789ABCDEFabcdef', `${WS}:`);

export interface Entry<R> {
  text: string;
  rule: R;
}

export class NeedleTable<R> {
  private readonly m: number;
  /** B^m: the weight of the character leaving the window. */
  private readonly powM: number;
  private readonly filter = new Uint8Array(1 << 16);
  private readonly byHash = new Map<number, Array<Entry<R>>>();
  readonly size: number;
  /** Per ASCII code: BREAK (no needle spans it), SKIP (folded away) or KEEP. */
  private readonly alphabet: Uint8Array;

  constructor(needles: ReadonlyArray<Entry<R>>, private readonly fold: Fold) {
    this.size = needles.length;
    this.m = Math.max(1, Math.min(32, ...needles.map((n) => n.text.length)));
    let p = 1;
    for (let i = 0; i < this.m; i++) p = Math.imul(p, B);
    this.powM = p;
    this.alphabet = fold === 'hex' ? HEX_CLASS : BASE64_CLASS;
    for (const n of needles) {
      let h = 0;
      for (let i = 0; i < this.m; i++) h = (Math.imul(h, B) + n.text.charCodeAt(i)) | 0;
      this.filter[(h ^ (h >>> 16)) & 0xffff] = 1;
      const list = this.byHash.get(h);
      if (list) list.push(n);
      else this.byHash.set(h, [n]);
    }
  }

  /** The rule of the first needle found in the folded view of `text`, or undefined. */
  find(text: string): R | undefined {
    if (this.size === 0) return undefined;
    const { m, powM, filter } = this;
    const hex = this.fold === 'hex';
    // Rings of the last 32 (>= m) characters of the folded view and where each starts in `text`.
    const chars = new Int32Array(32);
    const origin = new Int32Array(32);
    let count = 0;
    let h = 0;
    const n = text.length;
    const alphabet = this.alphabet;
    for (let i = 0; i < n; i++) {
      let c = text.charCodeAt(i);
      const cls = c < 128 ? (alphabet[c] as number) : BREAK;
      if (cls !== KEEP) {
        if (cls === SKIP) continue;
        if (hex && c === 92 && (text.charCodeAt(i + 1) | 32) === 120) { // '\x' or '\X'
          i++;
          continue;
        }
        count = 0; // no needle spans this character: start over after it
        h = 0;
        continue;
      }
      const at = i;
      if (hex && c >= 65 && c <= 90) c += 32;
      // The hash of the last m kept characters (Rabin-Karp: the one leaving the window taken out).
      h = count >= m ? (Math.imul(h, B) + c - Math.imul(chars[(count - m) & 31] as number, powM)) | 0 : (Math.imul(h, B) + c) | 0;
      chars[count & 31] = c;
      origin[count & 31] = at;
      count++;
      if (count >= m && filter[(h ^ (h >>> 16)) & 0xffff] === 1) {
        const list = this.byHash.get(h);
        if (list) {
          const start = origin[(count - m) & 31] as number;
          for (const e of list) if (this.matchAt(text, start, e.text)) return e.rule;
        }
      }
    }
    return undefined;
  }

  /** Whether the folded view of `text` from `start` begins with `needle`. */
  private matchAt(text: string, start: number, needle: string): boolean {
    const hex = this.fold === 'hex';
    let j = 0;
    for (let i = start; i < text.length && j < needle.length; i++) {
      let c = text.charCodeAt(i);
      if (c <= 32 && (c === 32 || (c >= 9 && c <= 13))) continue;
      if (hex) {
        if (c === 58) continue;
        if (c === 92 && (text.charCodeAt(i + 1) | 32) === 120) {
          i++;
          continue;
        }
        if (c >= 65 && c <= 90) c += 32;
      }
      if (c !== needle.charCodeAt(j)) return false;
      j++;
    }
    return j === needle.length;
  }
}
