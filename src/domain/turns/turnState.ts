import { StoreError } from '../errors.js';

export type TurnKind = 'user' | 'background';
export type TurnPhase = 'accepted' | 'compacting' | 'providerStream' | 'executingTools';
export type TurnStatus = 'active' | 'retryable' | 'completed' | 'interrupted' | 'terminalFailure' | 'abandoned';
export type TurnOutcome = 'completed' | 'interrupted' | 'terminalFailure' | 'abandoned';

export interface TurnState {
  turnId: string;
  kind: TurnKind;
  phase: TurnPhase;
  status: TurnStatus;
  firstSeq: number;
  lastSeq?: number;
  error?: string;
}

/** A `turn` record: one transition. */
export interface TurnEvent {
  kind: 'turn';
  turnId: string;
  event: 'start' | 'phase' | 'fail' | 'resume' | 'finish';
  turnKind?: TurnKind;
  phase?: TurnPhase;
  outcome?: TurnOutcome;
  error?: string;
}

export const isPending = (t: TurnState | null | undefined): t is TurnState =>
  t !== null && t !== undefined && (t.status === 'active' || t.status === 'retryable');

export function invalidTransition(turn: TurnState | null, reason: string): StoreError {
  return new StoreError('InvalidTurnTransition', reason, { turn, reason });
}

/**
 * The one reducer of turn state, used both to validate a transition before it is written and
 * to rebuild the state from the journal (where a transition it refuses means `Corrupt`).
 * Rules: at most one pending (active or retryable) turn; only a pending turn changes phase,
 * is resumed or finishes; only an active turn fails; a retryable turn can only be abandoned.
 */
export function applyTurn(turn: TurnState | null, ev: TurnEvent, seq: number): TurnState {
  const malformed = malformedEvent(ev);
  if (malformed) throw invalidTransition(turn, `malformed turn transition: ${malformed}`);
  if (ev.event === 'start') {
    if (isPending(turn)) throw invalidTransition(turn, `turn ${turn.turnId} is still ${turn.status}: finish, resume or abandon it first`);
    return { turnId: ev.turnId, kind: ev.turnKind ?? 'user', phase: 'accepted', status: 'active', firstSeq: seq };
  }
  if (!isPending(turn) || turn.turnId !== ev.turnId) {
    throw invalidTransition(turn, turn && turn.turnId === ev.turnId ? `turn ${ev.turnId} is already ${turn.status}` : `turn ${ev.turnId} is not the pending turn`);
  }
  switch (ev.event) {
    case 'phase':
      return { ...turn, phase: ev.phase ?? turn.phase };
    case 'fail':
      if (turn.status !== 'active') throw invalidTransition(turn, `turn ${turn.turnId} is ${turn.status}: only an active turn can fail`);
      return { ...turn, status: 'retryable', error: ev.error };
    case 'resume': {
      const { error: _e, ...rest } = turn;
      return { ...rest, status: 'active' };
    }
    case 'finish': {
      const outcome = ev.outcome ?? 'completed';
      if (turn.status === 'retryable' && outcome !== 'abandoned') {
        throw invalidTransition(turn, `turn ${turn.turnId} is retryable: resume it (turn/resume) or abandon it`);
      }
      return { ...turn, status: outcome, lastSeq: seq, ...(ev.error !== undefined ? { error: ev.error } : {}) };
    }
  }
}

/**
 * The transition as a turn method writes it: applyTurn's rules, and a phase change only on an
 * active turn (a retryable turn is resumed first, then changes phase). Only new writes follow
 * this rule; replay keeps applyTurn's, since journals written before it may hold such records.
 */
export function applyNewTurnEvent(turn: TurnState | null, ev: TurnEvent, seq: number): TurnState {
  if (ev.event === 'phase' && isPending(turn) && turn.turnId === ev.turnId && turn.status === 'retryable') {
    throw invalidTransition(turn, `turn ${turn.turnId} is retryable: resume it (turn/resume) before it changes phase`);
  }
  return applyTurn(turn, ev, seq);
}

const EVENTS: ReadonlySet<unknown> = new Set(['start', 'phase', 'fail', 'resume', 'finish']);
const KINDS: ReadonlySet<unknown> = new Set<TurnKind>(['user', 'background']);
const PHASES: ReadonlySet<unknown> = new Set<TurnPhase>(['accepted', 'compacting', 'providerStream', 'executingTools']);
const OUTCOMES: ReadonlySet<unknown> = new Set<TurnOutcome>(['completed', 'interrupted', 'terminalFailure', 'abandoned']);

/**
 * Why `ev` is no transition at all (a journal line the server never writes), or undefined.
 * Optional members keep their defaults when absent; a value outside the protocol's enums would
 * reduce to a TurnState the protocol cannot describe (or, for an unknown event, to nothing).
 */
function malformedEvent(ev: TurnEvent): string | undefined {
  if (typeof ev.turnId !== 'string') return 'turnId is not a string';
  if (!EVENTS.has(ev.event)) return 'unknown event';
  if (ev.turnKind !== undefined && !KINDS.has(ev.turnKind)) return 'unknown turnKind';
  if (ev.phase !== undefined && !PHASES.has(ev.phase)) return 'unknown phase';
  if (ev.outcome !== undefined && !OUTCOMES.has(ev.outcome)) return 'unknown outcome';
  if (ev.error !== undefined && typeof ev.error !== 'string') return 'error is not a string';
  return undefined;
}
