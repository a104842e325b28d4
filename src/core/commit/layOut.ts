import { StoreError } from '../../domain/errors.js';
import type { CarryOver } from '../../domain/secrets/carryOver.js';
import type { RuntimeCounters } from '../../domain/runtimeCounters.js';
import type { TurnState } from '../../domain/turns/turnState.js';
import type { HeaderState } from '../../domain/sessionUpdate.js';
import type { UsageTotals } from '../../domain/usage.js';

/** What a plan is laid out against: the state the committed records and the requests before it leave. */
export interface PlanState {
  turn: TurnState | null;
  runtime: RuntimeCounters;
  /** The effective title/metadata/tags after the session's updates (absent: never updated). */
  header?: HeaderState;
  /** Usage totals (domain/usage.ts): a rewind leaves them as they are. */
  usage: UsageTotals;
  /**
   * The session's first and last message summaries, where a backend keeps them beside the
   * records (the core's snapshot); absent where nobody tracks them in the plan (the file store).
   */
  messages?: MessageSummaries;
  /** The checked ends of the session's text streams (memory only; absent: nothing carried yet). */
  carry?: CarryOver;
}

/** "role: text" summaries of a session's first and last message (domain/summary.ts), as the gate admitted them. */
export interface MessageSummaries {
  first?: string;
  last?: string;
}

/**
 * What to append: records already serialized, or a plan that lays them out (and the turn
 * transitions and runtime counters they cause) against the session state at commit time.
 */
export interface AppendRequest {
  texts: string[];
  /** The kind of each of `texts` (a plan gives its own): carried beside the text, never parsed back from it. */
  kinds?: string[];
  expectedLastSeq?: number;
  plan?: (state: PlanState, firstSeq: number) => LaidOut & PlanState;
}

/** The records of one request as laid out: their texts and, where known, their kinds. */
export interface LaidOut {
  texts: string[];
  kinds?: string[];
}

export interface CommittedAppend {
  firstSeq: number;
  lastSeq: number;
  ts: string;
}

/**
 * The domain half of a commit, shared by every backend's commit queue: one request checked in
 * arrival order against the state the requests before it leave (after `seq`) — its
 * expectedLastSeq, then its plan. Returns the texts to write and the state after them, or the
 * error that refuses this request alone (the queue answers it and goes on with the others).
 * Pure: nothing is written, nothing changes when it refuses.
 */
export function layOutRequest(p: AppendRequest, seq: number, state: PlanState): (LaidOut & { state: PlanState }) | { refused: unknown } {
  if (p.expectedLastSeq !== undefined && p.expectedLastSeq !== seq) {
    return {
      refused: new StoreError('Conflict', `expectedLastSeq ${p.expectedLastSeq} does not match lastSeq ${seq}`, {
        expectedLastSeq: p.expectedLastSeq, lastSeq: seq,
      }),
    };
  }
  if (!p.plan) return { texts: p.texts, ...(p.kinds ? { kinds: p.kinds } : {}), state };
  try {
    const { texts, kinds, ...next } = p.plan(state, seq + 1);
    return { texts, ...(kinds ? { kinds } : {}), state: next };
  } catch (err) {
    return { refused: err };
  }
}

/** The error of a request whose bytes the final gate stopped (nothing of it is written). */
export function finalGateError(rule: string): StoreError {
  return new StoreError('SecretRejected', `a registered secret reached the final check (rule: ${rule}); nothing was written`, {
    path: '(serialized line)', rule,
  });
}
