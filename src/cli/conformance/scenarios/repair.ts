import { expect, expectEqual, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { newSession, user } from './util.js';

/** §11.8: a kill mid tool call leaves a context the provider accepts. */
export const repair: Scenario = {
  name: 'context-repair',
  summary: 'SIGKILL mid tool call: session/context synthesizes the missing tool result; the turn stays pending',
  async run(t) {
    const store = t.newStore();
    const p = await t.started(store);
    const sessionId = await newSession(p, { systemPrompt: 'sys', turns: 'auto' });
    await p.call('session/append', { sessionId, records: [user('run ls')] });
    await p.call('session/append', {
      sessionId,
      records: [
        { kind: 'message', message: { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'bash', arguments: '{"cmd":"ls"}' }, { id: 'c2', name: 'bash', arguments: '{}' }] } },
        { kind: 'message', message: { role: 'tool', toolCallId: 'c1', name: 'bash', content: 'a b' } },
        { kind: 'toolStart', requestId: 'r', tool: 'bash', toolUseId: 'c2' },
      ],
    });
    await p.kill('SIGKILL');
    const q = await t.started(store);
    await t.check('open-after-kill', async () => {
      const r = expectResult<Json>(await q.request('session/open', { sessionId }));
      expectEqual((r.turn as Json | null)?.status, 'active', 'turn status');
    });
    await t.check('context-well-formed', async () => {
      const r = expectResult<{ messages: Json[] }>(await q.request('session/context', { sessionId }));
      expectEqual(r.messages.map((m) => m.role), ['system', 'user', 'assistant', 'tool', 'tool'], 'roles');
      const last = r.messages[4] as Json;
      expectEqual([last.toolCallId, last.name], ['c2', 'bash'], 'synthetic result');
      expect(typeof last.content === 'string' && last.content.startsWith('[cancelled'), 'synthetic result content');
    });
    await t.check('prune', async () => {
      const r = expectResult<{ messages: Json[] }>(await q.request('session/context', { sessionId, prune: { keepRecentToolOutputs: 0, maxToolOutputChars: 1 } }));
      // §11.8's exact content: the kept characters, a line feed, the marker, nothing after it
      expectEqual(r.messages[3]?.content, 'a\n[\u2026 2 characters pruned]', 'pruned tool output');
    });
  },
};
