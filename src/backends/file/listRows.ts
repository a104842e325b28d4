/**
 * session/list's rows on the file backend (Backend.listByUpdate): every session's row from its
 * index entry when the entry still vouches for the journal (its length, head and last line: the
 * bytes it describes are the journal's, vouches below), else from a read-only scan of the journal —
 * which is not written back (a lister cannot know the bytes it saw were synced). A session that
 * cannot be read is left out and reported on the warning channel; it never fails the listing.
 *
 * The row of an entry carries the header members a summary needs (the entry's are the
 * effective ones; the header state beside them re-applies to the same result), the snapshot
 * members as the journal's position would give them, and the entry's updatedAt as lastTs.
 */
import type { FsLayer } from '../../durable/fsLayer.js';
import { StoreError } from '../../domain/errors.js';
import { isSessionId } from '../../domain/ids.js';
import type { ListedRow, ListNarrowing, UpdateCursor } from '../../core/port.js';
import type { StoreLayout } from './layout.js';
import { vouchesForJournal } from './journal/identity.js';
import { type IndexEntry, readIndexEntry } from './sessionIndex.js';

export interface ListSource {
  fsl: FsLayer;
  layout: StoreLayout;
  /** A session's row from its open handle or a scan of its journal (FileBackend.readRow). */
  scan(sessionId: string): ListedRow;
  /** Whether this process holds the session open for writing (its handle is newer than any entry). */
  held(sessionId: string): boolean;
  warn(message: string): void;
  /** A session left out of the list: its id and why (the StoreError's kind, or `io`). */
  unlisted?(sessionId: string, kind: string): void;
}

export function listRows(src: ListSource, o: { before?: UpdateCursor; limit: number; includeTrashed: boolean; narrow?: ListNarrowing }): ListedRow[] {
  const rows: ListedRow[] = [];
  // A search by header text (session/create's idempotencyKey lookup) needs the header's stamp:
  // an entry written before entries carried it cannot vouch for the header text.
  const stamped = o.narrow?.headerContains !== undefined;
  for (const id of idsIn(src.fsl, src.layout.sessionsDir)) {
    const row = liveRow(src, id, stamped);
    if (row) rows.push(row);
  }
  if (o.includeTrashed) {
    for (const id of idsIn(src.fsl, src.layout.trashDir, true)) {
      const row = scanned(src, id);
      if (row?.trashed) rows.push(row);
    }
  }
  const key = (r: ListedRow) => [r.lastTs !== null && r.lastTs > r.createdAt ? r.lastTs : r.createdAt, r.sessionId] as const;
  const newer = (a: readonly [string, string], b: readonly [string, string]) => (a[0] !== b[0] ? a[0] > b[0] : a[1] > b[1]);
  const before = o.before && ([o.before.updatedAt, o.before.sessionId] as const);
  return rows.filter((r) => !before || newer(before, key(r))).sort((a, b) => (newer(key(a), key(b)) ? -1 : 1)).slice(0, o.limit);
}

/** The ids in a folder. The sessions folder exists in every store (it is made at open): its loss is an error, never an empty list; the trash may not exist yet. */
function idsIn(fsl: FsLayer, dir: string, optional = false): string[] {
  if (optional && !fsl.lstatSync(dir)) return [];
  return fsl.readdirSync(dir).filter(isSessionId);
}

function liveRow(src: ListSource, id: string, stamped: boolean): ListedRow | undefined {
  if (!src.held(id)) {
    const st = src.fsl.lstatSync(src.layout.journal(id));
    if (!st) return undefined; // a create that never completed, or deleted meanwhile: no session
    const entry = readIndexEntry(src.fsl, src.layout, id);
    // An index entry stands for the journal only while the journal is one open would accept: a
    // journal opened to group/others (open answers UnsafeStore) goes to the scan, which refuses it.
    const safe = st.isFile() && (st.mode & 0o077) === 0;
    if (safe && entry && entry.hv === 1 && (!stamped || entry.iv === 1) && entry.bytes === st.size && vouches(src, id, entry, st.ino)) return rowOfEntry(entry);
  }
  return scanned(src, id);
}

/**
 * Whether the entry still describes the journal's bytes. An entry with a head is checked against
 * the journal itself (its head, and the checksum of the line its length ends on: a few KiB read),
 * so a copy's entries (cp -a, rsync: new inodes) serve as well as the original's, and a journal
 * replaced by a compaction (a new head) is never described by an old entry. An entry of an older
 * version (no head) is trusted on the same inode only.
 */
function vouches(src: ListSource, id: string, entry: IndexEntry, ino: number): boolean {
  return entry.head === undefined ? entry.ino === ino : vouchesForJournal(src.fsl, src.layout.journal(id), entry);
}

function scanned(src: ListSource, id: string): ListedRow | undefined {
  try {
    return src.scan(id);
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'SessionNotFound') return undefined;
    src.warn(`session ${id} left out of the list: ${err instanceof StoreError ? err.kind : 'an I/O error'}`);
    src.unlisted?.(id, err instanceof StoreError ? err.kind : 'io');
    return undefined;
  }
}

export function rowOfEntry(e: IndexEntry): ListedRow {
  const header = {
    sessionId: e.sessionId, createdAt: e.createdAt, ...(e.title !== undefined ? { title: e.title } : {}), ...(e.parent ? { parent: e.parent } : {}),
    ...(typeof e.cwd === 'string' ? { cwd: e.cwd } : {}), ...(Array.isArray(e.tags) ? { tags: e.tags } : {}),
    ...(e.idempotency ? { idempotency: e.idempotency } : {}),
  };
  return {
    sessionId: e.sessionId, headerText: JSON.stringify(header), createdAt: e.createdAt, lastTs: e.updatedAt > e.createdAt ? e.updatedAt : null,
    lastSeq: e.lastSeq, storedBytes: e.bytes, trashed: false,
    snapshot: {
      turn: e.turn ? JSON.stringify(e.turn) : null, runtime: e.runtime ? JSON.stringify(e.runtime) : null, usage: e.usage ? JSON.stringify(e.usage) : null,
      firstMessage: e.firstMessage ?? null, lastMessage: e.lastMessage ?? null, header: e.header ? JSON.stringify(e.header) : null,
    },
  };
}
