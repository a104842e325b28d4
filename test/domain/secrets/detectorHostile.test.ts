import { describe, expect, it } from 'vitest';
import { SecretSet } from '../../../src/domain/secrets/knownSecrets.js';
import { HOSTILE_SECRETS, hostileClasses } from './corpus/detectorHostile.js';

/**
 * The detector on the hostile classes the bench times (corpus/detectorHostile.ts): each gets
 * the right answer — near-misses are not the secret, the planted secret is found, escapes that
 * keep decoding are refused as unverifiable. Correctness only: no timing is asserted here.
 */

const set = new SecretSet();
for (const s of HOSTILE_SECRETS) set.add(s);

describe('hostile inputs: the right answer for each class', () => {
  it.each(hostileClasses(256 << 10).map((k) => [k.name, k] as const))('%s', (_name, k) => {
    const found = set.findInBytes(Buffer.from(k.text, 'utf8'));
    if (k.unverifiable) expect(found).toBe('json-escape');
    else if (k.holdsSecret) expect(found).toBeDefined();
    else expect(found).toBeUndefined();
    // The same text as a JSON string value (one level of escapes more).
    const nested = set.findInText(JSON.stringify({ t: k.text }));
    if (k.holdsSecret || k.unverifiable) expect(nested).toBeDefined();
    else expect(nested).toBeUndefined();
  }, 120_000);
});

describe('scans carried over chunks (findAcross, tailOf)', () => {
  const [token, numeric, phrase] = HOSTILE_SECRETS;
  const cases: Array<[string, string]> = [
    ['raw', token],
    ['hex with separators', Buffer.from(token).toString('hex').replace(/..(?!$)/g, '$&:')],
    ['base64 wrapped', Buffer.from(`${token}!`).toString('base64').replace(/.{10}/g, '$&\n')],
    ['digits grouped', numeric.replace(/(\d{3})(?!$)/g, '$1 ')],
    ['passphrase with doubled blanks', phrase.replace(/ /g, '  ')],
    ['a byte array', JSON.stringify([...Buffer.from(token)])],
  ];

  it.each(cases)('%s split at every point: the secret is reported by the chunk it completes in', (_label, form) => {
    const before = 'x'.repeat(300);
    const text = `${before} ${form} y`;
    for (let cut = 1; cut < text.length; cut += 7) {
      const first = text.slice(0, cut);
      const second = text.slice(cut);
      const firstAlone = set.findInText(first);
      const across = set.findAcross(set.tailOf(first), second);
      expect(firstAlone !== undefined || across !== undefined, `cut at ${cut}`).toBe(true);
    }
  });

  it('a clean stream is clean chunk by chunk, and the tail is short', () => {
    const prose = 'The build failed because the linker could not find libssl; install it and re-run make. '.repeat(200);
    let tail = '';
    for (let i = 0; i < prose.length; i += 333) {
      const chunk = prose.slice(i, i + 333);
      expect(set.findAcross(tail, chunk)).toBeUndefined();
      tail = set.tailOf(tail + chunk);
      expect(tail.length).toBeLessThan(2000);
    }
  });
});
