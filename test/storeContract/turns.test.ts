/**
 * Store contract: turns, manual and auto, and their refusals. A refusal is
 * InvalidTurnTransition {turn: the committed turn, reason} and changes nothing a client can read.
 */
import { expect, it } from 'vitest';
import type { StoreError } from '../../src/domain/errors.js';
import type { SessionStore, TurnState } from '../../src/domain/types.js';
import { calls, eachBackend, final, msg, note, observe, readAll, storeError, tool, user } from './backends.js';

/** Refused with InvalidTurnTransition, details.turn = `current`, and nothing observable changed. */
async function refused(s: SessionStore, id: string, p: () => Promise<unknown>, current: TurnState | null): Promise<StoreError> {
  const before = await observe(s, id);
  const err = await storeError(p, 'InvalidTurnTransition');
  expect(err.details).toEqual({ turn: current, reason: expect.any(String) });
  expect(await observe(s, id)).toEqual(before);
  return err;
}

eachBackend('turns', (setup) => {
  const session = async (turns: 'manual' | 'auto') => {
    const f = await setup();
    const { sessionId } = await f.store.create({ turns, systemPrompt: 'sys' });
    return { f, s: f.store, id: sessionId };
  };

  it('manual: a pending turn blocks a second start; a finished one does not', async () => {
    const { s, id } = await session('manual');
    expect(await s.getTurn(id)).toBeNull();
    const { turnId } = await s.startTurn(id, 'user');
    const t1 = await s.getTurn(id);
    expect(t1).toEqual({ turnId, kind: 'user', phase: 'accepted', status: 'active', firstSeq: 1 });
    await refused(s, id, () => s.startTurn(id, 'user'), t1);
    await refused(s, id, () => s.startTurn(id, 'background'), t1);
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'completed' });
    const { turnId: second } = await s.startTurn(id, 'background');
    expect(second).not.toBe(turnId);
    expect(await s.getTurn(id)).toEqual({ turnId: second, kind: 'background', phase: 'accepted', status: 'active', firstSeq: 3 });
  });

  it('manual: a retryable turn must be resumed or abandoned; a finished turn takes no transition', async () => {
    const { s, id } = await session('manual');
    const { turnId } = await s.startTurn(id, 'user');
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'providerStream' });
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'HTTP 429' });
    const retryable = await s.getTurn(id);
    expect(retryable).toEqual({ turnId, kind: 'user', phase: 'providerStream', status: 'retryable', firstSeq: 1, error: 'HTTP 429' });
    for (const outcome of ['completed', 'interrupted', 'terminalFailure'] as const) {
      expect((await refused(s, id, () => s.transitionTurn(id, turnId, { event: 'finish', outcome }), retryable)).message).toMatch(/resume|abandon/);
    }
    await refused(s, id, () => s.transitionTurn(id, turnId, { event: 'fail', error: 'again' }), retryable);
    await refused(s, id, () => s.transitionTurn(id, turnId, { event: 'phase', phase: 'compacting' }), retryable);
    await s.transitionTurn(id, turnId, { event: 'resume' });
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'compacting' });
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'HTTP 503' });
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'abandoned' });
    const abandoned = await s.getTurn(id);
    expect(abandoned).toEqual({ turnId, kind: 'user', phase: 'compacting', status: 'abandoned', firstSeq: 1, lastSeq: 7, error: 'HTTP 503' });
    for (const change of [{ event: 'phase', phase: 'accepted' }, { event: 'fail', error: 'x' }, { event: 'resume' }, { event: 'finish', outcome: 'abandoned' }] as const) {
      expect((await refused(s, id, () => s.transitionTurn(id, turnId, change), abandoned)).message).toContain('already abandoned');
    }
    await refused(s, id, () => s.transitionTurn(id, 'NOPE', { event: 'resume' }), abandoned);
  });

  it('manual: records carry the pending turn\'s turnId only while it is pending; clients cannot bring turnId or turn records', async () => {
    const { s, id } = await session('manual');
    await s.append(id, [note(1)]);
    const { turnId } = await s.startTurn(id, 'user');
    await storeError(s.transitionTurn(id, `${turnId}x`, { event: 'resume' }), 'InvalidTurnTransition');
    await s.append(id, [user('hi'), note(2)]);
    const e1 = await storeError(s.append(id, [note(9), { kind: 'note', turnId: 'forged' }]), 'InvalidArgument');
    expect(e1.details.path).toBe('records[1].turnId');
    await storeError(s.append(id, [{ kind: 'turn', turnId, event: 'finish', outcome: 'completed' }]), 'InvalidArgument');
    await s.transitionTurn(id, turnId, { event: 'fail', error: 'x' });
    await s.append(id, [note(3)]); // retryable is pending too
    await s.transitionTurn(id, turnId, { event: 'finish', outcome: 'abandoned' });
    await s.append(id, [note(4)]);
    const recs = await readAll(s, id);
    expect(recs.filter((r) => r.kind !== 'turn').map((r) => [r.kind === 'note' ? r.i : 'user', r.turnId]))
      .toEqual([[1, undefined], ['user', turnId], [2, turnId], [3, turnId], [4, undefined]]);
    expect(recs.filter((r) => r.kind === 'turn').map((r) => r.event)).toEqual(['start', 'fail', 'finish']); // messages cause none
  });

  it('transitions are validated at commit time, in call order with the appends around them', async () => {
    const { s, id } = await session('auto');
    const results = await Promise.allSettled([s.startTurn(id, 'background'), s.append(id, [user('hello')]), s.getTurn(id)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(((results[1] as PromiseRejectedResult).reason as StoreError).kind).toBe('InvalidTurnTransition');
    const { turnId } = (results[0] as PromiseFulfilledResult<{ turnId: string }>).value;
    expect((results[2] as PromiseFulfilledResult<TurnState>).value).toMatchObject({ turnId, kind: 'background', status: 'active' });
    expect((await readAll(s, id)).map((r) => r.kind)).toEqual(['turn']);
  });

  it('auto: a user message starts a turn (start record first, one batch); tool calls, results and the final answer drive it to completed', async () => {
    const { s, id } = await session('auto');
    await s.append(id, [note(0)]);
    expect(await s.append(id, [user('run ls')])).toEqual({ firstSeq: 2, lastSeq: 3 });
    const t = await s.getTurn(id);
    expect(t).toEqual({ turnId: expect.any(String), kind: 'user', phase: 'accepted', status: 'active', firstSeq: 2 });
    await s.append(id, [calls('c1')]);
    expect(await s.getTurn(id)).toMatchObject({ phase: 'executingTools', status: 'active' });
    await s.append(id, [tool('c1', 'a.txt')]);
    expect(await s.getTurn(id)).toMatchObject({ phase: 'providerStream', status: 'active' });
    await s.append(id, [final('There is a.txt.')]);
    const done = await s.getTurn(id);
    expect(done).toEqual({ turnId: t!.turnId, kind: 'user', phase: 'providerStream', status: 'completed', firstSeq: 2, lastSeq: 9 });
    await s.append(id, [note(1), final('an afterthought')]); // no pending turn: nothing happens
    expect(await s.getTurn(id)).toEqual(done);
    const recs = await readAll(s, id);
    expect(recs.map((r) => (r.kind === 'turn' ? `${r.event}:${r.phase ?? r.outcome ?? r.turnKind}` : (r.message as { role?: string } | undefined)?.role ?? r.kind)))
      .toEqual(['note', 'start:user', 'user', 'assistant', 'phase:executingTools', 'tool', 'phase:providerStream', 'assistant', 'finish:completed', 'note', 'assistant']);
    expect(recs.map((r) => r.turnId)).toEqual([undefined, ...Array(8).fill(t!.turnId), undefined, undefined]);
    expect(recs[1]!.ts).toBe(recs[2]!.ts); // one batch, one ts
  });

  it('auto: a user message while a turn is pending is refused (whole batch); resume is the retry; a refusal reports the committed turn', async () => {
    const { s, id } = await session('auto');
    const e0 = await refused(s, id, () => s.append(id, [user('a'), note(1), user('b')]), null);
    expect(e0.details.reason).toMatch(/^record 2: the session has an unresolved turn/);
    await s.append(id, [user('summarize the repo')]);
    const active = await s.getTurn(id);
    expect((await refused(s, id, () => s.append(id, [user('again')]), active)).message).toContain('the session has an unresolved turn');
    await refused(s, id, () => s.append(id, [note(1), user('again')]), active);
    await s.transitionTurn(id, active!.turnId, { event: 'phase', phase: 'providerStream' });
    await s.transitionTurn(id, active!.turnId, { event: 'fail', error: 'HTTP 529 overloaded' });
    const retryable = await s.getTurn(id);
    await refused(s, id, () => s.append(id, [user('summarize the repo')]), retryable);
    const e2 = await refused(s, id, () => s.append(id, [calls('z'), tool('z', 'r'), final('done')]), retryable);
    expect(e2.details.reason).toMatch(/^record 2: .*retryable/);
    await s.transitionTurn(id, active!.turnId, { event: 'resume' });
    await s.append(id, [final('The repo holds a sidecar.')]);
    expect(await s.getTurn(id)).toEqual({ ...active, phase: 'providerStream', status: 'completed', lastSeq: 7 });
    expect((await readAll(s, id)).filter((r) => r.kind === 'turn').map((r) => r.event)).toEqual(['start', 'phase', 'fail', 'resume', 'finish']);
  });

  it('auto: several whole turns in one batch; observation and background messages start a background turn only when none is pending', async () => {
    const { s, id } = await session('auto');
    await s.append(id, [user('q1'), final('a1'), user('q2'), calls('k'), tool('k', 'r'), final('a2')]);
    expect((await readAll(s, id)).filter((r) => r.kind === 'turn' && r.event === 'start')).toHaveLength(2);
    await s.append(id, [msg({ role: 'observation', content: 'CI failed' })]);
    const bg = await s.getTurn(id);
    expect(bg).toMatchObject({ kind: 'background', status: 'active', phase: 'accepted' });
    await s.append(id, [msg({ role: 'background', content: 'another event' })]); // joins it
    expect(await s.getTurn(id)).toEqual(bg);
    await storeError(s.append(id, [user('hi')]), 'InvalidTurnTransition');
    await s.append(id, [final('I looked at CI.')]);
    expect(await s.getTurn(id)).toMatchObject({ turnId: bg!.turnId, status: 'completed' });
  });

  it('the turn state is the same from another instance and after a restart, pending or finished', async () => {
    const { f, s, id } = await session('manual');
    const { turnId } = await s.startTurn(id, 'user');
    await s.transitionTurn(id, turnId, { event: 'phase', phase: 'executingTools' });
    const pending = await s.getTurn(id);
    const other = await f.reopen();
    expect(await other.getTurn(id)).toEqual(pending);
    expect((await other.open(id, 'read')).turn).toEqual(pending);
    await f.crash(s);
    const next = await f.reopen();
    expect((await next.open(id, 'write')).turn).toEqual(pending);
    await next.transitionTurn(id, turnId, { event: 'finish', outcome: 'completed' });
    expect(await other.getTurn(id)).toEqual({ ...pending, status: 'completed', lastSeq: 3 });
  });
});
