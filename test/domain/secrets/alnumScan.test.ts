/**
 * The alnum fold in WebAssembly (src/domain/secrets/alnumScan.ts) against the JavaScript loop
 * it replaces (MultiScan with native = false): the same answer for every text — planted forms
 * of each secret (hex in either case with every separator, `\x`, base64 wrapped, base32 grouped,
 * digits grouped by NBSP), their near misses, hostile repetitions, random texts of the fold's
 * alphabet and non-ASCII, at lengths either side of where the native fold starts.
 */
import { describe, expect, it } from 'vitest';
import { binaryForms, formsOf } from '../../../src/domain/secrets/encodings.js';
import { MultiScan } from '../../../src/domain/secrets/scan.js';
import { HOSTILE_SECRETS } from './corpus/detectorHostile.js';

const secrets = [...HOSTILE_SECRETS, 'JBSWY3DPEHPK3PXPJBSWY3DP', '4111111111111111', 'deadbeefcafe0123456789ab'];
const forms = secrets.map(formsOf).concat([binaryForms(Buffer.from('0123456789abcdef0123456789abcdef', 'hex'), 16)]);
const needles = { base64: forms.flatMap((f) => f.base64), alnum: forms.flatMap((f) => f.alnum), bytes: [] };
const js = new MultiScan(needles, false);
const native = new MultiScan(needles, true);

let seed = 11;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const pad = (n: number) => 'The linker could not find libssl. '.repeat(Math.ceil(n / 34)).slice(0, n);

describe('the native alnum fold gives the JavaScript fold\'s answer', () => {
  it('planted forms, their near misses and hostile repetitions', () => {
    const token = HOSTILE_SECRETS[0] as string;
    const hex = Buffer.from(token).toString('hex');
    const planted = [
      hex, hex.toUpperCase(), hex.replace(/..(?!$)/g, '$&:'), hex.replace(/..(?!$)/g, '$&-'), hex.replace(/..(?!$)/g, '$& '),
      hex.replace(/../g, '\\x$&'), hex.replace(/..(?!$)/g, '$&\u00a0'), Buffer.from(token).toString('base64').replace(/.{8}/g, '$&\n'),
      'jbsw y3dp ehpk 3pxp jbsw y3dp', '4111\u00a01111\u20091111\u202f1111', 'DEADBEEF-CAFE-0123-4567-89AB',
      '0123456789ABCDEF0123456789ABCDEF', token.slice(0, -1), hex.slice(0, -1), `${hex.slice(0, -1)}`.repeat(40),
    ];
    for (const p of planted) {
      for (const n of [0, 100, 300, 5000]) {
        const text = `${pad(n)}${p}${pad(n >> 1)}`;
        expect(native.find(text), `${p.slice(0, 30)} after ${n}`).toBe(js.find(text));
      }
    }
    expect(native.find(`${pad(400)}${hex}`)).toBeDefined();
  });

  it('random texts of the fold\'s alphabet, separators, backslashes and non-ASCII', () => {
    const alphabet = [...'0123456789abcdefABCDEF:-, _=\'+/\\xX', '\u00a0', '\u2009', 'é', '\n', 'g', 'Z'];
    let found = 0;
    for (let round = 0; round < 400; round++) {
      const n = 200 + rand(3000);
      let t = '';
      for (let i = 0; i < n; i++) t += alphabet[rand(alphabet.length)];
      if (round % 4 === 0) {
        const at = rand(n);
        t = `${t.slice(0, at)}${(secrets[3 + rand(3)] as string).split('').join(alphabet[rand(8) + 22] ?? '')}${t.slice(at)}`;
      }
      const want = js.find(t);
      if (want !== undefined) found++;
      expect(native.find(t), `round ${round}`).toBe(want);
    }
    expect(found).toBeGreaterThan(20);
  });
});
