/**
 * One linear scan of a text for the needles of two folds at once, each fold applied on the fly
 * (the folded views are never built): the cost is one pass over the text whatever the number of
 * needles.
 *
 *   alnum    letters and digits kept, A-Z lower-cased; whitespace, `:` `-` `,` `_` `=` `'` `+`
 *            `/`, NBSP and thin spaces skipped, and `\x`: hex in either case with any of those
 *            separators, digits grouped or with thousands separators, base32 in either case,
 *            grouped, padded. It is also the filter of base64: base64 (case kept, whitespace
 *            skipped) of a needle always stands in the alnum fold as the needle lower-cased
 *            without `+` `/` `-` `_`, so a base64 needle is looked up that way and checked in
 *            its own fold only where it is found.
 *   bytes    numbers 0-255, decimal or `0x`-hex, separated by `,` or whitespace: the elements of
 *            a JSON byte array, Node's Buffer JSON, xxd -i / C arrays, each read as one byte.
 *
 * Each fold keeps a running polynomial hash of its folded characters (a ring of prefix hashes as
 * long as the longest needle), so the hash of any window ending at the current character costs
 * one multiplication. A window of the last `m` characters is looked up in a 16-bit filter, then
 * in a map of the needles ending with those `m` characters; a needle is compared character by
 * character only when the hash of the whole window of its length equals its own hash. So a
 * hostile text that repeats the end of a needle costs no comparison: linear in the text (and
 * one exact comparison per true match, which ends the scan).
 */

import { NativeAlnum } from './alnumScan.js';

/** Texts this long or longer run the alnum fold natively (a shorter one costs less in JavaScript than its copy). */
const NATIVE_FROM = 256;

export interface Entry<R> {
  /** The needle as its fold writes it (base64: as written, case and all). */
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
const HEXD = 64;

const CLASS = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789') CLASS[c.charCodeAt(0)]! |= B64K | ANK;
for (const c of '+/-_') CLASS[c.charCodeAt(0)]! |= B64K | ANS;
for (const c of ' \t\n\v\f\r') CLASS[c.charCodeAt(0)]! |= B64S | ANS | WS;
for (const c of ':,=\'') CLASS[c.charCodeAt(0)]! |= ANS;
for (const c of '0123456789') CLASS[c.charCodeAt(0)]! |= DIG;
for (const c of '0123456789abcdefABCDEF') CLASS[c.charCodeAt(0)]! |= HEXD;

/** NBSP, thin space, narrow NBSP: thousands separators; skipped by the alnum fold. */
const nonAscii = (c: number): number => (c === 0xa0 || c === 0x2009 || c === 0x202f ? ANS : 0);
const classOf = (c: number): number => (c < 128 ? (CLASS[c] as number) : nonAscii(c));
const hexValue = (c: number): number => (c <= 57 ? c - 48 : (c | 32) - 87);

/** A base64 needle as the alnum fold writes it. */
export const alnumKey = (b64: string): string => b64.toLowerCase().replace(/[+/_-]/g, '');

function hashOf(s: string, from = 0): number {
  let h = 0;
  for (let i = from; i < s.length; i++) h = (Math.imul(h, B) + s.charCodeAt(i)) | 0;
  return h;
}

function powOf(n: number): number {
  let p = 1;
  for (let i = 0; i < n; i++) p = Math.imul(p, B);
  return p;
}

interface Keyed<R> {
  key: string;
  length: number;
  hash: number;
  pow: number;
  /** How the match is confirmed: base64 needles in their own fold, from where the key starts. */
  fold: FoldName;
  text: string;
  rule: R;
}

/** The needles of one fold, keyed by the hash of their last `m` characters. */
class FoldTable<R> {
  readonly m: number;
  readonly powM: number;
  readonly filter = new Uint8Array(1 << 16);
  readonly byTail = new Map<number, Array<Keyed<R>>>();
  readonly size: number;
  /** Ring of prefix hashes (a power of two above the longest needle). */
  readonly hashes: Int32Array;
  readonly mask: number;

  constructor(needles: ReadonlyArray<{ key: string; fold: FoldName; text: string; rule: R }>) {
    const seen = new Set<string>();
    const list = needles.filter((n) => n.key.length > 0 && !seen.has(`${n.fold}\0${n.text}`) && seen.add(`${n.fold}\0${n.text}`));
    this.size = list.length;
    this.m = Math.max(1, Math.min(32, ...list.map((n) => n.key.length)));
    this.powM = powOf(this.m);
    const longest = Math.max(1, ...list.map((n) => n.key.length));
    let ring = 64;
    while (ring <= longest) ring *= 2;
    this.hashes = new Int32Array(ring);
    this.mask = ring - 1;
    for (const n of list) {
      const tail = hashOf(n.key, n.key.length - this.m);
      this.filter[(tail ^ (tail >>> 16)) & 0xffff] = 1;
      const e: Keyed<R> = { ...n, length: n.key.length, hash: hashOf(n.key), pow: powOf(n.key.length) };
      const at = this.byTail.get(tail);
      if (at) at.push(e);
      else this.byTail.set(tail, [e]);
    }
  }

  /** A window ending here whose last `m` characters end some needle: its needles whose whole window hashes equal. */
  candidates(tail: number, h: number, count: number, hashes: Int32Array = this.hashes): Array<Keyed<R>> | undefined {
    const list = this.byTail.get(tail);
    if (!list) return undefined;
    const out = list.filter((e) => e.length <= count && ((h - Math.imul(hashes[(count - e.length) & this.mask] as number, e.pow)) | 0) === e.hash);
    return out.length > 0 ? out : undefined;
  }
}

export class MultiScan<R> {
  private readonly an: FoldTable<R>;
  private readonly by: FoldTable<R>;

  /** `native`: false keeps the alnum fold in JavaScript (the reference the native one is tested against). */
  constructor(needles: Record<FoldName, ReadonlyArray<Entry<R>>>, native = true) {
    this.an = new FoldTable([
      ...needles.alnum.map((n) => ({ key: n.text, fold: 'alnum' as const, text: n.text, rule: n.rule })),
      ...needles.base64.map((n) => ({ key: alnumKey(n.text), fold: 'base64' as const, text: n.text, rule: n.rule })),
    ]);
    this.by = new FoldTable(needles.bytes.map((n) => ({ key: n.text, fold: 'bytes' as const, text: n.text, rule: n.rule })));
    const an = this.an;
    this.native = an.size === 0 || !native ? undefined : new NativeAlnum(CLASS, an.m, an.powM, an.hashes.length, an.filter, [...an.byTail].flatMap(([tail, list]) => list.map((e) => ({ tail, length: e.length, hash: e.hash, pow: e.pow }))));
    const element = '(?:0[xX][0-9a-fA-F]{1,2}|[0-9]{1,3})';
    this.arrays = new RegExp(`(?:${element}[\\s,]+){${this.by.m - 1}}${element}`);
  }

  /** `m` array elements in a row (a superset of what the byte-array fold reads as `m` bytes). */
  private readonly arrays: RegExp;
  /** The alnum fold in WebAssembly (alnumScan.ts), for texts long enough to be worth copying in. */
  private readonly native: NativeAlnum | undefined;

  get size(): number {
    return this.an.size + this.by.size;
  }

  /** The rule of the first needle found in any fold of `text`, or undefined. */
  find(text: string): R | undefined {
    const { an, by } = this;
    const useAn = an.size > 0;
    // The byte-array fold runs only where `m` elements stand in a row (a native test: most text has none).
    const useBy = by.size > 0 && this.arrays.test(text);
    if (useAn && !useBy && this.native && text.length >= NATIVE_FROM) {
      return this.native.find(text, (i, ring, ac, ah) => {
        const w = (ah - Math.imul(ring[(ac - an.m) & an.mask] as number, an.powM)) | 0;
        const list = an.candidates(w, ah, ac, ring);
        return list && confirm(list, text, i, 'alnum');
      });
    }
    let ac = 0;
    let ah = 0;
    let anSkip = false;
    let yc = 0;
    let yh = 0;
    /** The byte array's element being read: its value (-1: none, 256: not a byte), its digits, its start, hex (`0x`). */
    let num = -1;
    let digits = 0;
    let numAt = 0;
    let hex = false;
    let skipX = false;
    const aH = an.hashes;
    const aMask = an.mask;
    const aM = an.m;
    const aPow = an.powM;
    const aFilter = an.filter;
    aH[0] = 0;
    by.hashes[0] = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      const f = c < 128 ? (CLASS[c] as number) : nonAscii(c);
      if (useAn) {
        if ((f & ANK) !== 0) {
          if (anSkip) anSkip = false; // the `x` of `\x`
          else {
            ah = (Math.imul(ah, B) + (c >= 65 && c <= 90 ? c + 32 : c)) | 0;
            ac++;
            aH[ac & aMask] = ah;
            if (ac >= aM) {
              const w = (ah - Math.imul(aH[(ac - aM) & aMask] as number, aPow)) | 0;
              if (aFilter[(w ^ (w >>> 16)) & 0xffff] === 1) {
                const list = an.candidates(w, ah, ac);
                const r = list && confirm(list, text, i, 'alnum');
                if (r !== undefined) return r;
              }
            }
          }
        } else if (c === 92 && (text.charCodeAt(i + 1) | 32) === 120) anSkip = true; // `\x`: skipped
        else if ((f & ANS) === 0 && ac > 0) {
          ac = 0;
          ah = 0;
          aH[0] = 0;
          anSkip = false;
        } else anSkip = false;
      }
      if (useBy) {
        if (skipX) skipX = false; // the `x` of `0x`
        else if (num >= 0 && (f & HEXD) !== 0) {
          if (num < 256) {
            const d = hex ? hexValue(c) : (f & DIG) !== 0 ? c - 48 : -1;
            if (d < 0 || ++digits > (hex ? 2 : 3)) num = 256;
            else num = num * (hex ? 16 : 10) + d;
          }
        } else if (num < 0 && (f & DIG) !== 0) {
          numAt = i;
          hex = c === 48 && (text.charCodeAt(i + 1) | 32) === 120 && (classOf(text.charCodeAt(i + 2)) & HEXD) !== 0;
          num = hex ? 0 : c - 48;
          digits = hex ? 0 : 1;
          skipX = hex;
        } else if (num >= 0 || yc > 0) {
          // A separator (`,` or whitespace) ends an element; anything else ends the array (`]`, `}`) or breaks it.
          if (num >= 0 && num <= 255 && digits > 0) {
            yh = (Math.imul(yh, B) + num) | 0;
            yc++;
            by.hashes[yc & by.mask] = yh;
            if (yc >= by.m) {
              const w = (yh - Math.imul(by.hashes[(yc - by.m) & by.mask] as number, by.powM)) | 0;
              if (by.filter[(w ^ (w >>> 16)) & 0xffff] === 1) {
                const list = by.candidates(w, yh, yc);
                const r = list && confirm(list, text, numAt, 'bytes');
                if (r !== undefined) return r;
              }
            }
          } else if (num >= 0 && yc > 0) {
            yc = 0;
            yh = 0;
            by.hashes[0] = 0;
          }
          num = -1;
          if (c !== 44 && (f & WS) === 0 && yc > 0) {
            yc = 0;
            yh = 0;
            by.hashes[0] = 0;
          }
        }
      }
    }
    if (useBy && num >= 0 && num <= 255 && digits > 0) {
      // The text ends with an element: it counts as one.
      yh = (Math.imul(yh, B) + num) | 0;
      yc++;
      by.hashes[yc & by.mask] = yh;
      if (yc >= by.m) {
        const w = (yh - Math.imul(by.hashes[(yc - by.m) & by.mask] as number, by.powM)) | 0;
        const list = by.filter[(w ^ (w >>> 16)) & 0xffff] === 1 ? by.candidates(w, yh, yc) : undefined;
        if (list) return confirm(list, text, numAt, 'bytes');
      }
    }
    return undefined;
  }
}

/**
 * The needles whose window hash matched, confirmed exactly: the window's start is found by
 * walking back from `end` (the last folded character) over as many folded characters as the
 * needle has; then the needle's own fold is compared forward from there.
 */
function confirm<R>(list: ReadonlyArray<Keyed<R>>, text: string, end: number, fold: 'alnum' | 'bytes'): R | undefined {
  for (const e of list) {
    const start = fold === 'alnum' ? alnumStart(text, end, e.length) : bytesStart(text, end, e.length);
    if (start >= 0 && matchesAt(text, start, e.fold === 'base64' ? e.text : e.key, e.fold)) return e.rule;
  }
  return undefined;
}

/** Where the `count`-th alnum character back from `end` (inclusive) stands. */
function alnumStart(text: string, end: number, count: number): number {
  let k = 0;
  for (let i = end; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if ((classOf(c) & ANK) !== 0 && !(i > 0 && text.charCodeAt(i - 1) === 92 && (c | 32) === 120)) {
      if (++k === count) return i;
    }
  }
  return -1;
}

/** Where the `count`-th array element back from the one starting at `at` starts. */
function bytesStart(text: string, at: number, count: number): number {
  let k = 1;
  let i = at;
  while (k < count) {
    i--;
    while (i >= 0 && (classOf(text.charCodeAt(i)) & WS) !== 0) i--;
    if (text.charCodeAt(i) === 44) i--;
    while (i >= 0 && (classOf(text.charCodeAt(i)) & WS) !== 0) i--;
    if (i < 0 || (classOf(text.charCodeAt(i)) & HEXD) === 0) return -1;
    while (i > 0 && ((classOf(text.charCodeAt(i - 1)) & HEXD) !== 0 || (text.charCodeAt(i - 1) | 32) === 120)) i--;
    k++;
  }
  return i;
}

/** Whether the `fold` view of `text` from `start` begins with `needle` (the exact check after a hash match). */
function matchesAt(text: string, start: number, needle: string, fold: FoldName): boolean {
  let j = 0;
  if (fold === 'bytes') {
    let i = start;
    while (j < needle.length) {
      while (i < text.length && (classOf(text.charCodeAt(i)) & WS) !== 0) i++;
      const hex = text.charCodeAt(i) === 48 && (text.charCodeAt(i + 1) | 32) === 120;
      if (hex) i += 2;
      let v = 0;
      let d = 0;
      for (; i < text.length && d <= 3; i++, d++) {
        const c = text.charCodeAt(i);
        if (hex ? (classOf(c) & HEXD) === 0 : (classOf(c) & DIG) === 0) break;
        v = v * (hex ? 16 : 10) + hexValue(c);
      }
      if (d === 0 || d > (hex ? 2 : 3) || v !== needle.charCodeAt(j)) return false;
      j++;
      if (j === needle.length) return true;
      const sep = text.charCodeAt(i);
      if (sep !== 44 && (classOf(sep) & WS) === 0) return false;
      i++;
      while (i < text.length && (classOf(text.charCodeAt(i)) & WS) !== 0) i++;
      if (text.charCodeAt(i) === 44 && sep !== 44) i++;
    }
    return true;
  }
  for (let i = start; i < text.length && j < needle.length; i++) {
    let c = text.charCodeAt(i);
    const f = classOf(c);
    if (fold === 'base64') {
      if ((f & B64K) === 0) {
        if ((f & B64S) !== 0) continue;
        return false;
      }
    } else {
      if ((f & ANK) === 0) {
        if (c === 92 && (text.charCodeAt(i + 1) | 32) === 120) {
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
