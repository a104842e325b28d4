import { describe, expect, it } from 'vitest';
import { ExactNumber, mayHoldInexact, parseExact, roundTrips, stringifyExact } from '../../src/domain/exactJson.js';

const INEXACT = ['12345678901234567', '12345678901234567890', '19.90', '9223372036854775807', '-9223372036854775808', '-0', '1e400', '-1e400',
  '1.0', '0.10', '1E5', '1e5', '0.0000001', '2.50E-3', '100.00', '18446744073709551615', '1e21', '-0.0', '123456789012.3450'];
const EXACT = ['0', '1', '-1', '2.5', '9007199254740991', '-9007199254740991', '0.1', '123456789012345', '0.000001', '1.5', '-3.25', '1e+21', '1e-7'];

describe('exact JSON numbers', () => {
  it('tells the tokens that do not round-trip from those that do', () => {
    for (const t of INEXACT) expect(roundTrips(t), t).toBe(false);
    for (const t of EXACT) expect(roundTrips(t), t).toBe(true);
  });

  it('keeps every token of any document byte for byte, at any depth and position', () => {
    for (const t of [...INEXACT, ...EXACT]) {
      for (const doc of [`{"a":${t}}`, `[${t}]`, `{"a":[1,{"b":[[${t}]]},${t}],"c":"${t}"}`, `{ "a" : [ ${t} , 2 ] }`]) {
        const compact = doc.replace(/ /g, '');
        expect(stringifyExact(parseExact(compact)), compact).toBe(compact);
        expect(mayHoldInexact(doc), doc).toBe(!roundTrips(t));
      }
    }
  });

  it('is JSON.parse where nothing needs it: plain numbers, no ExactNumber', () => {
    const doc = '{"n":[1,2.5,-3,0.1],"s":"1.0 and 12345678901234567 in a string","o":{"x":9007199254740991}}';
    expect(parseExact(doc)).toEqual(JSON.parse(doc));
    expect(mayHoldInexact('{"s":"12345678901234567"}')).toBe(false);
  });

  it('holds a number that does not round-trip as its text, strings stay strings', () => {
    const v = parseExact('{"id":12345678901234567,"s":"12345678901234567","t":"\\u0000x:1"}') as Record<string, unknown>;
    expect(v.id).toBeInstanceOf(ExactNumber);
    expect((v.id as ExactNumber).text).toBe('12345678901234567');
    expect(v.s).toBe('12345678901234567');
    expect(stringifyExact(v)).toBe('{"id":12345678901234567,"s":"12345678901234567","t":"\\u0000x:1"}');
  });

  it('as JSON.parse: the last of duplicate members wins, __proto__ is an own member, invalid JSON throws', () => {
    expect(stringifyExact(parseExact('{"a":1.0,"a":2.0}'))).toBe('{"a":2.0}');
    const p = parseExact('{"__proto__":{"polluted":1.0}}') as Record<string, unknown>;
    expect(Object.hasOwn(p, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(() => parseExact('{"a":1.0')).toThrow(SyntaxError);
    expect(() => parseExact('{"a":01}')).toThrow(SyntaxError);
  });
});

describe('the secret gate sees a number as its exact digits', () => {
  it('refuses a record whose number token is a registered secret, the digits JSON.parse would have rounded away', async () => {
    const { SecretSet } = await import('../../src/domain/secrets/knownSecrets.js');
    const { prepareRecord } = await import('../../src/domain/serialize.js');
    const secrets = new SecretSet();
    secrets.add('98765432109876543210987');
    const frame = '{"kind":"event","type":"t","payload":{"pin":98765432109876543210987}}';
    expect(String(JSON.parse(frame).payload.pin)).not.toContain('98765432109876543210987');
    expect(() => prepareRecord(parseExact(frame) as never, 0, secrets, 1 << 20)).toThrow(/registered secret/);
    const clean = '{"kind":"event","type":"t","payload":{"pin":98765432109876543210986}}';
    expect(prepareRecord(parseExact(clean) as never, 0, secrets, 1 << 20).text).toBe(clean);
  });
});
