/**
 * Inputs built against the registered-secret detector (detect.ts): near-misses of the bench's
 * five registered secrets in each form the detector undoes, and the runs that make its views
 * work hardest (numbers in exponent form, backslashes, escapes that decode into escapes,
 * separators, compatibility characters). One generator for the correctness test
 * (detectorHostile.test.ts: the answer of each is right) and the bench (bench/secretCost.ts:
 * each costs at most a small constant times `"x"` repeated, of the same size).
 */

/** The five secrets the hostile classes are built against (and the bench registers). */
export const HOSTILE_SECRETS = [
  'sk-test-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c',
  '564629869386547',
  'correct horse battery staple',
  'JBSWY3DPEHPK3PXPJBSWY3DP',
  'Qu"ot\\e+/=Wk9!x-Canary',
] as const;

export const fill = (unit: string, size: number): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

export interface HostileClass {
  name: string;
  text: string;
  /** The text holds a registered secret (a form of it): the detector must find it. */
  holdsSecret: boolean;
  /** Escapes that keep decoding past any depth JSON of this size can nest: refused as unverifiable ('json-escape'). */
  unverifiable?: boolean;
}

const near = (s: string) => s.slice(0, -1); // the secret minus its last character
const hexOf = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** Every hostile class, each of `size` characters (about: units are repeated whole). */
export function hostileClasses(size: number): HostileClass[] {
  const [token, numeric, phrase, base32, quoted] = HOSTILE_SECRETS;
  const miss = near(quoted);
  const c = (name: string, unit: string, holdsSecret = false): HostileClass => ({ name, text: fill(unit, size), holdsSecret });
  return [
    c('"x" repeated (the reference)', 'x'),
    c('prose', 'The build failed because the linker could not find libssl; install it and re-run make. '),
    c('a secret minus its last character, repeated', `${near(token)} `),
    c('its JSON escape minus the last character', `${JSON.stringify(miss).slice(1, -1)} `),
    c('its base64, wrapped every 76 characters', Buffer.from(fill(`${miss}!`, 3 * 1024)).toString('base64').replace(/.{76}/g, '$&\r\n')),
    c('its hex with ":" separators', `${hexOf(miss).replace(/../g, '$&:')} `),
    c('its hex as xxd -i writes it', `${[...Buffer.from(miss)].map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(', ')},\n`),
    c('its bytes as a JSON array', `[${[...Buffer.from(miss)].join(',')}],`),
    c('its bytes as Buffer JSON', `{"type":"Buffer","data":[${[...Buffer.from(miss)].join(',')}]},`),
    c('its double percent-encoding', `${encodeURIComponent(encodeURIComponent(miss))}+`),
    c('its UTF-16LE as \\u0000 text', `${[...Buffer.from(miss, 'utf16le')].map((b) => `\\u00${b.toString(16).padStart(2, '0')}`).join('')} `),
    c('its HTML entities', `${[...miss].map((ch) => `&#x${ch.codePointAt(0)!.toString(16)};`).join('')} `),
    c('"1e5 " repeated (numbers in exponent form)', '1e5 '),
    c('"1e99 " repeated', '1e99 '),
    c('numbers near the numeric secret', '5.6462986938654e14 '),
    c('digits grouped by blanks', `${near(numeric).replace(/(\d{3})/g, '$1 ')}, `),
    c('digits with thousands separators', '1,234,567,890,'),
    c('"1 " repeated', '1 '),
    c('the passphrase minus its last word, blanks doubled', `${phrase.split(' ').slice(0, -1).join('  ')}  `),
    c('blanks', ' '),
    c('NBSP and soft hyphens', '\u00a0\u00ad'),
    c('zero-width spaces', '\u200b'),
    c('full-width letters', '\uff21\uff42'),
    c('combining marks', 'e\u0301'),
    c('base32, lower case, grouped by 4, minus the last group', `${base32.toLowerCase().slice(0, -4).replace(/(.{4})/g, '$1 ')}- `),
    c('a run of backslashes', '\\'),
    { name: '"\\u005c" escapes chained (each pass makes the next)', text: `\\${fill('u005c', size - 1)}`, holdsSecret: false, unverifiable: true },
    c('"\\\\\\"" nesting', '\\\\\\"'),
    c('"%4" and "\\\\u00"', '%4\\u00'),
    c('underscores', '_'),
    c('hex digits', '0123456789abcdef'),
    c('"0x" repeated', '0x'),
    { name: 'the secret itself, at the end of "x" repeated', text: `${fill('x', size - token.length)}${token}`, holdsSecret: true },
  ];
}
