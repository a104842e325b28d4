/**
 * Store contract: session/usage — every provider shape normalized, by model, ignored shapes,
 * kept at commit time (after reopen, after compaction: the checkpoint carries the totals), and
 * left as they are by a rewind.
 */
import { expect, it } from 'vitest';
import type { RecordInput } from '../../src/domain/types.js';
import { eachBackend, msg, note, readAll } from './backends.js';

const response = (payload: unknown): RecordInput => ({ kind: 'api', direction: 'response', payload });
const request = (payload: unknown = { model: 'gpt-4o' }): RecordInput => ({ kind: 'api', direction: 'request', payload });
const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, requests: 0 };

const openai = { model: 'gpt-4o', usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 40 }, completion_tokens_details: { reasoning_tokens: 5 } } };
const anthropic = { model: 'claude-sonnet-4', usage: { input_tokens: 10, output_tokens: 7, cache_creation_input_tokens: 30, cache_read_input_tokens: 200 } };
const gemini = { modelVersion: 'gemini-2.5-pro', usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 8, thoughtsTokenCount: 4, cachedContentTokenCount: 10, totalTokenCount: 62 } };
const responses = { model: 'gpt-5', usage: { input_tokens: 9, output_tokens: 3, total_tokens: 12, input_tokens_details: { cached_tokens: 2 }, output_tokens_details: { reasoning_tokens: 1 } } };

eachBackend('usage', (setup) => {
  it('normalizes OpenAI, OpenAI Responses, Anthropic and Gemini usage, by model, counting each record once', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({ llm: { provider: 'openai', model: 'gpt-default' } });
    expect(await f.store.usage(id)).toEqual({ lastSeq: 0, records: 0, total: zero, byModel: {} });
    await f.store.append(id, [request(), response(openai)]);
    await f.store.append(id, [request(), response(anthropic), request(), response(gemini), request(), response(responses)]);
    // a message's own usage object counts too; one naming no model goes to the session's llm.model
    await f.store.append(id, [msg({ role: 'assistant', content: 'hi', usage: { prompt_tokens: 1, completion_tokens: 2 } })]);
    const u = await f.store.usage(id);
    expect(u.lastSeq).toBe(9);
    expect(u.records).toBe(5);
    expect(u.byModel).toEqual({
      'claude-sonnet-4': { input: 240, output: 7, cacheRead: 200, cacheWrite: 30, total: 247, requests: 1 },
      'gemini-2.5-pro': { input: 50, output: 12, cacheRead: 10, cacheWrite: 0, reasoning: 4, total: 62, requests: 1 },
      'gpt-4o': { input: 100, output: 20, cacheRead: 40, cacheWrite: 0, reasoning: 5, total: 120, requests: 1 },
      'gpt-5': { input: 9, output: 3, cacheRead: 2, cacheWrite: 0, reasoning: 1, total: 12, requests: 1 },
      'gpt-default': { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, total: 3, requests: 1 },
    });
    expect(u.total).toEqual({ input: 400, output: 44, cacheRead: 252, cacheWrite: 30, reasoning: 10, total: 444, requests: 5 });
  });

  it('ignores unknown shapes, requests, non-integer and negative counts; a session without llm.model says "unknown"', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [
      request({ model: 'm', usage: { prompt_tokens: 1000 } }), // a request's usage is not spent tokens
      response({ model: 'm', usage: { tokens: 5, cost: 1 } }), // unknown shape
      request(), response({ model: 'm', usage: { prompt_tokens: 1.5, completion_tokens: -2 } }), // no valid count: not counted
      request(), response({ model: 'm', usage: 'lots' }),
      msg({ role: 'assistant', content: 'x', usage: { input_tokens: '10' } }),
      note(1, { usage: { prompt_tokens: 7 } }), // not an api response nor a message
      request(), response({ usage: { prompt_tokens: 3, completion_tokens: 1.5, total_tokens: 3 } }), // the valid counts of an object count
    ]);
    const u = await f.store.usage(id);
    expect(u.records).toBe(1);
    expect(u.byModel).toEqual({ unknown: { input: 3, output: 0, cacheRead: 0, cacheWrite: 0, total: 3, requests: 1 } });
  });

  it('totals survive a reopen (index or row) and a compaction (the checkpoint carries them), and a rewind leaves them', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [request(), response(openai)]);
    await f.store.append(id, [request(), response(anthropic)]);
    await f.store.append(id, [note(1)]);
    const before = await f.store.usage(id);
    expect(before.records).toBe(2);
    await f.store.compact(id, { summary: 'the start', throughSeq: 3 });
    const [checkpoint] = await readAll(f.store, id);
    expect(checkpoint).toMatchObject({ kind: 'checkpoint', usage: { records: 1, total: { input: 100, requests: 1 } } });
    expect(await f.store.usage(id)).toEqual(before);
    await f.store.rewind(id, 3);
    expect(await f.store.usage(id)).toEqual({ ...before, lastSeq: 6 });
    await f.store.append(id, [request(), response(gemini)]);
    const after = await f.store.usage(id);
    expect(after.records).toBe(3);
    await f.store.close(id);
    const other = await f.reopen();
    expect(await other.usage(id)).toEqual(after);
    await other.open(id, 'write');
    await other.append(id, [msg({ role: 'assistant', content: 'y', model: 'gpt-4o', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })]);
    expect((await other.usage(id)).byModel['gpt-4o']).toEqual({ input: 101, output: 21, cacheRead: 40, cacheWrite: 0, reasoning: 5, total: 122, requests: 2 });
  });

  it('a fork counts the usage of the records it copies', async () => {
    const f = await setup();
    const { sessionId: id } = await f.store.create({});
    await f.store.append(id, [request(), response(openai)]);
    await f.store.append(id, [request(), response(anthropic)]);
    const { sessionId: forked } = await f.store.fork(id, 2);
    const u = await f.store.usage(forked);
    expect(u).toMatchObject({ lastSeq: 2, records: 1 });
    expect(Object.keys(u.byModel)).toEqual(['gpt-4o']);
  });
});
