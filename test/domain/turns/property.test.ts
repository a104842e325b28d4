import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/domain/errors.js';
import type { FileSessionStore } from '../../../src/stores/fileStore.js';
import { applyNewTurnEvent, applyTurn, type TurnEvent } from '../../../src/domain/turns/turnState.js';
import type { RecordInput, TurnChange, TurnState } from '../../../src/domain/types.js';
import { tempDir } from '../../helpers.js';
import { indexOf, store } from '../../backends/file/storeHelpers.js';

/**
 * Property: on a real store, whatever sequence of turn operations (valid or not) and appends
 * (in auto or manual mode), also with two operations in flight at once, and with the store
 * closed and reopened in the middle:
 * - each operation is accepted or refused exactly as a model says; a refusal is
 *   InvalidTurnTransition with data.turn = the committed state, and writes nothing;
 * - the records written (turn records and the appended ones, with their turnId tags) are those
 *   the model lays out;
 * - getTurn equals the model's state (the model: applyTurn over the accepted transitions, with
 *   the auto-mode rules written out here independently of autoTurns.ts);
 * - a fresh store instance on the same directory, and one without the index, report the same.
 */

const PHASES = ['accepted', 'compacting', 'providerStream', 'executingTools'] as const;
const OUTCOMES = ['completed', 'interrupted', 'terminalFailure', 'abandoned'] as const;
const TEMPLATES = ['user', 'final', 'calls', 'tool', 'observation', 'background', 'interruption', 'note'] as const;
type Template = (typeof TEMPLATES)[number];
type Which = 'current' | 'other';

type Op =
  | { op: 'start'; kind: 'user' | 'background' }
  | { op: 'phase'; phase: (typeof PHASES)[number]; which: Which }
  | { op: 'fail'; which: Which }
  | { op: 'resume'; which: Which }
  | { op: 'finish'; outcome: (typeof OUTCOMES)[number]; which: Which; error: boolean }
  | { op: 'append'; records: Template[] };
type Step = Op | { op: 'pair'; a: Op; b: Op } | { op: 'reopen' };

const which = fc.constantFrom<Which>('current', 'current', 'current', 'other');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('start' as const), kind: fc.constantFrom('user' as const, 'background' as const) }),
  fc.record({ op: fc.constant('phase' as const), phase: fc.constantFrom(...PHASES), which }),
  fc.record({ op: fc.constant('fail' as const), which }),
  fc.record({ op: fc.constant('resume' as const), which }),
  fc.record({ op: fc.constant('finish' as const), outcome: fc.constantFrom(...OUTCOMES), which, error: fc.boolean() }),
  { arbitrary: fc.record({ op: fc.constant('append' as const), records: fc.array(fc.constantFrom(...TEMPLATES), { minLength: 1, maxLength: 4 }) }), weight: 3 },
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: opArb, weight: 10 },
  { arbitrary: fc.record({ op: fc.constant('pair' as const), a: opArb, b: opArb }), weight: 2 },
  { arbitrary: fc.constant({ op: 'reopen' as const }), weight: 1 },
);

function recordOf(t: Template, n: number): RecordInput {
  const m = (message: Record<string, unknown>): RecordInput => ({ kind: 'message', message });
  switch (t) {
    case 'user': return m({ role: 'user', content: `u${n}` });
    case 'final': return m({ role: 'assistant', content: `a${n}` });
    case 'calls': return m({ role: 'assistant', content: null, toolCalls: [{ id: `c${n}`, name: 'bash', arguments: '{}' }] });
    case 'tool': return m({ role: 'tool', toolCallId: `c${n}`, name: 'bash', content: `r${n}` });
    case 'observation': return m({ role: 'observation', content: `o${n}` });
    case 'background': return m({ role: 'background', content: `b${n}` });
    case 'interruption': return { kind: 'interruption', reason: 'cancelled', phase: 'providerStream' };
    case 'note': return { kind: 'note', n };
  }
}

/** What is compared of a stored record. */
type Shape = Record<string, unknown>;
function shapeOf(r: Record<string, unknown>): Shape {
  const out: Shape = { seq: r.seq, kind: r.kind };
  if (r.turnId !== undefined) out.turnId = r.turnId;
  if (r.kind === 'turn') for (const k of ['event', 'turnKind', 'phase', 'outcome', 'error'] as const) if (r[k] !== undefined) out[k] = r[k];
  if (r.kind === 'message') out.role = (r.message as { role: string }).role;
  return out;
}

interface Model {
  turn: TurnState | null;
  lastSeq: number;
  shapes: Shape[];
}

type Outcome = { ok: true; shapes: Shape[]; turn: TurnState | null } | { ok: false };

/**
 * The model of one operation on `m` (not changed). `idAt(seq)` is the turn id the store gave the
 * start record at `seq` (auto mode creates ids the test cannot know in advance); `turnIdOf` the
 * id the op names, fixed when it was sent.
 */
function model(m: Model, op: Op, turnIdOf: string, auto: boolean, idAt: (seq: number) => string, startedId?: string): Outcome {
  let turn = m.turn;
  let seq = m.lastSeq;
  const shapes: Shape[] = [];
  // A turn method writes by applyNewTurnEvent's rules (no phase change while retryable); records
  // an append lays out follow applyTurn's.
  const transition = (ev: TurnEvent, method = false): boolean => {
    try {
      turn = (method ? applyNewTurnEvent : applyTurn)(turn, ev, seq + 1);
    } catch {
      return false;
    }
    seq += 1;
    const { kind: _k, ...rest } = ev;
    shapes.push({ seq, kind: 'turn', ...Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) });
    return true;
  };
  const pending = () => turn !== null && (turn.status === 'active' || turn.status === 'retryable');
  const ERROR = 'model error';
  let ok: boolean;
  switch (op.op) {
    case 'start': ok = transition({ kind: 'turn', turnId: startedId ?? '?', event: 'start', turnKind: op.kind }); break;
    case 'phase': ok = transition({ kind: 'turn', turnId: turnIdOf, event: 'phase', phase: op.phase }, true); break;
    case 'fail': ok = transition({ kind: 'turn', turnId: turnIdOf, event: 'fail', error: ERROR }); break;
    case 'resume': ok = transition({ kind: 'turn', turnId: turnIdOf, event: 'resume' }); break;
    case 'finish':
      ok = transition({ kind: 'turn', turnId: turnIdOf, event: 'finish', outcome: op.outcome, ...(op.error ? { error: ERROR } : {}) });
      break;
    case 'append':
      ok = op.records.every((t) => {
        const current = () => (turn as TurnState).turnId;
        if (auto) {
          if (t === 'user') {
            if (pending()) return false;
            if (!transition({ kind: 'turn', turnId: idAt(seq + 1), event: 'start', turnKind: 'user' })) return false;
          } else if ((t === 'observation' || t === 'background') && !pending()) {
            if (!transition({ kind: 'turn', turnId: idAt(seq + 1), event: 'start', turnKind: 'background' })) return false;
          }
        }
        seq += 1;
        const rec = recordOf(t, 0);
        shapes.push({
          seq, kind: rec.kind, ...(pending() ? { turnId: current() } : {}),
          ...(rec.kind === 'message' ? { role: (rec.message as { role: string }).role } : {}),
        });
        if (!auto || !pending()) return true;
        const id = current();
        if (t === 'interruption') return transition({ kind: 'turn', turnId: id, event: 'finish', outcome: 'interrupted' });
        if (t === 'calls') return transition({ kind: 'turn', turnId: id, event: 'phase', phase: 'executingTools' });
        if (t === 'final') return transition({ kind: 'turn', turnId: id, event: 'finish', outcome: 'completed' });
        if (t === 'tool') return transition({ kind: 'turn', turnId: id, event: 'phase', phase: 'providerStream' });
        return true;
      });
      break;
  }
  return ok ? { ok: true, shapes, turn } : { ok: false };
}

function send(s: FileSessionStore, id: string, op: Op, turnIdOf: string, n: number): Promise<unknown> {
  const change = (c: TurnChange) => s.transitionTurn(id, turnIdOf, c);
  switch (op.op) {
    case 'start': return s.startTurn(id, op.kind);
    case 'phase': return change({ event: 'phase', phase: op.phase });
    case 'fail': return change({ event: 'fail', error: 'model error' });
    case 'resume': return change({ event: 'resume' });
    case 'finish': return change({ event: 'finish', outcome: op.outcome, ...(op.error ? { error: 'model error' } : {}) });
    case 'append': return s.append(id, op.records.map((t, k) => recordOf(t, n * 10 + k)));
  }
}

async function run(auto: boolean, steps: Step[]): Promise<void> {
  const root = tempDir('sidecar-turn-prop-');
  let s = store(root);
  const { sessionId: id } = await s.create({ turns: auto ? 'auto' : 'manual' });
  let m: Model = { turn: null, lastSeq: 0, shapes: [] };
  let n = 0;
  const idOf = (w: Which) => (w === 'current' ? (m.turn?.turnId ?? 'NO-TURN') : 'NOT-A-TURN');

  for (const step of steps) {
    if (step.op === 'reopen') {
      await s.closeAll();
      s = store(root);
      expect((await s.open(id, 'write')).turn).toEqual(m.turn);
      continue;
    }
    const ops = step.op === 'pair' ? [step.a, step.b] : [step];
    // Ids are fixed when sent, from what the client knows then (the committed state).
    const named = ops.map((op) => ('which' in op ? idOf(op.which) : ''));
    const before = m.lastSeq;
    const settled = await Promise.allSettled(ops.map((op, k) => send(s, id, op, named[k] as string, n++)));
    const written = ((await s.read(id, { afterSeq: m.lastSeq, limit: 10_000 })).records as Array<Record<string, unknown>>).map(shapeOf);
    const bySeq = new Map(written.map((r) => [r.seq as number, r]));
    const idAt = (seq: number) => String(bySeq.get(seq)?.turnId ?? '?');
    for (const [k, op] of ops.entries()) {
      const got = settled[k] as PromiseSettledResult<unknown>;
      const startedId = op.op === 'start' && got.status === 'fulfilled' ? (got.value as { turnId: string }).turnId : undefined;
      const want = model(m, op, named[k] as string, auto, idAt, startedId);
      const label = `${JSON.stringify(op)} from ${JSON.stringify(m.turn)}`;
      if (!want.ok) {
        expect(got.status, label).toBe('rejected');
        const err = (got as PromiseRejectedResult).reason as StoreError;
        expect(err, label).toBeInstanceOf(StoreError);
        expect(err.kind, label).toBe('InvalidTurnTransition');
        expect(err.details.turn, `${label}: data.turn`).toEqual(m.turn);
        continue;
      }
      expect(got.status, label).toBe('fulfilled');
      if (op.op === 'append') {
        const r = (got as PromiseFulfilledResult<{ firstSeq: number; lastSeq: number }>).value;
        expect([r.firstSeq, r.lastSeq], label).toEqual([m.lastSeq + 1, m.lastSeq + want.shapes.length]);
      }
      m = { turn: want.turn, lastSeq: m.lastSeq + want.shapes.length, shapes: [...m.shapes, ...want.shapes] };
    }
    expect(written, 'the records written are those the model lays out').toEqual(m.shapes.filter((r) => (r.seq as number) > before));
    expect(await s.getTurn(id)).toEqual(m.turn);
  }

  expect(((await s.read(id, { limit: 10_000 })).records as Array<Record<string, unknown>>).map(shapeOf)).toEqual(m.shapes);
  expect((await s.context(id)).turn).toEqual(m.turn);
  await s.closeAll();
  const fresh = store(root);
  expect(await fresh.getTurn(id)).toEqual(m.turn);
  expect((await fresh.open(id, 'write')).turn).toEqual(m.turn);
  await fresh.closeAll();
  fs.rmSync(indexOf(root, id), { force: true });
  const noIndex = store(root);
  expect(await noIndex.getTurn(id)).toEqual(m.turn);
  expect((await noIndex.open(id, 'read')).turn).toEqual(m.turn);
  expect((await noIndex.open(id, 'write')).turn).toEqual(m.turn);
  await noIndex.closeAll();
  fs.rmSync(root, { recursive: true, force: true });
}

describe('turn state: a model check over random operation sequences', () => {
  for (const mode of ['auto', 'manual'] as const) {
    it(`${mode} mode: the store agrees with the model, after reopen and without its index`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 24 }), (steps) => run(mode === 'auto', steps)),
        { numRuns: 150, endOnFailure: true },
      );
    }, 30_000);
  }

  it('the model itself is not vacuous: a scripted run exercises acceptances, refusals and every status', async () => {
    // auto: user turn through tools to completion; a refused user message; fail, refused finish, resume; interruption
    await run(true, [
      { op: 'append', records: ['user', 'calls', 'tool'] }, { op: 'append', records: ['user'] }, { op: 'fail', which: 'current' },
      { op: 'finish', outcome: 'completed', which: 'current', error: false }, { op: 'resume', which: 'current' },
      { op: 'reopen' }, { op: 'append', records: ['final', 'observation', 'interruption'] },
      { op: 'pair', a: { op: 'start', kind: 'user' }, b: { op: 'append', records: ['user'] } },
      { op: 'finish', outcome: 'terminalFailure', which: 'current', error: true },
    ]);
  });
});
