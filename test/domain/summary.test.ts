import { describe, expect, it } from 'vitest';
import { batchSummaries, summarizeRecord } from '../../src/domain/summary.js';

const msg = (role: string, content: unknown) => ({ kind: 'message', message: { role, content } });

describe('summaries', () => {
  it('cut at 120 code points, by unit when there is no surrogate, by code point otherwise', () => {
    expect(summarizeRecord(msg('user', 'a'.repeat(200)))).toBe(`user: ${'a'.repeat(113)}…`);
    const exact = `${'a'.repeat(112)}😀`; // "user: " + 113 code points = 119 ... plus one more
    expect(summarizeRecord(msg('user', `${exact}b`))).toBe(`user: ${exact}b`); // 120 code points, 121 units: kept whole
    expect(summarizeRecord(msg('user', `${exact}bc`))).toBe(`user: ${exact}…`); // 121 code points: cut, the pair never split
    expect(Array.from(summarizeRecord(msg('user', '😀'.repeat(200))) as string)).toHaveLength(120);
  });

  it('a batch contributes its first message (when the session has none yet) and its last one', () => {
    const batch = [{ kind: 'note' }, msg('user', 'first'), msg('assistant', 'middle'), msg('user', 'last'), { kind: 'event' }, msg('system', '  ')];
    expect(batchSummaries(batch, true)).toEqual(['user: first', 'user: last']);
    expect(batchSummaries(batch, false)).toEqual(['user: last']);
    expect(batchSummaries([msg('user', 'only')], true)).toEqual(['user: only']);
    expect(batchSummaries([{ kind: 'note' }], true)).toEqual([]);
  });
});
