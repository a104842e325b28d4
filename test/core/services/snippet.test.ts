import { describe, expect, it } from 'vitest';
import { SNIPPET_CHARS, snippetOf } from '../../../src/core/services/search.js';

/** §4 session/search: a snippet is at most 160 characters (Unicode code points), the "…" marks included. */
const codePoints = (s: string) => Array.from(s).length;

describe('snippetOf: at most 160 code points, ellipses included', () => {
  it('cut at both ends, at the end only, at the start only, and astral text', () => {
    const both = snippetOf(`${'a'.repeat(100)}needle${'b'.repeat(400)}`, /needle/)!;
    expect([both.startsWith('…'), both.endsWith('…'), codePoints(both)]).toEqual([true, true, SNIPPET_CHARS]);
    const endOnly = snippetOf(`needle${'b'.repeat(400)}`, /needle/)!;
    expect([endOnly.startsWith('n'), endOnly.endsWith('…'), codePoints(endOnly)]).toEqual([true, true, SNIPPET_CHARS]);
    const startOnly = snippetOf(`${'a'.repeat(100)}needle${'b'.repeat(113)}`, /needle/)!; // 40 + 6 + 113 = 159 after the "…"
    expect([startOnly.startsWith('…'), startOnly.endsWith('b'), codePoints(startOnly)]).toEqual([true, true, SNIPPET_CHARS]);
    const astral = snippetOf(`${'😀'.repeat(100)}needle${'😀'.repeat(400)}`, /needle/)!;
    expect(codePoints(astral)).toBe(SNIPPET_CHARS);
    const exact = 'x'.repeat(SNIPPET_CHARS);
    expect(snippetOf(exact, /x/)).toBe(exact); // fits: not cut
  });
});
