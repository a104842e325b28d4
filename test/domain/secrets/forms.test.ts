import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/domain/errors.js';
import { guardValue } from '../../../src/domain/secrets/gate.js';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';

/**
 * Lossless forms of a registered secret, by its alphabet (encodings.ts formsOf, detect.ts): each
 * is found as text, as bytes and inside a record (refused whole); a near-miss of each is not.
 */

const setOf = (...secrets: string[]) => {
  const s = new SecretSet();
  for (const v of secrets) s.add(v);
  return s;
};
const HEX = '9f86d081884c7d659a2feaa0c55ad015';
const NUMERIC = '564629869386547';
const CARD = '4111 1111 1111 1111';
const BASE32 = 'JBSWY3DPEHPK3PXPJBSWY3DP';
const PHRASE = 'correct horse battery staple';
const TOKEN = 'sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
const ACCENTED = 'pässwörd-Gehéimnis-42';
const ALL = setOf(HEX, NUMERIC, CARD, BASE32, PHRASE, TOKEN, ACCENTED);

const bytesOf = (s: string) => [...Buffer.from(s, 'utf8')];
const group = (s: string, n: number, sep: string) => s.replace(new RegExp(`(.{${n}})(?!$)`, 'g'), `$1${sep}`);
const refused = (text: string): string | undefined => {
  try {
    guardValue({ kind: 'message', message: { role: 'tool', content: text } }, ALL, 'records[0]');
    return undefined;
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'SecretRejected') return String(err.details.rule);
    throw err;
  }
};

/** [label, text holding a lossless form, the rule it is found by]. */
const FORMS: Array<[string, string, string]> = [
  ['a hex secret in upper case', `key=${HEX.toUpperCase()};`, 'hex'],
  ['a hex secret with ":" separators, upper case', group(HEX.toUpperCase(), 2, ':'), 'hex'],
  ['a hex secret with "-" separators', group(HEX, 4, '-'), 'hex'],
  ['a hex secret with "," separators', group(HEX, 2, ','), 'hex'],
  ['a hex secret as 0x bytes (xxd -i)', `unsigned char k[] = {\n  ${group(HEX, 2, ' ').split(' ').map((b) => `0x${b}`).join(', ')}\n};`, 'byte-array'],
  ['any secret\'s bytes as 0x bytes (xxd -i)', `{ ${bytesOf(TOKEN).map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(', ')} }`, 'byte-array'],
  ['any secret\'s bytes as 0X bytes, upper case', bytesOf(TOKEN).map((b) => `0X${b.toString(16).toUpperCase().padStart(2, '0')}`).join(','), 'byte-array'],
  ['any secret\'s bytes as a JSON array', JSON.stringify(bytesOf(TOKEN)), 'byte-array'],
  ['any secret\'s bytes as a pretty-printed JSON array', JSON.stringify(bytesOf(PHRASE), null, 2), 'byte-array'],
  ['any secret\'s bytes as Node Buffer JSON', JSON.stringify(Buffer.from(TOKEN)), 'byte-array'],
  ['a non-ASCII secret\'s UTF-8 bytes as Buffer JSON', JSON.stringify(Buffer.from(ACCENTED)), 'byte-array'],
  ['base32 in lower case, grouped by 4', group(BASE32.toLowerCase(), 4, ' '), 'base32'],
  ['base32 grouped by 4 with dashes', group(BASE32, 4, '-'), 'base32'],
  ['base32 in lower case with its padding', `${BASE32.toLowerCase()}====`, 'base32'],
  ['digits grouped by blanks', group(NUMERIC, 3, ' '), 'number'],
  ['digits grouped by dashes', group(NUMERIC, 4, '-'), 'number'],
  ['digits with thousands separators', '564,629,869,386,547', 'number'],
  ['digits with apostrophes (Swiss)', "564'629'869'386'547", 'number'],
  ['digits with NBSP', group(NUMERIC, 3, '\u00a0'), 'number'],
  ['a grouped card number written without its blanks', CARD.replace(/ /g, ''), 'number'],
  ['a grouped card number with dashes', CARD.replace(/ /g, '-'), 'number'],
  ['a passphrase with doubled blanks', PHRASE.replace(/ /g, '  '), 'normalized'],
  ['a passphrase across lines', PHRASE.replace(/ /g, '\n'), 'normalized'],
  ['a passphrase with NBSP', PHRASE.replace(/ /g, '\u00a0'), 'normalized'],
  ['a passphrase with underscores', PHRASE.replace(/ /g, '_'), 'normalized'],
  ['a passphrase with tabs and blanks', PHRASE.replace(/ /g, ' \t '), 'normalized'],
  ['a passphrase form-encoded (+)', PHRASE.replace(/ /g, '+'), 'normalized'],
  ['zero-width spaces inside a secret', [...TOKEN].join('\u200b'), 'normalized'],
  ['soft hyphens inside a secret', [...TOKEN].join('\u00ad'), 'normalized'],
  ['a zero-width joiner and a BOM inside a secret', `${TOKEN.slice(0, 10)}\u200d${TOKEN.slice(10, 20)}\ufeff${TOKEN.slice(20)}`, 'normalized'],
  ['the NFD of an NFC secret', ACCENTED.normalize('NFD'), 'normalized'],
  ['full-width forms', [...TOKEN].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join(''), 'normalized'],
];

describe('lossless forms of a registered secret are found', () => {
  it.each(FORMS)('%s', (_label, text, rule) => {
    expect(ALL.findInText(text)).toBe(rule);
    expect(ALL.findInBytes(Buffer.from(text, 'utf8'))).toBe(rule);
    expect(ALL.findInText(JSON.stringify({ text }))).toBeDefined();
    expect(ALL.findInText(JSON.stringify(JSON.stringify({ text })))).toBeDefined();
    expect(refused(text)).toBeDefined();
  });

  it('a Buffer JSON as a real member of a record (not a string) is refused', () => {
    expect(() => guardValue({ kind: 'event', type: 'x', payload: { key: Buffer.from(TOKEN).toJSON() } }, ALL, 'records[0]')).toThrow(/registered secret/);
  });
});

/** Each form with its last unit of the secret changed: not the secret. */
const NEAR: Array<[string, string]> = [
  ['a hex secret, one digit changed, upper case', `${HEX.slice(0, -1)}6`.toUpperCase()],
  ['a hex secret, xxd, one byte changed', group(`${HEX.slice(0, -2)}16`, 2, ' ').split(' ').map((b) => `0x${b}`).join(', ')],
  ['a JSON array, the last byte changed', JSON.stringify([...bytesOf(TOKEN).slice(0, -1), 100])],
  ['a JSON array, a byte missing', JSON.stringify(bytesOf(TOKEN).slice(1))],
  ['base32 grouped, the last character changed', group(`${BASE32.slice(0, -1)}Q`.toLowerCase(), 4, ' ')],
  ['digits grouped, the last digit changed', group(`${NUMERIC.slice(0, -1)}8`, 3, ' ')],
  ['a passphrase with doubled blanks, a word changed', PHRASE.replace('staple', 'stapel').replace(/ /g, '  ')],
  ['zero-width spaces inside a near-miss', [...`${TOKEN.slice(0, -1)}d`].join('\u200b')],
  ['full-width forms of a near-miss', [...`${TOKEN.slice(0, -1)}d`].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join('')],
  ['the digits in a different order', '564629869386574'],
  ['an ordinary JSON array of small numbers', JSON.stringify(Array.from({ length: 400 }, (_, i) => (i * 37) % 256))],
  ['prose with numbers', 'In 2024 we shipped 564 629 units, then 869 386 more; 547 were returned.'],
  ['a decimal that shares the digits of the numeric secret', '56462986938654.7'],
];

describe('near-misses of each form are not taken for the secret', () => {
  it.each(NEAR)('%s', (_label, text) => {
    expect(ALL.findInText(text)).toBeUndefined();
    expect(ALL.findInBytes(Buffer.from(text, 'utf8'))).toBeUndefined();
    expect(ALL.findInText(JSON.stringify({ text }))).toBeUndefined();
  });
});

describe('which secrets get which forms', () => {
  it('a secret of letters only is not taken for base32: its lower case is another text', () => {
    const set = setOf('PASSWORDPASSWORDPASSWORD');
    expect(set.findInText('passwordpasswordpassword')).toBeUndefined();
    expect(set.findInText('PASSWORDPASSWORDPASSWORD')).toBe('raw');
  });

  it('a mixed-case word is not hex, so its other case is not the secret', () => {
    const set = setOf('DeadBeefCafeBabe');
    expect(set.findInText('deadbeefcafebabe')).toBeUndefined();
  });

  it('a secret with separators that leave fewer than 8 digits gets no digit form', () => {
    const set = setOf('1-2-3-4-5-6');
    expect(set.findInText('123456')).toBeUndefined();
    expect(set.findInText('1-2-3-4-5-6')).toBe('raw');
  });
});
