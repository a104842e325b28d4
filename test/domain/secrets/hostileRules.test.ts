import { describe, expect, it } from 'vitest';
import { redactTokens } from '../../../src/domain/secrets/tokenRules.js';
import { HOSTILE, MB } from './corpus/hostile.js';

/**
 * Inputs built against the rule table (see corpus/hostile.ts): each must finish and give a
 * correct answer — every redaction a real match, idempotent, the text around kept. No timing
 * is asserted here; `npm run secrets:report` prints the times.
 */

const UNCHANGED = new Set([
  '"\\"password\\": \\"" repeated (quotes never closed)', '"Authorization: " repeated', '"aws_secret_access_key=" repeated', '"://" repeated',
  '"1234567890:AA" repeated', '"mailgun key-" repeated', 'PEM header then 1 MB of blank lines', '"xoxb-" repeated', '"sk-ant-api03-" repeated',
  '"GITHUB_TOKEN_ghp_" repeated', '"glpat-" repeated', '"eyJ" + "." runs', '"discord M" + 26 characters + ".", repeated', '"%3D" repeated', '"\\\\n" repeated',
  '"&sig=" + 29 characters, repeated', '"Bearer " + 4,001 token characters, repeated', '"api_key: " + 300 name characters, repeated',
  'PEM headers, each with one short line', '"x://a:" + "@" runs', '"password=" repeated',
]);

describe('redactTokens on hostile 1 MB inputs against the rule table', () => {
  it.each(HOSTILE)('%s', (label, input) => {
    const out = redactTokens(input);
    expect(redactTokens(out)).toBe(out);
    if (UNCHANGED.has(label)) {
      expect(out === input, 'nothing in it is a credential').toBe(true);
      return;
    }
    // Every change is a placeholder standing where text of the input was.
    const pieces = out.split(/<redacted:[a-z0-9-]+>/);
    expect(pieces.length).toBeGreaterThan(1);
    let at = 0;
    for (const p of pieces) {
      const found = input.indexOf(p, at);
      expect(found, 'text around the placeholders is the input').toBeGreaterThanOrEqual(at);
      at = found + p.length;
    }
  });

  it('the list is 1 MB inputs', () => {
    for (const [label, input] of HOSTILE) expect(input.length, label).toBeGreaterThanOrEqual(MB);
  });
});
