import { StoreError } from './errors.js';

/**
 * Retention (protocol §18): the duration grammar and which sessions a prune selects. Pure: the
 * engine (engine/prune.ts) lists the sessions and moves the selected ones to the trash.
 */

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
const SHORT = /^(\d{1,9})([smhdw])$/;
const ISO = /^P(?:(\d{1,9})W)?(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?$/;

/**
 * A duration in milliseconds: `<n><unit>` with unit s, m, h, d or w (`30d`, `12h`, `90m`), or
 * ISO 8601 with weeks, days, hours, minutes and seconds only (`P30D`, `PT12H`, `P1DT6H`; no
 * years or months: their length varies). Anything else is InvalidArgument at `path`.
 */
export function parseDuration(text: string, path: string): number {
  const short = SHORT.exec(text);
  if (short) return Number(short[1]) * (UNIT_MS[short[2] as string] as number);
  const iso = ISO.exec(text);
  if (iso && text !== 'P' && !text.endsWith('T')) {
    const [w, d, h, m, s] = iso.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number];
    return w * UNIT_MS.w! + d * UNIT_MS.d! + h * UNIT_MS.h! + m * UNIT_MS.m! + s * UNIT_MS.s!;
  }
  throw new StoreError('InvalidArgument', `${path} must be a duration such as 30d, 12h, 90m or P30D (units s, m, h, d, w)`, { path });
}

export interface PruneCandidate {
  sessionId: string;
  updatedAt: string;
  tags?: readonly string[];
}

export interface PruneSelection {
  /** Sessions last updated before now - olderThan. */
  olderThanMs: number;
  /** Of the sessions the age and tags select, the N most recently updated are kept. */
  keepLast?: number;
  /** Only sessions whose tags include every one of these. */
  tags?: readonly string[];
}

/**
 * The sessions a prune moves: last updated more than `olderThanMs` before `now`, carrying every
 * tag asked for (a session without tags never matches a tag filter), minus the `keepLast` most
 * recently updated of those (ties: the newer id kept). Returned most recently updated first.
 */
export function selectForPrune<T extends PruneCandidate>(all: readonly T[], sel: PruneSelection, now: number): T[] {
  const cutoff = now - sel.olderThanMs;
  const matching = all
    .filter((s) => Date.parse(s.updatedAt) < cutoff)
    .filter((s) => (sel.tags ?? []).every((t) => s.tags?.includes(t) === true))
    .sort((a, b) => (a.updatedAt !== b.updatedAt ? (a.updatedAt < b.updatedAt ? 1 : -1) : a.sessionId < b.sessionId ? 1 : -1));
  return matching.slice(sel.keepLast ?? 0);
}
