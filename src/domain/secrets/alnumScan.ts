/**
 * The alnum fold of MultiScan (scan.ts), in WebAssembly. A JavaScript loop over a text's
 * characters costs 5-10 ns a character on the machines this runs on; this one about 1-2, and
 * it is most of what registered secrets cost an ordinary write.
 *
 * It is the JavaScript loop, instruction for instruction: the same classes (CLASS, and NBSP,
 * thin space and narrow NBSP skipped), the same `\x` rule, the same running polynomial hash with
 * its ring of prefix hashes, the same 16-bit filter; and where the JavaScript looks the window up
 * in a map of needles, this looks it up in a table of the same needles bucketed by filter index
 * (tail hash, length, hash, power), so that it stops only where the hash of a whole needle's
 * window equals the needle's: JavaScript then confirms that match exactly (scan.ts confirm) and
 * resumes it, or takes its rule. The text is copied in as its UTF-16 code units
 * (Buffer.write 'utf16le', native), so positions are the string's own indexes.
 *
 * Memory: CLASS (128 bytes), FILTER (65,536), BUCKETS (65,537 u32: each filter index's first
 * entry), ENTRIES (4 i32 each), RING (i32, a power of two), STATE (ac, ah, skip), TEXT (u16).
 */
import { assemble, get, k, mem, op, set } from './wasm.js';

export interface NativeNeedle {
  /** Hash of the needle's last `m` characters, its length, its hash, B^length (all i32). */
  tail: number;
  length: number;
  hash: number;
  pow: number;
}

const B = 0x01000193;
const ANK = 4;
const ANS = 8;
const CLASS_AT = 0;
const FILTER_AT = 128;
const BUCKETS_AT = FILTER_AT + (1 << 16);
const ENTRIES_AT = BUCKETS_AT + 4 * ((1 << 16) + 1);
const PAGE = 65536;

// params 0 from, 1 n; locals 2 i, 3 ac, 4 ah, 5 skip, 6 c, 7 f, 8 w, 9 e, 10 end
const [FROM, N, I, AC, AH, SKIP, C, F, W, E, END] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

function body(m: number, powM: number, mask: number, ringAt: number, stateAt: number, textAt: number): number[] {
  const ringSlot = (index: number[]) => [...k(ringAt), ...index, ...k(mask), op.and, ...k(2), op.shl, op.add];
  const saveState = [...k(stateAt), ...get(AC), ...mem(op.store, 0, 2), ...k(stateAt), ...get(AH), ...mem(op.store, 4, 2), ...k(stateAt), ...get(SKIP), ...mem(op.store, 8, 2)];
  return [
    ...get(FROM), ...set(I),
    ...k(stateAt), ...mem(op.load, 0, 2), ...set(AC),
    ...k(stateAt), ...mem(op.load, 4, 2), ...set(AH),
    ...k(stateAt), ...mem(op.load, 8, 2), ...set(SKIP),
    op.block, op.void, op.loop, op.void,
    ...get(I), ...get(N), op.geU, op.brIf, 1,
    // c = text[i]; f = its class
    ...get(I), ...k(1), op.shl, ...mem(op.load16u, textAt, 1), ...set(C),
    ...get(C), ...k(128), op.ltU,
    op.if, op.i32, ...get(C), ...mem(op.load8u, CLASS_AT),
    op.else, ...get(C), ...k(0xa0), op.eq, ...get(C), ...k(0x2009), op.eq, op.or, ...get(C), ...k(0x202f), op.eq, op.or, ...k(3), op.shl,
    op.end, ...set(F),
    ...get(F), ...k(ANK), op.and,
    op.if, op.void,
    ...get(SKIP),
    op.if, op.void, ...k(0), ...set(SKIP),
    op.else,
    // ah = ah * B + lower(c); ac++; ring[ac] = ah
    ...get(AH), ...k(B), op.mul, ...get(C), ...get(C), ...k(65), op.sub, ...k(26), op.ltU, ...k(5), op.shl, op.add, op.add, ...set(AH),
    ...get(AC), ...k(1), op.add, ...set(AC),
    ...ringSlot(get(AC)), ...get(AH), ...mem(op.store, 0, 2),
    ...get(AC), ...k(m), op.geU,
    op.if, op.void,
    // w = hash of the last m characters; its filter index in E
    ...get(AH), ...ringSlot([...get(AC), ...k(m), op.sub]), ...mem(op.load, 0, 2), ...k(powM), op.mul, op.sub, ...set(W),
    ...get(W), ...get(W), ...k(16), op.shrU, op.xor, ...k(0xffff), op.and, op.tee, E,
    ...mem(op.load8u, FILTER_AT),
    op.if, op.void,
    ...get(E), ...k(2), op.shl, ...mem(op.load, BUCKETS_AT + 4, 2), ...k(4), op.shl, ...k(ENTRIES_AT), op.add, ...set(END),
    ...get(E), ...k(2), op.shl, ...mem(op.load, BUCKETS_AT, 2), ...k(4), op.shl, ...k(ENTRIES_AT), op.add, ...set(E),
    op.block, op.void, op.loop, op.void,
    ...get(E), ...get(END), op.geU, op.brIf, 1,
    ...get(E), ...mem(op.load, 0, 2), ...get(W), op.eq,
    ...get(E), ...mem(op.load, 4, 2), ...get(AC), op.leU, op.and,
    ...get(AH), ...ringSlot([...get(AC), ...get(E), ...mem(op.load, 4, 2), op.sub]), ...mem(op.load, 0, 2), ...get(E), ...mem(op.load, 12, 2), op.mul, op.sub,
    ...get(E), ...mem(op.load, 8, 2), op.eq, op.and,
    op.if, op.void, ...saveState, ...get(I), op.return, op.end,
    ...get(E), ...k(16), op.add, ...set(E),
    op.br, 0,
    op.end, op.end,
    op.end, // filter
    op.end, // ac >= m
    op.end, // skip
    op.else,
    // `\x`: its x is skipped; a separator is skipped; anything else ends the run
    ...get(C), ...k(92), op.eq, ...get(I), ...k(1), op.add, ...k(1), op.shl, ...mem(op.load16u, textAt, 1), ...k(32), op.or, ...k(120), op.eq, op.and,
    op.if, op.void, ...k(1), ...set(SKIP),
    op.else,
    ...k(0), ...set(SKIP),
    ...get(F), ...k(ANS), op.and, op.eqz, ...get(AC), ...k(0), op.ne, op.and,
    op.if, op.void, ...k(0), ...set(AC), ...k(0), ...set(AH), ...ringSlot(k(0)), ...k(0), ...mem(op.store, 0, 2), op.end,
    op.end,
    op.end,
    ...get(I), ...k(1), op.add, ...set(I),
    op.br, 0,
    op.end, op.end,
    ...saveState,
    ...k(-1),
  ];
}

export class NativeAlnum {
  private readonly memory: WebAssembly.Memory;
  private readonly run: (from: number, n: number) => number;
  private readonly ringAt: number;
  private readonly stateAt: number;
  private readonly textAt: number;
  private readonly ringSize: number;

  /** `classes`: the fold's CLASS table (128 entries). */
  constructor(classes: Uint8Array, m: number, powM: number, ringSize: number, filter: Uint8Array, needles: readonly NativeNeedle[]) {
    this.ringSize = ringSize;
    this.ringAt = ENTRIES_AT + 16 * needles.length;
    this.stateAt = this.ringAt + 4 * ringSize;
    this.textAt = this.stateAt + 16;
    const module = assemble(2, 9, body(m, powM, ringSize - 1, this.ringAt, this.stateAt, this.textAt), Math.ceil((this.textAt + 2 * 4096) / PAGE));
    const instance = new WebAssembly.Instance(module);
    this.memory = instance.exports.mem as WebAssembly.Memory;
    this.run = instance.exports.run as (from: number, n: number) => number;
    const bytes = new Uint8Array(this.memory.buffer);
    bytes.set(classes.subarray(0, 128), CLASS_AT);
    bytes.set(filter, FILTER_AT);
    const byIndex = (t: number) => (t ^ (t >>> 16)) & 0xffff;
    const sorted = [...needles].sort((a, b) => byIndex(a.tail) - byIndex(b.tail));
    const words = new Int32Array(this.memory.buffer);
    let at = 0;
    for (let f = 0; f <= 1 << 16; f++) {
      words[(BUCKETS_AT >> 2) + f] = at;
      while (at < sorted.length && byIndex((sorted[at] as NativeNeedle).tail) === f) at++;
    }
    sorted.forEach((n, i) => words.set([n.tail | 0, n.length, n.hash | 0, n.pow | 0], (ENTRIES_AT >> 2) + 4 * i));
  }

  /**
   * Runs the fold over `text`; at each window whose hash equals a whole needle's, `hit(i, ring,
   * ac, ah)` (the position, the ring of prefix hashes, the count of folded characters and the
   * hash so far, as the JavaScript loop has them there) confirms it: its answer ends the scan,
   * undefined resumes it after `i`.
   */
  find<R>(text: string, hit: (i: number, ring: Int32Array, ac: number, ah: number) => R | undefined): R | undefined {
    const need = this.textAt + 2 * (text.length + 1);
    if (need > this.memory.buffer.byteLength) this.memory.grow(Math.ceil((need - this.memory.buffer.byteLength) / PAGE));
    const buf = Buffer.from(this.memory.buffer);
    buf.write(text, this.textAt, 'utf16le');
    buf.writeUInt16LE(0, this.textAt + 2 * text.length); // what `\x` looks at past the end
    const state = new Int32Array(this.memory.buffer, this.stateAt, 3);
    state.fill(0);
    new Int32Array(this.memory.buffer, this.ringAt, 1)[0] = 0;
    for (let from = 0; from < text.length; ) {
      const i = this.run(from, text.length);
      if (i < 0) return undefined;
      const words = new Int32Array(this.memory.buffer);
      const r = hit(i, words.subarray(this.ringAt >> 2, (this.ringAt >> 2) + this.ringSize), words[this.stateAt >> 2] as number, words[(this.stateAt >> 2) + 1] as number);
      if (r !== undefined) return r;
      from = i + 1;
    }
    return undefined;
  }
}
