import { expectEqual, expectError, expectResult, type Scenario } from '../context.js';
import type { Json } from '../wire.js';
import { assistant, newSession, user } from './util.js';

/** §11: turns in manual and automatic mode; invalid transitions. */
export const turns: Scenario = {
  name: 'turns',
  summary: 'manual turn lifecycle, InvalidTurnTransition (incl. setPhase on a retryable turn), auto mode',
  async run(t) {
    const p = await t.started();
    const sessionId = await newSession(p, { turns: 'manual' });
    const turn = async () => (await p.call<{ turn: Json | null }>('turn/get', { sessionId })).turn;
    let turnId = '';
    await t.check('no-turn', async () => expectEqual(await turn(), null, 'turn'));
    await t.check('start', async () => {
      turnId = (expectResult<{ turnId: string }>(await p.request('turn/start', { sessionId, kind: 'user' }))).turnId;
      expectEqual(await turn(), { turnId, kind: 'user', phase: 'accepted', status: 'active', firstSeq: 1 }, 'turn');
    });
    const ref = () => ({ sessionId, turnId });
    await t.check('start-while-pending', async () => expectError(await p.request('turn/start', { sessionId, kind: 'user' }), -31013, 'InvalidTurnTransition'));
    await t.check('setPhase', async () => {
      expectEqual(expectResult(await p.request('turn/setPhase', { ...ref(), phase: 'providerStream' })), {}, 'result');
      expectEqual((await turn())?.phase, 'providerStream', 'phase');
    });
    await t.check('fail', async () => {
      expectEqual(expectResult(await p.request('turn/fail', { ...ref(), error: 'HTTP 429' })), {}, 'result');
      expectEqual([(await turn())?.status, (await turn())?.error], ['retryable', 'HTTP 429'], 'status and error');
    });
    await t.check('setPhase-on-retryable', async () => {
      const err = expectError(await p.request('turn/setPhase', { ...ref(), phase: 'compacting' }), -31013, 'InvalidTurnTransition');
      expectEqual((err.data?.turn as Json | undefined)?.status, 'retryable', 'data.turn.status');
    });
    await t.check('finish-retryable-refused', async () => expectError(await p.request('turn/finish', { ...ref(), outcome: 'completed' }), -31013, 'InvalidTurnTransition'));
    await t.check('resume-finish', async () => {
      expectResult(await p.request('turn/resume', ref()));
      expectResult(await p.request('turn/finish', { ...ref(), outcome: 'completed' }));
      const s = await turn();
      expectEqual([s?.status, s?.lastSeq], ['completed', 5], 'status and lastSeq');
    });
    await t.check('auto-mode', async () => {
      const a = await newSession(p, { turns: 'auto' });
      await p.call('session/append', { sessionId: a, records: [user('q')] });
      const active = (await p.call<{ turn: Json }>('turn/get', { sessionId: a })).turn;
      expectEqual([active.status, active.kind], ['active', 'user'], 'after the user message');
      await p.call('session/append', { sessionId: a, records: [assistant('answer')] });
      const done = (await p.call<{ turn: Json }>('turn/get', { sessionId: a })).turn;
      expectEqual([done.turnId, done.status], [active.turnId, 'completed'], 'after the final assistant message');
      expectError(await p.request('session/append', { sessionId: a, records: [{ kind: 'turn', turnId: 'x', event: 'start' }] }, { invalid: true }), -32602);
    });
    await t.check('auto-user-while-pending', async () => {
      const a = await newSession(p, { turns: 'auto' });
      await p.call('session/append', { sessionId: a, records: [user('q')] });
      expectError(await p.request('session/append', { sessionId: a, records: [user('again')] }), -31013, 'InvalidTurnTransition');
    });
  },
};
