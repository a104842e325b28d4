/**
 * Just enough of the WebAssembly binary format (core spec, chapter 5) to assemble the two loops
 * the secret scans run natively (rules/trigramFilter.ts, alnumScan.ts): one function over one
 * memory, i32 only. No toolchain, no generated file: the loops are short, and written out in
 * their TypeScript modules beside the JavaScript they replace.
 */
export const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
};

export const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    const b = n & 0x7f;
    n >>>= 7;
    out.push(n === 0 ? b : b | 0x80);
  } while (n !== 0);
  return out;
};

/** Opcodes used (value type i32 is 0x7f; block type "no result" 0x40). */
export const op = {
  i32: 0x7f, void: 0x40,
  block: 0x02, loop: 0x03, if: 0x04, else: 0x05, end: 0x0b, br: 0x0c, brIf: 0x0d, return: 0x0f,
  get: 0x20, set: 0x21, tee: 0x22,
  load: 0x28, load8u: 0x2d, load16u: 0x2f, store: 0x36,
  eqz: 0x45, eq: 0x46, ne: 0x47, ltU: 0x49, gtU: 0x4b, leU: 0x4d, geU: 0x4f,
  add: 0x6a, sub: 0x6b, mul: 0x6c, and: 0x71, or: 0x72, xor: 0x73, shl: 0x74, shrU: 0x76,
} as const;

/** `i32.const n` */
export const k = (n: number): number[] => [0x41, ...sleb(n | 0)];
export const get = (i: number): number[] => [op.get, i];
export const set = (i: number): number[] => [op.set, i];
/** A memory access at a constant offset (alignment hint `align`, log2 bytes). */
export const mem = (opcode: number, offset: number, align = 0): number[] => [opcode, align, ...uleb(offset)];

const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'ascii')];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

/**
 * A module of one exported function `run` (`params` i32 parameters, one i32 result, `locals`
 * more i32 locals, `body` its code without the final `end`) and one exported memory `mem` of
 * `pages` 64 KiB pages.
 */
export function assemble(params: number, locals: number, body: number[], pages: number): WebAssembly.Module {
  const code = [1, ...uleb(locals), op.i32, ...body, op.end];
  return new WebAssembly.Module(new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, params, ...Array<number>(params).fill(op.i32), 1, op.i32]),
    ...section(3, [1, 0]),
    ...section(5, [1, 0, ...uleb(pages)]),
    ...section(7, [2, ...name('run'), 0, 0, ...name('mem'), 2, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
  ]));
}
