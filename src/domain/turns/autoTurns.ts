import { StoreError } from '../errors.js';
import { newTurnId } from './ids.js';
import { applyTurn, invalidTransition, isPending, type TurnEvent, type TurnState } from './turnState.js';

type Rec = { kind: string; message?: { role?: unknown; toolCalls?: unknown } };

const BACKGROUND_ROLES = new Set(['observation', 'background']);

/**
 * Lays out one append: every record tagged with the turn pending when it is written and, in
 * auto mode, the transitions its records cause, placed in the same batch so a crash can never
 * keep a message without its transition or the reverse. Throws InvalidTurnTransition.
 */
export function planAppend(
  records: readonly Rec[],
  texts: readonly string[],
  turn: TurnState | null,
  firstSeq: number,
  auto: boolean,
): { texts: string[]; kinds: string[]; turn: TurnState | null; recordSeqs: number[] } {
  const out: string[] = [];
  const kinds: string[] = [];
  const recordSeqs: number[] = [];
  let state = turn;
  const emit = (ev: TurnEvent) => {
    state = applyTurn(state, ev, firstSeq + out.length);
    out.push(JSON.stringify(ev));
    kinds.push('turn');
  };
  records.forEach((rec, i) => {
    refuseTurnMembers(rec, i);
    try {
      if (auto) before(rec, state, emit);
      recordSeqs.push(firstSeq + out.length);
      out.push(tag(texts[i] as string, isPending(state) ? state.turnId : undefined));
      kinds.push(rec.kind);
      if (auto) after(rec, state, emit);
    } catch (err) {
      // Nothing of the append is written: the error shows the committed state, never a turn
      // that an earlier record of this same append would have started.
      if (err instanceof StoreError && err.kind === 'InvalidTurnTransition') {
        throw invalidTransition(turn, `record ${i}: ${String(err.details.reason ?? err.message)}`);
      }
      throw err;
    }
  });
  return { texts: out, kinds, turn: state, recordSeqs };
}

/**
 * `turn` records are written by the turn methods only (an appended one would never pass the
 * reducer: acknowledged, then `Corrupt` on the next open), and `turnId` is the store's member:
 * a record bringing its own would be written with the member twice, a line that fails its
 * canonical check and is later cut as a torn tail or reported as `Corrupt`. `sessionUpdate`
 * records are session/update's (laid out against the header state at commit time): an appended
 * one would change the header on the next open without the plan's checks.
 */
function refuseTurnMembers(rec: Rec, i: number): void {
  if (rec.kind === 'turn' || rec.kind === 'checkpoint' || rec.kind === 'sessionUpdate') {
    throw new StoreError('InvalidArgument', `record ${i}: kind "${rec.kind}" is written by the server, not appended`, { path: `records[${i}].kind` });
  }
  if (Object.hasOwn(rec, 'turnId')) {
    throw new StoreError('InvalidArgument', `record ${i} uses the reserved member name turnId`, { path: `records[${i}].turnId` });
  }
}

function before(rec: Rec, state: TurnState | null, emit: (ev: TurnEvent) => void): void {
  if (rec.kind !== 'message') return;
  const role = rec.message?.role;
  if (role === 'user') {
    if (isPending(state)) throw invalidTransition(state, 'the session has an unresolved turn; retry (turn/resume) or abandon it');
    emit({ kind: 'turn', turnId: newTurnId(), event: 'start', turnKind: 'user' });
  } else if (typeof role === 'string' && BACKGROUND_ROLES.has(role) && !isPending(state)) {
    emit({ kind: 'turn', turnId: newTurnId(), event: 'start', turnKind: 'background' });
  }
}

function after(rec: Rec, state: TurnState | null, emit: (ev: TurnEvent) => void): void {
  if (!isPending(state)) return;
  const { turnId } = state;
  if (rec.kind === 'interruption') return emit({ kind: 'turn', turnId, event: 'finish', outcome: 'interrupted' });
  if (rec.kind !== 'message') return;
  const role = rec.message?.role;
  if (role === 'assistant') {
    const calls = rec.message?.toolCalls;
    if (Array.isArray(calls) && calls.length > 0) emit({ kind: 'turn', turnId, event: 'phase', phase: 'executingTools' });
    else emit({ kind: 'turn', turnId, event: 'finish', outcome: 'completed' });
  } else if (role === 'tool') {
    emit({ kind: 'turn', turnId, event: 'phase', phase: 'providerStream' });
  }
}

/** The record's text with the turn it belongs to, as its first member. */
function tag(text: string, turnId: string | undefined): string {
  return turnId === undefined ? text : `{"turnId":${JSON.stringify(turnId)},${text.slice(1)}`;
}
