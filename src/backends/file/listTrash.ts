import path from 'node:path';
import type { FsLayer } from '../../durable/fsLayer.js';
import { isSessionId } from '../../domain/ids.js';
import type { SessionSummary } from '../../domain/types.js';
import { openJournal } from './journal/open.js';
import type { StoreLayout } from './layout.js';
import { entryOf, readIndexEntry, summaryOf } from './sessionIndex.js';

/**
 * Summaries of the sessions in the trash (session/list with includeDeleted), marked deleted:
 * each from the index entry that moved with it (trash/<id>/index.json) while that entry still
 * matches the trashed journal's inode and length, else from the journal itself, read-only.
 * Nothing in the trash is changed. A part of a delete a crash cut short (no journal in the
 * trash yet) is not listed there: the session is still live.
 */
export function trashedSummaries(fsl: FsLayer, layout: StoreLayout, warn: (m: string) => void): SessionSummary[] {
  if (!fsl.lstatSync(layout.trashDir)?.isDirectory()) return [];
  const out: SessionSummary[] = [];
  for (const id of fsl.readdirSync(layout.trashDir)) {
    if (!isSessionId(id)) continue;
    const dir = layout.trashSessionDir(id);
    const journal = path.join(dir, 'session', 'journal.jsonl');
    const st = fsl.lstatSync(journal);
    if (!st?.isFile() || fsl.lstatSync(layout.journal(id)) !== undefined) continue;
    const entry = readIndexEntry(fsl, layout, id, path.join(dir, 'index.json'));
    if (entry && entry.hv === 1 && entry.ino === st.ino && entry.bytes === st.size) {
      out.push({ ...summaryOf(entry), deleted: true });
      continue;
    }
    try {
      const handle = openJournal(fsl, layout, id, { writable: false, file: journal });
      fsl.closeSync(handle.fd);
      out.push({ ...summaryOf(entryOf(handle)), deleted: true });
    } catch {
      warn(`deleted session ${id} left out of the list: it could not be read`);
    }
  }
  return out;
}
