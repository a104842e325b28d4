import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { FRAMINGS, type SidecarClient, SidecarError, spawnSidecar, startSidecar, rejection } from './harness.js';

const CANCELLED = '[cancelled: the tool call did not complete; no result was recorded]';
const INVALID_TURN_TRANSITION = -31013;

type Turn = {
  turnId: string; kind: string; phase: string; status: string; firstSeq: number; lastSeq?: number; error?: string;
};
type Msg = { role: string } & Record<string, unknown>;

const msg = (m: Msg) => ({ kind: 'message' as const, message: m });
const user = (content: string) => msg({ role: 'user', content });
const final = (content: string) => msg({ role: 'assistant', content });
const call = (id: string) => ({ id, name: 'bash', arguments: '{"cmd":"make test"}' });
const calls = (...ids: string[]) => msg({ role: 'assistant', content: null, toolCalls: ids.map(call) });
const toolResult = (id: string, content: string) => msg({ role: 'tool', toolCallId: id, name: 'bash', content });


const getTurn = async (c: SidecarClient, sessionId: string) => (await c.request<{ turn: Turn | null }>('turn/get', { sessionId })).turn;
const lastSeqOf = async (c: SidecarClient, sessionId: string) => (await c.read({ sessionId, afterSeq: 1e9 })).lastSeq;

async function readAll(c: SidecarClient, sessionId: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for (let afterSeq = 0; ;) {
    const page = await c.read({ sessionId, afterSeq, limit: 1000 });
    out.push(...(page.records as Array<Record<string, unknown>>));
    if (page.nextAfterSeq === null) return out;
    afterSeq = page.nextAfterSeq;
  }
}

/**
 * `p` is refused with InvalidTurnTransition (-31013), data = {kind, turn, reason} where turn is
 * the session's current state (as turn/get says), and the journal did not change.
 */
async function expectInvalidTransition(c: SidecarClient, sessionId: string, p: () => Promise<unknown>): Promise<SidecarError> {
  const turn = await getTurn(c, sessionId);
  const seq = await lastSeqOf(c, sessionId);
  const err = await rejection(p());
  expect(err.code).toBe(INVALID_TURN_TRANSITION);
  expect(err.data).toEqual({ kind: 'InvalidTurnTransition', turn, reason: expect.any(String) });
  expect(await getTurn(c, sessionId)).toEqual(turn);
  expect(await lastSeqOf(c, sessionId)).toBe(seq);
  return err;
}

function expectWellFormed(messages: Msg[]): void {
  let open: string[] = [];
  let inRun = false;
  for (const m of messages) {
    if (m.role === 'tool') {
      expect(inRun).toBe(true);
      expect(open).toContain(m.toolCallId);
      open = open.filter((x) => x !== m.toolCallId);
      continue;
    }
    expect(open).toEqual([]);
    inRun = false;
    if (m.role === 'assistant' && Array.isArray(m.toolCalls) && m.toolCalls.length > 0) {
      open = (m.toolCalls as Array<{ id: string }>).map((x) => x.id);
      inRun = true;
    }
  }
  expect(open).toEqual([]);
}

describe.each(FRAMINGS)('turns over the built binary (%s)', (framing) => {
  it('every turn method, session/open and session/context, in manual mode', async () => {
    const store = tempDir();
    const c = spawnSidecar({ framing, store });
    const init = await c.initialize();
    expect(init.capabilities).toMatchObject({ turns: { modes: ['manual', 'auto'] }, session: { context: { prune: true } } });
    const { sessionId } = await c.create({ systemPrompt: 'Be brief.', turns: 'manual' });
    expect(await c.request('turn/get', { sessionId })).toEqual({ turn: null });
    const started = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
    expect(Object.keys(started)).toEqual(['turnId']);
    const { turnId } = started;
    expect(turnId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(await getTurn(c, sessionId)).toEqual({ turnId, kind: 'user', phase: 'accepted', status: 'active', firstSeq: 1 });
    expect(await c.append({ sessionId, records: [user('hello')] })).toEqual({ firstSeq: 2, lastSeq: 2 });
    expect(await c.request('turn/setPhase', { sessionId, turnId, phase: 'providerStream' })).toEqual({});
    expect(await c.request('turn/fail', { sessionId, turnId, error: 'HTTP 429' })).toEqual({});
    expect(await getTurn(c, sessionId)).toEqual({ turnId, kind: 'user', phase: 'providerStream', status: 'retryable', firstSeq: 1, error: 'HTTP 429' });
    expect(await c.request('turn/resume', { sessionId, turnId })).toEqual({});
    expect(await c.append({ sessionId, records: [final('hi')] })).toEqual({ firstSeq: 6, lastSeq: 6 });
    expect(await c.request('turn/finish', { sessionId, turnId, outcome: 'completed' })).toEqual({});
    const done = { turnId, kind: 'user', phase: 'providerStream', status: 'completed', firstSeq: 1, lastSeq: 7 };
    expect(await getTurn(c, sessionId)).toEqual(done);
    const ctx = await c.request<{ messages: Msg[]; turn: Turn }>('session/context', { sessionId });
    expect(ctx).toEqual({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }], turn: done });
    const records = await readAll(c, sessionId);
    expect(records.map((r) => [r.seq, r.kind, r.event ?? null, r.turnId])).toEqual([
      [1, 'turn', 'start', turnId], [2, 'message', null, turnId], [3, 'turn', 'phase', turnId], [4, 'turn', 'fail', turnId],
      [5, 'turn', 'resume', turnId], [6, 'message', null, turnId], [7, 'turn', 'finish', turnId],
    ]);
    expect(records[0]).toEqual({ seq: 1, ts: expect.any(String), kind: 'turn', turnId, event: 'start', turnKind: 'user' });
    // a second turn, finished with an error; session/open in a new process returns it
    const { turnId: t2 } = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'background' });
    await c.request('turn/finish', { sessionId, turnId: t2, outcome: 'terminalFailure', error: 'disk full' });
    const last = { turnId: t2, kind: 'background', phase: 'accepted', status: 'terminalFailure', firstSeq: 8, lastSeq: 9, error: 'disk full' };
    expect(await getTurn(c, sessionId)).toEqual(last);
    await c.shutdown();
    const d = await startSidecar({ framing, store });
    expect(await getTurn(d, sessionId)).toEqual(last); // not open: read from the journal (or its index)
    const read = await d.open({ sessionId, mode: 'read' });
    expect(read.turn).toEqual(last);
    const opened = await d.open({ sessionId });
    expect(opened).toMatchObject({ sessionId, mode: 'write', lastSeq: 9, turn: last, turns: 'manual' });
    await d.shutdown(); // releases the writer lease for the next process
    fs.rmSync(path.join(store, 'index', `${sessionId}.json`));
    const e = await startSidecar({ framing, store });
    expect((await e.open({ sessionId })).turn).toEqual(last);
    await e.shutdown();
  });

  it('session/open returns turn: null for a session that never had one, and turns: "auto" when created so', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId: plain } = await c.create();
    const { sessionId: auto } = await c.create({ turns: 'auto' });
    await c.append({ sessionId: auto, records: [user('x')] });
    await c.shutdown();
    const d = await startSidecar({ framing, store });
    expect((await d.open({ sessionId: plain })).turn).toBeNull();
    const o = await d.open({ sessionId: auto });
    expect(o.turns).toBe('auto');
    expect(o.turn).toMatchObject({ kind: 'user', status: 'active', phase: 'accepted', firstSeq: 1 });
    await d.shutdown();
  });

  it('every invalid transition: -31013 with data {kind, turn: the current state, reason}, and nothing written', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    const id = (turnId: string) => ({ sessionId, turnId });
    // no turn at all: data.turn is null
    for (const [method, extra] of [
      ['turn/setPhase', { phase: 'compacting' }], ['turn/fail', { error: 'e' }], ['turn/resume', {}], ['turn/finish', { outcome: 'abandoned' }],
    ] as const) {
      const err = await expectInvalidTransition(c, sessionId, () => c.request(method, { ...id('01NOTURN0000000000000000000'), ...extra }));
      expect(err.data!.turn).toBeNull();
    }
    const { turnId } = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
    // a second start while one is pending (either kind)
    await expectInvalidTransition(c, sessionId, () => c.request('turn/start', { sessionId, kind: 'user' }));
    await expectInvalidTransition(c, sessionId, () => c.request('turn/start', { sessionId, kind: 'background' }));
    // a turn id that is not the pending turn
    for (const [method, extra] of [
      ['turn/setPhase', { phase: 'compacting' }], ['turn/fail', { error: 'e' }], ['turn/resume', {}], ['turn/finish', { outcome: 'completed' }],
    ] as const) {
      const other = `${turnId.slice(0, -1)}${turnId.endsWith('0') ? '1' : '0'}`; // never the pending turn's id
      await expectInvalidTransition(c, sessionId, () => c.request(method, { ...id(other), ...extra }));
    }
    // retryable: only resume or abandon; a second fail is refused
    await c.request('turn/fail', { ...id(turnId), error: 'rate limited' });
    for (const outcome of ['completed', 'interrupted', 'terminalFailure']) {
      const err = await expectInvalidTransition(c, sessionId, () => c.request('turn/finish', { ...id(turnId), outcome }));
      expect(err.data!.turn).toMatchObject({ status: 'retryable', error: 'rate limited' });
    }
    await expectInvalidTransition(c, sessionId, () => c.request('turn/fail', { ...id(turnId), error: 'again' }));
    // a retryable turn changes phase only once resumed
    const refused = await expectInvalidTransition(c, sessionId, () => c.request('turn/setPhase', { ...id(turnId), phase: 'compacting' }));
    expect(refused.data!.turn).toMatchObject({ status: 'retryable', phase: 'accepted' });
    await expectInvalidTransition(c, sessionId, () => c.request('turn/start', { sessionId, kind: 'user' }));
    await c.request('turn/finish', { ...id(turnId), outcome: 'abandoned' });
    // finished: nothing but a new start
    for (const [method, extra] of [
      ['turn/setPhase', { phase: 'compacting' }], ['turn/fail', { error: 'e' }], ['turn/resume', {}], ['turn/finish', { outcome: 'abandoned' }],
    ] as const) {
      const err = await expectInvalidTransition(c, sessionId, () => c.request(method, { ...id(turnId), ...extra }));
      expect(err.data!.turn).toMatchObject({ turnId, status: 'abandoned' });
    }
    // auto mode: a user message while a turn is pending, alone or inside a batch
    const { sessionId: auto } = await c.create({ turns: 'auto' });
    await c.append({ sessionId: auto, records: [user('one')] });
    const err = await expectInvalidTransition(c, auto, () => c.append({ sessionId: auto, records: [user('two')] }));
    expect(err.message).toContain('the session has an unresolved turn');
    const { sessionId: auto2 } = await c.create({ turns: 'auto' });
    const err2 = await expectInvalidTransition(c, auto2, () => c.append({ sessionId: auto2, records: [user('a'), final('b'), user('c'), user('d')] }));
    expect(err2.data!.turn).toBeNull(); // the committed state, not the turn the batch would have started
    await c.shutdown();
  });

  it('params: turn records and turnId cannot be appended; malformed turn params are -32602; other store errors', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create();
    const { turnId } = await c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'user' });
    const refusals: Array<[string, unknown]> = [
      ['session/append', { sessionId, records: [{ kind: 'turn', turnId, event: 'finish', outcome: 'completed' }] }],
      ['session/append', { sessionId, records: [{ ...user('x'), turnId: 'forged' }] }],
      ['turn/start', { sessionId, kind: 'robot' }],
      ['turn/start', { sessionId }],
      ['turn/setPhase', { sessionId, turnId, phase: 'dreaming' }],
      ['turn/setPhase', { sessionId, turnId: '', phase: 'compacting' }],
      ['turn/fail', { sessionId, turnId, error: '' }],
      ['turn/finish', { sessionId, turnId, outcome: 'active' }],
      ['turn/resume', { sessionId, turnId, extra: 1 }],
      ['session/context', { sessionId, prune: { keepRecentToolOutputs: -1 } }],
      ['session/context', { sessionId, prune: { other: 1 } }],
    ];
    for (const [method, params] of refusals) {
      const err = await rejection(c.request(method, params));
      expect(err.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
    }
    expect(await lastSeqOf(c, sessionId)).toBe(1);
    expect((await rejection(c.request('turn/get', { sessionId: '01NOSUCHSESSION000000000000' }))).kind).toBe('SessionNotFound');
    expect((await rejection(c.request('turn/get', { sessionId: '../x' }))).kind).toBe('InvalidSessionId');
    await c.close(sessionId);
    expect((await rejection(c.request('turn/resume', { sessionId, turnId }))).kind).toBe('ReadOnly');
    expect((await rejection(c.request('turn/start', { sessionId, kind: 'user' }))).kind).toBe('ReadOnly');
    expect(await getTurn(c, sessionId)).toMatchObject({ turnId, status: 'active' }); // reading needs no open
    await c.shutdown();
  });

  it('transitions are ordered with the appends around them: pipelined turn/start and a user message in auto mode', async () => {
    const c = await startSidecar({ framing });
    const { sessionId } = await c.create({ turns: 'auto' });
    const [start, append, get] = await Promise.allSettled([
      c.request<{ turnId: string }>('turn/start', { sessionId, kind: 'background' }),
      c.append({ sessionId, records: [user('hi')] }),
      getTurn(c, sessionId),
    ]);
    expect(start.status).toBe('fulfilled');
    expect(append.status).toBe('rejected');
    expect(((append as PromiseRejectedResult).reason as SidecarError).data).toMatchObject({
      kind: 'InvalidTurnTransition', turn: { turnId: (start as PromiseFulfilledResult<{ turnId: string }>).value.turnId, status: 'active' },
    });
    expect((get as PromiseFulfilledResult<Turn>).value).toMatchObject({ kind: 'background', status: 'active' });
    await c.shutdown();
  });

  it('a crash mid-tool: the context ends with a synthetic result; the turn is active in executingTools; resume completes it', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ turns: 'auto', systemPrompt: 'You run tests.' });
    await c.append({ sessionId, records: [user('run the tests')] });
    await c.append({ sessionId, records: [calls('call_1')] });
    await c.kill('SIGKILL');

    const d = await startSidecar({ framing, store });
    const opened = await d.open({ sessionId });
    expect(opened.turn).toMatchObject({ kind: 'user', status: 'active', phase: 'executingTools', firstSeq: 1 });
    const turn = opened.turn as Turn;
    expect(await getTurn(d, sessionId)).toEqual(turn);
    const ctx = await d.request<{ messages: Msg[]; turn: Turn }>('session/context', { sessionId });
    expect(ctx.turn).toEqual(turn);
    expect(ctx.messages).toEqual([
      { role: 'system', content: 'You run tests.' },
      { role: 'user', content: 'run the tests' },
      { role: 'assistant', content: null, toolCalls: [call('call_1')] },
      { role: 'tool', toolCallId: 'call_1', name: 'bash', content: CANCELLED },
    ]);
    expectWellFormed(ctx.messages);
    // a retry is turn/resume, not a second user message
    await expectInvalidTransition(d, sessionId, () => d.append({ sessionId, records: [user('run the tests')] }));
    expect(await d.request('turn/resume', { sessionId, turnId: turn.turnId })).toEqual({});
    await d.append({ sessionId, records: [toolResult('call_1', '42 passed')] });
    expect(await getTurn(d, sessionId)).toMatchObject({ status: 'active', phase: 'providerStream' });
    await d.append({ sessionId, records: [final('All 42 tests pass.')] });
    const done = await getTurn(d, sessionId);
    expect(done).toEqual({ ...turn, phase: 'providerStream', status: 'completed', lastSeq: 9 });
    const after = await d.request<{ messages: Msg[] }>('session/context', { sessionId });
    expect(after.messages.slice(3)).toEqual([
      { role: 'tool', toolCallId: 'call_1', name: 'bash', content: '42 passed' }, { role: 'assistant', content: 'All 42 tests pass.' },
    ]);
    expectWellFormed(after.messages);
    const records = await readAll(d, sessionId);
    expect(records.filter((r) => r.kind === 'message' && (r.message as Msg).role === 'user')).toHaveLength(1);
    expect(records.every((r) => r.turnId === turn.turnId)).toBe(true);
    await d.shutdown();
  });

  it('session/context over the wire: interruption results, pruning, reasoningDetails kept exactly', async () => {
    const store = tempDir();
    const c = await startSidecar({ framing, store });
    const { sessionId } = await c.create({ turns: 'auto' });
    const reasoningDetails = [{ type: 'reasoning.encrypted', data: 'gAAAAABn9+/=', id: 'rs_1', format: 'openai-responses-v1', index: 0 }, { type: 'reasoning.text', text: 'hmm 😀\n' }];
    await c.append({ sessionId, records: [user('go'), msg({ role: 'assistant', content: null, reasoningDetails, toolCalls: [call('a'), call('b'), call('c')] })] });
    await c.append({ sessionId, records: [toolResult('a', 'A'.repeat(500))] });
    await c.append({
      sessionId,
      records: [{
        kind: 'interruption', reason: 'user cancelled', phase: 'executingTools', toolCalls: [call('z')],
        toolResults: [{ id: 'b', name: 'bash', result: 'B'.repeat(400) }, { id: 'z', name: 'bash', result: 'never' }],
      }],
    });
    expect(await getTurn(c, sessionId)).toMatchObject({ status: 'interrupted' });
    const prune = { keepRecentToolOutputs: 1, maxToolOutputChars: 10 };
    const ctx = await c.request<{ messages: Msg[] }>('session/context', { sessionId, prune });
    expectWellFormed(ctx.messages);
    expect(ctx.messages.map((m) => [m.role, m.toolCallId ?? null, m.content])).toEqual([
      ['user', null, 'go'], ['assistant', null, null],
      ['tool', 'a', `${'A'.repeat(10)}\n[… 490 characters pruned]`],
      ['tool', 'b', `${'B'.repeat(10)}\n[… 390 characters pruned]`],
      ['tool', 'c', CANCELLED],
    ]);
    expect(JSON.stringify(ctx.messages[1]!.reasoningDetails)).toBe(JSON.stringify(reasoningDetails));
    await c.kill('SIGKILL');
    const d = await startSidecar({ framing, store });
    expect(await d.request('session/context', { sessionId, prune })).toEqual({ ...ctx, turn: await getTurn(d, sessionId) });
    const stored = await readAll(d, sessionId);
    expect((stored.find((r) => (r.message as Msg | undefined)?.toolCallId === 'a')!.message as Msg).content).toBe('A'.repeat(500));
    await d.shutdown();
  });
});

// ---------------------------------------------------------------------------------------------
// SIGKILL at a random point of a scripted sequence

type ScriptOp =
  | { m: 'append'; records: unknown[] }
  | { m: 'start'; kind: 'user' | 'background' }
  | { m: 'phase' | 'fail' | 'resume' | 'finish'; phase?: string; outcome?: string };

/** A script in auto mode, with refused operations among the accepted ones. */
const SCRIPT: ScriptOp[] = [
  { m: 'append', records: [user('q1')] },
  { m: 'phase', phase: 'providerStream' },
  { m: 'append', records: [calls('k1')] },
  { m: 'append', records: [user('refused: pending')] },
  { m: 'append', records: [toolResult('k1', 'r1')] },
  { m: 'fail' },
  { m: 'finish', outcome: 'completed' }, // refused: retryable
  { m: 'resume' },
  { m: 'append', records: [final('a1')] },
  { m: 'start', kind: 'background' },
  { m: 'phase', phase: 'compacting' },
  { m: 'start', kind: 'user' }, // refused
  { m: 'finish', outcome: 'terminalFailure' },
  { m: 'append', records: [user('q2'), calls('k2')] },
  { m: 'append', records: [{ kind: 'interruption', reason: 'cancelled', phase: 'executingTools', toolResults: [{ id: 'k2', name: 'bash', result: 'r2' }] }] },
  { m: 'append', records: [msg({ role: 'observation', content: 'ci' })] },
  { m: 'fail' },
  { m: 'finish', outcome: 'abandoned' },
];

function sendOp(c: SidecarClient, sessionId: string, op: ScriptOp, turnId: string | undefined): Promise<unknown> {
  const ref = { sessionId, turnId: turnId ?? '01NOTURN000000000000000000' };
  switch (op.m) {
    case 'append': return c.append({ sessionId, records: op.records as never });
    case 'start': return c.request('turn/start', { sessionId, kind: op.kind });
    case 'phase': return c.request('turn/setPhase', { ...ref, phase: op.phase });
    case 'fail': return c.request('turn/fail', { ...ref, error: 'flaky' });
    case 'resume': return c.request('turn/resume', ref);
    case 'finish': return c.request('turn/finish', { ...ref, outcome: op.outcome });
  }
}

/** A state with its turn id replaced by the turn's ordinal in the session (ids differ between runs). */
function normalized(turn: Turn | null, ids: string[]): unknown {
  if (turn === null) return null;
  const k = ids.indexOf(turn.turnId);
  return { ...turn, turnId: k === -1 ? `#${ids.length}` : `#${k}` };
}

describe.each(FRAMINGS)('SIGKILL during a scripted turn sequence (%s)', (framing) => {
  it('the state after reopen is the one the acknowledged operations imply, or that plus the one in flight', async () => {
    const store = tempDir();
    // Reference run: the state and lastSeq after each operation, turn ids as ordinals.
    const ref = await startSidecar({ framing, store });
    const { sessionId: refId } = await ref.create({ turns: 'auto' });
    const refIds: string[] = [];
    const expected: Array<{ turn: unknown; lastSeq: number }> = [{ turn: null, lastSeq: 0 }];
    let refusedCount = 0;
    for (const op of SCRIPT) {
      const current = await getTurn(ref, refId);
      await sendOp(ref, refId, op, current?.turnId).catch((e: unknown) => {
        expect((e as SidecarError).code).toBe(INVALID_TURN_TRANSITION);
        refusedCount += 1;
      });
      const turn = await getTurn(ref, refId);
      if (turn && !refIds.includes(turn.turnId)) refIds.push(turn.turnId);
      expected.push({ turn: normalized(turn, refIds), lastSeq: await lastSeqOf(ref, refId) });
    }
    expect(refusedCount).toBe(3);
    expect(expected.at(-1)!.turn).toMatchObject({ status: 'abandoned', kind: 'background' });
    await ref.shutdown();

    for (let iteration = 0; iteration < 8; iteration++) {
      const killAt = Math.floor(Math.random() * SCRIPT.length);
      const c = await startSidecar({ framing, store });
      const { sessionId } = await c.create({ turns: 'auto' });
      const ids: string[] = [];
      let turn: Turn | null = null;
      for (let i = 0; i < killAt; i++) {
        await sendOp(c, sessionId, SCRIPT[i]!, turn?.turnId).catch(() => undefined);
        turn = await getTurn(c, sessionId);
        if (turn && !ids.includes(turn.turnId)) ids.push(turn.turnId);
        expect({ turn: normalized(turn, ids), lastSeq: await lastSeqOf(c, sessionId) }).toEqual(expected[i + 1]);
      }
      // the next operation is in flight when the process dies
      const inFlight = sendOp(c, sessionId, SCRIPT[killAt]!, turn?.turnId).then(() => 'acked', () => 'failed');
      // at once (the request is most likely never read) or after up to ~3 ms (most likely done)
      if (iteration % 2 === 1) await new Promise((r) => setTimeout(r, Math.random() * 3));
      await c.kill('SIGKILL');
      const acked = (await inFlight) === 'acked';

      const d = await startSidecar({ framing, store });
      const opened = await d.open({ sessionId });
      const got = { turn: normalized(opened.turn as Turn | null, ids), lastSeq: opened.lastSeq };
      const before = expected[killAt]!;
      const after = expected[killAt + 1]!;
      if (acked) expect(got).toEqual(after);
      else expect([before, after]).toContainEqual(got);
      // the reopened state is a consistent one to go on from: the rest of the script runs as in the reference
      if (JSON.stringify(got) === JSON.stringify(after)) {
        let t = opened.turn as Turn | null;
        if (t && !ids.includes(t.turnId)) ids.push(t.turnId);
        for (let i = killAt + 1; i < SCRIPT.length; i++) {
          await sendOp(d, sessionId, SCRIPT[i]!, t?.turnId).catch(() => undefined);
          t = await getTurn(d, sessionId);
          if (t && !ids.includes(t.turnId)) ids.push(t.turnId);
          expect({ turn: normalized(t, ids), lastSeq: await lastSeqOf(d, sessionId) }).toEqual(expected[i + 1]);
        }
      }
      await d.shutdown();
    }
  });
});
