import path from 'node:path';
import { openPrivate } from '../../durable/durableFile.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { isSessionId } from '../../domain/ids.js';
import type { TrashEntry } from '../../domain/types.js';
import { readHeader } from './journal/scan.js';
import type { StoreLayout } from './layout.js';

/**
 * The sessions in the trash (trash/<id>/, protocol/STORAGE.md): those whose journal is there.
 * deletedAt is the trash entry's mtime (set by the delete's renames into it); bytes counts the
 * journal and the archived generations. An entry that cannot be read is listed without title.
 */
export function listTrashed(fsl: FsLayer, layout: StoreLayout): TrashEntry[] {
  if (!fsl.lstatSync(layout.trashDir)?.isDirectory()) return [];
  const out: TrashEntry[] = [];
  for (const id of fsl.readdirSync(layout.trashDir)) {
    // trash/.purging-<id>/: a purge past its commit point (gone for good; finished by the next purge)
    if (!isSessionId(id)) continue;
    const dir = layout.trashSessionDir(id);
    const st = fsl.lstatSync(dir);
    const journal = path.join(dir, 'session', 'journal.jsonl');
    const jst = fsl.lstatSync(journal);
    if (!st?.isDirectory() || !jst?.isFile()) continue; // an empty entry (a delete cut short before its first rename) holds no session
    let bytes = jst.size;
    const history = path.join(dir, 'history');
    if (fsl.lstatSync(history)?.isDirectory()) for (const f of fsl.readdirSync(history)) bytes += fsl.lstatSync(path.join(history, f))?.size ?? 0;
    out.push({ sessionId: id, ...titleOf(fsl, journal, jst.size), deletedAt: new Date(st.mtimeMs).toISOString(), bytes });
  }
  return out.sort((a, b) => (a.deletedAt < b.deletedAt ? 1 : a.deletedAt > b.deletedAt ? -1 : a.sessionId < b.sessionId ? 1 : -1));
}


function titleOf(fsl: FsLayer, journal: string, size: number): { title?: string } {
  try {
    const fd = openPrivate(fsl, journal, false);
    try {
      const { header } = readHeader(fsl, fd, size);
      return typeof header.title === 'string' ? { title: header.title } : {};
    } finally {
      fsl.closeSync(fd);
    }
  } catch {
    return {};
  }
}
