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

  it('agrees with a naive search on random texts: keywords across the filter\'s slices, past its output limit, near non-ASCII', async () => {
    const words = ['sk', 'sk-ant-', 'redis-cli', 'ghp_', '00', 'test_', 'token', 'akia', 'xoxb-'];
    const scanner = new KeywordScanner(words);
    const naive = (t: string) => words.filter((w) => t.toLowerCase().includes(w)).sort();
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const alphabet = ['a', 'S', 'k', '-', '0', 'é', '€', '😀', ' ', 'T', 'o', 'E', 'n', '_', 'g', 'h', 'P', 'x', 'B', 'I', 'A'];
    for (let round = 0; round < 300; round++) {
      const n = rand(4) === 0 ? 349_000 + rand(2_000) : rand(200);
      let t = '';
      for (let i = 0; i < n; i++) t += alphabet[rand(alphabet.length)];
      const planted = round % 3 === 0 ? `${t.slice(0, n >> 1)}${words[rand(words.length)]!.toUpperCase()}${t.slice(n >> 1)}` : t;
      expect([...scanner.find(planted)].sort(), `round ${round}`).toEqual(naive(planted));
    }
    // more candidate positions than one call of the filter returns (4,096), the keyword after them
    expect([...scanner.find(`${'sz'.repeat(10_000)}ghp_`)]).toEqual(['ghp_']);
    // a keyword across the boundary of two slices (349,525 characters each)
    for (const at of [349_520, 349_522, 349_524]) expect([...scanner.find(`${'€'.repeat(at)}redis-cli`)], String(at)).toEqual(['redis-cli']);
    // findSliced: the same answer, across its own (smaller) slices
    for (const at of [100, 1000 - 5, 1000 - 3]) expect([...await scanner.findSliced(`${'x'.repeat(at)}REDIS-CLI ghp_`, 1000)].sort(), String(at)).toEqual(['ghp_', 'redis-cli']);
  }, 120_000);

  it('refuses keywords it cannot find', () => {
    expect(() => new KeywordScanner(['x'])).toThrow();
    expect(() => new KeywordScanner(['Upper'])).toThrow();
    expect(() => new KeywordScanner(['clé'])).toThrow();
  });
});
