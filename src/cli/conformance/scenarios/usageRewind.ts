import { expect, expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json, Peer } from '../wire.js';
import { assistant, newSession, readAll, type Rec, user } from './util.js';

const response = (payload: Json): Rec => ({ kind: 'api', direction: 'response', payload });
const request: Rec = { kind: 'api', direction: 'request', payload: {} };
const roles = (messages: Json[]) => messages.map((m) => `${String(m.role)}:${String(m.content)}`);

async function context(p: Peer, sessionId: string): Promise<string[]> {
  return roles((await p.call<{ messages: Json[] }>('session/context', { sessionId })).messages);
}

/** §17: session/usage (provider shapes, by model, after a restart) and session/rewind (context, turn, counters, refusals). */
export const usageRewind: Scenario = {
  name: 'usage-rewind',
  summary: 'session/usage totals by model from OpenAI/Anthropic/Gemini usage; session/rewind: context, turn, counters, refusals, after a restart',
  async run(t) {
    const store = t.newStore();
    const p = t.spawn(store);
    const caps = ((await p.initialize()).capabilities as Json | undefined)?.session as Json | undefined;
    if (caps?.usage !== true || caps?.rewind !== true) {
      for (const c of ['usage', 'rewind']) if (caps?.[c] !== true) t.skip(c, `capabilities.session.${c} is not advertised`);
      if (caps?.usage !== true && caps?.rewind !== true) return;
    }
    const sessionId = await newSession(p, { llm: { provider: 'openai', model: 'gpt-4o' }, systemPrompt: 'sys' });
    await p.call('session/append', { sessionId, records: [user('q1'), request, response({ model: 'gpt-4o', usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 } }), assistant('a1')] });
    await p.call('session/append', { sessionId, records: [
      request, response({ model: 'claude-sonnet-4', usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 50, cache_creation_input_tokens: 20 } }),
      request, response({ modelVersion: 'gemini-2.5-flash', usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 35 } }),
      request, response({ usage: { tokens: 9 } }), // an unknown shape: ignored
      { kind: 'message', message: { role: 'assistant', content: 'a2', usage: { prompt_tokens: 1, completion_tokens: 1 } } }, // no model: the session's
    ] });
    const expectedUsage = {
      'claude-sonnet-4': { input: 75, output: 7, cacheRead: 50, cacheWrite: 20, total: 82, requests: 1 },
      'gemini-2.5-flash': { input: 30, output: 5, cacheRead: 0, cacheWrite: 0, reasoning: 2, total: 35, requests: 1 },
      'gpt-4o': { input: 101, output: 11, cacheRead: 0, cacheWrite: 0, total: 112, requests: 2 },
    };
    if (caps?.usage === true) {
      await t.check('usage', async () => {
        const u = expectResult<Json>(await p.request('session/usage', { sessionId }));
        expectEqual([u.lastSeq, u.records], [11, 4], 'lastSeq and records');
        expectEqual(u.byModel, expectedUsage, 'byModel');
        expectEqual(u.total, { input: 206, output: 23, cacheRead: 50, cacheWrite: 20, reasoning: 2, total: 229, requests: 4 }, 'total');
        expectError(await p.request('session/usage', { sessionId: '01ZZZZZZZZZZZZZZZZZZZZZZZZ' }), -31001, 'SessionNotFound');
      });
    }
    if (caps?.rewind !== true) return;
    await t.check('rewind-context', async () => {
      const r = expectResult<Json>(await p.request('session/rewind', { sessionId, toSeq: 4, expectedLastSeq: 11 }));
      expectEqual(r, { seq: 12, toSeq: 4, turn: null }, 'result');
      expectEqual(await context(p, sessionId), ['system:sys', 'user:q1', 'assistant:a1'], 'context after the rewind');
      await p.call('session/append', { sessionId, records: [user('q2')] });
      expectEqual(await context(p, sessionId), ['system:sys', 'user:q1', 'assistant:a1', 'user:q2'], 'context after an append');
      const all = await readAll(p, sessionId);
      expectEqual(all.map((x) => x.seq), Array.from({ length: 13 }, (_, i) => i + 1), 'every record still read');
      expectEqual([all[11]?.kind, all[11]?.toSeq], ['rewind', 4], 'the rewind record');
    });
    await t.check('rewind-counters', async () => {
      // as of seq 4 no request was open; apiSeq 5 is next (4 were used), never a reused one
      expectError(await p.request('session/append', { sessionId, records: [response({})] }), -32602);
      await p.call('session/append', { sessionId, records: [request] });
      const apis = await readAll(p, sessionId, { kinds: ['api'] });
      expectEqual(apis.at(-1)?.apiSeq, 5, 'apiSeq after the rewind');
    });
    await t.check('rewind-turn', async () => {
      const before = (await readAll(p, sessionId)).length;
      const { turnId } = await p.call<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
      const refused = expectError(await p.request('session/rewind', { sessionId, toSeq: before + 1 }), -31003, 'Conflict');
      expectEqual((refused.data as Json | undefined)?.reason, 'turnPending', 'data.reason');
      await p.call('turn/fail', { sessionId, turnId, error: 'HTTP 429' });
      const r = await p.call<{ turn: Json }>('session/rewind', { sessionId, toSeq: before + 1 }); // retryable: allowed, active again
      expectEqual([r.turn?.turnId, r.turn?.status], [turnId, 'active'], 'the turn as of toSeq');
      const back = await p.call<{ turn: Json | null }>('session/rewind', { sessionId, toSeq: before }); // before the turn: gone
      expectEqual(back.turn, null, 'the turn before it started');
      expectEqual((await p.call<{ turn: Json | null }>('turn/get', { sessionId })).turn, null, 'turn/get');
    });
    await t.check('rewind-refusals', async () => {
      const { lastSeq } = await p.call<{ lastSeq: number }>('session/read', { sessionId, afterSeq: 1_000_000 });
      const out = expectError(await p.request('session/rewind', { sessionId, toSeq: lastSeq + 1 }), -31018, 'OutOfRange');
      expectEqual([out.data?.path, out.data?.min, out.data?.max], ['toSeq', 0, lastSeq], 'data.path, data.min, data.max');
      expectError(await p.request('session/rewind', { sessionId, toSeq: -1 }, { invalid: true }), -32602, 'InvalidParams');
      expectError(await p.request('session/rewind', { sessionId, toSeq: 1, expectedLastSeq: lastSeq - 1 }), -31003, 'Conflict');
      expectError(await p.request('session/append', { sessionId, records: [{ kind: 'rewind', toSeq: 1 }] }, { invalid: true }), -32602, 'InvalidParams');
      const after = await p.call<{ lastSeq: number }>('session/read', { sessionId, afterSeq: 1_000_000 });
      expectEqual(after.lastSeq, lastSeq, 'nothing was appended');
    });
    await t.check('after-restart', async () => {
      const ctx = await context(p, sessionId);
      await p.kill('SIGKILL');
      const q = await t.started(store);
      expectEqual(await context(q, sessionId), ctx, 'context after a restart');
      if (caps?.usage === true) expectEqual((await q.call<Json>('session/usage', { sessionId })).byModel, expectedUsage, 'usage after a restart');
      expect((await q.call<{ turn: unknown }>('turn/get', { sessionId })).turn === null, 'turn after a restart');
    });
  },
};
