import { NO_RUNTIME, reduceRuntime, type RuntimeCounters } from '../../domain/runtimeCounters.js';
import { applyTurn, type TurnEvent, type TurnState } from '../../domain/turns/turnState.js';
import { type HeaderState, reduceHeader } from '../../domain/sessionUpdate.js';
import { NO_USAGE, reduceUsage, type UsageTotals } from '../../domain/usage.js';

/**
 * What a compaction's checkpoint carries about the records it replaces, reduced record by
 * record in seq order (once, for every backend): the turn state, the runtime counters, the usage
 * totals, and how many records it summarizes (a checkpoint counts what it summarized itself).
 * A rewind record restores the turn and open requests it carries (domain/rewind.ts). The same
 * reduction gives the state as of a seq for session/rewind.
 */
export interface PrefixState {
  turn: TurnState | null;
  runtime: RuntimeCounters;
  usage: UsageTotals;
  summarized: number;
  /** title/metadata/tags after the session's updates (absent: never updated). */
  header?: HeaderState;
}

export const EMPTY_PREFIX: PrefixState = Object.freeze({ turn: null, runtime: NO_RUNTIME, usage: NO_USAGE, summarized: 0 });

/** `base`: the creation header's title/metadata/tags, which the first update applies to. */
export function reducePrefix(s: PrefixState, rec: Record<string, unknown> & { seq: number; kind: string }, base: HeaderState = {}): PrefixState {
  const runtime = reduceRuntime(s.runtime, rec);
  const header = reduceHeader(s.header, base, rec);
  const withHeader = header === undefined ? {} : { header };
  const usage = reduceUsage(s.usage, rec);
  if (rec.kind === 'checkpoint') {
    const own = Number((rec.counters as { summarizedRecords?: number } | undefined)?.summarizedRecords ?? 0);
    return { turn: (rec.turn as TurnState | null | undefined) ?? null, runtime, usage, summarized: s.summarized + own, ...withHeader };
  }
  const turn = rec.kind === 'turn' ? applyTurn(s.turn, rec as unknown as TurnEvent, rec.seq)
    : rec.kind === 'rewind' ? ((rec.turn as TurnState | null | undefined) ?? null) : s.turn;
  return { turn, runtime, usage, summarized: s.summarized + 1, ...withHeader };
}

/** The checkpoint's members (before the caller's summary/provider/model and the secret gate). */
export function checkpointMembers(
  throughSeq: number, nextGeneration: number, s: PrefixState, archived: { generation: number; records: number; bytes: number },
): Record<string, unknown> {
  return {
    kind: 'checkpoint', generation: nextGeneration, throughSeq, turn: s.turn,
    counters: { summarizedRecords: s.summarized }, archived, ...(s.runtime === NO_RUNTIME ? {} : { runtime: s.runtime }),
    ...(s.header === undefined ? {} : { header: s.header }),
    ...(s.usage.records === 0 ? {} : { usage: s.usage }),
  };
}
