import { summaryOf } from './commands.js';
import { JQ_OPTION, printJson } from './jq.js';
import { selected, takeJsonFields, TRASH_FIELDS } from './jsonFields.js';
import { type EmptyTrashResult, emptyTrash, trashOf } from '../core/services/trash.js';
import { longWork } from './longWork.js';
import { WorkInterrupted } from '../domain/work.js';
import type { TrashEntry } from '../domain/types.js';
import { checkAction, checkDuration, type Command, type CommandOptions, openStore, openWritableStore, parseCommand, STORE_HELP, STORE_OPTIONS, UsageError } from './common.js';
import { consentOf, goAhead } from './consent.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

/** Every option trash accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, 'older-than': { type: 'string' }, 'dry-run': { type: 'boolean' }, yes: { type: 'boolean' }, json: { type: 'boolean' }, ...JQ_OPTION } as const satisfies CommandOptions;

export const trashCommand: Command = {
  name: 'trash',
  summary: summaryOf('trash'),
  options: OPTIONS,
  actions: { list: ['older-than', 'json', 'jq'], restore: ['yes'], empty: ['older-than', 'dry-run', 'yes', 'json'] },
  usage: `Usage: session-sidecar trash list [--older-than DURATION] [--json [FIELDS]] [--jq EXPR] [options]
       session-sidecar trash restore ID... [--yes] [options]
       session-sidecar trash empty [--older-than DURATION] [--dry-run] [--yes] [--json] [options]

The sessions deleted (session/delete, session/prune, 'session-sidecar prune') and kept in the
trash. 'list' shows them, most recently deleted first (reads only); 'restore' brings sessions
back; 'empty' removes for good the sessions deleted more than DURATION ago (all of them without
--older-than) — with 'session/delete' purge, the only way bytes leave the store. A session
restored meanwhile, or in use by another process (being restored), is skipped and listed so.

Nothing is removed (or restored, for more than one id) unasked: without --yes it lists what it
would do, then asks at a terminal (stdin and stdout both terminals); anywhere else it does
nothing and exits 1.

Options:
  --older-than DURATION    only sessions deleted more than this long ago: 7d, 12h, 90m, P7D, ...
  --dry-run                (empty) list what would be removed; remove nothing, ask nothing
  --yes                    (empty, restore of several) go ahead without asking (needed off a
                           terminal)
  --json [FIELDS]          the sessions as JSON; for list, FIELDS (comma-separated) selects
                           fields: ${TRASH_FIELDS.join(', ')}
  --jq EXPR                (list) filter the JSON with jq EXPR (jq 1.8, built in; implies --json;
                           strings print raw, as gh and jq -r do)
${STORE_HELP}
`,
  async run(argv) {
    const j = takeJsonFields(argv, TRASH_FIELDS, this.name, (w) => !['list', 'restore', 'empty'].includes(w));
    const p = parseCommand(this, j.argv, OPTIONS, { min: 0, max: 1000, names: 'list, restore or empty' });
    if (!p) return out(this.usage), 0;
    const [action, ...ids] = p.positionals;
    if (action !== undefined) checkAction(this, action, p.values);
    const olderThan = p.values['older-than'] as string | undefined;
    if (olderThan !== undefined) checkDuration(olderThan, '--older-than', this.name);
    const json = p.values.json === true;
    if (j.fields && action !== 'list') throw new UsageError('--json FIELDS is for trash list', this.name);
    if (action === 'list') {
      if (ids.length > 0) throw new UsageError(`unexpected argument '${ids[0]}'`, this.name);
      const store = await openStore(p.target);
      try {
        const entries = await trashOf(store, olderThan);
        if (p.values.jq !== undefined) return await printJson(selected(entries, j.fields), p.values.jq as string, this.name), 0;
        return show(entries, json, `nothing in the trash of ${p.root}`, '', j.fields);
      } finally {
        await store.closeAll();
      }
    }
    if (action === 'restore') {
      if (ids.length === 0) throw new UsageError('restore needs the id of a session in the trash', this.name);
      const store = await openWritableStore(p.target);
      try {
        const trashed = (await trashOf(store)).map((e) => e.sessionId);
        const chosen = ids.map((given) => inTrash(trashed, given, this.name));
        if (chosen.length > 1) {
          const consent = consentOf(p.values);
          if (consent !== 'given') for (const id of chosen) out(`would restore ${id}\n`);
          if (!(await goAhead(consent, `Restore ${chosen.length} sessions?`, 'session-sidecar trash restore: nothing was restored'))) return 1;
        }
        for (const id of chosen) {
          await store.restore(id);
          out(`restored ${id}\n`);
        }
      } finally {
        await store.closeAll();
      }
      return 0;
    }
    if (action === 'empty') {
      if (ids.length > 0) throw new UsageError(`unexpected argument '${ids[0]}'`, this.name);
      const explicitDry = p.values['dry-run'] === true;
      const consent = explicitDry ? 'refused' : consentOf(p.values);
      const opts = olderThan !== undefined ? { olderThan } : {};
      const store = await openWritableStore(p.target);
      return longWork('trash empty', 'run the same command again to remove the rest', async (job) => {
        const run = (dryRun: boolean) => emptyTrash(store, { ...opts, dryRun, work: job.work }, Date.now()).catch((e: unknown) => {
          const partial = (e as { result?: EmptyTrashResult }).result;
          if (e instanceof WorkInterrupted && partial && !partial.dryRun) job.progress.above(() => report(partial, json));
          throw e;
        });
        try {
          let r = await run(consent !== 'given');
          if (r.dryRun && !explicitDry && r.sessions.length > 0) {
            job.progress.above(() => report(r, json));
            if (!(await goAhead(consent, `Remove ${r.sessions.length} session(s) for good?`, 'session-sidecar trash empty: nothing was removed'))) return 1;
            r = await run(false);
          }
          job.progress.above(() => report(r, json));
          return 0;
        } finally {
          await store.closeAll();
        }
      });
    }
    throw new UsageError(action === undefined ? 'missing list, restore or empty' : `unknown action '${action}' (list, restore or empty)`, this.name);
  },
};

function report(r: EmptyTrashResult, json: boolean): void {
  if (json) return out(`${JSON.stringify(r, null, 2)}\n`);
  if (r.sessions.length > 0 || r.skipped.length === 0) show(r.sessions, false, 'nothing to remove from the trash', r.dryRun ? 'would remove for good' : 'removed for good');
  for (const k of r.skipped) out(`skipped ${k.sessionId}: ${k.reason === 'open' ? 'in use by another process (being restored, or open for writing)' : 'a live session has this id (restored meanwhile)'}\n`);
}

function show(entries: TrashEntry[], json: boolean, none: string, verb: string, fields?: string[]): number {
  if (json) return out(`${JSON.stringify(selected(entries, fields), null, 2)}\n`), 0;
  if (entries.length === 0) return out(`${none}\n`), 0;
  const s = stdoutStyle();
  const now = Date.now();
  const rows = [['ID', 'TITLE', 'DELETED', 'SIZE']];
  for (const e of entries) rows.push([e.sessionId, e.title ? oneLine(safeText(e.title), 40) : '-', relativeTime(e.deletedAt, now), humanBytes(e.bytes)]);
  if (verb) out(`${verb} ${entries.length} session(s):\n`);
  out(table(rows, new Set([3]), (r, _c, cell) => (r === 0 ? s.bold(cell) : cell)));
  return 0;
}

/**
 * A session id of the trash given whole or by a unique prefix (as the inspection commands take
 * them); an id no trashed session starts with is passed on whole, for the store to refuse.
 */
function inTrash(trashed: string[], given: string, command: string): string {
  if (trashed.includes(given)) return given;
  const matches = trashed.filter((id) => id.startsWith(given));
  if (matches.length > 1) throw new UsageError(`${matches.length} deleted sessions start with ${given}; give more of the id`, command);
  return matches[0] ?? given;
}
