import fs from 'node:fs';
import path from 'node:path';
import { summaryOf } from './commands.js';
import { CliError, type Command, type CommandOptions, openWritableStore, parseCommand, STORE_HELP, STORE_OPTIONS } from './common.js';
import { type ReindexResult, reindexSessions } from '../core/services/reindex.js';
import { type Work, WorkInterrupted } from '../domain/work.js';
import type { StoreTarget } from './storeTarget.js';
import { isSessionId } from '../domain/ids.js';
import { StoreLayout } from '../backends/file/layout.js';
import { longWork } from './longWork.js';
import { err, out } from './output.js';

const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' } } as const satisfies CommandOptions;

/** `reindex`: every session's index entry written anew from its journal (core/services/reindex.ts). */
export const reindexCommand: Command = {
  name: 'reindex',
  summary: summaryOf('reindex'),
  options: OPTIONS,
  usage: `Usage: session-sidecar reindex [--json] [options]

Rewrites every session's index entry (index/<id>.json) from its journal (and removes the
list cache older versions kept), so that list and open
read each journal's head and last line instead of scanning it. A copy made with cp -a, rsync or
'backup' keeps its entries, and 'migrate' into a directory and 'rekey' write them; reindex
repairs an index deleted or damaged by hand, or one left by an older version. Each session is
opened for writing as a sidecar would (its writer lease taken, a torn tail cut with its evidence
kept under recovery/), then released, which writes its entry; a session open in a running
sidecar is skipped (its writer keeps its entry) and named. Damaged sessions are named: the
show command reads what is intact of them (with its salvage option) and repair rewrites them.
Nothing else changes.

On a terminal, progress (N of M, rate, ETA) is drawn on stderr; Ctrl-C stops between sessions
(run it again to finish). A directory store only: PostgreSQL keeps its summaries in its tables.

Options:
  --json                   the result as JSON: {reindexed, skipped: [{sessionId, reason}],
                           failed: [{sessionId, kind, message}]}
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    if (p.target.kind !== 'file') throw new CliError('reindex applies to a directory store: a PostgreSQL store keeps its summaries in its sessions table');
    const target = p.target;
    const json = p.values.json === true;
    return longWork('reindex', "run 'session-sidecar reindex' again to finish", async (job) => {
      let result: ReindexResult;
      try {
        result = await reindexDirectory(target, job.work);
      } catch (e) {
        if (e instanceof WorkInterrupted && json) out(`${JSON.stringify({ ...(e as WorkInterrupted & { result: ReindexResult }).result, interrupted: true }, null, 2)}\n`);
        throw e;
      }
      if (json) out(`${JSON.stringify(result, null, 2)}\n`);
      for (const s of result.skipped) if (s.reason === 'open') job.progress.above(() => err(`session-sidecar reindex: ${s.sessionId} skipped: open in a running sidecar (its writer keeps its entry)`));
      for (const f of result.failed) job.progress.above(() => err(`session-sidecar reindex: ${f.sessionId}: ${f.kind}: ${f.message} (read what is intact: session-sidecar show --salvage ${f.sessionId})`));
      const open = result.skipped.filter((s) => s.reason === 'open').length;
      job.progress.finish(`${result.reindexed} of ${result.reindexed + result.skipped.length + result.failed.length} index entries written${open ? `, ${open} skipped (open in a sidecar)` : ''}${result.failed.length ? `, ${result.failed.length} could not be read` : ''}`);
      return result.failed.length > 0 ? 1 : 0;
    });
  },
};

/**
 * Every index entry of a directory store written anew (core/services/reindex.ts), on a
 * writable store of its own (leases taken as serve takes them), then closed; the list cache
 * older versions kept (index/list.cache, never read now) removed. `ids`: only these sessions.
 * Used by reindex, and at the end of migrate into a directory, rekey and repair.
 */
export async function reindexDirectory(target: Extract<StoreTarget, { kind: 'file' }>, work?: Work, ids?: readonly string[]): Promise<ReindexResult> {
  const layout = new StoreLayout(target.root);
  const store = await openWritableStore(target);
  try {
    const result = await reindexSessions(store, ids ?? fs.readdirSync(layout.sessionsDir).filter(isSessionId).sort(), work);
    if (!ids) fs.rmSync(path.join(layout.indexDir, 'list.cache'), { force: true });
    return result;
  } finally {
    await store.closeAll();
  }
}
