import path from 'node:path';
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import { isSessionId } from '../../domain/ids.js';
import { openJournal } from './journal/open.js';
import type { StoreLayout } from './layout.js';
import { type CacheRow, type ListCache, rowMatches } from './listCache.js';
import type { OpenSession } from './openSession.js';
import { entryOf, type IndexEntry, readIndexEntry, summaryOf } from './sessionIndex.js';
import { decodeCursor, pageOf } from '../../engine/listPage.js';
import type { ListOptions, ListPage, SessionSummary } from '../../domain/types.js';
import { checkFilter, filters, matches } from '../../engine/listFilter.js';
import { trashedSummaries } from './listTrash.js';

/** A listed session: its sort key, and its summary or the cache row holding it (parsed only if returned). */
interface Listed {
  sessionId: string;
  updatedAt: string;
  summary?: SessionSummary;
  row?: CacheRow;
  /** A cache row taken without an lstat (a page after a cursor): checked before it is returned. */
  unchecked?: boolean;
}

/**
 * How far a record's ts may lag the moment its bytes reach the journal (the ts is taken just
 * before the write; another process's clock is the same wall clock, which may be stepped back a
 * little). A write stalled longer than this can only make a concurrent pagination miss that
 * session (it is never returned stale: returned rows are always checked).
 */
const CLOCK_MARGIN_MS = 5_000;

/**
 * Lists sessions, most recently updated first (ties: newer id first). Every call lists the
 * sessions folder, so a session created or deleted by another process shows on the next list.
 * A session open here answers from its open handle; another from the cache row or index entry
 * that matches the journal's length and inode (listCache.ts); an entry that no longer matches
 * is summarized from the journal, read-only, and left as it is (only a writer may advance it);
 * a session that cannot be read is reported on the warning channel.
 *
 * Which journals are lstat'ed: all of them for a first page (any session appended since may now
 * be the newest). For a page after a cursor, a row checked at time T needs no lstat unless it is
 * returned, when the cursor's updatedAt is older than T (less a margin): an append after T has a
 * ts after T, so it moves its session before the cursor, out of this page, never into it. Every
 * row returned is checked against its journal first; a mismatch is summarized afresh and the
 * page is computed again.
 */
export function listSessions(
  fsl: FsLayer,
  layout: StoreLayout,
  open: ReadonlyMap<string, OpenSession>,
  cache: ListCache,
  opts: ListOptions,
  warn: (message: string) => void,
): ListPage {
  const after = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor); // an invalid cursor is refused before any journal is read
  const filter = checkFilter(opts); // so is an invalid filter
  const narrowed = filters(filter);
  const trashed = filter.includeDeleted ? trashedSummaries(fsl, layout, warn).map(listed) : [];
  const afterMs = after ? Date.parse(after.updatedAt) : NaN;
  const skipSince = Number.isFinite(afterMs) ? afterMs + CLOCK_MARGIN_MS : Infinity;
  const mustCheck = new Set<string>();
  for (;;) {
    const all: Listed[] = [];
    const ids = new Set<string>();
    for (const id of fsl.readdirSync(layout.sessionsDir)) {
      if (!isSessionId(id)) continue;
      ids.add(id);
      const live = open.get(id)?.indexEntry();
      const skipped = live || mustCheck.has(id) ? undefined : cache.checkedSince(id, skipSince);
      const listed = skipped
        ? { sessionId: id, updatedAt: skipped.updatedAt, row: skipped, unchecked: true }
        : summarize(fsl, layout, cache, id, live, warn);
      if (listed) all.push(listed);
    }
    if (!after) cache.retainOnly(ids); // once per pagination: a vanished session's row is never looked up (readdir drives)
    all.push(...trashed);
    // Filtered on the summaries (a row's is parsed here); a row whose text cannot be parsed stays,
    // and is summarized afresh when it would be returned (below), then filtered on the next turn.
    const kept = narrowed ? all.filter((l) => {
      const s = l.summary ?? (l.row ? cache.summaryOf(l.sessionId, l.row) : undefined);
      return s === undefined || matches(s, filter);
    }) : all;
    const page = pageOf(kept, { limit: opts.limit, cursor: opts.cursor });
    const sessions: SessionSummary[] = [];
    for (const s of page.sessions) {
      const row = s.row as CacheRow;
      const summary = s.unchecked && !stillMatches(fsl, layout, row, s.sessionId) ? undefined : s.summary ?? cache.summaryOf(s.sessionId, row);
      if (!summary) {
        if (!s.unchecked) cache.drop(s.sessionId); // a saved row whose text is damaged: forgotten
        mustCheck.add(s.sessionId); // summarized from its entry or journal on the next turn
        break;
      }
      sessions.push(summary);
    }
    if (sessions.length === page.sessions.length) return { ...page, sessions };
    // a returned row did not hold: list again, that session summarized from its entry or journal
  }
}

/** layout.journal(id) without path.join (a checked id has no separator and no ".."): 10,000 per list. */
function journalOf(layout: StoreLayout, id: string): string {
  return `${layout.root}${path.sep}sessions${path.sep}${id}${path.sep}journal.jsonl`; // = layout.journal(id)
}

function stillMatches(fsl: FsLayer, layout: StoreLayout, row: CacheRow, id: string): boolean {
  const st = fsl.lstatSync(journalOf(layout, id));
  return st !== undefined && rowMatches(row, st);
}


function listed(summary: SessionSummary): Listed {
  return { sessionId: summary.sessionId, updatedAt: summary.updatedAt, summary };
}

function summarize(
  fsl: FsLayer, layout: StoreLayout, cache: ListCache, id: string, live: IndexEntry | undefined, warn: (m: string) => void,
): Listed | undefined {
  if (live) return listed(summaryOf(live));
  const st = fsl.lstatSync(journalOf(layout, id));
  if (!st) return undefined; // a create that never completed: no session
  const row = cache.lookup(id, st);
  if (row) return { sessionId: id, updatedAt: row.updatedAt, ...(row.summary ? { summary: row.summary } : { row }) };
  const entry = readIndexEntry(fsl, layout, id);
  if (entry && entry.hv === 1 && entry.bytes === st.size && entry.ino === st.ino) {
    cache.noteEntry(entry, st);
    return listed(summaryOf(entry));
  }
  try {
    const handle = openJournal(fsl, layout, id, { writable: false, hint: entry });
    fsl.closeSync(handle.fd);
    // Not written back: a lister cannot know the bytes past the entry were synced (see The index).
    const summary = summaryOf(entryOf(handle));
    cache.noteScanned(summary, handle.ino, handle.position.bytes, st.ctimeMs);
    return listed(summary);
  } catch (err) {
    const kind = err instanceof StoreError ? err.kind : 'an I/O error';
    warn(`session ${id} left out of the list: ${kind}`);
    return undefined;
  }
}
