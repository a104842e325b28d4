import { describe, expect, it } from 'vitest';
import { expandExample, seededRandom } from '../../../src/domain/secrets/rules/examples.js';
import { placeholder, redactTokens, TOKEN_RULES } from '../../../src/domain/secrets/tokenRules.js';

/**
 * The rule table is data (src/domain/secrets/rules/): every rule names what it finds and where
 * the format comes from, and carries examples — texts it must redact and texts no rule may
 * change. This runs every example, expanded from its template with three seeds.
 */

const SEEDS = [1, 27, 0x5eed];

describe('every rule documents itself', () => {
  it.each(TOKEN_RULES.map((r, i) => [`${i} ${r.id}`, r] as const))('%s has a description, a source and examples of both kinds', (_label, rule) => {
    expect(rule.description.length).toBeGreaterThan(10);
    expect(rule.source).toMatch(/^(?:https:\/\/\S+|gitleaks:[a-z0-9-]+|trufflehog:[a-z0-9_/]+)$/);
    expect(rule.examples.redacted.length).toBeGreaterThanOrEqual(1);
    expect(rule.examples.kept.length).toBeGreaterThanOrEqual(1);
    for (const k of rule.keywords) expect(k, 'keywords are lower case').toBe(k.toLowerCase());
  });
});

describe.each(TOKEN_RULES.map((r, i) => [`${i} ${r.id}`, r] as const))('rule %s', (_label, rule) => {
  it.each(rule.examples.redacted.map((t) => [t]))('redacts %s', (template) => {
    for (const seed of SEEDS) {
      const text = expandExample(template, seededRandom(seed));
      const hits: string[] = [];
      const out = redactTokens(text, (r) => hits.push(r));
      expect(hits, `${text} -> ${out}`).toContain(rule.id);
      expect(out).toContain(placeholder(rule.id));
      expect(redactTokens(out), 'idempotent').toBe(out);
    }
  });

  it.each(rule.examples.kept.map((t) => [t]))('keeps %s', (template) => {
    for (const seed of SEEDS) {
      const text = expandExample(template, seededRandom(seed));
      expect(redactTokens(text)).toBe(text);
      expect(redactTokens(` ${text} `)).toBe(` ${text} `);
    }
  });
});

it('examples expand deterministically, and a template holds no literal token', () => {
  expect(expandExample('sntryu_{hex:64}', seededRandom(3))).toBe(expandExample('sntryu_{hex:64}', seededRandom(3)));
  expect(expandExample('sntryu_{hex:64}', seededRandom(3))).toMatch(/^sntryu_[0-9a-f]{64}$/);
  expect(expandExample('x-{uuid}', seededRandom(3))).toMatch(/^x-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(expandExample('${TOKEN}', seededRandom(3))).toBe('${TOKEN}');
  for (const r of TOKEN_RULES.filter((x) => x.group === undefined)) {
    for (const t of [...r.examples.redacted, ...r.examples.kept]) {
      // Unexpanded, a token template is never itself a token (so the source trips no secret scanner).
      expect(redactTokens(t), `${r.id}: ${t}`).toBe(t);
    }
  }
});
