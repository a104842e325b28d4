import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StoreError } from '../../../src/domain/errors.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { CANCELLED_RESULT } from '../../../src/domain/turns/context.js';
import type { ContextMessage, RecordInput, TurnState } from '../../../src/domain/types.js';
import { snapshotTree, tempDir } from '../../helpers.js';
import { indexOf, indexSettled, journalOf, lines, note, sealed, store, storeError, unsealed } from '../../backends/file/storeHelpers.js';

// ---------------------------------------------------------------------------------------------
// helpers

const SYSTEM = 'You are a careful agent.';
type Msg = Record<string, unknown> & { role: string };
const msg = (m: Msg): RecordInput => ({ kind: 'message', message: m });
const user = (content: string) => msg({ role: 'user', content });
const final = (content: string) => msg({ role: 'assistant', content });
const call = (id: string, name = 'bash', args = '{"cmd":"ls"}') => ({ id, name, arguments: args });
const calls = (...ids: string[]) => msg({ role: 'assistant', content: null, toolCalls: ids.map((id) => call(id)) });
const tool = (id: string, content: string, name = 'bash') => msg({ role: 'tool', toolCallId: id, name, content });

async function session(mode: 'auto' | 'manual', root = tempDir()) {
  const s = store(root);
  const { sessionId } = await s.create({ turns: mode, systemPrompt: SYSTEM, title: `${mode} turns` });
  return { root, s, id: sessionId };
}

/** The journal's record lines, parsed as they are on disk (with batchEnd, without crc). */
function journal(root: string, id: string): Array<Record<string, unknown>> {
  return lines(fs.readFileSync(journalOf(root, id))).slice(1).map((l) => {
    const { crc: _c, ...rest } = JSON.parse(l.toString('utf8')) as Record<string, unknown>;
    return rest;
  });
}

async function readAll(s: FileSessionStore, id: string) {
  return (await s.read(id, { limit: 10_000 })).records as Array<Record<string, unknown>>;
}

/** Refused with InvalidTurnTransition, data.turn = `current`, and nothing on disk changed. */
async function refused(root: string, p: () => Promise<unknown>, current: TurnState | null): Promise<StoreError> {
  const before = snapshotTree(`${root}/sessions`);
  const err = await storeError(p, 'InvalidTurnTransition');
  expect(err.details).toEqual({ turn: current, reason: expect.any(String) });
  expect(snapshotTree(`${root}/sessions`)).toEqual(before);
  return err;
}

/**
 * What providers require: every assistant tool call is answered by exactly one tool message in
 * the run of tool messages right after it, and no tool message stands anywhere else.
 */
function expectWellFormed(messages: ContextMessage[]): void {
  let open: string[] = [];
  let inToolRun = false;
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      expect(inToolRun, `message ${i}: a tool message that follows no tool call`).toBe(true);
      expect(open, `message ${i}: answers ${String(m.toolCallId)}, which is not an open call`).toContain(m.toolCallId);
      open = open.filter((c) => c !== m.toolCallId);
      continue;
    }
    expect(open, `message ${i} (${m.role}) comes while tool calls are unanswered`).toEqual([]);
    inToolRun = false;
    if (m.role === 'assistant' && Array.isArray(m.toolCalls) && m.toolCalls.length > 0) {
      open = (m.toolCalls as Array<{ id: string }>).map((c) => c.id);
      inToolRun = true;
    }
  }
  expect(open, 'tool calls left unanswered at the end').toEqual([]);
}

const cancelled = (id: string, name = 'bash') => ({ role: 'tool', toolCallId: id, name, content: CANCELLED_RESULT });

// ---------------------------------------------------------------------------------------------

describe('turn rules on a real store (manual mode)', () => {
  it('a pending turn blocks a second start; a finished one does not', async () => {
    const { root, s, id } = await session('manual');
    expect(await s.getTurn(id)).toBeNull();
    const { turnId } = await s.startTurn(id, 'user');
    const t1 = await s.getTurn(id);
    expect(t1).toEqual({ turnId, kind: 'user', phase: 'accepted', status: 'active', firstSeq: 1 });
    await refused(root, () => s.startTurn(id, 'user'), t1);
    await refused(root, () => s.startTurn(id, 'background'), t1);
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'completed' });
    const { turnId: second } = await s.startTurn(id, 'background');
    expect(second).not.toBe(turnId);
    expect(await s.getTurn(id)).toEqual({ turnId: second, kind: 'background', phase: 'accepted', status: 'active', firstSeq: 3 });
    await s.closeAll();
  });

  it('a retryable turn must be resumed or abandoned: finishing it otherwise is refused', async () => {
    const { root, s, id } = await session('manual');
    const { turnId } = await s.startTurn(id, 'user');
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'providerStream' });
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'HTTP 429' });
    const retryable = await s.getTurn(id);
    expect(retryable).toEqual({ turnId, kind: 'user', phase: 'providerStream', status: 'retryable', firstSeq: 1, error: 'HTTP 429' });
    for (const outcome of ['completed', 'interrupted', 'terminalFailure'] as const) {
      const err = await refused(root, () => s.transitionTurn(id, turnId, { event: 'finish', outcome }), retryable);
      expect(err.message).toMatch(/resume|abandon/);
    }
    await refused(root, () => s.transitionTurn(id, turnId, { event: 'fail', error: 'again' }), retryable);
    await refused(root, () => s.startTurn(id, 'user'), retryable);
    // no phase change while retryable: the turn is resumed first (issue 15; protocol §11.2)
    const phaseErr = await refused(root, () => s.transitionTurn(id, turnId, { event: 'phase', phase: 'compacting' }), retryable);
    expect(phaseErr.message).toMatch(/resume/);
    await s.transitionTurn(id, turnId, { event: 'resume' });
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'compacting' });
    expect(await s.getTurn(id)).toEqual({ turnId, kind: 'user', phase: 'compacting', status: 'active', firstSeq: 1 });
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'HTTP 503' });
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'abandoned' });
    const abandoned = await s.getTurn(id);
    expect(abandoned).toEqual({ turnId, kind: 'user', phase: 'compacting', status: 'abandoned', firstSeq: 1, lastSeq: 7, error: 'HTTP 503' });
    // only a pending turn changes: every transition of the finished turn is refused
    for (const change of [
      { event: 'phase', phase: 'accepted' }, { event: 'fail', error: 'x' }, { event: 'resume' }, { event: 'finish', outcome: 'abandoned' },
    ] as const) {
      const err = await refused(root, () => s.transitionTurn(id, turnId, change), abandoned);
      expect(err.message).toContain('already abandoned');
    }
    await s.closeAll();
  });

  it('a turn id that is not the pending turn is refused for every transition', async () => {
    const { root, s, id } = await session('manual');
    await refused(root, () => s.transitionTurn(id, 'NOPE', { event: 'resume' }), null);
    const { turnId } = await s.startTurn(id, 'user');
    const t = await s.getTurn(id);
    for (const change of [
      { event: 'phase', phase: 'executingTools' }, { event: 'fail', error: 'x' }, { event: 'resume' }, { event: 'finish', outcome: 'completed' },
    ] as const) {
      const err = await refused(root, () => s.transitionTurn(id, `${turnId}x`, change), t);
      expect(err.message).toContain('not the pending turn');
    }
    await s.closeAll();
  });

  it('records carry the pending turn\'s turnId, and only while a turn is pending', async () => {
    const { root, s, id } = await session('manual');
    await s.append(id, [note(1)]);
    const { turnId } = await s.startTurn(id, 'user');
    await s.append(id, [user('hi'), note(2)]);
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'x' });
    await s.append(id, [note(3)]); // retryable is pending too
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'abandoned' });
    await s.append(id, [note(4)]);
    const recs = await readAll(s, id);
    const tags = recs.filter((r) => r.kind !== 'turn').map((r) => [r.kind === 'note' ? r.i : 'user', r.turnId]);
    expect(tags).toEqual([[1, undefined], ['user', turnId], [2, turnId], [3, turnId], [4, undefined]]);
    expect(recs.filter((r) => r.kind !== 'turn' && r.turnId === undefined).every((r) => !Object.hasOwn(r, 'turnId'))).toBe(true);
    // manual mode: messages cause no transitions
    expect(recs.filter((r) => r.kind === 'turn').map((r) => r.event)).toEqual(['start', 'fail', 'finish']);
    await s.closeAll();
    expect(journal(root, id).filter((r) => r.kind === 'turn').every((r) => r.turnId === turnId)).toBe(true);
  });

  it('records cannot bring their own turnId or be turn records: refused, nothing written', async () => {
    // Before the fix these were acknowledged: a record with its own turnId was written with the
    // member twice (a non-canonical line, cut as a "torn tail" on the next open); an appended
    // turn record was never reduced (getTurn stayed null) and the next open said Corrupt.
    const { root, s, id } = await session('manual');
    const { turnId } = await s.startTurn(id, 'user');
    const before = snapshotTree(`${root}/sessions`);
    const e1 = await storeError(s.append(id, [note(1), { kind: 'note', turnId: 'forged' }]), 'InvalidArgument');
    expect(e1.details.path).toBe('records[1].turnId');
    await storeError(s.append(id, [{ kind: 'turn', turnId, event: 'finish', outcome: 'completed' }]), 'InvalidArgument');
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'completed' });
    await storeError(s.append(id, [{ kind: 'note', turnId }]), 'InvalidArgument'); // not even without a pending turn
    await storeError(s.append(id, [{ kind: 'turn', turnId: 'n', event: 'start', turnKind: 'user' }]), 'InvalidArgument');
    await s.closeAll();
    const after = snapshotTree(`${root}/sessions`);
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(journal(root, id).map((r) => r.event)).toEqual(['start', 'finish']);
    const again = store(root);
    fs.rmSync(indexOf(root, id));
    expect((await again.open(id, 'write')).recovered).toBeUndefined();
    expect(await again.getTurn(id)).toMatchObject({ turnId, status: 'completed' });
    await again.closeAll();
  });

  it('transitions are validated at commit time, in arrival order with the appends around them', async () => {
    const { s, id } = await session('auto');
    const results = await Promise.allSettled([s.startTurn(id, 'background'), s.append(id, [user('hello')]), s.getTurn(id)]);
    expect(results[0].status).toBe('fulfilled');
    expect(results[1].status).toBe('rejected');
    expect(((results[1] as PromiseRejectedResult).reason as StoreError).kind).toBe('InvalidTurnTransition');
    const { turnId } = (results[0] as PromiseFulfilledResult<{ turnId: string }>).value;
    expect((results[2] as PromiseFulfilledResult<TurnState>).value).toMatchObject({ turnId, kind: 'background', status: 'active' });
    expect((await readAll(s, id)).map((r) => r.kind)).toEqual(['turn']);
    await s.closeAll();
  });
});

describe('auto mode', () => {
  it('a user message and its start record are one batch, the start first; the turn begins at the start record', async () => {
    const { root, s, id } = await session('auto');
    await s.append(id, [note(0)]); // no turn: untagged, no transition
    await s.append(id, [user('list the files')]);
    const t = await s.getTurn(id);
    expect(t).toEqual({ turnId: expect.any(String), kind: 'user', phase: 'accepted', status: 'active', firstSeq: 2 });
    await s.closeAll();
    const recs = journal(root, id);
    expect(recs[0]).toEqual({ seq: 1, ts: expect.any(String), kind: 'note', i: 0 });
    expect(recs[1]).toEqual({ seq: 2, ts: expect.any(String), batchEnd: 3, kind: 'turn', turnId: t!.turnId, event: 'start', turnKind: 'user' });
    expect(recs[2]).toEqual({
      seq: 3, ts: recs[1]!.ts, batchEnd: 3, turnId: t!.turnId, kind: 'message', message: { role: 'user', content: 'list the files' },
    });
  });

  it('tool calls, tool results and the final assistant message drive the phases and complete the turn', async () => {
    const { root, s, id } = await session('auto');
    await s.append(id, [user('run ls')]);
    const turnId = (await s.getTurn(id))!.turnId;
    await s.append(id, [calls('c1')]);
    expect(await s.getTurn(id)).toMatchObject({ phase: 'executingTools', status: 'active' });
    await s.append(id, [tool('c1', 'a.txt')]);
    expect(await s.getTurn(id)).toMatchObject({ phase: 'providerStream', status: 'active' });
    await s.append(id, [final('There is a.txt.')]);
    const done = await s.getTurn(id);
    expect(done).toEqual({ turnId, kind: 'user', phase: 'providerStream', status: 'completed', firstSeq: 1, lastSeq: 8 });
    await s.append(id, [note(1), final('an afterthought')]); // no pending turn: nothing happens
    expect(await s.getTurn(id)).toEqual(done);
    await s.closeAll();
    const recs = journal(root, id);
    expect(recs.map((r) => (r.kind === 'turn' ? `${r.event}:${r.phase ?? r.outcome ?? r.turnKind}` : (r.message as Msg | undefined)?.role ?? r.kind)))
      .toEqual(['start:user', 'user', 'assistant', 'phase:executingTools', 'tool', 'phase:providerStream', 'assistant', 'finish:completed', 'note', 'assistant']);
    // each message and the transition it causes: one batch
    expect(recs.map((r) => r.batchEnd)).toEqual([2, 2, 4, 4, 6, 6, 8, 8, 10, 10]);
    expect(recs.map((r) => r.turnId)).toEqual([...Array(8).fill(turnId), undefined, undefined]);
  });

  it('a final assistant message completes the auto turn, in one append with everything before it', async () => {
    const { s, id } = await session('auto');
    await s.append(id, [user('q'), calls('c1', 'c2'), tool('c1', 'one'), tool('c2', 'two'), final('answer')]);
    expect(await s.getTurn(id)).toMatchObject({ status: 'completed', kind: 'user', firstSeq: 1, lastSeq: 10 });
    const ctx = await s.context(id);
    expect(ctx.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant']);
    expectWellFormed(ctx.messages);
    await s.append(id, [user('next question')]); // a new turn may start now
    expect(await s.getTurn(id)).toMatchObject({ status: 'active', firstSeq: 11 });
    await s.closeAll();
  });

  it('a user message while a turn is pending is refused; turn/resume is the retry and appends no second user message', async () => {
    const { root, s, id } = await session('auto');
    await s.append(id, [user('summarize the repo')]);
    const active = await s.getTurn(id);
    const err = await refused(root, () => s.append(id, [user('summarize the repo')]), active);
    expect(err.message).toContain('the session has an unresolved turn');
    // a batch holding a user message is refused whole, whatever precedes it
    await refused(root, () => s.append(id, [note(1), user('again')]), active);
    await s.transitionTurn(id, active!.turnId, { event: 'phase', phase: 'providerStream' });
    await s.transitionTurn(id, active!.turnId, { event: 'fail', error: 'HTTP 529 overloaded' });
    const retryable = await s.getTurn(id);
    await refused(root, () => s.append(id, [user('summarize the repo')]), retryable);
    await s.transitionTurn(id, active!.turnId, { event: 'resume' });
    await s.append(id, [final('The repo holds a sidecar.')]);
    expect(await s.getTurn(id)).toEqual({ ...active, phase: 'providerStream', status: 'completed', lastSeq: 7 });
    const recs = await readAll(s, id);
    expect(recs.filter((r) => r.kind === 'message' && (r.message as Msg).role === 'user')).toHaveLength(1);
    expect(recs.filter((r) => r.kind === 'turn').map((r) => r.event)).toEqual(['start', 'phase', 'fail', 'resume', 'finish']);
    const ctx = await s.context(id);
    expect(ctx.messages).toEqual([
      { role: 'system', content: SYSTEM }, { role: 'user', content: 'summarize the repo' }, { role: 'assistant', content: 'The repo holds a sidecar.' },
    ]);
    expect(ctx.turn).toEqual(await s.getTurn(id));
    await s.closeAll();
  });

  it('a refusal inside a batch reports the committed state, never a turn an earlier record of the batch would have started', async () => {
    const { root, s, id } = await session('auto');
    const err = await refused(root, () => s.append(id, [user('a'), note(1), user('b')]), null);
    expect(err.details.reason).toMatch(/^record 2: the session has an unresolved turn/);
    // several whole turns in one batch are fine
    await s.append(id, [user('q1'), final('a1'), user('q2'), calls('k'), tool('k', 'r'), final('a2'), user('q3')]);
    const t = await s.getTurn(id);
    expect(t).toMatchObject({ status: 'active', kind: 'user', firstSeq: 13 });
    const recs = await readAll(s, id);
    expect(recs.filter((r) => r.kind === 'turn' && r.event === 'start')).toHaveLength(3);
    // a retryable turn: the tool result's phase change is allowed, the final answer's finish is not
    await s.transitionTurn(id, t!.turnId, { event: 'fail', error: 'e' });
    const retryable = await s.getTurn(id);
    const e2 = await refused(root, () => s.append(id, [calls('z'), tool('z', 'r'), final('done')]), retryable);
    expect(e2.details.reason).toMatch(/^record 2: .*retryable/);
    await s.closeAll();
  });

  it('observation and background messages start a background turn only when none is pending', async () => {
    const { s, id } = await session('auto');
    await s.append(id, [msg({ role: 'observation', content: 'CI failed' })]);
    const bg = await s.getTurn(id);
    expect(bg).toMatchObject({ kind: 'background', status: 'active', phase: 'accepted', firstSeq: 1 });
    await s.append(id, [msg({ role: 'background', content: 'another event' })]); // pending: joins it
    expect(await s.getTurn(id)).toEqual(bg);
    await s.append(id, [final('I looked at CI.')]);
    expect(await s.getTurn(id)).toMatchObject({ turnId: bg!.turnId, status: 'completed' });
    await s.append(id, [msg({ role: 'background', content: 'cron' })]);
    const bg2 = await s.getTurn(id);
    expect(bg2).toMatchObject({ kind: 'background', status: 'active' });
    expect(bg2!.turnId).not.toBe(bg!.turnId);
    // a user message is refused while the background turn is pending
    await storeError(s.append(id, [user('hi')]), 'InvalidTurnTransition');
    const recs = await readAll(s, id);
    expect(recs.filter((r) => r.kind === 'message').map((r) => r.turnId)).toEqual([bg!.turnId, bg!.turnId, bg!.turnId, bg2!.turnId]);
    await s.closeAll();
  });

  it('an interruption finishes the pending turn as interrupted, after the interruption record, in the same batch', async () => {
    const { root, s, id } = await session('auto');
    await s.append(id, [user('build it'), calls('c1', 'c2', 'c3')]);
    const turnId = (await s.getTurn(id))!.turnId;
    await s.append(id, [
      tool('c1', 'built'),
      {
        kind: 'interruption', reason: 'user cancelled', phase: 'executingTools',
        toolCalls: [call('c4', 'rm', '{"path":')], // partial: never replayed
        toolResults: [{ id: 'c2', name: 'bash', result: { exit: 0 } }, { id: 'c1', name: 'bash', result: 'dup' }, { id: 'c9', name: 'bash', result: 'undeclared' }],
      },
    ]);
    const t = await s.getTurn(id);
    expect(t).toEqual({ turnId, kind: 'user', phase: 'providerStream', status: 'interrupted', firstSeq: 1, lastSeq: 8 });
    await s.closeAll();
    const tail = journal(root, id).slice(-4);
    expect(tail.map((r) => [r.seq, r.kind, r.event ?? null, r.batchEnd])).toEqual([
      [5, 'message', null, 8], [6, 'turn', 'phase', 8], [7, 'interruption', null, 8], [8, 'turn', 'finish', 8],
    ]);
    expect(tail[3]).toMatchObject({ turnId, outcome: 'interrupted' });
    expect(tail[2]).toMatchObject({ turnId });

    const again = store(root);
    const ctx = await again.context(id);
    expectWellFormed(ctx.messages);
    expect(ctx.messages.slice(1)).toEqual([
      { role: 'user', content: 'build it' },
      { role: 'assistant', content: null, toolCalls: [call('c1'), call('c2'), call('c3')] },
      { role: 'tool', toolCallId: 'c1', name: 'bash', content: 'built' },
      { role: 'tool', toolCallId: 'c2', name: 'bash', content: '{"exit":0}' },
      cancelled('c3'),
    ]);
    expect(JSON.stringify(ctx.messages)).not.toContain('c4');
    expect(JSON.stringify(ctx.messages)).not.toContain('undeclared');
    expect(JSON.stringify(ctx.messages)).not.toContain('dup');
    expect(ctx.turn).toEqual(t);
    await again.closeAll();
  });

  it('an interruption while streaming keeps the partial text, never its partial tool calls; a new turn may follow', async () => {
    const { s, id } = await session('auto');
    await s.append(id, [user('write a poem')]);
    await s.append(id, [{
      kind: 'interruption', reason: 'timeout', phase: 'providerStream', assistantText: 'Roses are', toolCalls: [call('p1', 'search', '{"q":')],
    }]);
    expect(await s.getTurn(id)).toMatchObject({ status: 'interrupted' });
    await s.append(id, [{ kind: 'interruption', reason: 'twice', phase: 'providerStream', assistantText: '   ' }]); // no pending turn
    await s.append(id, [user('go on')]);
    const ctx = await s.context(id);
    expect(ctx.messages).toEqual([
      { role: 'system', content: SYSTEM }, { role: 'user', content: 'write a poem' }, { role: 'assistant', content: 'Roses are' },
      { role: 'user', content: 'go on' },
    ]);
    expect(ctx.turn).toMatchObject({ status: 'active', kind: 'user' });
    await s.closeAll();
  });

  it('after a crash mid-tool the context answers the call with a synthetic result; resume, result, final answer complete the turn', async () => {
    const { root, s, id } = await session('auto');
    await s.append(id, [user('run the tests')]);
    await s.append(id, [calls('t1')]);
    // the process dies here: nothing is closed, the next store instance finds the journal as is
    const s2 = store(root);
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
    expect(JSON.stringify(after.messages)).not.toContain('[cancelled');
    await s2.closeAll();
    await s.closeAll();
  });
});

describe('session context', () => {
  it('every assistant tool call is answered before the next non-tool message; the system prompt comes first', async () => {
    const { s, id } = await session('manual');
    await s.append(id, [user('a'), calls('x1', 'x2'), tool('x2', 'two'), user('b'), calls('y1'), final('c')]);
    const { messages } = await s.context(id);
    expect(messages).toEqual([
      { role: 'system', content: SYSTEM }, { role: 'user', content: 'a' },
      { role: 'assistant', content: null, toolCalls: [call('x1'), call('x2')] },
      { role: 'tool', toolCallId: 'x2', name: 'bash', content: 'two' }, cancelled('x1'),
      { role: 'user', content: 'b' }, { role: 'assistant', content: null, toolCalls: [call('y1')] }, cancelled('y1'),
      { role: 'assistant', content: 'c' },
    ]);
    expectWellFormed(messages);
    // turn records, events and notes never reach the context; no system prompt, no system message
    const bare = store(tempDir());
    const { sessionId } = await bare.create({});
    await bare.append(sessionId, [note(1), { kind: 'event', type: 'x', payload: 1 }, user('only')]);
    expect((await bare.context(sessionId)).messages).toEqual([{ role: 'user', content: 'only' }]);
    await bare.closeAll();
    await s.closeAll();
  });

  it('reasoningDetails round-trip byte-exact through append, read, context and reopen', async () => {
    const reasoningDetails = [
      { type: 'reasoning.summary', summary: 'Plan: list, then read.\n\t"quoted" \\ back\u2028slash', format: 'anthropic-claude-v1', index: 0 },
      { type: 'reasoning.encrypted', data: `gAAAAAB${'Zm9vYmFy+/=='.repeat(40)}`, id: 'rs_0123', format: 'openai-responses-v1', index: 1 },
      { type: 'reasoning.text', text: 'ünïcödé 😀 𝔘 \u0000 \ud800 lone', signature: 'EqQBCkgIARABGAIiQ', index: 2, extra: { n: 1.5e-7, big: 12345678901234, neg: -0.25, nul: null, t: true, arr: [[], {}] } },
    ];
    const original = JSON.stringify(reasoningDetails);
    const { root, s, id } = await session('auto');
    await s.append(id, [user('think')]);
    await s.append(id, [msg({ role: 'assistant', content: 'done', reasoningDetails, providerSpecific: { cache: 'x' } })]);
    const check = async (st: FileSessionStore) => {
      const stored = (await readAll(st, id)).find((r) => r.kind === 'message' && (r.message as Msg).role === 'assistant');
      expect(JSON.stringify((stored!.message as Msg).reasoningDetails)).toBe(original);
      const ctx = await st.context(id);
      const m = ctx.messages.find((x) => x.role === 'assistant')!;
      expect(JSON.stringify(m.reasoningDetails)).toBe(original);
      expect(m.providerSpecific).toEqual({ cache: 'x' });
    };
    await check(s);
    await s.closeAll();
    await check(store(root));
    expect(fs.readFileSync(journalOf(root, id), 'utf8')).toContain(original.slice(1, -1));
  });

  it('pruning is opt-in and deterministic: the same output after close and reopen, the stored outputs intact', async () => {
    const { root, s, id } = await session('auto');
    const big = (i: number) => `${i}:${'x'.repeat(3000 + i)}`;
    await s.append(id, [user('go')]);
    for (let i = 0; i < 6; i++) await s.append(id, [calls(`c${i}`), tool(`c${i}`, big(i))]);
    await s.append(id, [final('done')]);
    const prune = { keepRecentToolOutputs: 2, maxToolOutputChars: 100 };
    const unpruned = await s.context(id);
    const pruned = await s.context(id, prune);
    const defaults = await s.context(id, {});
    await s.closeAll();
    const toolContents = (ms: ContextMessage[]) => ms.filter((m) => m.role === 'tool').map((m) => m.content as string);
    expect(toolContents(unpruned.messages)).toEqual([0, 1, 2, 3, 4, 5].map(big));
    expect(toolContents(pruned.messages)).toEqual([
      ...[0, 1, 2, 3].map((i) => `${big(i).slice(0, 100)}\n[… ${big(i).length - 100} characters pruned]`), big(4), big(5),
    ]);
    // defaults: keep the 3 newest whole, cut older ones to 2000
    expect(toolContents(defaults.messages).map((c) => c.length)).toEqual([
      ...[0, 1, 2].map((i) => 2000 + `\n[… ${big(i).length - 2000} characters pruned]`.length), ...[3, 4, 5].map((i) => big(i).length),
    ]);
    expectWellFormed(pruned.messages);
    const bytes = fs.readFileSync(journalOf(root, id));
    for (const st of [store(root), store(root)]) {
      expect(await st.context(id, prune)).toEqual(pruned);
      expect(await st.context(id)).toEqual(unpruned);
      await st.open(id, 'write');
      expect(await st.context(id, prune)).toEqual(pruned);
      const stored = (await readAll(st, id)).filter((r) => r.kind === 'message' && (r.message as Msg).role === 'tool');
      expect(stored.map((r) => (r.message as Msg).content)).toEqual([0, 1, 2, 3, 4, 5].map(big));
      await st.closeAll();
    }
    expect(fs.readFileSync(journalOf(root, id)).equals(bytes)).toBe(true);
  });

  it('pruning never splits a character: a cut inside a surrogate pair keeps the whole pair out', async () => {
    const { s, id } = await session('manual');
    const content = `${'a'.repeat(9)}😀${'b'.repeat(50)}`; // the emoji spans units 9 and 10
    await s.append(id, [calls('e1'), tool('e1', content), calls('e2'), tool('e2', 'recent')]);
    const { messages } = await s.context(id, { keepRecentToolOutputs: 1, maxToolOutputChars: 10 });
    const cut = messages.find((m) => m.toolCallId === 'e1')!.content as string;
    expect((cut as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
    expect(cut).toBe(`${'a'.repeat(9)}\n[… 52 characters pruned]`);
    // a cut right after the pair keeps it
    const after = await s.context(id, { keepRecentToolOutputs: 1, maxToolOutputChars: 11 });
    expect(after.messages.find((m) => m.toolCallId === 'e1')!.content).toBe(`${'a'.repeat(9)}😀\n[… 50 characters pruned]`);
    await s.closeAll();
  });
});

describe('the turn state on disk', () => {
  async function history() {
    const root = tempDir();
    const s = store(root);
    const { sessionId: id } = await s.create({ turns: 'auto' });
    await s.append(id, [user('one'), final('ok')]); // seqs 1-4: completed turn
    await s.append(id, [user('two')]); // 5-6
    const turnId = (await s.getTurn(id))!.turnId;
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'providerStream' }); // 7
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'dropped' }); // 8
    const state = await s.getTurn(id);
    await s.closeAll();
    return { root, id, turnId, state: state!, file: journalOf(root, id) };
  }

  /** Every way of opening refuses with Corrupt naming `line`. */
  async function expectCorrupt(root: string, id: string, line: number) {
    const s = store(root);
    for (const attempt of [() => s.open(id, 'write'), () => s.open(id, 'read'), () => s.getTurn(id), () => s.context(id)]) {
      const err = await storeError(attempt, 'Corrupt');
      expect(err.details.line).toBe(line);
      expect(err.message).toContain(`line ${line}`);
      expect(err.message).toContain('turn');
    }
    await s.closeAll();
  }

  it('an impossible transition appended by hand (valid checksum) makes the journal Corrupt, naming its line', async () => {
    const h = await history();
    const original = fs.readFileSync(h.file);
    const last = unsealed(lines(original).at(-1)!);
    const ts = (JSON.parse(last) as { ts: string }).ts;
    const forged: Array<[string, Record<string, unknown>]> = [
      ['finish completed of a retryable turn', { kind: 'turn', turnId: h.turnId, event: 'finish', outcome: 'completed' }],
      ['a second start while one is pending', { kind: 'turn', turnId: 'OTHER', event: 'start', turnKind: 'user' }],
      ['fail of a retryable turn', { kind: 'turn', turnId: h.turnId, event: 'fail', error: 'x' }],
      ['a transition of another turn', { kind: 'turn', turnId: 'OTHER', event: 'resume' }],
      ['an unknown event', { kind: 'turn', turnId: h.turnId, event: 'explode' }],
      ['a phase that does not exist', { kind: 'turn', turnId: h.turnId, event: 'phase', phase: 'dreaming' }],
    ];
    for (const [name, rec] of forged) {
      const line = sealed(JSON.stringify({ seq: 9, ts, ...rec }));
      fs.writeFileSync(h.file, Buffer.concat([original, line]));
      // with the index (stale: the journal grew past it) and without it
      await expectCorrupt(h.root, h.id, 10);
      const idx = fs.readFileSync(indexOf(h.root, h.id));
      fs.rmSync(indexOf(h.root, h.id));
      await expectCorrupt(h.root, h.id, 10);
      fs.writeFileSync(indexOf(h.root, h.id), idx, { mode: 0o600 });
      expect(fs.readFileSync(h.file).equals(Buffer.concat([original, line])), name).toBe(true); // never "repaired"
    }
    // and the untouched journal opens fine
    fs.writeFileSync(h.file, original);
    const s = store(h.root);
    expect((await s.open(h.id, 'write')).turn).toEqual(h.state);
    await s.closeAll();
  });

  it('an impossible transition in the middle of the journal is found when the journal is scanned', async () => {
    const h = await history();
    const ls = lines(fs.readFileSync(h.file));
    // line 8 is seq 7 (phase providerStream): make it a finish of a turn that is not pending
    const seq7 = JSON.parse(unsealed(ls[7]!)) as Record<string, unknown>;
    expect(seq7).toMatchObject({ seq: 7, kind: 'turn', event: 'phase' });
    const { phase: _p, ...rest } = seq7;
    ls[7] = sealed(JSON.stringify({ ...rest, event: 'start', turnKind: 'background' }));
    fs.writeFileSync(h.file, Buffer.concat(ls));
    fs.rmSync(indexOf(h.root, h.id));
    await expectCorrupt(h.root, h.id, 8);
  });

  it('the turn state is the same from the index, without it, and with a stale one', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: id } = await s.create({ turns: 'auto' });
    await s.append(id, [user('one')]);
    await s.closeAll();
    const staleIndex = fs.readFileSync(indexOf(root, id)); // says: turn active, accepted
    const s1 = store(root);
    await s1.open(id, 'write');
    await s1.append(id, [calls('k1')]);
    const turnId = (await s1.getTurn(id))!.turnId;
    await s1.transitionTurn(id, turnId, { event: 'fail', error: 'net' });
    const expected = await s1.getTurn(id);
    expect(expected).toMatchObject({ status: 'retryable', phase: 'executingTools', error: 'net' });
    await s1.closeAll();
    const fresh = fs.readFileSync(indexOf(root, id));
    expect(JSON.parse(fresh.toString()).turn).toEqual(expected);

    const views = async () => {
      const a = store(root);
      const viaGet = await a.getTurn(id); // not open: transient handle
      const viaRead = (await a.open(id, 'read')).turn;
      const viaWrite = (await a.open(id, 'write')).turn;
      const viaCtx = (await a.context(id)).turn;
      await a.closeAll();
      return [viaGet, viaRead, viaWrite, viaCtx];
    };
    expect(await views()).toEqual([expected, expected, expected, expected]);
    fs.rmSync(indexOf(root, id));
    expect(await views()).toEqual([expected, expected, expected, expected]);
    fs.writeFileSync(indexOf(root, id), staleIndex, { mode: 0o600 });
    expect(await views()).toEqual([expected, expected, expected, expected]);
    // an entry that vouches for nothing (another generation's head; an older version's entry on another inode; garbage) is ignored too
    const entry = JSON.parse(fresh.toString()) as Record<string, unknown>;
    fs.writeFileSync(indexOf(root, id), JSON.stringify({ ...entry, head: '00000000.3.9', turn: null }), { mode: 0o600 });
    expect(await views()).toEqual([expected, expected, expected, expected]);
    fs.writeFileSync(indexOf(root, id), JSON.stringify({ ...entry, head: undefined, ino: 1, turn: null }), { mode: 0o600 });
    expect(await views()).toEqual([expected, expected, expected, expected]);
    fs.writeFileSync(indexOf(root, id), 'not json', { mode: 0o600 });
    expect(await views()).toEqual([expected, expected, expected, expected]);
    // and the index rewritten by the last write open holds the state again
    const last = store(root);
    await last.open(id, 'write');
    await last.append(id, [note(1)]);
    await indexSettled(last);
    expect(JSON.parse(fs.readFileSync(indexOf(root, id), 'utf8')).turn).toEqual(expected);
    await last.closeAll();
  });

  it('after a crash an active turn is reported active with its last phase (manual mode)', async () => {
    const root = tempDir();
    const s = store(root);
    const { sessionId: id } = await s.create({});
    const { turnId } = await s.startTurn(id, 'user');
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'compacting' });
    await s.append(id, [user('x')]);
    const live = await s.getTurn(id);
    // no close: the index may be anything from "missing" to current; remove it to force a scan
    fs.rmSync(indexOf(root, id), { force: true });
    const s2 = store(root);
    expect((await s2.open(id, 'write')).turn).toEqual(live);
    expect(live).toEqual({ turnId, kind: 'user', phase: 'compacting', status: 'active', firstSeq: 1 });
    await s2.transitionTurn(id, turnId, { event: 'resume' }); // an active turn may be resumed after a crash
    await s2.transitionTurn(id, turnId, { event: 'finish', outcome: 'terminalFailure', error: 'gave up' });
    expect(await s2.getTurn(id)).toEqual({ ...live, status: 'terminalFailure', lastSeq: 5, error: 'gave up' });
    await s2.closeAll();
    await s.closeAll();
  });
});
