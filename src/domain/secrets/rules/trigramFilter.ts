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
 * The module is assembled below, byte by byte; its one function is
 *
 *   scan(from, len) -> count: the positions p in [from, len - 1) whose trigram is in BITS, in
 *                              order, into OUT; stops after MAX_OUT (the caller resumes after the last).
 */
const FOLD = 0;
const BITS = 256;
const OUT = BITS + (1 << 18);
export const MAX_OUT = 4096;
const IN = OUT + MAX_OUT * 4;
/** UTF-8 bytes of text copied in at once (the caller feeds longer texts in overlapping slices). */
export const IN_BYTES = 1 << 20;

const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
};
const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    const b = n & 0x7f;
    n >>>= 7;
    out.push(n === 0 ? b : b | 0x80);
  } while (n !== 0);
  return out;
};
const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'ascii')];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

// Opcodes (WebAssembly core spec, binary format).
const I32 = 0x7f;
const [BLOCK, LOOP, IF, END, BR, BR_IF, RETURN] = [0x02, 0x03, 0x04, 0x0b, 0x0c, 0x0d, 0x0f];
const [LOCAL_GET, LOCAL_SET, LOCAL_TEE] = [0x20, 0x21, 0x22];
const [LOAD8_U, STORE] = [0x2d, 0x36];
const [EQ, GE_U, ADD, AND, OR, SHL, SHR_U] = [0x46, 0x4f, 0x6a, 0x71, 0x72, 0x74, 0x76];
const VOID = 0x40;
const k = (n: number) => [0x41, ...sleb(n)];
const get = (i: number) => [LOCAL_GET, i];
const set = (i: number) => [LOCAL_SET, i];
/** FOLD[IN[i + d]] */
const foldedAt = (i: number, d: number) => [...get(i), LOAD8_U, 0, ...uleb(IN + d), LOAD8_U, 0, ...uleb(FOLD)];

// params 0 from, 1 len; locals 2 i, 3 h (the trigram), 4 count
const [FROM, LEN, I, H, COUNT] = [0, 1, 2, 3, 4];
const body = [
  1, 3, I32,
  ...get(FROM), ...set(I),
  ...foldedAt(I, 0), ...k(7), SHL, ...foldedAt(I, 1), OR, ...set(H),
  BLOCK, VOID, LOOP, VOID,
  ...get(I), ...k(1), ADD, ...get(LEN), GE_U, BR_IF, 1,
  ...get(H), ...k(7), SHL, ...foldedAt(I, 2), OR, ...k(0x1fffff), AND, ...set(H),
  ...get(H), ...k(3), SHR_U, LOAD8_U, 0, ...uleb(BITS), ...k(1), ...get(H), ...k(7), AND, SHL, AND,
  IF, VOID,
  ...get(COUNT), ...k(2), SHL, ...get(I), STORE, 2, ...uleb(OUT),
  ...get(COUNT), ...k(1), ADD, LOCAL_TEE, COUNT, ...k(MAX_OUT), EQ, IF, VOID, ...get(COUNT), RETURN, END,
  END,
  ...get(I), ...k(1), ADD, ...set(I),
  BR, 0,
  END, END,
  ...get(COUNT),
  END,
];
const PAGES = Math.ceil((IN + IN_BYTES + 16) / 65536);
const MODULE = new WebAssembly.Module(new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [1, 0x60, 2, I32, I32, 1, I32]),
  ...section(3, [1, 0]),
  ...section(5, [1, 0, ...uleb(PAGES)]),
  ...section(7, [2, ...name('scan'), 0, 0, ...name('mem'), 2, 0]),
  ...section(10, [1, ...uleb(body.length), ...body]),
]));

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
    this.run = instance.exports.scan as (from: number, len: number) => number;
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
