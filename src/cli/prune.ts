import { summaryOf } from './commands.js';
import { pruneSessions } from '../core/services/prune.js';
import { checkDuration, type Command, openWritableStore, parseCommand, positiveInt, STORE_HELP, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { consentOf, goAhead } from './consent.js';
import { longWork } from './longWork.js';
import { WorkInterrupted } from '../domain/work.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';
import type { SessionPruneResult } from '../../protocol/index.js';

/** Every option prune accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, 'older-than': { type: 'string' }, 'keep-last': { type: 'string' }, tag: { type: 'string', multiple: true }, 'dry-run': { type: 'boolean' }, yes: { type: 'boolean' }, json: { type: 'boolean' } } as const satisfies CommandOptions;

export const pruneCommand: Command = {
  name: 'prune',
  summary: summaryOf('prune'),
  options: OPTIONS,
  usage: `Usage: session-sidecar prune --older-than DURATION [--keep-last N] [--tag T]... [--dry-run] [--yes] [--json] [options]

Moves the sessions last updated more than DURATION ago to the trash (session/delete: restorable
with 'session-sidecar trash restore ID'), one at a time, and lists them. Nothing is removed:
bytes leave the store only through 'session-sidecar trash empty'. A session open for writing by
a sidecar (its writer lease held) is never moved: it is listed as skipped.

Nothing is moved unasked: without --yes it lists what it would move, then asks at a terminal
(stdin and stdout both terminals); anywhere else (a pipe, a script) it moves nothing and exits 1.

Options:
  --older-than DURATION    30d, 12h, 90m, 2w, 45s, or ISO 8601 P30D, PT12H, P1DT6H (required)
  --keep-last N            of the sessions selected, keep the N most recently updated
  --tag T                  only sessions tagged T (repeatable: all of them)
  --dry-run                list what would be moved and skipped; move nothing, ask nothing
  --yes                    move them without asking (needed off a terminal)
  --json                   the result as JSON (the session/prune result)
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    const olderThan = p.values['older-than'] as string | undefined;
    if (olderThan === undefined) throw new UsageError('--older-than is required', this.name);
    checkDuration(olderThan, '--older-than', this.name);
    const keepLast = p.values['keep-last'] === undefined ? undefined : positiveInt(p.values['keep-last'] as string, '--keep-last', 0, 0);
    const tags = p.values.tag as unknown as string[] | undefined;
    const explicitDry = p.values['dry-run'] === true;
    const consent = explicitDry ? 'refused' : consentOf(p.values);
    const opts = { olderThan, ...(keepLast !== undefined ? { keepLast } : {}), ...(tags ? { tags } : {}) };
    const store = await openWritableStore(p.target);
    const json = p.values.json === true;
    return longWork('prune', 'run the same command again to move the rest', async (job) => {
      // Interrupted: what was moved so far is shown as a finished prune's would be.
      const run = (dryRun: boolean) => pruneSessions(store, { ...opts, dryRun }, Date.now(), undefined, { work: job.work }).catch((e: unknown) => {
        const partial = (e as { result?: SessionPruneResult }).result;
        if (e instanceof WorkInterrupted && partial && !partial.dryRun) job.progress.above(() => show(partial, json, p.root));
        throw e;
      });
      try {
        let result = await run(consent !== 'given');
        if (result.dryRun && !explicitDry && result.sessions.length > 0) {
          job.progress.above(() => show(result, json, p.root));
          if (!(await goAhead(consent, `Move ${result.sessions.length} session(s) to the trash?`, 'session-sidecar prune: nothing was moved'))) return 1;
          result = await run(false);
        }
        job.progress.above(() => show(result, json, p.root));
        return 0;
      } finally {
        await store.closeAll();
      }
    });
  },
};

function show(result: SessionPruneResult, json: boolean, root: string): void {
  if (json) return out(`${JSON.stringify(result, null, 2)}\n`);
  const s = stdoutStyle();
  const now = Date.now();
  const verb = result.dryRun ? 'would move' : 'moved';
  if (result.sessions.length === 0) out(`no session to move to the trash in ${root}\n`);
  else {
    const rows = [['ID', 'TITLE', 'UPDATED', 'SIZE']];
    for (const x of result.sessions) rows.push([x.sessionId, x.title ? oneLine(safeText(x.title), 40) : '-', relativeTime(x.updatedAt, now), humanBytes(x.bytes ?? 0)]);
    out(`${verb} ${result.sessions.length} session(s) to the trash:\n`);
    out(table(rows, new Set([3]), (r, _c, cell) => (r === 0 ? s.bold(cell) : cell)));
  }
  for (const k of result.skipped) out(`skipped ${k.sessionId}: ${k.reason === 'open' ? 'open for writing by a sidecar' : k.reason}\n`);
}
