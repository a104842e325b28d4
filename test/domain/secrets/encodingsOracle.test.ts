import { describe, expect, it } from 'vitest';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import { base64Of, type Encoded, encodingsOf, hexOf, htmlOf, jsonContent, percentOf, utf16 } from './oracleEncoders.js';
import { prng } from './secretsHelpers.js';

/**
 * The registered-secret detector (SecretSet.findInText, and findInBytes: the final gate over
 * the bytes about to be written) against an oracle of the test's own: every encoding computed
 * by hand in oracleEncoders.ts, at every position in surrounding text and bytes, in JSON values,
 * keys and nested JSON strings. Negative cases: near-misses and random data.
 */

const SECRETS: Array<[string, string]> = [
  ['ascii', 'Zq9kL2vX8mN4pR7t'],
  ['quote and backslash', 'Qu"ot\\e+/=Wk9!x'],
  ['spaces', 'correct horse battery staple'],
  ['numeric, 15 digits', '564629869386547'],
  ['non-ASCII', 'vault-\u{1F511}-k3y-\u00e9-Z9'],
];

function setOf(...values: string[]): SecretSet {
  const set = new SecretSet();
  for (const v of values) set.add(v);
  return set;
}

/** Whether both the text and the byte detector find the encoded form in `context(form)`. */
function foundEverywhere(set: SecretSet, enc: Encoded, context: (t: string) => string): string[] {
  const misses: string[] = [];
  if (enc.bytes) {
    for (let pad = 0; pad < 3; pad++) {
      const buf = Buffer.concat([Buffer.from('xyz'.slice(0, pad)), enc.bytes, Buffer.from('\n')]);
      if (set.findInBytes(buf) === undefined) misses.push(`${enc.name}: bytes after ${pad}`);
    }
    return misses;
  }
  const text = context(enc.text!);
  if (set.findInText(text) === undefined) misses.push(`${enc.name}: text`);
  if (set.findInBytes(Buffer.from(text, 'utf8')) === undefined) misses.push(`${enc.name}: bytes`);
  return misses;
}

const POSITIONS: Array<[string, (t: string) => string]> = [
  ['alone', (t) => t],
  ['after one character', (t) => `a${t}`],
  ['after two characters', (t) => `:=${t}`],
  ['inside prose', (t) => `the value was ${t} and then the build went on`],
  ['in a JSON string value', (t) => JSON.stringify({ seq: 3, kind: 'event', payload: { note: `x ${t} y` } })],
  ['as a JSON key', (t) => JSON.stringify({ seq: 3, payload: { [t]: 1 } })],
  ['in a nested JSON string', (t) => JSON.stringify({ arguments: JSON.stringify({ q: t }) })],
  ['in JSON nested three times', (t) => JSON.stringify({ a: JSON.stringify({ b: JSON.stringify({ c: t }) }) })],
  ['at the end of a line', (t) => `${JSON.stringify({ v: t })}\n`],
];

describe.each(SECRETS)('secret: %s', (_label, secret) => {
  const set = setOf(secret, 'an-unrelated-Secret-42');
  const encodings = encodingsOf(secret);

  it('the oracle encoders decode back to the secret (the oracle itself is right)', () => {
    const utf8 = Buffer.from(secret, 'utf8');
    expect(utf16(secret, false).equals(Buffer.from(secret, 'utf16le'))).toBe(true);
    expect(utf16(secret, true).swap16().toString('utf16le')).toBe(secret);
    expect(Buffer.from(hexOf(utf8, { upper: 'mixed', sep: ':' }).replace(/:/g, ''), 'hex').equals(utf8)).toBe(true);
    expect(decodeURIComponent(percentOf(secret, { lower: true }))).toBe(secret);
    expect(decodeURIComponent(percentOf(secret, { form: true }).replace(/\+/g, ' '))).toBe(secret);
    expect(JSON.parse(`"${jsonContent(secret, 'all')}"`)).toBe(secret);
    expect(JSON.parse(`"${jsonContent(secret, 'ascii')}"`)).toBe(secret);
    expect(JSON.parse(`"${jsonContent(secret, 'upperU')}"`)).toBe(secret);
    expect(Buffer.from(base64Of(utf8, { shift: 2, wrap: 76, eol: '\r\n' }), 'base64').subarray(2, 2 + utf8.length).equals(utf8)).toBe(true);
    const html = htmlOf(secret, { hex: true, zeros: 2 }).replace(/&#x0*([0-9a-f]+);/g, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)));
    expect(html).toBe(secret);
  });

  it.each(POSITIONS)('every encoding is found by findInText and findInBytes, %s', (_pos, context) => {
    const misses = encodings.flatMap((enc) => foundEverywhere(set, enc, context));
    expect(misses).toEqual([]);
  });

  it('JSON stringified 1..10 times is found, as text and as bytes', () => {
    for (let depth = 1; depth <= 10; depth++) {
      let value: unknown = { k: `pre ${secret} post` };
      for (let d = 1; d < depth; d++) value = { inner: JSON.stringify(value) };
      const line = `${JSON.stringify({ seq: 1, kind: 'event', payload: value })}\n`;
      expect(set.findInText(line), `depth ${depth}`).toBeDefined();
      expect(set.findInBytes(Buffer.from(line)), `depth ${depth}`).toBeDefined();
      // Also as a bare string stringified `depth` times (no objects around it).
      let s: string = secret;
      for (let d = 0; d < depth; d++) s = JSON.stringify(s);
      expect(set.findInText(s), `string depth ${depth}`).toBeDefined();
    }
  });

  it('near-misses of every encoding (a middle character changed; the first or last one cut) are not found', () => {
    const clean = setOf(secret);
    const mid = Math.floor(secret.length / 2);
    const changed = `${secret.slice(0, mid)}${secret[mid] === '7' ? '8' : '7'}${secret.slice(mid + 1)}`;
    for (const [miss, cut] of [[changed, false], [secret.slice(0, -1), true], [secret.slice(1), true]] as const) {
      // Base64 of a cut secret is left out: a needle fixes only the bits of the end bytes that
      // no neighbouring byte shares a character with, so a neighbour may complete it.
      for (const enc of encodingsOf(miss).filter((e) => !(cut && e.name.startsWith('base64')))) {
        if (enc.bytes) {
          expect(clean.findInBytes(Buffer.concat([Buffer.from('a'), enc.bytes])), enc.name).toBeUndefined();
          continue;
        }
        for (const [pos, context] of POSITIONS) {
          const text = context(enc.text!);
          expect(clean.findInText(text), `${enc.name} ${pos}`).toBeUndefined();
          expect(clean.findInBytes(Buffer.from(text)), `${enc.name} ${pos}`).toBeUndefined();
        }
      }
    }
  });
});

describe('random data holds no registered secret', () => {
  const set = setOf(...SECRETS.map(([, s]) => s));
  const rand = prng(0x5eed);

  it('random bytes, and their base64, base64url, hex (upper, lower), percent and JSON forms', () => {
    for (let i = 0; i < 200; i++) {
      const bytes = rand(64 + (i % 7) * 97);
      expect(set.findInBytes(bytes)).toBeUndefined();
      for (const text of [
        bytes.toString('base64'), bytes.toString('base64url'), base64Of(bytes, { wrap: 76, eol: '\r\n' }),
        bytes.toString('hex'), bytes.toString('hex').toUpperCase(), hexOf(bytes, { sep: ':' }), hexOf(bytes, { prefix: '\\x' }),
        percentOf(bytes.toString('latin1')), JSON.stringify(bytes.toString('latin1')), htmlOf(bytes.toString('latin1'), { hex: true }),
      ]) {
        expect(set.findInText(text)).toBeUndefined();
        expect(set.findInBytes(Buffer.from(text))).toBeUndefined();
      }
    }
  });

  it('numbers near the numeric secret in exponent form are not taken for it', () => {
    for (const n of ['5.6462986938654e14', '5.64629869386548e14', '5.64629869386547e13', '56462986938654.6e1', '1e400', '9e-999999999']) {
      expect(set.findInText(JSON.stringify({ n }))).toBeUndefined();
      expect(set.findInText(`[${n}]`)).toBeUndefined();
    }
  });
});

describe('positions and padding the detector must cross', () => {
  it('a JSON-escaped line break inside base64, followed by a long run of spaces, is still found', () => {
    const secret = 'Zq9kL2vX8mN4pR7t';
    const set = setOf(secret);
    const b64 = Buffer.from(secret).toString('base64');
    const wrapped = `${b64.slice(0, 8)}\n${' '.repeat(5000)}${b64.slice(8)}`;
    expect(set.findInBytes(Buffer.from(JSON.stringify({ data: wrapped })))).toBe('base64');
    expect(set.findInText(JSON.stringify({ data: `${hexOf(Buffer.from(secret)).slice(0, 10)}\n${' '.repeat(5000)}${hexOf(Buffer.from(secret)).slice(10)}` }))).toBe('hex');
  });

  it('HTML references with many leading zeros, escaped once in JSON, are found', () => {
    const secret = 'Qu"ot\\e+/=Wk9!x';
    const set = setOf(secret);
    const text = JSON.stringify({ html: htmlOf(secret, { hex: true, zeros: 2000 }) });
    expect(set.findInText(text)).toBe('html-entity');
  });

  it('a numeric secret as a JSON number in exponent form, in a string (as redaction rebuilds it) and as a number', () => {
    const set = setOf('564629869386547');
    expect(set.findInText('{"v":"5.64629869386547e14"}')).toBe('number');
    expect(set.findInText('{"v":5.64629869386547E+14}')).toBe('number');
    expect(set.findInBytes(Buffer.from(JSON.stringify({ args: JSON.stringify({ v: '5.64629869386547e14' }) })))).toBe('number');
    expect(set.locate({ v: 5.64629869386547e14 }, '{"v":5.64629869386547e14}')).toEqual({ path: 'v', rule: 'raw' });
  });

  it('UTF-16 as raw bytes of a non-ASCII secret (not valid UTF-8) is found by the byte gate', () => {
    const secret = 'vault-\u{1F511}-k3y-\u00e9-Z9';
    const set = setOf(secret);
    expect(set.findInBytes(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(secret, 'utf16le')]))).toBe('utf16');
    expect(set.findInBytes(Buffer.concat([Buffer.from([0xfe, 0xff]), utf16(secret, true)]))).toBe('utf16');
  });

  it('text that keeps decoding past any depth JSON of its size can nest is refused, not passed unchecked', () => {
    const set = setOf('Zq9kL2vX8mN4pR7t');
    const chain = `\\u005c${'u005c'.repeat(2000)}`;
    expect(set.findInText(chain)).toBe('json-escape');
    // The same number of levels, but legitimately nested (backslashes double per level), is checked and clean.
    expect(set.findInText(JSON.stringify(JSON.stringify(JSON.stringify('a"b\\c'))))).toBeUndefined();
  });

  it('the JSON nesting of the reported path follows any depth (locate)', () => {
    const secret = 'Qu"ot\\e+/=Wk9!x';
    const set = setOf(secret);
    let value: unknown = { deep: secret };
    for (let d = 0; d < 6; d++) value = { s: JSON.stringify(value) };
    const hit = set.locate(value, JSON.stringify(value));
    expect(hit?.path).toBe(`s${'<json>.s'.repeat(5)}<json>.deep`);
  });
});
