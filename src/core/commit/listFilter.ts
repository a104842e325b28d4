/**
 * session/list's filters, once for every backend: checked before anything is read (a bad
 * filter is InvalidArgument and changes nothing), then matched against each session's summary
 * (the list cache / index summary on the file backend, the session row on PostgreSQL), never
 * against its records. Filters combine with AND; the order and cursor are listPage.ts's.
 */
import { StoreError } from '../../domain/errors.js';
import { checkTags } from '../../domain/sessionUpdate.js';
import type { ListFilter, SessionSummary } from '../../domain/types.js';
import type { ListNarrowing } from '../port.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** The filter with its timestamps normalized to the store's form (UTC, milliseconds); refused when malformed. */
export function checkFilter(f: ListFilter): ListFilter {
  const out: ListFilter = { ...f };
  if (f.cwd !== undefined && f.cwdPrefix !== undefined) {
    throw new StoreError('InvalidArgument', 'give at most one of cwd and cwdPrefix', { path: 'cwdPrefix' });
  }
  if (f.tags !== undefined) out.tags = checkTags(f.tags);
  for (const key of ['updatedAfter', 'updatedBefore'] as const) {
    const v = f[key];
    if (v === undefined) continue;
    const ms = ISO.test(v) ? Date.parse(v) : NaN;
    if (!Number.isFinite(ms)) throw new StoreError('InvalidArgument', `${key} must be an RFC 3339 timestamp, e.g. 2026-01-31T12:00:00.000Z`, { path: key });
    out[key] = new Date(ms).toISOString();
  }
  if (f.query !== undefined) out.query = f.query.toLowerCase();
  return out;
}

/** True when any filter narrows the list (includeDeleted widens it). */
export function filters(f: ListFilter): boolean {
  return f.cwd !== undefined || f.cwdPrefix !== undefined || f.tags !== undefined || f.parentId !== undefined
    || f.updatedAfter !== undefined || f.updatedBefore !== undefined || (f.query !== undefined && f.query !== '');
}

/** Whether a summary passes a checked filter (checkFilter's output). */
export function matches(s: SessionSummary, f: ListFilter): boolean {
  if (f.cwd !== undefined && s.cwd !== f.cwd) return false;
  if (f.cwdPrefix !== undefined && !underPrefix(s.cwd, f.cwdPrefix)) return false;
  if (f.tags !== undefined && !f.tags.every((t) => s.tags?.includes(t))) return false;
  if (f.parentId !== undefined && s.parent?.sessionId !== f.parentId) return false;
  if (f.updatedAfter !== undefined && !(s.updatedAt > f.updatedAfter)) return false;
  if (f.updatedBefore !== undefined && !(s.updatedAt < f.updatedBefore)) return false;
  if (f.query) {
    const q = f.query;
    const hay = [s.title, s.firstMessage, s.lastMessage, ...(s.tags ?? [])];
    if (!hay.some((t) => typeof t === 'string' && t.toLowerCase().includes(q))) return false;
  }
  return true;
}

/** cwd equal to the prefix or below it, by path components: "/w" matches "/w" and "/w/x", not "/wx". */
function underPrefix(cwd: string | undefined, prefix: string): boolean {
  if (cwd === undefined) return false;
  const p = prefix.endsWith('/') ? prefix : `${prefix}/`;
  return cwd === prefix || cwd.startsWith(p);
}

/** Printable ASCII other than `"` and `\`: what JSON text holds as it is. */
const VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * What a backend may apply of a checked filter in its own query (Backend.listByUpdate's
 * `narrow`): only conditions every summary `matches` keeps also meets. The texts are the
 * header's and its state's JSON (JSON.stringify: a string's JSON form occurs verbatim in them
 * when the header holds it) and the message summaries as stored. A filter member that cannot
 * be put so (a query with characters JSON may escape) is left to `matches` alone.
 */
export function narrowingOf(f: ListFilter): ListNarrowing | undefined {
  const n: ListNarrowing = {};
  if (f.updatedAfter !== undefined) n.updatedAfter = f.updatedAfter;
  if (f.updatedBefore !== undefined) n.updatedBefore = f.updatedBefore;
  const contains: string[] = [];
  if (f.cwd !== undefined) contains.push(JSON.stringify(f.cwd));
  // "/w" or below: the JSON string starts so (and "/wx" too: matches tells them apart).
  if (f.cwdPrefix !== undefined) contains.push(JSON.stringify(f.cwdPrefix).slice(0, -1));
  for (const t of f.tags ?? []) contains.push(JSON.stringify(t));
  if (f.parentId !== undefined) contains.push(JSON.stringify(f.parentId));
  if (contains.length > 0) n.headerContains = contains;
  if (f.query && VERBATIM.test(f.query)) n.needle = f.query;
  return Object.keys(n).length > 0 ? n : undefined;
}
