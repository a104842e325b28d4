import path from 'node:path';
import { isSessionId } from './common.js';
import type { FileChecks } from './permissions.js';

/** index/list.cache: the list cache older versions kept (no session's entry can have this name). */
const LIST_CACHE_FILE = 'list.cache';
import type { Finding, Location } from './report.js';
import { unlessWriting, writerLive } from './recoveryCheck.js';

/** The store's folders: the root, sessions/, index/, recovery/, history/, trash/, locks/, blobs/ and .gitignore. */
export function checkLayout(fc: FileChecks): Finding[] {
  const out: Finding[] = [];
  const { layout } = fc;
  fc.rootMode(out);
  for (const [dir, required] of [
    [layout.sessionsDir, true], [layout.indexDir, false], [layout.recoveryDir, false],
    [layout.historyDir, false], [layout.trashDir, false], [layout.locksDir, false], [layout.blobsDir, false],
  ] as const) {
    const d = fc.fsl.lstatSync(dir);
    if (!d) {
      if (required) out.push({ severity: 'error', check: 'layout', message: 'the sessions folder is missing: this is not a session store', file: fc.rel(dir) });
      else if (dir === layout.indexDir || dir === layout.recoveryDir) out.push({ severity: 'warning', check: 'layout', message: 'folder missing (the sidecar creates it on start)', file: fc.rel(dir) });
      continue;
    }
    fc.dirMode(d, dir, out);
  }
  const gi = fc.fsl.lstatSync(path.join(layout.root, '.gitignore'));
  if (!gi) out.push({ severity: 'warning', check: 'layout', message: 'no .gitignore: a store inside a repository could be committed', file: '.gitignore' });
  else if (!gi.isFile()) out.push({ severity: 'error', check: 'layout', message: '.gitignore is not a regular file', file: '.gitignore' });
  return out;
}

/** Live session ids (directories under sessions/); stray entries are reported. */
export function sessionDirs(fc: FileChecks, out: Finding[]): string[] {
  const ids: string[] = [];
  for (const name of fc.list(fc.layout.sessionsDir)) {
    const p = path.join(fc.layout.sessionsDir, name);
    if (!isSessionId(name)) {
      out.push({ severity: 'warning', check: 'layout', message: 'unexpected entry in sessions/ (not a session id)', file: fc.rel(p) });
      continue;
    }
    ids.push(name);
  }
  return ids.sort();
}

/** Ids of the deleted sessions under trash/. */
export function trashDirs(fc: FileChecks): string[] {
  return fc.list(fc.layout.trashDir).filter(isSessionId).sort();
}

/** Bytes of a session's journal and archives (for progress). */
export function sessionBytes(fc: FileChecks, id: string, location: Location): number {
  const { layout } = fc;
  const dirs = location === 'live'
    ? { journal: layout.journal(id), history: layout.historySessionDir(id) }
    : { journal: path.join(layout.trashSessionDir(id), 'session', 'journal.jsonl'), history: path.join(layout.trashSessionDir(id), 'history') };
  let n = fc.fsl.lstatSync(dirs.journal)?.size ?? 0;
  for (const name of fc.list(dirs.history)) n += fc.fsl.lstatSync(path.join(dirs.history, name))?.size ?? 0;
  return n;
}

/**
 * Index entries, recovery folders and archives of sessions that do not exist. Asked when the
 * sessions have been verified: a session created since `live` was listed is not an orphan (the
 * next run verifies it), and one being created or deleted right now (under its lease) leaves
 * its parts apart for an instant — a note then, not a warning.
 */
export function orphans(fc: FileChecks, live: ReadonlySet<string>): Finding[] {
  const out: Finding[] = [];
  const { layout } = fc;
  const orphan = (id: string) => !live.has(id) && !fc.fsl.lstatSync(layout.sessionDir(id));
  for (const name of fc.list(layout.indexDir)) {
    const p = path.join(layout.indexDir, name);
    const m = /^(.+)\.json$/.exec(name);
    const temp = /^(.+)\.json\.[0-9a-f]{16}\.tmp$/.exec(name); // an index write's temp file (durableFile tempNameFor)
    if (name === LIST_CACHE_FILE || (name.startsWith(`${LIST_CACHE_FILE}.`) && name.endsWith('.tmp'))) continue; // the list cache: no session's
    if (m && isSessionId(m[1] as string)) {
      const id = m[1] as string;
      if (orphan(id)) out.push(unlessWriting({ severity: 'warning', check: 'index', message: 'index entry of a session that does not exist (ignored)', file: fc.rel(p) }, writerLive(fc, id)));
    } else if (temp && isSessionId(temp[1] as string)) {
      out.push(unlessWriting({ severity: 'warning', check: 'index', message: 'a temporary file left by an index write that did not complete (a cache: it can be deleted while no sidecar runs)', file: fc.rel(p) }, writerLive(fc, temp[1] as string)));
    } else if (!/\.json\.\d+$/.test(name) && !/\.json\.[0-9a-f]+$/.test(name)) {
      out.push({ severity: 'warning', check: 'layout', message: 'unexpected file in index/', file: fc.rel(p) });
    }
  }
  for (const [dir, what] of [[layout.recoveryDir, 'recovery evidence'], [layout.historyDir, 'archived generations']] as const) {
    for (const name of fc.list(dir)) {
      if (isSessionId(name) && orphan(name)) {
        out.push(unlessWriting({ severity: 'warning', check: 'layout', message: `${what} of a session that does not exist`, file: fc.rel(path.join(dir, name)) }, writerLive(fc, name)));
      }
    }
  }
  return out;
}
