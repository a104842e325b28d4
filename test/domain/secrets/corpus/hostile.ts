import { expandExample, seededRandom } from '../../../../src/domain/secrets/rules/examples.js';
import type { TokenRule } from '../../../../src/domain/secrets/rules/rule.js';

/**
 * 1 MB inputs built against the rules (many keyword starts, long runs, no terminator): for the
 * correctness test (hostileRules.test.ts) and the timings of `npm run secrets:report`.
 */
export const MB = 1 << 20;
export const fill = (unit: string, size = MB) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);

export const HOSTILE: Array<[string, string]> = [
  ['"password=" repeated', fill('password=')],
  ['"\\"password\\": \\"" repeated (quotes never closed)', fill('"password": "')],
  ['"api_key: " + 300 name characters, repeated', fill(`api_key: ${'a'.repeat(300)} `)],
  ['"Authorization: " repeated', fill('Authorization: ')],
  ['"Bearer " + 4,001 token characters, repeated', fill(`Bearer ${'a1'.repeat(2001)} `)],
  ['"aws_secret_access_key=" repeated', fill('aws_secret_access_key=')],
  ['"x://a:" + "@" runs', fill(`x://a:${'@'.repeat(300)}`)],
  ['"://" repeated', fill('://')],
  ['"&sig=" + 29 characters, repeated', fill(`&sig=${'A'.repeat(29)}`)],
  ['"curl -u a:" repeated', fill('curl -u a:')],
  ['"1234567890:AA" repeated', fill('1234567890:AA')],
  ['"mailgun key-" repeated', fill('mailgun key-')],
  ['PEM header then 1 MB of blank lines', `-----BEGIN PRIVATE KEY-----${fill('\n')}`],
  ['PEM headers, each with one short line', fill('-----BEGIN PRIVATE KEY-----\nAAAA\n')],
  ['"xoxb-" repeated', fill('xoxb-')],
  ['"sk-ant-api03-" repeated', fill('sk-ant-api03-')],
  ['"GITHUB_TOKEN_ghp_" repeated', fill('GITHUB_TOKEN_ghp_')],
  ['"glpat-" repeated', fill('glpat-')],
  ['"eyJ" + "." runs', fill('eyJaaaaa.eyJ.')],
  ['"discord M" + 26 characters + ".", repeated', fill(`discord M${'a'.repeat(26)}.`)],
  ['"%3D" repeated', fill('%3D')],
  ['"\\\\n" repeated', fill('\\n')],
];

/**
 * One 1 MB input per rule, built from the rule itself: its first keyword, an example token glued
 * to a continuation (`_`, so the right boundary fails after a full-length scan) and the same
 * token cut short, repeated with no blank. Every start is a candidate and none is a token.
 */
export function hostileFor(rule: TokenRule, index: number): string {
  const ex = expandExample(rule.examples.redacted[0]!, seededRandom(index + 1));
  return fill(`${rule.keywords[0]}${ex}_${ex.slice(0, Math.max(4, ex.length - 3))}`);
}
