/**
 * The sessions in the trash (trash/<id>/, protocol/STORAGE.md) for Backend.listTrash: those whose
 * journal is there. deletedAt is the trash entry's mtime (set by the delete's renames into it);
 * storedBytes counts the journal and the archived generations. Only the header line is read
 * (a listing never scans a journal); an entry whose header cannot be read is listed without it.
 */
import path from 'node:path';
import { openPrivate } from '../../durable/durableFile.js';
import type { FsLayer } from '../../durable/fsLayer.js';
import { isSessionId } from '../../domain/ids.js';
import type { TrashedSession } from '../../core/port.js';
import { readHeader } from './journal/scan.js';
import type { StoreLayout } from './layout.js';

export function trashRows(fsl: FsLayer, layout: StoreLayout): TrashedSession[] {
  if (!fsl.lstatSync(layout.trashDir)?.isDirectory()) return [];
  const out: TrashedSession[] = [];
  for (const id of fsl.readdirSync(layout.trashDir)) {
    if (!isSessionId(id)) continue; // trash/.purging-<id>/: a purge past its commit point (gone for good)
    const dir = layout.trashSessionDir(id);
    const st = fsl.lstatSync(dir);
    const journal = path.join(dir, 'session', 'journal.jsonl');
    const jst = fsl.lstatSync(journal);
    if (!st?.isDirectory() || !jst?.isFile()) continue; // an empty entry (a delete cut short before its first rename) holds no session
    let bytes = jst.size;
    const history = path.join(dir, 'history');
    if (fsl.lstatSync(history)?.isDirectory()) for (const f of fsl.readdirSync(history)) bytes += fsl.lstatSync(path.join(history, f))?.size ?? 0;
    out.push({ sessionId: id, headerText: headerTextOf(fsl, journal, jst.size, id), deletedAt: new Date(st.mtimeMs).toISOString(), storedBytes: bytes });
  }
  return out;
}

function headerTextOf(fsl: FsLayer, journal: string, size: number, sessionId: string): string {
  try {
    const fd = openPrivate(fsl, journal, false);
    try {
      const { format: _f, version: _v, ...header } = readHeader(fsl, fd, size).header;
      return JSON.stringify(header);
    } finally {
      fsl.closeSync(fd);
    }
  } catch {
    return JSON.stringify({ sessionId });
  }
}
