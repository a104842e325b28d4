/**
 * The snapshot codec: the core state a backend keeps beside the records (port.ts Snapshot),
 * as texts the core writes and reads back itself. A backend stores them as opaque texts.
 */
import type { SealedRecord, SessionRow, Snapshot } from '../port.js';
import type { PlanState } from '../commit/layOut.js';
import { EMPTY_PREFIX, reducePrefix } from '../commit/reduce.js';
import { asCounters, NO_RUNTIME } from '../../domain/runtimeCounters.js';
import { type HeaderState } from '../../domain/sessionUpdate.js';
import { summarizeRecord } from '../../domain/summary.js';
import type { TurnState } from '../../domain/turns/turnState.js';
import { asUsage, NO_USAGE } from '../../domain/usage.js';

/** A new session's snapshot: nothing happened yet (usage null: "never counted" is told apart by the records). */
export const EMPTY_SNAPSHOT: Snapshot = Object.freeze({ turn: null, runtime: null, usage: null, firstMessage: null, lastMessage: null, header: null });

/** The state a row's snapshot carries. */
export function stateOf(row: Pick<SessionRow, 'snapshot'>): PlanState {
  const s = row.snapshot;
  const turn = s.turn === null ? null : (JSON.parse(s.turn) as TurnState | null);
  const runtime = s.runtime === null ? NO_RUNTIME : asCounters(JSON.parse(s.runtime));
  const header = s.header === null ? undefined : (JSON.parse(s.header) as HeaderState);
  const usage = s.usage === null ? NO_USAGE : asUsage(JSON.parse(s.usage));
  const messages = { ...(s.firstMessage !== null ? { first: s.firstMessage } : {}), ...(s.lastMessage !== null ? { last: s.lastMessage } : {}) };
  return { turn, runtime, usage, messages, ...(header ? { header } : {}) };
}

/** The snapshot of a state (before the final gate). */
export function snapshotOf(state: PlanState): Snapshot {
  return {
    turn: state.turn === null ? null : JSON.stringify(state.turn),
    runtime: state.runtime === NO_RUNTIME ? null : JSON.stringify(state.runtime),
    usage: JSON.stringify(state.usage), // never null: null marks a row written before usage totals existed
    firstMessage: state.messages?.first ?? null,
    lastMessage: state.messages?.last ?? null,
    header: state.header === undefined ? null : JSON.stringify(state.header),
  };
}

/**
 * "role: text" summaries of the message records among `recs` that `admits` lets through (only
 * messages are parsed): for records the core did not lay out itself (a fork's copies, a
 * migrated session).
 */
export function summariesOf(recs: readonly SealedRecord[], admits: (summary: string) => boolean): string[] {
  const out: string[] = [];
  for (const r of recs) {
    if (r.kind !== 'message') continue;
    const s = summarizeRecord(JSON.parse(r.text) as Record<string, unknown>);
    if (s !== undefined && admits(s)) out.push(s);
  }
  return out;
}

/** The state stored records leave (turn, counters, usage, header state), reduced in seq order. */
export function reduceRecords(recs: readonly SealedRecord[], base: HeaderState): PlanState {
  let state = EMPTY_PREFIX;
  for (const r of recs) state = reducePrefix(state, { ...(JSON.parse(r.text) as Record<string, unknown>), seq: r.seq, kind: r.kind }, base);
  const { summarized: _n, ...rest } = state;
  return rest;
}

/**
 * The snapshot records leave when they are stored at once (a fork's copies; a migrated
 * session): turn, counters and usage of `active`, summaries from `all` (the first) and the
 * latest of `active` (else of `all`).
 */
export function snapshotOfRecords(active: readonly SealedRecord[], all: readonly SealedRecord[], base: HeaderState, admits: (summary: string) => boolean): { snapshot: Snapshot; toolSeq: number } {
  const state = reduceRecords(active, base);
  const first = summariesOf(all, admits);
  const recent = active === all ? first : summariesOf(active, admits);
  const messages = { first: first[0], last: recent[recent.length - 1] ?? first[first.length - 1] };
  return { snapshot: snapshotOf({ ...state, messages }), toolSeq: state.runtime.toolSeq };
}
