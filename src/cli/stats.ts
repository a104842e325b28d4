import { summaryOf } from './commands.js';
import type { SessionSummary, SessionStore, UsageReport } from '../domain/types.js';
import { sumUsage, usageLine } from './usageText.js';

const NO_USAGE: Omit<UsageReport, 'lastSeq'> = { records: 0, total: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, requests: 0 }, byModel: {} };
import { type Command, type CommandOptions, listingOf, STORE_HELP, STORE_OPTIONS } from './common.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

const TOP = 10;

/** Every option stats accepts (its usage lists each). */
const OPTIONS = { ...STORE_OPTIONS, json: { type: 'boolean' }, all: { type: 'boolean' } } as const satisfies CommandOptions;

export const statsCommand: Command = {
  name: 'stats',
  summary: summaryOf('stats'),
  options: OPTIONS,
  usage: `Usage: session-sidecar stats [--all] [--json] [options]

Counts the store's sessions, their records (last seqs: compacted records included) and bytes,
sums their token usage (by model in --json, as "usage"), and lists the ${TOP} largest sessions (every session with --all). A session's bytes are those of
its journal and of its archived generations (history/), as stored; the trash, blobs, state
values and tool scratch are not counted, nor are the index and list cache (derived data).
With --json, "perSession" holds every session's size (and "bytes" their total).

Options:
  --all                    list every session's size, largest first
  --json                   the numbers as JSON
${STORE_HELP}
`,
  async run(argv) {
    const listing = await listingOf(this, argv, OPTIONS);
    if (!listing) return out(this.usage), 0;
    const all = listing.values.all === true;
    const rows = await withArchives(listing.store, listing.sessions);
    const usage = sumUsage(rows.map((r) => r.usage));
    await listing.store.closeAll();
    const totals = totalsOf(rows);
    const bySize = [...rows].sort((a, b) => b.totalBytes - a.totalBytes || (a.sessionId < b.sessionId ? -1 : 1));
    const largest = all ? bySize : bySize.slice(0, TOP);
    const sizeOf = (r: Row) => ({ sessionId: r.sessionId, title: r.title, records: r.lastSeq, bytes: r.totalBytes, journalBytes: r.bytes, archivedBytes: r.archivedBytes, updatedAt: r.updatedAt });
    if (listing.json) {
      out(`${JSON.stringify({
        root: listing.root, ...totals, usage,
        largest: bySize.slice(0, TOP).map(sizeOf),
        perSession: bySize.map(sizeOf),
      }, null, 2)}\n`);
    } else printStats(listing.root, totals, largest, usageLine(usage));
    return 0;
  },
};

/** A session with the generations archived by its compactions and all its bytes. */
type Row = SessionSummary & { archivedGenerations: number; archivedBytes: number; totalBytes: number; usage: Omit<UsageReport, 'lastSeq'> };
type Totals = ReturnType<typeof totalsOf>;

async function withArchives(store: SessionStore, sessions: SessionSummary[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const s of sessions) {
    let archived = { generations: 0, bytes: 0 };
    let usage: Omit<UsageReport, 'lastSeq'> = NO_USAGE;
    try {
      const history = await store.history(s.sessionId);
      archived = { generations: history.length, bytes: history.reduce((a, h) => a + h.bytes, 0) };
      const { lastSeq: _l, ...counted } = await store.usage(s.sessionId);
      usage = counted;
    } catch {
      // deleted meanwhile: counted without archives or usage
    }
    rows.push({ ...s, archivedGenerations: archived.generations, archivedBytes: archived.bytes, totalBytes: s.bytes + archived.bytes, usage });
  }
  return rows;
}

function totalsOf(rows: Row[]) {
  return {
    sessions: rows.length,
    records: rows.reduce((a, r) => a + r.lastSeq, 0),
    journalBytes: rows.reduce((a, r) => a + r.bytes, 0),
    archivedGenerations: rows.reduce((a, r) => a + r.archivedGenerations, 0),
    archivedBytes: rows.reduce((a, r) => a + r.archivedBytes, 0),
    bytes: rows.reduce((a, r) => a + r.totalBytes, 0),
    oldest: rows.reduce<string | undefined>((a, r) => (a === undefined || r.createdAt < a ? r.createdAt : a), undefined),
    lastUpdate: rows.reduce<string | undefined>((a, r) => (a === undefined || r.updatedAt > a ? r.updatedAt : a), undefined),
  };
}

function printStats(root: string, totals: Totals, largest: Row[], usage: string | undefined): void {
  const st = stdoutStyle();
  const now = Date.now();
  const lines = [
    `${st.bold('store')}     ${root}`,
    `${st.bold('sessions')}  ${totals.sessions}`,
    `${st.bold('records')}   ${totals.records}`,
    `${st.bold('bytes')}     ${humanBytes(totals.bytes)} (journals ${humanBytes(totals.journalBytes)}, ${totals.archivedGenerations} archived generations ${humanBytes(totals.archivedBytes)})`,
  ];
  if (usage) lines.push(`${st.bold('tokens')}    ${usage.replace(/^usage /, '')}`);
  if (totals.lastUpdate) lines.push(`${st.bold('updated')}   ${relativeTime(totals.lastUpdate, now)} (${totals.lastUpdate})`);
  out(`${lines.join('\n')}\n`);
  if (largest.length === 0) return;
  out(`\n${st.bold(largest.length > TOP ? 'every session, largest first' : 'largest sessions')}\n`);
  const t = [['ID', 'TITLE', 'RECORDS', 'SIZE', 'UPDATED']];
  for (const r of largest) t.push([r.sessionId, r.title ? oneLine(safeText(r.title), 40) : '-', String(r.lastSeq), humanBytes(r.totalBytes), relativeTime(r.updatedAt, now)]);
  out(table(t, new Set([2, 3]), (row, _c, cell) => (row === 0 ? st.bold(cell) : cell)));
}
