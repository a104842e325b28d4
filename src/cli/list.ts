import { summaryOf } from './commands.js';
import { JQ_HELP, JQ_OPTION, printJson } from './jq.js';
import { LIST_FIELDS, selected, takeJsonFields } from './jsonFields.js';
import { PAGER_HELP, PAGER_OPTIONS, usePager } from './pager.js';
import type { SessionSummary } from '../domain/types.js';
import path from 'node:path';
import type { ListFilter } from '../domain/types.js';
import { MAX_TAG_CHARS, TAG_PATTERN } from '../domain/sessionUpdate.js';
import { type Command, listAll, openStore, parseCommand, positiveInt, STORE_HELP, unlistedSessions, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { parseDuration } from '../domain/retention.js';
import { fitColumn, humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

/** Every option list accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' }, cwd: { type: 'string' }, tag: { type: 'string', multiple: true }, grep: { type: 'string' }, limit: { type: 'string', short: 'n' }, sort: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, all: { type: 'boolean' }, ...PAGER_OPTIONS, ...JQ_OPTION } as const satisfies CommandOptions;

export const listCommand: Command = {
  name: 'list',
  summary: summaryOf('list'),
  options: OPTIONS,
  usage: `Usage: session-sidecar list [-n N] [--sort updated|created|size] [--since WHEN] [--until WHEN] [--all]
                            [--json [FIELDS]] [--jq EXPR] [--cwd DIR] [--tag T]... [--grep TEXT] [options]

Lists the store's sessions, most recently updated first: id, title (an untitled session by its
first message), tags (when any), last update, records (the last seq: every record ever appended,
compacted ones included), journal size and parent. On a terminal the title is cut to fit its
width (wide CJK characters and emoji counted as two columns). Reads only; safe while a sidecar is
serving the store.

Options:
  -n, --limit N            at most N sessions (after sorting)
  --all                    also the sessions that cannot be read (a damaged journal, an unsafe
                           file), marked with why: 'show' and 'verify' take their ids
  --sort KEY               updated (default), created or size: newest or largest first
  --since WHEN             only sessions updated since WHEN: a duration back from now (7d, 12h,
                           P1W) or a date-time (2026-03-01, 2026-03-01T12:00+01:00)
  --until WHEN             only sessions updated before WHEN (same forms)
  --json [FIELDS]          the sessions as one JSON array (the session/list summaries); with
                           FIELDS (comma-separated) only those: ${LIST_FIELDS.join(', ')}
  --cwd DIR                only sessions created in DIR (resolved against the current directory)
  --tag T                  only sessions tagged T (repeatable: all of them)
  --grep TEXT              only sessions whose title, a tag, or first/last message summary
                           holds TEXT (case-insensitive; 'search' looks at every message)
${JQ_HELP}
${PAGER_HELP}
${STORE_HELP}
`,
  async run(argv) {
    const j = takeJsonFields(argv, LIST_FIELDS, this.name);
    const p = parseCommand(this, j.argv, OPTIONS, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    const v = p.values as Record<string, unknown>;
    const filter: ListFilter = {
      ...(typeof v.cwd === 'string' ? { cwd: path.resolve(v.cwd) } : {}),
      ...(Array.isArray(v.tag) ? { tags: v.tag as string[] } : {}),
      ...(typeof v.grep === 'string' && v.grep !== '' ? { query: v.grep } : {}),
    };
    for (const t of filter.tags ?? []) if (!TAG_PATTERN.test(t) || t.length > MAX_TAG_CHARS) throw new UsageError(`--tag ${JSON.stringify(t)}: a tag is 1-${MAX_TAG_CHARS} characters of [A-Za-z0-9._:-]`, this.name);
    const now = Date.now();
    const limit = v.limit === undefined ? undefined : positiveInt(v.limit as string, '--limit', 1, 1);
    const sort = (v.sort ?? 'updated') as string;
    if (!(sort in SORTS)) throw new UsageError(`--sort must be updated, created or size, not ${JSON.stringify(sort.slice(0, 40))}`, this.name);
    const since = v.since === undefined ? -Infinity : instantOf(v.since as string, '--since', now, this.name);
    const until = v.until === undefined ? Infinity : instantOf(v.until as string, '--until', now, this.name);
    const root = p.root;
    usePager(p.values);
    const store = await openStore(p.target);
    let sessions: SessionSummary[];
    try {
      sessions = await listAll(store, filter);
    } finally {
      await store.closeAll();
    }
    sessions = sessions.filter((x) => { const t = Date.parse(x.updatedAt); return t >= since && t < until; });
    sessions.sort(SORTS[sort as keyof typeof SORTS]);
    if (limit !== undefined) sessions = sessions.slice(0, limit);
    const unreadable = v.all === true ? [...unlistedSessions].map(([sessionId, kind]) => ({ sessionId, unreadable: kind })) : [];
    if (v.json === true || v.jq !== undefined) {
      await printJson(selected([...sessions, ...unreadable], j.fields), v.jq as string | undefined, this.name);
      return 0;
    }
    if (sessions.length === 0 && unreadable.length === 0) {
      out(`no sessions in ${root}\n`);
      return 0;
    }
    if (sessions.length > 0) out(renderList(sessions, process.stdout.isTTY === true ? process.stdout.columns : undefined));
    const s = stdoutStyle();
    for (const u of unreadable) out(`${s.cyan(u.sessionId)}  ${s.bold(u.unreadable === 'Corrupt' ? 'DAMAGED' : 'UNREADABLE')} (${u.unreadable}): 'session-sidecar verify' says where\n`);
    return 0;
  },
};

/** Newest (or largest) first; ties by id, so the order never depends on the store's. */
const SORTS = {
  updated: (a: SessionSummary, b: SessionSummary) => b.updatedAt.localeCompare(a.updatedAt) || b.sessionId.localeCompare(a.sessionId),
  created: (a: SessionSummary, b: SessionSummary) => b.createdAt.localeCompare(a.createdAt) || b.sessionId.localeCompare(a.sessionId),
  size: (a: SessionSummary, b: SessionSummary) => b.bytes - a.bytes || b.sessionId.localeCompare(a.sessionId),
} as const;

/** `--since`/`--until`: a duration back from now, or a date-time (a date alone is local midnight). */
export function instantOf(text: string, flag: string, now: number, command: string): number {
  try {
    return now - parseDuration(text, flag);
  } catch {
    // not a duration: a date-time
  }
  const t = /^\d{4}-\d\d-\d\d$/.test(text) ? new Date(`${text}T00:00`).getTime() : Date.parse(text);
  if (Number.isNaN(t)) throw new UsageError(`${flag} must be a duration (7d, 12h, P1W) or a date-time (2026-03-01, 2026-03-01T12:00+01:00), not ${JSON.stringify(text.slice(0, 40))}`, command);
  return t;
}

function renderList(sessions: SessionSummary[], columns: number | undefined): string {
  const s = stdoutStyle();
  const now = Date.now();
  // TAGS only when a session has any: an untagged store lists as it always did
  const tagged = sessions.some((x) => x.tags?.length);
  const rows = [['ID', 'TITLE', ...(tagged ? ['TAGS'] : []), 'UPDATED', 'RECORDS', 'SIZE', 'PARENT']];
  const untitled = new Set<number>();
  for (const x of sessions) {
    if (!x.title && x.firstMessage) untitled.add(rows.length);
    rows.push([
      x.sessionId,
      x.title ? oneLine(safeText(x.title), 40) : x.firstMessage ? oneLine(safeText(x.firstMessage), 40) : '-',
      ...(tagged ? [x.tags?.length ? oneLine(x.tags.join(','), 30) : '-'] : []),
      relativeTime(x.updatedAt, now),
      String(x.lastSeq),
      humanBytes(x.bytes),
      x.parent ? `${x.parent.relation === 'fork' ? 'fork of' : 'continues'} ${x.parent.sessionId}${x.parent.atSeq !== undefined ? `@${x.parent.atSeq}` : ''}` : '-',
    ]);
  }
  if (columns !== undefined) fitColumn(rows, 1, columns);
  return table(rows, tagged ? new Set([4, 5]) : new Set([3, 4]), (r, c, cell) => (r === 0 ? s.bold(cell) : c === 0 ? s.cyan(cell) : cell === '-' || (c === 1 && untitled.has(r)) ? s.dim(cell) : cell));
}
