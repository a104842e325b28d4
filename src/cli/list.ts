import { summaryOf } from './commands.js';
import type { SessionSummary } from '../domain/types.js';
import path from 'node:path';
import type { ListFilter } from '../domain/types.js';
import { MAX_TAG_CHARS, TAG_PATTERN } from '../domain/sessionUpdate.js';
import { type Command, listAll, openStore, parseCommand, STORE_HELP, UsageError } from './common.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

export const listCommand: Command = {
  name: 'list',
  summary: summaryOf('list'),
  usage: `Usage: session-sidecar list [--json] [--cwd DIR] [--tag T]... [--grep TEXT] [options]

Lists the store's sessions, most recently updated first: id, title, tags (when any), last update, records
(the last seq: every record ever appended, compacted ones included), journal size and parent.
Reads only; safe while a sidecar is serving the store.

Options:
  --json                   the sessions as one JSON array (the session/list summaries)
  --cwd DIR                only sessions created in DIR (resolved against the current directory)
  --tag T                  only sessions tagged T (repeatable: all of them)
  --grep TEXT              only sessions whose title, a tag, or first/last message summary
                           holds TEXT (case-insensitive; 'search' looks at every message)
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, { json: { type: 'boolean' }, cwd: { type: 'string' }, tag: { type: 'string', multiple: true }, grep: { type: 'string' } }, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    const v = p.values as Record<string, unknown>;
    const filter: ListFilter = {
      ...(typeof v.cwd === 'string' ? { cwd: path.resolve(v.cwd) } : {}),
      ...(Array.isArray(v.tag) ? { tags: v.tag as string[] } : {}),
      ...(typeof v.grep === 'string' && v.grep !== '' ? { query: v.grep } : {}),
    };
    for (const t of filter.tags ?? []) if (!TAG_PATTERN.test(t) || t.length > MAX_TAG_CHARS) throw new UsageError(`--tag ${JSON.stringify(t)}: a tag is 1-${MAX_TAG_CHARS} characters of [A-Za-z0-9._:-]`, this.name);
    const root = p.root;
    const store = await openStore(p.target);
    let sessions: SessionSummary[];
    try {
      sessions = await listAll(store, filter);
    } finally {
      await store.closeAll();
    }
    if (v.json === true) {
      out(`${JSON.stringify(sessions, null, 2)}\n`);
      return 0;
    }
    if (sessions.length === 0) {
      out(`no sessions in ${root}\n`);
      return 0;
    }
    out(renderList(sessions));
    return 0;
  },
};

function renderList(sessions: SessionSummary[]): string {
  const s = stdoutStyle();
  const now = Date.now();
  // TAGS only when a session has any: an untagged store lists as it always did
  const tagged = sessions.some((x) => x.tags?.length);
  const rows = [['ID', 'TITLE', ...(tagged ? ['TAGS'] : []), 'UPDATED', 'RECORDS', 'SIZE', 'PARENT']];
  for (const x of sessions) {
    rows.push([
      x.sessionId,
      x.title ? oneLine(safeText(x.title), 40) : '-',
      ...(tagged ? [x.tags?.length ? oneLine(x.tags.join(','), 30) : '-'] : []),
      relativeTime(x.updatedAt, now),
      String(x.lastSeq),
      humanBytes(x.bytes),
      x.parent ? `${x.parent.relation === 'fork' ? 'fork of' : 'continues'} ${x.parent.sessionId}${x.parent.atSeq !== undefined ? `@${x.parent.atSeq}` : ''}` : '-',
    ]);
  }
  return table(rows, tagged ? new Set([4, 5]) : new Set([3, 4]), (r, c, cell) => (r === 0 ? s.bold(cell) : c === 0 ? s.cyan(cell) : cell === '-' ? s.dim(cell) : cell));
}
