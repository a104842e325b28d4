/**
 * Store contract: session context — what is sent to the provider on resume, repaired (every
 * tool call answered, a synthetic cancelled result for an unanswered one), interruptions, pruning.
 */
import { expect, it } from 'vitest';
import { CANCELLED_RESULT } from '../../src/domain/turns/context.js';
import type { ContextMessage } from '../../src/domain/types.js';
import { call, calls, eachBackend, final, msg, note, readAll, tool, user } from './backends.js';

const SYSTEM = 'You are a careful agent.';
const cancelled = (id: string, name = 'bash') => ({ role: 'tool', toolCallId: id, name, content: CANCELLED_RESULT });

/** Every assistant tool call answered by exactly one tool message right after it; no stray tool message. */
function expectWellFormed(messages: ContextMessage[]): void {
  let open: string[] = [];
  let inToolRun = false;
  for (const m of messages) {
    if (m.role === 'tool') {
      expect(inToolRun && open.includes(m.toolCallId as string)).toBe(true);
      open = open.filter((c) => c !== m.toolCallId);
      continue;
    }
    expect(open).toEqual([]);
    inToolRun = false;
    if (m.role === 'assistant' && Array.isArray(m.toolCalls) && m.toolCalls.length > 0) {
      open = (m.toolCalls as Array<{ id: string }>).map((c) => c.id);
      inToolRun = true;
    }
  }
  expect(open).toEqual([]);
}

eachBackend('context', (setup) => {
  const session = async (turns: 'manual' | 'auto') => {
    const f = await setup();
    const { sessionId } = await f.store.create({ turns, systemPrompt: SYSTEM });
    return { f, s: f.store, id: sessionId };
  };

  it('the system prompt first; every tool call answered before the next message (synthetic cancelled results); notes and turns left out', async () => {
    const { f, s, id } = await session('manual');
    await s.append(id, [user('a'), calls('x1', 'x2'), tool('x2', 'two'), note(1), user('b'), calls('y1'), final('c')]);
    const { messages } = await s.context(id);
    expect(messages).toEqual([
      { role: 'system', content: SYSTEM }, { role: 'user', content: 'a' },
      { role: 'assistant', content: null, toolCalls: [call('x1'), call('x2')] },
      { role: 'tool', toolCallId: 'x2', name: 'bash', content: 'two' }, cancelled('x1'),
      { role: 'user', content: 'b' }, { role: 'assistant', content: null, toolCalls: [call('y1')] }, cancelled('y1'),
      { role: 'assistant', content: 'c' },
    ]);
    expectWellFormed(messages);
    expect((await (await f.reopen()).context(id)).messages).toEqual(messages);
    const { sessionId: bare } = await s.create({});
    await s.append(bare, [note(1), { kind: 'event', type: 'x', payload: 1 }, user('only')]);
    expect((await s.context(bare)).messages).toEqual([{ role: 'user', content: 'only' }]);
  });

  it('after a crash mid-tool the next writer\'s context answers the call with a synthetic result; resume, result and answer complete the turn', async () => {
    const { f, s, id } = await session('auto');
    await s.append(id, [user('run the tests')]);
    await s.append(id, [calls('t1')]);
    await f.crash(s);
    const s2 = await f.reopen();
    const opened = await s2.open(id, 'write');
    expect(opened.turn).toMatchObject({ status: 'active', phase: 'executingTools', kind: 'user', firstSeq: 1 });
    const ctx = await s2.context(id);
    expect(ctx.messages.at(-1)).toEqual(cancelled('t1'));
    expectWellFormed(ctx.messages);
    expect(ctx.turn).toEqual(opened.turn);
    const turnId = opened.turn!.turnId;
    await s2.transitionTurn(id, turnId, { event: 'resume' });
    await s2.append(id, [tool('t1', 'all green')]);
    await s2.append(id, [final('Tests pass.')]);
    expect(await s2.getTurn(id)).toMatchObject({ turnId, status: 'completed', phase: 'providerStream' });
    const after = await s2.context(id);
    expect(after.messages.slice(3)).toEqual([{ role: 'tool', toolCallId: 't1', name: 'bash', content: 'all green' }, { role: 'assistant', content: 'Tests pass.' }]);
  });

  it('an interruption finishes the pending turn as interrupted in the same batch; context keeps declared results, cancels the rest, drops partial calls', async () => {
    const { f, s, id } = await session('auto');
    await s.append(id, [user('build it'), calls('c1', 'c2', 'c3')]);
    const turnId = (await s.getTurn(id))!.turnId;
    await s.append(id, [
      tool('c1', 'built'),
      {
        kind: 'interruption', reason: 'user cancelled', phase: 'executingTools',
        toolCalls: [call('c4', 'rm', '{"path":')],
        toolResults: [{ id: 'c2', name: 'bash', result: { exit: 0 } }, { id: 'c1', name: 'bash', result: 'dup' }, { id: 'c9', name: 'bash', result: 'undeclared' }],
      },
    ]);
    const t = await s.getTurn(id);
    expect(t).toEqual({ turnId, kind: 'user', phase: 'providerStream', status: 'interrupted', firstSeq: 1, lastSeq: 8 });
    expect((await readAll(s, id)).slice(-4).map((r) => [r.seq, r.kind, r.event ?? null, r.turnId])).toEqual([
      [5, 'message', null, turnId], [6, 'turn', 'phase', turnId], [7, 'interruption', null, turnId], [8, 'turn', 'finish', turnId],
    ]);
    await s.close(id);
    const ctx = await (await f.reopen()).context(id);
    expectWellFormed(ctx.messages);
    expect(ctx.messages.slice(1)).toEqual([
      { role: 'user', content: 'build it' },
      { role: 'assistant', content: null, toolCalls: [call('c1'), call('c2'), call('c3')] },
      { role: 'tool', toolCallId: 'c1', name: 'bash', content: 'built' },
      { role: 'tool', toolCallId: 'c2', name: 'bash', content: '{"exit":0}' },
      cancelled('c3'),
    ]);
    for (const gone of ['c4', 'undeclared', 'dup']) expect(JSON.stringify(ctx.messages)).not.toContain(gone);
    expect(ctx.turn).toEqual(t);
  });

  it('an interruption while streaming keeps the partial text, never its partial tool calls; a new turn may follow', async () => {
    const { s, id } = await session('auto');
    await s.append(id, [user('write a poem')]);
    await s.append(id, [{ kind: 'interruption', reason: 'timeout', phase: 'providerStream', assistantText: 'Roses are', toolCalls: [call('p1', 'search', '{"q":')] }]);
    expect(await s.getTurn(id)).toMatchObject({ status: 'interrupted' });
    await s.append(id, [{ kind: 'interruption', reason: 'twice', phase: 'providerStream', assistantText: '   ' }]);
    await s.append(id, [user('go on')]);
    const ctx = await s.context(id);
    expect(ctx.messages).toEqual([
      { role: 'system', content: SYSTEM }, { role: 'user', content: 'write a poem' }, { role: 'assistant', content: 'Roses are' }, { role: 'user', content: 'go on' },
    ]);
    expect(ctx.turn).toMatchObject({ status: 'active', kind: 'user' });
  });

  it('reasoningDetails and provider members round-trip exactly through append, read, context and another instance', async () => {
    const reasoningDetails = [
      { type: 'reasoning.summary', summary: 'Plan\n\t"quoted" \\ back\u2028slash', format: 'anthropic-claude-v1', index: 0 },
      { type: 'reasoning.encrypted', data: `gAAAAAB${'Zm9vYmFy+/=='.repeat(40)}`, id: 'rs_0123', index: 1 },
      { type: 'reasoning.text', text: 'ünïcödé 😀 𝔘 \u0000 lone', index: 2, extra: { n: 1.5e-7, big: 12345678901234, neg: -0.25, nul: null, t: true, arr: [[], {}] } },
    ];
    const original = JSON.stringify(reasoningDetails);
    const { f, s, id } = await session('auto');
    await s.append(id, [user('think')]);
    await s.append(id, [msg({ role: 'assistant', content: 'done', reasoningDetails, providerSpecific: { cache: 'x' } })]);
    for (const st of [s, await f.reopen()]) {
      const stored = (await readAll(st, id)).find((r) => r.kind === 'message' && (r.message as { role: string }).role === 'assistant');
      expect(JSON.stringify((stored!.message as { reasoningDetails: unknown }).reasoningDetails)).toBe(original);
      const m = (await st.context(id)).messages.find((x) => x.role === 'assistant')!;
      expect(JSON.stringify(m.reasoningDetails)).toBe(original);
      expect(m.providerSpecific).toEqual({ cache: 'x' });
    }
  });

  it('pruning is opt-in and deterministic: the same on another instance, the stored outputs intact', async () => {
    const { f, s, id } = await session('auto');
    const big = (i: number) => `${i}:${'x'.repeat(3000 + i)}`;
    await s.append(id, [user('go')]);
    for (let i = 0; i < 6; i++) await s.append(id, [calls(`c${i}`), tool(`c${i}`, big(i))]);
    await s.append(id, [final('done')]);
    const prune = { keepRecentToolOutputs: 2, maxToolOutputChars: 100 };
    const unpruned = await s.context(id);
    const pruned = await s.context(id, prune);
    const toolContents = (ms: ContextMessage[]) => ms.filter((m) => m.role === 'tool').map((m) => m.content as string);
    expect(toolContents(unpruned.messages)).toEqual([0, 1, 2, 3, 4, 5].map(big));
    expect(toolContents(pruned.messages)).toEqual([...[0, 1, 2, 3].map((i) => `${big(i).slice(0, 100)}\n[… ${big(i).length - 100} characters pruned]`), big(4), big(5)]);
    expect(toolContents((await s.context(id, {})).messages).map((c) => c.length)).toEqual([
      ...[0, 1, 2].map((i) => 2000 + `\n[… ${big(i).length - 2000} characters pruned]`.length), ...[3, 4, 5].map((i) => big(i).length),
    ]);
    const other = await f.reopen();
    expect(await other.context(id, prune)).toEqual(pruned);
    expect(await other.context(id)).toEqual(unpruned);
    const stored = (await readAll(other, id)).filter((r) => r.kind === 'message' && (r.message as { role: string }).role === 'tool');
    expect(stored.map((r) => (r.message as { content: string }).content)).toEqual([0, 1, 2, 3, 4, 5].map(big));
  });
});
