import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/domain/errors.js';
import { parseDuration, selectForPrune } from '../../src/domain/retention.js';

const H = 3_600_000;
const D = 24 * H;

describe('retention: the duration grammar (protocol §18.1)', () => {
  it('accepts <n><unit> and ISO 8601 weeks, days, hours, minutes, seconds', () => {
    expect(parseDuration('30d', 'x')).toBe(30 * D);
    expect(parseDuration('12h', 'x')).toBe(12 * H);
    expect(parseDuration('90m', 'x')).toBe(90 * 60_000);
    expect(parseDuration('45s', 'x')).toBe(45_000);
    expect(parseDuration('2w', 'x')).toBe(14 * D);
    expect(parseDuration('0s', 'x')).toBe(0);
    expect(parseDuration('P30D', 'x')).toBe(30 * D);
    expect(parseDuration('PT12H', 'x')).toBe(12 * H);
    expect(parseDuration('P1DT6H', 'x')).toBe(30 * H);
    expect(parseDuration('P1W', 'x')).toBe(7 * D);
    expect(parseDuration('PT1M30S', 'x')).toBe(90_000);
  });

  it('refuses anything else with InvalidArgument at the given path', () => {
    for (const bad of ['', '30', 'd', '30D', '1y', '1.5h', '-1d', ' 1d', '1d ', 'P', 'PT', 'P1M', 'P1Y', 'PT1D', '1e3s', '1dd']) {
      let err: unknown;
      try {
        parseDuration(bad, 'olderThan');
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(StoreError);
      expect((err as StoreError).details, bad).toMatchObject({ path: 'olderThan' });
    }
  });
});

describe('retention: selection', () => {
  const now = Date.parse('2026-12-01T00:00:00.000Z');
  const at = (daysAgo: number) => new Date(now - daysAgo * D).toISOString();
  const all = [
    { sessionId: 'a', updatedAt: at(40), tags: ['ci'] },
    { sessionId: 'b', updatedAt: at(35) },
    { sessionId: 'c', updatedAt: at(31), tags: ['ci', 'x'] },
    { sessionId: 'd', updatedAt: at(29), tags: ['ci'] },
  ];
  const ids = (x: Array<{ sessionId: string }>) => x.map((s) => s.sessionId);

  it('older than the cutoff (strictly), newest first; keepLast keeps the newest of those; tags are all required', () => {
    expect(ids(selectForPrune(all, { olderThanMs: 30 * D }, now))).toEqual(['c', 'b', 'a']);
    expect(ids(selectForPrune(all, { olderThanMs: 31 * D }, now))).toEqual(['b', 'a']);
    expect(ids(selectForPrune(all, { olderThanMs: 30 * D, keepLast: 1 }, now))).toEqual(['b', 'a']);
    expect(ids(selectForPrune(all, { olderThanMs: 30 * D, keepLast: 3 }, now))).toEqual([]);
    expect(ids(selectForPrune(all, { olderThanMs: 30 * D, tags: ['ci'] }, now))).toEqual(['c', 'a']);
    expect(ids(selectForPrune(all, { olderThanMs: 30 * D, tags: ['ci', 'x'] }, now))).toEqual(['c']);
    expect(ids(selectForPrune(all, { olderThanMs: 0, tags: ['ci'], keepLast: 1 }, now))).toEqual(['c', 'a']);
  });
});
