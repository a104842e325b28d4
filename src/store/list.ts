import type { FsLayer } from '../durable/fsLayer.js';
import { StoreError } from './errors.js';
import { checkSessionId } from './ids.js';
import { openJournal } from './journal/open.js';
import type { StoreLayout } from './layout.js';
import type { OpenSession } from './openSession.js';
import { entryOf, type IndexEntry, readIndexEntry, summaryOf } from './sessionIndex.js';
import { decodeCursor, pageOf } from '../engine/listPage.js';
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
  if (opts.cursor !== undefined) decodeCursor(opts.cursor); // an invalid cursor is refused before any journal is read
  const all: SessionSummary[] = [];
  for (const id of fsl.readdirSync(layout.sessionsDir)) {
    if (!isSessionId(id)) continue;
    const summary = summarize(fsl, layout, id, open.get(id)?.indexEntry(), warn);
    if (summary) all.push(summary);
  }
  return pageOf(all, opts);
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

