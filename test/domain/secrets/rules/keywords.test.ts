import { describe, expect, it } from 'vitest';
import { KeywordScanner } from '../../../../src/domain/secrets/rules/keywords.js';

/** The one-pass keyword finder the token rules dispatch on (rules/keywords.ts). */
describe('KeywordScanner', () => {
  const sc = new KeywordScanner(['sk', 'sk-ant-', 'redis-cli', 'ghp_', '00', 'test_']);

  it('finds every keyword that occurs, case-insensitively, and no other', () => {
    expect([...sc.find('use SK-ANT-x and Redis-CLI, also GHP_abc')].sort()).toEqual(['ghp_', 'redis-cli', 'sk', 'sk-ant-']);
    expect([...sc.find('a red dish, the rest; test')]).toEqual([]); // `re`, `te`, `st` bigrams, no keyword
    expect([...sc.find('unit_test_1')]).toEqual(['test_']);
  });

  it('finds keywords at the start and at the very end of the text', () => {
    expect([...sc.find('sk')]).toEqual(['sk']);
    expect([...sc.find('x 00')]).toEqual(['00']);
    expect([...sc.find('ghp_')]).toEqual(['ghp_']);
    expect([...sc.find('ghp')]).toEqual([]);
    expect([...sc.find('')]).toEqual([]);
  });

  it('skips non-ASCII characters and stops early when asked', () => {
    expect([...sc.find('é sk ü ghp_ ß')].sort()).toEqual(['ghp_', 'sk']);
    expect(sc.find('sk ghp_ 00', 1).size).toBe(1);
    expect(sc.has('nothing here')).toBe(false);
    expect(sc.has('GHP_')).toBe(true);
  });

  it('refuses keywords it cannot find', () => {
    expect(() => new KeywordScanner(['x'])).toThrow();
    expect(() => new KeywordScanner(['Upper'])).toThrow();
    expect(() => new KeywordScanner(['clé'])).toThrow();
  });
});
