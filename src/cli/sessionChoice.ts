import path from 'node:path';
import type { SessionStore } from '../domain/types.js';
import { CliError, listAll, openStore, type Parsed, UsageError } from './common.js';
import type { StoreTarget } from './storeTarget.js';

/**
 * The session a reading command (show, tail, export) is about: its SESSION argument (an id or a
 * unique prefix), or `--last` (the most recently updated session) or `--cwd DIR` (the most
 * recent one whose header cwd is DIR, resolved to an absolute path: `--cwd .` works; with
 * `--last` too it means the same). A SESSION and either flag together are a usage error.
 */
export const CHOICE_OPTIONS = { last: { type: 'boolean' }, cwd: { type: 'string' } } as const;

export const CHOICE_HELP = `  --last                   instead of <session-id>: the most recently updated session
  --cwd DIR                instead of <session-id>: the most recent session created in DIR
                           (resolved against the current directory; with --last the same)`;

export type Choice = { id: string } | { latest: true; cwd?: string };

/** What the command line names, checked before the store is opened. */
export function choiceOf(p: Parsed, command: string): Choice {
  const given = p.positionals[0];
  const last = p.values.last === true;
  const cwd = typeof p.values.cwd === 'string' ? p.values.cwd : undefined;
  if (given !== undefined && (last || cwd !== undefined)) throw new UsageError(`give a session id or ${last ? '--last' : '--cwd'}, not both`, command);
  if (given !== undefined) return { id: given };
  if (cwd === '') throw new UsageError('--cwd needs a directory', command);
  if (!last && cwd === undefined) throw new UsageError('missing session id', command);
  return cwd === undefined ? { latest: true } : { latest: true, cwd: path.resolve(cwd) };
}

/** The id (or prefix) the choice names in `store`; none matching is a CliError (exit 1). */
export async function chosenId(store: SessionStore, choice: Choice): Promise<string> {
  if ('id' in choice) return choice.id;
  const sessions = await listAll(store, choice.cwd !== undefined ? { cwd: choice.cwd } : {});
  // newest first, ties by id: the same session whatever order the store lists in
  const newest = sessions.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.sessionId.localeCompare(a.sessionId))[0];
  if (!newest) throw new CliError(choice.cwd !== undefined ? `no session was created in ${choice.cwd}` : 'the store holds no session');
  return newest.sessionId;
}

/** The same for a command that opens the store itself (the --salvage readers): a store opened and closed for the listing. */
export async function chosenIdIn(target: StoreTarget, choice: Choice): Promise<string> {
  if ('id' in choice) return choice.id;
  const store = await openStore(target);
  try {
    return await chosenId(store, choice);
  } finally {
    await store.closeAll();
  }
}
