import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { CLI, FRAMINGS, rejection, startSidecar } from './harness.js';

type Rec = Record<string, unknown>;
const CONFLICT = -31003;
const INVALID_PARAMS = -32602;

const api = (direction: 'request' | 'response', payload: Rec = {}) => ({ kind: 'api' as const, direction, payload });
const msg = (role: string, content: string, extra: Rec = {}) => ({ kind: 'message' as const, message: { role, content, ...extra } });

describe.each(FRAMINGS)('session/usage and session/rewind over %s', (framing) => {
  it('usage by model across provider shapes, kept through a SIGKILL and a compaction', async () => {
    const store = tempDir('sidecar-store-');
    const a = await startSidecar({ framing, store });
    const { sessionId } = await a.create({ llm: { model: 'gpt-4.1' } });
    await a.append({ sessionId, records: [
      msg('user', 'hi'), api('request'),
      api('response', { model: 'gpt-4.1', usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, completion_tokens_details: { reasoning_tokens: 2 } } }),
      api('request'), api('response', { model: 'claude-opus-4', usage: { input_tokens: 3, output_tokens: 9, cache_read_input_tokens: 100 } }),
      msg('assistant', 'done', { usage: { promptTokenCount: 1 } }), // not a Gemini usageMetadata: ignored
    ] });
    const usage = await a.request<Rec>('session/usage', { sessionId });
    expect(usage).toEqual({
      lastSeq: 6, records: 2,
      total: { input: 113, output: 13, cacheRead: 100, cacheWrite: 0, total: 126, requests: 2, reasoning: 2 },
      byModel: {
        'claude-opus-4': { input: 103, output: 9, cacheRead: 100, cacheWrite: 0, total: 112, requests: 1 },
        'gpt-4.1': { input: 10, output: 4, cacheRead: 0, cacheWrite: 0, total: 14, requests: 1, reasoning: 2 },
      },
    });
    await a.kill('SIGKILL');
    const b = await startSidecar({ framing, store });
    expect(await b.request('session/usage', { sessionId })).toEqual(usage);
    await b.open({ sessionId });
    await b.request('session/compact', { sessionId, summary: 'greeting', throughSeq: 6 });
    expect(await b.request('session/usage', { sessionId })).toEqual(usage);
    await b.shutdown();
  });

  it('rewind: context as of toSeq, every record still read, counters not reused, turn rule, after a SIGKILL', async () => {
    const store = tempDir('sidecar-store-');
    const a = await startSidecar({ framing, store });
    const { sessionId } = await a.create({ systemPrompt: 'sys' });
    await a.append({ sessionId, records: [msg('user', 'q1'), api('request'), api('response'), msg('assistant', 'a1')] });
    await a.append({ sessionId, records: [msg('user', 'q2'), api('request'), msg('assistant', 'partial')] });
    expect(await a.request('session/rewind', { sessionId, toSeq: 4, expectedLastSeq: 7 })).toEqual({ seq: 8, toSeq: 4, turn: null });
    const context = async (c: typeof a) => ((await c.request<{ messages: Rec[] }>('session/context', { sessionId })).messages).map((m) => m.content);
    expect(await context(a)).toEqual(['sys', 'q1', 'a1']);
    const { records } = await a.read({ sessionId });
    expect((records as Rec[]).map((r) => r.kind)).toEqual(['message', 'api', 'api', 'message', 'message', 'api', 'message', 'rewind']);
    expect(records[7]).toEqual({ seq: 8, ts: expect.any(String), kind: 'rewind', toSeq: 4, turn: null, openApi: [] });
    // apiSeq 2 was open at seq 7, not as of seq 4: a response has nothing to pair with; the next request is apiSeq 3
    expect((await rejection(a.append({ sessionId, records: [api('response')] }))).code).toBe(INVALID_PARAMS);
    await a.append({ sessionId, records: [api('request')] });
    const { turnId } = await a.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
    const refused = await rejection(a.request('session/rewind', { sessionId, toSeq: 10 }));
    expect([refused.code, (refused.data as Rec).reason, (refused.data as Rec).turnId]).toEqual([CONFLICT, 'turnPending', turnId]);
    expect((await rejection(a.request('session/rewind', { sessionId, toSeq: 99 }))).code).toBe(-31018); // OutOfRange
    await a.request('session/rewind', { sessionId, toSeq: 9 }); // before the turn: allowed, the turn is gone
    expect(await a.request('turn/get', { sessionId })).toEqual({ turn: null });
    await a.append({ sessionId, records: [msg('user', 'q3')] });
    await a.kill('SIGKILL');
    const b = await startSidecar({ framing, store });
    expect(await context(b)).toEqual(['sys', 'q1', 'a1', 'q3']);
    await b.open({ sessionId });
    await b.append({ sessionId, records: [api('response'), api('request')] });
    const apis = ((await b.read({ sessionId, kinds: ['api'] })).records as Rec[]).map((r) => r.apiSeq);
    expect(apis).toEqual([1, 1, 2, 3, 3, 4]);
    await b.shutdown();
  });

  it('a subscriber gets the rewind record and turn/didChange with the turn as of toSeq', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create({});
    const { turnId } = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' }); // 1
    await c.request('turn/fail', { sessionId, turnId, error: 'HTTP 500' }); // 2: retryable
    await c.request('session/subscribe', { sessionId, afterSeq: 2 });
    await c.request('session/rewind', { sessionId, toSeq: 1 }); // 3: active again
    const changes = () => c.notifications.filter((n) => n.method === 'turn/didChange').map((n) => (n.params as { turn: Rec | null }).turn);
    const start = Date.now();
    while (changes().length === 0 && Date.now() - start < 10_000) await new Promise((r) => setTimeout(r, 20));
    expect(changes()).toEqual([expect.objectContaining({ turnId, status: 'active' })]);
    const appended = c.notifications.filter((n) => n.method === 'session/didAppend').flatMap((n) => (n.params as { records: Rec[] }).records);
    expect(appended.map((r) => [r.seq, r.kind])).toEqual([[3, 'rewind']]);
    await c.shutdown();
  });

  it('an ephemeral session has usage totals and rewinds too', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.request<{ sessionId: string }>('session/create', { ephemeral: true, llm: { model: 'm' } });
    await c.append({ sessionId, records: [msg('user', 'a'), msg('assistant', 'b', { usage: { prompt_tokens: 3, completion_tokens: 1 } })] });
    expect((await c.request<Rec>('session/usage', { sessionId })).byModel).toEqual({ m: { input: 3, output: 1, cacheRead: 0, cacheWrite: 0, total: 4, requests: 1 } });
    expect(await c.request('session/rewind', { sessionId, toSeq: 1 })).toEqual({ seq: 3, toSeq: 1, turn: null });
    expect((await c.request<{ messages: Rec[] }>('session/context', { sessionId })).messages).toEqual([{ role: 'user', content: 'a' }]);
    await c.shutdown();
  });

  it('the conformance scenario usage-rewind passes against the sidecar', async () => {
    const child = spawn('node', [CLI, 'conformance', '--framing', framing, '--scenario', 'usage-rewind', '--', 'node', CLI, 'serve', '--store', '{store}'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stdout.split('\n').filter((l) => l.startsWith('FAIL') || l.startsWith('SKIP'))).toEqual([]);
    expect(stdout).toMatch(/PASS\s+\S+\s+usage-rewind:rewind-turn/);
    expect(code).toBe(0);
  }, 120_000);
});
