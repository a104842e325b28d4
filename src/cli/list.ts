import { summaryOf } from './commands.js';
import type { SessionSummary } from '../domain/types.js';
import { type Command, listingOf, STORE_HELP } from './common.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

export const listCommand: Command = {
  name: 'list',
  summary: summaryOf('list'),
  usage: `Usage: session-sidecar list [--json] [options]

Lists the store's sessions, most recently updated first: id, title, last update, records
(the last seq: every record ever appended, compacted ones included), journal size and parent.
Reads only; safe while a sidecar is serving the store.

Options:
  --json                   the sessions as one JSON array (the session/list summaries)
${STORE_HELP}
`,
  async run(argv) {
    const listing = await listingOf(this, argv);
    if (!listing) return out(this.usage), 0;
    const { root, store, sessions } = listing;
    await store.closeAll();
    if (listing.json) {
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
  const rows = [['ID', 'TITLE', 'UPDATED', 'RECORDS', 'SIZE', 'PARENT']];
  for (const x of sessions) {
    rows.push([
      x.sessionId,
      x.title ? oneLine(safeText(x.title), 40) : '-',
      relativeTime(x.updatedAt, now),
      String(x.lastSeq),
      humanBytes(x.bytes),
      x.parent ? `${x.parent.relation === 'fork' ? 'fork of' : 'continues'} ${x.parent.sessionId}${x.parent.atSeq !== undefined ? `@${x.parent.atSeq}` : ''}` : '-',
    ]);
  }
  return table(rows, new Set([3, 4]), (r, c, cell) => (r === 0 ? s.bold(cell) : c === 0 ? s.cyan(cell) : cell === '-' ? s.dim(cell) : cell));
}
