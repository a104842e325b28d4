import fs from 'node:fs';
import path from 'node:path';
import { StoreError } from '../../domain/errors.js';
import { checkSessionId } from '../../domain/ids.js';

/**
 * The session a path names: its directory or its journal, inside the store at `root`. A path
 * outside the store root (after resolving symlinks) is refused with UnsafeStore.
 */
export function sessionIdOfPath(root: string, p: string): string {
  const resolved = realpathOrSelf(path.resolve(p));
  const inRoot = path.relative(realpathOrSelf(root), resolved);
  if (inRoot.startsWith('..') || path.isAbsolute(inRoot)) {
    throw new StoreError('UnsafeStore', 'path refused: it is outside the store', { path: 'path', reason: 'outside the store' });
  }
  const [top, id, file, ...rest] = inRoot.split(path.sep);
  if (top !== 'sessions' || id === undefined || rest.length > 0 || (file !== undefined && file !== 'journal.jsonl')) {
    throw new StoreError('InvalidArgument', 'path must name a session directory (sessions/<id>) or its journal.jsonl inside the store', { path: 'path' });
  }
  return checkSessionId(id);
}

function realpathOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p; // does not exist (yet): judged as written; opening it then reports SessionNotFound
  }
}
