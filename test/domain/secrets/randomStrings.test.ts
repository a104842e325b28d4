import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactValue } from '../../../src/domain/secrets/redact.js';
import { redactTokens } from '../../../src/domain/secrets/tokenRules.js';

/**
 * Provider ciphertexts (OpenAI reasoning `encrypted_content`, Anthropic thinking `signature`) are
 * random base64, base64url or hex of any size: 0 alterations in 1,000 random strings from 1 KB to
 * 1 MB (log-uniform sizes). Token rules match only at boundaries that are not base64url
 * characters, so a match inside such a string is impossible; this checks it.
 */

const ENCODINGS = ['base64', 'base64url', 'hex'] as const;

/** The first place `out` differs from `s`, for the failure message. */
function firstChange(s: string, out: string): string {
  let i = 0;
  while (i < s.length && s[i] === out[i]) i++;
  return `at ${i}: ${JSON.stringify(s.slice(Math.max(0, i - 20), i + 60))} -> ${JSON.stringify(out.slice(Math.max(0, i - 20), i + 60))}`;
}

describe('random base64 / base64url / hex strings are never altered', () => {
  it('1,000 strings of 1 KB to 1 MB, in free text and as encrypted_content', () => {
    let altered = 0;
    const failures: string[] = [];
    for (let i = 0; i < 1000; i++) {
      const size = Math.round(1024 * 1024 ** ((i % 100) / 99)); // 1 KB .. 1 MB, log-uniform
      const enc = ENCODINGS[i % 3]!;
      const s = randomBytes(enc === 'hex' ? Math.ceil(size / 2) : Math.ceil((size * 3) / 4)).toString(enc).slice(0, size);
      const value = { type: 'reasoning', encrypted_content: s };
      const out = i % 10 === 0 ? (redactValue(value, JSON.stringify(value)).value as typeof value).encrypted_content : redactTokens(s);
      if (out !== s) {
        altered++;
        failures.push(`${enc} ${size}: ${firstChange(s, out)}`);
      }
    }
    expect(failures).toEqual([]);
    expect(altered).toBe(0);
  }, 300_000);
});

describe('a token-shaped stretch inside standard base64 is part of the ciphertext', () => {
  it('`/EAA` + 100 alphanumerics + `/` inside a base64 blob is kept; the same token after `access_token=` is redacted', () => {
    // Random standard base64 holds such a stretch about once per 2 MB (found by the test above).
    const alnum = randomBytes(200).toString('base64').replace(/[^A-Za-z0-9]/g, '');
    const token = `EAA${alnum.slice(0, 100)}`;
    const blob = `${randomBytes(48).toString('base64').replace(/[+/=]/g, 'x')}/${token}/${randomBytes(48).toString('base64').replace(/[+/=]/g, 'y')}`;
    expect(redactTokens(blob)).toBe(blob);
    expect(redactTokens(`GET /me?access_token=${token} HTTP/1.1`)).toMatch(/^GET \/me\?access_token=<redacted:[a-z-]+> HTTP\/1\.1$/);
    expect(redactTokens(`see ${token} here`)).toBe('see <redacted:facebook-token> here');
  });
});
