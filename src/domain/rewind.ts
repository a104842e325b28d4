import { StoreError } from './errors.js';
import type { RuntimeCounters } from './runtimeCounters.js';
import { isPending, type TurnState } from './turns/turnState.js';

/**
 * session/rewind (protocol/README.md §5 and the session/rewind section): a `rewind` record
 * undoes in place. From it on, the context, the turn state and the open api requests are those
 * of the session as of `toSeq`, plus what is appended after it; the journal stays append-only
 * (the rewound records stay readable). The record carries the state it restores — reduced
 * once at commit time from the records up to toSeq — so open, scan and compaction reproduce it
 * from the record alone:
 *
 *   {"kind":"rewind","toSeq":N,"turn":<TurnState|null as of N>,"openApi":[<apiSeqs open as of N>]}
 *
 * The high-water marks (the last apiSeq, the highest toolSeq) are NOT rewound: an apiSeq or
 * toolSeq is never reused. Usage totals are not rewound either: the tokens were spent.
 */
export interface RewindRecord {
  kind: 'rewind';
  toSeq: number;
  turn: TurnState | null;
  openApi: number[];
}

/** The record that restores `state` (the session as of toSeq). */
export function rewindRecord(toSeq: number, state: { turn: TurnState | null; runtime: RuntimeCounters }): RewindRecord {
  return { kind: 'rewind', toSeq, turn: state.turn, openApi: [...state.runtime.openApi] };
}

/**
 * The seqs a rewind may go back to: those the context can reach in the active generation —
 * from the checkpoint's seq after a compaction (older records are summarized by it), from 0
 * (the empty session) before any — up to lastSeq.
 */
export function checkRewindTarget(toSeq: number, firstSeq: number, lastSeq: number): void {
  const floor = firstSeq === 1 ? 0 : firstSeq;
  if (!Number.isSafeInteger(toSeq) || toSeq < floor || toSeq > lastSeq) {
    throw new StoreError('OutOfRange', `toSeq must be between ${floor} and ${lastSeq}${floor > 0 ? ' (older records are summarized by the checkpoint)' : ''}`, {
      path: 'toSeq', min: floor, max: lastSeq,
    });
  }
}

/**
 * The turn rule, against the turn at commit time: refused while a turn is active, unless the
 * rewind goes before it (toSeq < its firstSeq); a retryable turn may be rewound (as of toSeq it
 * is what it was then: active again when toSeq is inside it, gone when before it).
 */
export function checkRewindTurn(turn: TurnState | null, toSeq: number): void {
  if (isPending(turn) && turn.status === 'active' && toSeq >= turn.firstSeq) {
    throw new StoreError('Conflict', `turn ${turn.turnId} is active since seq ${turn.firstSeq}: finish or fail it first, or rewind to before it`, {
      reason: 'turnPending', turnId: turn.turnId, turnFirstSeq: turn.firstSeq,
    });
  }
}

/**
 * Which seqs are live (not rewound) given the rewind records of the active generation: walking
 * back from the end, a rewind at seq s to toSeq t hides (t, s); a rewind inside a hidden range
 * hides nothing (it was itself rewound). Nested rewinds thus compose: the result is exactly the
 * session as of each rewind's toSeq plus what followed.
 */
export function liveSeqs(rewinds: ReadonlyArray<{ seq: number; toSeq: number }>, lastSeq: number): (seq: number) => boolean {
  const hidden: Array<[number, number]> = []; // exclusive ranges (t, s)
  let cur = lastSeq;
  for (const r of [...rewinds].sort((a, b) => b.seq - a.seq)) {
    if (r.seq > cur) continue;
    if (r.toSeq < r.seq - 1) hidden.push([r.toSeq, r.seq]);
    cur = Math.min(cur, r.toSeq);
  }
  if (hidden.length === 0) return () => true;
  return (seq) => !hidden.some(([t, s]) => seq > t && seq < s);
}

/**
 * A compaction through `throughSeq` keeps the records after it: a kept rewind going back before
 * throughSeq would undo records the checkpoint summarizes (its state is the session's there),
 * so such a compaction is refused; compact through a seq at or before that rewind's toSeq, or
 * through the rewind itself.
 */
export function checkCompactionThrough(throughSeq: number, keptRewinds: ReadonlyArray<{ seq: number; toSeq: number }>): void {
  const back = keptRewinds.find((r) => r.seq > throughSeq && r.toSeq < throughSeq);
  if (back) {
    throw new StoreError('InvalidArgument', `the rewind at seq ${back.seq} goes back to seq ${back.toSeq}, before throughSeq ${throughSeq}: compact through ${back.toSeq} or through ${back.seq}`, {
      path: 'throughSeq', rewindSeq: back.seq, toSeq: back.toSeq,
    });
  }
}
