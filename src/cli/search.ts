import { summaryOf } from './commands.js';
import { JQ_HELP, JQ_OPTION, printJson } from './jq.js';
import { SEARCH_FIELDS, selected, takeJsonFields } from './jsonFields.js';
import { PAGER_HELP, PAGER_OPTIONS, usePager } from './pager.js';
import type { SessionStore } from '../domain/types.js';
import { type SearchHit, searchSessions } from '../core/services/search.js';
import { MAX_SEARCH_LIMIT } from '../../protocol/methods/session.search.js';
import { type Command, openSession, openStore, parseCommand, positiveInt, STORE_HELP, UsageError, type CommandOptions, STORE_OPTIONS } from './common.js';
import { err, oneLine, out, safeText, stdoutStyle, table } from './output.js';

/** Every option search accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' }, session: { type: 'string', multiple: true }, limit: { type: 'string' }, ...PAGER_OPTIONS, ...JQ_OPTION } as const satisfies CommandOptions;

export const searchCommand: Command = {
  name: 'search',
  summary: summaryOf('search'),
  options: OPTIONS,
  usage: `Usage: session-sidecar search TEXT [--session ID]... [--limit N] [--json [FIELDS]] [--jq EXPR] [options]

Finds TEXT (case-insensitive) in the messages of the store's sessions, as session/search does:
one line per matching message record — session, seq and a snippet — in (session, seq) order.
Archived generations (before a compaction) are not searched. Reads only; safe while a sidecar
is serving the store. On PostgreSQL the database finds the candidate records through its
search index (pg migrate's migration 7); the hits are the same as reading every session.

Options:
  --session ID             search only this session (an id or a unique prefix; repeatable)
  --limit N                at most N hits (default 50)
  --json [FIELDS]          the hits as one JSON array of {sessionId, seq, snippet}; with FIELDS
                           (comma-separated, e.g. sessionId,seq) only those; TEXT goes first
                           when it could be a field name
${JQ_HELP}
${PAGER_HELP}
${STORE_HELP}
`,
  async run(argv) {
    const j = takeJsonFields(argv, SEARCH_FIELDS, this.name, (w) => w.includes(',') || (SEARCH_FIELDS as readonly string[]).includes(w));
    const p = parseCommand(this, j.argv, OPTIONS, { min: 1, max: 1, names: 'TEXT' });
    if (!p) return out(this.usage), 0;
    const query = p.positionals[0] as string;
    if (query.trim() === '') throw new UsageError('TEXT is empty', this.name);
    const limit = positiveInt(p.values.limit as string | undefined, '--limit', 50);
    usePager(p.values);
    const store = await openStore(p.target);
    let hits: SearchHit[];
    let more = false;
    try {
      const wanted = (p.values as { session?: string[] }).session;
      const sessionIds = wanted ? await Promise.all(wanted.map(async (w) => (await openSession(store, w)).sessionId)) : undefined;
      ({ hits, more } = await collect(store, query, limit, sessionIds));
    } finally {
      await store.closeAll();
    }
    if (p.values.json === true || p.values.jq !== undefined) {
      await printJson(selected(hits, j.fields), p.values.jq as string | undefined, this.name);
      if (more) err(`${hits.length} shown, more exist — use --limit to see more`);
      return 0;
    }
    if (hits.length === 0) {
      out(`no message holds ${JSON.stringify(query)}\n`);
      return 0;
    }
    const s = stdoutStyle();
    const rows = [['SESSION', 'SEQ', 'SNIPPET'], ...hits.map((h) => [h.sessionId, String(h.seq), oneLine(safeText(h.snippet), 100)])];
    out(table(rows, new Set([1]), (r, c, cell) => (r === 0 ? s.bold(cell) : c === 0 ? s.cyan(cell) : cell)));
    // on stderr: stdout stays the hits alone for a pipe
    if (more) err(`${hits.length} shown, more exist — use --limit to see more`);
    return 0;
  },
};

/** Up to `limit` hits, page by page (a page holds at most the protocol's maximum), and whether more exist. */
async function collect(store: SessionStore, query: string, limit: number, sessionIds: string[] | undefined): Promise<{ hits: SearchHit[]; more: boolean }> {
  const hits: SearchHit[] = [];
  let cursor: string | undefined;
  do {
    const page = await searchSessions(store, { query, limit: Math.min(MAX_SEARCH_LIMIT, limit - hits.length), ...(cursor ? { cursor } : {}), ...(sessionIds ? { sessionIds } : {}) });
    hits.push(...page.hits);
    cursor = page.nextCursor;
  } while (cursor && hits.length < limit);
  // a cursor left after `limit` hits may still find nothing more: look one page ahead
  const more = cursor !== undefined && (await searchSessions(store, { query, limit: 1, cursor, ...(sessionIds ? { sessionIds } : {}) })).hits.length > 0;
  return { hits, more };
}
