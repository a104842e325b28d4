/**
 * One linear scan of a text for the needles of three folds at once, each fold applied on the
 * fly (the folded views are never built): the cost is one pass over the text whatever the number
 * of needles.
 *
 *   base64   base64 / base64url characters kept, whitespace skipped (wrapped or spaced base64).
 *   alnum    letters and digits kept, A-Z lower-cased; whitespace, `:` `-` `,` `_` `=` `'`,
 *            NBSP and thin spaces skipped, and `\x` and `0x` before a hex digit (xxd, C
 *            arrays): hex in either case with any of those separators, digits grouped or with
 *            thousands separators, base32 in either case, grouped, padded.
 *   bytes    decimal numbers 0-255 separated by `,` (whitespace around them): the elements of
 *            a JSON byte array or of Node's Buffer JSON, each read as one byte.
 *
 * Each fold keeps a running polynomial hash of its folded characters (a ring of prefix hashes as
 * long as the longest needle), so the hash of any window ending at the current character costs
 * one multiplication. A window of the last `m` characters is looked up in a 16-bit filter, then
 * in a map of the needles ending with those `m` characters; a needle is compared character by
 * character only when the hash of the whole window of its length equals its own hash. So a
 * hostile text that repeats the end of a needle costs no comparison: linear in the text (and
 * an exact comparison per true match, which ends the scan).
 */

export interface Entry<R> {
  /** The needle as the fold writes it. */
  text: string;
  rule: R;
}

export type FoldName = 'base64' | 'alnum' | 'bytes';

const B = 0x01000193;

const B64K = 1;
const B64S = 2;
const ANK = 4;
const ANS = 8;
const DIG = 16;
const WS = 32;

const CLASS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') CLASS[c.charCodeAt(0)]! |= B64K | ANK;
for (const c of '+/-_') CLASS[c.charCodeAt(0)]! |= B64K;
for (const c of ' \t\n\v\f\r') CLASS[c.charCodeAt(0)]! |= B64S | ANS | WS;
for (const c of ':-,_=\'') CLASS[c.charCodeAt(0)]! |= ANS;
for (const c of '0123456789') CLASS[c.charCodeAt(0)]! |= DIG;

/** NBSP, thin space, narrow NBSP: thousands separators; skipped by the alnum fold. */
const nonAscii = (c: number): number => (c === 0xa0 || c === 0x2009 || c === 0x202f ? ANS : 0);
const isHexDigit = (c: number): boolean => (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102);
const isAlnum = (c: number): boolean => c < 128 && (CLASS[c]! & ANK) !== 0;
/** `0x` / `0X` before a hex digit, not inside a run of letters and digits: a C / xxd byte prefix. */
const hexPrefixAt = (text: string, i: number): boolean =>
  text.charCodeAt(i) === 48 && (text.charCodeAt(i + 1) | 32) === 120 && isHexDigit(text.charCodeAt(i + 2)) && !(i > 0 && isAlnum(text.charCodeAt(i - 1)));

function hashOf(s: string, from = 0): number {
  let h = 0;
  for (let i = from; i < s.length; i++) h = (Math.imul(h, B) + s.charCodeAt(i)) | 0;
  return h;
}

/** The needles of one fold, keyed by the hash of their last `m` characters. */
class FoldTable<R> {
  readonly m: number;
  readonly powM: number;
  readonly filter = new Uint8Array(1 << 16);
  readonly byTail = new Map<number, Array<Entry<R> & { length: number; hash: number; pow: number }>>();
  readonly size: number;
  /** Ring of prefix hashes and of where each folded character starts in the text (length: a power of two above the longest needle). */
  readonly hashes: Int32Array;
  readonly origins: Int32Array;
  readonly mask: number;

  constructor(needles: ReadonlyArray<Entry<R>>) {
    const list = needles.filter((n) => n.text.length > 0);
    this.size = list.length;
    this.m = Math.max(1, Math.min(32, ...list.map((n) => n.text.length)));
    this.powM = powOf(this.m);
    const longest = Math.max(1, ...list.map((n) => n.text.length));
    let ring = 64;
    while (ring <= longest) ring *= 2;
    this.hashes = new Int32Array(ring);
    this.origins = new Int32Array(ring);
    this.mask = ring - 1;
    for (const n of list) {
      const tail = hashOf(n.text, n.text.length - this.m);
      this.filter[(tail ^ (tail >>> 16)) & 0xffff] = 1;
      const e = { ...n, length: n.text.length, hash: hashOf(n.text), pow: powOf(n.text.length) };
      const at = this.byTail.get(tail);
      if (at) at.push(e);
      else this.byTail.set(tail, [e]);
    }
  }
}

function powOf(n: number): number {
  let p = 1;
  for (let i = 0; i < n; i++) p = Math.imul(p, B);
  return p;
}

export class MultiScan<R> {
  private readonly b64: FoldTable<R>;
  private readonly an: FoldTable<R>;
  private readonly by: FoldTable<R>;

  constructor(needles: Record<FoldName, ReadonlyArray<Entry<R>>>) {
    this.b64 = new FoldTable(needles.base64);
    this.an = new FoldTable(needles.alnum);
    this.by = new FoldTable(needles.bytes);
  }

  get size(): number {
    return this.b64.size + this.an.size + this.by.size;
  }

  /** The rule of the first needle found in any fold of `text`, or undefined. */
  find(text: string): R | undefined {
    const { b64, an, by } = this;
    const useB64 = b64.size > 0;
    const useAn = an.size > 0;
    const useBy = by.size > 0;
    let bc = 0;
    let bh = 0;
    let ac = 0;
    let ah = 0;
    let anSkip = false;
    let yc = 0;
    let yh = 0;
    /** The byte array's number being read: its value (-1: none), digits, start; `ended`: whitespace after it. */
    let num = -1;
    let digits = 0;
    let numAt = 0;
    let ended = false;
    const bH = b64.hashes;
    const bO = b64.origins;
    const bMask = b64.mask;
    const aH = an.hashes;
    const aO = an.origins;
    const aMask = an.mask;
    bH[0] = 0;
    aH[0] = 0;
    by.hashes[0] = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      const f = c < 128 ? (CLASS[c] as number) : nonAscii(c);
      if (useB64) {
        if ((f & B64K) !== 0) {
          bh = (Math.imul(bh, B) + c) | 0;
          bc++;
          bH[bc & bMask] = bh;
          bO[bc & bMask] = i;
          if (bc >= b64.m) {
            const w = (bh - Math.imul(bH[(bc - b64.m) & bMask] as number, b64.powM)) | 0;
            if (b64.filter[(w ^ (w >>> 16)) & 0xffff] === 1) {
              const r = this.hit(b64, w, bh, bc, text, 'base64');
              if (r !== undefined) return r;
            }
          }
        } else if ((f & B64S) === 0 && bc > 0) {
          bc = 0;
          bh = 0;
          bH[0] = 0;
        }
      }
      if (useAn) {
        if (anSkip) anSkip = false;
        else if ((f & ANK) !== 0 && !(c === 48 && hexPrefixAt(text, i))) {
          ah = (Math.imul(ah, B) + (c >= 65 && c <= 90 ? c + 32 : c)) | 0;
          ac++;
          aH[ac & aMask] = ah;
          aO[ac & aMask] = i;
          if (ac >= an.m) {
            const w = (ah - Math.imul(aH[(ac - an.m) & aMask] as number, an.powM)) | 0;
            if (an.filter[(w ^ (w >>> 16)) & 0xffff] === 1) {
              const r = this.hit(an, w, ah, ac, text, 'alnum');
              if (r !== undefined) return r;
            }
          }
        } else if ((f & ANK) !== 0 || (c === 92 && (text.charCodeAt(i + 1) | 32) === 120)) {
          anSkip = true; // `0x` before a hex digit, `\x`: both characters skipped
        } else if ((f & ANS) === 0 && ac > 0) {
          ac = 0;
          ah = 0;
          aH[0] = 0;
        }
      }
      if (useBy) {
        if ((f & DIG) !== 0) {
          if (num < 0) {
            num = c - 48;
            digits = 1;
            numAt = i;
            ended = false;
          } else if (ended || ++digits > 3) num = 256; // not a byte: the run ends at the next separator
          else num = num * 10 + c - 48;
        } else if (c === 44 || (f & WS) === 0) {
          // `,` ends an element; anything else but whitespace ends the array (`]`, `}`) or breaks it.
          if (num >= 0 && num <= 255) {
            yh = (Math.imul(yh, B) + num) | 0;
            yc++;
            by.hashes[yc & by.mask] = yh;
            by.origins[yc & by.mask] = numAt;
            if (yc >= by.m) {
              const w = (yh - Math.imul(by.hashes[(yc - by.m) & by.mask] as number, by.powM)) | 0;
              if (by.filter[(w ^ (w >>> 16)) & 0xffff] === 1) {
                const r = this.hit(by, w, yh, yc, text, 'bytes');
                if (r !== undefined) return r;
              }
            }
          } else if (num > 255 && yc > 0) {
            yc = 0;
            yh = 0;
            by.hashes[0] = 0;
          }
          num = -1;
          if (c !== 44 && yc > 0) {
            yc = 0;
            yh = 0;
            by.hashes[0] = 0;
          }
        } else if (num >= 0) ended = true;
      }
    }
    return undefined;
  }

  /** A window whose last `m` characters end some needle: the needles whose whole window hashes equal, compared exactly. */
  private hit(t: FoldTable<R>, tail: number, h: number, count: number, text: string, fold: FoldName): R | undefined {
    const list = t.byTail.get(tail);
    if (!list) return undefined;
    for (const e of list) {
      if (e.length > count) continue;
      const whole = (h - Math.imul(t.hashes[(count - e.length) & t.mask] as number, e.pow)) | 0;
      if (whole !== e.hash) continue;
      const start = t.origins[(count - e.length + 1) & t.mask] as number;
      if (matchesAt(text, start, e.text, fold)) return e.rule;
    }
    return undefined;
  }
}

/** Whether the `fold` view of `text` from `start` begins with `needle` (the exact check after a hash match). */
function matchesAt(text: string, start: number, needle: string, fold: FoldName): boolean {
  let j = 0;
  if (fold === 'bytes') {
    let i = start;
    while (j < needle.length) {
      while (i < text.length && (CLASS[text.charCodeAt(i)]! & WS) !== 0) i++;
      let v = 0;
      let d = 0;
      while (i < text.length && (CLASS[text.charCodeAt(i)]! & DIG) !== 0 && d <= 3) v = v * 10 + text.charCodeAt(i++) - 48, d++;
      if (d === 0 || d > 3 || v !== needle.charCodeAt(j)) return false;
      j++;
      while (i < text.length && (CLASS[text.charCodeAt(i)]! & WS) !== 0) i++;
      if (j < needle.length && text.charCodeAt(i++) !== 44) return false;
    }
    return true;
  }
  for (let i = start; i < text.length && j < needle.length; i++) {
    let c = text.charCodeAt(i);
    const f = c < 128 ? (CLASS[c] as number) : nonAscii(c);
    if (fold === 'base64') {
      if ((f & B64K) === 0) {
        if ((f & B64S) !== 0) continue;
        return false;
      }
    } else {
      if ((f & ANK) === 0 || (c === 48 && hexPrefixAt(text, i))) {
        if ((f & ANK) !== 0 || (c === 92 && (text.charCodeAt(i + 1) | 32) === 120)) {
          i++;
          continue;
        }
        if ((f & ANS) !== 0) continue;
        return false;
      }
      if (c >= 65 && c <= 90) c += 32;
    }
    if (c !== needle.charCodeAt(j)) return false;
    j++;
  }
  return j === needle.length;
}
