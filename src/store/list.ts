import type { FsLayer } from '../durable/fsLayer.js';
import { StoreError } from './errors.js';
import { checkSessionId } from './ids.js';
import { openJournal } from './journal/open.js';
import type { StoreLayout } from './layout.js';
import type { OpenSession } from './openSession.js';
import { entryOf, type IndexEntry, readIndexEntry, summaryOf } from './sessionIndex.js';
import type { ListPage, SessionSummary } from './types.js';

/**
 * Lists sessions from their index entries, most recently updated first (ties: newer id
 * first). An entry that no longer matches its journal (length or inode) is summarized from the
 * journal, read-only, and left as it is (only a writer may advance it); a session that cannot be read is reported on the warning channel.
 */
export function listSessions(
  fsl: FsLayer,
  layout: StoreLayout,
  open: ReadonlyMap<string, OpenSession>,
  opts: { limit?: number; cursor?: string },
  warn: (message: string) => void,
): ListPage {
  const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor);
  const all: SessionSummary[] = [];
  for (const id of fsl.readdirSync(layout.sessionsDir)) {
    if (!isSessionId(id)) continue;
    const summary = summarize(fsl, layout, id, open.get(id)?.indexEntry(), warn);
    if (summary) all.push(summary);
  }
  all.sort(newestFirst);
  const start = after ? all.findIndex((s) => newestFirst(s, after) > 0) : 0;
  const rest = start === -1 ? [] : all.slice(start);
  const limit = opts.limit ?? 100;
  const sessions = rest.slice(0, limit);
  const last = sessions[sessions.length - 1];
  return rest.length > limit && last ? { sessions, nextCursor: encodeCursor(last) } : { sessions };
}

function isSessionId(name: string): boolean {
  try {
    checkSessionId(name);
    return true;
  } catch {
    return false;
  }
}

function summarize(
  fsl: FsLayer, layout: StoreLayout, id: string, live: IndexEntry | undefined, warn: (m: string) => void,
) {
  if (live) return summaryOf(live);
  const st = fsl.lstatSync(layout.journal(id));
  if (!st) return undefined; // a create that never completed: no session
  const entry = readIndexEntry(fsl, layout, id);
  if (entry && entry.bytes === st.size && entry.ino === st.ino) return summaryOf(entry);
  try {
    const handle = openJournal(fsl, layout, id, { writable: false, hint: entry });
    fsl.closeSync(handle.fd);
    // Not written back: a lister cannot know the bytes past the entry were synced (see The index).
    return summaryOf(entryOf(handle));
  } catch (err) {
    const kind = err instanceof StoreError ? err.kind : 'an I/O error';
    warn(`session ${id} left out of the list: ${kind}`);
    return undefined;
  }
}

type CursorKey = Pick<SessionSummary, 'updatedAt' | 'sessionId'>;

function newestFirst(a: CursorKey, b: CursorKey): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? 1 : -1;
  return a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0;
}

function encodeCursor(s: CursorKey): string {
  return Buffer.from(JSON.stringify([s.updatedAt, s.sessionId])).toString('base64url');
}

function decodeCursor(cursor: string): CursorKey {
  try {
    const [updatedAt, sessionId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof updatedAt === 'string' && typeof sessionId === 'string') return { updatedAt, sessionId };
  } catch {
    // fall through
  }
  throw new StoreError('InvalidArgument', 'invalid cursor: pass nextCursor from a previous session/list result', { path: 'cursor' });
}
