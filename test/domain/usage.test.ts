import { describe, expect, it } from 'vitest';
import { NO_USAGE, normalizeUsage, reduceUsage, shownUsage, usageOfRecord } from '../../src/domain/usage.js';

const resp = (payload: unknown) => ({ kind: 'api', direction: 'response', payload });

describe('usage extraction (pure)', () => {
  it('a sum that would pass 2^53 leaves the totals as they were (never an inexact sum)', () => {
    const big = Number.MAX_SAFE_INTEGER - 5;
    let u = reduceUsage(NO_USAGE, resp({ model: 'm', usage: { prompt_tokens: big, completion_tokens: 0 } }));
    expect(u.total.input).toBe(big);
    const before = u;
    u = reduceUsage(u, resp({ model: 'm', usage: { prompt_tokens: 10, completion_tokens: 0 } }));
    expect(u).toBe(before);
    u = reduceUsage(u, resp({ model: 'm', usage: { prompt_tokens: 5, completion_tokens: 0 } }));
    expect(u.total.input).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('shapes: the model of an api payload, modelVersion only for api records; usage wins over usageMetadata; checkpoint totals replace', () => {
    expect(usageOfRecord(resp({ modelVersion: 'g', usageMetadata: { promptTokenCount: 1 } }))?.model).toBe('g');
    expect(usageOfRecord({ kind: 'message', message: { role: 'assistant', modelVersion: 'g', usageMetadata: { promptTokenCount: 1 } } })?.model).toBe('');
    expect(usageOfRecord({ kind: 'api', direction: 'request', payload: { usage: { prompt_tokens: 1 } } })).toBeUndefined();
    expect(normalizeUsage({ input_tokens: 2, output_tokens: 3, total_tokens: 5 }, false)).toEqual({ input: 2, output: 3, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 5, requests: 1 });
    expect(normalizeUsage({ candidatesTokenCount: 4 }, true)).toEqual({ input: 0, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 4, requests: 1 });
    const counted = reduceUsage(NO_USAGE, resp({ usage: { prompt_tokens: 1, completion_tokens: 1 } }));
    expect(reduceUsage(counted, { kind: 'checkpoint' })).toEqual(NO_USAGE); // an old checkpoint without usage: none
    expect(reduceUsage(NO_USAGE, { kind: 'checkpoint', usage: counted })).toEqual(counted);
  });

  it('shown: records naming no model go to the default model (merged with records naming it), else "unknown"', () => {
    let u = reduceUsage(NO_USAGE, resp({ usage: { prompt_tokens: 1, completion_tokens: 1 } }));
    u = reduceUsage(u, resp({ model: 'gpt', usage: { prompt_tokens: 2, completion_tokens: 2 } }));
    expect(Object.keys(shownUsage(u, undefined).byModel)).toEqual(['gpt', 'unknown']);
    expect(shownUsage(u, 'gpt').byModel).toEqual({ gpt: { input: 3, output: 3, cacheRead: 0, cacheWrite: 0, total: 6, requests: 2 } });
  });
});
