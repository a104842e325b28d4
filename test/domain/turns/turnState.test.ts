import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/domain/errors.js';
import {
  applyTurn, isPending, type TurnEvent, type TurnOutcome, type TurnPhase, type TurnState, type TurnStatus,
} from '../../../src/domain/turns/turnState.js';

/**
 * The reducer's transition table, written out independently of the implementation: for every
 * status (and "no turn yet"), every event, with the pending turn's id and with another id,
 * what the state becomes — or that the transition is refused with the current state attached.
 */

const ID = 'T-current';
const OTHER = 'T-other';
const SEQ = 42;
const PHASES: TurnPhase[] = ['accepted', 'compacting', 'providerStream', 'executingTools'];
const OUTCOMES: TurnOutcome[] = ['completed', 'interrupted', 'terminalFailure', 'abandoned'];
const STATUSES: Array<TurnStatus | null> = [null, 'active', 'retryable', 'completed', 'interrupted', 'terminalFailure', 'abandoned'];

function stateWith(status: TurnStatus): TurnState {
  const base: TurnState = { turnId: ID, kind: 'background', phase: 'providerStream', status, firstSeq: 7 };
  if (status === 'retryable') return { ...base, error: 'rate limited' };
  if (status === 'active') return base;
  return { ...base, lastSeq: 9, ...(status === 'terminalFailure' ? { error: 'boom' } : {}) };
}

type EventCase = { name: string; ev: (turnId: string) => TurnEvent };
const EVENTS: EventCase[] = [
  { name: 'start user', ev: (turnId) => ({ kind: 'turn', turnId, event: 'start', turnKind: 'user' }) },
  { name: 'start background', ev: (turnId) => ({ kind: 'turn', turnId, event: 'start', turnKind: 'background' }) },
  ...PHASES.map((phase) => ({ name: `phase ${phase}`, ev: (turnId: string): TurnEvent => ({ kind: 'turn', turnId, event: 'phase', phase }) })),
  { name: 'fail', ev: (turnId) => ({ kind: 'turn', turnId, event: 'fail', error: 'stream dropped' }) },
  { name: 'resume', ev: (turnId) => ({ kind: 'turn', turnId, event: 'resume' }) },
  ...OUTCOMES.map((outcome) => ({ name: `finish ${outcome}`, ev: (turnId: string): TurnEvent => ({ kind: 'turn', turnId, event: 'finish', outcome }) })),
  ...OUTCOMES.map((outcome) => ({
    name: `finish ${outcome} with error`,
    ev: (turnId: string): TurnEvent => ({ kind: 'turn', turnId, event: 'finish', outcome, error: 'final words' }),
  })),
];

/** The expected next state, or 'refused'. Written from the protocol's rules, not from the code. */
function expected(turn: TurnState | null, ev: TurnEvent): TurnState | 'refused' {
  const pending = turn !== null && (turn.status === 'active' || turn.status === 'retryable');
  if (ev.event === 'start') {
    if (pending) return 'refused';
    return { turnId: ev.turnId, kind: ev.turnKind!, phase: 'accepted', status: 'active', firstSeq: SEQ };
  }
  if (!pending || turn.turnId !== ev.turnId) return 'refused';
  const { error: _drop, ...withoutError } = turn;
  switch (ev.event) {
    case 'phase':
      return { ...turn, phase: ev.phase! };
    case 'fail':
      return turn.status === 'active' ? { ...turn, status: 'retryable', error: ev.error } : 'refused';
    case 'resume':
      return { ...withoutError, status: 'active' };
    case 'finish':
      if (turn.status === 'retryable' && ev.outcome !== 'abandoned') return 'refused';
      return { ...turn, status: ev.outcome!, lastSeq: SEQ, ...(ev.error !== undefined ? { error: ev.error } : {}) };
  }
}

function refusal(turn: TurnState | null, ev: TurnEvent): StoreError {
  const before = structuredClone(turn);
  let err: unknown;
  try {
    applyTurn(turn, ev, SEQ);
  } catch (e) {
    err = e;
  }
  expect(turn, 'the current state is never mutated').toEqual(before);
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

describe('applyTurn: the transition table', () => {
  const cases = STATUSES.flatMap((status) =>
    EVENTS.flatMap((e) => (e.name.startsWith('start') ? [{ status, e, id: 'T-new' }] : [{ status, e, id: ID }, { status, e, id: OTHER }])));

  it('covers every event from every status (and with a turn id that is not the current one)', () => {
    expect(cases).toHaveLength(STATUSES.length * (2 + 2 * (EVENTS.length - 2)));
  });

  it.each(cases.map((c) => [c.status ?? 'no turn', c.e.name, c.id, c] as const))('from %s: %s (%s)', (_s, _n, _i, c) => {
    const turn = c.status === null ? null : stateWith(c.status);
    const ev = c.e.ev(c.id);
    const want = expected(turn, ev);
    if (want === 'refused') {
      const err = refusal(turn, ev);
      expect(err.kind).toBe('InvalidTurnTransition');
      expect(err.details).toEqual({ turn, reason: expect.any(String) });
      expect(err.details.turn, 'data.turn is the current state').toEqual(turn);
      expect(err.details.reason).toBe(err.message);
      expect((err.details.reason as string).length).toBeGreaterThan(0);
      return;
    }
    const before = structuredClone(turn);
    const next = applyTurn(turn, ev, SEQ);
    expect(next).toStrictEqual(want);
    expect(turn, 'the reducer returns a new state').toEqual(before);
  });

  it('accepts exactly the transitions the rules allow (a count over the table)', () => {
    let accepted = 0;
    for (const c of cases) {
      const turn = c.status === null ? null : stateWith(c.status);
      try {
        applyTurn(turn, c.e.ev(c.id), SEQ);
        accepted += 1;
      } catch {
        /* refused */
      }
    }
    // start: from null + 4 finished statuses, 2 kinds = 10; with the pending id only:
    // active: 4 phases + fail + resume + 8 finishes = 14; retryable: 4 phases + resume + 2 abandoned = 7.
    expect(accepted).toBe(10 + 14 + 7);
  });
});

describe('applyTurn: rules in sequence', () => {
  it('a full life: start, phases, fail, resume, finish; lastSeq and firstSeq are the records\' seqs', () => {
    let t: TurnState | null = null;
    t = applyTurn(t, { kind: 'turn', turnId: 'a', event: 'start', turnKind: 'user' }, 3);
    expect(t).toEqual({ turnId: 'a', kind: 'user', phase: 'accepted', status: 'active', firstSeq: 3 });
    t = applyTurn(t, { kind: 'turn', turnId: 'a', event: 'phase', phase: 'providerStream' }, 4);
    t = applyTurn(t, { kind: 'turn', turnId: 'a', event: 'fail', error: '429' }, 5);
    expect(t).toEqual({ turnId: 'a', kind: 'user', phase: 'providerStream', status: 'retryable', firstSeq: 3, error: '429' });
    t = applyTurn(t, { kind: 'turn', turnId: 'a', event: 'phase', phase: 'compacting' }, 6);
    expect(t.status).toBe('retryable');
    t = applyTurn(t, { kind: 'turn', turnId: 'a', event: 'resume' }, 7);
    expect(t).toStrictEqual({ turnId: 'a', kind: 'user', phase: 'compacting', status: 'active', firstSeq: 3 });
    t = applyTurn(t, { kind: 'turn', turnId: 'a', event: 'finish', outcome: 'completed' }, 8);
    expect(t).toStrictEqual({ turnId: 'a', kind: 'user', phase: 'compacting', status: 'completed', firstSeq: 3, lastSeq: 8 });
    expect(isPending(t)).toBe(false);
    t = applyTurn(t, { kind: 'turn', turnId: 'b', event: 'start', turnKind: 'background' }, 9);
    expect(t).toStrictEqual({ turnId: 'b', kind: 'background', phase: 'accepted', status: 'active', firstSeq: 9 });
  });

  it('abandoning a retryable turn keeps the failure\'s error unless the finish gives one', () => {
    const r = stateWith('retryable');
    expect(applyTurn(r, { kind: 'turn', turnId: ID, event: 'finish', outcome: 'abandoned' }, 50)).toMatchObject({
      status: 'abandoned', error: 'rate limited', lastSeq: 50,
    });
    expect(applyTurn(r, { kind: 'turn', turnId: ID, event: 'finish', outcome: 'abandoned', error: 'gave up' }, 50)).toMatchObject({
      status: 'abandoned', error: 'gave up',
    });
  });

  it('isPending: active and retryable only', () => {
    expect(STATUSES.filter((s) => isPending(s === null ? null : stateWith(s)))).toEqual(['active', 'retryable']);
    expect(isPending(undefined)).toBe(false);
  });
});

describe('applyTurn: malformed transitions (as a hand-edited journal could hold) are refused, never reduced', () => {
  // Members the format marks optional keep their documented defaults (a start without turnKind is
  // a user turn, a finish without outcome completes, a phase event without phase keeps it); a
  // value outside the schema would give a TurnState the protocol cannot describe.
  it('documented defaults of optional members', () => {
    expect(applyTurn(null, { kind: 'turn', turnId: 'n', event: 'start' }, 1)).toMatchObject({ kind: 'user', status: 'active' });
    expect(applyTurn(stateWith('active'), { kind: 'turn', turnId: ID, event: 'finish' }, 1)).toMatchObject({ status: 'completed', lastSeq: 1 });
    expect(applyTurn(stateWith('active'), { kind: 'turn', turnId: ID, event: 'phase' }, 1)).toEqual(stateWith('active'));
  });

  const active = stateWith('active');
  const bad: Array<[string, TurnState | null, Record<string, unknown>]> = [
    ['an unknown event', active, { kind: 'turn', turnId: ID, event: 'explode' }],
    ['a phase that does not exist', active, { kind: 'turn', turnId: ID, event: 'phase', phase: 'dreaming' }],
    ['an outcome that does not exist', active, { kind: 'turn', turnId: ID, event: 'finish', outcome: 'exploded' }],
    ['an outcome "active"', active, { kind: 'turn', turnId: ID, event: 'finish', outcome: 'active' }],
    ['a start with an unknown turn kind', null, { kind: 'turn', turnId: 'n', event: 'start', turnKind: 'robot' }],
    ['a start without a turn id', null, { kind: 'turn', event: 'start', turnKind: 'user' }],
    ['a start with a numeric turn id', null, { kind: 'turn', turnId: 7, event: 'start', turnKind: 'user' }],
    ['a fail with a non-string error', active, { kind: 'turn', turnId: ID, event: 'fail', error: 7 }],
    ['a finish with a non-string error', active, { kind: 'turn', turnId: ID, event: 'finish', outcome: 'completed', error: {} }],
  ];
  it.each(bad)('%s', (_name, turn, ev) => {
    const err = refusal(turn, ev as unknown as TurnEvent);
    expect(err.kind).toBe('InvalidTurnTransition');
    expect(err.details.turn).toEqual(turn);
  });
});
