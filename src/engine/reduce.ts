import { NO_RUNTIME, reduceRuntime, type RuntimeCounters } from '../domain/runtimeCounters.js';
import { applyTurn, type TurnEvent, type TurnState } from '../domain/turns/turnState.js';
import { type HeaderState, reduceHeader } from '../domain/sessionUpdate.js';

/**
 * What a compaction's checkpoint carries about the records it replaces, reduced record by
 * record in seq order (once, for every backend): the turn state, the runtime counters, and how
 * many records it summarizes (a checkpoint counts what it summarized itself).
 */
export interface PrefixState {
  turn: TurnState | null;
  runtime: RuntimeCounters;
  summarized: number;
  /** title/metadata/tags after the session's updates (absent: never updated). */
  header?: HeaderState;
}

export const EMPTY_PREFIX: PrefixState = Object.freeze({ turn: null, runtime: NO_RUNTIME, summarized: 0 });

/** `base`: the creation header's title/metadata/tags, which the first update applies to. */
export function reducePrefix(s: PrefixState, rec: Record<string, unknown> & { seq: number; kind: string }, base: HeaderState = {}): PrefixState {
  const runtime = reduceRuntime(s.runtime, rec);
  const header = reduceHeader(s.header, base, rec);
  const withHeader = header === undefined ? {} : { header };
  if (rec.kind === 'checkpoint') {
    const own = Number((rec.counters as { summarizedRecords?: number } | undefined)?.summarizedRecords ?? 0);
    return { turn: (rec.turn as TurnState | null | undefined) ?? null, runtime, summarized: s.summarized + own, ...withHeader };
  }
  const turn = rec.kind === 'turn' ? applyTurn(s.turn, rec as unknown as TurnEvent, rec.seq) : s.turn;
  return { turn, runtime, summarized: s.summarized + 1, ...withHeader };
}

/** The checkpoint's members (before the caller's summary/provider/model and the secret gate). */
export function checkpointMembers(
  throughSeq: number, nextGeneration: number, s: PrefixState, archived: { generation: number; records: number; bytes: number },
): Record<string, unknown> {
  return {
    kind: 'checkpoint', generation: nextGeneration, throughSeq, turn: s.turn,
    counters: { summarizedRecords: s.summarized }, archived, ...(s.runtime === NO_RUNTIME ? {} : { runtime: s.runtime }),
    ...(s.header === undefined ? {} : { header: s.header }),
  };
}
