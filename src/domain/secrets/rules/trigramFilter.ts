/**
 * The first pass of the keyword scan (keywords.ts), in WebAssembly: a JavaScript loop over a
 * string's characters costs 4-10 ns a character on the machines this runs on, twice a
 * JSON.parse of the same text; this loop costs about 1 ns a byte.
 *
 * The text is copied into the module's memory as UTF-8 (TextEncoder.encodeInto, native). For
 * every byte position the module forms the case-folded trigram starting there (a byte >= 128,
 * and the NUL written after the text, fold to 0) and looks it up in a bit table of the
 * keywords' first three characters (a two-character keyword sets every trigram of its pair):
 * positions that pass are written out, and JavaScript compares the keywords there. Keywords are
 * printable ASCII, and ASCII characters are their own bytes in UTF-8, so a keyword occurs in the
 * bytes exactly where it occurs in the string.
 *
 * Memory layout: FOLD (256 bytes), BITS (2^21 bits), OUT (MAX_OUT u32 positions), IN (the text).
 * The module is assembled below (../wasm.ts); its one function is
 *
 *   run(from, len) -> count: the positions p in [from, len - 1) whose trigram is in BITS, in
 *                              order, into OUT; stops after MAX_OUT (the caller resumes after the last).
 */
import { assemble, get, k, mem, op, set } from '../wasm.js';

const FOLD = 0;
const BITS = 256;
const OUT = BITS + (1 << 18);
export const MAX_OUT = 4096;
const IN = OUT + MAX_OUT * 4;
/** UTF-8 bytes of text copied in at once (the caller feeds longer texts in overlapping slices). */
export const IN_BYTES = 1 << 20;

// params 0 from, 1 len; locals 2 i, 3 h (the trigram), 4 count
const [FROM, LEN, I, H, COUNT] = [0, 1, 2, 3, 4];
/** FOLD[IN[i + d]] */
const foldedAt = (d: number) => [...get(I), ...mem(op.load8u, IN + d), ...mem(op.load8u, FOLD)];
const body = [
  ...get(FROM), ...set(I),
  ...foldedAt(0), ...k(7), op.shl, ...foldedAt(1), op.or, ...set(H),
  op.block, op.void, op.loop, op.void,
  ...get(I), ...k(1), op.add, ...get(LEN), op.geU, op.brIf, 1,
  ...get(H), ...k(7), op.shl, ...foldedAt(2), op.or, ...k(0x1fffff), op.and, ...set(H),
  ...get(H), ...k(3), op.shrU, ...mem(op.load8u, BITS), ...k(1), ...get(H), ...k(7), op.and, op.shl, op.and,
  op.if, op.void,
  ...get(COUNT), ...k(2), op.shl, ...get(I), ...mem(op.store, OUT, 2),
  ...get(COUNT), ...k(1), op.add, op.tee, COUNT, ...k(MAX_OUT), op.eq, op.if, op.void, ...get(COUNT), op.return, op.end,
  op.end,
  ...get(I), ...k(1), op.add, ...set(I),
  op.br, 0,
  op.end, op.end,
  ...get(COUNT),
];
const MODULE = assemble(2, 3, body, Math.ceil((IN + IN_BYTES + 16) / 65536));

export class TrigramFilter {
  private readonly mem: Uint8Array;
  private readonly out: Uint32Array;
  private readonly input: Uint8Array;
  private readonly run: (from: number, len: number) => number;
  private readonly encoder = new TextEncoder();

  /** `keywords`: printable ASCII, lower case, two characters or more (KeywordScanner checks). */
  constructor(keywords: readonly string[]) {
    const instance = new WebAssembly.Instance(MODULE);
    const memory = instance.exports.mem as WebAssembly.Memory;
    this.mem = new Uint8Array(memory.buffer);
    this.out = new Uint32Array(memory.buffer, OUT, MAX_OUT);
    this.input = this.mem.subarray(IN, IN + IN_BYTES);
    this.run = instance.exports.run as (from: number, len: number) => number;
    for (let b = 0; b < 256; b++) this.mem[FOLD + b] = b >= 128 ? 0 : b >= 65 && b <= 90 ? b | 32 : b;
    const setBit = (h: number) => {
      this.mem[BITS + (h >> 3)] = (this.mem[BITS + (h >> 3)] as number) | (1 << (h & 7));
    };
    for (const kw of keywords) {
      const pair = (kw.charCodeAt(0) << 14) | (kw.charCodeAt(1) << 7);
      if (kw.length === 2) for (let c = 0; c < 128; c++) setBit(pair | c);
      else setBit(pair | kw.charCodeAt(2));
    }
  }

  /**
   * Copies `text` (at most IN_BYTES / 3 characters) in and calls `at(bytes, p)` for each
   * candidate position p, in order, until it returns true. `bytes`: the text's UTF-8, with a NUL after it.
   */
  candidates(text: string, at: (bytes: Uint8Array, p: number) => boolean): void {
    const { written } = this.encoder.encodeInto(text, this.input);
    this.input[written] = 0;
    const bytes = this.input.subarray(0, written + 1);
    let from = 0;
    for (;;) {
      const n = this.run(from, written);
      for (let i = 0; i < n; i++) if (at(bytes, this.out[i] as number)) return;
      if (n < MAX_OUT) return;
      from = (this.out[n - 1] as number) + 1;
    }
  }
}
