import { StoreError } from './errors.js';
import type { SessionHeader, SessionHeaderInput } from './types.js';

/**
 * session/update: the header members a session may change after its creation (title, metadata,
 * tags). The journal's header line (the session row's header text) is never rewritten: an
 * update is a `sessionUpdate` record, and the effective header is the creation header with the
 * updates applied in seq order (a reduction, carried by checkpoints and index snapshots).
 */

/** The effective values of the mutable header members (absent: the session has none). */
export interface HeaderState {
  title?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

/** An update as a client sends it (the members of the `sessionUpdate` record). */
export interface SessionUpdate {
  title?: string;
  metadata?: Record<string, unknown>;
  tags?: string[];
}

export const MAX_TITLE_CHARS = 1024;
export const MAX_TAGS = 32;
export const MAX_TAG_CHARS = 128;
export const TAG_PATTERN = /^[A-Za-z0-9._:-]+$/;

/** The mutable members of a creation header (the base the updates apply to). */
export function baseState(header: Pick<SessionHeaderInput, 'title' | 'metadata' | 'tags'>): HeaderState {
  return {
    ...(header.title !== undefined ? { title: header.title } : {}),
    ...(header.metadata !== undefined ? { metadata: header.metadata } : {}),
    ...(header.tags !== undefined ? { tags: header.tags } : {}),
  };
}

/** The header as it stands after its updates (`state` undefined: never updated). */
export function effectiveHeader<H extends SessionHeader>(header: H, state: HeaderState | undefined): H {
  if (state === undefined) return header;
  const { title: _t, metadata: _m, tags: _g, ...rest } = header;
  return { ...rest, ...state } as H;
}

/**
 * A title as titles are kept: one line (line breaks and tabs become one space), other control
 * characters removed, surrounding blanks trimmed; at most MAX_TITLE_CHARS (the schema refuses
 * longer ones). An empty title removes the title.
 */
export function sanitizeTitle(title: string): string {
  // eslint-disable-next-line no-control-regex
  return title.replace(/[\r\n\t\u2028\u2029]+/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
}

/** Tags: `[A-Za-z0-9._:-]`, 1..MAX_TAG_CHARS characters, at most MAX_TAGS, duplicates refused. */
export function checkTags(tags: readonly string[], path = 'tags'): string[] {
  if (tags.length > MAX_TAGS) throw new StoreError('InvalidArgument', `at most ${MAX_TAGS} tags`, { path });
  const seen = new Set<string>();
  tags.forEach((t, i) => {
    if (typeof t !== 'string' || t.length > MAX_TAG_CHARS || !TAG_PATTERN.test(t)) {
      throw new StoreError('InvalidArgument', `tag ${i} must be 1..${MAX_TAG_CHARS} characters of [A-Za-z0-9._:-]`, { path: `${path}[${i}]` });
    }
    if (seen.has(t)) throw new StoreError('InvalidArgument', `tag ${i} is given twice`, { path: `${path}[${i}]` });
    seen.add(t);
  });
  return [...tags];
}

/** An update's members as they will be stored: title sanitized, tags checked; an empty update is refused. */
export function normalizeUpdate(u: SessionUpdate): SessionUpdate {
  if (u.title === undefined && u.metadata === undefined && u.tags === undefined) {
    throw new StoreError('InvalidArgument', 'session/update needs at least one of title, metadata and tags', { path: 'title' });
  }
  return {
    ...(u.title !== undefined ? { title: sanitizeTitle(u.title) } : {}),
    ...(u.metadata !== undefined ? { metadata: u.metadata } : {}),
    ...(u.tags !== undefined ? { tags: checkTags(u.tags) } : {}),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7396 JSON merge patch: null deletes a member, objects merge recursively, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * One `sessionUpdate` record applied to the state before it (`base`: the creation header's
 * members, for the first update). title replaces (empty: removed), metadata merges (empty
 * result: removed), tags replace (empty: removed).
 */
export function applyUpdate(state: HeaderState, rec: SessionUpdate): HeaderState {
  const next: HeaderState = { ...state };
  if (typeof rec.title === 'string') {
    if (rec.title === '') delete next.title;
    else next.title = rec.title;
  }
  if (rec.metadata !== undefined) {
    const merged = mergePatch(state.metadata ?? {}, rec.metadata) as Record<string, unknown>;
    if (Object.keys(merged).length === 0) delete next.metadata;
    else next.metadata = merged;
  }
  if (Array.isArray(rec.tags)) {
    if (rec.tags.length === 0) delete next.tags;
    else next.tags = [...rec.tags];
  }
  return next;
}

/** The reduction step: `state` undefined (never updated) starts from the creation header's members. */
export function reduceHeader(state: HeaderState | undefined, base: HeaderState, rec: { kind: string } & Record<string, unknown>): HeaderState | undefined {
  if (rec.kind === 'checkpoint') return rec.header as HeaderState | undefined; // it stands for every record before it
  if (rec.kind !== 'sessionUpdate') return state;
  return applyUpdate(state ?? base, rec as SessionUpdate);
}
