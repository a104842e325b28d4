import { describe, expect, it } from 'vitest';
import type { TokenRule } from '../../../src/domain/secrets/rules/rule.js';
import { redactTokens, TOKEN_RULES } from '../../../src/domain/secrets/tokenRules.js';
import { HOSTILE, hostileFor, MB } from './corpus/hostile.js';

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

/** Every change is a placeholder standing where text of the input was. */
function onlyPlaceholders(input: string, out: string): void {
  const pieces = out.split(/<redacted:[a-z0-9-]+>/);
  let at = 0;
  for (const p of pieces) {
    const found = input.indexOf(p, at);
    expect(found, 'text around the placeholders is the input').toBeGreaterThanOrEqual(at);
    at = found + p.length;
  }
}

describe('redactTokens on hostile 1 MB inputs against the rule table', () => {
  it.each(HOSTILE)('%s', (label, input) => {
    const out = redactTokens(input);
    expect(redactTokens(out)).toBe(out);
    if (UNCHANGED.has(label)) {
      expect(out === input, 'nothing in it is a credential').toBe(true);
      return;
    }
    expect(out.split(/<redacted:[a-z0-9-]+>/).length).toBeGreaterThan(1);
    onlyPlaceholders(input, out);
  });

  it('the list is 1 MB inputs', () => {
    for (const [label, input] of HOSTILE) expect(input.length, label).toBeGreaterThanOrEqual(MB);
  });
});

describe('a hostile 1 MB input built from each rule (corpus/hostile.ts hostileFor): it finishes, and changes only what it must', () => {
  it.each(TOKEN_RULES.map((r, i) => [`${i} ${r.id}`, r, i] as const))('%s', (_label, rule, i) => {
    const input = hostileFor(rule, i);
    expect(input.length).toBeGreaterThanOrEqual(MB);
    const out = redactTokens(input);
    expect(redactTokens(out)).toBe(out);
    onlyPlaceholders(input, out);
  }, 60_000);
});

/**
 * The shape that keeps a scan linear (rules/rule.ts), checked on each pattern's source: no
 * unbounded quantifier (`*`, `+`, `{n,}`), every bound at most 20,000, and a start the engine
 * can find cheaply — a literal, a lookbehind after a literal, or a class repeated at most 64
 * times. Nested quantifiers are bounded too; the per-rule hostile inputs above exercise them.
 * Two rules of issue 13 keep an unbounded `=*` / PEM body (each bounded by its own text).
 */
const UNBOUNDED_OK = new Set(['private-key', 'authorization-header', 'bearer-token']);

function shape(rule: TokenRule): string[] {
  const src = rule.pattern.source;
  const problems: string[] = [];
  let inClass = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') { i++; continue; }
    if (inClass) { if (c === ']') inClass = false; continue; }
    if (c === '[') { inClass = true; continue; }
    if ((c === '*' || c === '+') && src[i - 1] !== '(' && src[i - 1] !== '?') problems.push(`unbounded ${c} at ${i}`);
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (m && m[2] !== undefined && m[3] === '') problems.push(`unbounded {n,} at ${i}`);
      if (m && Number(m[3] || m[1]) > 20_000) problems.push(`bound over 20,000 at ${i}`);
    }
  }
  const start = /^(?:\\b)?(?:\(\?:)*(?:[A-Za-z0-9:~<_!.-]|\\[.+$/]|\[[^\]]+\](?:\{\d+(?:,(\d+))?\})?)/.exec(src);
  if (!start) problems.push(`start: ${src.slice(0, 20)}`);
  else if (start[1] !== undefined && Number(start[1]) > 64) problems.push(`starts with a class repeated up to ${start[1]} times`);
  return problems;
}

describe('every pattern has the linear shape', () => {
  it.each(TOKEN_RULES.map((r, i) => [`${i} ${r.id}`, r] as const))('%s', (_label, rule) => {
    expect(shape(rule).filter((p) => !(UNBOUNDED_OK.has(rule.id) && p.startsWith('unbounded')))).toEqual([]);
  });
});

it('the shape check flags what it is meant to', () => {
  const rule = (source: string) => ({ ...TOKEN_RULES[1]!, pattern: new RegExp(source, 'g') });
  expect(shape(rule('ab[a-z]+'))).toEqual(['unbounded + at 7']);
  expect(shape(rule('ab(?:x|y)*'))).toEqual(['unbounded * at 9']);
  expect(shape(rule('ab[a-z]{5,}'))).toEqual(['unbounded {n,} at 7']);
  expect(shape(rule('ab[a-z]{1,30000}'))).toEqual(['bound over 20,000 at 7']);
  expect(shape(rule('[a-z]{1,100}ab'))).toEqual(['starts with a class repeated up to 100 times']);
  expect(shape(rule('(?<=x)ab'))).toEqual(['start: (?<=x)ab']);
  expect(shape(rule('ab[+*]{1,3}\\+c'))).toEqual([]);
});
