import { summaryOf } from './commands.js';
import { pruneSessions } from '../core/services/prune.js';
import { checkDuration, type Command, openWritableStore, parseCommand, positiveInt, STORE_HELP, UsageError } from './common.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

/** `--dry-run` unless asked otherwise: the default on a terminal without --yes (nothing is moved by surprise). */
export function dryRunOf(values: Record<string, unknown>): boolean {
  if (values['dry-run']) return true;
  if (values.yes) return false;
  return process.stdout.isTTY === true;
}

export const pruneCommand: Command = {
  name: 'prune',
  summary: summaryOf('prune'),
  usage: `Usage: session-sidecar prune --older-than DURATION [--keep-last N] [--tag T]... [--dry-run] [--yes] [--json] [options]

Moves the sessions last updated more than DURATION ago to the trash (session/delete: restorable
with 'session-sidecar trash restore ID'), one at a time, and lists them. Nothing is removed:
bytes leave the store only through 'session-sidecar trash empty'. A session open for writing by
a sidecar (its writer lease held) is never moved: it is listed as skipped.

Options:
  --older-than DURATION    30d, 12h, 90m, 2w, 45s, or ISO 8601 P30D, PT12H, P1DT6H (required)
  --keep-last N            of the sessions selected, keep the N most recently updated
  --tag T                  only sessions tagged T (repeatable: all of them)
  --dry-run                list what would be moved and skipped; move nothing (the default
                           when stdout is a terminal and --yes is not given)
  --yes                    move them (the default when stdout is not a terminal)
  --json                   the result as JSON (the session/prune result)
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, {
      'older-than': { type: 'string' }, 'keep-last': { type: 'string' }, tag: { type: 'string', multiple: true },
      'dry-run': { type: 'boolean' }, yes: { type: 'boolean' }, json: { type: 'boolean' },
    }, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    const olderThan = p.values['older-than'] as string | undefined;
    if (olderThan === undefined) throw new UsageError('--older-than is required', this.name);
    checkDuration(olderThan, '--older-than', this.name);
    const keepLast = p.values['keep-last'] === undefined ? undefined : positiveInt(p.values['keep-last'] as string, '--keep-last', 0, 0);
    const tags = p.values.tag as unknown as string[] | undefined;
    const dryRun = dryRunOf(p.values);
    const store = await openWritableStore(p.target);
    let result;
    try {
      result = await pruneSessions(store, { olderThan, ...(keepLast !== undefined ? { keepLast } : {}), ...(tags ? { tags } : {}), dryRun }, Date.now());
    } finally {
      await store.closeAll();
    }
    if (p.values.json) {
      out(`${JSON.stringify(result, null, 2)}\n`);
      return 0;
    }
    const s = stdoutStyle();
    const now = Date.now();
    const verb = dryRun ? 'would move' : 'moved';
    if (result.sessions.length === 0) out(`no session to move to the trash in ${p.root}\n`);
    else {
      const rows = [['ID', 'TITLE', 'UPDATED', 'SIZE']];
      for (const x of result.sessions) rows.push([x.sessionId, x.title ? oneLine(safeText(x.title), 40) : '-', relativeTime(x.updatedAt, now), humanBytes(x.bytes ?? 0)]);
      out(`${verb} ${result.sessions.length} session(s) to the trash:\n`);
      out(table(rows, new Set([3]), (r, _c, cell) => (r === 0 ? s.bold(cell) : cell)));
    }
    for (const k of result.skipped) out(`skipped ${k.sessionId}: ${k.reason === 'open' ? 'open for writing by a sidecar' : k.reason}\n`);
    if (dryRun && result.sessions.length > 0) out(s.dim(`dry run: nothing was moved; add --yes to move them\n`));
    return 0;
  },
};
