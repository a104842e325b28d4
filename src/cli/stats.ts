import { type Command, listAll, openStore, parseCommand, STORE_HELP } from './common.js';
import { humanBytes, oneLine, out, relativeTime, safeText, stdoutStyle, table } from './output.js';

const TOP = 10;

export const statsCommand: Command = {
  name: 'stats',
  summary: 'sessions, records and bytes of the store; the largest sessions',
  usage: `Usage: session-sidecar stats [--json] [options]

Counts the store's sessions, their records (last seqs: compacted records included) and bytes
(journals and archived generations), and lists the ${TOP} largest sessions.

Options:
  --json                   the numbers as JSON
${STORE_HELP}
`,
  async run(argv) {
    const p = parseCommand(this, argv, { json: { type: 'boolean' } }, { min: 0, max: 0, names: '' });
    if (!p) return out(this.usage), 0;
    const store = openStore(p.root);
    const sessions = await listAll(store);
    const rows = [];
    for (const s of sessions) {
      let archived = { generations: 0, bytes: 0 };
      try {
        const history = await store.history(s.sessionId);
        archived = { generations: history.length, bytes: history.reduce((a, h) => a + h.bytes, 0) };
      } catch {
        // deleted meanwhile: counted without archives
      }
      rows.push({ ...s, archivedGenerations: archived.generations, archivedBytes: archived.bytes, totalBytes: s.bytes + archived.bytes });
    }
    await store.closeAll();
    const totals = {
      sessions: rows.length,
      records: rows.reduce((a, r) => a + r.lastSeq, 0),
      journalBytes: rows.reduce((a, r) => a + r.bytes, 0),
      archivedGenerations: rows.reduce((a, r) => a + r.archivedGenerations, 0),
      archivedBytes: rows.reduce((a, r) => a + r.archivedBytes, 0),
      bytes: rows.reduce((a, r) => a + r.totalBytes, 0),
      oldest: rows.reduce<string | undefined>((a, r) => (a === undefined || r.createdAt < a ? r.createdAt : a), undefined),
      lastUpdate: rows.reduce<string | undefined>((a, r) => (a === undefined || r.updatedAt > a ? r.updatedAt : a), undefined),
    };
    const largest = [...rows].sort((a, b) => b.totalBytes - a.totalBytes || (a.sessionId < b.sessionId ? -1 : 1)).slice(0, TOP);
    if (p.values.json) {
      out(`${JSON.stringify({
        root: p.root, ...totals,
        largest: largest.map((r) => ({ sessionId: r.sessionId, title: r.title, records: r.lastSeq, bytes: r.totalBytes, journalBytes: r.bytes, archivedBytes: r.archivedBytes, updatedAt: r.updatedAt })),
      }, null, 2)}\n`);
      return 0;
    }
    const st = stdoutStyle();
    const now = Date.now();
    const lines = [
      `${st.bold('store')}     ${p.root}`,
      `${st.bold('sessions')}  ${totals.sessions}`,
      `${st.bold('records')}   ${totals.records}`,
      `${st.bold('bytes')}     ${humanBytes(totals.bytes)} (journals ${humanBytes(totals.journalBytes)}, ${totals.archivedGenerations} archived generations ${humanBytes(totals.archivedBytes)})`,
    ];
    if (totals.lastUpdate) lines.push(`${st.bold('updated')}   ${relativeTime(totals.lastUpdate, now)} (${totals.lastUpdate})`);
    out(`${lines.join('\n')}\n`);
    if (largest.length > 0) {
      out(`\n${st.bold(`largest sessions`)}\n`);
      const t = [['ID', 'TITLE', 'RECORDS', 'SIZE', 'UPDATED']];
      for (const r of largest) t.push([r.sessionId, r.title ? oneLine(safeText(r.title), 40) : '-', String(r.lastSeq), humanBytes(r.totalBytes), relativeTime(r.updatedAt, now)]);
      out(table(t, new Set([2, 3]), (row, _c, cell) => (row === 0 ? st.bold(cell) : cell)));
    }
    return 0;
  },
};
